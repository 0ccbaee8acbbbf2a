import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The operator's metrics, in a registry of their own. Labels are bounded: the kind and the
 * outcome, never an object's name or namespace.
 */
const KIND_LABELS = ['kind'] as const;
const RESULT_LABELS = ['kind', 'result'] as const;

export type ReconcileMetricResult = 'success' | 'not_ready' | 'deleted' | 'conflict' | 'error';

export interface OperatorMetrics {
  registry: Registry;
  reconcileTotal: Counter<(typeof RESULT_LABELS)[number]>;
  reconcileDuration: Histogram<(typeof KIND_LABELS)[number]>;
  queueDepth: Gauge<(typeof KIND_LABELS)[number]>;
  leader: Gauge;
}

export function createOperatorMetrics(): OperatorMetrics {
  const registry = new Registry();
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'viewfinder_operator_reconcile_total',
      help: 'Reconciles by kind and result (success, not_ready, deleted, conflict, error)',
      labelNames: RESULT_LABELS,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'viewfinder_operator_reconcile_duration_seconds',
      help: 'How long one reconcile took, by kind',
      labelNames: KIND_LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'viewfinder_operator_queue_depth',
      help: 'Keys waiting in the work queue, by kind',
      labelNames: KIND_LABELS,
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'viewfinder_operator_leader',
      help: '1 while this replica holds the leader Lease',
      registers: [registry],
    }),
  };
}
