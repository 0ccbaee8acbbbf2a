#!/usr/bin/env bash
# Start the autoscaling add-ons of the project's node (test/cluster/node): metrics-server, KEDA (its
# operator and its metrics adapter) and Prometheus, each built from its Go module (build.sh, cached),
# as processes beside the control plane, as a cluster's control-plane add-ons often run.
#
#   up.sh ADDONS_DIR         KUBECONFIG must name the node's admin kubeconfig (node/up.sh wrote it)
#
# - metrics-server: `kubectl top`, and the HPA's CPU (metrics.k8s.io). It reads the kubelet's API
#   (127.0.0.1:10250, node name `localhost`).
# - KEDA: the ScaledObject controller (keda-operator) and external.metrics.k8s.io (keda-adapter),
#   with KEDA's CRDs from its module (config/crd, kustomized as KEDA's release does).
# - Prometheus, with kubernetes_sd_configs (Debian's build has no Kubernetes discovery): it scrapes
#   the endpoints of the Services labelled viewfinder.dev/metrics=true, as the chart's ServiceMonitor
#   says, labelled namespace, job (the Service) and pod, as the Prometheus Operator labels them.
# The API server reaches the two APIServices through Services without a selector whose EndpointSlice
# is the node's bridge address (an EndpointSlice may not name 127.0.0.1), with the add-ons' own CA in
# the APIService's caBundle. Every object lives in ADDONS_NAMESPACE, but the APIServices and CRDs.
# The last line on stdout is PROMETHEUS_URL=http://127.0.0.1:PORT (KEDA reaches it there, too).
# Env: ADDONS_NAMESPACE (default viewfinder-addons), SCRAPE_NAMESPACES (comma-separated; default every
#      namespace), SCRAPE_INTERVAL (default 15s), KUBECTL (default the node's bin/kubectl).
# down.sh ADDONS_DIR stops them and deletes what this script created.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
NODE_DIR="$HERE/../node"
# shellcheck source=../node/lib/common.sh
. "$NODE_DIR/lib/common.sh"
exec 3>&1 1>&2   # everything goes to stderr, except the final PROMETHEUS_URL= line (fd 3)
log() { printf 'addons: %s\n' "$*" >&2; }
die() { printf 'addons: ERROR: %s\n' "$*" >&2; exit 1; }

