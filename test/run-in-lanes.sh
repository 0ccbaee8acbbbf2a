#!/usr/bin/env bash
# The mocha suite in two lanes at once (`make test` runs it inside with-test-servers.sh):
#
#   run-in-lanes.sh MOCHA [FILE...]
#
# With FILEs, one mocha runs those files and nothing else.
#
# - The cluster lane: the real-node legs (test/node/) and the chart on a real cluster. Most of their
#   time is spent waiting on the node (rollouts, readiness, outages held for seconds), with the
#   machine's CPU mostly idle; run one after another with the rest, they were a third of the suite's
#   time.
# - The host lane: every other file (unit tests, real Chromium against loopback pages, Prometheus,
#   the operator's, the CRDs' and the chart's other control-plane legs).
# In the run of 2026-11-29 (warm, with other work on the machine) the host lane took 38 min and the
# cluster lane 25 beside it. (Moving the operator's legs and the client libraries' suites into the
# cluster lane to even them was tried once, and every hosted node leg's install failed in that run;
# until that is understood they stay where they passed.) The cluster lane's output
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
[[ $# -ge 1 ]] || { echo "usage: run-in-lanes.sh MOCHA [FILE...]" >&2; exit 2; }
mocha="$1"
shift
(($# == 0)) || exec "$mocha" "$@"
cd "$(dirname "$0")/.."

last_files=(test/node/faults.test.ts)
cluster_files=(test/node/!(autoscale|faults).test.ts test/charts/real-cluster.test.ts test/node/autoscale.test.ts)
host_args=('test/**/*.test.ts' --ignore 'test/node/**')
for file in "${cluster_files[@]}" "${last_files[@]}"; do [[ $file == test/node/* ]] || host_args+=(--ignore "$file"); done

cluster_lane() { "$mocha" "${cluster_files[@]}"; }

if [[ "${VIEWFINDER_TEST_LANES:-2}" == 1 ]]; then
  "$mocha" "${host_args[@]}"; host=$?
  cluster_lane; cluster=$?
else
  log="$(mktemp "${TMPDIR:-/tmp}/viewfinder-cluster-lane-XXXXXX.log")"
  trap 'rm -f "$log"' EXIT
  started=$SECONDS
  echo "run-in-lanes: the cluster lane (${cluster_files[*]}) runs beside this one; its output follows this lane's"
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
