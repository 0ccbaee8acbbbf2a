import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { serveFidelityPage } from './fidelity-pages.ts';
import { serveRemoveAdsFixture } from './consent-fixtures.ts';

/**
 * A loopback web server with pages of known geometry and colours, for render tests and the bench.
 * Every page is self-contained: nothing is fetched from outside the machine.
 */
export interface FixtureServer {
  origin: string;
  url(path: string): string;
  close(): Promise<void>;
}

/** The fixture pages' server, which also counts what it was asked for. */
export interface FixturePages extends FixtureServer {
  /** How many requests for this path (no query) the server has received so far. */
  requests(pathname: string): number;
}

const VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">';

export function page(body: string, { head = '', style = '' } = {}): string {
  return `<!doctype html><html><head><meta charset="utf-8">${VIEWPORT_META}<title>fixture</title>
<style>html,body{margin:0;padding:0;background:#fff}${style}</style>${head}</head><body>${body}</body></html>`;
}

/** Pages by path. Query parameters tune them (?height=, ?after=, ?delay=). */
function render(url: URL, res: http.ServerResponse): void {
  const param = (name: string, fallback: number) => Number(url.searchParams.get(name) ?? fallback);
  const html = (status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(body);
  };

  switch (url.pathname) {
    case '/simple':
      return html(200, page('<h1>Viewfinder</h1><p>A simple page.</p><div style="width:200px;height:100px;background:#0057b8"></div>'));

    // Red square at the top-left corner, blue at the bottom-right corner of the viewport, green elsewhere.
    case '/geometry':
      return html(
        200,
        page('<div id="tl"></div><div id="br"></div>', {
          style: `body{background:#00ff00;height:100vh;overflow:hidden}
            #tl{position:fixed;left:0;top:0;width:40px;height:40px;background:#ff0000}
            #br{position:fixed;right:0;bottom:0;width:40px;height:40px;background:#0000ff}`,
        }),
      );

    // A page exactly `height` CSS px tall: red at the top, a 100 px green band at the very bottom.
    case '/tall': {
      const height = param('height', 3000);
      return html(
        200,
        page(`<div style="height:${height - 100}px;background:#ff0000"></div><div style="height:100px;background:#00ff00"></div>`),
      );
    }

    // Far taller than any cap.
    case '/endless':
      return html(200, page('<div style="height:1000000px;background:linear-gradient(#ff0000,#0000ff)"></div>'));

    // White until `after` ms past load, then green.
    case '/late-paint': {
      const after = param('after', 1500);
      return html(
        200,
        page('', { head: `<script>addEventListener('load',()=>setTimeout(()=>{document.body.style.background='#00ff00'},${after}))</script>`, style: 'body{height:100vh}' }),
      );
    }

    // Serves the HTML given in ?html=, so a test can run its own script on a real http origin.
    case '/echo':
      return html(200, url.searchParams.get('html') ?? '');

    // A 302 to ?to=, for redirect cases.
    case '/redirect':
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/simple', 'cache-control': 'no-store' });
      res.end();
      return;

    // Answers only after `delay` ms.
    case '/slow': {
      const timer = setTimeout(() => html(200, page('<h1>finally</h1>')), param('delay', 5000));
      res.once('close', () => clearTimeout(timer));
      return;
    }

    default:
      if (serveFidelityPage(url, res)) return;
      if (serveRemoveAdsFixture(url, res)) return;
      return html(404, page('<h1>not found</h1>'));
  }
}

export async function startFixtureServer(host = '127.0.0.1'): Promise<FixturePages> {
  const received = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${host}`);
    received.set(url.pathname, (received.get(url.pathname) ?? 0) + 1);
    render(url, res);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host}:${port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    requests: (pathname) => received.get(pathname) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port that nothing listens on, for connection-refused cases. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A loopback port that fails every connection, held for as long as the test needs it. A port that
 * closedPort() found free can be bound by any other process before the capture connects (a capture
 * once answered 200 that way); this one stays bound by a listening socket that resets each
 * connection at once, so the browser gets ERR_CONNECTION_RESET and no other process can take it.
 */
export async function resettingPort(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
