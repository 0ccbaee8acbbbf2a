import type { ErrorObject, JSONSchemaType, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { BadRequest } from '../../../lib/errors.ts';

/**
 * One ajv instance for the whole API, in JSON Schema 2020-12 (the dialect of OpenAPI 3.1, whose
 * document publishes these schemas as they are): every error reported, no type coercion, and unknown fields
 * rejected by the schemas themselves (additionalProperties: false), never silently dropped.
 */
export const ajv = new Ajv2020({ allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: true });

ajv.addFormat('http-url', { type: 'string', validate: isHttpUrl });

export function isHttpUrl(value: string): boolean {
  if (value !== value.trim()) return false;
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** Per-field texts for the failures a client can cause; the first matching rule wins. */
export type MessageRule = (error: ErrorObject) => string | undefined;

/**
 * `check` adds what a schema cannot say (numbers compared across fields, say), as 400 texts. It sees
 * the body's fields that passed the schema, also when others did not, so that a request with several
 * mistakes hears of all of them at once.
 */
export function compileValidator<T>(schema: JSONSchemaType<T> | object, rules: MessageRule[], check?: (body: T) => string[]): (body: unknown) => T {
  const validate = ajv.compile(schema) as ValidateFunction<T>;
  return (body) => {
    const errors = validate(body) ? [] : (validate.errors ?? []);
    const messages = errors.map((error) => rules.map((rule) => rule(error)).find(Boolean) ?? describe(error));
    if (check && typeof body === 'object' && body !== null && !Array.isArray(body)) messages.push(...check(fieldsThatPassed(body, errors) as T));
    if (messages.length === 0) return body as T;
    throw new BadRequest([...new Set(messages)].join('; '));
  };
}

/** The body without the fields that an error points into (a JSON pointer's first token). */
function fieldsThatPassed(body: object, errors: ErrorObject[]): object {
  const failed = new Set(errors.filter((error) => error.instancePath !== '').map((error) => error.instancePath.split('/')[1]!.replaceAll('~1', '/').replaceAll('~0', '~')));
  return Object.fromEntries(Object.entries(body).filter(([field]) => !failed.has(field)));
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return `Unknown field: "${String(error.params.additionalProperty)}"`;
  if (error.keyword === 'type' && error.instancePath === '') return 'Request body must be a JSON object';
  const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'body';
  return `${field} ${error.message ?? 'is invalid'}`;
}
