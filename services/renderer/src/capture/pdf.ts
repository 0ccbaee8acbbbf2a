/**
 * `format: "pdf"`: the page printed by Chromium (Page.printToPDF) instead of a screenshot. Its
 * options, their schema (shared by the API's body and the renderer's wire format), their defaults,
 * the checks a schema cannot make (numbers across units, range order), the print itself, and the
 * first page's size read back from the PDF. docs/capture-options.md describes it for clients.
 */
import type { Page } from 'puppeteer-core';
import { BadRequest } from '../../../../lib/errors.ts';
import type { ImageSize } from './image-formats.ts';
import { phase } from './phase-spans.ts';

export const PAPER_SIZES = {
  A4: { width: '210mm', height: '297mm' },
  Letter: { width: '8.5in', height: '11in' },
  Legal: { width: '8.5in', height: '14in' },
} as const;
export type PaperName = keyof typeof PAPER_SIZES;
export const PAPER_NAMES = Object.keys(PAPER_SIZES) as PaperName[];
export const DEFAULT_PAPER: PaperName = 'A4';

export const MEDIA_TYPES = ['print', 'screen'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

const SIDES = ['top', 'right', 'bottom', 'left'] as const;
type Side = (typeof SIDES)[number];

/** What a client may give under `pdf`; every field is optional (defaults: resolvePdfOptions). */
export interface PdfOptions {
  paper?: PaperName;
  /** With `height`, instead of `paper`: a length with its unit, e.g. "100mm". */
  width?: string;
  height?: string;
  landscape?: boolean;
  margin?: Partial<Record<Side, string>>;
  printBackground?: boolean;
  /** One-based pages and ranges, e.g. "1-3, 5, 8-". Absent: every page. */
  pageRanges?: string;
  emulateMedia?: MediaType;
}

/** A length as CSS writes it, with one of the units Chromium's print takes: "210mm", "8.5in", "1.5cm", "600px". */
export const LENGTH_PATTERN = '^(0|[0-9]{1,5}(\\.[0-9]{1,4})?)(px|in|cm|mm)$';
/** "1", "2-4", "6-" (to the end), separated by commas; pages count from 1. */
const PAGE_RANGE = '[1-9][0-9]{0,5}(\\s*-\\s*([1-9][0-9]{0,5})?)?';
export const PAGE_RANGES_PATTERN = `^\\s*${PAGE_RANGE}(\\s*,\\s*${PAGE_RANGE})*\\s*$`;
export const MAX_PAGE_RANGES_LENGTH = 200;

const CSS_PX_PER_UNIT = { px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 } as const;
/** Paper sides Chromium is given: from a 1 in label to a 200 in (5 m) banner, in CSS px. */
export const MIN_PAPER_PX = 96;
export const MAX_PAPER_PX = 200 * 96;

const length = { type: 'string', pattern: LENGTH_PATTERN, maxLength: 16 } as const;

/** The `pdf` object's schema; its descriptions reach the OpenAPI document. */
export const pdfOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'PDF options; only with format "pdf". Lengths are strings with a unit: px, in, cm or mm.',
  properties: {
    paper: { type: 'string', enum: PAPER_NAMES, description: `Paper size (default ${DEFAULT_PAPER}); not with width and height.` },
    width: { ...length, description: 'Paper width, with height, instead of paper: e.g. "100mm".' },
    height: { ...length, description: 'Paper height, with width, instead of paper.' },
    landscape: { type: 'boolean', description: 'Turn the paper sideways (default false).' },
    margin: {
      type: 'object',
      additionalProperties: false,
      description: 'Page margins (default 0 on every side).',
      properties: Object.fromEntries(SIDES.map((side) => [side, length])) as Record<Side, typeof length>,
    },
    printBackground: { type: 'boolean', description: 'Print background colours and images (default true).' },
    pageRanges: {
      type: 'string',
      pattern: PAGE_RANGES_PATTERN,
      maxLength: MAX_PAGE_RANGES_LENGTH,
      description: 'Pages to keep, one-based, e.g. "1-3, 5, 8-" (default: every page).',
    },
    emulateMedia: { type: 'string', enum: [...MEDIA_TYPES], description: 'The CSS media type the page loads and prints with (default print).' },
  },
  // dependentRequired, not draft-07's `dependencies`: OpenAPI 3.1's dialect (JSON Schema 2020-12) has only this one.
  dependentRequired: { width: ['height'], height: ['width'] },
  not: { type: 'object', required: ['paper', 'width'], properties: { paper: true, width: true } },
} as const;

/** Every option with its default applied, lengths in CSS px: what is printed, and what the cache key holds. */
export interface ResolvedPdfOptions {
  /** The paper as printed: landscape already turned. */
  widthPx: number;
  heightPx: number;
  landscape: boolean;
  margin: Record<Side, number>;
  printBackground: boolean;
  /** Whitespace removed; empty: every page. */
  pageRanges: string;
  emulateMedia: MediaType;
}

export function cssPixels(value: string): number {
  const match = /^([0-9.]+)(px|in|cm|mm)$/.exec(value);
  if (!match) throw new BadRequest(`Not a length: ${JSON.stringify(value)}`);
  return Number(match[1]) * CSS_PX_PER_UNIT[match[2] as keyof typeof CSS_PX_PER_UNIT];
}

