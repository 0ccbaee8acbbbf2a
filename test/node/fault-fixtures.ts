import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startLoggingPages } from '../support/logging-pages.ts';

/**
 * The fault leg's origins on the node's bridge address: the logging pages its captures load and the
 * receiver of their webhooks, in a worker thread of their own. The leg drives the node with
 * synchronous commands (kubectl, ferretdb.sh) that hold its main thread for seconds; an origin on
 * that thread would stop answering meanwhile, and once it runs again its kept-alive connections'
 * idle timers fire before it reads the requests that arrived on them, so it resets them: the
 * renderer then saw ERR_CONNECTION_RESET from a page server that a real site would never be.
 * In a worker, the origins answer whatever the leg's thread is doing.
 */
export interface FaultFixtures {
  /** A page that answers after `delayMs`, logged under `name`. */
  pageUrl(name: string, delayMs?: number): string;
  /** Where webhooks are delivered; deliveries are kept by capture id. */
  hookUrl(name: string): string;
  /** When each request for page `name` started and ended (end Infinity while it is open). */
  requests(name: string): Promise<Array<{ start: number; end: number }>>;
  /** The webhook deliveries received for a capture id. */
  deliveries(captureId: string): Promise<Array<{ status: string; at: number }>>;
  close(): Promise<void>;
}

type Ask = { id: number; ask: 'requests' | 'deliveries'; name: string } | { id: number; ask: 'close' };

export async function startFaultFixtures(host: string): Promise<FaultFixtures> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { host } });
  const pending = new Map<number, (answer: unknown) => void>();
  let next = 0;
  const ready = new Promise<{ pagesPort: number; hooksPort: number }>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', resolve);
  });
  const { pagesPort, hooksPort } = await ready;
  worker.on('message', ({ id, answer }: { id: number; answer: unknown }) => {
    pending.get(id)?.(answer);
    pending.delete(id);
  });
  const ask = <T>(question: { ask: 'requests' | 'deliveries'; name: string } | { ask: 'close' }): Promise<T> =>
    new Promise((resolve) => {
      const id = next++;
      pending.set(id, resolve as (answer: unknown) => void);
      worker.postMessage({ ...question, id });
    });
  return {
    pageUrl: (name, delayMs = 0) => `http://${host}:${pagesPort}/page/${name}?delay=${delayMs}`,
    hookUrl: (name) => `http://${host}:${hooksPort}/hook/${name}`,
    requests: (name) => ask({ ask: 'requests', name }),
    deliveries: (captureId) => ask({ ask: 'deliveries', name: captureId }),
    async close() {
      await ask({ ask: 'close' });
      await worker.terminate();
    },
  };
}

/** Receives the API's webhooks on `host`, answering 200, and keeps every delivery by capture id. */
async function startWebhookReceiver(host: string) {
  const received = new Map<string, Array<{ status: string; at: number }>>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; status: string };
        received.set(body.id, [...(received.get(body.id) ?? []), { status: body.status, at: Date.now() }]);
      } catch {
        // Not a webhook body: counted nowhere, answered all the same.
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    deliveries: (id: string) => received.get(id) ?? [],
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** The worker's side: both servers, answering the leg's questions. */
async function serve(host: string): Promise<void> {
  const port = parentPort!;
  const pages = await startLoggingPages(host);
  const hooks = await startWebhookReceiver(host);
  port.on('message', async (question: Ask) => {
    if (question.ask === 'close') {
      await pages.close();
      await hooks.close();
      port.postMessage({ id: question.id, answer: null });
      return;
    }
    const answer = question.ask === 'requests' ? pages.requests(question.name) : hooks.deliveries(question.name);
    port.postMessage({ id: question.id, answer });
  });
  port.postMessage({ pagesPort: Number(new URL(pages.url('ready')).port), hooksPort: hooks.port });
}

if (!isMainThread && (workerData as { host?: string } | null)?.host) await serve((workerData as { host: string }).host);
