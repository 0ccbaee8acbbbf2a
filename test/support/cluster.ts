/**
 * The project's own test cluster (test/cluster/), as the tests meet it: `make test` runs the suite
 * through test/cluster/with-test-servers.sh, which starts a node (or the control plane alone), exports
 * KUBECONFIG and KUBECTL, and, when it could not start one, VIEWFINDER_CLUSTER_SKIP with the reason.
 */

/** How to get a cluster for one file, named in every skip. */
const HOW = 'run the file through test/cluster/with-test-servers.sh (make test does), e.g. test/cluster/with-test-servers.sh node_modules/.bin/mocha FILE';

/** Why the real-cluster legs skip, or undefined when there is a cluster (KUBECONFIG). */
export function noClusterReason(): string | undefined {
  if (process.env.KUBECONFIG) return undefined;
  const why = process.env.VIEWFINDER_CLUSTER_SKIP;
  return why ? `${why} (${HOW})` : `KUBECONFIG is not set: ${HOW}`;
}

/** Why the real-node legs skip when only a control plane runs. */
export function noNodeReason(stateDir: string): string {
  const why = process.env.VIEWFINDER_CLUSTER_SKIP;
  return `${why ?? `${stateDir} is not a node's STATE_DIR (a control plane alone runs no pods)`}: test/cluster/node/up.sh starts a node (as root)`;
}

/**
 * In a describe block: without a cluster, declares one pending test that says why and what it would
 * have run, and answers true (the caller returns); with one, answers false.
 */
export function skippedWithoutCluster(what: string): boolean {
  const why = noClusterReason();
  if (!why) return false;
  it(`is skipped (${what}): ${why}`, function () {
    this.skip();
  });
  return true;
}
