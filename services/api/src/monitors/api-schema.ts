/**
 * The management API's monitor bodies and answers: the same fields, bounds and defaults as the
 * PageMonitor CRD (crds/pagemonitor.yaml), so that a monitor made either way behaves the same.
 */
import { MAX_HIDE_SELECTORS, MAX_SELECTOR_LENGTH } from '../../../renderer/src/protocol.ts';
import { PROFILE_NAMES } from '../../../renderer/src/capture/profiles.ts';
import { managedBySchema } from '../routes/api/schemas.ts';
import { visitOptionsProperties } from '../../../renderer/src/capture/visit-options.ts';
import { credentialsSchema, FAILURE_REASONS, STEP_ACTIONS, stepsSchema } from '../../../renderer/src/capture/journey-steps.ts';

const { html: _html, headers, cookies, authorization, ...pageVisitProperties } = visitOptionsProperties;

/** A page's credentials: write-only, as in a capture; a PageMonitor gets them from a Secret it names. */
export const pageCredentialsSchema = {
  type: 'object',
  writeOnly: true,
  additionalProperties: false,
  properties: {
    headers,
    cookies,
    authorization,
    values: { ...credentialsSchema, description: 'Named secrets that the page\'s fill steps take with "valueFrom" (a password): typed into the page, never logged, shown or kept in a run.' },
  },
  description:
    "Sent to the page's URL's own origin only (values: typed by the page's steps). Write-only: answers say hasCredentials instead. An update (PATCH) of pages keeps a page's credentials while its name and URL origin stay; {} removes them.",
} as const;
import { MAX_URL_LENGTH, MAX_WAIT_MS, MIN_WAIT_MS } from '../routes/screenshot.ts';
import { pageReportSchema } from '../../../renderer/src/report/page-report.ts';
import { checksSchema, verdictSchema } from './checks.ts';

/** The documented limit of pages per monitor (docs/monitors.md). */
export const MAX_MONITOR_PAGES = 20;
export const MAX_IGNORE_REGIONS = 20;
export const DEFAULT_THRESHOLD = 0.001;
export const DEFAULT_PIXEL_TOLERANCE = 0.1;
export const DEFAULT_HISTORY_LIMIT = 10;

const dnsLabel = { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' } as const;
const selector = { type: 'string', minLength: 1, maxLength: MAX_SELECTOR_LENGTH } as const;
const pixels = (minimum: number) => ({ type: 'integer', minimum, maximum: 100_000 }) as const;

export const regionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['left', 'top', 'width', 'height'],
  properties: { left: pixels(0), top: pixels(0), width: pixels(1), height: pixels(1) },
} as const;

export const pageSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url'],
  properties: {
    name: { ...dnsLabel, description: "The page's name in runs, metrics and alerts (a DNS label), unique in the monitor." },
    url: { type: 'string', format: 'http-url', maxLength: MAX_URL_LENGTH },
    quality: { type: 'string', enum: [...PROFILE_NAMES] },
    fullPage: { type: 'boolean' },
    removeAds: { type: 'boolean' },
    wait: { type: 'integer', minimum: MIN_WAIT_MS, maximum: MAX_WAIT_MS },
    waitForSelector: selector,
    selector,
    hideSelectors: { type: 'array', maxItems: MAX_HIDE_SELECTORS, items: selector },
    darkMode: { type: 'boolean' },
    reducedMotion: { type: 'boolean' },
    ignoreRegions: { type: 'array', maxItems: MAX_IGNORE_REGIONS, items: regionSchema, description: 'Rectangles in CSS pixels of the picture, left out of the comparison.' },
    ...pageVisitProperties,
    steps: {
      ...stepsSchema,
      description: `${stepsSchema.description} On a monitor page, a fill takes a secret with "valueFrom", a name among credentials.values; a clear "value" is for what is no secret (docs/monitors.md, "Journeys").`,
    },
    credentials: pageCredentialsSchema,
    checks: {
      ...checksSchema,
      description: `${checksSchema.description} Every run records the page's report; axe-core audits the page only when maxViolations is declared (docs/monitors.md, "Checks").`,
    },
  },
} as const;

/** A page as answers show it: its credentials replaced by whether it has any. */
const pageViewSchema = {
  ...pageSchema,
  required: [...pageSchema.required, 'hasCredentials'],
  properties: { ...pageSchema.properties, hasCredentials: { type: 'boolean', description: 'Whether the page has credentials; they are never shown.' } },
} as const;

const compareSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    threshold: { type: 'number', minimum: 0, maximum: 1, description: `The share of pixels that may differ before a page counts as changed (default ${DEFAULT_THRESHOLD}).` },
    baseline: { type: 'string', enum: ['accepted', 'previous'], description: 'accepted (default): the picture accepted as baseline; previous: the last run.' },
    pixelTolerance: { type: 'number', minimum: 0, maximum: 1, description: `How different two pixels must be to count (default ${DEFAULT_PIXEL_TOLERANCE}).` },
  },
} as const;

