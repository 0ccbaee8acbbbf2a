#!/usr/bin/env bash
# NetworkPolicy enforcement on the project's test node (test/cluster/node), and the test hosts that
# the NetworkPolicy leg (test/node/network-policies.test.ts) reaches from inside pods.
#
#   network-policies.sh up STATE_DIR      KUBECONFIG must name the node's admin kubeconfig; needs root.
#                                         The last stdout lines are the test hosts, NAME=ADDRESS:PORT.
#   network-policies.sh down STATE_DIR    stops and removes all that `up` made (idempotent)
#
# The agent: kube-network-policies (network-policies/, built by build.sh), the agent kind runs, as a
# process beside the node's other components. The first packet of every new connection waits in an
# nfqueue for its verdict, which the agent gives from the NetworkPolicies it watches.
# - The queueing rules are this script's, as iptables rules (NFQUEUE), where the agent would install
#   its own in nftables: this machine's kernel has no nftables queue statement (nft_queue; "netlink
#   receive: no such file or directory" when the agent tries), but has iptables' NFQUEUE target. They
#   queue what the agent's own rules do, at POSTROUTING: new connections from or to the pod network,
#   except the node's root processes (the kubelet's probes, a test's client) and established flows.
#   (The agent's rules queue only pods that a policy selects; these queue every pod, and the agent
#   accepts the packets of a pod no policy selects: slower, same verdicts.)
# - A connection from a pod to the node ITSELF (the API server's forwarder on the bridge address, a
#   listener on the node) is delivered at INPUT and never reaches POSTROUTING, so the agent as it ships
#   does not see it. On most clusters the API server is another machine and is policed; here it is the
#   node, so the same first packets are queued at INPUT too, and NetworkPolicies govern them as they
#   would on another machine. DNS (port 53) is left out there: the node's cluster DNS is dnsmasq on the
#   bridge address, a host process that a policy's podSelector (k8s-app: kube-dns) cannot name, where a
#   real cluster runs DNS pods.
#
# The test hosts, each an HTTP server answering "NAME ok":
# - web:      198.51.100.10:80 in network namespace vf-np-web, an address outside the cluster's and
#             every private range: a page server on "the internet" (TEST-NET-2, routed only here).
# - metadata: 169.254.169.254:80 in network namespace vf-np-meta: where clouds answer with
#             credentials, routed through the node as it is on a cloud machine.
# - node:     the node's bridge address, 10.244.0.1:18080, in the host's own namespace.
# Their logs and pid files are in STATE_DIR; the agent's log is STATE_DIR/agent.log.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster/network-policies: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -eq 2 && ( $1 == up || $1 == down ) ]] || die "usage: network-policies.sh up|down STATE_DIR"
ACTION="$1"
mkdir -p -- "$2"
STATE="$(CDPATH='' cd -- "$2" && pwd -P)"
[[ $EUID -eq 0 ]] || die "must run as root (iptables, network namespaces)"

QUEUE=98                                # the agent's nfqueue (the agent's default, 100, is left to others)
POD_CIDR=10.244.0.0/16 NODE_ADDRESS=10.244.0.1
CHAIN_OUT=VIEWFINDER-NETPOL-POST CHAIN_IN=VIEWFINDER-NETPOL-INPUT   # this script's iptables chains (mangle)
WEB_NS=vf-np-web WEB_HOST_IF=vfnp-web WEB_HOST_ADDRESS=198.51.100.1/24 WEB_ADDRESS=198.51.100.10
META_NS=vf-np-meta META_HOST_IF=vfnp-meta META_HOST_ADDRESS=169.254.169.253/30 META_ADDRESS=169.254.169.254
NODE_PORT=18080

