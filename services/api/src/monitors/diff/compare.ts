/**
 * The comparison of two pictures of a page (decoded RGBA), synchronous and pure: diff.ts runs it in
 * a worker thread. pixelmatch compares the area both pictures share, with its anti-aliasing
 * detection (anti-aliased pixels are not counted); whatever only one picture covers (a longer full
 * page) counts as changed. Ignore regions, in CSS pixels, are scaled by the device scale factor and
 * left out of both the count and the total. The diff image shows changed pixels in red over the
 * faded baseline, ignored areas in pale blue.
 */
import pixelmatch from 'pixelmatch';

export interface Rgba {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. */
  data: Uint8Array;
}

/** A rectangle in CSS pixels, from the top left corner of the picture. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface CompareOptions {
  /** pixelmatch's threshold: how different (0..1, perceived colour) two pixels must be to count. */
  pixelTolerance: number;
  ignoreRegions: Region[];
  /** Device pixels per CSS pixel of both pictures (the profile's deviceScaleFactor). */
  deviceScaleFactor: number;
}

export interface Comparison {
  /** Pixels that count as changed, out of totalPixels (both in device pixels). */
  changedPixels: number;
  /** The pixels compared: the area either picture covers, less the ignored areas. */
  totalPixels: number;
  /** changedPixels / totalPixels; 0 when nothing is compared. */
  ratio: number;
  /** Bounding boxes of the changed areas, in CSS pixels, largest first, at most MAX_REGIONS. */
  regions: Region[];
  /** The diff picture, as large as the area either picture covers. */
  diff: Rgba;
}

/** Changed pixels closer than this many device pixels join one region. */
export const REGION_CELL = 16;
export const MAX_REGIONS = 50;

const RED = [255, 0, 0] as const;
const IGNORED = [214, 228, 255] as const;

export function compareImages(baseline: Rgba, current: Rgba, options: CompareOptions): Comparison {
  const width = Math.max(baseline.width, current.width);
  const height = Math.max(baseline.height, current.height);
  const common = { width: Math.min(baseline.width, current.width), height: Math.min(baseline.height, current.height) };
  const ignored = ignoredMask(width, height, options.ignoreRegions, options.deviceScaleFactor);

  // pixelmatch needs two pictures of one size: the common area of each, ignored pixels made equal.
  const before = crop(baseline, common.width, common.height);
  const after = crop(current, common.width, common.height);
  for (let y = 0; y < common.height; y += 1) {
    for (let x = 0; x < common.width; x += 1) {
      if (ignored[y * width + x]) {
        const i = (y * common.width + x) * 4;
        after[i] = before[i] as number;
        after[i + 1] = before[i + 1] as number;
        after[i + 2] = before[i + 2] as number;
        after[i + 3] = before[i + 3] as number;
      }
    }
  }
  const commonDiff = new Uint8Array(common.width * common.height * 4);
  if (common.width > 0 && common.height > 0) {
    pixelmatch(before, after, commonDiff, common.width, common.height, {
      threshold: options.pixelTolerance,
      includeAA: false,
      alpha: 0.1,
      diffColor: [...RED],
    });
  }

  const diff = new Uint8Array(width * height * 4);
  const changed = new Uint8Array(width * height);
  let changedPixels = 0;
  let ignoredPixels = 0;
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const p = y * width + x;
      const o = p * 4;
      diff[o + 3] = 255;
      if (ignored[p]) {
        ignoredPixels += 1;
        diff[o] = IGNORED[0];
        diff[o + 1] = IGNORED[1];
        diff[o + 2] = IGNORED[2];
      } else if (x < common.width && y < common.height) {
        const i = (y * common.width + x) * 4;
        const r = commonDiff[i] as number;
        const g = commonDiff[i + 1] as number;
        const b = commonDiff[i + 2] as number;
        diff[o] = r;
        diff[o + 1] = g;
        diff[o + 2] = b;
        // pixelmatch draws unchanged pixels grey (r = g = b) and anti-aliased ones yellow: red is a change.
        if (r === RED[0] && g === RED[1] && b === RED[2]) {
          changed[p] = 1;
          changedPixels += 1;
        }
      } else {
        changed[p] = 1;
        changedPixels += 1;
        diff[o] = RED[0];
        diff[o + 1] = RED[1];
        diff[o + 2] = RED[2];
      }
    }
  }
  const totalPixels = width * height - ignoredPixels;
  return {
    changedPixels,
    totalPixels,
    ratio: totalPixels > 0 ? changedPixels / totalPixels : 0,
    regions: changedRegions(changed, width, height, options.deviceScaleFactor),
    diff: { width, height, data: diff },
  };
}

