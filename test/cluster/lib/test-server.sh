# What the test servers' start and stop scripts share (ferretdb.sh, versitygw.sh, jaeger.sh;
# sourced, not run): one process per STATE_DIR, recorded in a PID file, on a port of HOST. The
# caller defines log and die, and sets HOST and PID_FILE.
# shellcheck shell=bash

# server_running: whether the recorded process still runs
server_running() { [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

# server_answers PORT: whether something accepts a TCP connection on HOST:PORT
server_answers() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# server_stop: SIGTERM to the recorded process, SIGKILL after 10 s; nothing when none runs
server_stop() {
  server_running || return 0
  local pid
  pid="$(cat "$PID_FILE")"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then log "pid $pid ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; fi
  log "stopped (pid $pid)"
}

# free_port: a port of HOST the kernel hands out now; the server binds it a moment later (another
# bind in between fails the start)
free_port() {
  node -e 'const s = require("net").createServer().listen(0, process.argv[1], () => { console.log(s.address().port); s.close(); })' "$HOST"
}

# server_wait_listening PORT LOG: waits up to 30 s for the started process to accept connections on
# PORT; dies with the log's tail when it exits first. Answers 1 (the caller stops it) on a timeout.
server_wait_listening() {
  local port="$1" logfile="$2"
  for _ in $(seq 300); do
    server_running || die "exited at start: $(tail -n 20 "$logfile")"
    server_answers "$port" && return 0
    sleep 0.1
  done
  return 1
}
