#!/usr/bin/env bash
# Start a single-node Kubernetes cluster on this machine: the control plane of ../start.sh with all
# controllers, plus a node: containerd + runc + a CNI bridge, kube-scheduler, kubelet, kube-proxy,
# a dnsmasq cluster DNS (Service kube-system/kube-dns) and a forwarder so that pods reach the API server.
#
#   up.sh [STATE_DIR]        STATE_DIR defaults to "${TMPDIR:-/tmp}/k8s-node"
#
# Idempotent: starts what is not running, restarts a component whose configuration changed, then
# waits until the node is Ready and the cluster DNS answers. Progress goes to stderr; the last line
# on stdout is KUBECONFIG=<STATE_DIR>/kubeconfig, so a caller can do
#   export "$(path/to/node/up.sh /tmp/k8s-node | tail -1)"
# Needs root. One node per machine: fails when another STATE_DIR's node runs.
# Env: NODE_READY_TIMEOUT (seconds, default 180), NODE_NAME, NODE_IP (see README), and start.sh's
#      K8S_PORT ETCD_PORT ETCD_PEER_PORT KCM_PORT K8S_START_TIMEOUT.
# Never writes next to this script; everything goes to STATE_DIR (and the host changes in README).
set -euo pipefail
NODE_DIR="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=lib/common.sh
. "$NODE_DIR/lib/common.sh"

exec 3>&1 1>&2   # everything goes to stderr, except the final KUBECONFIG= line (fd 3)
T0=$(date +%s%N)
elapsed() { local ms=$(( ($(date +%s%N) - T0) / 1000000 )); printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)); }
log() { printf 'k8s-node: [%5ss] %s\n' "$(elapsed)" "$*" >&2; }

case "${1:-}" in
  -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "${BASH_SOURCE[0]}"; exit 0 ;;
  -*) die "unknown option: $1 (usage: up.sh [STATE_DIR])" ;;
