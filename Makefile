# tokenscope — the two commands that matter: `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
# The production binary (serve, worker, migrate, apikey, import, simulate, healthcheck) and the
# development stack `make run` runs (embedded Temporal server and UI; never shipped).
BIN     := bin/tokenscope
DEV_BIN := bin/tokenscope-dev
TOOL  := $(GO) tool -modfile=tools/go.mod
# Every test tier, against the real Postgres and an in-process Temporal server. -trimpath keeps
# the checkout's directory out of the build cache's keys, so a second clone (CI's fresh one) reuses
# the compiled packages of the first instead of compiling all of them again (the Temporal server's
# most of all): `make test` in a fresh clone on a warm cache took as long as in the tree it came from.
TEST_FLAGS ?= -count=1 -timeout 30m -trimpath
# Data size of `make bench`: smoke (CI), small (default), large.
BENCH_SCALE ?= small
# Extra tokenbench flags, e.g. BENCH_FLAGS='-reuse tokenscope_bench_123' (see README).
BENCH_FLAGS ?=

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
build: build-prod build-dev ## build bin/tokenscope (production) and bin/tokenscope-dev (make run's stack)

.PHONY: build-prod
build-prod: ## build bin/tokenscope, the production binary the Docker image ships
	$(GO) build -o $(BIN) ./cmd/tokenscope

.PHONY: build-dev
build-dev: ## build bin/tokenscope-dev, the development stack with the embedded Temporal server and UI
	$(GO) build -o $(DEV_BIN) ./cmd/tokenscope-dev

.PHONY: run
run: build-dev ## run everything on this machine: migrations, Temporal + UI, worker, API (bin/tokenscope-dev)
	./$(DEV_BIN)

# The two end-to-end packages take most of the time (about 170 s and 60 s of the 240 s); named
# first, they are built and started first, so the other packages run beside them instead of
# after them. ./... lists them again; go test runs each package once.
TEST_FIRST := ./cmd/tokenscope ./cmd/tokenscope-dev

.PHONY: test
test: ## run every test tier (unit, mocks, Postgres adapters, workflows, end-to-end)
	$(GO) test $(TEST_FLAGS) $(TEST_FIRST) ./...

.PHONY: test-unit
test-unit: ## the pure tiers only, in seconds: domain, use cases over gomock, workflows (no Postgres, no servers)
	$(GO) test $(TEST_FLAGS) ./domain/... ./app/... ./workflows/...

.PHONY: measure
measure: ## workflow round-trip, delivery and SSE-delay measurements (docs/workflows.md)
	$(GO) test -tags measure -count=1 -run TestMeasure -v ./cmd/tokenscope/

.PHONY: vet
vet: ## go vet and gofmt
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Packages that exist only for other packages' tests (a test database, a fake clock, the
# reference recomputations the engine is checked against): nothing in
# a binary calls them, so deadcode reports all of them; `make deadcode` leaves them out.
# evmtest and pgcluster are also used by tokenbench (the follow and replica rows), but their
# other parts (pgcluster's Stop, Kill and Promote: the failover tests) only by tests.
TEST_SUPPORT := adapters/postgres/pgtest adapters/evm/evmtest internal/fakeclock internal/fakeversions domain/stats/reference internal/browsertest internal/apiclient internal/pgcluster

.PHONY: deadcode
deadcode: ## fail when a function is unreachable from the binaries (deadcode, tests not counted)
	@out=$$($(TOOL) deadcode ./...) || exit 1; \
	out=$$(printf '%s\n' "$$out" | grep -v $(foreach p,$(TEST_SUPPORT),-e '^$(p)/') || true); \
	if [ -n "$$out" ]; then echo "$$out"; echo "unreachable from the binaries: delete it, or move it into a _test.go file (export_test.go) of the package whose tests use it"; exit 1; fi

.PHONY: sqlc
sqlc: ## regenerate adapters/postgres/internal/dbsqlc from queries/ and migrations/
	$(TOOL) sqlc generate

