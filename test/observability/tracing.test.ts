import { expect } from 'chai';
import type { Store } from '../../lib/store/store.ts';
import { expectEventually } from '../support/eventually.ts';
import { startFixtureServer, type FixturePages } from '../support/fixture-server.ts';
import { otelEnv, skipWithoutJaeger, parentOf, spanTree, tag, tracesOf, uniqueServiceName, type JaegerSpan, type JaegerTrace } from '../support/jaeger.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { sqlite, type TestStore } from '../support/store-backends.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * Traces of real processes, read back from a real Jaeger (test/cluster/jaeger.sh) through its query
 * API: a self-hosted capture, a hosted capture sent to a renderer process, an asynchronous capture
 * with its webhook, and a monitor run are each one trace, with the spans of docs/operations.md
 * ("Tracing") under the right parents, and no secret the client sent in any attribute.
 */
const SECRETS = {
  apiKey: 'self-hosted-key-7d1c5e0b9a4f4e2c8b3a',
  password: 'userinfo-password-5b2e9f',
  header: 'header-value-3f8a1c7d',
  cookie: 'cookie-value-9e4b2a6c',
  signing: 'webhook-signing-secret-0123456789abcdef0123',
};

describe('tracing: each capture is one trace in Jaeger, across the API, the renderer and the job runner (real processes)', function () {
  this.timeout(300_000);
  let fixtures: FixturePages;
  let receiver: WebhookReceiver;
  let renderer: ServiceProcess | undefined;
  let selfHosted: ServiceProcess | undefined;
  let hosted: ServiceProcess | undefined;
  let shared: TestStore | undefined;
  let store: Store;
  let hostedKey: string;
  let accountId: string;
  const services = { selfHosted: uniqueServiceName('vf-test-api'), hosted: uniqueServiceName('vf-test-hosted'), renderer: uniqueServiceName('vf-test-renderer') };

  skipWithoutJaeger();
  before(async function () {
    fixtures = await startFixtureServer();
    receiver = await startWebhookReceiver();
    shared = await sqlite.create();
    store = shared.store;
    accountId = (await store.createAccount({ name: 'Traced' })).id;
    hostedKey = (await store.createKey({ accountId, name: 'admin', kind: 'full' })).secret;
    [renderer, selfHosted] = await Promise.all([
      startServiceProcess(RENDERER_MAIN, otelEnv(services.renderer)),
      startServiceProcess(API_MAIN, { ...otelEnv(services.selfHosted), API_KEY: SECRETS.apiKey, WEBHOOK_SIGNING_SECRET: SECRETS.signing, JOB_POLL_INTERVAL_MS: '100' }),
    ]);
    hosted = await startServiceProcess(API_MAIN, { ...otelEnv(services.hosted), MODE: 'hosted', ...shared.env, RENDERER_URL: renderer.base, JOB_POLL_INTERVAL_MS: '100' });
  });
  after(async () => {
    await Promise.all([selfHosted?.stop(), hosted?.stop(), renderer?.stop()]);
    await shared?.dispose();
    await receiver?.close();
    await fixtures?.close();
  });

  /** A page URL with userinfo: url.full must show it REDACTED. */
  const pageWithUserinfo = () => {
    const url = new URL(fixtures.url('/simple'));
    url.username = 'someone';
    url.password = SECRETS.password;
    return url.href;
  };
  /** The options a client may keep secret, all at once. */
  const secretOptions = () => ({ url: pageWithUserinfo(), headers: { 'X-Private': SECRETS.header }, cookies: [{ name: 'session', value: SECRETS.cookie }] });

  const post = async (service: ServiceProcess, path: string, key: string, body: object) => {
    const response = await fetch(`${service.base}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: response.headers.get('content-type')?.includes('json') ? ((await response.json()) as any) : await response.arrayBuffer() };
  };

  /** The one trace of `service` whose root is `rootName`, once it holds every span named in `names`. */
  const oneTrace = async (service: string, rootName: string, names: string[]): Promise<JaegerTrace> => {
    let found: JaegerTrace | undefined;
    await expectEventually(async () => {
      const traces = (await tracesOf(service)).filter((trace) => trace.spans.some((span) => span.operationName === rootName && !parentOf(trace, span)));
      expect(traces, `traces of ${service} rooted at ${rootName}`).to.have.length(1);
      found = traces[0]!;
      const have = found.spans.map((span) => span.operationName);
      for (const name of names) expect(have, `${name} in\n${spanTree(found)}`).to.include(name);
    }, 60_000);
    return found!;
  };
  const spanNamed = (trace: JaegerTrace, name: string): JaegerSpan => {
    const span = trace.spans.find((candidate) => candidate.operationName === name);
    expect(span, `${name} in\n${spanTree(trace)}`).to.not.equal(undefined);
    return span!;
  };
  const expectParent = (trace: JaegerTrace, child: string, parent: string) => {
    for (const span of trace.spans.filter((candidate) => candidate.operationName === child)) {
      expect(parentOf(trace, span)?.operationName, `the parent of ${child} in\n${spanTree(trace)}`).to.equal(parent);
    }
  };
  const serviceOf = (trace: JaegerTrace, span: JaegerSpan) => trace.processes[span.processID]?.serviceName;
  /** Every attribute (and resource attribute) of the trace: none holds a secret. */
  const expectNoSecret = (trace: JaegerTrace) => {
    const values = [...trace.spans.flatMap((span) => span.tags), ...Object.values(trace.processes).flatMap((process) => process.tags)].map((t) => `${t.key}=${String(t.value)}`);
    for (const secret of [...Object.values(SECRETS), hostedKey]) {
      expect(values.filter((value) => value.includes(secret)), `attributes holding ${secret}`).to.deep.equal([]);
    }
  };
  /** Every span but the root has its parent in the trace. */
  const expectConnected = (trace: JaegerTrace) => {
    const roots = trace.spans.filter((span) => !parentOf(trace, span));
    expect(roots.map((span) => span.operationName), `one root in\n${spanTree(trace)}`).to.have.length(1);
  };

  it('a self-hosted capture (in-process renderer): the request, the key check, the cache, the dispatch and every phase of the page, in one trace', async () => {
    const response = await post(selfHosted!, '/screenshot', SECRETS.apiKey, { ...secretOptions(), cacheTtl: 60 });
    expect(response.status).to.equal(200);
    const trace = await oneTrace(services.selfHosted, 'POST /screenshot', [
      'viewfinder.auth',
      'viewfinder.result_cache.get',
      'viewfinder.dispatch',
      'renderer.slot',
      'renderer.context',
      'renderer.capture',
      'renderer.navigation',
      'renderer.smart_wait',
      'renderer.remove_ads',
      'renderer.encode',
      'viewfinder.result_cache.put',
    ]);
    expectConnected(trace);
    const root = spanNamed(trace, 'POST /screenshot');
    expect(tag(root, 'http.route')).to.equal('/screenshot');
    expect(tag(root, 'http.request.method')).to.equal('POST');
    expect(tag(root, 'http.response.status_code')).to.equal(200);
    expect(tag(root, 'viewfinder.mode')).to.equal('self-hosted');
    for (const child of ['viewfinder.auth', 'viewfinder.result_cache.get', 'viewfinder.dispatch']) expectParent(trace, child, 'POST /screenshot');
    for (const child of ['renderer.slot', 'renderer.context', 'renderer.capture']) expectParent(trace, child, 'viewfinder.dispatch');
    for (const child of ['renderer.navigation', 'renderer.encode']) expectParent(trace, child, 'renderer.capture');
    expect(tag(spanNamed(trace, 'viewfinder.result_cache.get'), 'viewfinder.cache.hit')).to.equal(false);
    const dispatch = spanNamed(trace, 'viewfinder.dispatch');
    expect(tag(dispatch, 'viewfinder.renderer')).to.equal('in-process');
    expect(tag(dispatch, 'url.full')).to.equal(pageWithUserinfo().replace(`someone:${SECRETS.password}`, 'REDACTED:REDACTED'));
    expectNoSecret(trace);
    // The access log line is written in the request's span.
    expect(selfHosted!.output()).to.match(new RegExp(`"trace_id":"${trace.traceID}","span_id":"${root.spanID}".*"msg":"Served a request"`));
  });

  it('a hosted capture sent to a renderer process: the API and the renderer service in one trace, joined by the traceparent header', async () => {
    const site = await store.createSite({ accountId, name: 'traced', allowedDomains: [] });
    const response = await post(hosted!, '/api/screenshot', hostedKey, { ...secretOptions(), site_id: site.id });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    const trace = await oneTrace(services.hosted, 'POST /api/screenshot', ['viewfinder.auth', 'viewfinder.dispatch', 'POST', 'POST /v1/captures', 'renderer.slot', 'renderer.capture', 'renderer.navigation', 'renderer.encode']);
    expectConnected(trace);
    expect(tag(spanNamed(trace, 'POST /api/screenshot'), 'viewfinder.mode')).to.equal('hosted');
    expectParent(trace, 'POST', 'viewfinder.dispatch');
    expectParent(trace, 'POST /v1/captures', 'POST');
    expectParent(trace, 'renderer.capture', 'POST /v1/captures');
    const server = spanNamed(trace, 'POST /v1/captures');
    expect(serviceOf(trace, server)).to.equal(services.renderer);
    expect(serviceOf(trace, spanNamed(trace, 'renderer.navigation'))).to.equal(services.renderer);
    expect(serviceOf(trace, spanNamed(trace, 'viewfinder.dispatch'))).to.equal(services.hosted);
    const client = spanNamed(trace, 'POST');
    expect(tag(client, 'server.address')).to.equal('127.0.0.1');
    expect(tag(client, 'http.response.status_code')).to.equal(200);
    expectNoSecret(trace);
  });

  it('an asynchronous capture and its webhook: the job and the delivery continue the trace of the request that queued them', async () => {
    const response = await post(selfHosted!, '/captures', SECRETS.apiKey, { ...secretOptions(), webhookUrl: receiver.url });
    expect(response.status, JSON.stringify(response.body)).to.equal(202);
    await expectEventually(async () => expect(receiver.deliveries).to.have.length.at.least(1), 60_000);
    const trace = await oneTrace(services.selfHosted, 'POST /captures', ['viewfinder.auth', 'job capture', 'viewfinder.dispatch', 'renderer.capture', 'job webhook']);
    expectConnected(trace);
    expectParent(trace, 'job capture', 'POST /captures');
    expectParent(trace, 'viewfinder.dispatch', 'job capture');
    expectParent(trace, 'job webhook', 'job capture');
    expect(tag(spanNamed(trace, 'job capture'), 'viewfinder.job.attempt')).to.equal(1);
    expectNoSecret(trace);
  });

  it('a monitor run asked for by a request: the run and its captures in the request\'s trace', async () => {
    const created = await post(hosted!, '/api/monitors', hostedKey, { name: 'traced', schedule: '0 0 1 1 *', pages: [{ name: 'home', url: fixtures.url('/simple'), removeAds: false }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const run = await post(hosted!, `/api/monitors/${created.body.id}/runs`, hostedKey, {});
    expect(run.status, JSON.stringify(run.body)).to.be.oneOf([200, 201, 202]);
    const trace = await oneTrace(services.hosted, 'POST /api/monitors/:monitorId/runs', ['job monitor-run', 'viewfinder.dispatch', 'POST /v1/captures', 'renderer.capture']);
    expectConnected(trace);
    expectParent(trace, 'job monitor-run', 'POST /api/monitors/:monitorId/runs');
    expect(serviceOf(trace, spanNamed(trace, 'renderer.capture'))).to.equal(services.renderer);
    expectNoSecret(trace);
  });
});

