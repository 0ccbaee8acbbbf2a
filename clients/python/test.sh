#!/usr/bin/env bash
# The Python client's tests (pytest) against a real service on loopback, as `make test` runs them
# (from the repository root, Node 24 first on PATH). Skips, saying so, when no Python 3.9+ with venv
# is found. Installs the package and its test extras into a venv outside the clone, kept in
# ${VIEWFINDER_CACHE:-$HOME/.cache/viewfinder} under a hash of pyproject.toml; only PyPI is used.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

find_python() {
  local candidate
  for candidate in "${VIEWFINDER_PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10 python3.9 /usr/bin/python3; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' 2>/dev/null; then
      # Debian's python3 has the venv module but no ensurepip without the python3-venv package.
      if "$candidate" -c 'import venv, ensurepip' 2>/dev/null; then
        command -v "$candidate"
        return 0
      fi
      echo "clients/python: $candidate has no working venv (on Debian: apt-get install python3-venv)" >&2
    fi
  done
  return 1
}

if ! python="$(find_python)"; then
  echo "clients/python: SKIPPED: no Python >= 3.9 with venv support found (set VIEWFINDER_PYTHON to one)"
  exit 0
fi

cache="${VIEWFINDER_CACHE:-$HOME/.cache/viewfinder}"
pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
# The checkout is part of the key: the install is editable, so it points at this clone.
hash="$(cat "$here/pyproject.toml" <(echo "$pyver $("$python" -c 'import sys; print(sys.base_prefix)') $here") | sha256sum | cut -c1-16)"
venv="$cache/clients-python-venv-$hash"

if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.installed" ]; then
  echo "clients/python: creating $venv with $python ($pyver)"
  rm -rf "$venv"
  mkdir -p "$cache"
  if ! "$python" -m venv "$venv"; then
    rm -rf "$venv"
    echo "clients/python: SKIPPED: '$python -m venv' failed (on Debian: apt-get install python3-venv)"
    exit 0
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  touch "$venv/.installed-pending"
fi
# Editable, so the tests always run this checkout's code; re-done cheaply when the venv is new.
if [ -f "$venv/.installed-pending" ] || [ ! -f "$venv/.installed" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$here[test]"
  rm -f "$venv/.installed-pending"
  touch "$venv/.installed"
fi

cd "$root"
export VIEWFINDER_REPO_ROOT="$root" PYTHONDONTWRITEBYTECODE=1
[ $# -gt 0 ] || set -- "$here/tests"
exec "$venv/bin/python" -m pytest -p no:cacheprovider "$@"
