import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../../lib/env.ts';
import { loadKubeConfig } from '../../lib/k8s/kube-config.ts';
import { createLogger } from '../../lib/logger.ts';
import { describeStore, openStore } from '../../lib/store/open.ts';
import { loadOperatorConfig, type OperatorConfig } from './config.ts';
import { startOperator, type Operator } from './operator.ts';

/**
 * The operator process: config → store → Kubernetes (KUBECONFIG, or the in-cluster service
 * account) → operator. SIGTERM and SIGINT release the Lease and exit 0.
 */
let config: OperatorConfig;
try {
  config = loadOperatorConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`Invalid configuration: ${err.message}\n`);
  process.exit(2);
}

const logger = createLogger({ level: config.logLevel, name: 'viewfinder-operator' });
const store = await openStore(config.store);
let kubeConfig: KubeConfig;
try {
  kubeConfig = loadKubeConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`Invalid configuration: ${err.message}\n`);
  process.exit(2);
}
logger.info({ store: describeStore(config.store), cluster: kubeConfig.getCurrentCluster()?.server }, 'Opened the store; starting');
// Registered before starting: startOperator waits for the first list, which retries while the API server is away.
let operator: Operator | undefined;
let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'Stopping');
  await operator?.stop();
  await store.close();
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
operator = await startOperator({ config, kubeConfig, store, logger });
if (stopping) await operator.stop();
