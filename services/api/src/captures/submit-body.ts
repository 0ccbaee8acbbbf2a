/**
 * The body of POST /captures and /api/captures: the synchronous capture's body (either mode's) plus
 * `webhookUrl` and `idempotencyKey`, or a batch `{ "captures": [ ...up to MAX_BATCH of those ] }`.
 * Each capture of a batch is checked with the single form's validator, so its messages are the same,
 * prefixed with its place in the batch.
 */
import type { ErrorObject } from 'ajv';
import type { Context } from 'koa';
import { BadRequest, isHttpError } from '../../../../lib/errors.ts';
import { compileValidator, type MessageRule } from '../validation.ts';
import { MAX_BATCH } from './config.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const PRINTABLE = '^[\\x21-\\x7e]{1,255}$';

export const asyncFields = {
  webhookUrl: {
    type: 'string',
    format: 'http-url',
    maxLength: 2048,
    description: 'Told the outcome with a signed POST (docs/async.md). Must pass the same network guard as captures: no private, loopback or link-local target.',
  },
  idempotencyKey: {
    type: 'string',
    pattern: PRINTABLE,
    description: 'The same key from the same caller within 24 h answers the same capture instead of making a second one (also the Idempotency-Key header).',
  },
} as const;

const asyncMessages: MessageRule[] = [
  (e: ErrorObject) => (e.instancePath === '/webhookUrl' ? 'webhookUrl must be an http or https URL of at most 2048 characters' : undefined),
  (e: ErrorObject) => (e.instancePath === '/idempotencyKey' ? 'idempotencyKey must be 1 to 255 printable ASCII characters without spaces' : undefined),
];

export interface AsyncFields {
  webhookUrl?: string;
  idempotencyKey?: string;
}

interface BaseSchema {
  properties: Record<string, unknown>;
}

/** The single form's schema and the batch form's, from a mode's capture body schema. */
export function submitSchemas<S extends BaseSchema>(base: S) {
  const single = { ...base, properties: { ...base.properties, ...asyncFields } };
  const batch = {
    type: 'object',
    additionalProperties: false,
    required: ['captures'],
    properties: { captures: { type: 'array', minItems: 1, maxItems: MAX_BATCH, items: single, description: `Up to ${MAX_BATCH} captures, answered with one id each, in order.` } },
  };
  return { single, batch, either: { anyOf: [single, batch] } };
}

export interface ParsedSubmit<T> {
  batch: boolean;
  items: (T & AsyncFields)[];
}

/**
 * Validates either form. The Idempotency-Key header is the single form's key; a batch's capture i
 * without its own key gets `<header>:<i>`, so that a whole batch can be retried safely.
 */
export function submitParser<T>(singleSchema: object, messages: MessageRule[], check?: (body: T) => string[]): (ctx: Context) => ParsedSubmit<T> {
  const validateOne = compileValidator<T & AsyncFields>(singleSchema, [...messages, ...asyncMessages], check);
  const validateEnvelope = compileValidator<{ captures: unknown[] }>(
    { type: 'object', required: ['captures'], additionalProperties: false, properties: { captures: { type: 'array', minItems: 1, maxItems: MAX_BATCH } } },
    [(e) => (e.instancePath === '/captures' || e.keyword === 'required' ? `captures must be a list of 1 to ${MAX_BATCH} captures` : undefined)],
  );
  return (ctx) => {
    const body: unknown = ctx.request.body;
    const header = ctx.get(IDEMPOTENCY_HEADER) || undefined;
    if (header !== undefined && !new RegExp(PRINTABLE).test(header)) throw new BadRequest(`${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters without spaces`);
    const isBatch = typeof body === 'object' && body !== null && !Array.isArray(body) && 'captures' in body;
    if (!isBatch) {
      const item = validateOne(body);
      if (header !== undefined && item.idempotencyKey !== undefined && item.idempotencyKey !== header) {
        throw new BadRequest(`idempotencyKey and the ${IDEMPOTENCY_HEADER} header differ: give one`);
      }
      const idempotencyKey = item.idempotencyKey ?? header;
      return { batch: false, items: [{ ...item, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) }] };
    }
    const { captures } = validateEnvelope(body);
    const items = captures.map((capture, i) => {
      try {
        const item = validateOne(capture);
        const idempotencyKey = item.idempotencyKey ?? (header !== undefined ? `${header}:${i}` : undefined);
        return { ...item, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
      } catch (err) {
        if (isHttpError(err)) throw new BadRequest(`captures[${i}]: ${err.message}`);
        throw err;
      }
    });
    return { batch: true, items };
  };
}
