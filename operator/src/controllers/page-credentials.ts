import type { V1Secret } from '@kubernetes/client-node';
import { REASONS } from '../conditions.ts';
import type { KubeClient } from '../k8s/client.ts';
import { NotReady } from './common.ts';

/**
 * A PageMonitor's page behind a login names a Secret of its namespace (`credentialsSecretRef`); the
 * resource never holds the credentials itself. The Secret's keys, each optional:
 * - `username` and `password`: HTTP basic authentication; or `token`: a bearer token;
 * - `headers`: a JSON object of header names to values;
 * - `cookies`: a JSON array of {"name", "value"};
 * - `values`: a JSON object of names to strings, which the page's fill steps take by `valueFrom`
 *   (a journey's password: issue #41).
 * What they become is sent to the API as the page's write-only `credentials`, which goes to the
 * page's URL's origin only (values: typed into the page by its steps). The API checks them as it
 * checks a capture's, and that every valueFrom names one of the values: a 400 it answers makes the
 * resource InvalidSpec with its message, which names the step and the name, never a value.
 */
export async function withPageCredentials(kube: KubeClient, namespace: string, pages: Array<Record<string, unknown>>): Promise<Array<Record<string, unknown>>> {
  return Promise.all(
    pages.map(async ({ credentialsSecretRef, ...page }) => {
      if (credentialsSecretRef === undefined) return page;
      const name = (credentialsSecretRef as { name: string }).name;
      const secret = await kube.getSecret(namespace, name);
      const where = `spec.pages[${String(page.name)}].credentialsSecretRef: Secret ${namespace}/${name}`;
      if (!secret) throw new NotReady(REASONS.CredentialsNotFound, `${where} does not exist`);
      return { ...page, credentials: credentialsOf(secret, where) };
    }),
  );
}

function credentialsOf(secret: V1Secret, where: string): Record<string, unknown> {
  const value = (key: string) => {
    const encoded = secret.data?.[key];
    return encoded === undefined ? (secret.stringData?.[key] ?? undefined) : Buffer.from(encoded, 'base64').toString('utf8');
  };
  // A Secret that cannot be read as credentials waits for its owner to fix it: no retry helps.
  const invalid = (why: string) => new NotReady(REASONS.InvalidSpec, `${where}: ${why}`, false);
  const json = (key: string) => {
    const text = value(key);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw invalid(`its key "${key}" is not JSON`);
    }
  };
  const [username, password, token] = [value('username'), value('password'), value('token')];
  if (token !== undefined && (username !== undefined || password !== undefined)) throw invalid('give token, or username and password, not both');
  const authorization =
    token !== undefined ? { type: 'bearer', token } : username !== undefined || password !== undefined ? { type: 'basic', username: username ?? '', password: password ?? '' } : undefined;
  const credentials = { headers: json('headers'), cookies: json('cookies'), authorization, values: json('values') };
  const given = Object.fromEntries(Object.entries(credentials).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length === 0) throw invalid('it has none of the keys username, password, token, headers, cookies, values');
  return given;
}