esac
[[ $# -le 1 ]] || die "usage: up.sh [STATE_DIR]"
[[ $EUID -eq 0 ]] || die "must run as root (containerd, kubelet and kube-proxy change the host's network)"
[[ "$(uname -m)" == x86_64 ]] || die "the node's images are built for linux/amd64 only (this is $(uname -m))"

# ---------------------------------------------------------------- STATE_DIR
STATE_ARG="${1:-$DEFAULT_STATE}"
mkdir -p -- "$STATE_ARG" || die "cannot create state dir: $STATE_ARG"
STATE_REAL="$(CDPATH='' cd -- "$STATE_ARG" && pwd -P)"
case "$STATE_REAL/" in "$K8S_DIR/"*) die "STATE_DIR must be outside $K8S_DIR" ;; esac
[[ "$STATE_REAL" != *[[:space:]:]* ]] || die "STATE_DIR must not contain whitespace or ':': $STATE_REAL"
# unix sockets inside it (containerd, kubelet) are limited to 108 bytes
((${#STATE_REAL} <= 60)) || die "STATE_DIR path is too long (${#STATE_REAL} > 60 characters): $STATE_REAL"
if [[ ! -f "$STATE_REAL/.k8s-local-state" ]]; then   # start.sh's marker: a directory this tool made
  [[ -z "$(ls -A -- "$STATE_REAL")" ]] || die "STATE_DIR $STATE_REAL is not empty and was not made by start.sh or up.sh"
  touch "$STATE_REAL/.k8s-local-state"
fi
touch "$STATE_REAL/.k8s-node-state"
set_paths "$STATE_REAL"
exec 7>"$STATE/.node.lock"
flock -w 900 7 || die "another up.sh/down.sh holds $STATE/.node.lock"
mkdir -p "$NODE" "$PIDS" "$CONF" "$HOSTREC" "$LOGS"
chmod 755 "$NODE"

# ---------------------------------------------------------------- host packages
# shellcheck source=../lib/shared.sh
. "$K8S_DIR/lib/shared.sh"
missing=()
[[ -x /usr/bin/containerd && -x /usr/bin/ctr ]] || missing+=(containerd)
[[ -x /usr/sbin/runc ]] || missing+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/portmap ]] || missing+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 && command -v iptables-save >/dev/null 2>&1 || missing+=(iptables)
command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
command -v socat >/dev/null 2>&1 || missing+=(socat)
[[ -x /usr/sbin/dnsmasq ]] || missing+=(dnsmasq-base)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v ip >/dev/null 2>&1 && command -v ss >/dev/null 2>&1 || missing+=(iproute2)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || missing+=(busybox-static)   # the node's test image
install_packages "${missing[@]}"
if [[ -d /run/systemd/system ]] && systemctl is-active --quiet containerd 2>/dev/null; then
  log "note: Debian's own containerd.service runs (/run/containerd/containerd.sock); this node does not use it"
fi

# ---------------------------------------------------------------- one node per machine
# node_running_in DIR: does a node component started for DIR still run?
node_running_in() { ( set_paths "$1"; any_component_alive ) 2>/dev/null; }
check_machine_free() {
  local owner p pid argv=() other desc line dev
  if owner="$(bridge_owner)"; then
    if [[ -z "$owner" ]]; then
      die "network interface $BRIDGE exists but was not made by this tool; remove it first (ip link del $BRIDGE)"
    elif [[ "$owner" != "$STATE" ]]; then
      if [[ -d "$owner" ]] && node_running_in "$owner"; then
        die "another node runs on this machine, from STATE_DIR $owner (only one node per machine); stop it first: $NODE_DIR/down.sh $owner"
      fi
      die "the node of STATE_DIR $owner was not shut down (its bridge $BRIDGE is still there); clean up first: $NODE_DIR/down.sh $owner"
    fi
  fi
  for p in "${FIXED_PORTS[@]}"; do
    pid="$(ss -Hltnp "( sport = :$p )" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)"
    [[ -n "$pid" ]] || continue
    for n in kubelet kube-proxy kube-scheduler; do [[ "$(pid_of "$n" 2>/dev/null)" == "$pid" ]] && continue 2; done
    argv=(); mapfile -d '' -t argv 2>/dev/null < "/proc/$pid/cmdline" || true
    desc="${argv[*]:0:4}"
    case "${argv[0]:-}" in
      */bin/kubelet|*/bin/kube-proxy|*/bin/kube-scheduler)
        other="${argv[0]%/bin/*}"
        if [[ "$other" != "$STATE" ]] && state_is_node "$other"; then
          die "another node runs on this machine, from STATE_DIR $other (port $p; only one node per machine); stop it first: $NODE_DIR/down.sh $other"
        fi ;;
    esac
    die "port $p (kubelet/kube-proxy/kube-scheduler) is in use by pid $pid ($desc): only one node per machine"
  done
  # the pod network must be free (another bridge, a VPN or a container network on it)
  while read -r line; do
    [[ -n "$line" ]] || continue
    dev="$(awk '{for (i = 1; i < NF; i++) if ($i == "dev") print $(i + 1)}' <<<"$line")"
    [[ "$dev" == "$BRIDGE" ]] || die "the pod network $POD_CIDR is already in use on this machine (route: $line)"
  done < <(ip -4 route show root "$POD_CIDR" 2>/dev/null || true)
  # the API server reaches the kubelet by the node name, and the kubelet listens on 127.0.0.1 only
  [[ "$NODE_NAME" =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || die "NODE_NAME must be a lower-case DNS name: $NODE_NAME"
  [[ " $(getent ahostsv4 "$NODE_NAME" 2>/dev/null | awk '{print $1}' | tr '\n' ' ' || true) " == *" 127.0.0.1 "* ]] \
    || die "NODE_NAME $NODE_NAME does not resolve to 127.0.0.1 (the API server reaches the kubelet by that name)"
}
check_machine_free

# ---------------------------------------------------------------- claim the machine: the bridge
# Creating the bridge is atomic, and its alias names this STATE_DIR: a second up.sh from another
# STATE_DIR stops here, before it starts anything.
if ip link add "$BRIDGE" type bridge 2>/dev/null; then
  ip link set dev "$BRIDGE" alias "$BRIDGE_ALIAS_PREFIX$STATE"
  log "created bridge $BRIDGE"
else
  owner="$(bridge_owner || true)"
  [[ "$owner" == "$STATE" ]] || check_machine_free   # lost a race: say who owns it
  [[ "$owner" == "$STATE" ]] || die "cannot create bridge $BRIDGE"
fi
if [[ ! -f "$HOSTREC/sysctl.orig" ]]; then   # the values before this node's first change
  for s in "${SYSCTLS[@]}"; do v="$(sysctl_get "$s" || true)"; [[ -z "$v" ]] || printf '%s=%s\n' "$s" "$v"; done > "$HOSTREC/sysctl.orig.tmp"
  mv -f "$HOSTREC/sysctl.orig.tmp" "$HOSTREC/sysctl.orig"
fi

# ---------------------------------------------------------------- node binaries and images (built and cached)
# kubelet, kube-scheduler and kube-proxy are start.sh's one Kubernetes binary (it links them); crictl
# and the two images are built here, beside the control plane's start
mkdir -p "$BIN"
( set -e
  ln -sfn "$("$K8S_DIR/build.sh" crictl | tail -n 1)" "$BIN/crictl"
  "$NODE_DIR/images/build.sh" | tail -n 1 > "$NODE/images.dir"
) 3>&- 7>&- & BUILDING=$!

# ---------------------------------------------------------------- control plane (start.sh, all controllers)
# a controller-manager that start.sh started with its default controller list is restarted with '*'
kcm_pid="$(cat "$STATE/run/kube-controller-manager.pid" 2>/dev/null || true)"
if [[ "$kcm_pid" =~ ^[0-9]+$ ]]; then
  kargv=(); mapfile -d '' -t kargv 2>/dev/null < "/proc/$kcm_pid/cmdline" || true
  if [[ "${kargv[0]:-}" == "$BIN/kube-controller-manager" && " ${kargv[*]} " == *" --kubeconfig $STATE/kubeconfig "* \
        && " ${kargv[*]} " != *" --controllers * "* ]]; then
    log "kube-controller-manager runs without all controllers; restarting it"
    kill -TERM "$kcm_pid" 2>/dev/null || true
    for ((i = 0; i < 60; i++)); do [[ -e "/proc/$kcm_pid" ]] || break; sleep 0.25; done
  fi
fi
log "control plane: KCM_CONTROLLERS='*' $K8S_DIR/start.sh $STATE"
KCM_CONTROLLERS='*' "$K8S_DIR/start.sh" "$STATE" >/dev/null 7>&- || die "start.sh failed (see above)"
K8S_PORT="$(k8s_port)"; [[ -n "$K8S_PORT" ]] || die "no K8S_PORT in $STATE/ports.env"
log "control plane ready at https://127.0.0.1:$K8S_PORT"
wait "$BUILDING" || die "cannot build the node's crictl or images (see above)"
# a component restarts when its binary changes (a new Kubernetes build): the link's target counts
declare -A BIN_SUM=()
for b in "${NODE_BINARIES[@]}"; do BIN_SUM[$b]="$(readlink "$BIN/$b")"; done

# ---------------------------------------------------------------- node client certificates + kubeconfigs
mkdir -p "$NPKI" "$KCFG"; chmod 700 "$NPKI" "$KCFG"
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' > "$NPKI/client.ext"
client_cert() {  # NAME CN [ORG]: issued by start.sh's CA; kept while valid and of that subject
  local n="$1" subj="/CN=$2"; [[ -n "${3:-}" ]] && subj="/O=$3/CN=$2"
  if [[ -f "$NPKI/$n.crt" && -f "$NPKI/$n.key" ]] && openssl verify -CAfile "$PKI/ca.crt" "$NPKI/$n.crt" >/dev/null 2>&1 \
     && [[ "$(openssl x509 -in "$NPKI/$n.crt" -noout -subject -nameopt compat)" == "subject=$subj" ]]; then
    return 0
  fi
  log "issuing client certificate $subj"
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$NPKI/$n.key" 2>/dev/null
  chmod 600 "$NPKI/$n.key"
  openssl req -new -key "$NPKI/$n.key" -subj "$subj" -out "$NPKI/$n.csr"
  openssl x509 -req -in "$NPKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAserial "$NPKI/ca.srl" \
    -CAcreateserial -days 3650 -sha256 -extfile "$NPKI/client.ext" -out "$NPKI/$n.crt" 2>/dev/null
  rm -f "$NPKI/$n.csr"
}
client_cert kubelet "system:node:$NODE_NAME" system:nodes
client_cert kube-proxy system:kube-proxy
client_cert kube-scheduler system:kube-scheduler
client_cert dns-sync "$FIELD_MANAGER:dns-sync"

# put FILE < content: replace FILE only when the content differs (kube-proxy exits when its config
# file is rewritten, and unchanged files keep the configuration hashes stable)
put() {
  local f="$1" t; t="$(mktemp "$f.XXXXXX")"; cat > "$t"
  if cmp -s "$t" "$f"; then rm -f "$t"; else chmod "${PUT_MODE:-644}" "$t"; mv -f "$t" "$f"; fi
}
write_kubeconfig() {  # NAME
  PUT_MODE=600 put "$KCFG/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:${K8S_PORT}
    certificate-authority: ${PKI}/ca.crt
users:
- name: $1
  user:
    client-certificate: ${NPKI}/$1.crt
    client-key: ${NPKI}/$1.key
contexts:
- name: $1@local
  context: {cluster: local, user: $1}
current-context: $1@local
EOF
}
for n in kubelet kube-proxy kube-scheduler; do write_kubeconfig "$n"; done

# ---------------------------------------------------------------- cluster objects the node needs
apply "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/$FIELD_MANAGER:system:nodes" <<EOF || die "cannot create the node's role binding"
# The API server authorizes with RBAC only (no Node authorizer): nodes get the system:node role
# through RBAC, as before Kubernetes 1.8.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "$FIELD_MANAGER:system:nodes"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
EOF
apply "/apis/rbac.authorization.k8s.io/v1/clusterroles/$FIELD_MANAGER:dns-sync" <<EOF || die "cannot create the DNS role"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "$FIELD_MANAGER:dns-sync"}
rules:
- {apiGroups: [""], resources: [services], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
EOF
apply "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/$FIELD_MANAGER:dns-sync" <<EOF || die "cannot create the DNS role binding"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "$FIELD_MANAGER:dns-sync"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "$FIELD_MANAGER:dns-sync"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "$FIELD_MANAGER:dns-sync"}]
EOF
# cluster DNS: dnsmasq on the bridge address, published as the usual kube-dns Service
apply /api/v1/namespaces/kube-system/services/kube-dns <<EOF || die "cannot create Service kube-system/kube-dns"
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns, kubernetes.io/name: dnsmasq}}
spec:
  clusterIP: ${DNS_SVC_IP}
  ports:
  - {name: dns, port: 53, protocol: UDP, targetPort: 53}
  - {name: dns-tcp, port: 53, protocol: TCP, targetPort: 53}
