import { expect } from 'chai';
import { mkdir, mkdtemp, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Request } from '@ghostery/adblocker-puppeteer';
import { createLogger, type Logger } from '../../../lib/logger.ts';
import { FILTER_LISTS, loadAdblockEngine, type AdblockEngine } from '../../../services/renderer/src/capture/remove-ads/adblock-engine.ts';
import { DEBIAN_UBLOCK_ASSETS } from '../../../services/renderer/src/config.ts';
import { createChromiumRenderer } from '../../../services/renderer/src/pool.ts';
import { testConfig } from '../../support/harness.ts';

/** A logger whose lines the test can read. */
function recordingLogger(): { log: Logger; lines: () => Array<Record<string, unknown>> } {
  const written: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { log: createLogger({ level: 'info' }, sink), lines: () => written.map((line) => JSON.parse(line)) };
}

const blocks = (engine: AdblockEngine, url: string) =>
  engine.blocker.match(Request.fromRawDetails({ url, sourceUrl: 'https://news.example/', type: 'script' })).match;

describe('the ad-blocking engine: parsed once, cached on disk', () => {
  let root: string;
  let listsDir: string;
  let cacheDir: string;

  /** Small lists in Debian's layout, so that each parse takes milliseconds. */
  async function writeLists(easylist: string): Promise<void> {
    await mkdir(path.join(listsDir, 'thirdparties/easylist'), { recursive: true });
    await mkdir(path.join(listsDir, 'ublock'), { recursive: true });
    await writeFile(path.join(listsDir, 'thirdparties/easylist/easylist.txt'), easylist);
    await writeFile(path.join(listsDir, 'ublock/filters.min.txt'), '||tracker.example^\n');
  }

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-adblock-'));
    listsDir = path.join(root, 'lists');
    cacheDir = path.join(root, 'cache');
    await writeLists('||ads.example^\n##.ad-slot\n');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('parses the lists on the first start and writes the engine to the cache', async () => {
    const { log } = recordingLogger();
    const engine = await loadAdblockEngine({ listsDir, cacheDir, log });
    expect(engine?.source).to.equal('parsed');
    expect(engine?.lists).to.deep.equal(['thirdparties/easylist/easylist.txt', 'ublock/filters.min.txt']);
    expect((await stat(engine!.cacheFile)).size).to.be.above(0);
    expect(blocks(engine!, 'https://ads.example/x.js')).to.equal(true);
  });

  it('reads the cache on the second start, and that engine blocks the same requests', async () => {
    const { log } = recordingLogger();
    const first = await loadAdblockEngine({ listsDir, cacheDir, log });
    const second = await loadAdblockEngine({ listsDir, cacheDir, log });
    expect(second?.source).to.equal('cache');
    expect(second?.cacheFile).to.equal(first?.cacheFile);
    for (const url of ['https://ads.example/x.js', 'https://tracker.example/t.js', 'https://news.example/app.js']) {
      expect(blocks(second!, url), url).to.equal(blocks(first!, url));
    }
  });

  it('rebuilds a corrupt cache, with a warning, and writes a good one', async () => {
    const { cacheFile } = (await loadAdblockEngine({ listsDir, cacheDir, log: recordingLogger().log }))!;
    await writeFile(cacheFile, Buffer.from('not an engine at all, but long enough to be read as one'.repeat(20)));
    const { log, lines } = recordingLogger();
    const rebuilt = await loadAdblockEngine({ listsDir, cacheDir, log });
    expect(rebuilt?.source).to.equal('parsed');
    expect(lines().some((line) => /corrupt ad-blocking cache/.test(String(line.msg)))).to.equal(true);
    expect((await loadAdblockEngine({ listsDir, cacheDir, log }))?.source).to.equal('cache');
  });

  it('rebuilds a cache cut short by a crash', async () => {
    const { cacheFile } = (await loadAdblockEngine({ listsDir, cacheDir, log: recordingLogger().log }))!;
    await truncate(cacheFile, 100);
    const rebuilt = await loadAdblockEngine({ listsDir, cacheDir, log: recordingLogger().log });
    expect(rebuilt?.source).to.equal('parsed');
    expect(blocks(rebuilt!, 'https://ads.example/x.js')).to.equal(true);
  });

  it('builds a new engine when a list changes, and removes the cache of the old lists', async () => {
    const { log } = recordingLogger();
    const before = await loadAdblockEngine({ listsDir, cacheDir, log });
    await writeLists('||ads.example^\n||newads.example^\n');
    const after = await loadAdblockEngine({ listsDir, cacheDir, log });
    expect(after?.source).to.equal('parsed');
    expect(after?.cacheFile).to.not.equal(before?.cacheFile);
    expect(blocks(after!, 'https://newads.example/x.js')).to.equal(true);
    expect(await readdir(cacheDir)).to.deep.equal([path.basename(after!.cacheFile)]);
  });

  it('still starts when the cache folder cannot be written, and says so', async () => {
    await writeFile(path.join(root, 'a-file'), '');
    const { log, lines } = recordingLogger();
    const engine = await loadAdblockEngine({ listsDir, cacheDir: path.join(root, 'a-file', 'cache'), log });
    expect(engine?.source).to.equal('parsed');
    expect(lines().some((line) => /Could not write the ad-blocking cache/.test(String(line.msg)))).to.equal(true);
  });

  it('returns no engine, with a warning that names the folder, when no list is installed', async () => {
    const { log, lines } = recordingLogger();
    const missing = path.join(root, 'no-such-folder');
    expect(await loadAdblockEngine({ listsDir: missing, cacheDir, log })).to.equal(undefined);
    const warning = lines().find((line) => line.level === 40);
    expect(warning?.msg).to.match(/Found no filter lists/);
    expect(warning?.listsDir).to.equal(missing);
  });

  it('finds every list it expects in the Debian package installed here', async () => {
    for (const list of FILTER_LISTS) {
      expect((await stat(path.join(DEBIAN_UBLOCK_ASSETS, list))).size, list).to.be.above(1000);
    }
  });

  it('a service started twice on the same cache folder parses Debian\'s lists once, then reads the cache', async function () {
    this.timeout(120_000);
    const config = testConfig({ ADBLOCK_CACHE_DIR: cacheDir, RENDER_CONCURRENCY: '1' }).renderer;
    const sources: unknown[] = [];
    for (let start = 0; start < 2; start += 1) {
      const { log, lines } = recordingLogger();
      const renderer = await createChromiumRenderer(config, log);
      await renderer.close();
      sources.push(lines().find((line) => line.msg === 'Loaded the ad-blocking engine')?.source);
    }
    expect(sources).to.deep.equal(['parsed', 'cache']);
    expect((await readdir(cacheDir)).filter((name) => name.endsWith('.bin'))).to.have.length(1);
  });
});
