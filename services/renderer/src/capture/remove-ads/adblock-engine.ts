import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENGINE_VERSION, PuppeteerBlocker } from '@ghostery/adblocker-puppeteer';
import type { Logger } from '../../../../../lib/logger.ts';

/**
 * The lists Debian's webext-ublock-origin-chromium installs, relative to its assets folder:
 * EasyList (ads), EasyPrivacy (trackers), and uBlock's own ads, privacy, unbreak and quick-fixes lists.
 * The unbreak list holds exceptions that keep sites working where the others block too much.
 */
export const FILTER_LISTS = [
  'thirdparties/easylist/easylist.txt',
  'thirdparties/easylist/easyprivacy.txt',
  'ublock/filters.min.txt',
  'ublock/privacy.min.txt',
  'ublock/unbreak.min.txt',
  'ublock/quick-fixes.min.txt',
] as const;

/**
 * EasyList's cookie-notice rules (easylist_cookie general and site-specific hiding, with the
 * exceptions that keep sites working), as DuckDuckGo compiles them into `rules/filterlist.txt`.
 * Debian ships no annoyance list, and no package ships EasyList Cookie by itself: autoconsent 15.1
 * is the last release with the file (v16 dropped it), so it is installed under an alias of its own.
 * See docs/remove-ads.md for why this source.
 */
export const COOKIE_NOTICE_LIST: ListFile = {
  name: 'easylist-cookie (autoconsent-filterlist/rules/filterlist.txt)',
  file: fileURLToPath(new URL('../rules/filterlist.txt', import.meta.resolve('autoconsent-filterlist'))),
};

/** A filter list file, named as the logs name it. */
export interface ListFile {
  name: string;
  file: string;
}

/**
 * CSP filters cannot be applied through puppeteer (it cannot rewrite response headers), and extended
 * (procedural) selectors need a content script the puppeteer integration does not have: leaving
 * both out keeps the engine smaller. Part of the cache key, so changing it rebuilds the cache.
 */
const ENGINE_OPTIONS = { loadCSPFilters: false, loadExtendedSelectors: false, enableHtmlFiltering: false } as const;

const CACHE_PREFIX = 'adblock-engine-';
const ADBLOCKER_VERSION: string = createRequire(import.meta.url)('@ghostery/adblocker/package.json').version;

export interface AdblockEngine {
  blocker: PuppeteerBlocker;
  /** Where the engine came from: the on-disk cache, or the lists parsed just now. */
  source: 'cache' | 'parsed';
  /** The lists it was built from, relative to the lists folder. */
  lists: string[];
  cacheFile: string;
}

export interface AdblockEngineOptions {
  listsDir: string;
  /** Lists from npm packages, used beside Debian's whether or not those are installed. */
  packagedLists?: readonly ListFile[];
  cacheDir: string;
  log: Logger;
}

/**
 * Builds the ad-blocking engine from the filter lists on disk, never from the web. Parsing takes
 * seconds; the serialized engine is cached under a key of the lists' contents and the adblocker's
 * version, so a later start deserializes it in milliseconds. A cache that is corrupt or from other
 * lists is rebuilt; a cache that cannot be written only costs the next start its speed.
 * Returns undefined, after a warning, when none of the lists is installed.
 */
export async function loadAdblockEngine({ listsDir, packagedLists = [], cacheDir, log }: AdblockEngineOptions): Promise<AdblockEngine | undefined> {
  const debianLists = await readLists(FILTER_LISTS.map((name) => ({ name, file: path.join(listsDir, name) })));
  if (debianLists.length === 0) {
    log.warn(
      { listsDir, expected: FILTER_LISTS },
      'Found no filter lists: removeAds will not block ads or trackers, only consent banners and overlays ' +
        '(install webext-ublock-origin-chromium or set FILTER_LISTS_DIR)',
    );
  } else {
    const found = debianLists.map((list) => list.name);
    const missing = FILTER_LISTS.filter((name) => !found.includes(name));
    if (missing.length > 0) log.warn({ listsDir, missing }, 'Some filter lists are missing; blocking with the others');
  }
  const lists = [...debianLists, ...(await readLists(packagedLists))];
  if (lists.length === 0) return undefined;
  const names = lists.map((list) => list.name);

  const cacheFile = path.join(cacheDir, `${CACHE_PREFIX}${cacheKey(lists)}.bin`);
  const cached = await readCachedEngine(cacheFile, log);
  if (cached) return { blocker: cached, source: 'cache', lists: names, cacheFile };

  const started = performance.now();
  const blocker = PuppeteerBlocker.parse(lists.map((list) => list.text).join('\n'), ENGINE_OPTIONS);
  log.info({ lists: names, parseMs: Math.round(performance.now() - started) }, 'Parsed the filter lists');
  await writeCachedEngine(cacheFile, blocker.serialize(), log);
  return { blocker, source: 'parsed', lists: names, cacheFile };
}

interface FilterList {
  name: string;
  text: string;
}

async function readLists(sources: readonly ListFile[]): Promise<FilterList[]> {
  const lists = await Promise.all(
    sources.map(async ({ name, file }) => {
      try {
        return { name, text: await readFile(file, 'utf8') };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw err;
      }
    }),
  );
  return lists.filter((list) => list !== undefined);
}

function cacheKey(lists: FilterList[]): string {
  const hash = createHash('sha256');
  hash.update(`${ADBLOCKER_VERSION}\0${ENGINE_VERSION}\0${JSON.stringify(ENGINE_OPTIONS)}\0`);
  for (const { name, text } of lists) hash.update(`${name}\0${text.length}\0${text}\0`);
  return hash.digest('hex').slice(0, 32);
}

async function readCachedEngine(cacheFile: string, log: Logger): Promise<PuppeteerBlocker | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(cacheFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.warn({ err, cacheFile }, 'Could not read the ad-blocking cache; rebuilding it');
    return undefined;
  }
  try {
    // deserialize() checks the engine format version and a checksum of the whole buffer.
    return PuppeteerBlocker.deserialize(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (err) {
    log.warn({ err: (err as Error).message, cacheFile }, 'Discarded a corrupt ad-blocking cache; rebuilding it');
    return undefined;
  }
}

async function writeCachedEngine(cacheFile: string, bytes: Uint8Array, log: Logger): Promise<void> {
  const dir = path.dirname(cacheFile);
  // Written beside its final name and renamed, so that neither a crash mid-write nor two pools
  // starting at once (each parses, each writes) can leave a torn cache behind.
  const partial = `${cacheFile}.${randomUUID()}.partial`;
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(partial, bytes);
    await rename(partial, cacheFile);
  } catch (err) {
    log.warn({ err: (err as Error).message, cacheDir: dir }, 'Could not write the ad-blocking cache; the next start will parse the lists again');
    await rm(partial, { force: true }).catch(() => {});
    return;
  }
  // Engines built from older lists would otherwise pile up with every Debian update.
  const stale = (await readdir(dir).catch(() => [] as string[])).filter(
    (name) => name.startsWith(CACHE_PREFIX) && name.endsWith('.bin') && name !== path.basename(cacheFile),
  );
  await Promise.all(stale.map((name) => rm(path.join(dir, name), { force: true }).catch(() => {})));
}