EOF
# Kubernetes 1.33 deprecated Endpoints: kube-proxy and the DNS sync read EndpointSlices, so the
# Services without a selector get theirs directly (mirrored Endpoints of default/kubernetes never
# reach kube-proxy on v1.37, and a pod then cannot reach the API server)
endpoint_slice() {  # NAMESPACE SERVICE PORTS_YAML
  apply "/apis/discovery.k8s.io/v1/namespaces/$1/endpointslices/$2" <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: $2
  namespace: $1
  labels: {kubernetes.io/service-name: $2, endpointslice.kubernetes.io/managed-by: $FIELD_MANAGER}
addressType: IPv4
endpoints: [{addresses: ["${POD_GW}"], conditions: {ready: true}}]
ports: $3
EOF
}
endpoint_slice kube-system kube-dns "[{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]" \
  || die "cannot create EndpointSlice kube-system/kube-dns"
# Service 'kubernetes' (10.96.0.1:443): the API server listens on 127.0.0.1 only and keeps no
# endpoints (--endpoint-reconciler-type none), so its endpoint is the forwarder on the bridge address
endpoint_slice default kubernetes "[{name: https, port: ${APISERVER_POD_PORT}, protocol: TCP}]" \
  || die "cannot create EndpointSlice default/kubernetes"

