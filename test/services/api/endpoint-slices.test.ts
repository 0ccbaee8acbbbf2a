import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { CoreV1Api, DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../lib/k8s/kube-config.ts';
import { createApp } from '../../../services/api/src/app.ts';
import { loadApiConfig } from '../../../services/api/src/config.ts';
import { readyRendererUrls, watchRendererEndpointSlices } from '../../../services/api/src/endpoint-slices.ts';
import { createRemoteRenderer } from '../../../services/api/src/remote-renderer.ts';
import type { RendererEndpoints } from '../../../services/api/src/renderer-endpoints.ts';
import { startFakeKubeApiServer } from '../../support/fake-kube-apiserver.ts';
import { silentLogger, testConfig } from '../../support/harness.ts';
import { startStubRenderer, type StubRendererService } from '../../support/stub-renderer.ts';
import { eventually } from '../../support/eventually.ts';

const SERVICE = 'viewfinder-renderer';

function slice(name: string, port: number, endpoints: Array<{ ip: string; ready?: boolean; terminating?: boolean }>, service = SERVICE, addressType = 'IPv4'): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, labels: { 'kubernetes.io/service-name': service } },
    addressType,
    ports: [{ name: 'http', port, protocol: 'TCP' }],
    endpoints: endpoints.map(({ ip, ready, terminating }) => ({
      addresses: [ip],
      conditions: { ...(ready === undefined ? {} : { ready }), ...(terminating === undefined ? {} : { terminating }) },
    })),
  };
}

describe('readyRendererUrls (which EndpointSlice endpoints take captures)', () => {
  it('keeps ready endpoints (a missing ready means ready), drops not-ready and terminating ones', () => {
    const urls = readyRendererUrls(
      [
        slice('a', 3001, [{ ip: '10.0.0.1', ready: true }, { ip: '10.0.0.2' }, { ip: '10.0.0.3', ready: false }, { ip: '10.0.0.4', ready: true, terminating: true }]),
      ],
      'http',
    );
    expect(urls.map(String)).to.deep.equal(['http://10.0.0.1:3001/', 'http://10.0.0.2:3001/']);
  });

  it('uses the named port, brackets IPv6 addresses, and merges several slices without duplicates', () => {
    const v6: V1EndpointSlice = { ...slice('b', 3001, [{ ip: 'fd00::1' }]), addressType: 'IPv6' };
    const otherPort: V1EndpointSlice = { ...slice('c', 9999, [{ ip: '10.0.0.9' }]), ports: [{ name: 'metrics', port: 9999 }] };
    const fqdn = slice('d', 3001, [{ ip: 'renderer-0.example.internal' }], SERVICE, 'FQDN');
    const urls = readyRendererUrls([slice('a', 3001, [{ ip: '10.0.0.1' }]), slice('a2', 3001, [{ ip: '10.0.0.1' }]), v6, otherPort, fqdn], 'http');
    expect(urls.map(String)).to.deep.equal(['http://10.0.0.1:3001/', 'http://[fd00::1]:3001/', 'http://renderer-0.example.internal:3001/']);
  });
});

describe('RENDERER_SERVICE configuration', () => {
  it('turns on EndpointSlice discovery in the pod namespace, with the http port by default', () => {
    const config = loadApiConfig({ RENDERER_SERVICE: SERVICE, POD_NAMESPACE: 'shop' });
    expect(config.remoteRenderer?.discovery).to.deep.equal({ service: SERVICE, namespace: 'shop', portName: 'http' });
    expect(config.remoteRenderer?.urls).to.deep.equal([]);
  });

  it('refuses RENDERER_URL and RENDERER_SERVICE together', () => {
    expect(() => loadApiConfig({ RENDERER_SERVICE: SERVICE, POD_NAMESPACE: 'shop', RENDERER_URL: 'http://r:3001' })).to.throw(/not both/);
  });
});

/**
 * A real API server refuses loopback addresses in EndpointSlices, so the slices name a TEST-NET-1
 * address and the test maps it to 127.0.0.1, where the stub renderers listen. Discovery itself
 * (list, watch, readiness) is what it would be in a cluster.
 */
const STUB_ADDRESS = '192.0.2.10';
function onLoopback(endpoints: RendererEndpoints): RendererEndpoints {
  return {
    ...endpoints,
    current: () =>
      endpoints.current().map((url) => {
        const local = new URL(url);
        if (local.hostname === STUB_ADDRESS) local.hostname = '127.0.0.1';
        return local;
      }),
  };
}

interface Target {
  kubeConfig: KubeConfig;
  namespace: string;
  close(): Promise<void>;
}

const legs: Array<{ name: string; start: (() => Promise<Target>) | undefined }> = [
  {
    name: 'the fake API server',
    start: async () => {
      const fake = await startFakeKubeApiServer();
      return { kubeConfig: fake.kubeConfig(), namespace: 'shop', close: () => fake.close() };
    },
  },
  {
    name: 'a real API server (KUBECONFIG)',
    start: process.env.KUBECONFIG
      ? async () => {
          const kubeConfig = loadKubeConfig();
          const core = kubeConfig.makeApiClient(CoreV1Api);
          const namespace = `viewfinder-i12-${randomBytes(4).toString('hex')}`;
          await core.createNamespace({ body: { metadata: { name: namespace } } });
          return { kubeConfig, namespace, close: async () => void (await core.deleteNamespace({ name: namespace })) };
        }
      : undefined,
  },
];

