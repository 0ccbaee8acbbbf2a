#!/usr/bin/env bash
# Start a local Kubernetes control plane: etcd + kube-apiserver + kube-controller-manager, built by
# the project from Go modules (k8s/ and etcd/ beside this script, through build.sh: the first start
# on a machine builds them, about 10 minutes on 2 cores; later starts reuse the cache).
#
#   start.sh [STATE_DIR]      STATE_DIR defaults to "${TMPDIR:-/tmp}/k8s-local"
#
# Idempotent: components already running for STATE_DIR are left alone. Progress goes to stderr;
# the last line on stdout is KUBECONFIG=<STATE_DIR>/kubeconfig, so a caller can do
#   export "$(path/to/start.sh /tmp/k8s | tail -1)"
# Env: K8S_PORT ETCD_PORT ETCD_PEER_PORT KCM_PORT (default: free loopback ports picked at start),
#      KCM_CONTROLLERS (default below), K8S_START_TIMEOUT (seconds for the API server, default 180).
# Never writes next to this script; everything goes to STATE_DIR.
set -euo pipefail

HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
KCM_CONTROLLERS="${KCM_CONTROLLERS:-garbagecollector,namespace,serviceaccount,serviceaccount-token,clusterrole-aggregation}"
COMPONENTS=(etcd kube-apiserver kube-controller-manager)

# Everything this script prints goes to stderr, except the final KUBECONFIG= line (fd 3).
exec 3>&1 1>&2
log() { printf 'k8s-local: %s\n' "$*" >&2; }
die() { printf 'k8s-local: ERROR: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
  -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) die "unknown option: $1 (usage: start.sh [STATE_DIR])" ;;
esac
[[ $# -le 1 ]] || die "usage: start.sh [STATE_DIR]"

STATE_ARG="${1:-${TMPDIR:-/tmp}/k8s-local}"
mkdir -p -- "$STATE_ARG" || die "cannot create state dir: $STATE_ARG"
STATE="$(CDPATH='' cd -- "$STATE_ARG" && pwd -P)"
case "$STATE/" in "$HERE/"*) die "STATE_DIR must be outside $HERE" ;; esac
[[ "$STATE" != *:* ]] || die "STATE_DIR must not contain ':' (KUBECONFIG is ':'-separated): $STATE"
BIN="$STATE/bin" PKI="$STATE/pki" RUN="$STATE/run" LOGS="$STATE/logs" DATA="$STATE/data/etcd"
if [[ ! -f "$STATE/.k8s-local-state" ]]; then  # marker: stop.sh --wipe only deletes dirs carrying it
  [[ -z "$(ls -A -- "$STATE")" ]] || die "STATE_DIR $STATE is not empty and was not made by start.sh"
  touch "$STATE/.k8s-local-state"
fi

# One start.sh at a time per STATE_DIR (fd 9; closed for the daemons).
exec 9>"$STATE/.lock"
flock -w 900 9 || die "another start.sh holds $STATE/.lock"

# ---------- host packages: curl, openssl ----------
# shellcheck source=lib/shared.sh
. "$HERE/lib/shared.sh"
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
install_packages "${missing[@]}"

# ---------- process helpers ----------
exe_of() { echo "$BIN/$1"; }
pid_of() { control_plane_pid "$1"; }
alive() { pid_of "$1" >/dev/null; }
stop_component() {
  local pid i
  pid="$(pid_of "$1")" || { rm -f "$RUN/$1.pid"; return 0; }
  log "stopping $1 (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 60; i++)); do alive "$1" || break; sleep 0.25; done
  alive "$1" && kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 20; i++)); do alive "$1" || break; sleep 0.25; done
  rm -f "$RUN/$1.pid"
}

# ---------- binaries: built from Go modules (build.sh caches them), linked into STATE_DIR/bin ----------
# Every Kubernetes component is one binary that runs the command it is started as; kubectl too.
mkdir -p "$BIN" "$RUN/apiserver-certs" "$LOGS" "$DATA"
chmod 700 "$STATE/data" "$DATA"
K8S_BINARY="$("$HERE/build.sh" k8s 9>&- | tail -n 1)" || die "cannot build Kubernetes (see above)"
ETCD_BINARY="$("$HERE/build.sh" etcd 9>&- | tail -n 1)" || die "cannot build etcd (see above)"
REPLACED=()
link_binary() {  # NAME TARGET: a component whose binary changed is restarted below
  [[ "$(readlink "$BIN/$1" 2>/dev/null)" == "$2" ]] && return 0
  ln -sfn "$2" "$BIN/$1"
  REPLACED+=("$1")
}
link_binary etcd "$ETCD_BINARY"
for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do link_binary "$b" "$K8S_BINARY"; done
log "Kubernetes $("$BIN/kubectl" version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n 1), etcd $("$BIN/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: //p')"

