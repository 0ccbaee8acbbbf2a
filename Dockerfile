# syntax=docker/dockerfile:1
# One image for the three Viewfinder processes; pick one with the command (Kubernetes: `args`):
#   API (default)  node services/api/src/main.ts        PORT           (3000)
#   renderer       node services/renderer/src/main.ts   RENDERER_PORT  (3001)
#   operator       node operator/src/main.ts            OPERATOR_PORT  (8081)
#   admin CLI      node bin/viewfinder.ts ...
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step.
# Build with `make image` (tools/image/build.sh): docker build, or buildah with no registry.

# BASE_IMAGE: Debian bookworm with Node 24 and npm. Where node:24-bookworm-slim cannot be pulled,
# tools/image/make-base.sh makes an equivalent one (debootstrap + Node from the npm registry).
ARG BASE_IMAGE=node:24-bookworm-slim

FROM ${BASE_IMAGE} AS deps
WORKDIR /app
# Puppeteer must never fetch a browser: Chromium comes from Debian in the runtime stage.
ENV PUPPETEER_SKIP_DOWNLOAD=true
COPY package.json package-lock.json .npmrc ./
# Production dependencies only. None of them needs an install script, and none may run one. Source
# maps and type declarations (72 MB) are never read at run time: Node runs our .ts, not theirs.
# The secret build-ca (optional, never stored in a layer) is a CA bundle npm trusts besides its
# own, for a TLS-inspecting proxy the build host trusts (make image passes NODE_EXTRA_CA_CERTS).
RUN --mount=type=secret,id=build-ca \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && npm ci --omit=dev --ignore-scripts --loglevel=error && npm cache clean --force \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

FROM ${BASE_IMAGE}
# Debian's Chromium, fonts for Latin, CJK and emoji, uBlock Origin's filter lists (read from disk,
# never fetched), and tini to reap Chromium's zombie processes as PID 1. dpkg leaves out manuals,
# documentation (but each package's copyright file) and translations: nothing here reads them.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright' \
      'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
      >/etc/dpkg/dpkg.cfg.d/viewfinder-slim \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      chromium \
      fonts-liberation \
      fonts-noto-core \
      fonts-noto-cjk \
      fonts-noto-color-emoji \
      webext-ublock-origin-chromium \
      tini \
 && fc-cache -f \
 && rm -rf /var/lib/apt/lists/*

# A fixed, numeric UID/GID so that Kubernetes can check runAsNonRoot and set fsGroup.
RUN groupadd --gid 10001 viewfinder \
 && useradd --uid 10001 --gid 10001 --home-dir /home/viewfinder --create-home --shell /usr/sbin/nologin viewfinder

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# The ad-blocking engine, parsed from Debian's lists once at build time: containers run with a
# read-only root filesystem and only read this cache, so start-up never re-parses the lists.
RUN node docker/warm-adblock-cache.ts /opt/viewfinder/adblock-cache

# CHROMIUM_SANDBOX: Chromium's sandbox needs unprivileged user namespaces, which the default
# seccomp profile of Docker and containerd refuses (and Debian ships no setuid helper). The
# container is the sandbox: a non-root user, no capabilities, seccomp, a read-only root and, in the
# chart, a NetworkPolicy. Set it to true where the runtime allows user namespaces.
# NODE_OPTIONS: the V8 young generation stays at 2 x 16 MiB, as the Makefile sets it (docs/operations.md, "Memory").
# MALLOC_MMAP_THRESHOLD_: glibc gives blocks of 16 KiB or more back to the kernel once freed, as the Makefile sets it (same section).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=16 \
    MALLOC_MMAP_THRESHOLD_=16384 \
    HOME=/home/viewfinder \
    PUPPETEER_SKIP_DOWNLOAD=true \
    CHROMIUM_PATH=/usr/bin/chromium \
    CHROMIUM_SANDBOX=false \
    ADBLOCK_CACHE_DIR=/opt/viewfinder/adblock-cache

USER 10001:10001
EXPOSE 3000 3001 8081

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "docker/healthcheck.ts"]

ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "services/api/src/main.ts"]
