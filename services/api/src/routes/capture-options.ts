/**
 * The capture options beyond the spec (docs/capture-options.md): their schema, their 400 texts and
 * how they reach the renderer. Both variants spread these into their request schema, so each
 * option is validated the same way in both.
 */
import type { ErrorObject } from 'ajv';
import { CAPTURE_FORMATS, DEFAULT_IMAGE_FORMAT, LOSSY_FORMATS, type CaptureFormat } from '../../../renderer/src/capture/image-formats.ts';
import { MAX_PAGE_RANGES_LENGTH, MEDIA_TYPES, PAPER_NAMES, pdfOptionsProblems, pdfOptionsSchema, type PdfOptions } from '../../../renderer/src/capture/pdf.ts';
import { MAX_HIDE_SELECTORS, MAX_SELECTOR_LENGTH } from '../../../renderer/src/protocol.ts';
import { BLOCKED_RESOURCES, type CaptureRequest } from '../../../renderer/src/renderer.ts';
import {
  MAX_BLOCK_URLS,
  MAX_COOKIES,
  MAX_HEADER_VALUE_LENGTH,
  MAX_HEADERS,
  MAX_HTML_BYTES,
  MAX_INJECT_LENGTH,
  MAX_USER_AGENT_LENGTH,
  visitOptionsProblems,
  visitOptionsProperties,
} from '../../../renderer/src/capture/visit-options.ts';
import type { MessageRule } from '../validation.ts';
import {
  credentialsSchema,
  MAX_CREDENTIALS,
  MAX_FILL_VALUE_LENGTH,
  MAX_STEP_TIMEOUT_MS,
  MAX_STEPS,
  resolveCredentials,
  STEP_ACTIONS,
  STEP_SHAPES,
  stepIndexOf,
  stepsProblems,
  stepsSchema,
  type JourneyStep,
} from '../../../renderer/src/capture/journey-steps.ts';
import { checksSchema, reportRequestFor, type Checks } from '../monitors/checks.ts';

/** 30 days: the longest a cached result may be served. */
export const MAX_CACHE_TTL_SECONDS = 30 * 24 * 3600;

export interface CaptureOptionsBody {
  format?: CaptureFormat;
  pdf?: PdfOptions;
  imageQuality?: number;
  selector?: string;
  waitForSelector?: string;
  hideSelectors?: string[];
  darkMode?: boolean;
  reducedMotion?: boolean;
  cacheTtl?: number;
  html?: string;
  userAgent?: string;
  headers?: Record<string, string>;
  cookies?: CaptureRequest['cookies'];
  authorization?: CaptureRequest['authorization'];
  injectCss?: string;
  injectJs?: string;
  click?: string;
  blockResources?: CaptureRequest['blockResources'];
  blockUrls?: string[];
  timezone?: string;
  locale?: string;
  geolocation?: CaptureRequest['geolocation'];
  report?: ReportOption;
  steps?: JourneyStep[];
  /** Named secrets for fill steps' valueFrom; write-only. */
  credentials?: Record<string, string>;
}

/** `report: true`, or what else the report must hold: axe's audit, and checks to judge it by. */
export type ReportOption = boolean | { axe?: boolean; checks?: Checks };

const cssSelector = { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH } as const;

