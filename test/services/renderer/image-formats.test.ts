import { expect } from 'chai';
import { PNG } from 'pngjs';
import { formatOfMimeType, readImageSize, readJpegSize, readWebpSize } from '../../../services/renderer/src/capture/image-formats.ts';

/** A JPEG's head as encoders write it: SOI, APP0 (JFIF), DQT, then the frame header (SOF0 or SOF2). */
function jpegHead(width: number, height: number, sof = 0xc0): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const dqt = Buffer.concat([Buffer.from([0xff, 0xdb, 0x00, 0x43, 0x00]), Buffer.alloc(64, 1)]);
  const sofSegment = Buffer.from([0xff, sof, 0x00, 0x11, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, Buffer.from([0xff, 0xff]), dqt, sofSegment, Buffer.from([0xff, 0xda, 0x00, 0x02])]);
}

function riff(chunk: string, data: Buffer): Buffer {
  const header = Buffer.alloc(20);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(12 + data.length, 4);
  header.write('WEBP', 8, 'latin1');
  header.write(chunk, 12, 'latin1');
  header.writeUInt32LE(data.length, 16);
  return Buffer.concat([header, data, Buffer.alloc(16)]);
}

describe('image formats: sizes read from the encoded headers', () => {
  it('reads a PNG through the same entry point', () => {
    expect(readImageSize(PNG.sync.write(new PNG({ width: 33, height: 44 })), 'png')).to.deep.equal({ width: 33, height: 44 });
  });

  it('reads a baseline JPEG frame header after APP0, a fill byte and DQT', () => {
    expect(readJpegSize(jpegHead(1280, 720))).to.deep.equal({ width: 1280, height: 720 });
  });

  it('reads a progressive JPEG (SOF2), and skips DHT (C4), which is not a frame header', () => {
    const dht = Buffer.from([0xff, 0xc4, 0x00, 0x04, 0x00, 0x00]);
    const head = jpegHead(5120, 2880, 0xc2);
    expect(readJpegSize(Buffer.concat([head.subarray(0, 2), dht, head.subarray(2)]))).to.deep.equal({ width: 5120, height: 2880 });
  });

  it('refuses a JPEG whose scan starts before any frame header, and bytes that are no JPEG', () => {
    expect(() => readJpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02]))).to.throw(/no start-of-frame/);
    expect(() => readJpegSize(Buffer.from('GIF89a'))).to.throw(/not a JPEG/);
  });

  it('reads a lossy WebP (VP8 key frame: 14-bit sizes after the start code)', () => {
    const data = Buffer.alloc(10);
    data.set([0x9d, 0x01, 0x2a], 3);
    data.writeUInt16LE(750 | (1 << 14), 6); // the top two bits are the scale, not the size
    data.writeUInt16LE(1334, 8);
    expect(readWebpSize(riff('VP8 ', data))).to.deep.equal({ width: 750, height: 1334 });
  });

  it('reads a lossless WebP (VP8L: 14-bit sizes minus one after the 0x2f signature)', () => {
    const data = Buffer.alloc(5);
    data[0] = 0x2f;
    data.writeUInt32LE((1920 - 1) | ((1080 - 1) << 14), 1);
    expect(readWebpSize(riff('VP8L', data))).to.deep.equal({ width: 1920, height: 1080 });
  });

  it('reads an extended WebP (VP8X: 24-bit canvas sizes minus one), beyond 16383 pixels', () => {
    const data = Buffer.alloc(10);
    data.writeUIntLE(20000 - 1, 4, 3);
    data.writeUIntLE(300 - 1, 7, 3);
    expect(readWebpSize(riff('VP8X', data))).to.deep.equal({ width: 20000, height: 300 });
  });

  it('refuses a RIFF that is not WebP, and an unknown first chunk', () => {
    const wave = riff('fmt ', Buffer.alloc(10));
    wave.write('WAVE', 8, 'latin1');
    expect(() => readWebpSize(wave)).to.throw(/not a WebP/);
    expect(() => readWebpSize(riff('ALPH', Buffer.alloc(10)))).to.throw(/unknown first chunk/);
  });

  it('maps Content-Types to formats, parameters and case aside', () => {
    expect(formatOfMimeType('image/webp')).to.equal('webp');
    expect(formatOfMimeType('Image/JPEG; charset=binary')).to.equal('jpeg');
    expect(formatOfMimeType('application/json')).to.equal(undefined);
    expect(formatOfMimeType(undefined)).to.equal(undefined);
  });
});
