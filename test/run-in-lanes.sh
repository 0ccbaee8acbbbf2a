#!/usr/bin/env bash
# The mocha suite in two lanes at once (`make test` runs it inside with-test-servers.sh):
#
#   run-in-lanes.sh MOCHA [FILE...]
#
# With FILEs, one mocha runs those files and nothing else.
#
# - The cluster lane: the real-node legs (test/node/) and the chart on a real cluster. Most of their
#   time is spent waiting on the node (rollouts, readiness, outages held for seconds), with the
#   machine's CPU mostly idle; run alone, one after another, they were a third of the suite's time.
# - The host lane: every other file (unit tests, real Chromium against loopback pages, Prometheus,
#   the control-plane legs), as before.
# The cluster lane's output goes to a file, printed whole once both lanes end (interleaved lines of
# two spec reporters could not be read); its first and last lines are printed as it starts and ends.
# The exit status is the first lane's that failed, else 0. Each lane prints its own table of its
# slowest files. VIEWFINDER_TEST_LANES=1 runs the same files one lane after the other instead.
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

cluster_files=(test/node/!(autoscale|faults).test.ts test/charts/real-cluster.test.ts test/node/autoscale.test.ts)
host_args=('test/**/*.test.ts' --ignore 'test/node/**' --ignore test/charts/real-cluster.test.ts)

if [[ "${VIEWFINDER_TEST_LANES:-2}" == 1 ]]; then
  "$mocha" "${host_args[@]}"; host=$?
  "$mocha" "${cluster_files[@]}"; cluster=$?
else
  log="$(mktemp "${TMPDIR:-/tmp}/viewfinder-cluster-lane-XXXXXX.log")"
  trap 'rm -f "$log"' EXIT
  started=$SECONDS
  echo "run-in-lanes: the cluster lane (${cluster_files[*]}) runs beside this one; its output follows this lane's"
  "$mocha" "${cluster_files[@]}" >"$log" 2>&1 &
  cluster_pid=$!
  "$mocha" "${host_args[@]}"; host=$?
  echo "run-in-lanes: the host lane ended (status $host) after $((SECONDS - started)) s; waiting for the cluster lane"
  wait "$cluster_pid"; cluster=$?
  echo "run-in-lanes: the cluster lane ended (status $cluster) after $((SECONDS - started)) s; its output:"
  cat "$log"
fi
((host != 0)) && exit "$host"
exit "$cluster"
