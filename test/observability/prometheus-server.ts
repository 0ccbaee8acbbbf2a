import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedPort } from '../support/fixture-server.ts';
import { READY_TIMEOUT_MS } from '../support/processes.ts';

/** The chart's alerting rules, as the PrometheusRule ships them. */
export const RULES = fileURLToPath(new URL('../../charts/viewfinder/files/prometheus-rules.yaml', import.meta.url));

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  value: string;
}

export interface PrometheusServer {
  base: string;
  output(): string;
  query(promql: string): Promise<Sample[]>;
  /** Polls until `promql` returns samples that satisfy `accept` (up to a minute), then returns them. */
  eventually(promql: string, accept: (samples: Sample[]) => boolean): Promise<Sample[]>;
  /** The alerts pending or firing now (/api/v1/alerts). */
  alerts(): Promise<Alert[]>;
  stop(): Promise<void>;
}

/**
 * Debian's real Prometheus (`make test` installs the package) in a temp directory, scraping each
 * job's targets every second and evaluating `ruleFiles` every second.
 */
export async function startPrometheus(jobs: Record<string, string[]>, ruleFiles: string[] = [RULES]): Promise<PrometheusServer> {
  const version = spawnSync('prometheus', ['--version'], { encoding: 'utf8' });
  if (version.error) {
    throw new Error(`prometheus is not on PATH (${version.error.message}); \`make test\` installs Debian's prometheus package`);
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: ruleFiles,
    scrape_configs: Object.entries(jobs).map(([job, targets]) => ({ job_name: job, static_configs: [{ targets }] })),
  };
  // JSON is YAML: no YAML writer needed.
  writeFileSync(path.join(dataDir, 'prometheus.yml'), JSON.stringify(config, null, 2));
  const port = await closedPort();
  const base = `http://127.0.0.1:${port}`;
  let output = '';
  const child: ChildProcess = spawn(
    'prometheus',
    [`--config.file=${path.join(dataDir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dataDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    for (const deadline = Date.now() + READY_TIMEOUT_MS; ; ) {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
      if (await fetch(`${base}/-/ready`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`prometheus did not become ready:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }

  const query = async (promql: string): Promise<Sample[]> => {
    const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as { status: string; data: { result: Sample[] }; error?: string };
    if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
    return body.data.result;
  };
  return {
    base,
    output: () => output,
    query,
    async eventually(promql, accept) {
      let last: Sample[] = [];
      for (let attempt = 0; attempt < 120; attempt++) {
        last = await query(promql);
        if (accept(last)) return last;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      throw new Error(`Prometheus never answered ${promql} as expected; last answer: ${JSON.stringify(last)}\n${output}`);
    },
    async alerts() {
      const body = (await (await fetch(`${base}/api/v1/alerts`)).json()) as { data: { alerts: Alert[] } };
      return body.data.alerts;
    },
    stop,
  };
}
