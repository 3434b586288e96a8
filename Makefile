GO       ?= go
FUZZTIME ?= 10s

.PHONY: build test bench fuzz lint clean

## build: build the dagent binary into bin/
build:
	$(GO) build -o bin/dagent ./cmd/dagent

## test: run every test with the race detector
test:
	$(GO) test -race ./...

## bench: run every benchmark with allocation counts
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: a short pass (FUZZTIME each) of every fuzz target
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## lint: gofmt check and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt -w needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf bin
