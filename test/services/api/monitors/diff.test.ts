import { expect } from 'chai';
import { PNG } from 'pngjs';
import { diffPngs, type CompareOptions } from '../../../../services/api/src/monitors/diff/diff.ts';

/**
 * The diff engine on real PNG files (encoded and decoded by pngjs), through the worker thread the
 * API uses: counts, ratios, regions, sizes that differ, ignore regions, colour tolerance,
 * anti-aliasing, and the diff picture itself.
 */
type Colour = [number, number, number];
const WHITE: Colour = [255, 255, 255];
const BLACK: Colour = [0, 0, 0];

class Picture {
  readonly png: PNG;
  readonly width: number;
  readonly height: number;
  constructor(width: number, height: number, background: Colour = WHITE) {
    this.width = width;
    this.height = height;
    this.png = new PNG({ width, height });
    this.fill(0, 0, width, height, background);
  }

  set(x: number, y: number, [r, g, b]: Colour): this {
    const i = (y * this.width + x) * 4;
    this.png.data[i] = r;
    this.png.data[i + 1] = g;
    this.png.data[i + 2] = b;
    this.png.data[i + 3] = 255;
    return this;
  }

  fill(left: number, top: number, width: number, height: number, colour: Colour): this {
    for (let y = top; y < top + height; y += 1) for (let x = left; x < left + width; x += 1) this.set(x, y, colour);
    return this;
  }

  /** A page-like picture: a few grey bars of "text" on white, so that pixelmatch has structure to look at. */
  static page(width: number, height: number): Picture {
    const picture = new Picture(width, height);
    for (let y = 20; y + 12 < height; y += 40) picture.fill(20, y, Math.min(width - 40, 150 + ((y * 7) % 100)), 12, [60, 60, 60]);
    return picture;
  }

  encode(): Buffer {
    return PNG.sync.write(this.png);
  }
}

const options = (overrides: Partial<CompareOptions> = {}): CompareOptions => ({ pixelTolerance: 0.1, ignoreRegions: [], deviceScaleFactor: 1, ...overrides });
const decode = (bytes: Uint8Array) => PNG.sync.read(Buffer.from(bytes));
const pixel = (png: PNG, x: number, y: number) => Array.from(png.data.subarray((y * png.width + x) * 4, (y * png.width + x) * 4 + 3));

