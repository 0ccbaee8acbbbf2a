import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPageCleaner } from '../../services/renderer/src/capture/remove-ads/page-cleaner.ts';
import { DEBIAN_UBLOCK_ASSETS } from '../../services/renderer/src/config.ts';
import { capturedLogger } from '../support/captured-logger.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The image's build step caches the ad-blocking engine; a renderer in a container (read-only root)
 * can only read that cache. On the real node it built a different engine (no cookie-notice list),
 * so every renderer re-parsed the lists for 2.8 s and then failed to write its cache (EROFS).
 */
describe('docker/warm-adblock-cache.ts', function () {
  this.timeout(120_000);
  let cacheDir: string;

  beforeEach(async () => {
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-warm-cache-'));
  });
  afterEach(() => rm(cacheDir, { recursive: true, force: true }));

  it("caches exactly the engine the renderer's page cleaner loads: the renderer reads it, parses nothing, writes nothing", async () => {
    const warmed = spawnSync(process.execPath, [`${REPO}docker/warm-adblock-cache.ts`, cacheDir], {
      env: { ...process.env, FILTER_LISTS_DIR: DEBIAN_UBLOCK_ASSETS },
      encoding: 'utf8',
    });
    expect(warmed.status, `${warmed.stdout}${warmed.stderr}`).to.equal(0);
    const files = await readdir(cacheDir);
    expect(files, 'one cached engine').to.have.length(1);

    const { logger, lines } = capturedLogger();
    const cleaner = await createPageCleaner({ filterListsDir: DEBIAN_UBLOCK_ASSETS, adblockCacheDir: cacheDir }, logger);
    expect(cleaner.adblock).to.equal('cache');
    expect(lines.map((line) => JSON.parse(line).msg)).to.not.include('Parsed the filter lists');
    expect(await readdir(cacheDir)).to.deep.equal(files);
  });
});
