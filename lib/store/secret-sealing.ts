import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError, readList, readOptionalString, type Env } from '../env.ts';

/**
 * Signing secrets (render links, webhooks) sealed at rest with AES-256-GCM under a key that
 * whoever runs the service provides (SIGNING_SECRETS_KEY), so that a copy of the store (a backup,
 * a stolen DATA_DIR or dump) cannot forge links or webhooks. The store keeps only
 * `sealed:v1:<key id>:<iv>:<ciphertext>:<tag>`; the key id (a hash prefix of the key) says which
 * key opens it, so keys can be rotated: the new key current, the old ones in
 * SIGNING_SECRETS_PREVIOUS_KEYS until Store.resealSigningSecrets has moved every secret.
 *
 * Without a key, secrets are stored as they are (the behaviour before sealing), and a stored
 * plain secret is always read as it is, so that an existing store keeps working and is sealed by
 * the first resealSigningSecrets with a key.
 */
export interface SecretKeys {
  current?: Buffer | undefined;
  previous?: Buffer[];
}

export interface SecretSealer {
  /** What the store keeps for `secret`. */
  seal(secret: string): string;
  /** The secret a stored value holds; throws when it is sealed with a key this process does not have. */
  open(stored: string): string;
  /** False when `stored` should be sealed again: plain, or sealed with a key other than the current one. */
  isCurrent(stored: string): boolean;
}

const PREFIX = 'sealed:v1:';
/**
 * What a sealed value is for, bound into it (GCM's additional data): a value sealed for one use does
 * not open as another (a signing secret copied into a destination's column fails to open).
 */
export type SealingPurpose = 'viewfinder signing secret' | 'viewfinder destination credentials';
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 12);

const SEALED_WHAT: Record<SealingPurpose, string> = {
  'viewfinder signing secret': 'A signing secret is',
  'viewfinder destination credentials': "A storage destination's credentials are",
};

export function secretSealer(keys: SecretKeys = {}, purpose: SealingPurpose = 'viewfinder signing secret'): SecretSealer {
  const AAD = Buffer.from(purpose);
  const byId = new Map<string, Buffer>();
  for (const key of [...(keys.previous ?? []), ...(keys.current ? [keys.current] : [])]) byId.set(keyIdOf(key), key);
  const currentId = keys.current ? keyIdOf(keys.current) : undefined;
  return {
    seal(secret) {
      if (!keys.current) return secret;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', keys.current, iv).setAAD(AAD);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${PREFIX}${currentId}:${iv.toString('base64url')}:${sealed.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [keyId, iv, sealed, tag] = stored.slice(PREFIX.length).split(':') as [string, string, string, string];
      const key = byId.get(keyId);
      if (!key) throw new Error(`${SEALED_WHAT[purpose]} sealed with key ${keyId}, which this process does not have: set SIGNING_SECRETS_KEY, or list that key in SIGNING_SECRETS_PREVIOUS_KEYS`);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url')).setAAD(AAD);
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
    },
    isCurrent(stored) {
      if (currentId === undefined) return true;
      return stored.startsWith(`${PREFIX}${currentId}:`);
    },
  };
}

/** SIGNING_SECRETS_KEY and SIGNING_SECRETS_PREVIOUS_KEYS: 32 random bytes each, base64 (`openssl rand -base64 32`). */
export function loadSecretKeys(env: Env): SecretKeys {
  const decode = (name: string, value: string) => {
    const key = Buffer.from(value, 'base64');
    if (key.length !== 32 || key.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) {
      throw new ConfigError(`${name} must be 32 random bytes in base64 (openssl rand -base64 32)`);
    }
    return key;
  };
  const current = readOptionalString(env, 'SIGNING_SECRETS_KEY');
  return {
    current: current === undefined ? undefined : decode('SIGNING_SECRETS_KEY', current),
    previous: readList(env, 'SIGNING_SECRETS_PREVIOUS_KEYS').map((value) => decode('SIGNING_SECRETS_PREVIOUS_KEYS', value)),
  };
}
