import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { expect } from 'chai';
import { PNG } from 'pngjs';
import { parse } from 'yaml';
import { openSqliteStore } from '../../lib/store/sqlite.ts';
import { GROUP, VERSION, type PageMonitorResource } from '../../operator/src/resources.ts';
import { OPERATOR_SERVICE_ACCOUNT, REAL_KUBECONFIG, startRealTarget, type KubeTarget } from '../operator/support.ts';
import { closedPort } from '../support/fixture-server.ts';
import { HELM, KUBECTL, helm } from '../support/k8s-tools.ts';
import { API_MAIN, RENDERER_MAIN, startServiceProcess, type ServiceProcess } from '../support/processes.ts';
import { PROMETHEUS_RULES, startPrometheus, type PrometheusProcess } from '../support/prometheus.ts';
import { startTerminal, type BlockRun, type Terminal } from '../support/terminal.ts';
import { skippedWithoutCluster } from '../support/cluster.ts';

const root = path.join(import.meta.dirname, '..', '..');
const OPERATOR_MAIN = fileURLToPath(new URL('../../operator/src/main.ts', import.meta.url));
const doc = readFileSync(path.join(root, 'docs', 'monitors.md'), 'utf8');
const blocks = [...doc.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang: lang as string, code: code as string }));
/** The index of the first `sh` block that contains every marker, after `from`. */
const shIndex = (markers: string[], from = -1): number => {
  const index = blocks.findIndex((b, i) => i > from && b.lang === 'sh' && markers.every((marker) => b.code.includes(marker)));
  if (index < 0) throw new Error(`docs/monitors.md has no sh block with ${markers.join(' and ')} after block ${from}`);
  return index;
};
/** The ```text block that follows block `index` (the output the doc shows for it). */
const outputAfter = (index: number): string => {
  const next = blocks[index + 1];
  if (next?.lang !== 'text') throw new Error(`docs/monitors.md shows no output after:\n${blocks[index]?.code}`);
  return next.code;
};

/**
 * The shape of kubectl's or curl's output: lines, whitespace collapsed, ages (`6s`, `1m12s`) and
 * numbers (`0.0873`, `8.73`) and ids (`img_...`, `job_...`) in place of their values, which differ
 * between any two runs. The doc's sample output must have the shape of the real one.
 */
const shape = (text: string): string[] =>
  text
    .trim()
    .split('\n')
    .map((line) =>
      line
        .replace(/\b(job|img|mon|run)_[0-9a-f]+\b/g, '<id>')
        .replace(/\b\d+[smhd](\d+[smh])?\b/g, '<age>')
        .replace(/\d+(\.\d+)?/g, '<n>')
        .replace(/\s+/g, ' ')
        .trim(),
    );

/**
 * docs/monitors.md's walk-through, run as written in one bash session (test/support/terminal.ts):
 * kubectl against a real kube-apiserver (test/cluster, KUBECONFIG) with the CRDs, the operator
 * (operator/src/main.ts), the hosted API on the embedded store and a renderer with Chromium
 * (services/*\/src/main.ts) as processes, and Debian's Prometheus with the chart's rules scraping
 * the API as the chart's ServiceMonitor has the Prometheus Operator scrape it.
 *
 * Only what a test machine cannot have is replaced, and nothing else: the page
 * (https://shop.example.com/) is a loopback page this test changes; the namespace `shop` is a fresh
 * test namespace; the port-forwards are left out and localhost:8080 and localhost:9090 become the
 * API's and Prometheus's own ports; `$ACCOUNT` comes from the command of install-kubernetes.md run
 * beside the store rather than in the API's pod; Prometheus scrapes and evaluates every second
 * (not 30) and the operator reads the runs every second (MONITOR_STATUS_INTERVAL_SECONDS=1).
 */
