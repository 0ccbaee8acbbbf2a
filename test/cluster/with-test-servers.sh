#!/usr/bin/env bash
# Run a command with the project's own test servers up, then take them down however the command
# ends (`make test` runs the suite through this): a Kubernetes cluster and a MongoDB-compatible
# server (FerretDB), both built from Go modules (build.sh) and cached outside the clone.
#
#   with-test-servers.sh CMD [ARGS...]
#
# FerretDB (ferretdb.sh, SQLite behind it) on a free loopback port, exported as
# VIEWFINDER_TEST_MONGODB_URI (not MONGODB_URI, which every service a test starts would inherit);
# one already set names a server to use instead (a real MongoDB), and none is started.
# An S3-compatible object store (versitygw.sh, versitygw over a temporary directory) on a free
# loopback port, exported as VIEWFINDER_TEST_S3_ENDPOINT, VIEWFINDER_TEST_S3_REGION,
# VIEWFINDER_TEST_S3_ACCESS_KEY_ID and VIEWFINDER_TEST_S3_SECRET_ACCESS_KEY; one already set (the
# endpoint) names a store to use instead, and none is started.
# A tracing backend (jaeger.sh, Jaeger v2 with in-memory storage) on free loopback ports, exported as
# VIEWFINDER_TEST_OTLP_ENDPOINT and VIEWFINDER_TEST_JAEGER_QUERY (never OTEL_*, which every service a
# test starts would inherit); one already set names a Jaeger to use instead, and none is started.
#
# - As root with Go: a single node (node/up.sh: control plane, kubelet, containerd, DNS), whose API
#   server also serves the control-plane legs (operator, chart, CRDs); the real-node legs run on it.
# - When the node cannot start (another node runs on this machine, ...): the control plane alone
#   (start.sh); the real-node legs skip, saying why.
# - Without Go, or when nothing can start: no cluster; every real-cluster leg skips, saying why.
# - KUBECONFIG already set: that cluster is used as it is, and nothing is started or stopped.
# For CMD it exports KUBECONFIG, KUBECTL (the kubectl of the same build), VIEWFINDER_NODE_STATE
# (the node's STATE_DIR, when a node runs) and VIEWFINDER_CLUSTER_SKIP (why a leg skips).
# Env: VIEWFINDER_CLUSTER=none|control-plane|node (default node): how much of a cluster to start.
set -uo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster: %s\n' "$*" >&2; }
[[ $# -ge 1 ]] || { log "usage: with-test-servers.sh CMD [ARGS...]"; exit 2; }

state="" node=0 ferretdb="" versitygw="" prebuild=""
jaeger="" later_pids=()
cleanup() {
  local pid
  for pid in "${later_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  [[ -z "$jaeger" ]] || { "$HERE/jaeger.sh" down "$jaeger" --wipe >&2; rm -f "$jaeger".{env,out,failed}; }
  [[ -z "$versitygw" ]] || { "$HERE/versitygw.sh" down "$versitygw" --wipe >&2; rm -f "$versitygw".{env,out,failed}; }
  if [[ -n "$prebuild" ]]; then
    kill -- "-$prebuild" 2>/dev/null || true
    log "add-on builds started in the background:"
    grep -h 'built in\|cached\|ERROR' "$state/addons-build.log" >&2 || true
  fi
  [[ -z "$ferretdb" ]] || "$HERE/ferretdb.sh" down "$ferretdb" --wipe >&2
  [[ -n "$state" ]] || return 0
  local started=$SECONDS
  if ((node)); then "$HERE/node/down.sh" "$state" --wipe >&2; else "$HERE/stop.sh" "$state" --wipe >&2; fi
  log "cluster stopped in $((SECONDS - started)) s"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [[ -n "${VIEWFINDER_TEST_MONGODB_URI:-}" ]]; then
  log "VIEWFINDER_TEST_MONGODB_URI is set: the MongoDB legs use that server, and this script starts none"
elif ! command -v go >/dev/null 2>&1; then
  log "no Go toolchain on PATH: no FerretDB, so the MongoDB legs skip, saying why"
else
  ferretdb="${TMPDIR:-/tmp}/viewfinder-ferretdb-$$"
  if line="$("$HERE/ferretdb.sh" up "$ferretdb" | tail -n 1)" && [[ "$line" == MONGODB_URI=* ]]; then
    export VIEWFINDER_TEST_MONGODB_URI="${line#MONGODB_URI=}"
  else
    log "FerretDB could not start (its output is above): the MongoDB legs skip, saying why"
  fi
fi

# The object store and the tracing backend start now when their binaries are built. On a cold cache
# (a first run: versitygw takes about 10 minutes to build, Jaeger longer) they are built in the
# background at the lowest CPU priority instead, in the CPU the suite leaves idle, and started once
# built: the suite does not wait for them before its first test. Their variables then name the file
# their lines will be in (VIEWFINDER_TEST_S3_LATER, VIEWFINDER_TEST_JAEGER_LATER), and the tests that
# need them wait for it (test/support/deferred-server.ts).
# up_server NAME STATE PREFIX LINES FIRST VAR: starts NAME (NAME.sh up STATE) and exports the last
# LINES lines of what it prints (the first one FIRST=...), each prefixed with PREFIX; or, when its
# binary is not built, does that in the background and exports VAR=STATE.env (the file those lines
# go to; STATE.failed instead, with the output, when the build or the start fails).
up_server() {
  local name="$1" dir="$2" prefix="$3" count="$4" first="$5" var="$6" lines line
  if "$HERE/build.sh" --cached "$name" >/dev/null 2>&1; then
    if lines="$("$HERE/$name.sh" up "$dir" | tail -n "$count")" && [[ "$lines" == "$first="* ]]; then
      while IFS= read -r line; do export "$prefix$line"; done <<<"$lines"
    else
      log "$name could not start (its output is above): its legs skip, saying why"
    fi
    return 0
  fi
  log "$name is not built yet: building it in the background at the lowest CPU priority; its legs wait for it ($dir.env)"
  rm -f "$dir.env" "$dir.failed"
  setsid bash -c '
    { nice -n 19 "$1/build.sh" "$2" && "$1/$2.sh" up "$3"; } >"$3.out" 2>&1 \
      && tail -n "$5" "$3.out" | sed "s/^/$4/" >"$3.env.tmp" && mv "$3.env.tmp" "$3.env" \
      || cp "$3.out" "$3.failed"' _ "$HERE" "$name" "$dir" "$prefix" "$count" </dev/null >/dev/null 2>&1 &
  later_pids+=($!)
  export "$var=$dir.env"
}

if [[ -n "${VIEWFINDER_TEST_S3_ENDPOINT:-}" ]]; then
  log "VIEWFINDER_TEST_S3_ENDPOINT is set: the S3 legs use that store, and this script starts none"
elif ! command -v go >/dev/null 2>&1; then
  log "no Go toolchain on PATH: no versitygw, so the S3 legs skip, saying why"
else
  # Its four lines (S3_ENDPOINT=..., S3_REGION=..., S3_ACCESS_KEY_ID=..., S3_SECRET_ACCESS_KEY=...)
  # become VIEWFINDER_TEST_S3_*, never S3_* that a started service would inherit.
  versitygw="${TMPDIR:-/tmp}/viewfinder-versitygw-$$"
  up_server versitygw "$versitygw" VIEWFINDER_TEST_ 4 S3_ENDPOINT VIEWFINDER_TEST_S3_LATER
fi

if [[ -n "${VIEWFINDER_TEST_JAEGER_QUERY:-}" ]]; then
  log "VIEWFINDER_TEST_JAEGER_QUERY is set: the tracing legs use that Jaeger, and this script starts none"
elif ! command -v go >/dev/null 2>&1; then
  log "no Go toolchain on PATH: no Jaeger, so the tracing legs skip, saying why"
else
  # Its two lines are already named VIEWFINDER_TEST_*.
  jaeger="${TMPDIR:-/tmp}/viewfinder-jaeger-$$"
  up_server jaeger "$jaeger" "" 2 VIEWFINDER_TEST_OTLP_ENDPOINT VIEWFINDER_TEST_JAEGER_LATER
fi

skip_because() { export VIEWFINDER_CLUSTER_SKIP="$1"; log "no cluster: $1"; }
want="${VIEWFINDER_CLUSTER:-node}"
if [[ -n "${KUBECONFIG:-}" ]]; then
  log "KUBECONFIG is set ($KUBECONFIG): the tests use that cluster, and this script starts none"
elif [[ "$want" == none ]]; then
  skip_because "VIEWFINDER_CLUSTER=none: no cluster was started"
elif ! command -v go >/dev/null 2>&1; then
  skip_because "no Go toolchain on PATH: the test cluster is built from Go modules (install Go 1.26 or newer)"
else
  started=$SECONDS
  if [[ "$want" == node && $EUID -ne 0 ]]; then
    log "not root: the node (containerd, kubelet, kube-proxy change the host's network) cannot start; starting the control plane alone"
    export VIEWFINDER_CLUSTER_SKIP="not root: the node needs root, so only the control plane runs"
  elif [[ "$want" == node ]]; then
    # the node's unix sockets need a short path (at most 60 characters)
    state="/tmp/vf-node-$$"
    if line="$("$HERE/node/up.sh" "$state" | tail -n 1)" && [[ "$line" == KUBECONFIG=* ]]; then
      node=1
      export "$line" VIEWFINDER_NODE_STATE="$state"
      log "a node is up in $((SECONDS - started)) s; $line"
      # The node's add-ons take the longest builds after Kubernetes when the caches are cold: built
      # now, at the lowest CPU priority, they use what the suite leaves idle before their legs need
      # them (build.sh's lock makes a leg wait for a build under way): the NetworkPolicy agent first
      # (network-policies.sh, for test/node/network-policies.test.ts), then the autoscaling leg's
      # (addons/up.sh; the last leg of the suite's cluster lane, test/run-in-lanes.sh).
      setsid bash -c 'for part in network-policies metrics-server prometheus keda-adapter keda-operator; do nice -n 19 "$1/build.sh" "$part" >/dev/null || true; done' _ "$HERE" 2>"$state/addons-build.log" &
      prebuild=$!
    else
      export VIEWFINDER_CLUSTER_SKIP="the node could not start (test/cluster/node/up.sh failed; its output is above the suite's)"
      log "$VIEWFINDER_CLUSTER_SKIP; starting the control plane alone"
      "$HERE/node/down.sh" "$state" --wipe >&2 || true
      state=""
    fi
  fi
  if [[ -z "$state" ]]; then
    state="${TMPDIR:-/tmp}/vf-control-plane-$$"
    if line="$("$HERE/start.sh" "$state" | tail -n 1)" && [[ "$line" == KUBECONFIG=* ]]; then
      export "$line"
      log "a control plane is up in $((SECONDS - started)) s; $line"
    else
      "$HERE/stop.sh" "$state" --wipe >&2 || true
      state=""
      skip_because "the control plane could not start (test/cluster/start.sh failed; its output is above the suite's)"
    fi
  fi
fi
if [[ -n "${KUBECONFIG:-}" && -z "${KUBECTL:-}" && -x "$(dirname -- "$KUBECONFIG")/bin/kubectl" ]]; then
  export KUBECTL="$(dirname -- "$KUBECONFIG")/bin/kubectl"
fi
"$@"