describe('monitor diff engine (pixelmatch in a worker thread)', function () {
  this.timeout(60_000);

  it('finds nothing between two identical pictures, and draws the baseline faded', async () => {
    const result = await diffPngs(Picture.page(400, 300).encode(), Picture.page(400, 300).encode(), options());
    expect(result).to.include({ changedPixels: 0, totalPixels: 400 * 300, ratio: 0, width: 400, height: 300 });
    expect(result.regions).to.deep.equal([]);
    const diff = decode(result.diffPng);
    expect([diff.width, diff.height]).to.deep.equal([400, 300]);
    const [r, g, b] = pixel(diff, 30, 25); // a dark "text" bar of the baseline
    expect(r).to.equal(g).and.equal(b);
    expect(r, 'faded, not black').to.be.greaterThan(200);
    expect(pixel(diff, 5, 5)).to.deep.equal([255, 255, 255]);
  });

  it('counts a changed block exactly, boxes it, and paints it red', async () => {
    const changed = Picture.page(400, 300).fill(100, 150, 80, 50, [0, 90, 200]);
    const result = await diffPngs(Picture.page(400, 300).encode(), changed.encode(), options());
    expect(result.changedPixels).to.equal(80 * 50);
    expect(result.ratio).to.equal((80 * 50) / (400 * 300));
    expect(result.regions).to.deep.equal([{ left: 100, top: 150, width: 80, height: 50 }]);
    const diff = decode(result.diffPng);
    expect(pixel(diff, 120, 170)).to.deep.equal([255, 0, 0]);
    expect(pixel(diff, 5, 5)).to.deep.equal([255, 255, 255]);
  });

  it('gives one box per separate change, largest first, in CSS pixels at a device scale factor of 2', async () => {
    const changed = Picture.page(800, 600).fill(20, 20, 40, 40, BLACK).fill(400, 300, 200, 100, BLACK);
    const result = await diffPngs(Picture.page(800, 600).encode(), changed.encode(), options({ deviceScaleFactor: 2 }));
    expect(result.regions).to.deep.equal([
      { left: 200, top: 150, width: 100, height: 50 },
      { left: 10, top: 10, width: 20, height: 20 },
    ]);
  });

  it('compares pictures of different sizes on the common area and counts the rest as changed', async () => {
    const longer = Picture.page(400, 450);
    const result = await diffPngs(Picture.page(400, 300).encode(), longer.encode(), options());
    expect(result).to.include({ width: 400, height: 450, totalPixels: 400 * 450, changedPixels: 400 * 150 });
    expect(result.ratio).to.equal(1 / 3);
    expect(result.regions).to.deep.equal([{ left: 0, top: 300, width: 400, height: 150 }]);
    const diff = decode(result.diffPng);
    expect(pixel(diff, 200, 400)).to.deep.equal([255, 0, 0]);
    expect(pixel(diff, 200, 5)).to.deep.equal([255, 255, 255]);

    const narrower = await diffPngs(Picture.page(400, 300).encode(), Picture.page(300, 300).encode(), options());
    expect(narrower.changedPixels).to.equal(100 * 300);
  });

  it('leaves ignore regions out of the count and the total, scaled by the device scale factor', async () => {
    const clock = Picture.page(800, 600).fill(600, 20, 160, 40, BLACK); // a "clock" at CSS (300, 10) 80x20
    const region = { left: 300, top: 10, width: 80, height: 20 };
    const unmasked = await diffPngs(Picture.page(800, 600).encode(), clock.encode(), options({ deviceScaleFactor: 2 }));
    expect(unmasked.changedPixels).to.equal(160 * 40);
    const masked = await diffPngs(Picture.page(800, 600).encode(), clock.encode(), options({ deviceScaleFactor: 2, ignoreRegions: [region] }));
    expect(masked).to.include({ changedPixels: 0, ratio: 0, totalPixels: 800 * 600 - 160 * 40 });
    expect(masked.regions).to.deep.equal([]);
    const diff = decode(masked.diffPng);
    expect(pixel(diff, 650, 30), 'the ignored area is drawn pale blue').to.deep.equal([214, 228, 255]);
  });

  it('ignores an ignore region that lies beyond the picture, and masks the part of the extra height it covers', async () => {
    const result = await diffPngs(
      Picture.page(400, 300).encode(),
      Picture.page(400, 400).encode(),
      options({ ignoreRegions: [{ left: 0, top: 350, width: 400, height: 1000 }, { left: 5000, top: 0, width: 10, height: 10 }] }),
    );
    expect(result).to.include({ changedPixels: 400 * 50, totalPixels: 400 * 350 });
  });

  it('applies the per-pixel colour tolerance', async () => {
    const tinted = new Picture(200, 200).fill(0, 0, 200, 100, [246, 246, 246]);
    const strict = await diffPngs(new Picture(200, 200).encode(), tinted.encode(), options({ pixelTolerance: 0 }));
    const tolerant = await diffPngs(new Picture(200, 200).encode(), tinted.encode(), options({ pixelTolerance: 0.1 }));
    expect(strict.changedPixels).to.equal(200 * 100);
    expect(tolerant.changedPixels).to.equal(0);
  });

  it('does not count anti-aliased pixels: a shape whose edge is smoothed differently', async () => {
    // The same black square; in the current picture its edge pixels are the greys a renderer's
    // anti-aliasing leaves at a sub-pixel offset.
    const sharp = new Picture(120, 120).fill(40, 40, 40, 40, BLACK);
    const smoothed = new Picture(120, 120).fill(40, 40, 40, 40, BLACK);
    for (let i = 40; i < 80; i += 1) {
      smoothed.set(80, i, [128, 128, 128]);
      smoothed.set(i, 80, [128, 128, 128]);
    }
    const result = await diffPngs(sharp.encode(), smoothed.encode(), options({ pixelTolerance: 0 }));
    expect(result.changedPixels, 'the 79 greyed edge pixels are anti-aliasing').to.be.lessThan(5);
    const diff = decode(result.diffPng);
    expect(pixel(diff, 80, 60), 'drawn in pixelmatch’s anti-aliasing yellow').to.deep.equal([255, 255, 0]);
  });

  it('rejects a picture that is not a PNG, naming which', async () => {
    try {
      await diffPngs(Picture.page(10, 10).encode(), Buffer.from('<html>not a picture</html>'), options());
      expect.fail('the diff succeeded');
    } catch (err) {
      expect((err as Error).message).to.match(/^the current picture is not a readable PNG/);
    }
  });

  it('keeps the event loop turning while a 1280x5000 pair is compared', async () => {
    const baseline = Picture.page(1280, 5000).encode();
    const current = Picture.page(1280, 5000).fill(100, 2000, 600, 400, BLACK).encode();
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns += 1;
      if (spinning) setTimeout(spin, 1);
    };
    spin();
    const result = await diffPngs(baseline, current, options());
    spinning = false;
    expect(result.regions[0]).to.deep.equal({ left: 100, top: 2000, width: 600, height: 400 });
    // Decoding, comparing and encoding 6.4 million pixels on the loop itself would let no timer run.
    expect(turns).to.be.greaterThan(5);
  });

  it('runs comparisons one at a time and answers each', async () => {
    const results = await Promise.all([0, 1, 2].map((n) => diffPngs(Picture.page(300, 200).encode(), Picture.page(300, 200).fill(0, 0, 10 * (n + 1), 10, BLACK).encode(), options())));
    expect(results.map((result) => result.changedPixels)).to.deep.equal([100, 200, 300]);
  });
});
