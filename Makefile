# agentgate — the commands a newcomer runs: `make run`, `make test-quick` and `make test`.
GO        ?= go
# The data dirs of `make run` (embedded gate), and of `make run-kafka` (its gate's state and the dev
# broker's topics): three siblings, so that resetting one never wipes another.
DATA      ?= ./data
KAFKA_GATE_DATA ?= ./data-kafka-gate
DEV_KAFKA_DATA  ?= ./data-dev-kafka
HTTP      ?= 127.0.0.1:8080
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCH     ?= .
COUNT     ?= 10
# run-kafka: the dev broker's address and the gate's admin key
KAFKA     ?= 127.0.0.1:9092
API_KEY   ?= dev-admin-key

.PHONY: run build test test-quick test-race lint bench fuzz fuzz-grammars clean deps simulate

## run: build bin/agentgate, then the gate on its embedded default (Pebble in $(DATA), HTTP on
## $(HTTP), no Kafka); Ctrl-C stops it (exit status 0 once it has drained)
run: build
	bin/agentgate serve --data $(DATA) --http $(HTTP)

## deps: the Debian packages the tests use (z3, kcat, poppler-utils, curl, jq) and the A2A interop
## test's npm packages (interop/a2a-js, exactly its lockfile: npm ci); .ci/run does the same
deps:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends z3 kcat poppler-utils curl jq
	cd interop/a2a-js && npm ci --no-audit --no-fund

## run-kafka: a dev Kafka broker (dev-kafka on $(KAFKA), kept in $(DEV_KAFKA_DATA)) and the gate on it
## (state in $(KAFKA_GATE_DATA), HTTP on $(HTTP), admin key $(API_KEY)); Ctrl-C stops both
.PHONY: run-kafka
run-kafka: SHELL := /bin/bash
# The broker runs in its own session (setsid), out of reach of the terminal's Ctrl-C: the gate drains
# and appends its final checkpoint first, then the broker is stopped; the recipe ends with status 0.
run-kafka: build
	@stop() { kill -TERM $$gate 2>/dev/null; wait $$gate 2>/dev/null; kill -TERM $$broker 2>/dev/null; wait $$broker 2>/dev/null; }; \
	trap 'stop; exit 0' INT TERM; \
	setsid bin/agentgate dev-kafka --listen $(KAFKA) --data $(DEV_KAFKA_DATA) & broker=$$!; \
	bin/agentgate serve --kafka-brokers $(KAFKA) --data $(KAFKA_GATE_DATA) --http $(HTTP) --api-key $(API_KEY) & gate=$$!; \
	wait -n; status=$$?; stop; exit $$status

# COMMIT is the commit `agentgate version` prints when Go's own VCS stamp is missing (a git worktree,
# whose .git is a file, or GOFLAGS=-buildvcs=false)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)

## build: bin/agentgate. The first build compiles the C parsers (pg_query, tree-sitter) and takes
## minutes; later builds reuse Go's build cache (see README.md for measured times)
build:
	@if [ ! -x bin/agentgate ]; then echo "building bin/agentgate: the first build compiles C parsers and takes a few minutes (later builds: seconds)"; fi
	$(GO) build -ldflags '-X main.commit=$(COMMIT)' -o bin/agentgate ./cmd/agentgate

## test-quick: the whole test suite once, without lint (no staticcheck download), the -race pass or
## the grammar fuzz: a newcomer's first run
test-quick:
	$(GO) test -count=1 ./...

## test: lint (downloads staticcheck on first use), the whole test suite, the event codec under
## GOEXPERIMENT=jsonv2 (its bytes must not depend on encoding/json), the race detector on the
## concurrent packages, a short fuzz of every tree-sitter grammar (fuzz-grammars), and the clients'
## suites against a real gate (test-sdk; needs node and npm)
test: lint sdk-build
	$(GO) test -count=1 ./...
	GOEXPERIMENT=jsonv2 $(GO) test -count=1 ./domain/eventjson/
	$(GO) test -count=1 -race ./handlers/... ./projections/... ./streams/...
	@$(MAKE) --no-print-directory fuzz-grammars
	@$(MAKE) --no-print-directory test-sdk SDK_BUILD=

