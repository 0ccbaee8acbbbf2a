import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError } from '../env.ts';

/**
 * The Kubernetes configuration every process here uses: KUBECONFIG (or ~/.kube/config) outside a
 * cluster, the pod's service account inside one. An unreadable one is a configuration error (exit 2).
 */
export function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromDefault();
  } catch (err) {
    throw new ConfigError(`cannot load the Kubernetes configuration: ${err instanceof Error ? err.message : String(err)}`);
  }
  return kubeConfig;
}
