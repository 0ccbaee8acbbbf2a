#!/usr/bin/env bash
# Stop the add-ons that up.sh started for ADDONS_DIR and delete what it created: KEDA's CRDs (while
# its operator still runs, so that it releases the ScaledObjects left), the APIServices, the
# namespace when up.sh created it, then the processes (by recorded PID, after checking the command
# line) and ADDONS_DIR itself.
#
#   down.sh ADDONS_DIR       KUBECONFIG: the node's, as for up.sh
set -uo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
NODE_DIR="$HERE/../node"
# shellcheck source=../node/lib/common.sh
. "$NODE_DIR/lib/common.sh"
log() { printf 'addons: %s\n' "$*" >&2; }

[[ $# -eq 1 ]] || { log "usage: down.sh ADDONS_DIR"; exit 2; }
[[ -d "$1" ]] || { log "nothing to stop: $1 does not exist"; exit 0; }
ADDONS="$(CDPATH='' cd -- "$1" && pwd -P)"
[[ -d "$ADDONS/run" ]] || { log "$ADDONS was not made by addons/up.sh: left alone"; exit 1; }
PIDS="$ADDONS/run" LOGS="$ADDONS/logs"
KUBECTL="${KUBECTL:-$(dirname -- "${KUBECONFIG:-/nonexistent}")/bin/kubectl}"
k() { "$KUBECTL" --request-timeout=60s "$@"; }
NS="$(cat "$ADDONS/namespace" 2>/dev/null || true)"

if [[ -n "${KUBECONFIG:-}" && -x "$KUBECTL" ]]; then
  if [[ -f "$ADDONS/crds.applied" ]]; then
    KEDA_MODULE="$(cd "$HERE/../keda-operator" && GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' github.com/kedacore/keda/v2)"
    k delete -k "$KEDA_MODULE/config/crd" --ignore-not-found --wait=true --timeout=120s >&2 || log "warning: KEDA's CRDs not all deleted"
  fi
  while read -r service; do
    [[ -n "$service" ]] && { k delete apiservice "$service" --ignore-not-found >&2 || log "warning: APIService $service not deleted"; }
  done < <(sort -u "$ADDONS/apiservices" 2>/dev/null)
  if [[ -n "$NS" && -f "$ADDONS/namespace.created" ]]; then
    k delete namespace "$NS" --ignore-not-found --wait=true --timeout=120s >&2 || log "warning: namespace $NS not deleted"
  elif [[ -n "$NS" ]]; then
    k delete service,endpointslice -n "$NS" metrics-server keda-adapter --ignore-not-found >&2 || true
  fi
else
  log "warning: no KUBECONFIG (or no kubectl): the cluster's objects are left; only the processes stop"
fi
for name in keda-adapter keda-operator prometheus metrics-server; do stop_bg "$name" 20; done
rm -rf -- "$ADDONS"
log "stopped"
