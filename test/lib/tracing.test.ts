import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../lib/env.ts';
import { expectEventually } from '../support/eventually.ts';
import { checkTracingEnv, safeUrl, tracingConfigured } from '../../lib/tracing.ts';
import { closedPort, startFixtureServer, type FixturePages } from '../support/fixture-server.ts';
import { otelPackagesMissing } from '../support/jaeger.ts';
import { API_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';

const REPORT_OTEL_LOADS = fileURLToPath(new URL('../support/report-otel-loads.ts', import.meta.url));
/** Whatever the suite's own environment holds: a service started with these has no OTEL_* configuration. */
const NO_OTEL = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_SDK_DISABLED: '' };

describe('tracing configuration (lib/tracing.ts): the standard OTEL_* variables, off unless they configure an exporter', () => {
  it('is on with an OTLP endpoint or OTEL_TRACES_EXPORTER=otlp, and off without, with OTEL_SDK_DISABLED=true or with OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingConfigured({})).to.equal(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'api', OTEL_TRACES_SAMPLER: 'always_on' })).to.equal(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).to.equal(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).to.equal(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).to.equal(true);
    expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'otlp' })).to.equal(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).to.equal(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).to.equal(false);
  });

  it('refuses, as a configuration error, a sampler, a ratio, an exporter or a protocol it cannot honour', () => {
    expect(() => checkTracingEnv({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).to.not.throw();
    expect(() => checkTracingEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' })).to.not.throw();
    expect(() => checkTracingEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).to.throw(ConfigError, /OTEL_TRACES_SAMPLER=jaeger_remote is not one of always_on/);
    expect(() => checkTracingEnv({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).to.throw(ConfigError, /not a ratio between 0 and 1/);
    expect(() => checkTracingEnv({ OTEL_TRACES_EXPORTER: 'zipkin' })).to.throw(ConfigError, /only otlp/);
    expect(() => checkTracingEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).to.throw(ConfigError, /OTLP\/HTTP/);
  });

  it('url.full keeps no userinfo and no signature-like query value (the semantic conventions\' redaction)', () => {
    expect(safeUrl('https://user:pass@example.com/a?b=1')).to.equal('https://REDACTED:REDACTED@example.com/a?b=1');
    expect(safeUrl('https://example.com/x?Signature=abc&sig=def&X-Goog-Signature=ghi&AWSAccessKeyId=jkl&page=2')).to.equal(
      'https://example.com/x?Signature=REDACTED&sig=REDACTED&X-Goog-Signature=REDACTED&AWSAccessKeyId=REDACTED&page=2',
    );
    expect(safeUrl('https://example.com/plain')).to.equal('https://example.com/plain');
    expect(safeUrl('not a url')).to.equal(undefined);
  });
});

describe('tracing off costs no module: with no OTEL_* variable, a service process that captures loads no OpenTelemetry module of its own (real process)', function () {
  this.timeout(180_000);
  let fixtures: FixturePages;
  const services: ServiceProcess[] = [];
  before(async () => {
    fixtures = await startFixtureServer();
  });
  after(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await fixtures.close();
  });
  const start = async (env: Record<string, string>) => {
    const service = await startServiceProcess(API_MAIN, { NODE_OPTIONS: `--import=${REPORT_OTEL_LOADS}`, ...env });
    services.push(service);
    return service;
  };

  it('captures with tracing off and resolves no @opentelemetry module of its own: only prom-client\'s @opentelemetry/api, and no SDK', async () => {
    const api = await start(NO_OTEL);
    const response = await fetch(`${api.base}/screenshot`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: fixtures.url('/simple') }) });
    expect(response.status).to.equal(200);
    await response.arrayBuffer();
    const loads = (api.output().match(/otel-module-loaded .*/g) ?? []).map((line) => line.split(' '));
    // prom-client (the process CPU metric, for its exemplars) requires @opentelemetry/api whatever
    // the service does; nothing of this project does, and no SDK module is loaded.
    expect(loads.filter(([, , , importer]) => !importer!.includes('/node_modules/')), 'loaded by this project').to.deep.equal([]);
    expect(loads.filter(([, url]) => !url!.includes('/node_modules/@opentelemetry/api/')), 'more than the API').to.deep.equal([]);
    expect(loads.filter(([, , , importer]) => !/\/node_modules\/(prom-client|@opentelemetry\/api)\//.test(importer!)), 'loaded by another than prom-client').to.deep.equal([]);
    // The access log line has no trace fields either. It reaches this process through the child's
    // stdout pipe, which may be read after the response arrived over TCP: wait for it.
    await expectEventually(async () => expect(api.output()).to.match(/"msg":"Served a request"/));
    expect(api.output()).to.not.match(/trace_id/);
  });

  it('with OTEL_EXPORTER_OTLP_ENDPOINT set, loads the SDK at start (the check above would see it)', async function () {
    const missing = await otelPackagesMissing();
    if (missing) {
      console.log(`      (skipped: ${missing})`);
      this.skip();
    }
    const api = await start({ ...NO_OTEL, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}` });
    expect(api.output()).to.match(/otel-module-loaded .*@opentelemetry\/sdk-trace\//);
  });
});
