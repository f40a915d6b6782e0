# The two commands: `make run` (set up everything and run the example
# rounds) and `make test` (the whole test suite). See README.md.
.PHONY: run test bench build worker services stop

run:
	@bash scripts/run.sh

test:
	@bash scripts/test.sh

bench:
	@bash scripts/bench.sh

build:
	go build -o bin/ ./worker ./starter ./console/cmd/console

services:
	@bash -c 'source scripts/lib.sh && ensure_redis && ensure_temporal_server'

stop:
	@bash scripts/stop.sh
