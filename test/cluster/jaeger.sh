#!/usr/bin/env bash
# A tracing backend for the tests: Jaeger v2 (test/cluster/jaeger/, the OpenTelemetry-Collector-based
# all-in-one, built by build.sh) with in-memory storage, an OTLP/HTTP receiver and the query API on
# free loopback ports (or ports of JAEGER_LISTEN_HOST), in STATE_DIR.
#
#   jaeger.sh up STATE_DIR            start it (or find it running); the last two stdout lines are
#                                     VIEWFINDER_TEST_OTLP_ENDPOINT=http://127.0.0.1:PORT (give it to
#                                     a service as OTEL_EXPORTER_OTLP_ENDPOINT) and
#                                     VIEWFINDER_TEST_JAEGER_QUERY=http://127.0.0.1:PORT (GET /api/traces)
#   jaeger.sh down STATE_DIR [--wipe]     stop it (SIGTERM, then SIGKILL); --wipe also removes STATE_DIR
#   JAEGER_LISTEN_HOST=10.244.0.1 jaeger.sh up STATE_DIR    both on the real node's bridge address, where its pods reach it
#
# Both are idempotent. Nothing else listens: no gRPC receiver, no Jaeger or Zipkin receiver, no
# sampling or health endpoint, the collector's own metrics are off (its default is port 8888), and
# the query service does not trace itself (its default sends to localhost:4317).
# The server's log is STATE_DIR/jaeger.log, its configuration STATE_DIR/jaeger.yaml.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster/jaeger: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -ge 2 && ( $1 == up || $1 == down ) ]] || die "usage: jaeger.sh up STATE_DIR | jaeger.sh down STATE_DIR [--wipe]"
ACTION="$1" STATE="$2" WIPE="${3:-}"
HOST="${JAEGER_LISTEN_HOST:-127.0.0.1}"
[[ $HOST =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || die "JAEGER_LISTEN_HOST=$HOST is not an IPv4 address"
PID_FILE="$STATE/jaeger.pid" PORTS_FILE="$STATE/jaeger.ports"

# shellcheck source=lib/test-server.sh
. "$HERE/lib/test-server.sh"
print_env() {
  local otlp query
  read -r otlp query _ <"$PORTS_FILE"
  echo "VIEWFINDER_TEST_OTLP_ENDPOINT=http://$HOST:$otlp"
  echo "VIEWFINDER_TEST_JAEGER_QUERY=http://$HOST:$query"
}

if [[ $ACTION == down ]]; then
  server_stop
  rm -f "$PID_FILE" "$PORTS_FILE"
  [[ $WIPE != --wipe ]] || rm -rf "$STATE"
  exit 0
fi

mkdir -p "$STATE"
STATE="$(CDPATH='' cd -- "$STATE" && pwd -P)"
PID_FILE="$STATE/jaeger.pid" PORTS_FILE="$STATE/jaeger.ports"
if server_running && [[ -f "$PORTS_FILE" ]] && server_answers "$(cut -d' ' -f2 "$PORTS_FILE")"; then
  log "already running (pid $(cat "$PID_FILE"))"
  print_env
  exit 0
fi
server_running && die "a Jaeger of $STATE runs (pid $(cat "$PID_FILE")) but does not answer: jaeger.sh down $STATE first"
rm -f "$PID_FILE" "$PORTS_FILE"

BIN="$("$HERE/build.sh" jaeger | tail -n 1)"
[[ -x "$BIN" ]] || die "build.sh printed no binary (got: $BIN)"
# OTLP/HTTP, the query API, and its gRPC port, which the extension always opens: three different ones.
OTLP="$(free_port)" QUERY="$(free_port)" QUERY_GRPC="$(free_port)"
while [[ $QUERY == "$OTLP" ]]; do QUERY="$(free_port)"; done
while [[ $QUERY_GRPC == "$OTLP" || $QUERY_GRPC == "$QUERY" ]]; do QUERY_GRPC="$(free_port)"; done
cat >"$STATE/jaeger.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    # Its default traces the query service itself over OTLP/gRPC to localhost:4317, which is not ours
    # (and makes every stop wait 10 s for that exporter).
    enable_tracing: false
    http:
      endpoint: $HOST:$QUERY
    grpc:
      endpoint: $HOST:$QUERY_GRPC
receivers:
  otlp:
    protocols:
      http:
        endpoint: $HOST:$OTLP
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML
# setsid: its own session, so that the caller's Ctrl-C or process group kill does not reach it; down stops it.
setsid "$BIN" --config "$STATE/jaeger.yaml" </dev/null >>"$STATE/jaeger.log" 2>&1 &
echo $! >"$PID_FILE"
if server_wait_listening "$OTLP" "$STATE/jaeger.log" && server_wait_listening "$QUERY" "$STATE/jaeger.log"; then
  echo "$OTLP $QUERY $QUERY_GRPC" >"$PORTS_FILE"
  log "OTLP/HTTP on $HOST:$OTLP, query API on $HOST:$QUERY (pid $(cat "$PID_FILE"))"
  print_env
  exit 0
fi
"$0" down "$STATE"
die "jaeger did not listen on $HOST:$OTLP and $HOST:$QUERY within 30 s: $(tail -n 20 "$STATE/jaeger.log")"