# PYTHON: the interpreter of the Python SDK's tests; Debian's, which python3-pytest installs for
PYTHON    ?= /usr/bin/python3

.PHONY: test-sdk test-python test-typescript test-integrations sdk-build sdk-types a2a-modules
# SDK_BUILD: the prerequisite that installs and builds sdk/typescript and sdk/mcp for their suites;
# make test, which ran sdk-build before go test, empties it for its test-sdk (each npm ci of a
# suite's lockfile runs once per make test)
SDK_BUILD ?= sdk-build
## sdk-build: what the README's quick starts import, built before go test runs them
## (TestReadmeClients): sdk/typescript's and sdk/mcp's dist, from clean installs of their lockfiles
sdk-build:
	cd sdk/typescript && npm ci --no-audit --no-fund && npm run build
	cd sdk/mcp && npm ci --no-audit --no-fund && npm run build

## a2a-modules: the packages of interop/a2a-js, the A2A agent the SDKs' proxy-mode tests front
a2a-modules:
	cd interop/a2a-js && npm ci --no-audit --no-fund

## test-sdk: the client SDKs' suites, each against a real gate (bin/agentgate)
test-sdk: test-python test-typescript test-integrations

## sdk-types: regenerate the SDKs' types from schemas/openapi.v1.json (Python: qwed_sdk/_models.py;
## TypeScript: src/types.gen.ts): run it after changing the document, whose staleness tests fail until then
sdk-types:
	$(PYTHON) sdk/python/tools/gen_models.py
	cd sdk/typescript && node scripts/gen-types.mjs

# Every agentgate serve an SDK suite starts checks its HTTP exchanges against the OpenAPI document
# (AGENTGATE_OPENAPI_CHECK) and appends those it does not describe to bin/openapi-<target>.txt; the
# target fails when the file is not empty.
openapi-check   = AGENTGATE_OPENAPI_CHECK=$(CURDIR)/bin/openapi-$@.txt
openapi-verdict = if [ -s bin/openapi-$@.txt ]; then echo "exchanges schemas/openapi.v1.json does not describe:"; cat bin/openapi-$@.txt; exit 1; fi

## test-python: the Python SDK's pytest suite (sdk/python/tests) against bin/agentgate; its proxy-mode
## tests front the A2A agent of interop/a2a-js, whose packages are installed first (npm ci)
test-python: build a2a-modules
	@rm -f bin/openapi-$@.txt
	$(openapi-check) AGENTGATE_BIN=$(CURDIR)/bin/agentgate $(PYTHON) -m pytest -q -p no:cacheprovider sdk/python/tests
	@$(openapi-verdict)

## test-typescript: the TypeScript SDK (sdk/typescript): a clean install from its lockfile, the build
## (sdk-build), then node --test against bin/agentgate (Node >= 20.10 for the runner's flags); its proxy-mode tests
## front the A2A agent of interop/a2a-js, whose packages are installed first (npm ci)
test-typescript: build $(SDK_BUILD) a2a-modules
	@rm -f bin/openapi-$@.txt
	cd sdk/typescript && $(openapi-check) AGENTGATE_BIN=$(CURDIR)/bin/agentgate npm test
	@$(openapi-verdict)

