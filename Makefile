# The two commands: `make run` (set up everything and run the example
# rounds) and `make test` (the whole test suite). See README.md.
.PHONY: run test lint bench crashtest build worker services stop

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

# crashtest runs every point of the crash matrix (L1; docs/requirements/
# operations.md): CRASH_POINTS=n CRASH_SEED=s for a sample, CRASH_PARALLEL
# points at once, CRASH_SCENARIOS=a,b and CRASH_TARGETS=worker,server,redis,
# toolworker to pick, CRASH_BUILD_TAGS=brokenopid or brokenorder for a build it
# must fail on.
crashtest:
	@bash -c 'source scripts/lib.sh && ensure_redis && ensure_temporal_server && ensure_search_attributes && cd "$$ROOT" && export TEMPORAL_CLI="$$(command -v temporal)" && CRASH_POINTS=$${CRASH_POINTS:-0} go test -count=1 -timeout 120m -run "^TestCrashMatrix$$" -v ./tests | grep -E "^(crash matrix|ok|FAIL| *--- FAIL)|Error|neither ended"'

build:
	go build -o bin/ ./cmd/worker ./cmd/starter ./cmd/console

services:
	@bash -c 'source scripts/lib.sh && ensure_redis && ensure_temporal_server'

stop:
	@bash scripts/stop.sh