.PHONY: sqlc-check
sqlc-check: ## fail when the committed sqlc output is stale
	$(TOOL) sqlc generate
	git diff --exit-code -- adapters/postgres/internal/dbsqlc || (echo "sqlc output is stale: run make sqlc and commit" && exit 1)
	@untracked=$$(git ls-files --others --exclude-standard adapters/postgres/internal/dbsqlc); if [ -n "$$untracked" ]; then echo "sqlc generated files not committed: $$untracked"; exit 1; fi

.PHONY: apiclient
apiclient: ## regenerate internal/apiclient (oapi-codegen over /openapi.json) after changing the API
	$(GO) test -count=1 -run TestGeneratedClientIsCurrent ./internal/apiclient -update

.PHONY: mocks
mocks: ## regenerate the gomock doubles in ports/portsmock
	cd ports && $(GO) generate ./...

.PHONY: migrate
migrate: build-prod ## create the database if missing and apply migrations
	./$(BIN) migrate

.PHONY: bench
bench: build ## benchmark every operation against same-run baselines (BENCH_SCALE=smoke|small|large); writes BENCHMARKS.md
	$(GO) run ./bench/cmd/tokenbench -scale $(BENCH_SCALE) -bin $(BIN) -dev-bin $(DEV_BIN) $(BENCH_FLAGS)

# The encoders BenchmarkEncode compared the generated JSON encoders with. They are not
# requirements of the module: their benchmark file's name starts with "_", so the go command
# (build, vet, go mod tidy) skips it; this target adds it to the package (-overlay) and builds over
# a copy of go.mod and go.sum that requires them (-modfile), both in a temporary folder.
ENCODER_CANDIDATES := github.com/bytedance/sonic@v1.15.5 github.com/goccy/go-json@v0.12.0 \
	github.com/json-iterator/go@v1.1.12 github.com/go-json-experiment/json@v0.0.0-20260213210345-44df1a37e875
ENCODER_BENCH_FLAGS ?= -benchmem -count 6

.PHONY: bench-encoders
bench-encoders: ## BenchmarkEncode with the candidate encoders (sonic, goccy, jsoniter, encoding/json v2) beside the generated ones
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	cp go.mod "$$dir/go.mod" && cp go.sum "$$dir/go.sum" && \
	printf '{"Replace":{"%s":"%s"}}' "$(CURDIR)/adapters/httpapi/encode_candidates_bench_test.go" \
		"$(CURDIR)/adapters/httpapi/_encode_candidates_bench_test.go" >"$$dir/overlay.json" && \
	$(GO) get -modfile="$$dir/go.mod" $(ENCODER_CANDIDATES) && \
	$(GO) test -mod=mod -modfile="$$dir/go.mod" -overlay="$$dir/overlay.json" \
		-run XXX -bench 'BenchmarkEncode$$' $(ENCODER_BENCH_FLAGS) ./adapters/httpapi/

# The /live page's vendored browser bundles: the versions pinned in package-lock.json, copied from
# the packages' dist folders into the embedded static folder (commit the result).
LIVE := adapters/httpapi/live

.PHONY: live-assets
live-assets: ## refresh the /live page's vendored bundles (centrifuge, lightweight-charts) from npm
	cd $(LIVE) && npm ci --no-audit --no-fund --ignore-scripts
	cp $(LIVE)/node_modules/centrifuge/dist/centrifuge.js $(LIVE)/static/vendor/centrifuge.min.js
	cp $(LIVE)/node_modules/lightweight-charts/dist/lightweight-charts.standalone.production.js $(LIVE)/static/vendor/lightweight-charts.min.js
	cp $(LIVE)/node_modules/centrifuge/LICENSE $(LIVE)/static/vendor/centrifuge.LICENSE.txt
	cp $(LIVE)/node_modules/lightweight-charts/LICENSE $(LIVE)/static/vendor/lightweight-charts.LICENSE.txt

.PHONY: clean
clean: ## remove build output and local dev state (.data)
	rm -rf bin .data
