import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../../../lib/logger.ts';
import { Forbidden } from '../../../../lib/errors.ts';
import type { NetworkGuard } from './network-guard.ts';

/**
 * The loopback forward proxy every Chromium of the pool is launched behind. Chromium sends it all
 * its traffic: plain HTTP as absolute-form requests, HTTPS and WebSockets as CONNECT tunnels. For
 * each, the proxy resolves the host itself, checks every address with the guard, and connects to
 * the address it checked, so DNS rebinding cannot swap it afterwards.
 */
export interface FilteringProxy {
  port: number;
  /** Requests and tunnels refused so far. */
  blocked(): number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const BLOCKED_BODY = 'Blocked by the Viewfinder network guard\n';

/**
 * A plain-HTTP request the proxy could not forward still gets an answer (Chromium shows any proxy
 * answer as the page), so the answer names the Chromium net error the capture should report.
 */
export const UPSTREAM_ERROR_HEADER = 'x-viewfinder-upstream-error';

/** On the proxy's own refusals, so that a page report tells the guard's 403 from a site's (report-collector.ts). */
export const GUARD_REFUSAL_HEADER = 'x-viewfinder-guard';
const REFUSAL_HEADERS = { 'content-type': 'text/plain', [GUARD_REFUSAL_HEADER]: 'refused' };

const NET_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'ERR_CONNECTION_REFUSED',
  ECONNRESET: 'ERR_CONNECTION_RESET',
  ETIMEDOUT: 'ERR_CONNECTION_TIMED_OUT',
  EHOSTUNREACH: 'ERR_ADDRESS_UNREACHABLE',
  ENETUNREACH: 'ERR_ADDRESS_UNREACHABLE',
};

function netErrorOf(err: NodeJS.ErrnoException): string {
  return NET_ERRORS[err.code ?? ''] ?? 'ERR_CONNECTION_FAILED';
}

function failUpstream(res: http.ServerResponse, netError: string): void {
  res.writeHead(502, { 'content-type': 'text/plain', [UPSTREAM_ERROR_HEADER]: netError }).end(`net::${netError}\n`);
}