[[ $# -eq 1 ]] || die "usage: up.sh ADDONS_DIR (with KUBECONFIG set)"
[[ -n "${KUBECONFIG:-}" && -f "$KUBECONFIG" ]] || die "KUBECONFIG must name the node's kubeconfig"
mkdir -p -- "$1"
ADDONS="$(CDPATH='' cd -- "$1" && pwd -P)"
PIDS="$ADDONS/run" LOGS="$ADDONS/logs" CERTS="$ADDONS/certs"
mkdir -p "$PIDS" "$LOGS" "$CERTS"
NS="${ADDONS_NAMESPACE:-viewfinder-addons}"
KUBECTL="${KUBECTL:-$(dirname -- "$KUBECONFIG")/bin/kubectl}"
[[ -x "$KUBECTL" ]] || die "no kubectl at $KUBECTL (set KUBECTL)"
k() { "$KUBECTL" "$@"; }
printf '%s\n' "$NS" > "$ADDONS/namespace"

# The API server must reach the add-ons: the node's bridge address, where pods reach the API server.
BRIDGE_IP="$(k get endpointslice kubernetes -n default -o jsonpath='{.endpoints[0].addresses[0]}')"
[[ "$BRIDGE_IP" =~ ^[0-9.]+$ && "$BRIDGE_IP" != 127.* ]] || die "no node here (EndpointSlice default/kubernetes names '$BRIDGE_IP'): start one with test/cluster/node/up.sh"

# ---------------------------------------------------------------- binaries (built once, cached)
declare -A EXE=()
for part in metrics-server keda-operator keda-adapter prometheus; do
  EXE[$part]="$("$HERE/../build.sh" "$part" 3>&- | tail -n 1)" || die "cannot build $part"
done

free_port() {  # a port nobody listens on, in 20000-32767 (below the ephemeral range)
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    [[ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ]] && { echo "$p"; return 0; }
  done
  die "no free port"
}
wait_until() {  # WHAT SECONDS NAME CMD...: NAME is the process whose death ends the wait
  local what="$1" secs="$2" name="$3" i; shift 3
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    alive "$name" || { tail -n 30 "$LOGS/$name.log" >&2; die "$name exited (log: $LOGS/$name.log)"; }
    sleep 0.5
  done
  tail -n 30 "$LOGS/$name.log" >&2
  die "$what not ready after ${secs}s (log: $LOGS/$name.log)"
}

# ---------------------------------------------------------------- certificates: one CA, one pair
# The pair serves metrics-server and keda-adapter to the API server (named as their Services) and
# both ends of KEDA's gRPC metrics service (127.0.0.1), which authenticates its client by that CA.
if [[ ! -f "$CERTS/tls.crt" ]]; then
  (
    cd "$CERTS"
    openssl genrsa -out ca.key 2048 2>/dev/null
    openssl req -x509 -new -nodes -key ca.key -sha256 -days 30 -subj "/CN=viewfinder-addons-ca" -out ca.crt
    printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
      "extendedKeyUsage=serverAuth,clientAuth" \
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:$BRIDGE_IP,DNS:metrics-server.$NS.svc,DNS:keda-adapter.$NS.svc" > tls.ext
    openssl genrsa -out tls.key 2048 2>/dev/null
    openssl req -new -key tls.key -subj "/CN=viewfinder-addons" -out tls.csr
    openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -sha256 -extfile tls.ext -out tls.crt 2>/dev/null
    rm -f tls.csr; chmod 600 ./*.key
  )
fi

# ---------------------------------------------------------------- cluster objects
if ! k get namespace "$NS" >/dev/null 2>&1; then
  k create namespace "$NS" >/dev/null
  touch "$ADDONS/namespace.created"
fi
KEDA_MODULE="$(cd "$HERE/../keda-operator" && GOFLAGS=-mod=readonly go list -m -f '{{.Dir}}' github.com/kedacore/keda/v2)"
k apply --server-side --force-conflicts -k "$KEDA_MODULE/config/crd" >/dev/null
touch "$ADDONS/crds.applied"
# (kubectl wait fails at once while the new CRD has no conditions yet)
for ((i = 0; i < 60; i++)); do k wait --for condition=Established --timeout=10s crd/scaledobjects.keda.sh >/dev/null 2>&1 && break; sleep 1; done

MS_PORT="$(free_port)" ADAPTER_PORT="$(free_port)"
CA_BUNDLE="$(base64 -w0 < "$CERTS/ca.crt")"
# apiservice NAME GROUP SERVICE PORT: an APIService served by a process on the bridge address
apiservice() {
  k apply --server-side --force-conflicts -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: $3, namespace: $NS}
spec:
  ports: [{name: https, port: 443, targetPort: $4, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $3
  namespace: $NS
  labels: {kubernetes.io/service-name: $3, endpointslice.kubernetes.io/managed-by: viewfinder-addons}
addressType: IPv4
endpoints: [{addresses: ["$BRIDGE_IP"], conditions: {ready: true}}]
ports: [{name: https, port: $4, protocol: TCP}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1beta1.$2}
spec:
  group: $2
  version: v1beta1
  service: {name: $3, namespace: $NS, port: 443}
  caBundle: $CA_BUNDLE
  groupPriorityMinimum: 100
  versionPriority: 100
EOF
  printf '%s\n' "v1beta1.$2" >> "$ADDONS/apiservices"
}

# ---------------------------------------------------------------- metrics-server
start_bg metrics-server "$ADDONS/" "${EXE[metrics-server]}" \
  --bind-address "$BRIDGE_IP" --secure-port "$MS_PORT" \
  --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
  --kubeconfig "$KUBECONFIG" --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" \
  --kubelet-preferred-address-types Hostname --kubelet-insecure-tls --metric-resolution 15s
apiservice metrics-server metrics.k8s.io metrics-server "$MS_PORT"

# ---------------------------------------------------------------- Prometheus
PROM_PORT="$(free_port)"
mkdir -p "$ADDONS/prometheus"
namespaces=""
[[ -z "${SCRAPE_NAMESPACES:-}" ]] || namespaces="namespaces: {names: [$(sed 's/,/, /g' <<<"$SCRAPE_NAMESPACES")]}"
cat > "$ADDONS/prometheus/prometheus.yml" <<EOF
# The chart's ServiceMonitor, as the Prometheus Operator would render it (generated by addons/up.sh)
global: {scrape_interval: ${SCRAPE_INTERVAL:-15s}, scrape_timeout: 5s, evaluation_interval: ${SCRAPE_INTERVAL:-15s}}
scrape_configs:
- job_name: viewfinder
  honor_labels: true
  kubernetes_sd_configs:
  - role: endpointslice
    kubeconfig_file: $KUBECONFIG
    $namespaces
  relabel_configs:
  - {source_labels: [__meta_kubernetes_service_label_viewfinder_dev_metrics], regex: "true", action: keep}
  - {source_labels: [__meta_kubernetes_endpointslice_port_name], regex: http, action: keep}
  - {source_labels: [__meta_kubernetes_namespace], target_label: namespace}
  - {source_labels: [__meta_kubernetes_service_name], target_label: job}
  - {source_labels: [__meta_kubernetes_pod_name], target_label: pod}
EOF
start_bg prometheus "$ADDONS/" "${EXE[prometheus]}" --config.file "$ADDONS/prometheus/prometheus.yml" \
  --storage.tsdb.path "$ADDONS/prometheus/data" --web.listen-address "127.0.0.1:$PROM_PORT" --log.level warn

# ---------------------------------------------------------------- KEDA
GRPC_PORT="$(free_port)" PROBE_PORT="$(free_port)" ADAPTER_METRICS_PORT="$(free_port)"
# KEDA's processes read their namespace and the namespaces to watch (all) from the environment
export WATCH_NAMESPACE="" POD_NAMESPACE="$NS" KEDA_CLUSTER_OBJECT_NAMESPACE="$NS"
start_bg keda-operator "$ADDONS/" "${EXE[keda-operator]}" \
  --metrics-bind-address 0 --health-probe-bind-address "127.0.0.1:$PROBE_PORT" \
  --metrics-service-bind-address "127.0.0.1:$GRPC_PORT" --cert-dir "$CERTS" --ca-dir "$CERTS" \
  --enable-cert-rotation=false --zap-log-level info
start_bg keda-adapter "$ADDONS/" "${EXE[keda-adapter]}" \
  --bind-address "$BRIDGE_IP" --secure-port "$ADAPTER_PORT" --cert-dir "$CERTS" \
  --tls-cert-file "$CERTS/tls.crt" --tls-private-key-file "$CERTS/tls.key" \
  --authentication-kubeconfig "$KUBECONFIG" --authorization-kubeconfig "$KUBECONFIG" --lister-kubeconfig "$KUBECONFIG" \
  --metrics-service-address "127.0.0.1:$GRPC_PORT" --port "$ADAPTER_METRICS_PORT"
apiservice keda-adapter external.metrics.k8s.io keda-adapter "$ADAPTER_PORT"

# ---------------------------------------------------------------- ready?
wait_until "Prometheus" 120 prometheus curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready"
wait_until "KEDA's operator" 120 keda-operator curl -fsS "http://127.0.0.1:$PROBE_PORT/readyz"
wait_until "metrics.k8s.io" 180 metrics-server k get --raw /apis/metrics.k8s.io/v1beta1
wait_until "external.metrics.k8s.io" 180 keda-adapter k get --raw /apis/external.metrics.k8s.io/v1beta1
log "ready: Prometheus http://127.0.0.1:$PROM_PORT, metrics-server $BRIDGE_IP:$MS_PORT, keda-adapter $BRIDGE_IP:$ADAPTER_PORT (logs: $LOGS; stop: $HERE/down.sh $ADDONS)"
printf 'PROMETHEUS_URL=http://127.0.0.1:%s\n' "$PROM_PORT" >&3
