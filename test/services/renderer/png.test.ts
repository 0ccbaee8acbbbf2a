import { expect } from 'chai';
import { PNG } from 'pngjs';
import { readPngSize } from '../../../services/renderer/src/capture/png.ts';

describe('readPngSize', () => {
  it('reads width and height from the IHDR chunk of a real PNG', () => {
    const png = PNG.sync.write(new PNG({ width: 321, height: 123 }));
    expect(readPngSize(png)).to.deep.equal({ width: 321, height: 123 });
  });

  it('rejects bytes that are not a PNG', () => {
    expect(() => readPngSize(Buffer.from('GIF89a....................'))).to.throw(/not a PNG/);
    expect(() => readPngSize(Buffer.alloc(10))).to.throw(/not a PNG/);
  });
});
