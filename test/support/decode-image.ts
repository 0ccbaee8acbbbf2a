import puppeteer, { type Browser } from 'puppeteer-core';
import { PNG } from 'pngjs';
import { decodedImage, type DecodedImage } from './harness.ts';

/**
 * Decodes a JPEG or WebP the way a browser shows it: Chromium draws it on a canvas and hands the
 * pixels back as a lossless PNG, which pngjs reads. No image codec package is needed, and the decoder
 * is the one every client of the service is likely to use.
 */
let browser: Promise<Browser> | undefined;

function decoder(): Promise<Browser> {
  browser ??= puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--force-color-profile=srgb'],
  });
  return browser;
}

export async function decodeImage(bytes: Buffer, mimeType: string): Promise<DecodedImage> {
  const page = await (await decoder()).newPage();
  try {
    const pngBase64 = await page.evaluate(async (dataUri: string) => {
      const image = new Image();
      image.src = dataUri;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.naturalWidth;
      canvas.height = image.naturalHeight;
      canvas.getContext('2d')?.drawImage(image, 0, 0);
      return canvas.toDataURL('image/png').split(',')[1] ?? '';
    }, `data:${mimeType};base64,${bytes.toString('base64')}`);
    return decodedImage(PNG.sync.read(Buffer.from(pngBase64, 'base64')), bytes);
  } finally {
    await page.close();
  }
}

/** Decodes a `data:image/<type>;base64,...` URI of any of the service's formats. */
export function decodeAnyDataUri(image: unknown): Promise<DecodedImage & { mimeType: string }> {
  const match = typeof image === 'string' ? /^data:(image\/(?:png|jpeg|webp));base64,([A-Za-z0-9+/]+={0,2})$/.exec(image) : null;
  if (!match) throw new Error(`not an image data URI: ${String(image).slice(0, 40)}...`);
  const mimeType = match[1] as string;
  return decodeImage(Buffer.from(match[2] as string, 'base64'), mimeType).then((decoded) => ({ ...decoded, mimeType }));
}

export async function closeImageDecoder(): Promise<void> {
  const running = browser;
  browser = undefined;
  if (running) await (await running).close();
}

/** True when every channel of `actual` is within `tolerance` of `expected`: lossy codecs shift colours a little. */
export function near(actual: [number, number, number], expected: [number, number, number], tolerance = 24): boolean {
  return actual.every((value, i) => Math.abs(value - (expected[i] as number)) <= tolerance);
}
