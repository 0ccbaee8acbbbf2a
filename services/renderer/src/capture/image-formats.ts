import { readPngSize, type PngSize } from './png.ts';

/** The encodings a capture can produce; png is the spec's and the default. */
export const IMAGE_FORMATS = ['png', 'jpeg', 'webp'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];
export const DEFAULT_IMAGE_FORMAT: ImageFormat = 'png';

/** Formats whose encoder takes a quality (1..100); PNG is lossless and has none. */
export const LOSSY_FORMATS = ['jpeg', 'webp'] as const satisfies readonly ImageFormat[];
/** What a lossy capture uses when the request gives no imageQuality: Chromium's own JPEG default. */
export const DEFAULT_IMAGE_QUALITY = 80;

/** What a capture can produce: one of the images, or a PDF printed from the page (pdf.ts). */
export const CAPTURE_FORMATS = [...IMAGE_FORMATS, 'pdf'] as const;
export type CaptureFormat = (typeof CAPTURE_FORMATS)[number];

export const MIME_TYPES: Readonly<Record<CaptureFormat, string>> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' };

export function formatOfMimeType(mimeType: string | undefined): CaptureFormat | undefined {
  const bare = mimeType?.split(';')[0]?.trim().toLowerCase();
  return CAPTURE_FORMATS.find((format) => MIME_TYPES[format] === bare);
}

export type ImageSize = PngSize;

/**
 * The pixel size written in the encoded image itself, so that width and height in a response are
 * what a decoder will show, never what the profile intended.
 */
export function readImageSize(bytes: Uint8Array, format: ImageFormat): ImageSize {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (format) {
    case 'png':
      return readPngSize(buffer);
    case 'jpeg':
      return readJpegSize(buffer);
    case 'webp':
      return readWebpSize(buffer);
  }
}

/** Markers with no length field: TEM and the restart markers RST0..RST7. */
const STANDALONE_MARKERS = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7]);
/** SOF0..SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** Walks the segments after SOI up to the first start-of-frame, whose header holds height then width. */
export function readJpegSize(bytes: Buffer): ImageSize {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) throw new Error('not a JPEG image');
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) throw new Error('not a JPEG image: a segment does not start with 0xFF');
    const marker = bytes[offset + 1] as number;
    if (marker === 0xff) {
      offset += 1; // fill byte
      continue;
    }
    if (STANDALONE_MARKERS.has(marker)) {
      offset += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // EOI or the scan itself: no frame header came first
    const length = bytes.readUInt16BE(offset + 2);
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break;
      return { width: bytes.readUInt16BE(offset + 7), height: bytes.readUInt16BE(offset + 5) };
    }
    offset += 2 + length;
  }
  throw new Error('not a JPEG image: no start-of-frame segment');
}

/**
 * RIFF/WEBP with its first chunk: VP8 (lossy: the key frame header), VP8L (lossless: 14-bit sizes
 * minus one) or VP8X (extended: the 24-bit canvas size minus one).
 */
export function readWebpSize(bytes: Buffer): ImageSize {
  if (bytes.length < 30 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') {
    throw new Error('not a WebP image');
  }
  const chunk = bytes.toString('latin1', 12, 16);
  const data = 20;
  switch (chunk) {
    case 'VP8 ':
      if (bytes[data + 3] !== 0x9d || bytes[data + 4] !== 0x01 || bytes[data + 5] !== 0x2a) throw new Error('not a WebP image: bad VP8 start code');
      return { width: bytes.readUInt16LE(data + 6) & 0x3fff, height: bytes.readUInt16LE(data + 8) & 0x3fff };
    case 'VP8L': {
      if (bytes[data] !== 0x2f) throw new Error('not a WebP image: bad VP8L signature');
      const bits = bytes.readUInt32LE(data + 1);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    case 'VP8X':
      return { width: bytes.readUIntLE(data + 4, 3) + 1, height: bytes.readUIntLE(data + 7, 3) + 1 };
    default:
      throw new Error(`not a WebP image: unknown first chunk "${chunk}"`);
  }
}