# ---------------------------------------------------------------- host: sysctls, bridge, fixed directories
sysctl_set net.ipv4.ip_forward 1 || die "cannot enable net.ipv4.ip_forward"
# pod -> Service -> pod on the same bridge needs the bridge's traffic to pass iptables (br_netfilter)
if [[ ! -e "$(sysctl_path net.bridge.bridge-nf-call-iptables)" ]] && command -v modprobe >/dev/null 2>&1; then
  modprobe br_netfilter 2>/dev/null || true
fi
if [[ -e "$(sysctl_path net.bridge.bridge-nf-call-iptables)" ]]; then
  sysctl_set net.bridge.bridge-nf-call-iptables 1 || log "warning: cannot set net.bridge.bridge-nf-call-iptables=1"
  sysctl_set net.bridge.bridge-nf-call-ip6tables 1 || true
else
  log "warning: no br_netfilter in this kernel: a pod reaching a Service backed by another pod may fail"
fi

for d in "${HOST_DIRS[@]}"; do   # the kubelet and libcni use these fixed paths
  m="$HOSTREC/created$(tr / _ <<<"$d")"
  if [[ ! -e "$d" ]]; then mkdir -p "$d"; touch "$m"; fi
done

POD_MTU=1500
dev_mtu="$(ip -4 route show default 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "dev") {print $(i + 1); exit}}')"
if [[ -n "$dev_mtu" && -r "/sys/class/net/$dev_mtu/mtu" ]] && (( $(<"/sys/class/net/$dev_mtu/mtu") < POD_MTU )); then
  POD_MTU="$(<"/sys/class/net/$dev_mtu/mtu")"