## test-integrations: the LangChain.js handler and the Vercel AI SDK wrapper (sdk/integrations) and the
## MCP server (sdk/mcp), against the real @langchain/core, ai and @modelcontextprotocol/sdk of their
## lockfiles (npm ci; sdk/mcp's by sdk-build) and bin/agentgate
test-integrations: build $(SDK_BUILD)
	@rm -f bin/openapi-$@.txt
	cd sdk/integrations && npm ci --no-audit --no-fund && npm run build && $(openapi-check) AGENTGATE_BIN=$(CURDIR)/bin/agentgate npm test
	cd sdk/mcp && $(openapi-check) AGENTGATE_BIN=$(CURDIR)/bin/agentgate npm test
	@$(openapi-verdict)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# BENCH_GC: the collector settings `agentgate` runs with (cmd/agentgate/gc.go, TuneGC), so that the
# benchmarks measure the process as it runs; TestMakefileBenchesUnderServesGC keeps the two equal.
BENCH_GC := GOGC=1000 GOMEMLIMIT=4GiB

## bench: every benchmark, $(COUNT) runs, under serve's GC settings, summarised by benchstat
## (see docs/benchmarks.md)
bench:
	$(BENCH_GC) $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) ./... | tee bench.txt
	$(GO) run $(BENCHSTAT) bench.txt

## simulate: the deterministic simulator (handlers/sim): seeds from SEED (unset: a random one, printed
## first), STEPS steps each, for TIME (unset: the one seed); TRACE=1 prints every step. A failure prints
## the seed and the step; `make simulate SEED=<seed>` reproduces it exactly.
SEED  ?=
TIME  ?= 0
STEPS ?= 4000
simulate:
	$(GO) test -count=1 -timeout 0 -run '^TestSimulate$$' -v ./handlers/sim -args -simulate \
	  -seed='$(SEED)' -time=$(TIME) -steps=$(STEPS) $(if $(TRACE),-trace)

# run-fuzz: runs each "package:FuzzTarget" word of $(1) for $(2), every one even when one fails,
# then lists the failures and fails if there was any.
define run-fuzz
	@failed=""; \
	for t in $(1); do \
	  pkg=$${t%%:*}; f=$${t##*:}; echo "== $$pkg $$f"; \
	  $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(2) $$pkg || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:"; for t in $$failed; do echo "  $$t"; done; exit 1; fi; \
	echo "fuzz: every target passed"
endef

## fuzz: a short run of every fuzz target (FUZZTIME each); a failing target does not hide the others
FUZZTIME ?= 20s
fuzz:
	$(call run-fuzz,$$(for pkg in $$($(GO) list ./...); do \
	  if l=$$($(GO) test -list '^Fuzz' $$pkg); then echo "$$l" | grep '^Fuzz' | sed "s|^|$$pkg:|"; \
	  else echo "$$pkg:FuzzListFailed"; fi; done),$(FUZZTIME))

## fuzz-grammars: the fuzz targets of the tree-sitter grammars (C scanners), seeded with non-ASCII
## input, GRAMMAR_FUZZTIME each (pg_query's target runs in `make fuzz`: its instrumented build takes
## minutes; a fixed sweep of non-ASCII queries runs in its package's tests)
GRAMMAR_FUZZTIME ?= 3s
GRAMMAR_FUZZ := ./domain/engines/code:FuzzParseShell ./domain/engines/code:FuzzParsePython \
	./domain/engines/code:FuzzParseJavaScript
fuzz-grammars:
	$(call run-fuzz,$(GRAMMAR_FUZZ),$(GRAMMAR_FUZZTIME))

clean:
	rm -rf bin bench.txt

## bench-ab: the hot paths of BASE against HEAD (default: the checked-out commit), interleaved,
## COUNT rounds, compared with benchstat (scripts/bench-ab.sh; ~20 min at COUNT=10 on 2 cores)
.PHONY: bench-ab
bench-ab:
	@test -n "$(BASE)" || { echo "usage: make bench-ab BASE=<rev> [HEAD=<rev>] [COUNT=10] [BENCH=<regexp>]"; exit 2; }
	COUNT=$(COUNT) BENCH='$(BENCH)' GO=$(GO) BENCH_GC='$(BENCH_GC)' scripts/bench-ab.sh $(BASE) $(or $(HEAD),HEAD)
