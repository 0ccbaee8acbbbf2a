#!/usr/bin/env bash
# The TypeScript client's tests, with Node's own test runner, against the real service that
# test/clients/serve-for-clients.ts starts on loopback. `make test` runs it from the repository root
# (clients/test.sh) with Node 24 first on PATH. Skips, saying why, when Node is missing or older than
# 22 (the tests run the TypeScript sources as they are, and so does the service).
#
#   clients/typescript/test.sh [extra node --test arguments, e.g. --test-name-pattern=webhook]
#
# The tests need tsc and @types/node (to build and type-check) and koa (a README example): the
# repository's own node_modules when it has them, else an install into a cache outside the clone,
# keyed by a hash of what is installed, from the npm registry only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
log() { printf 'clients/typescript: %s\n' "$*" >&2; }

if ! command -v node >/dev/null 2>&1; then
  log "SKIPPED: no node on PATH (Node 22 or newer is needed)"
  exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 22)); then
  log "SKIPPED: node $(node --version) is older than 22 (make test puts Node 24 first on PATH)"
  exit 0
fi

# What the tests need beyond Node, as npm package specs.
needs=(typescript@5.9 @types/node@^24.19.2 koa@^3.3.0 @types/koa@^3.0.3)
# VIEWFINDER_TS_DEPS=cache uses the cache even when the repository has them (to test that path).
if [[ ${VIEWFINDER_TS_DEPS:-} != cache && -x $root/node_modules/.bin/tsc && -d $root/node_modules/@types/node && -d $root/node_modules/koa ]]; then
  export VIEWFINDER_TSC=$root/node_modules/.bin/tsc
else
  if ! command -v npm >/dev/null 2>&1; then
    log "SKIPPED: the repository has no node_modules and npm is not on PATH to install tsc into the cache"
    exit 0
  fi
  hash=$( { cat "$here/package.json"; printf '%s\n' "${needs[@]}"; } | sha256sum | cut -c1-16)
  cache=${VIEWFINDER_CACHE:-$HOME/.cache/viewfinder}/clients-typescript/$hash
  if [[ ! -x $cache/node_modules/.bin/tsc ]]; then
    log "installing ${needs[*]} into $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "${needs[@]}"
  fi
  export VIEWFINDER_TSC=$cache/node_modules/.bin/tsc
  # Type declarations and koa resolve from the package's node_modules: point it at the cache's.
  # (A node_modules of its own, from `npm install` here, is left as it is.)
  if [[ -L $here/node_modules || ! -e $here/node_modules ]]; then ln -sfn "$cache/node_modules" "$here/node_modules"; fi
fi

flags=(--test --test-isolation=none)
if ((major == 22)); then flags=(--experimental-strip-types --test --experimental-test-isolation=none); fi
export VIEWFINDER_NODE=${VIEWFINDER_NODE:-$(command -v node)}

cd "$here"
log "node $(node --version), $("$VIEWFINDER_TSC" --version)"
exec node "${flags[@]}" "$@" test/vectors.test.ts test/behaviour.test.ts test/build.test.ts test/contract.test.ts test/service.test.ts test/docs.test.ts
