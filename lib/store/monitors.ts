/**
 * Page monitors: the part of the store port that the API's monitor scheduler and management routes
 * use (services/api/src/monitors/). A monitor is an account's list of pages captured on a schedule
 * and compared with a baseline; a run records each page's outcome. Pictures live outside the store
 * (services/api/src/monitors/images.ts), named here by their image ids.
 *
 * A monitor's name is unique within its account and scope: its Kubernetes namespace when the
 * operator owns it, the account itself otherwise, which is also how metrics label it.
 */
import type { ManagedBy, ManagedByRef } from './store.ts';
// Types only (erased at run time): a run records the renderer's page report and the checks' verdict as they are.
import type { PageReport } from '../../services/renderer/src/report/page-report.ts';
import type { Checks, Verdict } from '../../services/api/src/monitors/checks.ts';
import type { JourneyStep } from '../../services/renderer/src/capture/journey-steps.ts';
import type { StepReport } from '../../services/renderer/src/capture/journey.ts';

/** A rectangle in CSS pixels of the picture. */
export interface MonitorRegion {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface MonitorPage {
  name: string;
  url: string;
  quality?: 'standard' | 'high' | 'retina' | 'mobile';
  fullPage?: boolean;
  removeAds?: boolean;
  wait?: number;
  waitForSelector?: string;
  selector?: string;
  hideSelectors?: string[];
  darkMode?: boolean;
  reducedMotion?: boolean;
  ignoreRegions?: MonitorRegion[];
  // The visit options (docs/capture-options.md) a page may have; not html, which has no URL to watch.
  userAgent?: string;
  locale?: string;
  timezone?: string;
  geolocation?: { latitude: number; longitude: number; accuracy?: number };
  click?: string;
  injectCss?: string;
  injectJs?: string;
  blockResources?: ('images' | 'fonts' | 'media' | 'scripts')[];
  blockUrls?: string[];
  /**
   * A journey done before the picture (docs/monitors.md, "Journeys"): a fill's `valueFrom` names one
   * of the page's credentials' `values`; a clear `value` is for what is no secret (a search term).
   */
  steps?: JourneyStep[];
  /** What the page must do to work (services/api/src/monitors/checks.ts); axe runs only when it has maxViolations. */
  checks?: Checks;
  /** Write-only: never in a monitor's answer (which says hasCredentials), a run, a log or a metric. */
  credentials?: MonitorPageCredentials;
}

/** A page behind a login: what is sent to its URL's origin only. A PageMonitor refers to a Secret for them. */
export interface MonitorPageCredentials {
  headers?: Record<string, string>;
  cookies?: { name: string; value: string }[];
  authorization?: { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string };
  /** Named values the page's fill steps take by `valueFrom` (a password): typed into the page, never shown. */
  values?: Record<string, string>;
}

/** What a run keeps of a page's journey: each step's report (never a value typed), and where it stopped. */
export interface MonitorJourneyResult {
  steps: StepReport[];
  /** The index (from 0) of the step that failed; absent when every step ran. */
  failedStep?: number;
  /** The picture of the page when that step failed (a monitor image), if one could be taken. */
  failureImageId?: string;
}

export interface MonitorCompare {
  /** The share of pixels (0..1) that may differ before a page counts as changed. */
  threshold: number;
  baseline: 'accepted' | 'previous';
  /** pixelmatch's per-pixel threshold, 0..1. */
  pixelTolerance: number;
}

export interface MonitorSpec {
  name: string;
  /** The site the captures count against and whose allowed domains apply; null: full access. */
  siteId: string | null;
  schedule: string;
  /** IANA time zone the schedule is read in. */
  timeZone: string;
  suspend: boolean;
  historyLimit: number;
  compare: MonitorCompare;
  pages: MonitorPage[];
}

export interface Monitor extends MonitorSpec {
  id: string;
  accountId: string;
  managedBy: ManagedBy | null;
  /** Page name → the image id of its accepted (or, with baseline: previous, latest) picture. */
  baselines: Record<string, string>;
  /** Raised by every change to the spec; a queued run of an older generation is skipped. */
  generation: number;
  /** When the schedule last (re)started: created, resumed, or its schedule or time zone changed. */
  scheduleStartedAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export type NewMonitor = MonitorSpec & { accountId: string; managedBy?: ManagedBy | null };
export type MonitorPatch = Partial<Omit<MonitorSpec, 'name'>> & { name?: string };

export const PAGE_OUTCOMES = ['unchanged', 'changed', 'baseline', 'failed'] as const;
/** Same as the baseline, changed beyond the threshold, the first picture (now the baseline), or no picture. */
export type PageOutcome = (typeof PAGE_OUTCOMES)[number];

export interface MonitorPageResult {
  page: string;
  outcome: PageOutcome;
  /** Null when the page failed or had no baseline yet. */
  diffRatio: number | null;
  regions: MonitorRegion[];
  captureImageId: string | null;
  diffImageId: string | null;
  baselineImageId: string | null;
  error: string | null;
  /** What the visit measured (issue #40); null when the capture failed, and in runs recorded before reports. */
  report: PageReport | null;
  /** The page's checks judged against the report; null when it declares none, the capture failed, or in older runs. */
  verdict: Verdict | null;
  /** The page's journey (steps), null when it has none, and in runs recorded before journeys. */
  journey: MonitorJourneyResult | null;
}

export interface MonitorRun {
  id: string;
  monitorId: string;
  trigger: 'schedule' | 'manual';
  /** The schedule's time for this run (or when it was asked for). */
  scheduledAt: Date;
  startedAt: Date;
  finishedAt: Date;
  pages: MonitorPageResult[];
}

/** `id`, when given (a run's job names it), makes recording idempotent. */
export type NewMonitorRun = Omit<MonitorRun, 'id'> & { id?: string };

export interface MonitorStore {
  /** Conflict when the account already has a monitor of that name in that scope, or another monitor has that managedBy. */
  createMonitor(input: NewMonitor): Promise<Monitor>;
  getMonitor(id: string): Promise<Monitor | null>;
  listMonitors(accountId: string): Promise<Monitor[]>;
  /** Every account's: what each API replica's scheduler and metrics read. */
  listAllMonitors(): Promise<Monitor[]>;
  /** The monitor a Kubernetes object owns (matched on kind/namespace/name, across accounts), by index. */
  findMonitorByManagedBy(ref: ManagedByRef): Promise<Monitor | null>;
  /** Raises the generation; a new schedule, time zone or a resume restarts the schedule. Baselines of pages no longer listed go. */
  updateMonitor(id: string, patch: MonitorPatch): Promise<Monitor | null>;
  /** Sets (or with null removes) a page's baseline image, without touching the generation. */
  setMonitorBaseline(id: string, page: string, imageId: string | null): Promise<Monitor | null>;
  /** Deletes the monitor and its runs. False when there was no such monitor. */
  deleteMonitor(id: string): Promise<boolean>;
  /**
   * With an id, a second record under the same id changes nothing and answers the first: a run
   * retried after its replica lost the lease is recorded once.
   */
  recordMonitorRun(run: NewMonitorRun): Promise<MonitorRun>;
  /** Newest first. */
  listMonitorRuns(monitorId: string, limit: number): Promise<MonitorRun[]>;
  getMonitorRun(id: string): Promise<MonitorRun | null>;
  deleteMonitorRuns(ids: string[]): Promise<void>;
}

/**
 * A stored run's pages as the port answers them: runs recorded before reports or journeys existed
 * (no such fields in the row or document) read as report, verdict and journey null, on both backends.
 */
export function pageResultsOf(
  pages: Array<Omit<MonitorPageResult, 'report' | 'verdict' | 'journey'> & Partial<Pick<MonitorPageResult, 'report' | 'verdict' | 'journey'>>>,
): MonitorPageResult[] {
  return pages.map((page) => ({ ...page, report: page.report ?? null, verdict: page.verdict ?? null, journey: page.journey ?? null }));
}

/** The scope a monitor's name is unique in, and the namespace its metrics carry. */
export function monitorScope(monitor: Pick<Monitor, 'accountId' | 'managedBy'>): string {
  return monitor.managedBy?.namespace ?? monitor.accountId;
}
