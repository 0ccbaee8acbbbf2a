#!/usr/bin/env bash
# The client libraries' own test suites, each with its ecosystem's runner (node's test runner,
# pytest, go test), against the real service that test/clients/serve-for-clients.ts starts on
# loopback. `make test` runs this before the mocha suite. A library whose toolchain is missing is
# skipped by its own test.sh, which says why; every other failure fails the run.
#
#   clients/test.sh [typescript|python|go ...]   (default: all three)
set -uo pipefail
cd "$(dirname "$0")/.."
log() { printf 'clients: %s\n' "$*" >&2; }

languages=("$@")
((${#languages[@]})) || languages=(typescript python go)
failed=()
for language in "${languages[@]}"; do
  started=$SECONDS
  log "$language: clients/$language/test.sh"
  if bash "clients/$language/test.sh"; then
    log "$language: passed in $((SECONDS - started)) s"
  else
    log "$language: FAILED after $((SECONDS - started)) s"
    failed+=("$language")
  fi
done
if ((${#failed[@]})); then
  log "failed: ${failed[*]}"
  exit 1
fi
