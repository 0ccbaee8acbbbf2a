/**
 * Debian's real Prometheus (`make test` installs the package) as a process of the test, on a free
 * loopback port, with the configuration given (JSON is YAML) and a data directory of its own.
 */
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedPort } from './fixture-server.ts';
import { READY_TIMEOUT_MS } from './processes.ts';

/** The chart's alerting and recording rules, as its PrometheusRule ships them. */
export const PROMETHEUS_RULES = fileURLToPath(new URL('../../charts/viewfinder/files/prometheus-rules.yaml', import.meta.url));

export interface PrometheusSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

/** One series' exemplars, as GET /api/v1/query_exemplars lists them. */
export interface PrometheusExemplars {
  seriesLabels: Record<string, string>;
  exemplars: { labels: Record<string, string>; value: string; timestamp: number }[];
}

export interface PrometheusProcess {
  base: string;
  /** Everything Prometheus wrote so far. */
  output(): string;
  /** An instant query through the HTTP API; throws with Prometheus's error when it fails. */
  query(promql: string): Promise<PrometheusSample[]>;
  /** The active (pending or firing) alerts, as GET /api/v1/alerts lists them. */
  alerts(): Promise<PrometheusAlert[]>;
  /** GET /api/v1/query_exemplars for `promql` over the last hour (needs the exemplar-storage feature flag). */
  exemplars(promql: string): Promise<PrometheusExemplars[]>;
  /** Polls `promql` until its samples satisfy `accept` (up to a minute), then returns them. */
  eventually(promql: string, accept: (samples: PrometheusSample[]) => boolean): Promise<PrometheusSample[]>;
  close(): Promise<void>;
}

/** The configuration of tests that scrape their own processes: every second, the chart's rules. */
export function scrapeEverySecond(jobs: Record<string, string[]>): object {
  return {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: [PROMETHEUS_RULES],
    scrape_configs: Object.entries(jobs).map(([job, targets]) => ({ job_name: job, static_configs: [{ targets }] })),
  };
}

/**
 * Starts Prometheus with `config` (global, rule_files, scrape_configs...) and waits for /-/ready;
 * `features` are --enable-feature flags (exemplar-storage).
 */
export async function startPrometheus(config: object, features: string[] = []): Promise<PrometheusProcess> {
  const version = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (version.error) throw new Error(`prometheus is not on PATH (${version.error.message}); \`make test\` installs Debian's prometheus package`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-prometheus-'));
  writeFileSync(path.join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(
    'prometheus',
    [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', ...features.map((feature) => `--enable-feature=${feature}`)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const deadline = Date.now() + READY_TIMEOUT_MS; ; ) {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
      if (await fetch(`${base}/-/ready`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`prometheus did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (err) {
    await close();
    throw err;
  }
  const get = async <T>(what: string): Promise<T> => {
    const body = (await (await fetch(`${base}${what}`)).json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${what} failed: ${body.error}`);
    return body.data;
  };
  const query = async (promql: string) => (await get<{ result: PrometheusSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result;
  return {
    base,
    output: () => output,
    query,
    alerts: async () => (await get<{ alerts: PrometheusAlert[] }>('/api/v1/alerts')).alerts,
    exemplars: async (promql) => {
      const end = Date.now() / 1000;
      return get<PrometheusExemplars[]>(`/api/v1/query_exemplars?query=${encodeURIComponent(promql)}&start=${end - 3600}&end=${end}`);
    },
    async eventually(promql, accept) {
      let last: PrometheusSample[] = [];
      for (let attempt = 0; attempt < 120; attempt++) {
        last = await query(promql);
        if (accept(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error(`Prometheus never answered ${promql} as expected; last answer: ${JSON.stringify(last)}\n${output}`);
    },
    close,
  };
}