export const captureOptionsProperties = {
  format: { type: 'string', enum: [...CAPTURE_FORMATS], description: 'Image encoding, or pdf to print the page; png by default.' },
  pdf: pdfOptionsSchema,
  imageQuality: { type: 'integer', minimum: 1, maximum: 100, description: 'Encoder quality for jpeg and webp (default 80); not allowed with png.' },
  selector: { ...cssSelector, description: 'Capture only the first element matching this CSS selector. Not with fullPage.' },
  waitForSelector: { ...cssSelector, description: 'Wait until an element matching this CSS selector is visible, within the navigation timeout (408 otherwise).' },
  hideSelectors: { type: 'array', maxItems: MAX_HIDE_SELECTORS, items: cssSelector, description: 'Elements matching these CSS selectors are hidden before the screenshot.' },
  darkMode: { type: 'boolean', description: 'Emulate prefers-color-scheme: dark.' },
  reducedMotion: { type: 'boolean', description: 'Emulate prefers-reduced-motion: reduce.' },
  cacheTtl: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_CACHE_TTL_SECONDS,
    description: 'Seconds a stored result may answer this same request without rendering; 0 (the default) stores nothing.',
  },
  ...visitOptionsProperties,
  steps: stepsSchema,
  credentials: credentialsSchema,
  report: {
    anyOf: [
      { type: 'boolean' },
      { type: 'object', additionalProperties: false, properties: { axe: { type: 'boolean', description: 'Audit the page with axe-core (bounded in time).' }, checks: checksSchema } },
    ],
    description:
      'true: answer the page report of the same visit beside the image (status, console, failed requests, Web Vitals, weight, request timeline); ' +
      'an object adds axe\'s audit and checks judged against the report (report.checks.failing). JSON answers only; never from the result cache.',
  },
} as const;

/** The rules between fields. Their positions in allOf let the messages below tell them apart. */
export const captureOptionsRules = {
  allOf: [
    { if: { required: ['imageQuality'], properties: { imageQuality: true } }, then: { required: ['format'], properties: { format: { enum: [...LOSSY_FORMATS] } } } },
    // `type` keeps a body that is no object at all out of this rule: `required` alone holds for any non-object.
    { not: { type: 'object', required: ['fullPage', 'selector'], properties: { fullPage: { const: true }, selector: true } } },
    { if: { required: ['pdf'], properties: { pdf: true } }, then: { required: ['format'], properties: { format: { const: 'pdf' } } } },
    { not: { type: 'object', required: ['format', 'fullPage'], properties: { format: { const: 'pdf' }, fullPage: { const: true } } } },
    { not: { type: 'object', required: ['format', 'selector'], properties: { format: { const: 'pdf' }, selector: true } } },
    // A page comes from url or from html: one of them, never both.
    { anyOf: [{ required: ['url'], properties: { url: true } }, { required: ['html'], properties: { html: true } }] },
    { not: { type: 'object', required: ['url', 'html'], properties: { url: true, html: true } } },
    {
      not: {
        type: 'object',
        required: ['html'],
        properties: { html: true },
        anyOf: [
          { required: ['headers'], properties: { headers: true } },
          { required: ['cookies'], properties: { cookies: true } },
          { required: ['authorization'], properties: { authorization: true } },
        ],
      },
    },
    { not: { type: 'object', required: ['html', 'geolocation'], properties: { html: true, geolocation: true } } },
  ],
} as const;

const IMAGE_QUALITY_RULE = '#/allOf/0/';
const FULL_PAGE_SELECTOR_RULE = '#/allOf/1/';
const PDF_OPTIONS_RULE = '#/allOf/2/';
const PDF_FULL_PAGE_RULE = '#/allOf/3/';
const PDF_SELECTOR_RULE = '#/allOf/4/';
const URL_OR_HTML_RULE = '#/allOf/5/';
const URL_AND_HTML_RULE = '#/allOf/6/';
const HTML_CREDENTIALS_RULE = '#/allOf/7/';
const HTML_GEOLOCATION_RULE = '#/allOf/8/';

const PDF_LENGTH = /^\/pdf\/(width|height|margin\/(top|right|bottom|left))$/;