export function resolvePdfOptions(pdf: PdfOptions = {}): ResolvedPdfOptions {
  const paper = pdf.width !== undefined && pdf.height !== undefined ? { width: pdf.width, height: pdf.height } : PAPER_SIZES[pdf.paper ?? DEFAULT_PAPER];
  const [width, height] = [cssPixels(paper.width), cssPixels(paper.height)];
  const landscape = pdf.landscape ?? false;
  return {
    widthPx: landscape ? height : width,
    heightPx: landscape ? width : height,
    landscape,
    margin: Object.fromEntries(SIDES.map((side) => [side, cssPixels(pdf.margin?.[side] ?? '0px')])) as Record<Side, number>,
    printBackground: pdf.printBackground ?? true,
    pageRanges: (pdf.pageRanges ?? '').replace(/\s+/g, ''),
    emulateMedia: pdf.emulateMedia ?? 'print',
  };
}

/**
 * What the schema cannot say, as 400 texts (empty when all is well): a range that runs backwards,
 * a paper side out of bounds, margins that leave nothing to print on.
 */
export function pdfOptionsProblems(pdf: PdfOptions): string[] {
  const problems: string[] = [];
  for (const [, from, to] of (pdf.pageRanges ?? '').replace(/\s+/g, '').matchAll(/(\d+)-(\d+)/g)) {
    if (Number(from) > Number(to)) problems.push(`pdf.pageRanges: the range ${from}-${to} runs backwards`);
  }
  const resolved = resolvePdfOptions(pdf);
  for (const [name, px] of [['width', resolved.widthPx], ['height', resolved.heightPx]] as const) {
    if (px < MIN_PAPER_PX || px > MAX_PAPER_PX) problems.push(`pdf.${name} must be from 1in to 200in (96px to ${MAX_PAPER_PX}px)`);
  }
  const { top, right, bottom, left } = resolved.margin;
  if (left + right >= resolved.widthPx || top + bottom >= resolved.heightPx) {
    problems.push('pdf.margin leaves no room on the paper: the margins of opposite sides must add up to less than its width and height');
  }
  return problems;
}

/** Chromium's words for a range past the document's end, which only the printed document can tell. */
const RANGE_PAST_END = /Page range exceeds page count/i;

/**
 * Prints the page. No timeout of its own: the capture's deadline closes the page, which ends the print.
 *
 * The page loads and settles as on a screen, as in a browser, and Chromium prints it with print
 * media. `screen` is set right before the print, on a DevTools session of its own: puppeteer's
 * emulateMediaType would clear darkMode's and reducedMotion's media features (one CDP command sets
 * both, and each puppeteer call sends half of it), and a type set before navigation does not
 * survive the new document when removeAds' own session is attached (each session's emulation is
 * restored in turn, and the last one's empty type wins).
 */
/** renderer.pdf when tracing is on (phase-spans.ts). */
export const printPdf = phase('renderer.pdf', untracedPrintPdf);

async function untracedPrintPdf(page: Page, pdf: PdfOptions | undefined, maxPages: number): Promise<Buffer> {
  const options = resolvePdfOptions(pdf);
  const px = (value: number) => `${value}px`;
  const session = options.emulateMedia === 'screen' ? await page.createCDPSession() : undefined;
  try {
    await session?.send('Emulation.setEmulatedMedia', { media: 'screen' });
    const bytes = await page.pdf({
      width: px(options.widthPx),
      height: px(options.heightPx),
      margin: { top: px(options.margin.top), right: px(options.margin.right), bottom: px(options.margin.bottom), left: px(options.margin.left) },
      printBackground: options.printBackground,
      pageRanges: options.pageRanges,
      timeout: 0,
    });
    // The capture's deadline bounds the printing; this bounds what is answered and stored.
    const pages = countPdfPages(bytes);
    if (pages > maxPages) {
      throw new BadRequest(`The PDF has ${pages} pages, more than the ${maxPages} a PDF may have here (PDF_MAX_PAGES): select fewer with pdf.pageRanges, or print on larger paper`);
    }
    return Buffer.from(bytes);
  } catch (err) {
    if (RANGE_PAST_END.test(String((err as Error)?.message))) {
      throw new BadRequest(`pdf.pageRanges "${pdf?.pageRanges}" selects no page of the document: it has fewer pages`);
    }
    throw err;
  } finally {
    void session?.detach().catch(() => undefined);
  }
}

/** The page objects of a PDF as Chromium writes it (no object streams): `/Type /Page`, not `/Pages`. */
export function countPdfPages(bytes: Uint8Array): number {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return text.match(/\/Type\s*\/Page\b(?!s)/g)?.length ?? 0;
}

/** 1 pt = 1/72 in = 4/3 CSS px. */
const CSS_PX_PER_POINT = 96 / 72;

/**
 * The first page's size in CSS pixels, read from the PDF itself: the MediaBox of its first page
 * object. Chromium prints every page of a document on the same paper, so that is the size of all.
 */
export function readPdfPageSize(bytes: Uint8Array): ImageSize {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!text.startsWith('%PDF-')) throw new Error('not a PDF');
  for (const object of text.matchAll(/\bobj\s*<<([\s\S]*?)(?:\bstream\b|\bendobj\b)/g)) {
    const dictionary = object[1] as string;
    if (!/\/Type\s*\/Page\b(?!s)/.test(dictionary)) continue;
    const box = /\/MediaBox\s*\[\s*(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s*\]/.exec(dictionary);
    if (!box) break;
    const [x0, y0, x1, y1] = box.slice(1).map(Number) as [number, number, number, number];
    return { width: Math.round(Math.abs(x1 - x0) * CSS_PX_PER_POINT), height: Math.round(Math.abs(y1 - y0) * CSS_PX_PER_POINT) };
  }
  throw new Error('not a PDF: no page with a MediaBox');
}
