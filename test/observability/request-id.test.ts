import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../services/api/src/app.ts';
import { createRemoteRenderer, type RemoteRenderer } from '../../services/api/src/remote-renderer.ts';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.ts';
import { sharedRenderer, testConfig } from '../support/harness.ts';
import { captureLog, type CapturedLog } from '../support/log-capture.ts';
import { startRendererService, type RendererService } from '../support/renderer-service.ts';

const API_KEY = 'vf_log_test_key_7c2d91aa';
const RENDERER_TOKEN = 'renderer-log-test-token-31f0';

describe('structured logs across the API and the renderer service', () => {
  let fixtures: FixtureServer;
  let apiLog: CapturedLog;
  let rendererLog: CapturedLog;
  let service: RendererService;
  let remote: RemoteRenderer;
  let app: ReturnType<typeof createApp>;

  before(async () => {
    fixtures = await startFixtureServer();
    apiLog = captureLog('viewfinder-api');
    rendererLog = captureLog('viewfinder-renderer');
    service = await startRendererService(await sharedRenderer(), { token: RENDERER_TOKEN, logger: rendererLog.logger });
    const config = testConfig({ API_KEY, RENDERER_URL: service.url, RENDERER_TOKEN, LOG_LEVEL: 'debug' });
    remote = await createRemoteRenderer(config.remoteRenderer!, apiLog.logger);
    app = createApp({ config, renderer: remote, logger: apiLog.logger });
  });
  after(async () => {
    await remote.close();
    await service.close();
    await fixtures.close();
  });

  const capture = (headers: Record<string, string>) =>
    request(app.callback()).post('/screenshot').set('Content-Type', 'application/json').set(headers).send({ url: fixtures.url('/simple') });
  const linesWith = (log: CapturedLog, requestId: string) => log.lines().filter((line) => line.requestId === requestId);

  it("carries the client's X-Request-Id to the renderer: both services log it", async () => {
    const response = await capture({ 'X-API-Key': API_KEY, 'X-Request-Id': 'trace-4f1c-0042' });
    expect(response.status).to.equal(200);
    expect(response.headers['x-request-id']).to.equal('trace-4f1c-0042');
    const apiLines = linesWith(apiLog, 'trace-4f1c-0042');
    expect(apiLines).to.have.length(1);
    expect(apiLines[0]).to.include({ name: 'viewfinder-api', method: 'POST', path: '/screenshot', status: 200, msg: 'Served a request' });
    const rendererLines = linesWith(rendererLog, 'trace-4f1c-0042');
    expect(rendererLines).to.have.length(1);
    expect(rendererLines[0]).to.include({ name: 'viewfinder-renderer', method: 'POST', path: '/v1/captures', status: 200, msg: 'Served a request' });
  });

  it('makes up an id when the client sends none, returns it, and the renderer logs that one', async () => {
    const response = await capture({ 'X-API-Key': API_KEY });
    const requestId = response.headers['x-request-id'] as string;
    expect(requestId).to.match(/^[0-9a-f-]{36}$/);
    expect(linesWith(apiLog, requestId)).to.have.length(1);
    expect(linesWith(rendererLog, requestId)).to.have.length(1);
  });

  it('replaces an X-Request-Id that could forge log content', async () => {
    const response = await capture({ 'X-API-Key': API_KEY, 'X-Request-Id': 'x" {"level":60, "msg":"forged"}' });
    expect(response.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    expect(linesWith(rendererLog, response.headers['x-request-id'] as string)).to.have.length(1);
  });

  it("logs the API's renderer status polls (GET /v1/status, every 2 s per renderer) at debug, not info", async () => {
    await remote.probe();
    await remote.probe();
    const polls = rendererLog.lines().filter((line) => line.path === '/v1/status');
    expect(polls.length, 'the probes reached the renderer').to.be.at.least(2);
    expect(polls.map((line) => line.level)).to.satisfy((levels: number[]) => levels.every((level) => level === 20));
  });

  it('never writes API_KEY or RENDERER_TOKEN, also when a client sends a wrong key', async () => {
    expect((await capture({ 'X-API-Key': `${API_KEY}-wrong` })).status).to.equal(401);
    expect((await capture({ Authorization: `Bearer ${API_KEY}` })).status).to.equal(200);
    const written = apiLog.text() + rendererLog.text();
    expect(apiLog.lines().length).to.be.greaterThan(3);
    expect(written).to.not.include(API_KEY);
    expect(written).to.not.include(RENDERER_TOKEN);
  });
});