/** The texts of the `pdf` object's failures; its fields are named as pdf.field. */
const pdfMessages: MessageRule[] = [
  (e: ErrorObject) => (e.instancePath === '/pdf' && e.keyword === 'type' ? 'pdf must be an object of PDF options' : undefined),
  (e: ErrorObject) =>
    e.instancePath.startsWith('/pdf') && e.keyword === 'additionalProperties'
      ? `Unknown field: "${[...e.instancePath.slice(1).split('/'), String(e.params.additionalProperty)].join('.')}"`
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/pdf/paper' ? `pdf.paper must be one of ${PAPER_NAMES.join(', ')}` : undefined),
  (e: ErrorObject) => (e.instancePath === '/pdf' && e.keyword === 'dependentRequired' ? 'pdf.width and pdf.height go together: give both, or neither' : undefined),
  (e: ErrorObject) => (e.instancePath === '/pdf' && e.keyword === 'not' ? 'pdf.paper cannot be combined with pdf.width and pdf.height: name a paper or give its size' : undefined),
  (e: ErrorObject) =>
    PDF_LENGTH.test(e.instancePath) ? `${e.instancePath.slice(1).replaceAll('/', '.')} must be a length with a unit: px, in, cm or mm (e.g. "210mm")` : undefined,
  (e: ErrorObject) => (e.instancePath === '/pdf/margin' ? 'pdf.margin must be an object with top, right, bottom and left lengths' : undefined),
  (e: ErrorObject) =>
    e.instancePath === '/pdf/pageRanges'
      ? `pdf.pageRanges must be pages and ranges counted from 1, separated by commas, e.g. "1-3, 5, 8-" (at most ${MAX_PAGE_RANGES_LENGTH} characters)`
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/pdf/emulateMedia' ? `pdf.emulateMedia must be one of ${MEDIA_TYPES.join(', ')}` : undefined),
  (e: ErrorObject) => (e.instancePath === '/pdf/landscape' || e.instancePath === '/pdf/printBackground' ? `pdf.${e.instancePath.slice(5)} must be a boolean` : undefined),
];

/** The texts of the visit options' failures: they name the field and the rule, never a value (which may be a secret). */
const visitMessages: MessageRule[] = [
  (e: ErrorObject) => (e.instancePath === '/html' ? `html must be a non-empty HTML document of at most ${MAX_HTML_BYTES} bytes` : undefined),
  (e: ErrorObject) => (e.instancePath === '/userAgent' ? `userAgent must be 1 to ${MAX_USER_AGENT_LENGTH} characters without line breaks` : undefined),
  (e: ErrorObject) =>
    e.instancePath.startsWith('/headers')
      ? `headers must be an object of at most ${MAX_HEADERS} header names (HTTP tokens) to strings of at most ${MAX_HEADER_VALUE_LENGTH} characters without line breaks`
      : undefined,
  (e: ErrorObject) =>
    e.instancePath.startsWith('/cookies')
      ? `cookies must be a list of at most ${MAX_COOKIES} {"name", "value"} objects: names are HTTP tokens, values at most ${MAX_HEADER_VALUE_LENGTH} cookie characters (no spaces, quotes, commas, semicolons or backslashes)`
      : undefined,
  (e: ErrorObject) =>
    e.instancePath.startsWith('/authorization')
      ? 'authorization must be {"type": "basic", "username": ..., "password": ...} (no colon in the username) or {"type": "bearer", "token": ...} (a token68)'
      : undefined,
  (e: ErrorObject) =>
    e.instancePath === '/injectCss' || e.instancePath === '/injectJs' ? `${e.instancePath.slice(1)} must be a non-empty string of at most ${MAX_INJECT_LENGTH} characters` : undefined,
  (e: ErrorObject) => (e.instancePath.startsWith('/blockResources') ? `blockResources must be a list of distinct kinds among ${BLOCKED_RESOURCES.join(', ')}` : undefined),
  (e: ErrorObject) =>
    e.instancePath.startsWith('/blockUrls') ? `blockUrls must be a list of at most ${MAX_BLOCK_URLS} URL patterns of 1 to 1024 characters without spaces` : undefined,
  (e: ErrorObject) => (e.instancePath === '/timezone' ? 'timezone must be an IANA time zone, e.g. Europe/Paris' : undefined),
  (e: ErrorObject) => (e.instancePath === '/locale' ? 'locale must be a BCP 47 language tag, e.g. fr-FR' : undefined),
  (e: ErrorObject) =>
    e.instancePath.startsWith('/geolocation')
      ? 'geolocation must be {"latitude": -90 to 90, "longitude": -180 to 180} with an optional "accuracy" in metres (0 to 100000)'
      : undefined,
];

