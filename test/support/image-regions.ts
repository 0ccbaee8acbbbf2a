import type { DecodedImage } from './harness.ts';
import type { Region } from './consent-fixtures.ts';

type Rgb = readonly [number, number, number];

function* pixels(region: Region): Generator<[number, number]> {
  for (let y = region.y; y < region.y + region.height; y += 1) {
    for (let x = region.x; x < region.x + region.width; x += 1) yield [x, y];
  }
}

/** The share (0..1) of a region's pixels that are exactly `colour`. */
export function shareOfColour(image: DecodedImage, region: Region, colour: Rgb): number {
  let matching = 0;
  let total = 0;
  for (const [x, y] of pixels(region)) {
    const [r, g, b] = image.rgb(x, y);
    if (r === colour[0] && g === colour[1] && b === colour[2]) matching += 1;
    total += 1;
  }
  return matching / total;
}

/** How many pixels of a region differ between two images of the same size. */
export function differingPixels(a: DecodedImage, b: DecodedImage, region: Region): number {
  let differing = 0;
  for (const [x, y] of pixels(region)) {
    const [r1, g1, b1] = a.rgb(x, y);
    const [r2, g2, b2] = b.rgb(x, y);
    if (r1 !== r2 || g1 !== g2 || b1 !== b2) differing += 1;
  }
  return differing;
}
