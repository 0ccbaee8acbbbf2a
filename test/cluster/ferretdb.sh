#!/usr/bin/env bash
# A MongoDB-compatible server for the tests: FerretDB v1 (test/cluster/ferretdb/, built by build.sh)
# with SQLite behind it, in STATE_DIR, on a free port of loopback or of FERRETDB_LISTEN_HOST.
#
#   ferretdb.sh up STATE_DIR          start it (or find it running); the last stdout line is
#                                     MONGODB_URI=mongodb://HOST:PORT/
#   FERRETDB_LISTEN_HOST=10.244.0.1 ferretdb.sh up STATE_DIR
#                                     the same on the test node's bridge address, where its pods reach
#                                     it (test/node/hosted-mongodb.test.ts); the address is not on any
#                                     outside network. One STATE_DIR serves one address: `down` first
#                                     to move it.
#   FERRETDB_PORT=PORT ferretdb.sh up STATE_DIR
#                                     on that port rather than a free one: after `down` (without
#                                     --wipe), the same server comes back where its clients look for
#                                     it, with its data (test/node/faults.test.ts stops and restarts it)
#   ferretdb.sh down STATE_DIR [--wipe]   stop it (SIGTERM, then SIGKILL); --wipe also removes STATE_DIR
#
# Both are idempotent. Why SQLite rather than PostgreSQL behind it: FerretDB v1 applies an update as a
# read, then a write of the whole document, in its own handler whatever the backend, so PostgreSQL
# makes no update atomic that SQLite leaves racy (measured: it lost more; docs/hosted.md, "MongoDB
# servers"); SQLite needs no system package and no server of its own, and starts in under a second.
# The server's log is STATE_DIR/ferretdb.log.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster/ferretdb: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -ge 2 && ( $1 == up || $1 == down ) ]] || die "usage: ferretdb.sh up STATE_DIR | ferretdb.sh down STATE_DIR [--wipe]"
ACTION="$1" STATE="$2" WIPE="${3:-}"
HOST="${FERRETDB_LISTEN_HOST:-127.0.0.1}"
[[ $HOST =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]] || die "FERRETDB_LISTEN_HOST=$HOST is not an IPv4 address"
PID_FILE="$STATE/ferretdb.pid" PORT_FILE="$STATE/ferretdb.port"

# shellcheck source=lib/test-server.sh
. "$HERE/lib/test-server.sh"

if [[ $ACTION == down ]]; then
  server_stop
  rm -f "$PID_FILE" "$PORT_FILE"
  [[ $WIPE != --wipe ]] || rm -rf "$STATE"
  exit 0
fi

mkdir -p "$STATE/data"
STATE="$(CDPATH='' cd -- "$STATE" && pwd -P)"
PID_FILE="$STATE/ferretdb.pid" PORT_FILE="$STATE/ferretdb.port"
if server_running && [[ -f "$PORT_FILE" ]] && server_answers "$(cat "$PORT_FILE")"; then
  log "already running (pid $(cat "$PID_FILE"))"
  echo "MONGODB_URI=mongodb://$HOST:$(cat "$PORT_FILE")/"
  exit 0
fi
server_running && die "a FerretDB of $STATE runs (pid $(cat "$PID_FILE")) but not on $HOST: ferretdb.sh down $STATE first"
rm -f "$PID_FILE" "$PORT_FILE"

BIN="$("$HERE/build.sh" ferretdb | tail -n 1)"
[[ -x "$BIN" ]] || die "build.sh printed no binary (got: $BIN)"
if [[ -n "${FERRETDB_PORT:-}" ]]; then
  [[ $FERRETDB_PORT =~ ^[0-9]+$ ]] || die "FERRETDB_PORT=$FERRETDB_PORT is not a port number"
  PORT="$FERRETDB_PORT"
else
  PORT="$(free_port)"
fi
# setsid: its own session, so that the caller's Ctrl-C or process group kill does not reach it; down stops it.
setsid "$BIN" -listen "$HOST:$PORT" -handler sqlite -sqlite-url "file:$STATE/data/" </dev/null >>"$STATE/ferretdb.log" 2>&1 &
echo $! >"$PID_FILE"
if server_wait_listening "$PORT" "$STATE/ferretdb.log"; then
  echo "$PORT" >"$PORT_FILE"
  log "listening on $HOST:$PORT (pid $(cat "$PID_FILE"), data in $STATE/data)"
  echo "MONGODB_URI=mongodb://$HOST:$PORT/"
  exit 0
fi
"$0" down "$STATE"
die "ferretdb did not listen on $HOST:$PORT within 30 s: $(tail -n 20 "$STATE/ferretdb.log")"
