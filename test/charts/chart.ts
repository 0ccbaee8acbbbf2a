/** Paths and readers shared by the chart's tests. */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = `${REPO}charts/viewfinder/`;

export type Values = Record<string, unknown>;

export function readYaml(path: string): unknown {
  return parse(readFileSync(path, 'utf8'));
}

export const defaultValues = (): Values => readYaml(`${CHART}values.yaml`) as Values;

/** The example value files under ci/ (helm lint and the chart-testing tool read them too). */
export function ciValueFiles(): string[] {
  return readdirSync(`${CHART}ci`)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => `${CHART}ci/${name}`);
}

export function templateFiles(): string[] {
  return readdirSync(`${CHART}templates`)
    .filter((name) => /\.(ya?ml|tpl|txt)$/.test(name))
    .sort()
    .map((name) => `${CHART}templates/${name}`);
}

const isMap = (value: unknown): value is Values => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Helm's merge of a values file over the defaults: maps merge key by key, anything else replaces. */
export function mergeValues(base: Values, override: Values): Values {
  const merged: Values = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isMap(current) && isMap(value) ? mergeValues(current, value) : value;
  }
  return merged;
}

/** A Kubernetes memory quantity (128Mi, 1Gi, 500M) in bytes. */
export function bytesOf(quantity: string): number {
  const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
  if (!match) throw new Error(`not a memory quantity: ${quantity}`);
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9 }[match[2] as 'Ki'] ?? 1;
  return Number(match[1]) * unit;
}
