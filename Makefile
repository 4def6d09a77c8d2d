# agentgate — the two commands a newcomer runs: `make run` and `make test`.
GO        ?= go
DATA      ?= ./data
HTTP      ?= 127.0.0.1:8080
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCH     ?= .
COUNT     ?= 10
# run-kafka: the dev broker's address and the gate's admin key
KAFKA     ?= 127.0.0.1:9092
API_KEY   ?= dev-admin-key

.PHONY: run build test test-race lint bench fuzz clean deps

## run: the gate on its embedded default (Pebble in $(DATA), HTTP on $(HTTP), no Kafka)
run:
	$(GO) run ./cmd/agentgate serve --data $(DATA) --http $(HTTP)

## deps: the Debian packages the tests use (z3, kcat, poppler-utils, curl, jq); .ci/run does the same
deps:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends z3 kcat poppler-utils curl jq

## run-kafka: a dev Kafka broker (dev-kafka on $(KAFKA), kept in $(DATA)/dev-kafka) and the gate on it
## (state in $(DATA)/kafka-gate, HTTP on $(HTTP), admin key $(API_KEY)); Ctrl-C stops both
.PHONY: run-kafka
run-kafka: SHELL := /bin/bash
run-kafka: build
	@trap 'kill -TERM $$gate 2>/dev/null; wait $$gate; kill -TERM $$broker 2>/dev/null; wait' INT TERM EXIT; \
	bin/agentgate dev-kafka --listen $(KAFKA) --data $(DATA)/dev-kafka & broker=$$!; \
	bin/agentgate serve --kafka-brokers $(KAFKA) --data $(DATA)/kafka-gate --http $(HTTP) --api-key $(API_KEY) & gate=$$!; \
	wait -n

build:
	$(GO) build -o bin/agentgate ./cmd/agentgate

## test: lint, the whole test suite, and the race detector on the concurrent packages
test: lint
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./handlers/... ./projections/... ./streams/...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: every benchmark, $(COUNT) runs, summarised by benchstat (see docs/benchmarks.md)
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -count $(COUNT) ./... | tee bench.txt
	$(GO) run $(BENCHSTAT) bench.txt

## fuzz: a short run of every fuzz target (FUZZTIME each)
FUZZTIME ?= 20s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin bench.txt
