import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { evaluateChecks } from '../../../services/api/src/monitors/checks.ts';
import { MAX_CONSOLE_ITEMS, MAX_MESSAGE_LENGTH, pageReportSchema, type PageReport } from '../../../services/renderer/src/report/page-report.ts';
import type { CaptureRequest, Renderer } from '../../../services/renderer/src/renderer.ts';
import type { FixtureServer } from '../../support/fixture-server.ts';
import { BROKEN_PAGES, HEALTH_CHECKS, startHealthPages } from '../../support/health-pages.ts';
import { sharedRenderer } from '../../support/harness.ts';

const validateReport = new Ajv2020({ allErrors: true, strict: false }).compile(pageReportSchema);

/** The page report, collected in the visit that takes the picture (real Chromium, pages on loopback). */
describe('page report (real Chromium)', () => {
  let pages: FixtureServer;
  let renderer: Renderer;

  before(async () => {
    pages = await startHealthPages();
    renderer = await sharedRenderer();
  });
  after(() => pages.close());

  const capture = (path: string, options: Partial<CaptureRequest> = {}) =>
    renderer.capture({ url: pages.url(path), quality: 'standard', fullPage: false, removeAds: false, ...options });

  const reportOf = async (path: string, options: Partial<CaptureRequest> = {}): Promise<PageReport> => {
    const result = await capture(path, { report: { axe: true, text: { selectors: ['#buy'] } }, ...options });
    expect(result.report, 'the capture has a report').to.not.equal(undefined);
    expect(validateReport(result.report), JSON.stringify(validateReport.errors)).to.equal(true);
    return result.report as PageReport;
  };

  describe('each broken page fails exactly its check, the healthy page none', () => {
    for (const [path, { fails }] of Object.entries(BROKEN_PAGES)) {
      it(`${path}: ${fails.length === 0 ? 'no check fails' : fails.join(', ')}`, async () => {
        const report = await reportOf(path);
        const verdict = evaluateChecks(report, HEALTH_CHECKS);
        expect(verdict.failures.map((failure) => failure.check), JSON.stringify(verdict.failures)).to.deep.equal(fails);
        expect(verdict.failing).to.equal(fails.length > 0);
      });
    }
  });

  it('a CSP report-only violation is kept apart, not counted as an error', async () => {
    const report = await reportOf('/csp-report-only');
    expect(report.console.cspReportOnly.total).to.be.at.least(1);
    expect(report.console.cspReportOnly.items[0]).to.include({ kind: 'csp-report-only' });
    expect(report.console.cspReportOnly.items[0]?.message).to.match(/report-only/i);
    expect(report.console.errors.total).to.equal(0);
  });

  it('the console error names its message, URL and line; the browser\'s own favicon 404 is kept apart', async () => {
    const report = await reportOf('/console-error');
    expect(report.console.errors.items).to.deep.equal([{ level: 'error', kind: 'console', message: 'checkout failed to start', url: pages.url('/console-error'), line: 3 }]);
    expect(report.failedRequests.total).to.equal(0);
    expect(report.console.browser.items.every((entry) => entry.kind === 'browser')).to.equal(true);
  });

  it('an uncaught exception is an error with its source URL and line', async () => {
    const html = '<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>x</h1></main>\n<script>\nnull.price;\n</script></body></html>';
    const result = await renderer.capture({ url: 'about:blank', html, quality: 'standard', fullPage: false, removeAds: false, report: {} });
    const [exception] = result.report?.console.errors.items ?? [];
    expect(exception).to.include({ level: 'error', kind: 'exception' });
    expect(exception?.message).to.match(/Cannot read properties of null/);
    expect(exception?.line).to.equal(3);
  });

  it('a 404 stylesheet and a failing fetch are failed requests with URL, type and reason; the page weight counts every request by type', async () => {
    const stylesheet = await reportOf('/missing-stylesheet');
    expect(stylesheet.failedRequests.items).to.deep.equal([{ url: pages.url('/missing.css'), type: 'stylesheet', reason: 'http', status: 404 }]);
    const fetch = await reportOf('/failing-fetch');
    expect(fetch.failedRequests.items).to.deep.equal([{ url: pages.url('/api/broken'), type: 'fetch', reason: 'http', status: 500 }]);
    expect(fetch.weight.requests).to.equal(3);
    expect(Object.keys(fetch.weight.byType).sort()).to.deep.equal(['document', 'fetch', 'stylesheet']);
    expect(fetch.weight.byType.document?.bytes).to.be.above(0);
    expect(fetch.weight.bytes).to.equal(Object.values(fetch.weight.byType).reduce((sum, type) => sum + type.bytes, 0));
  });

  it('a request that blockUrls refuses is a failed request of reason blocked', async () => {
    const report = await reportOf('/healthy', { blockUrls: ['*/style.css'] });
    expect(report.failedRequests.items).to.deep.equal([{ url: pages.url('/style.css'), type: 'stylesheet', reason: 'blocked', error: 'net::ERR_BLOCKED_BY_CLIENT.Inspector' }]);
  });

  it('the main document: its final status and the redirect chain that led there; a timeline entry per request', async () => {
    const report = await reportOf('/redirect-to-healthy');
    expect(report.document).to.deep.equal({ url: pages.url('/healthy'), status: 200, redirects: [{ url: pages.url('/redirect-to-healthy'), status: 302 }] });
    const document = report.timeline.items.find((entry) => entry.url === pages.url('/healthy'));
    expect(document).to.include({ type: 'document', status: 200 });
    expect(document?.startMs).to.be.at.least(0);
    expect(document?.durationMs).to.be.at.least(0);
    expect(report.timeline.total).to.equal(report.timeline.items.length);
  });

  it('each Web Vital comes with its unit and its rating; LCP, FCP and TTFB are measured on a painted page', async () => {
    const report = await reportOf('/healthy');
    expect(report.vitals.CLS).to.deep.equal({ value: 0, unit: 'score', rating: 'good' });
    for (const name of ['LCP', 'FCP', 'TTFB'] as const) {
      expect(report.vitals[name].unit).to.equal('ms');
      expect(report.vitals[name].value, name).to.be.a('number').and.at.least(0);
    }
    expect(report.vitals.TBT.value).to.be.a('number');
    expect(report.loadTimeMs).to.be.a('number');
  });

  it('axe\'s violations name the rule, the impact, the count and the first nodes\' selectors', async () => {
    const { accessibility } = await reportOf('/unlabeled-input');
    if (!accessibility || 'error' in accessibility) throw new Error(`axe did not run: ${JSON.stringify(accessibility)}`);
    const violations = accessibility.violations.items;
    expect(violations.find((violation) => violation.id === 'label')).to.deep.include({ id: 'label', impact: 'critical', count: 1, targets: ['#quantity'] });
  });

  it('text and axe are collected only when asked', async () => {
    const result = await capture('/healthy', { report: {} });
    expect(result.report).to.not.have.property('accessibility');
    expect(result.report).to.not.have.property('text');
  });

  it('a capture without report has no report', async () => {
    const result = await capture('/console-error');
    expect(result).to.not.have.property('report');
  });

  it('is bounded: a page that logs 100,000 errors gives capped lists, cut messages and the whole count', async () => {
    const report = await reportOf('/noisy?count=100000', { report: {} });
    expect(report.console.errors.total).to.equal(100_000);
    expect(report.console.errors.items).to.have.length(MAX_CONSOLE_ITEMS);
    expect(report.console.errors.items[0]?.message).to.have.length(MAX_MESSAGE_LENGTH);
    expect(Buffer.byteLength(JSON.stringify(report))).to.be.below(100_000);
  });

  it('holds no cookie, header or userinfo value the request sent, even when the page echoes them', async () => {
    const secrets = { cookie: 'cookie-secret-4821', header: 'header-secret-7730', user: 'visitor-9134', password: 'password-5526' };
    const url = pages.url('/echo-credentials').replace('http://', `http://${secrets.user}:${secrets.password}@`);
    const result = await renderer.capture({
      url,
      quality: 'standard',
      fullPage: false,
      removeAds: false,
      cookies: [{ name: 'session', value: secrets.cookie }],
      headers: { 'X-Secret': secrets.header },
      report: { text: { page: true } },
    });
    const serialized = JSON.stringify(result.report);
    // The page did echo them: the report saw the echo and redacted it.
    expect(result.report?.text?.page?.text).to.include('[redacted]');
    expect(result.report?.console.errors.items[0]?.message).to.include('[redacted]');
    for (const secret of Object.values(secrets)) expect(serialized, secret).to.not.include(secret);
    expect(result.report?.document.url).to.equal(pages.url('/echo-credentials'));
  });
});