/** The top-left width x height of a picture, as a fresh buffer. */
function crop(image: Rgba, width: number, height: number): Uint8Array {
  if (image.width === width && image.height === height) return new Uint8Array(image.data);
  const out = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y += 1) {
    out.set(image.data.subarray(y * image.width * 4, (y * image.width + width) * 4), y * width * 4);
  }
  return out;
}

function ignoredMask(width: number, height: number, regions: Region[], scale: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  for (const region of regions) {
    const left = Math.max(0, Math.floor(region.left * scale));
    const top = Math.max(0, Math.floor(region.top * scale));
    const right = Math.min(width, Math.ceil((region.left + region.width) * scale));
    const bottom = Math.min(height, Math.ceil((region.top + region.height) * scale));
    for (let y = top; y < bottom; y += 1) mask.fill(1, y * width + left, Math.max(y * width + left, y * width + right));
  }
  return mask;
}

/**
 * The changed areas as bounding boxes: the picture is cut into REGION_CELL-pixel cells, cells holding
 * a change that touch (8 neighbours) form one region. Returned in CSS pixels, largest first.
 */
function changedRegions(changed: Uint8Array, width: number, height: number, scale: number): Region[] {
  const columns = Math.ceil(width / REGION_CELL);
  const rows = Math.ceil(height / REGION_CELL);
  const cells = new Uint8Array(columns * rows);
  for (let y = 0; y < height; y += 1) {
    const row = Math.floor(y / REGION_CELL) * columns;
    for (let x = 0; x < width; x += 1) if (changed[y * width + x]) cells[row + Math.floor(x / REGION_CELL)] = 1;
  }
  const boxes: Array<{ left: number; top: number; right: number; bottom: number }> = [];
  const stack: number[] = [];
  for (let start = 0; start < cells.length; start += 1) {
    if (cells[start] !== 1) continue;
    cells[start] = 2;
    stack.push(start);
    const box = { left: columns, top: rows, right: -1, bottom: -1 };
    while (stack.length > 0) {
      const cell = stack.pop() as number;
      const cx = cell % columns;
      const cy = Math.floor(cell / columns);
      box.left = Math.min(box.left, cx);
      box.top = Math.min(box.top, cy);
      box.right = Math.max(box.right, cx);
      box.bottom = Math.max(box.bottom, cy);
      for (let dy = -1; dy <= 1; dy += 1) {
        for (let dx = -1; dx <= 1; dx += 1) {
          const nx = cx + dx;
          const ny = cy + dy;
          if (nx < 0 || ny < 0 || nx >= columns || ny >= rows) continue;
          const next = ny * columns + nx;
          if (cells[next] === 1) {
            cells[next] = 2;
            stack.push(next);
          }
        }
      }
    }
    boxes.push(box);
  }
  // Each box in device pixels is tightened to the changed pixels it holds, then turned into CSS pixels.
  return boxes
    .map((box) => tighten(changed, width, height, box))
    .sort((a, b) => b.width * b.height - a.width * a.height)
    .slice(0, MAX_REGIONS)
    .map((box) => {
      const left = Math.floor(box.left / scale);
      const top = Math.floor(box.top / scale);
      return { left, top, width: Math.ceil((box.left + box.width) / scale) - left, height: Math.ceil((box.top + box.height) / scale) - top };
    });
}

function tighten(changed: Uint8Array, width: number, height: number, cells: { left: number; top: number; right: number; bottom: number }): Region {
  const x0 = cells.left * REGION_CELL;
  const y0 = cells.top * REGION_CELL;
  const x1 = Math.min(width, (cells.right + 1) * REGION_CELL);
  const y1 = Math.min(height, (cells.bottom + 1) * REGION_CELL);
  let left = x1;
  let top = y1;
  let right = x0 - 1;
  let bottom = y0 - 1;
  for (let y = y0; y < y1; y += 1) {
    for (let x = x0; x < x1; x += 1) {
      if (!changed[y * width + x]) continue;
      if (x < left) left = x;
      if (x > right) right = x;
      if (y < top) top = y;
      if (y > bottom) bottom = y;
    }
  }
  return { left, top, width: right - left + 1, height: bottom - top + 1 };
}
