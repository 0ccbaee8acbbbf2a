import { pino, type Logger, type DestinationStream } from 'pino';
import { NO_TRACE_FIELDS, traceLogFields } from './tracing.ts';

export type { Logger };

/**
 * Paths that may carry a secret. pino replaces them before a line is written, so an API key can
 * never reach a log even when a whole request or header object is logged by mistake.
 */
const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  'key',
  'secret',
  'token',
  // A journey's credentials and what its fill steps type (docs/capture-options.md, "steps").
  'credentials',
  'request.credentials',
  'steps[*].value',
  'request.steps[*].value',
  // A monitor's pages: their credentials (the values their journeys type among them) and fill values.
  'pages[*].credentials',
  'monitor.pages[*].credentials',
  'pages[*].steps[*].value',
  'monitor.pages[*].steps[*].value',
  'page.credentials',
];

export function createLogger(options: { level?: string; name?: string } = {}, destination?: DestinationStream): Logger {
  return pino(
    {
      name: options.name ?? 'viewfinder',
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
      // trace_id and span_id of the span the line is written in, when tracing is on (lib/tracing.ts).
      mixin: traceLogFields,
      // pino's own strategy assigns into the mixin's object: the shared empty one is left alone.
      mixinMergeStrategy: (fields: object, traceFields: object) => (traceFields === NO_TRACE_FIELDS ? fields : Object.assign(traceFields, fields)),
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
