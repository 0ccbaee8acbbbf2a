import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../../lib/env.ts';
import { loadKubeConfig } from '../../lib/k8s/kube-config.ts';
import { createLogger } from '../../lib/logger.ts';
import { ApiClient } from './api/client.ts';
import { fileTokenSource, tokenRequestSource } from './api/token.ts';
import { loadOperatorConfig, type OperatorConfig } from './config.ts';
import { startOperator, type Operator } from './operator.ts';

/**
 * The operator process: config → Kubernetes (KUBECONFIG, or the in-cluster service account) →
 * the hosted API's client (its ServiceAccount token: the projected file in a pod, TokenRequests
 * outside) → operator. It never opens the store. SIGTERM and SIGINT release the Lease and exit 0.
 */
let config: OperatorConfig;
let kubeConfig: KubeConfig;
try {
  config = loadOperatorConfig(process.env);
  kubeConfig = loadKubeConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`Invalid configuration: ${err.message}\n`);
  process.exit(2);
}

const logger = createLogger({ level: config.logLevel, name: 'viewfinder-operator' });
const tokens = config.api.tokenFile
  ? fileTokenSource(config.api.tokenFile)
  : tokenRequestSource(kubeConfig, config.api.serviceAccount, config.api.audience);
const api = new ApiClient({ baseUrl: config.api.url, tokens, timeoutMs: config.api.timeoutMs });
logger.info({ api: config.api.url.origin, token: tokens.describe(), audience: config.api.audience, cluster: kubeConfig.getCurrentCluster()?.server }, 'Starting');
// Registered before starting: startOperator waits for the first list, which retries while the API server is away.
let operator: Operator | undefined;
let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'Stopping');
  await operator?.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
operator = await startOperator({ config, kubeConfig, api, logger });
if (stopping) await operator.stop();