for (const leg of legs) {
  describe(`renderer discovery through EndpointSlices, against ${leg.name}`, function () {
    this.timeout(60_000);
    const start = leg.start;
    if (!start) {
      it('is skipped: set KUBECONFIG to run it against a real API server', function () {
        console.log('      (skipped: KUBECONFIG is not set; the fake API server leg ran)');
        this.skip();
      });
      return;
    }
    let target: Target;
    let discovery: DiscoveryV1Api;
    const watchers: RendererEndpoints[] = [];
    const cleanups: Array<() => Promise<unknown>> = [];
    beforeEach(async () => {
      target = await start();
      discovery = target.kubeConfig.makeApiClient(DiscoveryV1Api);
    });
    afterEach(async () => {
      for (const watcher of watchers.splice(0)) watcher.close();
      for (const cleanup of cleanups.splice(0)) await cleanup();
      await target.close();
    });

    const create = (body: V1EndpointSlice) => discovery.createNamespacedEndpointSlice({ namespace: target.namespace, body });
    const replace = async (body: V1EndpointSlice) => {
      const name = body.metadata!.name!;
      const current = await discovery.readNamespacedEndpointSlice({ namespace: target.namespace, name });
      return discovery.replaceNamespacedEndpointSlice({ namespace: target.namespace, name, body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } } });
    };
    const watch = async () => {
      const endpoints = await watchRendererEndpointSlices({ kubeConfig: target.kubeConfig, namespace: target.namespace, service: SERVICE, portName: 'http', logger: silentLogger });
      watchers.push(endpoints);
      return endpoints;
    };
    const urlsOf = (endpoints: RendererEndpoints) => endpoints.current().map(String);

    it("lists the Service's ready endpoints and follows changes: a terminating endpoint leaves at once", async () => {
      await create(slice('renderer-a', 3001, [{ ip: '10.1.0.1', ready: true }, { ip: '10.1.0.2', ready: true }]));
      await create(slice('other-service', 3001, [{ ip: '10.9.0.1', ready: true }], 'something-else'));
      const endpoints = await watch();
      expect(urlsOf(endpoints)).to.deep.equal(['http://10.1.0.1:3001/', 'http://10.1.0.2:3001/']);
      let changes = 0;
      endpoints.onChange(() => (changes += 1));

      await replace(slice('renderer-a', 3001, [{ ip: '10.1.0.1', ready: false, terminating: true }, { ip: '10.1.0.2', ready: true }]));
      await eventually('the terminating endpoint left', () => urlsOf(endpoints).length === 1);
      expect(urlsOf(endpoints)).to.deep.equal(['http://10.1.0.2:3001/']);
      expect(changes).to.equal(1);

      await create(slice('renderer-b', 3001, [{ ip: '10.1.0.3', ready: true }]));
      await eventually('a second slice joined', () => urlsOf(endpoints).length === 2);
      await discovery.deleteNamespacedEndpointSlice({ namespace: target.namespace, name: 'renderer-a' });
      await eventually('the deleted slice left', () => urlsOf(endpoints).join() === 'http://10.1.0.3:3001/');
    });

    it('feeds the balancer: captures go only to ready renderers, and stop going to one that starts terminating', async () => {
      const stubs: StubRendererService[] = await Promise.all([0, 1].map(() => startStubRenderer({ capacity: 2, delayMs: () => 20 })));
      cleanups.push(() => Promise.all(stubs.map((stub) => stub.close())));
      const ports = stubs.map((stub) => Number(new URL(stub.url).port));
      // One slice per renderer: a slice has one port list, and the stubs share 127.0.0.1.
      await create(slice('renderer-0', ports[0]!, [{ ip: STUB_ADDRESS, ready: true }]));
      await create(slice('renderer-1', ports[1]!, [{ ip: STUB_ADDRESS, ready: true }]));
      const endpoints = onLoopback(await watch());
      const config = testConfig({ RENDERER_SERVICE: SERVICE, POD_NAMESPACE: target.namespace, RENDERER_PROBE_INTERVAL_MS: '200' });
      const renderer = await createRemoteRenderer(config.remoteRenderer!, silentLogger, endpoints);
      cleanups.push(() => renderer.close());
      const app = createApp({ config, renderer, logger: silentLogger });
      const capture = () => request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').send({ url: 'http://127.0.0.1:9/' });

      const first = await Promise.all(Array.from({ length: 8 }, () => capture().then((r) => r.status)));
      expect(first).to.deep.equal(Array(8).fill(200));
      expect(stubs.every((stub) => stub.renderer.completed() > 0), 'both renderers took captures').to.equal(true);

      await replace(slice('renderer-0', ports[0]!, [{ ip: STUB_ADDRESS, ready: false, terminating: true }]));
      await eventually('discovery dropped renderer-0', () => urlsOf(endpoints).length === 1);
      const before = stubs[0]!.renderer.completed();
      const after = await Promise.all(Array.from({ length: 8 }, () => capture().then((r) => r.status)));
      expect(after).to.deep.equal(Array(8).fill(200));
      expect(stubs[0]!.renderer.completed(), 'the terminating renderer got no new capture').to.equal(before);
    });
  });
}