export async function startFilteringProxy(guard: NetworkGuard, logger: Logger): Promise<FilteringProxy> {
  const log = logger.child({ component: 'network-guard' });
  let blockedCount = 0;
  // Keep-alive towards origins: the agent pools sockets by the pinned address, never by name.
  const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo', timeout: 30_000 });

  const refuse = (host: string, err: unknown) => {
    blockedCount += 1;
    log.info({ host, reason: (err as Error).message }, 'Blocked a request from the browser');
  };

  const server = http.createServer(async (req, res) => {
    const target = URL.parse(req.url ?? '');
    if (!target || target.protocol !== 'http:') {
      // Only absolute-form http:// reaches a forward proxy; anything else is not ours to serve.
      res.writeHead(403, { ...REFUSAL_HEADERS, connection: 'close' }).end(BLOCKED_BODY);
      return;
    }
    let destination;
    try {
      destination = await guard.resolve(target.hostname);
    } catch (err) {
      req.resume();
      if (!(err instanceof Forbidden)) {
        failUpstream(res, 'ERR_NAME_NOT_RESOLVED');
        return;
      }
      refuse(target.hostname, err);
      res.writeHead(403, REFUSAL_HEADERS).end(BLOCKED_BODY);
      return;
    }
    const body = replayableBody(req);
    let upstream: http.ClientRequest;
    let clientGone = false;
    const forward = (pooled: boolean) => {
      upstream = http.request({
        host: destination.address,
        family: destination.family,
        port: Number(target.port || 80),
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers: forwardHeaders(req.headers),
        // A second try goes on a connection of its own: the pool's other idle sockets to this origin may be as stale.
        agent: pooled ? agent : false,
        setHost: false,
      });
      const sent = upstream;
      sent.on('response', (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, forwardHeaders(upstreamRes.headers));
        upstreamRes.pipe(res);
      });
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (clientGone) return;
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // The origin closed a kept-alive connection as this request reached it (its idle timeout
        // ran out, unannounced or racing ours): nothing of it was answered, so it is sent again on a
        // fresh connection, as Chromium does for its own reused connections. Without this, a page
        // load fails with ERR_CONNECTION_RESET that no browser shows (docs/safety.md).
        if (pooled && sent.reusedSocket && STALE_SOCKET_ERRORS.has(err.code ?? '') && body.replay(sent)) {
          log.debug({ host: target.hostname, code: err.code }, 'A kept-alive connection to the origin was closed under a request: sending it again on a new one');
          forward(false);
          body.resend(upstream);
          return;
        }
        failUpstream(res, netErrorOf(err));
      });
    };
    forward(true);
    res.on('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      upstream.destroy();
    });
    body.send(upstream!);
  });

  // HTTPS, wss:// and ws:// (Chromium tunnels WebSockets through CONNECT too).
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const authority = req.url ?? '';
    const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
    if (!match) {
      client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const [, host = '', port = ''] = match;
    tunnel(host, Number(port), client, head, 'HTTP/1.1 200 Connection Established\r\n\r\n');
  });

  // A WebSocket upgrade sent to the proxy in absolute form: forward the handshake as is.
  server.on('upgrade', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    const target = URL.parse(req.url ?? '');
    if (!target || (target.protocol !== 'http:' && target.protocol !== 'ws:')) {
      client.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    const headerLines = Object.entries(req.headers)
      .filter(([name]) => !name.startsWith('proxy-'))
      .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((item) => `${name}: ${item}`));
    const handshake = `${req.method} ${target.pathname}${target.search} HTTP/1.1\r\n${headerLines.join('\r\n')}\r\n\r\n`;
    tunnel(target.hostname, Number(target.port || 80), client, Buffer.concat([Buffer.from(handshake), head]), undefined);
  });

  // Tunnels leave the HTTP server's bookkeeping, so close() ends them from here.
  const tunnels = new Set<Duplex>();

  function tunnel(host: string, port: number, client: Duplex, head: Buffer, established: string | undefined): void {
    tunnels.add(client);
    client.on('error', () => client.destroy());
    client.once('close', () => tunnels.delete(client));
    guard.resolve(host).then(
      (destination) => {
        if (client.destroyed) return;
        const upstream = net.connect({ host: destination.address, port, family: destination.family });
        let connected = false;
        upstream.setNoDelay(true);
        upstream.once('connect', () => {
          connected = true;
          if (established) client.write(established);
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        upstream.on('error', () => {
          if (established && !connected) client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
          else client.destroy();
        });
        client.on('close', () => upstream.destroy());
      },
      (err: unknown) => {
        if (err instanceof Forbidden) refuse(host, err);
        client.end(`HTTP/1.1 ${err instanceof Forbidden ? '403 Forbidden' : '502 Bad Gateway'}\r\nConnection: close\r\n\r\n`);
      },
    );
  }

  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  log.debug({ port }, 'Started the filtering proxy');

  return {
    port,
    blocked: () => blockedCount,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy();
        for (const socket of tunnels) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A reused socket's errors that mean the origin had closed it, not that the request failed. */
const STALE_SOCKET_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Bodies up to this size are kept while they are forwarded, so that a request can be sent again. */
const REPLAYABLE_BODY_BYTES = 1024 * 1024;

/**
 * A request's body streamed to the origin, and kept (up to REPLAYABLE_BODY_BYTES) so that the
 * request can be sent again on another connection: what was read so far is written again, and
 * the rest follows as it arrives. A larger body is not kept, and its request is not sent again.
 */
function replayableBody(req: http.IncomingMessage) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let replayable = true;
  req.on('data', (chunk: Buffer) => {
    if (!replayable) return;
    kept += chunk.length;
    if (kept > REPLAYABLE_BODY_BYTES) {
      replayable = false;
      chunks.length = 0;
    } else chunks.push(chunk);
  });
  return {
    send: (upstream: http.ClientRequest) => req.pipe(upstream),
    /** Stops feeding the failed request; false when the body was too large to send again. */
    replay: (failed: http.ClientRequest) => {
      req.unpipe(failed);
      return replayable;
    },
    resend: (upstream: http.ClientRequest) => {
      for (const chunk of chunks) upstream.write(chunk);
      if (req.readableEnded) upstream.end();
      else req.pipe(upstream);
    },
  };
}

function forwardHeaders(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const forwarded: http.OutgoingHttpHeaders = {};
  const connectionListed = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase());
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || connectionListed.includes(name)) continue;
    forwarded[name] = value;
  }
  return forwarded;
}
