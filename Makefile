GO       ?= go
FUZZTIME ?= 10s
# VERSION is the version make build stamps into dagent: git describe of
# the checkout, -dirty when it has changes; empty leaves it to the build
# info Go records (see dagent version --help).
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)

.PHONY: build test e2e bench fuzz lint clean

## build: build the dagent binary into bin/, stamped with VERSION
build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/dagent ./cmd/dagent

## test: run every test with the race detector, the temporal module's
## too (its dev server tests skip without the temporal CLI; see
## docs/temporal.md)
test:
	$(GO) test -race ./...
	cd temporal && $(GO) vet ./... && $(GO) test -race ./...

## e2e: the end-to-end suite against a real LLM: the one OPENAI_API_KEY or
## OPENAI_BASE_URL names, a recording (DAGENT_E2E_REPLAY=dir), or else the
## toy llama.cpp server of e2e/localllm, started here and stopped after
e2e:
	@set -e; \
	if [ -z "$$OPENAI_API_KEY$$OPENAI_BASE_URL$$DAGENT_E2E_REPLAY" ]; then \
		echo "e2e: no OPENAI_API_KEY or OPENAI_BASE_URL: starting the toy server of e2e/localllm"; \
		vars="$$(e2e/localllm/start.sh)"; \
		eval "$$vars"; \
		trap 'kill "$$LOCALLLM_PID" 2>/dev/null || true' EXIT; \
		trap 'exit 130' INT TERM; \
		echo "e2e: $$OPENAI_BASE_URL, model $$DAGENT_E2E_MODEL"; \
	fi; \
	$(GO) test -count=1 -v -timeout 30m ./e2e/...

## bench: run every benchmark with allocation counts
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: a short pass (FUZZTIME each) of every fuzz target; see .ci/fuzz
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash .ci/fuzz

## lint: gofmt check and go vet, of the temporal module too
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt -w needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd temporal && $(GO) vet ./...

clean:
	rm -rf bin
