#!/usr/bin/env bash
# Build one of the test parts that the project makes from Go modules, once per version, into a cache
# outside the clone; later runs on the same machine reuse it.
#
#   build.sh COMPONENT      COMPONENT is a folder beside this script holding a Go module (k8s, etcd,
#                           ferretdb, ...); prints the path of the built binary as its last line
#   build.sh --cached COMPONENT   builds nothing: prints the binary's path when it is built already,
#                           else exits 1 (with-test-servers.sh starts a server at once, or builds it
#                           in the background)
#
# The cache key is the module's own files (go.mod, go.sum, *.go, build.env) and the Go version:
# a version bump in go.mod builds anew, anything else reuses the binary. Progress and the build's
# time go to stderr. Go's module and build caches are Go's own (`go env GOMODCACHE GOCACHE`, under
# $HOME), outside the clone, so that a fresh clone's CI run finds them warm.
# Env: VIEWFINDER_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/viewfinder): where binaries go.
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
log() { printf 'test/cluster/build: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

CACHED_ONLY=0
if [[ ${1:-} == --cached ]]; then CACHED_ONLY=1; shift; fi
[[ $# -eq 1 && -f "$HERE/$1/go.mod" ]] || die "usage: build.sh [--cached] COMPONENT (one of: $(cd "$HERE" && ls -d */go.mod | sed 's,/go.mod,,' | tr '\n' ' '))"
COMPONENT="$1" MODULE="$HERE/$1"
command -v go >/dev/null 2>&1 || die "no Go toolchain on PATH (Go 1.26 or newer builds the test cluster)"
# Never let go fetch a toolchain of its own: the machine's Go builds everything.
export GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly"

CACHE="${VIEWFINDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/viewfinder}"
case "$CACHE/" in "$(CDPATH='' cd -- "$HERE/../.." && pwd -P)/"*) die "VIEWFINDER_CACHE must be outside the clone: $CACHE" ;; esac
# (*.go and build.env are optional: a module whose program is a dependency's has neither, and a
# missing one must not fail the pipeline, which set -e would end the script on without a word)
KEY="$( { go version; cd "$MODULE" && cat go.mod go.sum; cat ./*.go build.env 2>/dev/null || true; } | sha256sum | cut -c1-16)"
OUT="$CACHE/bin/$COMPONENT-$KEY"
if [[ -x "$OUT/$COMPONENT" ]]; then
  log "$COMPONENT: cached ($OUT/$COMPONENT)"
  printf '%s\n' "$OUT/$COMPONENT"
  exit 0
fi
((!CACHED_ONLY)) || exit 1

# build.env may set LDFLAGS (version stamps), PACKAGE (default: the module's root package) and
# export CGO_ENABLED=0 (a program that runs in a container image with no C library).
LDFLAGS="" PACKAGE="."
# shellcheck source=/dev/null
[[ ! -f "$MODULE/build.env" ]] || . "$MODULE/build.env"
mkdir -p "$CACHE/bin"
exec 9>"$CACHE/bin/.$COMPONENT.lock"
flock -w 3600 9 || die "another build of $COMPONENT holds $CACHE/bin/.$COMPONENT.lock"
if [[ ! -x "$OUT/$COMPONENT" ]]; then
  # Under the lock no other build of this component runs: what a killed build left goes.
  rm -rf "$CACHE/bin/$COMPONENT"-*.tmp.*
  log "$COMPONENT: building (GOCACHE $(go env GOCACHE), GOMODCACHE $(go env GOMODCACHE))"
  started=$SECONDS
  tmp="$OUT.tmp.$$"; rm -rf "$tmp"; mkdir -p "$tmp"
  (cd "$MODULE" && go build -trimpath -ldflags "-s -w $LDFLAGS" -o "$tmp/$COMPONENT" "$PACKAGE") \
    || { rm -rf "$tmp"; die "go build of $COMPONENT failed"; }
  rm -rf "$OUT"; mv "$tmp" "$OUT"
  log "$COMPONENT: built in $((SECONDS - started)) s ($(du -h "$OUT/$COMPONENT" | cut -f1))"
  # Older builds of this component are kept only while a few: each Kubernetes build is ~150 MB.
  ls -dt "$CACHE/bin/$COMPONENT"-* 2>/dev/null | grep -v '\.tmp\.' | tail -n +4 | xargs -r rm -rf
fi
printf '%s\n' "$OUT/$COMPONENT"
