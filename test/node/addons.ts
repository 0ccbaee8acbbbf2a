/**
 * The node's autoscaling add-ons (metrics-server, KEDA, Prometheus with Kubernetes discovery), as
 * the real-node leg and the autoscaling bench start them: test/cluster/addons/up.sh builds each from
 * its Go module (cached) and starts it beside the control plane; stop() runs down.sh, which deletes
 * what up.sh created (KEDA's CRDs, the APIServices, the add-ons' namespace) and stops the processes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO } from './cluster.ts';
import { KUBECTL } from '../support/k8s-tools.ts';

const UP = `${REPO}test/cluster/addons/up.sh`;
const DOWN = `${REPO}test/cluster/addons/down.sh`;

export interface Addons {
  /** Prometheus, from the host (and from KEDA, which runs there too). */
  prometheusUrl: string;
  /** How long up.sh took: the add-ons' builds (or their cache hits) and their start. */
  startSeconds: number;
  stop: () => void;
}

/**
 * Starts the add-ons on the node behind KUBECONFIG, their Services in `namespace` (created and then
 * deleted with them), Prometheus scraping the namespaces named, every `scrapeInterval`.
 */
export function startAddons({ namespace, scrapeNamespaces, scrapeInterval = '15s' }: { namespace: string; scrapeNamespaces: string[]; scrapeInterval?: string }): Addons {
  // The node's unix sockets are not here, so any temporary folder will do.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'viewfinder-addons-'));
  const env = { ...process.env, KUBECTL, ADDONS_NAMESPACE: namespace, SCRAPE_NAMESPACES: scrapeNamespaces.join(','), SCRAPE_INTERVAL: scrapeInterval };
  const stop = () => {
    const down = spawnSync(DOWN, [dir], { env, encoding: 'utf8' });
    if (down.status !== 0) throw new Error(`addons/down.sh failed (${down.status}):\n${down.stderr.slice(-4000)}`);
  };
  const started = performance.now();
  const up = spawnSync(UP, [dir], { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const line = up.stdout.trim().split('\n').pop() ?? '';
  if (up.status !== 0 || !line.startsWith('PROMETHEUS_URL=')) {
    stop();
    throw new Error(`addons/up.sh failed (${up.status}):\n${up.stderr.slice(-6000)}`);
  }
  return { prometheusUrl: line.slice('PROMETHEUS_URL='.length), startSeconds: (performance.now() - started) / 1000, stop };
}
