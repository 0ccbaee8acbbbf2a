#!/usr/bin/env bash
# Stop the control plane that start.sh started for STATE_DIR.
#
#   stop.sh [STATE_DIR] [--wipe]     STATE_DIR defaults to "${TMPDIR:-/tmp}/k8s-local"
#
# Stops kube-controller-manager, kube-apiserver and etcd by the PIDs recorded in STATE_DIR/run,
# after checking that each PID still is that component started for STATE_DIR.
# --wipe then deletes STATE_DIR (only if start.sh created it; keeps nothing: data, PKI, logs).
set -uo pipefail

HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'k8s-local: %s\n' "$*" >&2; }
WIPE=0 STATE_ARG=""
for a in "$@"; do
  case "$a" in
    --wipe) WIPE=1 ;;
    -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) log "unknown option: $a (usage: stop.sh [STATE_DIR] [--wipe])"; exit 2 ;;
    *) [[ -z $STATE_ARG ]] || { log "usage: stop.sh [STATE_DIR] [--wipe]"; exit 2; }; STATE_ARG="$a" ;;
  esac
done
STATE_ARG="${STATE_ARG:-${TMPDIR:-/tmp}/k8s-local}"
[[ -d "$STATE_ARG" ]] || { log "nothing to stop: $STATE_ARG does not exist"; exit 0; }
STATE="$(CDPATH='' cd -- "$STATE_ARG" && pwd -P)"
RUN="$STATE/run"
# A STATE_DIR with a node (node/up.sh) is stopped by node/down.sh: it stops the node and undoes its
# changes to the host first, then calls this script again.
if [[ -f "$STATE/.k8s-node-state" && -z "${K8S_NODE_DOWN:-}" && -x "$HERE/node/down.sh" ]]; then
  log "$STATE has a node: stopping it with node/down.sh"
  if [[ $WIPE == 1 ]]; then exec "$HERE/node/down.sh" "$STATE" --wipe; else exec "$HERE/node/down.sh" "$STATE"; fi
fi

# shellcheck source=lib/shared.sh
. "$HERE/lib/shared.sh"
pid_of() { control_plane_pid "$1"; }

left=0
for n in kube-controller-manager kube-apiserver etcd; do
  if pid="$(pid_of "$n")"; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 60; i++)); do pid_of "$n" >/dev/null || break; sleep 0.25; done
    if pid_of "$n" >/dev/null; then kill -KILL "$pid" 2>/dev/null; sleep 0.5; fi
    if pid_of "$n" >/dev/null; then log "could not stop $n (pid $pid)"; left=1; continue; fi
    log "stopped $n (pid $pid)"
  elif [[ -f "$RUN/$n.pid" ]]; then
    log "$n (pid $(<"$RUN/$n.pid")) was not running"
  fi
  rm -f "$RUN/$n.pid"
done

if [[ $WIPE == 1 ]]; then
  if [[ $left == 1 ]]; then log "not wiping $STATE: a component is still running"; exit 1; fi
  if [[ ! -f "$STATE/.k8s-local-state" ]]; then log "not wiping $STATE: not a start.sh state dir"; exit 1; fi
  rm -rf -- "$STATE" && log "wiped $STATE"
fi
exit "$left"