/** `.../properties/steps/items/allOf/<i>/`: the rule of STEP_ACTIONS[i], which says what that action takes. */
const STEP_RULE = /\/properties\/steps\/items\/allOf\/(\d+)\//;

/**
 * The texts of a journey's failures, for the steps and credentials of the object at `base` (a capture's
 * body: '', a monitor's page: '/pages/0'), named with `where` before them (pages[0].): the step's place
 * and what its action takes, never a value (a fill's is a secret).
 */
export function stepMessagesAt(base: string, where: string, credentialsPath = `${base}/credentials`): MessageRule[] {
  return [
    (e: ErrorObject) =>
      e.instancePath === `${base}/steps`
        ? `${where}steps must be a list of at most ${MAX_STEPS} steps, each an object whose "action" is one of ${STEP_ACTIONS.join(', ')}`
        : undefined,
    (e: ErrorObject) => {
      if (!e.instancePath.startsWith(`${base}/steps/`)) return undefined;
      const index = stepIndexOf(e.instancePath.slice(base.length));
      if (index === undefined) return undefined;
      const rule = STEP_RULE.exec(e.schemaPath);
      if (rule) return `${where}steps[${index}] must be ${STEP_SHAPES[STEP_ACTIONS[Number(rule[1])]!]}, with an optional "timeout"`;
      if (e.instancePath.endsWith('/timeout')) return `${where}steps[${index}].timeout must be an integer number of milliseconds from 1 to ${MAX_STEP_TIMEOUT_MS}`;
      return `${where}steps[${index}] must be an object whose "action" is one of ${STEP_ACTIONS.join(', ')}`;
    },
    (e: ErrorObject) =>
      e.instancePath.startsWith(credentialsPath)
        ? `${where}${credentialsPath.slice(base.length + 1).replaceAll('/', '.')} must be an object of at most ${MAX_CREDENTIALS} names (1 to 64 letters, digits, _ . or -) to strings of at most ${MAX_FILL_VALUE_LENGTH} characters`
        : undefined,
  ];
}

const stepMessages = stepMessagesAt('', '');

export const captureOptionsMessages: MessageRule[] = [
  ...stepMessages,
  (e: ErrorObject) => (e.schemaPath.startsWith(IMAGE_QUALITY_RULE) ? `imageQuality applies to ${LOSSY_FORMATS.join(' and ')} only: set format to one of them` : undefined),
  (e: ErrorObject) =>
    e.schemaPath.startsWith(FULL_PAGE_SELECTOR_RULE) ? 'fullPage and selector cannot be combined: selector captures one element, fullPage the whole page' : undefined,
  (e: ErrorObject) => (e.schemaPath.startsWith(PDF_OPTIONS_RULE) ? 'pdf options apply to format pdf only: set format to "pdf"' : undefined),
  (e: ErrorObject) =>
    e.schemaPath.startsWith(PDF_FULL_PAGE_RULE) ? 'fullPage does not apply to format pdf: a PDF holds the whole page, on as many pages as it needs' : undefined,
  (e: ErrorObject) =>
    e.schemaPath.startsWith(PDF_SELECTOR_RULE) ? 'selector does not apply to format pdf: a PDF prints the whole page (hideSelectors can leave parts out)' : undefined,
  (e: ErrorObject) => (e.schemaPath.startsWith(URL_OR_HTML_RULE) ? 'URL is required' : undefined),
  (e: ErrorObject) => (e.schemaPath.startsWith(URL_AND_HTML_RULE) ? 'url and html cannot be combined: give one' : undefined),
  (e: ErrorObject) =>
    e.schemaPath.startsWith(HTML_CREDENTIALS_RULE)
      ? "headers, cookies and authorization go only to the page's own origin, and an html document has none: capture its URL instead"
      : undefined,
  (e: ErrorObject) =>
    e.schemaPath.startsWith(HTML_GEOLOCATION_RULE)
      ? 'geolocation does not apply to html: an html document is not a secure context, and browsers give positions only to those'
      : undefined,
  ...visitMessages,
  (e: ErrorObject) => (e.instancePath === '/format' ? `format must be one of ${CAPTURE_FORMATS.join(', ')}` : undefined),
  ...pdfMessages,
  (e: ErrorObject) => (e.instancePath === '/imageQuality' ? 'imageQuality must be an integer from 1 to 100' : undefined),
  (e: ErrorObject) =>
    e.instancePath === '/selector' || e.instancePath === '/waitForSelector' || e.instancePath === '/click'
      ? `${e.instancePath.slice(1)} must be a non-empty CSS selector of at most ${MAX_SELECTOR_LENGTH} characters`
      : undefined,
  (e: ErrorObject) =>
    e.instancePath.startsWith('/hideSelectors')
      ? `hideSelectors must be a list of at most ${MAX_HIDE_SELECTORS} non-empty CSS selectors of at most ${MAX_SELECTOR_LENGTH} characters`
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/darkMode' || e.instancePath === '/reducedMotion' ? `${e.instancePath.slice(1)} must be a boolean` : undefined),
  (e: ErrorObject) =>
    e.instancePath === '/report'
      ? 'report must be true or false, or an object with axe (a boolean) and checks (see docs/capture-options.md, "Checks")'
      : undefined,
  (e: ErrorObject) => (e.instancePath === '/cacheTtl' ? `cacheTtl must be an integer number of seconds from 0 to ${MAX_CACHE_TTL_SECONDS} (30 days)` : undefined),
];

