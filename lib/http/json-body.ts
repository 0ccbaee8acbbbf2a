import type { Middleware } from 'koa';
import type { IncomingMessage } from 'node:http';
import { BadRequest, PayloadTooLarge, UnsupportedMediaType } from '../errors.ts';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (jsonBody) or form fields (the dashboard's forms). */
    body?: unknown;
  }
}

/** Deepest nesting of objects and arrays a body may have; no request of ours needs more than 2. */
export const MAX_JSON_DEPTH = 32;

/**
 * Accepts only `application/json` bodies (415 otherwise) up to `limitBytes` (413), refuses bytes
 * that are not UTF-8 (400: decoding them would store replacement characters, as the forms already
 * refuse), turns malformed JSON, or JSON that is no object or array, into a 400 that says so, and
 * refuses bodies nested deeper than MAX_JSON_DEPTH (400) before any validator walks them.
 */
export function jsonBody(limitBytes: number): Middleware[] {
  const requireJson: Middleware = (ctx, next) => {
    if (ctx.request.type !== 'application/json') {
      throw new UnsupportedMediaType(`Content-Type must be application/json${ctx.request.type ? `, got ${ctx.request.type}` : ''}`);
    }
    return next();
  };
  const parse: Middleware = async (ctx, next) => {
    ctx.request.body = parseJson(await readBody(ctx.req, limitBytes));
    return next();
  };
  const limitDepth: Middleware = (ctx, next) => {
    if (depthOf(ctx.request.body) > MAX_JSON_DEPTH) {
      throw new BadRequest(`Malformed JSON body: nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    return next();
  };
  return [requireJson, parse, limitDepth];
}

/** Nesting depth of a parsed JSON value, without recursion, so that no body can exhaust the stack. */
export function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** The body's bytes, at most `limitBytes` (413 past it, before reading more when Content-Length says so). */
async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) throw new PayloadTooLarge(limitBytes);
  if (req.headers['content-encoding'] && req.headers['content-encoding'] !== 'identity') {
    throw new UnsupportedMediaType(`Content-Encoding ${req.headers['content-encoding']} is not supported: send the JSON as it is`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new PayloadTooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(bytes: Buffer): unknown {
  // No body at all reads as an empty object, so that the validator names what is missing.
  if (bytes.length === 0) return {};
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new BadRequest('The request body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BadRequest(`Malformed JSON body: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object') throw new BadRequest('Malformed JSON body: only an object or an array is accepted');
  return value;
}
