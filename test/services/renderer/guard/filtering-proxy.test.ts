import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { parseNetworkAllowlist } from '../../../../lib/network-allowlist.ts';
import { startFilteringProxy, type FilteringProxy } from '../../../../services/renderer/src/guard/filtering-proxy.ts';
import { createNetworkGuard, type Lookup } from '../../../../services/renderer/src/guard/network-guard.ts';
import { startFixtureServer, type FixtureServer } from '../../../support/fixture-server.ts';
import { silentLogger } from '../../../support/harness.ts';
import { startSecretServer, type SecretServer } from '../../../support/secret-server.ts';

/** Talks to the proxy the way Chromium does: absolute-form requests and CONNECT. */
function viaProxy(proxy: FilteringProxy, url: string, method = 'GET', body?: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: proxy.port, method, path: url, headers: { host: URL.parse(url)?.host ?? 'example.test' }, agent: false });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function connectVia(proxy: FilteringProxy, authority: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, '127.0.0.1', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`));
    socket.once('data', (data) => {
      resolve(data.toString().split('\r\n')[0] as string);
      socket.destroy();
    });
    socket.on('error', reject);
  });
}

describe('network guard: the filtering proxy', () => {
  let fixtures: FixtureServer;
  let secret: SecretServer;
  const proxies: FilteringProxy[] = [];
  const proxyWith = async (allow: string[], lookup?: Lookup) => {
    const proxy = await startFilteringProxy(createNetworkGuard(parseNetworkAllowlist(allow), lookup), silentLogger);
    proxies.push(proxy);
    return proxy;
  };

  before(async () => {
    fixtures = await startFixtureServer('127.0.0.2');
    secret = await startSecretServer();
  });
  beforeEach(() => secret.reset());
  after(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await fixtures.close();
    await secret.close();
  });

  it('forwards a plain-HTTP request to an allowed address', async () => {
    const proxy = await proxyWith(['127.0.0.2']);
    const response = await viaProxy(proxy, fixtures.url('/simple'));
    expect(response.status).to.equal(200);
    expect(response.body).to.contain('A simple page.');
  });

  it('refuses a blocked address with 403 and counts it', async () => {
    const proxy = await proxyWith(['127.0.0.2']);
    const response = await viaProxy(proxy, `http://127.0.0.1:${secret.port}/`);
    expect(response.status).to.equal(403);
    expect(proxy.blocked()).to.equal(1);
    expect(secret.hits()).to.equal(0);
  });

  it('pins the connection to the address it checked: a rebinding answer after the check is never used', async () => {
    // The first lookup answers the allowlisted address, every later one the secret's.
    let lookups = 0;
    const rebinding: Lookup = async () => [{ address: lookups++ === 0 ? '127.0.0.2' : '127.0.0.1', family: 4 }];
    const proxy = await proxyWith(['127.0.0.2'], rebinding);
    const port = new URL(fixtures.origin).port;
    const response = await viaProxy(proxy, `http://rebind.test:${port}/simple`);
    expect(response.status).to.equal(200);
    expect(response.body).to.contain('A simple page.');
    expect(lookups).to.equal(1);
    // The next name resolves to the secret, and is refused.
    const second = await viaProxy(proxy, `http://rebind-again.test:${secret.port}/`);
    expect(second.status).to.equal(403);
    expect(secret.hits()).to.equal(0);
  });

  it('reuses a checked answer for a few seconds, and retries a failed lookup', async () => {
    const asked: string[] = [];
    const lookup: Lookup = async (hostname) => {
      asked.push(hostname);
      if (hostname === 'flaky.test' && asked.filter((name) => name === hostname).length === 1) throw new Error('SERVFAIL');
      return [{ address: '127.0.0.2', family: 4 }];
    };
    const proxy = await proxyWith(['127.0.0.2'], lookup);
    const port = new URL(fixtures.origin).port;
    for (let i = 0; i < 3; i += 1) expect((await viaProxy(proxy, `http://cached.test:${port}/simple`)).status).to.equal(200);
    expect((await viaProxy(proxy, `http://flaky.test:${port}/simple`)).headers['x-viewfinder-upstream-error']).to.equal('ERR_NAME_NOT_RESOLVED');
    expect((await viaProxy(proxy, `http://flaky.test:${port}/simple`)).status).to.equal(200);
    expect(asked).to.deep.equal(['cached.test', 'flaky.test', 'flaky.test']);
  });

  it('refuses a name when any one of its addresses is private, even if the first is allowed', async () => {
    const mixed: Lookup = async () => [
      { address: '127.0.0.2', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const proxy = await proxyWith(['127.0.0.2'], mixed);
    const response = await viaProxy(proxy, `http://mixed.test:${secret.port}/`);
    expect(response.status).to.equal(403);
    expect(secret.hits()).to.equal(0);
  });

  it('lets an allowlisted host name through whatever it resolves to', async () => {
    const proxy = await proxyWith(['internal.test'], async () => [{ address: '127.0.0.2', family: 4 }]);
    const response = await viaProxy(proxy, `http://internal.test:${new URL(fixtures.origin).port}/simple`);
    expect(response.status).to.equal(200);
  });

  it('tunnels CONNECT to an allowed address and refuses a blocked one', async () => {
    const proxy = await proxyWith(['127.0.0.2']);
    expect(await connectVia(proxy, `127.0.0.2:${new URL(fixtures.origin).port}`)).to.equal('HTTP/1.1 200 Connection Established');
    expect(await connectVia(proxy, `127.0.0.1:${secret.port}`)).to.equal('HTTP/1.1 403 Forbidden');
    expect(await connectVia(proxy, `[::ffff:127.0.0.1]:${secret.port}`)).to.equal('HTTP/1.1 403 Forbidden');
    expect(await connectVia(proxy, `2130706433:${secret.port}`)).to.equal('HTTP/1.1 403 Forbidden');
    expect(secret.hits()).to.equal(0);
  });

  it('names the net error when the origin cannot be reached', async () => {
    const proxy = await proxyWith(['127.0.0.2']);
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.2', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const response = await viaProxy(proxy, `http://127.0.0.2:${port}/`);
    expect(response.status).to.equal(502);
    expect(response.headers['x-viewfinder-upstream-error']).to.equal('ERR_CONNECTION_REFUSED');
  });

  it('sends a request again on a new connection when the origin closes a kept-alive one as it arrives, its body included', async () => {
    // Each connection answers its first request and resets under the next: an origin whose idle
    // timeout runs out just as the proxy reuses the connection.
    const served = new WeakMap<net.Socket, number>();
    let connections = 0;
    let resets = 0;
    const origin = http.createServer((req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) {
        resets += 1;
        req.socket.resetAndDestroy();
        return;
      }
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => res.end(`${req.method} ${req.url} ${body}`));
    });
    origin.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.2', resolve));
    const base = `http://127.0.0.2:${(origin.address() as net.AddressInfo).port}`;
    try {
      const proxy = await proxyWith(['127.0.0.2']);
      expect((await viaProxy(proxy, `${base}/first`)).body).to.equal('GET /first ');
      const again = await viaProxy(proxy, `${base}/second`);
      expect([again.status, again.body, again.headers['x-viewfinder-upstream-error']]).to.deep.equal([200, 'GET /second ', undefined]);
      // The new connection was not kept (nor is the reset one): this one opens a third, kept alive for the form's.
      expect((await viaProxy(proxy, `${base}/third`)).body).to.equal('GET /third ');
      const posted = await viaProxy(proxy, `${base}/form`, 'POST', 'field=value');
      expect([posted.status, posted.body]).to.deep.equal([200, 'POST /form field=value']);
      // The second and the form were each reset once on a kept-alive connection and sent again on a new one.
      expect({ connections, resets }).to.deep.equal({ connections: 4, resets: 2 });
    } finally {
      origin.closeAllConnections();
      await new Promise<void>((resolve) => origin.close(() => resolve()));
    }
  });

  it('sends nothing again when a new connection is reset: the page gets ERR_CONNECTION_RESET', async () => {
    let requests = 0;
    const origin = http.createServer((req) => {
      requests += 1;
      req.socket.resetAndDestroy();
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.2', resolve));
    try {
      const proxy = await proxyWith(['127.0.0.2']);
      const response = await viaProxy(proxy, `http://127.0.0.2:${(origin.address() as net.AddressInfo).port}/`);
      expect([response.status, response.headers['x-viewfinder-upstream-error'], requests]).to.deep.equal([502, 'ERR_CONNECTION_RESET', 1]);
    } finally {
      await new Promise<void>((resolve) => origin.close(() => resolve()));
    }
  });

  it('serves nothing but absolute-form http:// requests', async () => {
    const proxy = await proxyWith(['127.0.0.0/8']);
    for (const target of ['/simple', 'ftp://127.0.0.2/', 'file:///etc/passwd']) {
      const response = await viaProxy(proxy, target);
      expect(response.status, target).to.equal(403);
    }
  });
});
