#!/usr/bin/env bash
# The mocha suite in two lanes at once (`make test` runs it inside with-test-servers.sh):
#
#   run-in-lanes.sh [--clients] MOCHA [FILE...]
#
# With FILEs, one mocha runs those files and nothing else.
#
# - The cluster lane: the real-node legs (test/node/), the chart on a real cluster and the operator's
#   legs on it. Most of their time is spent waiting on the cluster (rollouts, readiness, outages held
#   for seconds, reconciles), with the machine's CPU mostly idle; run one after another with the
#   rest, they were a third of the suite's time. With --clients, the client libraries' suites
#   (clients/test.sh) run first in this lane.
# - The host lane: every other file (unit tests, real Chromium against loopback pages, Prometheus,
#   the CRDs' and the chart's other control-plane legs).
# The lanes are balanced by the times the suite prints (in the run of 2026-11-29, warm, with other
# work on the machine: host 31 min, cluster 30 min with the clients' 3). The cluster lane's output
# goes to a file, printed whole once both lanes end (interleaved lines of two spec reporters could
# not be read). The exit status is the first that failed of the host lane, the cluster lane and the
# fault leg, else 0. Each lane prints its own
# table of its slowest files. VIEWFINDER_TEST_LANES=1 runs the same lanes one after the other.
#
# Then the fault leg (test/node/faults.test.ts) alone: it stops the API server, restarts etcd and the
# kubelet, which every cluster test of both lanes needs (about 5 minutes).
#
# The autoscaling leg runs last in its lane: on a machine with empty caches, its add-ons
# (metrics-server, KEDA, Prometheus) build in the background in the CPU the suite leaves idle,
# instead of holding the suite up (test/cluster/README.md, "What a CI run costs").
set -uo pipefail
shopt -s extglob
clients=0
[[ "${1:-}" == --clients ]] && { clients=1; shift; }
[[ $# -ge 1 ]] || { echo "usage: run-in-lanes.sh [--clients] MOCHA [FILE...]" >&2; exit 2; }
mocha="$1"
shift
(($# == 0)) || exec "$mocha" "$@"
cd "$(dirname "$0")/.."

last_files=(test/node/faults.test.ts)
cluster_files=(test/node/!(autoscale|faults).test.ts test/charts/real-cluster.test.ts test/operator/page-monitor.test.ts test/operator/operator.test.ts test/node/autoscale.test.ts)
host_args=('test/**/*.test.ts' --ignore 'test/node/**')
for file in "${cluster_files[@]}" "${last_files[@]}"; do [[ $file == test/node/* ]] || host_args+=(--ignore "$file"); done

# The cluster lane: the clients' suites first when asked, then its mocha files; failed if either did.
cluster_lane() {
  local status=0
  if ((clients)); then clients/test.sh || status=$?; fi
  "$mocha" "${cluster_files[@]}" || status=$?
  return "$status"
}

if [[ "${VIEWFINDER_TEST_LANES:-2}" == 1 ]]; then
  "$mocha" "${host_args[@]}"; host=$?
  cluster_lane; cluster=$?
else
  log="$(mktemp "${TMPDIR:-/tmp}/viewfinder-cluster-lane-XXXXXX.log")"
  trap 'rm -f "$log"' EXIT
  started=$SECONDS
  echo "run-in-lanes: the cluster lane ($( ((clients)) && echo 'clients/test.sh, then ')${cluster_files[*]}) runs beside this one; its output follows this lane's"
  cluster_lane >"$log" 2>&1 &
  cluster_pid=$!
  "$mocha" "${host_args[@]}"; host=$?
  echo "run-in-lanes: the host lane ended (status $host) after $((SECONDS - started)) s; waiting for the cluster lane"
  wait "$cluster_pid"; cluster=$?
  echo "run-in-lanes: the cluster lane ended (status $cluster) after $((SECONDS - started)) s; its output:"
  cat "$log"
fi
echo "run-in-lanes: then alone: ${last_files[*]}"
"$mocha" "${last_files[@]}"; last=$?
((host != 0)) && exit "$host"
((cluster != 0)) && exit "$cluster"
exit "$last"