# ---------- PKI (generated once) ----------
gen_pki() {  # in the current directory
  openssl genrsa -out ca.key 2048 2>/dev/null
  openssl req -x509 -new -nodes -key ca.key -sha256 -days 3650 -subj "/CN=local-kubernetes-ca" -out ca.crt
  cat > apiserver.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.96.0.1
EOF
  openssl genrsa -out apiserver.key 2048 2>/dev/null
  openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
    -extfile apiserver.ext -out apiserver.crt 2>/dev/null
  cat > client.ext <<'EOF'
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
EOF
  openssl genrsa -out admin.key 2048 2>/dev/null
  openssl req -new -key admin.key -subj "/O=system:masters/CN=kubernetes-admin" -out admin.csr
  openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
    -extfile client.ext -out admin.crt 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  # front-proxy (aggregation layer / requestheader authn) CA and client cert, as kubeadm sets up
  openssl genrsa -out front-proxy-ca.key 2048 2>/dev/null
  openssl req -x509 -new -nodes -key front-proxy-ca.key -sha256 -days 3650 -subj "/CN=front-proxy-ca" -out front-proxy-ca.crt
  openssl genrsa -out front-proxy-client.key 2048 2>/dev/null
  openssl req -new -key front-proxy-client.key -subj "/CN=front-proxy-client" -out front-proxy-client.csr
  openssl x509 -req -in front-proxy-client.csr -CA front-proxy-ca.crt -CAkey front-proxy-ca.key -CAcreateserial \
    -days 3650 -sha256 -extfile client.ext -out front-proxy-client.crt 2>/dev/null
  # static bearer token for user "admin" in group system:masters
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > admin.token
  printf '%s,admin,admin-uid,"system:masters"\n' "$(<admin.token)" > tokens.csv
  chmod 600 ./*.key admin.token tokens.csv
  rm -f ./*.csr
}
# Pod Security Admission enforces `restricted` in every namespace but kube-system, as a hardened
# platform does: the chart's pods must be admitted there (a namespace's own labels can still relax it)
cat > "$RUN/admission.yaml" <<'EOF'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: restricted, enforce-version: latest, audit: restricted, audit-version: latest, warn: restricted, warn-version: latest}
    exemptions: {usernames: [], runtimeClasses: [], namespaces: [kube-system]}
EOF
if [[ ! -f "$PKI/front-proxy-client.crt" || ! -f "$PKI/tokens.csv" ]]; then
  log "generating PKI"
  rm -rf "$PKI.tmp"; mkdir -m 700 "$PKI.tmp"
  (cd "$PKI.tmp" && gen_pki) || die "PKI generation failed"
  rm -rf "$PKI"; mv "$PKI.tmp" "$PKI"
fi

# ---------- which components (re)start ----------
for b in "${REPLACED[@]}"; do   # a running component whose binary changed is restarted
  case "$b" in
    kube-apiserver) stop_component kube-controller-manager; stop_component "$b" ;;
    etcd|kube-controller-manager) stop_component "$b" ;;
  esac
done
if [[ ! -f "$STATE/ports.env" ]] || ! alive etcd; then  # without recorded ports, restart all
  stop_component kube-controller-manager; stop_component kube-apiserver; stop_component etcd
fi
alive kube-apiserver || stop_component kube-controller-manager

# ---------- ports: env > recorded (if still free) > free loopback port ----------
declare -A USED=()
load_used_ports() {
  local f sl loc rem st rest
  USED=()
  for f in /proc/net/tcp /proc/net/tcp6; do   # any local port but TIME_WAIT ones (06) counts
    [[ -r $f ]] || continue
    while read -r sl loc rem st rest; do
      [[ $sl == sl || $st == 06 ]] || USED[$((16#${loc##*:}))]=1
    done < "$f"
  done
}
pick_port() {  # VAR: random free port in 20000-32767 (below Linux's ephemeral range)
  local p i
  for ((i = 0; i < 2000; i++)); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    if [[ -z ${USED[$p]:-} ]]; then USED[$p]=1; printf -v "$1" '%s' "$p"; return 0; fi
  done
  die "no free port found"
}
REC_K8S_PORT="" REC_ETCD_PORT="" REC_ETCD_PEER_PORT="" REC_KCM_PORT=""
if [[ -f "$STATE/ports.env" ]]; then
  while IFS='=' read -r k v; do
    case "$k" in K8S_PORT|ETCD_PORT|ETCD_PEER_PORT|KCM_PORT) [[ $v =~ ^[0-9]+$ ]] && printf -v "REC_$k" '%s' "$v" ;; esac
  done < "$STATE/ports.env"
fi
load_used_ports
assign_port() {  # VAR COMPONENT FROM_ENV
  local var="$1" comp="$2" env="${3:-}" rec
  rec="REC_$var"; rec="${!rec}"
  if alive "$comp" && [[ -n $rec ]]; then
    [[ -z $env || $env == "$rec" ]] || log "warning: $comp already runs on port $rec; ignoring $var=$env (stop.sh first)"
    printf -v "$var" '%s' "$rec"
  elif [[ -n $env ]]; then
    [[ $env =~ ^[0-9]+$ ]] || die "$var must be a port number: $env"
    [[ -z ${USED[$env]:-} ]] || die "$var=$env is already in use"
    USED[$env]=1; printf -v "$var" '%s' "$env"
  elif [[ -n $rec && -z ${USED[$rec]:-} ]]; then
    USED[$rec]=1; printf -v "$var" '%s' "$rec"
  else
    pick_port "$var"
  fi
}
assign_ports() {
  assign_port ETCD_PORT etcd "${ETCD_PORT_ENV}"
  assign_port ETCD_PEER_PORT etcd "${ETCD_PEER_PORT_ENV}"
  assign_port K8S_PORT kube-apiserver "${K8S_PORT_ENV}"
  assign_port KCM_PORT kube-controller-manager "${KCM_PORT_ENV}"
  printf 'K8S_PORT=%s\nETCD_PORT=%s\nETCD_PEER_PORT=%s\nKCM_PORT=%s\n' \
    "$K8S_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT" "$KCM_PORT" > "$STATE/ports.env"
}
ETCD_PORT_ENV="${ETCD_PORT:-}" ETCD_PEER_PORT_ENV="${ETCD_PEER_PORT:-}" K8S_PORT_ENV="${K8S_PORT:-}" KCM_PORT_ENV="${KCM_PORT:-}"
while read -r v; do unset "$v"; done < <(compgen -e | grep '^ETCD_' || true)  # etcd reads ETCD_* as flags
assign_ports

# ---------- kubeconfig ----------
b64() { base64 -w0 < "$1"; }
write_kubeconfig() {
  cat > "$STATE/kubeconfig.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:${K8S_PORT}
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$PKI/admin.crt")
    client-key-data: $(b64 "$PKI/admin.key")
- name: admin-token
  user:
    token: $(<"$PKI/admin.token")
contexts:
- name: admin@local
  context:
    cluster: local
    user: admin
    namespace: default
- name: admin-token@local
  context:
    cluster: local
    user: admin-token
    namespace: default
current-context: admin@local
EOF
  chmod 600 "$STATE/kubeconfig.tmp"
  mv -f "$STATE/kubeconfig.tmp" "$STATE/kubeconfig"
}

# ---------- start / wait ----------
START_OFFSET=0
start_bg() {  # NAME ARGS... (detached with setsid; no inherited pipes or locks)
  local name="$1"; shift
  touch "$LOGS/$name.log"
  START_OFFSET=$(stat -c %s "$LOGS/$name.log")
  printf '\n==== %s start %s ====\n' "$(date -u +%FT%TZ)" "$name" >> "$LOGS/$name.log"
  setsid nohup "$(exe_of "$name")" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null 3>&- 9>&- &
  local pid=$! i st
  echo "$pid" > "$RUN/$name.pid"
  # wait until setsid and nohup have exec'd the binary, so that alive() does not take a process
  # still on its way there for a dead one (seen on a loaded machine)
  for ((i = 0; i < 100; i++)); do
    alive "$name" && return 0
    st="$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$pid/status" 2>/dev/null || true)"
    [[ -n "$st" && "$st" != Z ]] || return 0
    sleep 0.1
  done
}
# wait_for NAME SECONDS CMD...: 0 when CMD succeeds, 2 when NAME died of a port clash; else exits
wait_for() {
  local name="$1" secs="$2" i; shift 2
  for ((i = 0; i < secs * 10; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    if ! alive "$name"; then
      sleep 0.2
      if grep -q 'address already in use' < <(tail -c +"$((START_OFFSET + 1))" "$LOGS/$name.log"); then return 2; fi
      log "$name exited; last lines of $LOGS/$name.log:"
      tail -n 25 "$LOGS/$name.log" >&2
      die "$name failed to start (see $LOGS/$name.log; stop with: $HERE/stop.sh '$STATE')"
    fi
    sleep 0.1
  done
  log "timeout after ${secs}s waiting for $name; last lines of $LOGS/$name.log:"
  tail -n 25 "$LOGS/$name.log" >&2
  die "$name did not become ready (stop with: $HERE/stop.sh '$STATE')"
}
retry_ports() {  # NAME VAR...: after a port clash, pick new ports unless they came from env
  local name="$1" v e; shift
  for v in "$@"; do
    e="${v}_ENV"; [[ -z ${!e} ]] || die "$name: $v=${!v} is already in use"
    printf -v "REC_$v" '%s' ""
  done
  log "$name: port clash, retrying on other ports"
  load_used_ports; assign_ports
}

start_etcd() {
  start_bg etcd --name local --data-dir "$DATA" \
    --listen-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --advertise-client-urls "http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster "local=http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster-state new --logger zap --log-level warn
}
start_apiserver() {
  start_bg kube-apiserver \
    --etcd-servers "http://127.0.0.1:${ETCD_PORT}" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$K8S_PORT" \
    --cert-dir "$RUN/apiserver-certs" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
    --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --authorization-mode RBAC --anonymous-auth=true \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" \
    --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --allow-privileged=true --profiling=false --endpoint-reconciler-type none \
    --admission-control-config-file "$RUN/admission.yaml" --enable-aggregator-routing=true \
    --v=1
}
start_kcm() {
  start_bg kube-controller-manager \
    --kubeconfig "$STATE/kubeconfig" \
    --authentication-kubeconfig "$STATE/kubeconfig" --authorization-kubeconfig "$STATE/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$KCM_PORT" \
    --controllers "$KCM_CONTROLLERS" \
    --use-service-account-credentials=false --leader-elect=false \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --v=1
}
etcd_ok() { curl -fsS --max-time 2 "http://127.0.0.1:${ETCD_PORT}/health"; }
api_ok() {
  curl -fsS --max-time 2 --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(<"$PKI/admin.token")" \
    "https://127.0.0.1:${K8S_PORT}/readyz"
}
kcm_ok() { curl -fsSk --max-time 2 "https://127.0.0.1:${KCM_PORT}/healthz"; }

T0=$SECONDS
for try in 1 2 3 4; do
  if ! alive etcd; then log "starting etcd on 127.0.0.1:$ETCD_PORT (peer $ETCD_PEER_PORT)"; start_etcd; fi
  rc=0; wait_for etcd 60 etcd_ok || rc=$?
  [[ $rc -eq 2 && $try -lt 4 ]] && { retry_ports etcd ETCD_PORT ETCD_PEER_PORT; continue; }
  [[ $rc -eq 0 ]] || die "etcd: ports in use"
  break
done
write_kubeconfig
K8S_TIMEOUT="${K8S_START_TIMEOUT:-180}"
for try in 1 2 3 4; do
  if ! alive kube-apiserver; then log "starting kube-apiserver on https://127.0.0.1:$K8S_PORT"; start_apiserver; fi
  rc=0; wait_for kube-apiserver "$K8S_TIMEOUT" api_ok || rc=$?
  [[ $rc -eq 2 && $try -lt 4 ]] && { retry_ports kube-apiserver K8S_PORT; write_kubeconfig; continue; }
  [[ $rc -eq 0 ]] || die "kube-apiserver: port in use"
  break
done
for try in 1 2 3 4; do
  if ! alive kube-controller-manager; then log "starting kube-controller-manager on 127.0.0.1:$KCM_PORT"; start_kcm; fi
  rc=0; wait_for kube-controller-manager 60 kcm_ok || rc=$?
  [[ $rc -eq 2 && $try -lt 4 ]] && { retry_ports kube-controller-manager KCM_PORT; continue; }
  [[ $rc -eq 0 ]] || die "kube-controller-manager: port in use"
  break
done

log "ready in $((SECONDS - T0))s: https://127.0.0.1:$K8S_PORT  (etcd $ETCD_PORT, kcm $KCM_PORT;" \
  "pids $(for n in "${COMPONENTS[@]}"; do printf '%s ' "$(pid_of "$n")"; done | sed 's/ $//'))"
log "admin token: $PKI/admin.token   logs: $LOGS   stop: $HERE/stop.sh '$STATE'"
printf 'KUBECONFIG=%s\n' "$STATE/kubeconfig" >&3