describe('docs/monitors.md: from kubectl apply of a PageMonitor to an alert in Prometheus, as written', function () {
  this.timeout(180_000);
  if (skippedWithoutCluster('the walk-through against a real API server')) return;

  let page: { server: http.Server; url: string; banner: { text: string; colour: string }; broken: boolean };
  let target: KubeTarget;
  let dataDir: string;
  let renderer: ServiceProcess | undefined;
  let api: ServiceProcess | undefined;
  let operator: ServiceProcess | undefined;
  let prometheus: PrometheusProcess | undefined;
  let terminal: Terminal | undefined;
  /** The doc's commands as they run here (see the describe's comment). */
  let here: (code: string) => string;

  const custom = () => target.kubeConfig.makeApiClient(CustomObjectsApi);
  const resource = async () =>
    (await custom().getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: target.namespace, plural: 'pagemonitors', name: 'storefront' })) as PageMonitorResource;
  /** Runs the doc's block `index` in the session; every command of it must succeed. */
  const run = async (index: number, timeoutMs = 150_000): Promise<BlockRun> => {
    const code = here(blocks[index]?.code as string);
    const result = await (terminal as Terminal).run(code, timeoutMs);
    expect(result.failed, `${code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`).to.deep.equal([]);
    return result;
  };

  before(async () => {
    page = await startShopPage();
    target = await startRealTarget();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-monitors-doc-'));
    renderer = await startServiceProcess(RENDERER_MAIN, { RENDER_CONCURRENCY: '2' });
    api = await startServiceProcess(API_MAIN, {
      MODE: 'hosted',
      DATA_DIR: dataDir,
      RENDERER_URL: renderer.base,
      OPERATOR_SERVICE_ACCOUNTS: `${target.namespace}/${OPERATOR_SERVICE_ACCOUNT}`,
      KUBECONFIG: REAL_KUBECONFIG as string,
    });
    const operatorPort = await closedPort();
    operator = await startServiceProcess(
      OPERATOR_MAIN,
      {
        API_URL: `${api.base}/`,
        OPERATOR_SERVICE_ACCOUNT: `${target.namespace}/${OPERATOR_SERVICE_ACCOUNT}`,
        WATCH_NAMESPACE: target.namespace,
        OPERATOR_HOST: '127.0.0.1',
        OPERATOR_PORT: String(operatorPort),
        LEASE_NAME: `viewfinder-operator-${operatorPort}`,
        MAX_RETRY_DELAY_SECONDS: '1',
        MONITOR_STATUS_INTERVAL_SECONDS: '1',
        KUBECONFIG: REAL_KUBECONFIG as string,
      },
      { port: operatorPort },
    );
    prometheus = await startPrometheus({
      global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
      rule_files: [PROMETHEUS_RULES],
      scrape_configs: [scrapeConfigOfTheChart(api.port)],
    });

    const { MONGODB_URI: _ignored, ...env } = process.env;
    terminal = startTerminal({
      cwd: dataDir,
      env: { ...env, KUBECONFIG: REAL_KUBECONFIG, PATH: `${path.dirname(KUBECTL)}:${path.dirname(process.execPath)}:${env.PATH}` },
    });
    here = (code) =>
      code
        .replaceAll('https://shop.example.com/', page.url)
        .replace(/\bshop\b/g, target.namespace)
        .replaceAll('http://localhost:8080', (api as ServiceProcess).base)
        .replaceAll('http://localhost:9090', (prometheus as PrometheusProcess).base)
        .split('\n')
        .filter((line) => !line.includes(' port-forward '))
        .join('\n');

    // $ACCOUNT, by the command of "A first account" in install-kubernetes.md, on the API's store.
    const install = readFileSync(path.join(root, 'docs', 'install-kubernetes.md'), 'utf8');
    const command = /^ACCOUNT=\$\(kubectl -n viewfinder exec deploy\/viewfinder-api -- (node bin\/viewfinder\.ts accounts create .*)\)$/m.exec(install)?.[1];
    if (!command) throw new Error('docs/install-kubernetes.md no longer creates $ACCOUNT with kubectl exec ... accounts create');
    const account = await terminal.run(`ACCOUNT=$(DATA_DIR=${dataDir} ${command.replace('bin/viewfinder.ts', path.join(root, 'bin', 'viewfinder.ts'))})\necho "$ACCOUNT"`);
    expect(account.failed, account.stderr).to.deep.equal([]);
    expect(account.stdout.trim()).to.match(/^acct_/);
  });

  after(async function () {
    this.timeout(120_000);
    await terminal?.close();
    await operator?.stop();
    await prometheus?.close();
    await api?.stop();
    await renderer?.stop();
    await new Promise<void>((resolve) => page?.server.close(() => resolve()));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    await target?.close();
  });

  let applied: number;
  let firstRun: number;
  let secondRun: number;
  let alerts: number;
  let runs: number;

  it('1. applies the PageMonitor and the ApiKey with kubectl apply -f -; both become Ready; kubectl get vfmon shows the columns', async () => {
    // The doc's schedule is every quarter hour: a scheduled run in the next seconds would take the
    // baseline before step 2 does (and show in this step's table). Start clear of it.
    const untilQuarter = 15 * 60_000 - (Date.now() % (15 * 60_000));
    if (untilQuarter < 30_000) await new Promise((resolve) => setTimeout(resolve, untilQuarter + 2000));
    applied = shIndex(['kubectl apply -f -', 'kind: PageMonitor']);
    const { stdout } = await run(applied);
    expect(shape(stdout)).to.deep.equal(shape(here(outputAfter(applied))));
    const monitor = await resource();
    expect(monitor.status?.monitorId).to.match(/^mon_/);
    expect(monitor.status?.nextRunTime, 'the next quarter hour').to.match(/^\d{4}-\d\d-\d\dT\d\d:(00|15|30|45):00/);
  });

  it('2. runs it now with curl and the monitor id from .status.monitorId; the first picture becomes the baseline', async () => {
    firstRun = shIndex(['POST', '/runs', '.status.monitorId']);
    const queued = await run(firstRun);
    expect(shape(queued.stdout)).to.deep.equal(shape(here(outputAfter(firstRun))));

    const waited = shIndex(['--for=condition=Changed=False'], firstRun);
    const { stdout } = await run(waited);
    expect(shape(stdout)).to.deep.equal(shape(here(outputAfter(waited))));
    const monitor = await resource();
    expect(monitor.status?.pages?.[0]).to.include({ name: 'home', changed: false });
    expect(monitor.status?.pages?.[0]?.baselineCaptureId).to.equal(monitor.status?.pages?.[0]?.lastCaptureId);
  });

  it('3. the page changes: the next run makes Changed True, kubectl get vfmon shows the largest diff, and a PageChanged event says by how much', async () => {
    page.banner = { text: 'Summer sale: everything must go', colour: '#e76f51' };
    secondRun = shIndex(['--for=condition=Changed ', 'reason=PageChanged']);
    const { stdout: output } = await run(secondRun);
    expect(shape(output)).to.deep.equal(shape(here(outputAfter(secondRun))));
    const monitor = await resource();
    const home = monitor.status?.pages?.[0];
    expect(home).to.include({ name: 'home', changed: true });
    // The banner is 1280 x 64 of the 1280 x 720 picture: about 8.9 % of its pixels (its text anti-aliased).
    expect(home?.diffRatio).to.be.within(0.06, 0.1);
    expect(home?.regions?.[0]).to.deep.include({ left: 0, top: 48, width: 1280 });
    expect(monitor.status?.largestDiffRatio).to.equal(home?.diffRatio);
    expect(output).to.match(new RegExp(`\\sTrue\\s+${String(home?.diffRatio).replace('.', '\\.')}\\s`));
    expect(output).to.include(`Page home changed: ${((home?.diffRatio as number) * 100).toFixed(2)} % of its pixels differ from the baseline (threshold 1.00 %), run ${monitor.status?.lastRunId}`);
  });

  it('4. Prometheus, with the chart\'s rules and scraping as its ServiceMonitor does, fires ViewfinderMonitorPageChanged for the page', async () => {
    alerts = shIndex(['/api/v1/alerts', 'ViewfinderMonitorPageChanged']);
    const expected = here(outputAfter(alerts)).trim();
    let last = '';
    for (const deadline = Date.now() + 60_000; last !== expected; ) {
      if (Date.now() > deadline) throw new Error(`the alert never showed as the doc says:\n${expected}\nlast answer: ${JSON.stringify(last)}\nalerts: ${JSON.stringify(await prometheus?.alerts())}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      last = (await run(alerts)).stdout.trim();
    }
    const [alert] = ((await prometheus?.alerts()) ?? []).filter((candidate) => candidate.labels.alertname === 'ViewfinderMonitorPageChanged');
    expect(alert?.annotations.summary).to.equal(`Page home of monitor ${target.namespace}/storefront changed`);
    expect(alert?.labels.severity).to.equal('warning');
  });

  it('5. shows the run with its diff picture, accepts it as the baseline, and after the next run the alert is gone', async () => {
    runs = shIndex(['runs.json', 'diffImageId']);
    const { stdout } = await run(runs);
    expect(shape(stdout)).to.deep.equal(shape(here(outputAfter(runs))));
    expect(JSON.parse(stdout)).to.deep.include({ outcome: 'changed' });
    const diff = PNG.sync.read(readFileSync(path.join(dataDir, 'diff.png')));
    expect([diff.width, diff.height]).to.deep.equal([1280, 720]);

    const accept = shIndex(['/baseline', 'runs.json']);
    const accepted = await run(accept);
    expect(shape(accepted.stdout)).to.deep.equal(shape(here(outputAfter(accept))));
    const changedRun = JSON.parse(readFileSync(path.join(dataDir, 'runs.json'), 'utf8'))[0];
    expect(JSON.parse(accepted.stdout)).to.deep.equal({ home: changedRun.pages[0].captureImageId });

    const rerun = shIndex(['reason=BaselineAccepted']);
    const events = await run(rerun);
    expect(shape(events.stdout)).to.deep.equal(shape(here(outputAfter(rerun))));
    expect(events.stdout).to.include(`Page home: picture ${changedRun.pages[0].captureImageId} was accepted as the new baseline`);
    const monitor = await resource();
    expect(monitor.status?.pages?.[0]).to.include({ changed: false, diffRatio: 0, baselineCaptureId: changedRun.pages[0].captureImageId });

    // The curl of step 4 prints nothing once Prometheus has seen the new ratio.
    let last = 'firing';
    for (const deadline = Date.now() + 60_000; last !== ''; ) {
      if (Date.now() > deadline) throw new Error(`the alert is still there: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      last = (await run(alerts)).stdout.trim();
    }
    expect(((await prometheus?.alerts()) ?? []).filter((alert) => alert.labels.alertname?.startsWith('ViewfinderMonitor'))).to.deep.equal([]);
  });

  it('6. the page breaks: the next run makes Healthy False with one ChecksFailing event naming each check, the run holds the evidence, ViewfinderMonitorPageChecksFailing fires; fixed, all clears', async function () {
    this.timeout(300_000);
    page.broken = true;
    const broke = shIndex(['--for=condition=Healthy=False', 'reason=ChecksFailing']);
    const { stdout } = await run(broke);
    expect(shape(stdout)).to.deep.equal(shape(here(outputAfter(broke))));
    const monitor = await resource();
    expect(monitor.status?.conditions?.find((condition) => condition.type === 'Healthy')).to.include({ status: 'False', reason: 'ChecksFailing' });
    expect(monitor.status?.pages?.[0]?.failingChecks?.map((failure) => failure.check)).to.deep.equal(['maxConsoleErrors', 'text[0].contains']);

    const evidence = shIndex(['verdict.failures', 'report.console.errors']);
    const shown = await run(evidence);
    expect(shown.stdout.trim()).to.equal(here(outputAfter(evidence)).trim());

    const alert = shIndex(['/api/v1/alerts', 'ViewfinderMonitorPageChecksFailing']);
    const expected = here(outputAfter(alert)).trim();
    let last = '';
    // The rule's `for: 1m`, then a scrape and an evaluation (every second here).
    for (const deadline = Date.now() + 150_000; last !== expected; ) {
      if (Date.now() > deadline) throw new Error(`the alert never showed as the doc says:\n${expected}\nlast answer: ${JSON.stringify(last)}\nalerts: ${JSON.stringify(await prometheus?.alerts())}`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      last = (await run(alert)).stdout.trim();
    }

    page.broken = false;
    const fixed = shIndex(['--for=condition=Healthy=True', 'reason=ChecksPassing']);
    const back = await run(fixed);
    expect(shape(back.stdout)).to.deep.equal(shape(here(outputAfter(fixed))));
    for (const deadline = Date.now() + 60_000; last !== ''; ) {
      if (Date.now() > deadline) throw new Error(`the alert is still there: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      last = (await run(alert)).stdout.trim();
    }
    const failingEvents = await terminal!.run(`kubectl -n ${target.namespace} get events --field-selector involvedObject.name=storefront,reason=ChecksFailing -o jsonpath='{range .items[*]}{.count}{"\\n"}{end}'`);
    expect(failingEvents.stdout.trim(), 'one ChecksFailing event, written once, for the one change of state').to.equal('1');
  });

  it('7. deleting the PageMonitor deletes the monitor in the API with its runs and pictures', async () => {
    const cleanUp = shIndex(['kubectl', 'delete pagemonitor/storefront']);
    const { stdout } = await run(cleanUp);
    expect(shape(stdout)).to.deep.equal(shape(here(outputAfter(cleanUp))));
    const store = openSqliteStore({ dataDir });
    try {
      const [account] = await store.listAccounts();
      expect(await store.listMonitors(account?.id as string)).to.deep.equal([]);
      // The account's own key (accounts create makes one) stays; the ApiKey's is revoked.
      expect((await store.listKeys(account?.id as string)).filter((key) => key.managedBy)).to.deep.equal([]);
    } finally {
      await store.close();
    }
    const images = path.join(dataDir, 'monitor-images');
    expect(existsSync(images) ? readdirSync(images, { recursive: true }).filter((entry) => statSync(path.join(images, String(entry))).isFile()) : []).to.deep.equal([]);
  });
});

/**
 * The page of the walk-through: a header, a banner the test changes, and a clock that ticks (which
 * the doc's hideSelectors hides), served on loopback.
 */
async function startShopPage(): Promise<{ server: http.Server; url: string; banner: { text: string; colour: string }; broken: boolean }> {
  const state = { banner: { text: 'Winter sale: 20 % off', colour: '#2a9d8f' }, broken: false };
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<style>body{margin:0;font:16px sans-serif}header{height:48px;background:#264653;color:#fff;display:flex;justify-content:space-between;align-items:center;padding:0 16px}
.banner{height:64px;line-height:64px;text-align:center;color:#fff;font-size:28px;background:${state.banner.colour}}main{padding:16px}</style></head>
<body><header><b>Shop</b><span class="clock"></span></header><div class="banner">${state.banner.text}</div>
${state.broken ? '<main><h1>Something went wrong</h1></main><script>const products = undefined; products.map((product) => product.name);</script>' : '<main><h1>Our products</h1><p>Everything you need, delivered tomorrow.</p></main>'}
<script>const clock = document.querySelector('.clock'); setInterval(() => { clock.textContent = new Date().toISOString(); }, 50);</script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    server,
    url,
    get banner() {
      return state.banner;
    },
    set banner(next) {
      state.banner = next;
    },
    /** A deploy that broke the page: its script throws, and the product list is gone. */
    get broken() {
      return state.broken;
    },
    set broken(next) {
      state.broken = next;
    },
  };
}

/**
 * How the Prometheus Operator scrapes the API for the chart's ServiceMonitor (rendered by helm): a
 * job named after the Service, the target labelled with the Service's namespace, the Service, the
 * endpoint's port name, the pod and the container, and the endpoint's honorLabels.
 */
function scrapeConfigOfTheChart(apiPort: number): object {
  const rendered = helm(['template', 'viewfinder', path.join(root, 'charts', 'viewfinder'), '--namespace', 'viewfinder', '--set', 'metrics.serviceMonitor.enabled=true', '--show-only', 'templates/servicemonitor.yaml']);
  if (rendered.status !== 0) throw new Error(`${HELM} template failed:\n${rendered.output}`);
  const endpoint = parse(rendered.stdout).spec.endpoints[0] as { port: string; path: string; honorLabels?: boolean };
  return {
    job_name: 'viewfinder-api',
    honor_labels: endpoint.honorLabels ?? false,
    metrics_path: endpoint.path,
    static_configs: [{ targets: [`127.0.0.1:${apiPort}`], labels: { namespace: 'viewfinder', service: 'viewfinder-api', endpoint: endpoint.port, pod: 'viewfinder-api-0', container: 'api' } }],
  };
}