stop_pid() {  # stop_pid NAME: SIGTERM the process of STATE/NAME.pid, SIGKILL after 10 s
  local file="$STATE/$1.pid" pid
  [[ -f "$file" ]] || return 0
  pid="$(<"$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

down() {
  for name in host-web host-metadata host-node agent; do stop_pid "$name"; done
  # the rules go before the agent would: packets queued to nobody are dropped
  iptables -t mangle -D POSTROUTING -j "$CHAIN_OUT" 2>/dev/null || true
  iptables -t mangle -D INPUT -j "$CHAIN_IN" 2>/dev/null || true
  for chain in "$CHAIN_OUT" "$CHAIN_IN"; do
    iptables -t mangle -F "$chain" 2>/dev/null || true
    iptables -t mangle -X "$chain" 2>/dev/null || true
  done
  ip route del "$META_ADDRESS/32" 2>/dev/null || true
  for link in "$WEB_HOST_IF" "$META_HOST_IF"; do ip link del "$link" 2>/dev/null || true; done
  for ns in "$WEB_NS" "$META_NS"; do ip netns del "$ns" 2>/dev/null || true; done
}

if [[ $ACTION == down ]]; then
  # the rules first, then the agent: a packet queued while the agent is gone would be dropped
  iptables -t mangle -D POSTROUTING -j "$CHAIN_OUT" 2>/dev/null || true
  iptables -t mangle -D INPUT -j "$CHAIN_IN" 2>/dev/null || true
  down
  log "stopped"
  exit 0
fi

[[ -n "${KUBECONFIG:-}" && -f "$KUBECONFIG" ]] || die "KUBECONFIG must name the node's kubeconfig"
ip -4 addr show 2>/dev/null | grep -q "inet $NODE_ADDRESS/" || die "no node here ($NODE_ADDRESS is not on this machine): start one with test/cluster/node/up.sh"
NODE_JS="$(command -v node)" || die "node is not on PATH (the test hosts are Node HTTP servers)"
command -v iptables >/dev/null 2>&1 || die "iptables is not installed (node/up.sh installs it)"
down   # whatever an earlier run left

BIN="$("$HERE/build.sh" network-policies | tail -n 1)"
[[ -x "$BIN" ]] || die "build.sh printed no binary (got: $BIN)"
queue_bound() { grep -qE "^ *$QUEUE " /proc/net/netfilter/nfnetlink_queue 2>/dev/null; }
# An agent that an earlier run left (its STATE_DIR gone) would hold the queue and answer for pods it
# no longer knows, accepting everything: it is stopped, and any other holder of the queue is an error.
if queue_bound; then
  for pid in $(pgrep -f -- "/network-policies --kubeconfig .* --nfqueue-id $QUEUE " || true); do
    log "stopping an agent an earlier run left on nfqueue $QUEUE (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
  done
  for _ in $(seq 100); do queue_bound || break; sleep 0.1; done
  queue_bound && die "nfqueue $QUEUE is held by another program (/proc/net/netfilter/nfnetlink_queue): stop it first"
fi

# The agent, in its own session so that the caller's Ctrl-C does not reach it; `down` stops it.
setsid "$BIN" --kubeconfig "$KUBECONFIG" --node-name "${NODE_NAME:-localhost}" --nfqueue-id "$QUEUE" \
  --metrics-bind-address 127.0.0.1:0 </dev/null >>"$STATE/agent.log" 2>&1 &
echo $! >"$STATE/agent.pid"
# Ready once it listens on its queue (the kernel lists a bound queue), and still runs a moment later:
# an agent that could not bind the queue logs it and exits.
for _ in $(seq 300); do
  kill -0 "$(<"$STATE/agent.pid")" 2>/dev/null || die "the agent exited at start: $(tail -n 20 "$STATE/agent.log")"
  queue_bound && break
  sleep 0.1
done
sleep 1
if ! queue_bound || ! kill -0 "$(<"$STATE/agent.pid")" 2>/dev/null || grep -q 'could not open nfqueue socket' "$STATE/agent.log"; then
  down
  die "the agent does not hold nfqueue $QUEUE: $(tail -n 20 "$STATE/agent.log")"
fi

m() { iptables -t mangle "$@"; }
m -N "$CHAIN_OUT"
m -A "$CHAIN_OUT" -m conntrack ! --ctstate NEW -j RETURN
m -A "$CHAIN_OUT" -m owner --uid-owner 0 -j RETURN
m -A "$CHAIN_OUT" -s "$POD_CIDR" -j NFQUEUE --queue-num "$QUEUE"
m -A "$CHAIN_OUT" -d "$POD_CIDR" -j NFQUEUE --queue-num "$QUEUE"
m -N "$CHAIN_IN"
m -A "$CHAIN_IN" -m conntrack ! --ctstate NEW -j RETURN
m -A "$CHAIN_IN" -p udp --dport 53 -j RETURN
m -A "$CHAIN_IN" -p tcp --dport 53 -j RETURN
m -A "$CHAIN_IN" -s "$POD_CIDR" -j NFQUEUE --queue-num "$QUEUE"
m -I POSTROUTING 1 -j "$CHAIN_OUT"
m -I INPUT 1 -j "$CHAIN_IN"

serve() {  # serve NAME NETNS|"" ADDRESS PORT: an HTTP server answering "NAME ok", in NETNS when given
  local name="$1" ns="$2" address="$3" port="$4" run=()
  [[ -z "$ns" ]] || run=(ip netns exec "$ns")
  setsid "${run[@]}" "$NODE_JS" -e '
    const [name, host, port] = process.argv.slice(1);
    require("http").createServer((req, res) => res.end(name + " ok\n")).listen(Number(port), host);
  ' "$name" "$address" "$port" </dev/null >>"$STATE/host-$name.log" 2>&1 &
  echo $! >"$STATE/host-$name.pid"
  for _ in $(seq 100); do
    if "${run[@]}" bash -c "exec 3<>/dev/tcp/$address/$port" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  die "the $name test host did not listen on $address:$port: $(tail -n 5 "$STATE/host-$name.log")"
}

host_namespace() {  # host_namespace NETNS HOST_IF HOST_ADDRESS/PREFIX ADDRESS PREFIX
  local ns="$1" host_if="$2" host_address="$3" address="$4" prefix="$5"
  ip netns add "$ns"
  ip link add "$host_if" type veth peer name eth0 netns "$ns"
  ip addr add "$host_address" dev "$host_if"
  ip link set "$host_if" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$address/$prefix" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" route add default via "${host_address%/*}"
}
host_namespace "$WEB_NS" "$WEB_HOST_IF" "$WEB_HOST_ADDRESS" "$WEB_ADDRESS" 24
host_namespace "$META_NS" "$META_HOST_IF" "$META_HOST_ADDRESS" "$META_ADDRESS" 30
serve web "$WEB_NS" 0.0.0.0 80
serve metadata "$META_NS" 0.0.0.0 80
serve node "" "$NODE_ADDRESS" "$NODE_PORT"

log "the agent polices the node (pid $(<"$STATE/agent.pid"), nfqueue $QUEUE, log $STATE/agent.log); test hosts up"
echo "NETPOL_WEB=$WEB_ADDRESS:80"
echo "NETPOL_METADATA=$META_ADDRESS:80"
echo "NETPOL_NODE=$NODE_ADDRESS:$NODE_PORT"
