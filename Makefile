# The two commands: `make run` (set up everything and run the example
# rounds) and `make test` (the whole test suite). See README.md.
.PHONY: run test lint bench build worker services stop

run:
	@bash scripts/run.sh

test:
	@bash scripts/test.sh

# lint runs the static checks of `make test` alone: go vet, staticcheck and
# errcheck (installed at their pinned versions on first use).
lint:
	@bash -c 'source scripts/lib.sh && ensure_lint_tools && cd "$$ROOT" && go vet ./... && staticcheck ./... && errcheck -exclude errcheck.exclude ./...'

bench:
	@bash scripts/bench.sh

build:
	go build -o bin/ ./cmd/worker ./cmd/starter ./cmd/console

services:
	@bash -c 'source scripts/lib.sh && ensure_redis && ensure_temporal_server'

stop:
	@bash scripts/stop.sh
