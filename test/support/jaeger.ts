/**
 * The tracing backend the tracing tests read from: a Jaeger started by test/cluster/jaeger.sh
 * (with-test-servers.sh does it for `make test`), named by VIEWFINDER_TEST_OTLP_ENDPOINT and
 * VIEWFINDER_TEST_JAEGER_QUERY. Without them the tests skip, saying why.
 */
import { randomBytes } from 'node:crypto';
import { serverLater, waitForServerLater } from './deferred-server.ts';

export let OTLP_ENDPOINT = process.env.VIEWFINDER_TEST_OTLP_ENDPOINT || undefined;
export let JAEGER_QUERY = process.env.VIEWFINDER_TEST_JAEGER_QUERY || undefined;

/** On a cold cache with-test-servers.sh builds Jaeger in the background and names the file its lines will be in. */
const LATER = 'VIEWFINDER_TEST_JAEGER_LATER';

/**
 * Why the tracing tests cannot run (no Jaeger), or undefined when they can; waits for a Jaeger
 * still building in the background (call it in a `before` with no timeout).
 */
export async function jaegerMissing(): Promise<string | undefined> {
  if ((!OTLP_ENDPOINT || !JAEGER_QUERY) && serverLater(LATER)) {
    const variables = await waitForServerLater(LATER, 'the test tracing backend (Jaeger)');
    OTLP_ENDPOINT = variables.VIEWFINDER_TEST_OTLP_ENDPOINT || undefined;
    JAEGER_QUERY = variables.VIEWFINDER_TEST_JAEGER_QUERY || undefined;
  }
  return !OTLP_ENDPOINT || !JAEGER_QUERY
    ? 'no Jaeger: VIEWFINDER_TEST_OTLP_ENDPOINT and VIEWFINDER_TEST_JAEGER_QUERY are not set (test/cluster/with-test-servers.sh starts one; by hand: export the last two lines of `test/cluster/jaeger.sh up /tmp/vf-jaeger`)'
    : undefined;
}

/**
 * The first hooks of a tracing leg's describe: wait for a Jaeger still building in the background (a
 * cold cache), however long it takes, then skip the describe, saying why, when there is no Jaeger or
 * the SDK's packages are missing. The describe's own `before` hooks come after, and run only if not.
 */
export function skipWithoutJaeger(): void {
  let why: string | undefined;
  before(async function () {
    this.timeout(0);
    why = (await jaegerMissing()) ?? (await otelPackagesMissing());
  });
  before(function () {
    if (why) {
      console.log(`      (skipped: ${why})`);
      this.skip();
    }
  });
}

/** The @opentelemetry packages the SDK needs, or why they cannot be loaded. */
export async function otelPackagesMissing(): Promise<string | undefined> {
  for (const name of ['@opentelemetry/api', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', '@opentelemetry/context-async-hooks', '@opentelemetry/core', '@opentelemetry/resources']) {
    try {
      await import(name);
    } catch {
      return `${name} is not installed (npm install), so tracing cannot start`;
    }
  }
  return undefined;
}

/** A service name of its own per test, so that its traces are found apart from every other run's. */
export function uniqueServiceName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** What a service needs to send its spans to the test Jaeger at once (a short batch delay). */
export function otelEnv(serviceName: string): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: OTLP_ENDPOINT ?? '', OTEL_SERVICE_NAME: serviceName, OTEL_BSP_SCHEDULE_DELAY: '50' };
}

export interface JaegerTag {
  key: string;
  type: string;
  value: unknown;
}

export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }[];
  tags: JaegerTag[];
  processID: string;
  startTime: number;
  duration: number;
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: JaegerTag[] }>;
}

/** Every trace Jaeger holds with a span of `service` (GET /api/traces); `query`: another Jaeger's query API. */
export async function tracesOf(service: string, query = JAEGER_QUERY): Promise<JaegerTrace[]> {
  const url = new URL('/api/traces', query);
  url.searchParams.set('service', service);
  url.searchParams.set('limit', '100');
  url.searchParams.set('lookback', '1h');
  const response = await fetch(url);
  if (response.status === 404) return [];
  if (!response.ok) throw new Error(`Jaeger query answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

/** A span's tag value, by key. */
export function tag(span: JaegerSpan, key: string): unknown {
  return span.tags.find((candidate) => candidate.key === key)?.value;
}

/** The span a span is the child of (its CHILD_OF reference), or undefined for a root. */
export function parentOf(trace: JaegerTrace, span: JaegerSpan): JaegerSpan | undefined {
  const ref = span.references.find((reference) => reference.refType === 'CHILD_OF');
  return ref ? trace.spans.find((candidate) => candidate.spanID === ref.spanID) : undefined;
}

/** The span tree as text, one span a line, children indented under their parent: service, name, ms. */
export function spanTree(trace: JaegerTrace): string {
  const children = new Map<string | undefined, JaegerSpan[]>();
  for (const span of trace.spans) {
    const parent = span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
    const key = parent && trace.spans.some((candidate) => candidate.spanID === parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of (children.get(parent) ?? []).sort((a, b) => a.startTime - b.startTime)) {
      lines.push(`${'  '.repeat(depth)}${span.operationName} [${trace.processes[span.processID]?.serviceName}] ${(span.duration / 1000).toFixed(1)} ms`);
      walk(span.spanID, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}
