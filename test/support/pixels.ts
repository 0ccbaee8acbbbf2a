import type { PNG } from 'pngjs';

/** Share of pixels (0..1) whose RGB is identical in both images; 0 when their sizes differ. */
export function pixelSimilarity(a: PNG, b: PNG): number {
  if (a.width !== b.width || a.height !== b.height) return 0;
  let equal = 0;
  for (let i = 0; i < a.data.length; i += 4) {
    if (a.data[i] === b.data[i] && a.data[i + 1] === b.data[i + 1] && a.data[i + 2] === b.data[i + 2]) equal += 1;
  }
  return equal / (a.width * a.height);
}
