#!/usr/bin/env bash
# Installs the Debian packages Viewfinder needs at run time: Chromium, fonts that cover
# Latin, CJK and emoji, and the filter lists shipped with uBlock Origin; plus any package named on
# the command line (the Makefile's test-deps passes `prometheus`, for Prometheus and promtool, and
# `poppler-utils`, for the PDF tests, and `curl jq`, for the docs' walk-throughs; image-deps passes `buildah debootstrap runc`, for make image
# where no Docker engine runs).
# It never downloads a browser of its own. It refuses to go on if apt would remove Node.js,
# because some Debian packages (nodejs-doc, node-*) replace the machine's Node and npm.
set -euo pipefail

packages=(chromium fonts-liberation fonts-noto-color-emoji fonts-noto-cjk webext-ublock-origin-chromium "$@")

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "install-system-deps: need root (or sudo) to run: $*" >&2; exit 1
  fi
}

export DEBIAN_FRONTEND=noninteractive
echo "install-system-deps: apt-get update"
as_root apt-get update -qq
plan=$(as_root apt-get install -s -y --no-install-recommends "${packages[@]}")
if grep -qE '^Remv (nodejs|npm)\b' <<<"$plan"; then
  echo "install-system-deps: refusing: installing ${packages[*]} would remove nodejs/npm:" >&2
  grep -E '^Remv' <<<"$plan" >&2
  exit 1
fi
echo "install-system-deps: apt-get install ${packages[*]}"
# Another apt-get (a parallel job, unattended-upgrades) may hold the lock: wait for it rather than fail.
as_root apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${packages[@]}" >/dev/null