fi
ip link set dev "$BRIDGE" mtu "$POD_MTU" 2>/dev/null || true
[[ "$(ip -4 -o addr show dev "$BRIDGE")" == *" $POD_GW/$POD_PREFIX "* ]] || ip addr add "$POD_GW/$POD_PREFIX" dev "$BRIDGE"
ip link set "$BRIDGE" up
# without a default route the host could not reach ClusterIPs: route the Service range to the bridge
if ! ip -4 route get "$API_SVC_IP" >/dev/null 2>&1; then
  ip route add "$SVC_CIDR" dev "$BRIDGE" src "$POD_GW"
fi
if [[ "$NODE_IP" != "$POD_GW" ]]; then
  [[ "$(ip -4 -o addr show)" == *" inet $NODE_IP/"* ]] || die "NODE_IP $NODE_IP is not an address of this machine"
fi

mkdir -p "$CNI_CONF" "$CNI_IPAM"
put "$CNI_CONF/10-$CNI_NET.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "${CNI_NET}",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "mtu": ${POD_MTU},
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "${POD_CIDR}", "gateway": "${POD_GW}"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "${CNI_IPAM}"
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

# ---------------------------------------------------------------- starting components
# ensure NAME MARKER INPUTS EXE ARGS...: start NAME unless it runs; restart it when its command line
# or one of INPUTS (config files, whose contents count, and other strings) changed since its start
ensure() {
  local n="$1" marker="$2" inputs="$3" h a; shift 3
  h="$({
    printf '%s\n' "$@"
    for a in $inputs; do if [[ -f "$a" ]]; then cat -- "$a"; else printf '%s\n' "$a"; fi; done
  } 2>/dev/null | sha256sum | cut -c1-16)"
  if alive "$n" && [[ "$(cat "$PIDS/$n.hash" 2>/dev/null)" != "$h" ]]; then
    log "$n: configuration changed, restarting"; stop_bg "$n"
  fi
  if ! alive "$n"; then
    log "starting $n"; start_bg "$n" "$marker" "$@"; echo "$h" > "$PIDS/$n.hash"
    alive "$n" || { tail -n 20 "$LOGS/$n.log" >&2; die "$n exited at once (log: $LOGS/$n.log)"; }
  fi
}

