/**
 * Tracing with OpenTelemetry, set up once per process (ARCHITECTURE.md, "Tracing is OpenTelemetry";
 * docs/operations.md, "Tracing"). Configured only by the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...) and off unless they configure an exporter: off, no
 * @opentelemetry module is loaded at all (startTracing imports the SDK dynamically), and every helper
 * below is one check of a module variable before it runs the work as it is.
 *
 * Spans are named and attributed after OpenTelemetry's semantic conventions; none holds a key, a
 * credential, a cookie, a header's value or a URL's userinfo (safeUrl).
 */
import type * as OtelApi from '@opentelemetry/api';
import { ConfigError } from './env.ts';

export type SpanAttributes = Record<string, string | number | boolean | undefined>;

/** What traced work may do to its span. When tracing is off it gets an object that does nothing. */
export interface TraceSpan {
  setAttributes(attributes: SpanAttributes): void;
  updateName(name: string): void;
  /** Marks the span failed (status ERROR) with the semantic conventions' error.type. */
  fail(errorType: string): void;
}

export interface SpanOptions {
  kind?: 'server' | 'client' | 'internal' | 'producer' | 'consumer';
  /**
   * A W3C traceparent to continue (an incoming request's header, a job's row) instead of the active
   * span; one that is not valid (the empty string) starts a new trace.
   */
  parent?: string | undefined;
}

const NO_SPAN: TraceSpan = { setAttributes: () => undefined, updateName: () => undefined, fail: () => undefined };
const NO_FIELDS: Readonly<Record<string, string>> = Object.freeze({});
/** What traceLogFields returns when there is no span: lib/logger.ts merges nothing then. */
export const NO_TRACE_FIELDS: Readonly<Record<string, string>> = Object.freeze({});

interface Started {
  api: typeof OtelApi;
  tracer: OtelApi.Tracer;
  provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}
/** Set once startTracing has loaded the SDK: undefined means tracing is off. */
let started: Started | undefined;

/** The samplers OTEL_TRACES_SAMPLER names (the specification's list, less the vendor ones). */
const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/**
 * True when the environment asks for traces: an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp, unless OTEL_SDK_DISABLED=true or
 * OTEL_TRACES_EXPORTER=none.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return false;
  return exporter === 'otlp' || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Throws a ConfigError for what the SDK would otherwise only warn about and ignore: a sampler, an
 * exporter or a protocol this process does not have (a service's main checks it with its config).
 */
export function checkTracingEnv(env: NodeJS.ProcessEnv = process.env): void {
  const problem = tracingEnvProblem(env);
  if (problem) throw new ConfigError(problem);
}

function tracingEnvProblem(env: NodeJS.ProcessEnv): string | undefined {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (sampler && !(SAMPLERS as readonly string[]).includes(sampler)) return `OTEL_TRACES_SAMPLER=${sampler} is not one of ${SAMPLERS.join(', ')}`;
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (arg && sampler?.endsWith('traceidratio') && !(Number(arg) >= 0 && Number(arg) <= 1)) return `OTEL_TRACES_SAMPLER_ARG=${arg} is not a ratio between 0 and 1`;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter && exporter !== 'otlp' && exporter !== 'none') return `OTEL_TRACES_EXPORTER=${exporter}: only otlp (or none) is supported`;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol && protocol !== 'http/json' && protocol !== 'http/protobuf') return `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: traces are sent over OTLP/HTTP (JSON); point the endpoint at a collector's HTTP port (4318)`;
  return undefined;
}

/**
 * Loads the SDK and starts exporting, when the environment configures it (tracingConfigured);
 * otherwise loads nothing and returns false. `serviceName` is the default of OTEL_SERVICE_NAME.
 * Throws on a configuration this process cannot honour (checkTracingEnv).
 */
