import type { Context, Middleware } from 'koa';
import { secretMatches } from '../../../../lib/constant-time.ts';
import { BadRequest, Forbidden, PayloadTooLarge, UnsupportedMediaType } from '../../../../lib/errors.ts';

/**
 * Form posts: only application/x-www-form-urlencoded (what an HTML form sends), within the API's
 * body limit, read strictly into a record of strings. A body that is not a form at all (raw bytes,
 * a stray %, a field without "=") is a 400 before any handler runs, so nothing is created from it;
 * so is a field the form does not have, as the JSON API refuses unknown fields. A value that is not
 * valid UTF-8 is kept (decoded lossily, for showing the form again) and named by checkFormText, which
 * each handler calls so that the 400 sits next to the field.
 */
export const CSRF_FIELD = '_csrf';
/** What a form body is made of: printable ASCII, everything else percent-encoded (a space as +). */
const FORM_TEXT = /^[\x21-\x7e]*$/;
const FIELD_NAME = /^[A-Za-z_][\w-]{0,63}$/;
/** C0 controls but tab, line feed and carriage return (which a textarea sends), DEL, and C1 controls. */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lossyUtf8 = new TextDecoder('utf-8');

export function formBody(limitBytes: number, fields: readonly string[] = []): Middleware[] {
  const allowed = new Set([CSRF_FIELD, ...fields]);
  const requireForm: Middleware = (ctx, next) => {
    if (ctx.request.type !== 'application/x-www-form-urlencoded') {
      throw new UnsupportedMediaType(`Content-Type must be application/x-www-form-urlencoded${ctx.request.type ? `, got ${ctx.request.type}` : ''}`);
    }
    return next();
  };
  const parse: Middleware = async (ctx, next) => {
    const raw = await readBody(ctx, limitBytes);
    const { values, notUtf8 } = parseForm(raw);
    const unknown = Object.keys(values).filter((name) => !allowed.has(name));
    if (unknown.length > 0) throw new BadRequest(unknown.map((name) => `Unknown field: "${name}"`).join('; '));
    ctx.request.body = values;
    ctx.state.formNotUtf8 = notUtf8;
    return next();
  };
  return [requireForm, parse];
}

async function readBody(ctx: Context, limitBytes: number): Promise<Buffer> {
  if (Number(ctx.get('Content-Length') || 0) > limitBytes) throw new PayloadTooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new PayloadTooLarge(limitBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const unparseable = (why: string) => new BadRequest(`The form could not be read: ${why}. Submit the form from the dashboard page again`);

/** name=value pairs joined by &: a repeated field becomes a list; the names of values that are not UTF-8 are listed apart. */
export function parseForm(raw: Buffer): { values: Record<string, string | string[]>; notUtf8: string[] } {
  const text = raw.toString('latin1');
  if (!FORM_TEXT.test(text)) throw unparseable('it is not URL-encoded text');
  const values: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  const notUtf8 = new Set<string>();
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const at = pair.indexOf('=');
    if (at < 0) throw unparseable('a field has no "="');
    const name = percentDecode(pair.slice(0, at)).toString('latin1');
    if (!FIELD_NAME.test(name)) throw unparseable('a field name is not one of a form\'s');
    const bytes = percentDecode(pair.slice(at + 1));
    let value: string;
    try {
      value = strictUtf8.decode(bytes);
    } catch {
      value = lossyUtf8.decode(bytes);
      notUtf8.add(name);
    }
    const previous = values[name];
    values[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return { values: { ...values }, notUtf8: [...notUtf8] };
}

function percentDecode(encoded: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    const char = encoded[i] as string;
    if (char === '+') bytes.push(0x20);
    else if (char !== '%') bytes.push(char.charCodeAt(0));
    else {
      const hex = encoded.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw unparseable('a "%" is not followed by two hex digits');
      bytes.push(parseInt(hex, 16));
      i += 2;
    }
  }
  return Buffer.from(bytes);
}

/**
 * The 400 for a form whose text cannot be saved: a value that is not UTF-8, or that holds a control
 * character (NUL and the like). Each message starts with its field's name, so the page shows it
 * next to that field. Handlers call it first, inside the try that shows their form again.
 */
export function checkFormText(ctx: Context): void {
  const problems: string[] = ((ctx.state.formNotUtf8 as string[] | undefined) ?? []).map((name) => `${name} is not valid UTF-8 text`);
  for (const [name, value] of Object.entries((ctx.request.body as Record<string, string | string[]> | undefined) ?? {})) {
    if (problems.some((problem) => problem.startsWith(`${name} `))) continue;
    const found = (Array.isArray(value) ? value : [value]).map((v) => CONTROL.exec(v)).find(Boolean);
    if (found) problems.push(`${name} contains a control character (U+${(found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}): remove it`);
  }
  if (problems.length > 0) throw new BadRequest(problems.join('; '));
}

/** A form field as one string: a repeated field keeps its last value, a missing one is ''. */
export function field(ctx: Context, name: string): string {
  const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
  const last = Array.isArray(value) ? value.at(-1) : value;
  return typeof last === 'string' ? last : '';
}

/** Refuses a state-changing request whose form does not carry the expected CSRF token. */
export function checkCsrf(ctx: Context, expected: string): void {
  const presented = field(ctx, '_csrf');
  if (!presented || !secretMatches(presented, expected)) {
    throw new Forbidden('Invalid or missing CSRF token: reload the page and submit the form again');
  }
}
