/**
 * Object keys from a template: `{id}` (the capture's id), `{date}` (its UTC day, YYYY-MM-DD) and
 * `{format}` (png, jpeg, webp or pdf) are filled in per capture, e.g. `shots/{date}/{id}.{format}`.
 * The result must be a safe key (segments of [A-Za-z0-9._=+-], none starting with a dot, so no `..`),
 * which every S3-compatible server stores as it is; a template is checked at registration with the
 * widest values its placeholders can take, so a registered template never makes a bad key later.
 */
import { validateBlobKey } from '../../../../lib/blobs/blob-store.ts';

export const KEY_PLACEHOLDERS = ['id', 'date', 'format'] as const;
export type KeyValues = Record<(typeof KEY_PLACEHOLDERS)[number], string>;
export const DEFAULT_KEY_TEMPLATE = '{id}.{format}';
export const MAX_KEY_TEMPLATE_LENGTH = 400;

/** The widest value each placeholder takes, to check a template once for all captures. */
const WIDEST: KeyValues = { id: `cap_${'f'.repeat(24)}`, date: '2026-12-31', format: 'jpeg' };

export function expandKey(template: string, values: KeyValues): string {
  return template.replace(/\{(\w+)\}/g, (_whole, name: string) => values[name as keyof KeyValues]);
}

/** The 400 text for a template that cannot make a safe key, or undefined when it can. */
export function keyTemplateProblem(template: string, field: string): string | undefined {
  const unknown = [...template.matchAll(/\{([^}]*)\}/g)].map(([, name]) => name!).filter((name) => !(KEY_PLACEHOLDERS as readonly string[]).includes(name));
  if (unknown.length > 0) return `${field} may use only the placeholders {${KEY_PLACEHOLDERS.join('}, {')}}; not {${unknown[0]}}`;
  const filled = expandKey(template, WIDEST);
  if (/[{}]/.test(filled)) return `${field} has an unmatched brace`;
  try {
    validateBlobKey(filled);
  } catch {
    return `${field} must make a key of path segments of letters, digits and . _ = + - (none starting with a dot, none empty), joined by /, at most 512 characters`;
  }
  return undefined;
}
