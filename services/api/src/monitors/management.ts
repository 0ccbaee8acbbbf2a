/**
 * An account's monitor operations, shared by the management API's routes (and the dashboard):
 * validation beyond the schema (schedule, time zone, site, page names, URLs the site allows), the
 * operator's ownership (409 with the kubectl command for edits), and the views the API answers.
 */
import type { MessageRule } from '../validation.ts';
import { compileValidator } from '../validation.ts';
import { hostMatches, hostOfUrl } from '../../../../lib/domains.ts';
import { BadRequest, Conflict, NotFound } from '../../../../lib/errors.ts';
import { managedConflict } from '../../../../lib/management.ts';
import type { Monitor, MonitorPage, MonitorRun, MonitorSpec } from '../../../../lib/store/monitors.ts';
import type { Site, Store } from '../../../../lib/store/store.ts';
import {
  acceptBaselineSchema,
  createMonitorSchema,
  DEFAULT_HISTORY_LIMIT,
  DEFAULT_PIXEL_TOLERANCE,
  DEFAULT_THRESHOLD,
  MAX_MONITOR_PAGES,
  updateMonitorSchema,
} from './api-schema.ts';
import { checkSchedule, nextRunAfter } from './schedule.ts';
import { visitOptionsProblems } from '../../../renderer/src/capture/visit-options.ts';
import { restrictedOptionRefusal } from '../../../renderer/src/guard/domain-scope.ts';
import type { MonitorService } from './service.ts';
import { stepsProblems } from '../../../renderer/src/capture/journey-steps.ts';
import { stepMessagesAt } from '../routes/capture-options.ts';

type CreateBody = Partial<Omit<MonitorSpec, 'compare' | 'siteId'>> & { name: string; schedule: string; pages: MonitorPage[]; siteId?: string; compare?: Partial<MonitorSpec['compare']> };
type UpdateBody = Partial<Omit<MonitorSpec, 'compare'>> & { compare?: Partial<MonitorSpec['compare']> };

/** What a check that takes more than one form must be: one message for the failure of every form. */
const CHECK_FORMS: Record<string, string> = {
  maxConsoleErrors: 'a count from 0 to 1000000, or {max, ignore}',
  maxFailedRequests: 'a count from 0 to 1000000, or {max, ignore, byType}',
  webVitals: 'a number of at least 0 in its unit (ms; CLS a score), or good or needs-improvement',
  text: 'an object with contains or notContains, and optionally a selector',
};

/** A check's failures, named as pages[i].checks.field (docs/monitors.md, "Checks"). */
const checkMessage: MessageRule = (e) => {
  const match = /^\/pages\/(\d+)\/checks(\/.*)?$/.exec(e.instancePath);
  if (!match) return undefined;
  const where = `pages[${match[1]}].checks${(match[2] ?? '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')}`;
  if (e.keyword === 'additionalProperties') return `${where} has an unknown field: "${String(e.params.additionalProperty)}"`;
  const form = CHECK_FORMS[(match[2] ?? '').split('/')[1] ?? ''];
  if (form && (e.keyword === 'anyOf' || e.schemaPath.includes('/anyOf/'))) return `${where} must be ${form}`;
  return `${where} ${e.message ?? 'is invalid'}`;
};

/** A page's steps and its credentials.values, in the words of a capture's (capture-options.ts), named as pages[i].steps[j]. */
const pageStepMessage: MessageRule = (e) => {
  const match = /^\/pages\/(\d+)\/(steps|credentials\/values)(\/|$)/.exec(e.instancePath);
  if (!match) return undefined;
  const base = `/pages/${match[1]}`;
  for (const rule of stepMessagesAt(base, `pages[${match[1]}].`, `${base}/credentials/values`)) {
    const message = rule(e);
    if (message) return message;
  }
  return undefined;
};

