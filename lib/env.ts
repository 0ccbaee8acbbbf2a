/**
 * Typed readers for environment variables. Each service's config.ts uses these once at start-up;
 * nothing else in the code base reads process.env.
 */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {}

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readOptionalString(env: Env, name: string): string | undefined {
  return raw(env, name);
}

export function readInt(env: Env, name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(`${name} must be an integer, got "${value}"`);
  const parsed = Number(value);
  if (range.min !== undefined && parsed < range.min) throw new ConfigError(`${name} must be >= ${range.min}, got ${parsed}`);
  if (range.max !== undefined && parsed > range.max) throw new ConfigError(`${name} must be <= ${range.max}, got ${parsed}`);
  return parsed;
}

export function readBool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(`${name} must be a boolean (true/false), got "${value}"`);
}

export function readList(env: Env, name: string): string[] {
  return (raw(env, name) ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  }
  return value as T;
}
