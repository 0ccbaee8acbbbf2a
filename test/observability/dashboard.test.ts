import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { exposedSampleNames, viewfinderNamesIn } from '../support/metric-names.ts';
import { promtool } from './promtool.ts';

const DASHBOARD = fileURLToPath(new URL('../../charts/viewfinder/files/grafana-dashboard.json', import.meta.url));

interface Panel {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { expr: string; refId: string; exemplar?: boolean }[];
  fieldConfig?: { defaults?: { links?: { title: string; url: string; targetBlank?: boolean }[] } };
}

interface Variable {
  name: string;
  type: string;
  query?: string;
  current?: { value?: string };
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { uid: string; title: string; panels: Panel[]; templating: { list: Variable[] } };
const graphs = dashboard.panels.filter((panel) => panel.type !== 'row');
const expressions = graphs.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

describe('Grafana dashboard (charts/viewfinder/files/grafana-dashboard.json)', () => {
  it('is a dashboard with a uid, a Prometheus data-source variable and panels that each query it', () => {
    expect(dashboard.uid).to.be.a('string').and.not.be.empty;
    expect(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource')).to.equal(true);
    expect(graphs).to.not.be.empty;
    for (const panel of graphs) {
      expect(panel.targets, panel.title).to.not.be.empty;
      expect(panel.datasource?.uid, panel.title).to.equal('${datasource}');
    }
  });

  it('gives every panel a unique title and every target a refId', () => {
    const titles = graphs.map((panel) => panel.title);
    expect(new Set(titles).size).to.equal(titles.length);
    for (const panel of graphs) for (const target of panel.targets ?? []) expect(target.refId, panel.title).to.match(/^[A-Z]$/);
  });

  it('shows request rate, latency p50/p95/p99 by profile, the queue, errors by reason, browser restarts and rate limits', () => {
    const all = expressions.map((e) => e.expr).join('\n');
    expect(all).to.match(/rate\(viewfinder_http_request_duration_seconds_count/);
    for (const quantile of ['0.5', '0.95', '0.99']) {
      expect(all).to.include(`histogram_quantile(${quantile}, sum by (le, profile) (rate(viewfinder_capture_duration_seconds_bucket`);
    }
    expect(all).to.include('viewfinder_render_queue_depth');
    expect(all).to.match(/sum by \(outcome\) \(rate\(viewfinder_capture_duration_seconds_count\{outcome!="success"\}/);
    expect(all).to.include('viewfinder_browser_restarts_total');
    expect(all).to.include('viewfinder_rate_limited_total');
    expect(all).to.include('sum by (reason) (rate(viewfinder_auth_failures_total');
  });

  it("shows the exemplars of the capture latency and links from it to the traces of the time range, through a traces_url variable empty by default", () => {
    const panel = graphs.find((candidate) => candidate.title === 'Capture latency by profile')!;
    const withExemplars = (panel.targets ?? []).filter((target) => target.exemplar === true);
    expect(withExemplars.map((target) => target.expr)).to.deep.equal([
      'histogram_quantile(0.99, sum by (le, profile) (rate(viewfinder_capture_duration_seconds_bucket{outcome="success"}[$__rate_interval])))',
    ]);
    const variable = dashboard.templating.list.find((candidate) => candidate.name === 'traces_url');
    expect(variable).to.include({ type: 'textbox', query: '' });
    expect(variable?.current?.value).to.equal('');
    const links = panel.fieldConfig?.defaults?.links ?? [];
    expect(links).to.have.length(1);
    // The Jaeger UI's search: the API's traces between the dashboard's from and to (ms, Jaeger wants µs).
    const url = new URL(links[0]!.url.replace('${traces_url}', 'https://jaeger.example'));
    expect(url.pathname).to.equal('/search');
    expect(Object.fromEntries(url.searchParams)).to.deep.equal({ service: 'viewfinder-api', lookback: 'custom', start: '${__from}000', end: '${__to}000', limit: '20' });
    expect(links[0]!.targetBlank).to.equal(true);
    // Only the latency panels ask for exemplars, and the link is the only data link.
    for (const other of graphs.filter((candidate) => !['Capture latency by profile', 'Request latency (API)'].includes(candidate.title))) {
      expect((other.targets ?? []).some((target) => target.exemplar), other.title).to.equal(false);
      expect(other.fieldConfig?.defaults?.links, other.title).to.equal(undefined);
    }
  });

  it('queries only metrics that the services register', async () => {
    const exposed = await exposedSampleNames();
    for (const { panel, expr } of expressions) {
      const names = viewfinderNamesIn(expr);
      expect(names, `${panel}: ${expr}`).to.not.be.empty;
      for (const name of names) expect(exposed.has(name), `${panel}: ${name} is not registered by either service`).to.equal(true);
    }
  });

  it('has only valid PromQL, as promtool parses it', () => {
    // promtool parses expressions only inside rule files: each target becomes a recording rule.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-dashboard-'));
    try {
      const rules = expressions
        .map(({ expr }, i) => `      - record: dashboard:expr_${i}\n        expr: ${JSON.stringify(expr.replaceAll('$__rate_interval', '5m'))}`)
        .join('\n');
      writeFileSync(path.join(dir, 'rules.yaml'), `groups:\n  - name: dashboard\n    rules:\n${rules}\n`);
      const { status, output } = promtool(['check', 'rules', path.join(dir, 'rules.yaml')]);
      expect(status, output).to.equal(0);
      expect(output).to.include(`SUCCESS: ${expressions.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
