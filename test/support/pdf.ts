import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PNG } from 'pngjs';
import { decodedImage, type DecodedImage } from './harness.ts';

/**
 * PDFs checked with a real parser: poppler's `pdfinfo` and `pdftoppm` (Debian's poppler-utils,
 * which `make test-deps` installs). Nothing here reads a PDF by itself.
 */
const run = promisify(execFile);

export interface PdfInfo {
  pages: number;
  /** The first page, in PostScript points (1/72 in), as pdfinfo prints it. */
  widthPt: number;
  heightPt: number;
  /** pdfinfo's own name for the size, when it knows one ("A4", "letter"), else undefined. */
  paperName: string | undefined;
  /** Every line pdfinfo printed, by its label. */
  fields: Record<string, string>;
}

async function withPdfFile<T>(bytes: Buffer, use: (file: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'viewfinder-pdf-'));
  try {
    const file = path.join(dir, 'capture.pdf');
    await writeFile(file, bytes);
    return await use(file, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Parses `pdfinfo`'s output; it fails (and so does the test) on anything poppler cannot read as a PDF. */
export function parsePdfInfo(output: string): PdfInfo {
  const fields = Object.fromEntries(
    output
      .split('\n')
      .map((line) => /^([^:]+):\s*(.*)$/.exec(line))
      .filter((match): match is RegExpExecArray => match !== null)
      .map((match) => [match[1] as string, match[2] as string]),
  );
  const size = /^([\d.]+) x ([\d.]+) pts(?: \((.+)\))?/.exec(fields['Page size'] ?? '');
  if (!size || fields.Pages === undefined) throw new Error(`pdfinfo printed no page count or size:\n${output}`);
  return { pages: Number(fields.Pages), widthPt: Number(size[1]), heightPt: Number(size[2]), paperName: size[3], fields };
}

export async function pdfInfo(bytes: Buffer): Promise<PdfInfo> {
  return withPdfFile(bytes, async (file) => parsePdfInfo((await run('pdfinfo', [file])).stdout));
}

/**
 * Page `page` drawn by `pdftoppm` at 96 dpi, so that one pixel of the picture is one CSS pixel of
 * the printed page.
 */
export async function renderPdfPage(bytes: Buffer, page = 1): Promise<DecodedImage> {
  return withPdfFile(bytes, async (file, dir) => {
    const prefix = path.join(dir, 'page');
    await run('pdftoppm', ['-png', '-r', '96', '-f', String(page), '-l', String(page), '-singlefile', file, prefix]);
    const png = await readFile(`${prefix}.png`);
    return decodedImage(PNG.sync.read(png), png);
  });
}

/** A `data:application/pdf;base64,...` URI's bytes; anything else fails loudly. */
export function pdfOfDataUri(image: unknown): Buffer {
  const match = typeof image === 'string' ? /^data:application\/pdf;base64,([A-Za-z0-9+/]+={0,2})$/.exec(image) : null;
  if (!match) throw new Error(`not a PDF data URI: ${String(image).slice(0, 40)}...`);
  return Buffer.from(match[1] as string, 'base64');
}

/** A supertest parser for application/pdf, which superagent does not buffer by itself as it does images. */
export function rawBytes(res: unknown, done: (err: Error | null, body: Buffer) => void): void {
  const stream = res as NodeJS.ReadableStream; // superagent hands its parsers the IncomingMessage
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('end', () => done(null, Buffer.concat(chunks)));
}

/** CSS pixels of a length in points, as the service reports a PDF's page: 1 pt = 4/3 px. */
export const cssPx = (points: number) => Math.round((points * 4) / 3);