# ---------------------------------------------------------------- containerd
mkdir -p "$CTRD_ROOT" "$CTRD_STATE" "$RUNC_ROOT"
put "$CONF/containerd.toml" <<EOF
# containerd of the local node (generated by up.sh)
version = 2
root = "${CTRD_ROOT}"
state = "${CTRD_STATE}"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${SOCK}"
[ttrpc]
  address = ""
[debug]
  address = ""
  level = "info"
[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  netns_mounts_under_state_dir = true
  # oom_score_adj is never lowered below the caller's: some VMs deny CAP_SYS_RESOURCE even to root,
  # and the sandbox's default -998 then fails every pod
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  tolerate_missing_hugetlb_controller = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "${RUNC_ROOT}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${CNI_CONF}"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ""
EOF
ensure containerd "$CONF/containerd.toml" "$CONF/containerd.toml" /usr/bin/containerd --config "$CONF/containerd.toml"
for ((i = 0; i < 300; i++)); do
  ctr_ version >/dev/null 2>&1 && break
  alive containerd || { tail -n 20 "$LOGS/containerd.log" >&2; die "containerd exited (log: $LOGS/containerd.log)"; }
  sleep 0.1
done
ctr_ version >/dev/null 2>&1 || die "containerd does not answer on $SOCK"
for img in pause busybox; do   # bundled images: (re)import when missing or different
  tar="$(<"$NODE/images.dir")/$img.tar"
  idx="$(tar -xOf "$tar" index.json)" || die "cannot read $tar"
  name="$(jq -r '.manifests[0].annotations["io.containerd.image.name"]' <<<"$idx")"
  want="$(jq -r '.manifests[0].digest' <<<"$idx")"
  have="$(ctr_ images ls "name==$name" 2>/dev/null | awk 'NR > 1 {print $3}' || true)"
  [[ "$have" == "$want" ]] && continue
  log "importing $name"
  ctr_ images import "$tar" >/dev/null || die "cannot import $tar"
done
log "containerd ready"

# ---------------------------------------------------------------- cluster DNS: dnsmasq + the sync loop
mkdir -p "$DNS"; chmod 755 "$DNS"
[[ -f "$DNS/hosts" ]] || : > "$DNS/hosts"
chmod 644 "$DNS/hosts"
# upstream servers: the host's (dnsmasq runs in the host's network, so loopback ones work too)
UPSTREAM="$(awk '$1 == "nameserver" {print "server=" $2}' /etc/resolv.conf 2>/dev/null || true)"
put "$CONF/dnsmasq.conf" <<EOF
# cluster DNS of the local node (generated by up.sh)
port=53
listen-address=${POD_GW}
bind-interfaces
pid-file=
no-resolv
no-hosts
no-poll
${UPSTREAM}
local=/${CLUSTER_DOMAIN}/
addn-hosts=${DNS}/hosts
domain-needed
bogus-priv
cache-size=1000
EOF
# resolv.conf for pods with dnsPolicy Default: the host's servers that a pod can reach
awk '$1 == "nameserver" && $2 !~ /^127\./ && $2 != "::1"' /etc/resolv.conf > "$CONF/upstream-resolv.conf" 2>/dev/null || true
[[ -s "$CONF/upstream-resolv.conf" ]] || echo "nameserver $POD_GW" > "$CONF/upstream-resolv.conf"
ensure dnsmasq "--conf-file=$CONF/dnsmasq.conf" "$CONF/dnsmasq.conf" \
  /usr/sbin/dnsmasq --keep-in-foreground --log-facility=- "--conf-file=$CONF/dnsmasq.conf"
ensure dns-sync "$DNS/hosts" "$NODE_DIR/lib/dns-sync.sh $NPKI/dns-sync.crt" \
  /bin/bash "$NODE_DIR/lib/dns-sync.sh" "$STATE/ports.env" "$PKI/ca.crt" "$NPKI/dns-sync.crt" "$NPKI/dns-sync.key" \
  "$DNS/hosts" "$PIDS/dnsmasq.pid" "$CLUSTER_DOMAIN"

# ---------------------------------------------------------------- pods -> API server
ensure apiserver-forwarder "forwarder:$NODE/" "" \
  /usr/bin/socat -lp "forwarder:$NODE/" "TCP-LISTEN:${APISERVER_POD_PORT},bind=${POD_GW},reuseaddr,fork" \
  "TCP:127.0.0.1:${K8S_PORT}"

# ---------------------------------------------------------------- kube-scheduler, kubelet, kube-proxy
# again, now that the control plane is up: another node may have taken the fixed ports meanwhile,
# and two kube-proxies would overwrite each other's rules
check_machine_free
ensure kube-scheduler "$KCFG/kube-scheduler.kubeconfig" \
  "${BIN_SUM[kube-scheduler]} $KCFG/kube-scheduler.kubeconfig $NPKI/kube-scheduler.crt" \
  "$BIN/kube-scheduler" --kubeconfig "$KCFG/kube-scheduler.kubeconfig" \
  --authentication-kubeconfig "$KCFG/kube-scheduler.kubeconfig" \
  --authorization-kubeconfig "$KCFG/kube-scheduler.kubeconfig" \
  --leader-elect=false --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --v=1

mkdir -p "$KUBELET_ROOT" "$NODE/volume-plugins"
put "$CONF/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The kubelet API listens on 127.0.0.1 only. The API server reaches it by the node name (which must
# resolve to 127.0.0.1) without a client certificate, hence anonymous + AlwaysAllow: nothing
# outside this machine can connect.
address: 127.0.0.1
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${KUBELET_HEALTHZ_PORT}
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
  x509: {clientCAFile: ${PKI}/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://${SOCK}
cgroupDriver: cgroupfs
cgroupsPerQOS: true
# Kubernetes 1.35 refuses cgroup v1 unless told otherwise; upstream no longer supports it (see
# CGROUP_NOTE below). On a cgroup v2 machine this setting changes nothing.
failCgroupV1: false
failSwapOn: false
# compute the node status every 2 s (default 10 s): the node turns Ready sooner after a start
nodeStatusUpdateFrequency: 2s
clusterDomain: ${CLUSTER_DOMAIN}
clusterDNS: [${DNS_SVC_IP}]
resolvConf: ${CONF}/upstream-resolv.conf
volumePluginDir: ${NODE}/volume-plugins
rotateCertificates: false
serverTLSBootstrap: false
serializeImagePulls: false
# the disk is the machine's: never garbage-collect images (there is no registry to pull them back
# from) and never evict pods for disk pressure; only memory pressure evicts
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
containerLogMaxSize: 10Mi
containerLogMaxFiles: 3
maxPods: 110
protectKernelDefaults: false
makeIPTablesUtilChains: true
# not -999: without CAP_SYS_RESOURCE (some VMs) no process may lower its oom_score_adj
oomScoreAdj: 0
EOF
if [[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" != cgroup2fs ]]; then
  log "note: this machine runs cgroup v1, which Kubernetes no longer supports upstream (since 1.35 the kubelet starts on it only with failCgroupV1: false, set here); pods run, but resource accounting may differ from a cgroup v2 node"
fi
[[ -f "$HOSTREC/started" ]] || touch "$HOSTREC/started"   # down.sh: pod log directories newer than this are this node's
ensure kubelet "$CONF/kubelet.yaml" "${BIN_SUM[kubelet]} $CONF/kubelet.yaml $KCFG/kubelet.kubeconfig $NPKI/kubelet.crt" \
  "$BIN/kubelet" --config "$CONF/kubelet.yaml" --kubeconfig "$KCFG/kubelet.kubeconfig" \
  --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" \
  --root-dir "$KUBELET_ROOT" --cert-dir "$KUBELET_ROOT/pki" --v=1

put "$CONF/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${KCFG}/kube-proxy.kubeconfig
hostnameOverride: ${NODE_NAME}
mode: iptables
clusterCIDR: ${POD_CIDR}
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:${PROXY_HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:${PROXY_METRICS_PORT}
# NodePorts on the node IP only. Both families are listed: kube-proxy 1.25's IPv6 half treats an
# empty list as "all addresses, 127.0.0.1 included" and then sets net.ipv4.conf.all.route_localnet=1
# for the whole machine; ::1 keeps that sysctl untouched (there are no IPv6 Services here)
nodePortAddresses: ["${NODE_IP}/32", "::1/128"]
# leave the machine's conntrack sysctls alone
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {masqueradeAll: false, minSyncPeriod: 1s, syncPeriod: 30s}
oomScoreAdj: 0
EOF
ensure kube-proxy "$CONF/kube-proxy.yaml" \
  "${BIN_SUM[kube-proxy]} $CONF/kube-proxy.yaml $KCFG/kube-proxy.kubeconfig $NPKI/kube-proxy.crt" \
  "$BIN/kube-proxy" --config "$CONF/kube-proxy.yaml" --v=1

# ---------------------------------------------------------------- wait: node Ready, cluster DNS answers
# dns_a NAME SERVER: the IPv4 answer of a DNS query over UDP (socat), empty when none
dns_a() {
  local q l b
  q='\x4b\x38\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00'   # id, flags RD, one question
  IFS=. read -ra labels <<<"$1"
  for l in "${labels[@]}"; do q+="$(printf '\\x%02x' "${#l}")$l"; done
  q+='\x00\x00\x01\x00\x01'                              # type A, class IN
  # shellcheck disable=SC2059  # q holds printf escapes
  b=($(printf "$q" | socat -t 0.3 - "UDP:$2:53" 2>/dev/null | od -An -v -tu1 || true))
  # reply with the same id, RCODE 0, at least one answer: the last 4 bytes are the (last) A record
  ((${#b[@]} > 16 && b[0] == 75 && b[1] == 56 && (b[3] & 15) == 0 && b[6] * 256 + b[7] > 0)) || return 0
  local n=${#b[@]}
  printf '%s.%s.%s.%s\n' "${b[n - 4]}" "${b[n - 3]}" "${b[n - 2]}" "${b[n - 1]}"
}
TIMEOUT="${NODE_READY_TIMEOUT:-180}"
log "waiting for node $NODE_NAME to be Ready and the cluster DNS to answer (up to ${TIMEOUT}s)"
deadline=$((SECONDS + TIMEOUT))
ready="" dns=""
while :; do
  if [[ "$ready" != True ]]; then
    ready="$(API_QUIET=1 api GET "/api/v1/nodes/$NODE_NAME" 2>/dev/null |
      jq -r '.status.conditions[]? | select(.type == "Ready") | .status' 2>/dev/null || true)"
    [[ "$ready" == True ]] && log "node $NODE_NAME Ready"
  fi
  if [[ "$ready" == True && "$dns" != "$API_SVC_IP" ]]; then
    dns="$(dns_a "kubernetes.default.svc.$CLUSTER_DOMAIN" "$DNS_SVC_IP")"
  fi
  [[ "$ready" == True && "$dns" == "$API_SVC_IP" ]] && break
  for n in "${COMPONENTS[@]}"; do
    alive "$n" || { tail -n 25 "$LOGS/$n.log" >&2; die "$n exited (log: $LOGS/$n.log; stop with: $NODE_DIR/down.sh $STATE)"; }
  done
  if ((SECONDS >= deadline)); then
    tail -n 25 "$LOGS/kubelet.log" >&2
    [[ "$ready" == True ]] && die "the cluster DNS ($DNS_SVC_IP) does not answer after ${TIMEOUT}s (logs: $LOGS/dnsmasq.log, dns-sync.log, kube-proxy.log)"
    die "node $NODE_NAME not Ready after ${TIMEOUT}s (logs: $LOGS; stop with: $NODE_DIR/down.sh $STATE)"
  fi
  sleep 0.5
done
log "cluster up in $(elapsed)s: node $NODE_NAME ($NODE_IP), pods $POD_CIDR, Services $SVC_CIDR, DNS $DNS_SVC_IP"
log "logs: $LOGS   images: $NODE_DIR/load-image.sh $STATE IMAGE.tar   stop: $NODE_DIR/down.sh $STATE [--wipe]"
printf 'KUBECONFIG=%s\n' "$STATE/kubeconfig" >&3
