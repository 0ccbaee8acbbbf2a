import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { captureThroughCache } from '../../../../services/api/src/result-cache/cached-capture.ts';
import { lazyResultCache } from '../../../../services/api/src/result-cache/open.ts';
import type { CaptureRequest, CaptureResult } from '../../../../services/renderer/src/renderer.ts';
import { captureLog } from '../../../support/log-capture.ts';

const request: CaptureRequest = { url: 'https://example.com/', quality: 'standard', fullPage: false, removeAds: true };
/** The capture the cache stores and returns; the renderer is not what these tests are about. */
const result: CaptureResult = { image: Buffer.from('image bytes'), format: 'png', width: 1, height: 1, fileSize: 11, truncated: false, waitMs: 5 };

describe('the API\'s result cache: opened on first use, bypassed when it cannot open', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-lazy-cache-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('touches DATA_DIR only when a request asks for the cache', async () => {
    const dir = path.join(root, 'result-cache');
    const cache = lazyResultCache({ backend: 'disk', dir, maxBytes: 1_000_000 });
    expect(await cache.sizeBytes()).to.equal(0);
    expect(existsSync(dir)).to.equal(false);
    const { logger } = captureLog('api');
    let renders = 0;
    const render = async () => ((renders += 1), result);
    const policy = { cache, ttlSeconds: 60, scope: { mode: 'self-hosted' } as const, logger };
    expect((await captureThroughCache(policy, request, render)).cached).to.equal(false);
    expect(existsSync(dir)).to.equal(true);
    const hit = await captureThroughCache(policy, request, render);
    expect(hit.cached).to.equal(true);
    expect(hit.result.image.equals(result.image)).to.equal(true);
    expect(renders).to.equal(1);
    await cache.close();
  });

  it('renders, and logs why, when the cache cannot open (DATA_DIR is not a directory)', async () => {
    const notADirectory = path.join(root, 'file');
    writeFileSync(notADirectory, '');
    const cache = lazyResultCache({ backend: 'disk', dir: path.join(notADirectory, 'result-cache'), maxBytes: 1_000_000 });
    const { logger, lines } = captureLog('api');
    const answer = await captureThroughCache({ cache, ttlSeconds: 60, scope: { mode: 'self-hosted' }, logger }, request, async () => result);
    expect(answer).to.deep.equal({ result, cached: false });
    expect(lines().map((line) => line.msg)).to.include('Result cache read failed; rendering instead');
  });
});
