#!/usr/bin/env bash
# An S3-compatible object store for the tests: versitygw (test/cluster/versitygw/, built by build.sh)
# over a directory of STATE_DIR (its "posix" backend), on a free loopback port, with root
# credentials it generates once per STATE_DIR. It verifies every request's SigV4 signature, as S3 does.
#
#   versitygw.sh up STATE_DIR          start it (or find it running); the last four stdout lines are
#                                      S3_ENDPOINT=http://127.0.0.1:PORT
#                                      S3_REGION=us-east-1
#                                      S3_ACCESS_KEY_ID=...
#                                      S3_SECRET_ACCESS_KEY=...
#   versitygw.sh down STATE_DIR [--wipe]   stop it (SIGTERM, then SIGKILL); --wipe also removes STATE_DIR
#   VERSITYGW_LISTEN_HOST=10.244.0.1 versitygw.sh up STATE_DIR   on that address instead of loopback
#                                      (the real node's bridge, where pods reach it)
#
# Both are idempotent. Buckets are directories of STATE_DIR/data; object metadata (content type,
# x-amz-meta-*) goes to a sidecar directory rather than extended attributes, so that any
# filesystem under TMPDIR serves. The gateway's log is STATE_DIR/versitygw.log.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster/versitygw: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -ge 2 && ( $1 == up || $1 == down ) ]] || die "usage: versitygw.sh up STATE_DIR | versitygw.sh down STATE_DIR [--wipe]"
ACTION="$1" STATE="$2" WIPE="${3:-}"
HOST="${VERSITYGW_LISTEN_HOST:-127.0.0.1}" REGION=us-east-1
PID_FILE="$STATE/versitygw.pid" PORT_FILE="$STATE/versitygw.port"

# shellcheck source=lib/test-server.sh
. "$HERE/lib/test-server.sh"

if [[ $ACTION == down ]]; then
  server_stop
  rm -f "$PID_FILE" "$PORT_FILE"
  [[ $WIPE != --wipe ]] || rm -rf "$STATE"
  exit 0
fi

mkdir -p "$STATE/data" "$STATE/sidecar"
STATE="$(CDPATH='' cd -- "$STATE" && pwd -P)"
PID_FILE="$STATE/versitygw.pid" PORT_FILE="$STATE/versitygw.port" CREDENTIALS="$STATE/credentials"
if [[ ! -s "$CREDENTIALS" ]]; then
  # Drawn here, never a fixed test key: a gateway left running by a killed run takes no guessed key.
  (umask 077; printf '%s %s\n' "$(tr -dc 'A-Z0-9' </dev/urandom | head -c 20)" "$(tr -dc 'A-Za-z0-9' </dev/urandom | head -c 40)" >"$CREDENTIALS")
fi
read -r ACCESS_KEY SECRET_KEY <"$CREDENTIALS"
print_env() {
  printf 'S3_ENDPOINT=http://%s:%s\nS3_REGION=%s\nS3_ACCESS_KEY_ID=%s\nS3_SECRET_ACCESS_KEY=%s\n' "$HOST" "$1" "$REGION" "$ACCESS_KEY" "$SECRET_KEY"
}
if server_running && [[ -f "$PORT_FILE" ]] && server_answers "$(cat "$PORT_FILE")"; then
  log "already running (pid $(cat "$PID_FILE"))"
  print_env "$(cat "$PORT_FILE")"
  exit 0
fi
server_running && die "a versitygw of $STATE runs (pid $(cat "$PID_FILE")) but does not answer: versitygw.sh down $STATE first"
rm -f "$PID_FILE" "$PORT_FILE"

BIN="$("$HERE/build.sh" versitygw | tail -n 1)"
[[ -x "$BIN" ]] || die "build.sh printed no binary (got: $BIN)"
PORT="$(free_port)"
# Credentials through its environment, not its command line, which every user of the machine can read.
# setsid: its own session, so that the caller's Ctrl-C or process group kill does not reach it; down stops it.
ROOT_ACCESS_KEY_ID="$ACCESS_KEY" ROOT_SECRET_ACCESS_KEY="$SECRET_KEY" \
  setsid "$BIN" --port "$HOST:$PORT" --region "$REGION" --quiet posix --sidecar "$STATE/sidecar" "$STATE/data" \
  </dev/null >>"$STATE/versitygw.log" 2>&1 &
echo $! >"$PID_FILE"
if server_wait_listening "$PORT" "$STATE/versitygw.log"; then
  echo "$PORT" >"$PORT_FILE"
  log "listening on $HOST:$PORT (pid $(cat "$PID_FILE"), buckets in $STATE/data)"
  print_env "$PORT"
  exit 0
fi
"$0" down "$STATE"
die "versitygw did not listen on $HOST:$PORT within 30 s: $(tail -n 20 "$STATE/versitygw.log")"