const specProperties = {
  name: { ...dnsLabel, description: 'Unique in the account; the metrics name the monitor by it.' },
  siteId: { type: 'string', minLength: 1, maxLength: 64, description: "A site of the account: only its allowed domains may be captured. Without one the monitor has the account's full access." },
  schedule: { type: 'string', minLength: 1, maxLength: 200, description: 'Five-field cron (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly.' },
  timeZone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone the schedule is read in; UTC by default.' },
  suspend: { type: 'boolean', description: 'No scheduled run starts while true.' },
  historyLimit: { type: 'integer', minimum: 1, maximum: 100, description: `Runs kept, with their pictures (default ${DEFAULT_HISTORY_LIMIT}).` },
  compare: compareSchema,
  pages: { type: 'array', minItems: 1, maxItems: MAX_MONITOR_PAGES, items: pageSchema, description: `At most ${MAX_MONITOR_PAGES} pages.` },
} as const;

export const createMonitorSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'schedule', 'pages'],
  properties: specProperties,
} as const;

export const updateMonitorSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...specProperties, siteId: { ...specProperties.siteId, type: ['string', 'null'] } },
} as const;

const timestamp = { type: 'string', format: 'date-time' };

export const monitorViewSchema = {
  type: 'object',
  required: ['id', 'name', 'siteId', 'schedule', 'timeZone', 'suspend', 'historyLimit', 'compare', 'pages', 'baselines', 'managedBy', 'nextRunAt', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', examples: ['mon_3f9c0a6be21d4478a1c2d3e4'] },
    ...specProperties,
    pages: { ...specProperties.pages, items: pageViewSchema },
    siteId: { type: ['string', 'null'] },
    baselines: { type: 'object', additionalProperties: { type: 'string' }, description: "Page name → the id of its baseline picture (GET .../images/{imageId})." },
    managedBy: managedBySchema,
    nextRunAt: { type: ['string', 'null'], format: 'date-time', description: 'Null while suspended.' },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

/** One step of a journey as a run reports it (the renderer's StepReport, capture/journey.ts): what it acted on, never a value typed. */
const stepReportSchema = {
  type: 'object',
  required: ['action', 'status'],
  properties: {
    action: { type: 'string', enum: [...STEP_ACTIONS] },
    selector: { type: 'string' },
    url: { type: 'string' },
    key: { type: 'string' },
    name: { type: 'string' },
    state: { type: 'string', enum: ['visible', 'hidden'] },
    status: { type: 'string', enum: ['ok', 'failed', 'skipped'], description: 'skipped: after the step that failed.' },
    durationMs: { type: 'integer', description: 'Only for steps that ran.' },
    reason: { type: 'string', enum: [...FAILURE_REASONS], description: 'Only for the step that failed.' },
  },
} as const;

export const runViewSchema = {
  type: 'object',
  required: ['id', 'trigger', 'scheduledAt', 'startedAt', 'finishedAt', 'pages'],
  properties: {
    id: { type: 'string' },
    trigger: { type: 'string', enum: ['schedule', 'manual'] },
    scheduledAt: timestamp,
    startedAt: timestamp,
    finishedAt: timestamp,
    pages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['page', 'outcome', 'diffRatio', 'regions', 'captureImageId', 'diffImageId', 'baselineImageId', 'error', 'report', 'verdict', 'journey'],
        properties: {
          page: { type: 'string' },
          outcome: { type: 'string', enum: ['unchanged', 'changed', 'baseline', 'failed'] },
          diffRatio: { type: ['number', 'null'] },
          regions: { type: 'array', items: regionSchema },
          captureImageId: { type: ['string', 'null'] },
          diffImageId: { type: ['string', 'null'] },
          baselineImageId: { type: ['string', 'null'] },
          error: { type: ['string', 'null'] },
          report: {
            description: 'What the visit measured (docs/monitors.md, "Checks"); null when the capture failed, and in runs recorded before reports existed.',
            oneOf: [{ type: 'null' }, pageReportSchema],
          },
          verdict: {
            description:
              "The page's checks judged against the report; null when the page declares no checks or the capture failed. Independent of outcome: a changed page and a failing page are different things. " +
              'A journey that stopped at a step fails the page: its verdict holds one failure named after the step (steps[i]).',
            oneOf: [{ type: 'null' }, verdictSchema],
          },
          journey: {
            description: "The page's journey: each step's status, durationMs and (for the one that failed) reason, never a value typed; null for a page without steps.",
            oneOf: [
              { type: 'null' },
              {
                type: 'object',
                required: ['steps'],
                properties: {
                  steps: { type: 'array', items: stepReportSchema },
                  failedStep: { type: 'integer', minimum: 0, description: 'The index of the step that failed, from 0.' },
                  failureImageId: { type: 'string', description: 'The page when that step failed (GET .../images/{imageId}).' },
                },
              },
            ],
          },
        },
      },
    },
  },
} as const;

/**
 * A run as the list of runs answers it: each page's verdict without its report, which only the run's
 * own answer (GET .../runs/{runId}) carries. A report can hold hundreds of requests and messages;
 * historyLimit runs of 20 pages each would make one list answer megabytes.
 */
const { report: _report, ...summaryPageProperties } = runViewSchema.properties.pages.items.properties;
export const runSummarySchema = {
  ...runViewSchema,
  properties: {
    ...runViewSchema.properties,
    pages: {
      type: 'array',
      items: {
        type: 'object',
        required: runViewSchema.properties.pages.items.required.filter((field) => field !== 'report'),
        properties: summaryPageProperties,
      },
    },
  },
} as const;

export const acceptBaselineSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['runId', 'page'],
  properties: { runId: { type: 'string', minLength: 1, maxLength: 64 }, page: dnsLabel },
} as const;