/** The checks a schema cannot make, run once the body has passed it (see compileValidator). */
export function captureOptionsProblems(body: CaptureOptionsBody): string[] {
  return [...(body.pdf ? pdfOptionsProblems(body.pdf) : []), ...visitOptionsProblems(body), ...stepsProblems(body.steps, body.credentials)];
}

/** The options the renderer acts on, copied only when given, so that a spec-only request is unchanged. */
export function captureOptionsOf(body: CaptureOptionsBody): Partial<CaptureRequest> {
  const options: Partial<CaptureRequest> = {};
  for (const name of RENDER_OPTIONS) {
    if (body[name] !== undefined) Object.assign(options, { [name]: body[name] });
  }
  if (body.report) options.report = typeof body.report === 'object' ? reportRequestFor(body.report.checks, body.report.axe) : {};
  // The credentials themselves go no further than this: the renderer gets each fill's value.
  if (body.steps) options.steps = resolveCredentials(body.steps, body.credentials);
  return options;
}

/** The checks a `report` option asks to judge the report by, if any. */
export function checksOf(body: CaptureOptionsBody): Checks | undefined {
  return typeof body.report === 'object' ? body.report.checks : undefined;
}

/** What an answer that is not JSON beside the image (a render link, an asynchronous capture) says to `report`. */
export function reportRefusal(where: string): string {
  return `report cannot be asked of ${where}: the report is answered in JSON beside the image, by POST /screenshot or POST /api/screenshot`;
}

/** A capture body's schema without `report`, for the captures whose answer cannot carry it; with the 400 text that says so. */
export function withoutReport<S extends { properties: Record<string, unknown> }>(schema: S, where: string): { schema: S; message: MessageRule } {
  const { report: _report, ...properties } = schema.properties;
  return {
    schema: { ...schema, properties },
    message: (e: ErrorObject) => (e.keyword === 'additionalProperties' && e.params.additionalProperty === 'report' ? reportRefusal(where) : undefined),
  };
}

const RENDER_OPTIONS = [
  'format',
  'pdf',
  'imageQuality',
  'selector',
  'waitForSelector',
  'hideSelectors',
  'darkMode',
  'reducedMotion',
  'html',
  'userAgent',
  'headers',
  'cookies',
  'authorization',
  'injectCss',
  'injectJs',
  'click',
  'blockResources',
  'blockUrls',
  'timezone',
  'locale',
  'geolocation',
] as const satisfies readonly (keyof CaptureRequest &
  keyof CaptureOptionsBody)[];

export function formatOf(request: CaptureRequest): CaptureFormat {
  return request.format ?? DEFAULT_IMAGE_FORMAT;
}
