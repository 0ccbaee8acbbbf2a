# What start.sh, stop.sh and node/up.sh share (sourced, not run). The caller defines log and die.
# shellcheck shell=bash

# install_packages PKG...: apt-get install the named Debian packages (the caller names only the
# missing ones), after `apt-get update` when one has no candidate, and only after a dry run shows
# that nodejs and npm stay. Serialised with the other scripts' installs on this machine.
install_packages() {
  (($#)) || return 0
  command -v apt-get >/dev/null 2>&1 || die "missing $* and no apt-get to install them"
  [[ $EUID -eq 0 ]] || die "need root to install: $* (apt-get install $*)"
  log "installing with apt-get: $*"
  local apt=(env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=600) p sim
  (
    exec 8>"${TMPDIR:-/tmp}/.k8s-local-apt.lock"; flock -w 900 8 || true
    for p in "$@"; do
      case "$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ {print $2}')" in
        ''|'(none)') "${apt[@]}" update >&2; break ;;
      esac
    done
    sim="$("${apt[@]}" -s install -y --no-install-recommends "$@" 2>&1)" \
      || { printf '%s\n' "$sim" | tail -n 20 >&2; die "apt-get cannot install: $*"; }
    if grep -Eq '^Remv (nodejs|npm)([ :]|$)' <<<"$sim"; then
      grep '^Remv' <<<"$sim" >&2
      die "refusing: 'apt-get install $*' would remove nodejs/npm; install $* yourself first"
    fi
    "${apt[@]}" install -y --no-install-recommends "$@" >&2
  ) 3>&- 7>&- 9>&-
}

# control_plane_pid NAME: the recorded PID (STATE/run/NAME.pid) if that process still runs
# STATE/bin/NAME with an argument inside STATE; status 1 otherwise. Needs STATE.
control_plane_pid() {
  local f="$STATE/run/$1.pid" pid a argv=()
  [[ -f "$f" ]] || return 1
  pid="$(<"$f")"; [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  mapfile -d '' -t argv 2>/dev/null < "/proc/$pid/cmdline" || return 1
  [[ ${#argv[@]} -gt 0 && "${argv[0]}" == "$STATE/bin/$1" ]] || return 1
  for a in "${argv[@]:1}"; do [[ "$a" == "$STATE"/* ]] && { echo "$pid"; return 0; }; done
  return 1
}
