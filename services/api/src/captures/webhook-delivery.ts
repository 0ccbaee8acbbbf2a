/**
 * One webhook POST, through the same network guard as captures (services/renderer/src/guard): the
 * target's name is resolved once, every address it resolves to is checked (no loopback, private,
 * link-local, metadata… unless PRIVATE_NETWORK_ALLOWLIST allows it), and the connection goes to
 * the checked address itself, so a DNS answer that changes after the check (rebinding) is never
 * used. Redirects are not followed: a 3xx is a failed delivery like any other non-2xx answer.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { BadRequest, Forbidden, isHttpError, ServiceUnavailable } from '../../../../lib/errors.ts';
import { PermanentJobError } from '../../../../lib/jobs/retry.ts';
import type { NetworkGuard } from '../../../renderer/src/guard/network-guard.ts';

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** The job's own signal (its lease lost, the process stopping): ends the attempt like the deadline. */
  signal?: AbortSignal;
}

export interface WebhookAnswer {
  status: number;
}

/**
 * Throws PermanentJobError when the guard refuses the target, a plain Error for anything worth
 * retrying. `timeoutMs` is the attempt's overall deadline, from the name's resolution to the
 * answer's last byte: a receiver that keeps the socket busy (a byte every few seconds) is cut at
 * it like one that says nothing.
 */
export async function deliverWebhook(guard: NetworkGuard, request: WebhookRequest): Promise<WebhookAnswer> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new Error(`webhook receiver did not finish its answer within ${request.timeoutMs} ms (connection, headers and body together)`)),
    request.timeoutMs,
  );
  const stop = () => deadline.abort(request.signal?.reason instanceof Error ? request.signal.reason : new Error('webhook delivery stopped'));
  if (request.signal?.aborted) stop();
  request.signal?.addEventListener('abort', stop, { once: true });
  try {
    return await attempt(guard, request, deadline.signal);
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', stop);
  }
}

async function attempt(guard: NetworkGuard, request: WebhookRequest, deadline: AbortSignal): Promise<WebhookAnswer> {
  const url = URL.parse(request.url);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new PermanentJobError('webhookUrl is not an http(s) URL');
  const expired = new Promise<never>((_resolve, reject) => deadline.addEventListener('abort', () => reject(deadline.reason as Error), { once: true }));
  expired.catch(() => undefined);
  let destination;
  try {
    destination = await Promise.race([guard.resolve(url.hostname), expired]);
  } catch (err) {
    if (deadline.aborted) throw deadline.reason as Error;
    // A name that does not resolve now may resolve later; a refused address stays refused.
    if (isHttpError(err) && (err.status === 403 || err.status === 400)) throw new PermanentJobError(`webhook target refused: ${webhookRefusal(err.message)}`);
    throw new Error(`webhook target did not resolve: ${url.hostname}`);
  }
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [destination]);
    else callback(null, destination.address, destination.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned,
        agent: false,
        timeout: request.timeoutMs,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(request.body), 'User-Agent': 'Viewfinder-Webhook/1', ...request.headers },
      },
      (res) => {
        // The answer's body is of no use; read it away so the socket closes cleanly, and no further.
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ status });
          else reject(new Error(`webhook receiver answered ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`));
        });
        res.on('error', reject);
      },
    );
    const onDeadline = () => {
      reject(deadline.reason as Error);
      req.destroy(deadline.reason as Error);
    };
    if (deadline.aborted) onDeadline();
    deadline.addEventListener('abort', onDeadline, { once: true });
    req.on('close', () => deadline.removeEventListener('abort', onDeadline));
    req.on('timeout', () => req.destroy(new Error(`webhook receiver did not answer within ${request.timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`webhook delivery failed: ${err.message}`)));
    req.end(request.body);
  });
}

/** The guard speaks of captures; a webhook's refusal says the same about the webhook target. */
function webhookRefusal(message: string): string {
  return message.replace('only public addresses may be captured', 'only public addresses may receive webhooks');
}

/**
 * The submit-time check: the same guard, so that a refused target is a 400/403 at once rather than
 * a failed delivery later. The name's resolution is bounded by `timeoutMs` (WEBHOOK_TIMEOUT_MS): a
 * resolver that does not answer makes the submit a 503 with Retry-After, and nothing is queued.
 */
export async function checkWebhookUrl(guard: NetworkGuard, webhookUrl: string, timeoutMs: number): Promise<void> {
  const url = URL.parse(webhookUrl);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new BadRequest('webhookUrl must be an http or https URL');
  if (url.username || url.password) throw new BadRequest('webhookUrl must not carry credentials');
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    if ((await Promise.race([guard.resolve(url.hostname), deadline])) === 'timeout') {
      throw new ServiceUnavailable(`webhookUrl: ${url.hostname} did not resolve within ${timeoutMs} ms; try again`, 1);
    }
  } catch (err) {
    if (err instanceof ServiceUnavailable) throw err;
    if (isHttpError(err) && err.status === 403) throw new Forbidden(`webhookUrl: ${webhookRefusal(err.message)}`);
    if (isHttpError(err) && err.status === 400) throw new BadRequest(`webhookUrl: ${err.message}`);
    throw new BadRequest(`webhookUrl: ${url.hostname} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}