export async function startTracing(serviceName: string, serviceVersion: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (started || !tracingConfigured(env)) return Boolean(started);
  checkTracingEnv(env);
  const [api, sdk, { OTLPTraceExporter }, { AsyncLocalStorageContextManager }, core, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
  ]);
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || 1);
  const sampler = {
    always_on: () => new sdk.AlwaysOnSampler(),
    always_off: () => new sdk.AlwaysOffSampler(),
    traceidratio: () => new sdk.TraceIdRatioBasedSampler(ratio),
    parentbased_always_on: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: () => new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: () => new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) }),
  }[(env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on') as (typeof SAMPLERS)[number]]();
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the defaults.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': serviceName, 'service.version': serviceVersion }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const bsp = (name: string) => (env[name]?.trim() ? Number(env[name]) : undefined);
  const provider = new sdk.TracerProvider({
    resource,
    sampler,
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        ...defined({
          scheduledDelayMillis: bsp('OTEL_BSP_SCHEDULE_DELAY'),
          exportTimeoutMillis: bsp('OTEL_BSP_EXPORT_TIMEOUT'),
          maxQueueSize: bsp('OTEL_BSP_MAX_QUEUE_SIZE'),
          maxExportBatchSize: bsp('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
        }),
      }),
    ],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  started = { api, tracer: api.trace.getTracer('viewfinder', serviceVersion), provider };
  return true;
}

function defined<T extends Record<string, number | undefined>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** Exports what is still buffered and stops; a later startTracing starts again. */
export async function stopTracing(): Promise<void> {
  const current = started;
  if (!current) return;
  started = undefined;
  await current.provider.shutdown().catch(() => undefined);
  current.api.trace.disable();
  current.api.context.disable();
  current.api.propagation.disable();
}

export function tracingOn(): boolean {
  return started !== undefined;
}

function contextOf(current: Started, parent: string | undefined): OtelApi.Context {
  if (parent === undefined) return current.api.context.active();
  return current.api.propagation.extract(current.api.ROOT_CONTEXT, { traceparent: parent });
}

const KINDS = { server: 1, client: 2, producer: 3, consumer: 4, internal: 0 } as const;

/**
 * Runs `work` in a span named `name` (a child of the active span, or of `options.parent`); the span
 * ends when the work settles, with an error status and `error.type` when it throws. Off: `work(NO_SPAN)`.
 */
export function inSpan<T>(name: string, attributes: SpanAttributes | undefined, work: (span: TraceSpan) => Promise<T>, options?: SpanOptions): Promise<T> {
  const current = started;
  if (!current) return work(NO_SPAN);
  const parent = contextOf(current, options?.parent);
  const span = current.tracer.startSpan(name, { kind: KINDS[options?.kind ?? 'internal'], ...(attributes ? { attributes } : {}) }, parent);
  return current.api.context.with(current.api.trace.setSpan(parent, span), async () => {
    const handle: TraceSpan = {
      setAttributes: (values) => span.setAttributes(values),
      updateName: (newName) => span.updateName(newName),
      fail: (type) => failSpan(current, span, type),
    };
    try {
      return await work(handle);
    } catch (err) {
      failSpan(current, span, errorType(err));
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span started here and ended elsewhere (a wait that ends in another callback). */
export interface OpenSpan {
  end(): void;
}
const NO_OPEN_SPAN: OpenSpan = { end: () => undefined };

/** Starts a child of the active span that the caller ends; `end` is idempotent. Off: an object that does nothing. */
export function startSpan(name: string, attributes?: SpanAttributes): OpenSpan {
  const current = started;
  if (!current) return NO_OPEN_SPAN;
  const span = current.tracer.startSpan(name, attributes ? { attributes } : undefined);
  let open = true;
  return {
    end: () => {
      if (open) span.end();
      open = false;
    },
  };
}

/**
 * A Koa middleware that checks something before the rest (a key, a scope), traced as a span of its
 * own that ends when it hands over to `next` (which runs in the request's span, not in this one).
 */
export function spanUntilNext<Ctx, R>(
  name: string,
  check: (ctx: Ctx, next: () => Promise<R>) => Promise<R>,
  attributes?: SpanAttributes,
): (ctx: Ctx, next: () => Promise<R>) => Promise<R> {
  return (ctx, next) => {
    const current = started;
    if (!current) return check(ctx, next);
    const outer = current.api.context.active();
    const span = current.tracer.startSpan(name, attributes ? { attributes } : undefined, outer);
    let open = true;
    const end = () => {
      if (open) span.end();
      open = false;
    };
    const handOver = () => {
      end();
      return current.api.context.with(outer, next);
    };
    return current.api.context.with(current.api.trace.setSpan(outer, span), async () => {
      try {
        return await check(ctx, handOver);
      } catch (err) {
        if (open) failSpan(current, span, errorType(err));
        throw err;
      } finally {
        end();
      }
    });
  };
}

function failSpan(current: Started, span: OtelApi.Span, type: string): void {
  span.setAttribute('error.type', type);
  // Only the class or status: an error's message may quote what the client sent.
  span.setStatus({ code: current.api.SpanStatusCode.ERROR, message: type });
}

/** The semantic conventions' error.type: the error's class (lib/errors.ts's HttpErrors name theirs). */
export function errorType(err: unknown): string {
  return err instanceof Error ? err.name : '_OTHER';
}

/** The W3C traceparent of the active span (for a request header or a job row); undefined when off or none. */
export function currentTraceparent(): string | undefined {
  const current = started;
  if (!current) return undefined;
  const carrier: { traceparent?: string } = {};
  current.api.propagation.inject(current.api.context.active(), carrier);
  return carrier.traceparent;
}

/** `{ traceparent }` for an outgoing request's headers; an empty object when off or no span is active. */
export function traceHeaders(): Readonly<Record<string, string>> {
  const traceparent = currentTraceparent();
  return traceparent ? { traceparent } : NO_FIELDS;
}

/** trace_id and span_id of the active span, for log lines (lib/logger.ts's mixin); NO_TRACE_FIELDS when off or none. */
export function traceLogFields(): Readonly<Record<string, string>> {
  const current = started;
  if (!current) return NO_TRACE_FIELDS;
  const context = current.api.trace.getSpanContext(current.api.context.active());
  if (!context || !current.api.isSpanContextValid(context)) return NO_TRACE_FIELDS;
  return { trace_id: context.traceId, span_id: context.spanId };
}

/** What traceExemplar returns when no span records: a histogram then keeps no exemplar (prom-client skips an empty set). */
export const NO_EXEMPLAR: Readonly<Record<string, string>> = Object.freeze({});

/**
 * `{ trace_id }` of the active span when it is recording (sampled), for a latency histogram's
 * exemplar (lib/metrics.ts); NO_EXEMPLAR when tracing is off, no span is active or it is not sampled,
 * since an exemplar must lead to a trace the backend has.
 */
export function traceExemplar(): Readonly<Record<string, string>> {
  const current = started;
  if (!current) return NO_EXEMPLAR;
  const span = current.api.trace.getSpan(current.api.context.active());
  if (!span?.isRecording()) return NO_EXEMPLAR;
  return { trace_id: span.spanContext().traceId };
}

/** Keys of a URL's query whose values the semantic conventions redact in url.full. */
const REDACTED_QUERY_KEYS = new Set(['awsaccesskeyid', 'signature', 'sig', 'x-goog-signature']);

/**
 * A URL as url.full may hold it (the semantic conventions): userinfo replaced by REDACTED:REDACTED,
 * and the values of signature-like query parameters by REDACTED. Undefined for what is not a URL.
 */
export function safeUrl(raw: string): string | undefined {
  const url = URL.parse(raw);
  if (!url) return undefined;
  if (url.username || url.password) {
    url.username = 'REDACTED';
    url.password = 'REDACTED';
  }
  for (const key of [...url.searchParams.keys()]) if (REDACTED_QUERY_KEYS.has(key.toLowerCase())) url.searchParams.set(key, 'REDACTED');
  return url.href;
}
