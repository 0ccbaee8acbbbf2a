/**
 * How long a monitor's comparison takes: diffPngs (worker start, PNG decode of both pictures,
 * pixelmatch, PNG encode of the diff picture) for a 1280x720 and a 1280x5000 pair of page-like
 * pictures, unchanged and with the words of the top quarter moved. Prints figures; asserts nothing.
 * Run: node bench/monitor-diff.bench.ts (BENCH_SAMPLES=5 by default).
 */
import { PNG } from 'pngjs';
import { diffPngs } from '../services/api/src/monitors/diff/diff.ts';
import { fmt, median } from './stats.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);

/** White with a soft vertical gradient and rows of grey "text"; `changed` shifts the words of the upper rows by 4 pixels. */
function page(width: number, height: number, changed: boolean): Buffer {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y += 1) {
    const text = y % 24 < 12 && y > 40;
    const moved = changed && y < height * 0.25;
    for (let x = 0; x < width; x += 1) {
      const i = (y * width + x) * 4;
      const ink = text && x > 40 && x < width - 200 && ((x + (moved ? 4 : 0)) >> 3) % 5 !== 0;
      const base = 255 - Math.floor((y / height) * 20);
      png.data[i] = ink ? 50 : base;
      png.data[i + 1] = ink ? 50 : base;
      png.data[i + 2] = ink ? 60 : 255;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

const options = { pixelTolerance: 0.1, ignoreRegions: [], deviceScaleFactor: 1 };
console.log(`monitor diff, median of ${SAMPLES} (worker start + decode + pixelmatch + encode):`);
for (const [width, height] of [
  [1280, 720],
  [1280, 5000],
] as const) {
  const baseline = page(width, height, false);
  for (const changed of [false, true]) {
    const current = page(width, height, changed);
    const times: number[] = [];
    let ratio = 0;
    for (let n = 0; n < SAMPLES; n += 1) {
      const started = performance.now();
      ratio = (await diffPngs(baseline, current, options)).ratio;
      times.push(performance.now() - started);
    }
    console.log(`  ${width}x${height} ${changed ? 'changed' : 'unchanged'} (ratio ${(ratio * 100).toFixed(2)} %): ${fmt(median(times))} ms`);
  }
}