const messages: MessageRule[] = [
  checkMessage,
  pageStepMessage,
  (e) => (e.instancePath === '/pages' && e.keyword === 'maxItems' ? `A monitor has at most ${MAX_MONITOR_PAGES} pages` : undefined),
  (e) => (e.keyword === 'additionalProperties' && /^\/pages\/\d+$/.test(e.instancePath) ? `${e.instancePath.slice(1).replace('/', '[')}] has an unknown option: "${String(e.params.additionalProperty)}"` : undefined),
  (e) => (e.keyword === 'minProperties' ? 'Give at least one field to change' : undefined),
];
const validateCreate = compileValidator<CreateBody>(createMonitorSchema, messages);
const validateUpdate = compileValidator<UpdateBody>(updateMonitorSchema, messages);
const validateAccept = compileValidator<{ runId: string; page: string }>(acceptBaselineSchema, []);

export interface MonitorView extends Omit<MonitorSpec, 'pages'> {
  pages: MonitorPageView[];
  id: string;
  baselines: Record<string, string>;
  managedBy: Monitor['managedBy'];
  nextRunAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * An update's pages, where a page given without `credentials` keeps those of the page of the same
 * name and the same URL origin (they are write-only: a client, or the dashboard's form, cannot send
 * back what it was never shown), and `"credentials": {}` removes them.
 */
function keepingCredentials(pages: MonitorPage[], current: MonitorPage[]): MonitorPage[] {
  const originOf = (url: string) => URL.parse(url)?.origin;
  return pages.map(({ credentials, ...page }) => {
    if (credentials !== undefined) return Object.keys(credentials).length > 0 ? { ...page, credentials } : page;
    const kept = current.find((candidate) => candidate.name === page.name && originOf(candidate.url) === originOf(page.url))?.credentials;
    return kept ? { ...page, credentials: kept } : page;
  });
}

/** A page without its credentials, which are write-only: only whether it has any. */
function pageView({ credentials, ...page }: MonitorPage): MonitorPageView {
  return { ...page, hasCredentials: credentials !== undefined };
}

export type MonitorPageView = Omit<MonitorPage, 'credentials'> & { hasCredentials: boolean };

export function monitorView(monitor: Monitor, now = new Date()): MonitorView {
  const { id, name, siteId, schedule, timeZone, suspend, historyLimit, compare, pages, baselines, managedBy } = monitor;
  const next = suspend ? null : nextRunAfter(schedule, timeZone, new Date(Math.max(now.getTime(), monitor.scheduleStartedAt.getTime())));
  return {
    id,
    name,
    siteId,
    schedule,
    timeZone,
    suspend,
    historyLimit,
    compare,
    pages: pages.map(pageView),
    baselines,
    managedBy,
    nextRunAt: next?.toISOString() ?? null,
    createdAt: monitor.createdAt.toISOString(),
    updatedAt: monitor.updatedAt.toISOString(),
  };
}

/** A run with every page's report and verdict (GET .../runs/{runId}). */
export function runView(run: MonitorRun) {
  const { id, trigger, pages } = run;
  return { id, trigger, scheduledAt: run.scheduledAt.toISOString(), startedAt: run.startedAt.toISOString(), finishedAt: run.finishedAt.toISOString(), pages };
}

/** A run without its pages' reports, which can be large: the list of runs, and what the operator mirrors (api-schema.ts, runSummarySchema). */
export function runSummaryView(run: MonitorRun) {
  return withoutReports(runView(run));
}

export function withoutReports(view: ReturnType<typeof runView>) {
  return { ...view, pages: view.pages.map(({ report: _report, ...page }) => page) };
}

/** A create body with every default filled in. */
function specWithDefaults(input: CreateBody): MonitorSpec {
  return {
    name: input.name,
    siteId: input.siteId ?? null,
    schedule: input.schedule.trim(),
    timeZone: input.timeZone ?? 'UTC',
    suspend: input.suspend ?? false,
    historyLimit: input.historyLimit ?? DEFAULT_HISTORY_LIMIT,
    compare: { threshold: DEFAULT_THRESHOLD, baseline: 'accepted', pixelTolerance: DEFAULT_PIXEL_TOLERANCE, ...input.compare },
    pages: input.pages,
  };
}

/** Everything about a spec that the schema cannot check: schedule, time zone, site, pages. */
async function checkSpec(store: Store, accountId: string, spec: MonitorSpec): Promise<void> {
  checkSchedule(spec.schedule, spec.timeZone);
  let site: Site | null = null;
  if (spec.siteId !== null) {
    site = await store.getSite(spec.siteId);
    if (!site || site.accountId !== accountId) throw new BadRequest(`siteId: site ${spec.siteId} not found in this account`);
  }
  checkPages(spec.pages, site);
}

/** Rules the schema cannot state: unique page names, fullPage without selector, URLs the site allows. */
function checkPages(pages: MonitorPage[], site: Site | null): void {
  const seen = new Set<string>();
  for (const [index, page] of pages.entries()) {
    if (seen.has(page.name)) throw new BadRequest(`pages[${index}].name "${page.name}" is used by another page: page names are unique in a monitor`);
    seen.add(page.name);
    if (page.fullPage && page.selector !== undefined) throw new BadRequest(`pages[${index}]: fullPage and selector cannot be combined`);
    const { values, ...sent } = page.credentials ?? {};
    // A fill's valueFrom must name one of the page's values: a run never types an empty secret.
    const problems = [
      ...visitOptionsProblems({ ...page, ...sent }),
      ...stepsProblems(page.steps, values, 'credentials.values'),
    ];
    if (problems.length > 0) throw new BadRequest(problems.map((problem) => `pages[${index}]: ${problem}`).join('; '));
    if (site) {
      // A site's domains hold for its monitors as for a restricted key (the renderer refuses it too).
      const refusal = restrictedOptionRefusal(page, { by: "a site's allowed domains", wayOut: 'leave siteId out' });
      if (refusal) throw new BadRequest(`pages[${index}]: ${refusal}`);
      const host = hostOfUrl(page.url);
      if (host === undefined || !hostMatches(host, site.allowedDomains)) {
        throw new BadRequest(`pages[${index}].url: ${host ?? 'this host'} is not among the allowed domains of site ${site.id}`);
      }
    }
  }
}

export function monitorOperations(store: Store, service: MonitorService, accountId: string) {
  const ownMonitor = async (id: string): Promise<Monitor> => {
    const monitor = await store.getMonitor(id);
    if (!monitor || monitor.accountId !== accountId) throw new NotFound(`Monitor ${id} not found`);
    return monitor;
  };
  const unmanaged = async (id: string) => {
    const monitor = await ownMonitor(id);
    if (monitor.managedBy) throw managedConflict('Monitor', monitor.id, monitor.managedBy);
    return monitor;
  };

  return {
    ownMonitor,
    async list() {
      return (await store.listMonitors(accountId)).map((monitor) => monitorView(monitor));
    },
    async create(body: unknown) {
      const spec = specWithDefaults(validateCreate(body));
      await checkSpec(store, accountId, spec);
      return monitorView(await store.createMonitor({ accountId, ...spec }));
    },
    async get(id: string) {
      return monitorView(await ownMonitor(id));
    },
    async update(id: string, body: unknown) {
      const given = validateUpdate(body);
      const current = await unmanaged(id);
      const patch = given.pages ? { ...given, pages: keepingCredentials(given.pages, current.pages) } : given;
      const next: MonitorSpec = { ...current, ...patch, compare: { ...current.compare, ...patch.compare } } as MonitorSpec;
      await checkSpec(store, accountId, next);
      const updated = await store.updateMonitor(id, { ...patch, compare: next.compare });
      if (!updated) throw new NotFound(`Monitor ${id} not found`);
      return monitorView(updated);
    },
    async remove(id: string) {
      await service.deleteMonitor(await unmanaged(id));
    },
    async runs(id: string) {
      const monitor = await ownMonitor(id);
      return (await store.listMonitorRuns(monitor.id, monitor.historyLimit)).map(runView);
    },
    async run(id: string, runId: string) {
      const monitor = await ownMonitor(id);
      const run = await store.getMonitorRun(runId);
      if (!run || run.monitorId !== monitor.id) throw new NotFound(`Run ${runId} not found`);
      return runView(run);
    },
    async image(id: string, imageId: string): Promise<Buffer> {
      const monitor = await ownMonitor(id);
      const image = (await service.ownsImage(monitor, imageId)) ? await service.images.get(imageId) : null;
      if (!image) throw new NotFound(`Image ${imageId} not found`);
      return image;
    },
    async acceptBaseline(id: string, body: unknown) {
      const { runId, page } = validateAccept(body);
      return monitorView(await service.acceptBaseline(await ownMonitor(id), runId, page));
    },
    async runNow(id: string) {
      return { jobId: await service.runNow(await ownMonitor(id)) };
    },
  };
}

/** The operator's PUT: a monitor's spec as the PageMonitor resource declares it, for its account. */
export interface PutManagedMonitor extends Omit<CreateBody, 'name'> {
  accountId: string;
  uid: string;
}

export const putManagedMonitorSchema = {
  ...createMonitorSchema,
  required: ['accountId', 'uid', 'schedule', 'pages'],
  properties: {
    ...Object.fromEntries(Object.entries(createMonitorSchema.properties).filter(([name]) => name !== 'name')),
    accountId: { type: 'string', minLength: 1, maxLength: 64, description: 'The account (acct_...) the monitor belongs to.' },
    uid: { type: 'string', minLength: 1, maxLength: 128, description: "The PageMonitor's metadata.uid." },
  },
} as const;
const validatePut = compileValidator<PutManagedMonitor>(putManagedMonitorSchema, messages);

/** What the operator mirrors into a PageMonitor's status: the monitor, its account and its last run. */
export interface ManagedMonitorView extends MonitorView {
  accountId: string;
  lastRun: ReturnType<typeof runSummaryView> | null;
}

/**
 * The operator's operations on monitors owned by PageMonitor resources (looked up by namespace and
 * name across accounts, like sites and keys): idempotent writes, so a retried call never makes a
 * second monitor. A PageMonitor created again under the same name (a new uid) starts afresh.
 */
export function managedMonitorOperations(store: Store, service: MonitorService) {
  const find = (namespace: string, name: string): Promise<Monitor | null> => store.findMonitorByManagedBy({ kind: 'PageMonitor', namespace, name });
  const view = async (monitor: Monitor): Promise<ManagedMonitorView> => {
    const [last] = await store.listMonitorRuns(monitor.id, 1);
    // Without the reports: the operator refreshes this every status interval and mirrors the verdicts only.
    return { ...monitorView(monitor), accountId: monitor.accountId, lastRun: last ? runSummaryView(last) : null };
  };
  return {
    async get(namespace: string, name: string): Promise<ManagedMonitorView> {
      const monitor = await find(namespace, name);
      if (!monitor) throw new NotFound(`No monitor is managed by PageMonitor ${namespace}/${name}`);
      return view(monitor);
    },
    async put(namespace: string, name: string, body: unknown): Promise<{ monitor: ManagedMonitorView; created: boolean }> {
      const { accountId, uid, ...input } = validatePut(body);
      if (!(await store.getAccount(accountId))) throw new NotFound(`Account ${accountId} not found`);
      const spec = specWithDefaults({ ...input, name });
      await checkSpec(store, accountId, spec);
      let existing = await find(namespace, name);
      if (existing && existing.accountId !== accountId) {
        throw new Conflict(`The monitor of PageMonitor ${namespace}/${name} belongs to another account; spec.account is immutable`);
      }
      if (existing && existing.managedBy?.uid !== uid) {
        await service.deleteMonitor(existing);
        existing = null;
      }
      if (existing) {
        const current = existing;
        const changed = (Object.keys(spec) as Array<keyof MonitorSpec>).some((field) => JSON.stringify(current[field]) !== JSON.stringify(spec[field]));
        const updated = changed ? await store.updateMonitor(current.id, spec) : current;
        if (!updated) throw new NotFound(`No monitor is managed by PageMonitor ${namespace}/${name}`);
        return { monitor: await view(updated), created: false };
      }
      const created = await store.createMonitor({ accountId, ...spec, managedBy: { kind: 'PageMonitor', namespace, name, uid } });
      return { monitor: await view(created), created: true };
    },
    async remove(namespace: string, name: string): Promise<string | null> {
      const monitor = await find(namespace, name);
      if (!monitor) return null;
      await service.deleteMonitor(monitor);
      return monitor.id;
    },
  };
}
