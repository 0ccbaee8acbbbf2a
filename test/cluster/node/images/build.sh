#!/usr/bin/env bash
# Build the node's two images as OCI archives (no registry, no container tool), once per content,
# into the cache beside test/cluster/build.sh's binaries:
#   localhost/k8s-local/pause:3.8   the pod sandbox: test/cluster/pause, a static Go program
#   localhost/k8s-local/busybox:1   Debian's busybox-static (sh, wget, nslookup, httpd, ...); its
#                                   default command serves "hello from <hostname>" on port 8080
#
#   build.sh        prints the folder that holds pause.tar and busybox.tar as its last line
#
# Needs Debian's busybox-static (/bin/busybox) and jq; node/up.sh installs them.
# Env: VIEWFINDER_CACHE (see test/cluster/build.sh).
set -euo pipefail
HERE="$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
CLUSTER_DIR="$(CDPATH='' cd -- "$HERE/../.." && pwd -P)"
BB=/bin/busybox   # Debian's busybox-static
[[ $# -eq 0 ]] || { awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2; }
# busybox-static's binary has no interpreter: the dynamic busybox package's has one
[[ -x "$BB" ]] && ! grep -q 'ld-linux' "$BB" || { echo "need Debian's busybox-static ($BB)" >&2; exit 1; }
PAUSE="$("$CLUSTER_DIR/build.sh" pause | tail -n 1)"

CACHE="${VIEWFINDER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/viewfinder}"
KEY="$(cat "$HERE/build.sh" "$HERE/mkimage.sh" "$PAUSE" "$BB" | sha256sum | cut -c1-16)"
OUT="$CACHE/images/node-$KEY"
if [[ ! -f "$OUT/busybox.tar" ]]; then
  W="$(mktemp -d)"; trap 'rm -rf "$W"' EXIT
  mkdir -p "$W/out" "$W/pause"
  install -m 755 "$PAUSE" "$W/pause/pause"
  "$HERE/mkimage.sh" localhost/k8s-local/pause:3.8 "$W/pause" "$W/out/pause.tar" '["/pause"]'

  R="$W/busybox"; mkdir -p "$R/bin" "$R/etc" "$R/tmp" "$R/proc" "$R/sys" "$R/dev" "$R/root"
  chmod 1777 "$R/tmp"
  install -m 755 "$BB" "$R/bin/busybox"
  for a in $("$BB" --list); do [[ $a == busybox ]] || ln -s busybox "$R/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$R/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$R/etc/group"
  # no entrypoint: a pod's `command` or `args` replaces the default command; the page names the pod
  # (its hostname), so load-balancing over a Service's pods is visible. It is written under /tmp,
  # so that the pod runs as any user (Pod Security "restricted" wants a non-root one)
  "$HERE/mkimage.sh" localhost/k8s-local/busybox:1 "$R" "$W/out/busybox.tar" null \
    '["/bin/sh","-c","mkdir -p /tmp/www && echo hello from $(hostname) > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"]'
  mkdir -p "$CACHE/images"; rm -rf "$OUT"; mv "$W/out" "$OUT"
  ls -dt "$CACHE/images/node-"* 2>/dev/null | tail -n +4 | xargs -r rm -rf
fi
printf '%s\n' "$OUT"
