#!/usr/bin/env bash
# The Go client's tests: `go test` against the real service, which the tests start themselves
# (test/clients/serve-for-clients.ts, with the Node of VIEWFINDER_NODE or `node` on PATH).
# `make test` runs this through clients/test.sh, from the repository's root, Node 24 first on PATH.
#
# Nothing is installed: the module needs no third-party module (no go.sum), and Go's build and
# module caches are Go's own, under $HOME. GOPROXY=off makes sure nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")"

# The go directive of go.mod: the oldest Go that builds the module.
want=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' go.mod)
if ! command -v go >/dev/null 2>&1; then
  echo "clients/go: SKIPPED: go is not on PATH (the Go client needs Go $want or newer)"
  exit 0
fi
have=$(go env GOVERSION 2>/dev/null || true) # go1.26.8
version=${have#go}
if ! printf '%s\n%s\n' "$want" "${version%%[!0-9.]*}" | sort -C -V; then
  echo "clients/go: SKIPPED: $have is older than Go $want, which go.mod asks for"
  exit 0
fi

# The service needs Node 22 or newer: this checkout's own Node when the one on PATH is older.
if [[ -z ${VIEWFINDER_NODE:-} ]]; then
  major=$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\).*/\1/p') || true
  if [[ ${major:-0} -lt 22 && -x ../../tools/node/node_modules/node/bin/node ]]; then
    export VIEWFINDER_NODE=$PWD/../../tools/node/node_modules/node/bin/node
  fi
fi

export GOPROXY=off GOTOOLCHAIN=local GOFLAGS=
unset VIEWFINDER_TEST_SERVICE
exec go test -count=1 -timeout 8m ./...
