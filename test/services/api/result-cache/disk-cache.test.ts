import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDiskCache } from '../../../../services/api/src/result-cache/disk-cache.ts';
import { entry, key, ManualClock, resultCacheConformance } from './conformance.ts';

describe('result cache: files under DATA_DIR', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-result-cache-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  resultCacheConformance(
    (maxBytes, clock) => openDiskCache({ dir: tempDir(), maxBytes, now: clock.now }),
    async (cache) => cache.close(),
  );

  it('keeps its entries and their order of use across a restart, and clears unfinished writes', async () => {
    const dir = tempDir();
    const clock = new ManualClock();
    const first = await openDiskCache({ dir, maxBytes: 3_800, now: clock.now });
    for (const n of [1, 2, 3]) {
      await first.put(key(n), entry(clock, 1000));
      clock.advance(1000);
    }
    await first.get(key(1)); // 2 is now the least recently used
    await first.close();
    writeFileSync(path.join(dir, `${key(9)}.entry.abc123.tmp`), 'half an entry');
    writeFileSync(path.join(dir, 'README'), 'not ours');

    const second = await openDiskCache({ dir, maxBytes: 3_800, now: clock.now });
    expect(await second.sizeBytes()).to.be.within(3_000, 3_800);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
    clock.advance(1000);
    await second.put(key(4), entry(clock, 1000));
    expect(await second.get(key(2))).to.equal(undefined);
    for (const n of [1, 3, 4]) expect(await second.get(key(n)), `entry ${n}`).to.not.equal(undefined);
  });

  it('treats a damaged file as a miss and removes it', async () => {
    const dir = tempDir();
    const cache = await openDiskCache({ dir, maxBytes: 1_000_000 });
    writeFileSync(path.join(dir, `${key(5)}.entry`), 'VFC1garbage');
    expect(await cache.get(key(5))).to.equal(undefined);
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it('refuses keys that are not SHA-256 digests, so that no key can name a path', async () => {
    const cache = await openDiskCache({ dir: tempDir(), maxBytes: 1_000_000 });
    let error: unknown;
    await cache.get('../../etc/passwd').catch((err: unknown) => (error = err));
    expect(String(error)).to.match(/SHA-256/);
  });
});
