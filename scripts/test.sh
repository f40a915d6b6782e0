#!/usr/bin/env bash
# The whole test suite against a real Temporal dev server and real Redis,
# which it starts when they are not running, then every fuzz target for a
# short while. CI=true makes a missing service fail the tests instead of
# skipping them.
source "$(dirname "$0")/lib.sh"

ensure_redis
ensure_redis_ha
ensure_bubblewrap
ensure_strace
ensure_temporal_server
ensure_temporal_cli
ensure_helm
ensure_chromium
ensure_python_tools
ensure_node_tools
ensure_search_attributes
ensure_go_tool workflowcheck go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
ensure_lint_tools
export TEMPORAL_CLI="$(command -v temporal)"
export HELM="$TOOLS_BIN/helm"
cd "$ROOT"

log "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
log "go vet"
go vet ./...
log "staticcheck"
staticcheck ./...
log "errcheck"
errcheck -exclude errcheck.exclude ./...
log "workflowcheck"
workflowcheck -config workflowcheck.config.yaml ./...
# The SDK adapters are modules of their own (adapters/*/go.mod), so that the
# official SDKs are dependencies of the programs that use them only; ./...
# does not reach them.
for mod in adapters/*/; do
	log "adapter module ${mod%/}: vet, staticcheck, test"
	(cd "$mod" && go vet ./... && staticcheck ./... && go test -race -count=1 ./...)
done
# The Helm chart (O4): deploy/check renders it with the real helm and decodes
# every manifest strictly into the k8s.io/api types; it is a module of its
# own, so that the project's module does not depend on Kubernetes.
log "deploy/check: the Helm chart, rendered and decoded"
(cd deploy/check && go vet ./... && staticcheck ./... && go test -count=1 ./...)
build
# tests/cluster_test.go runs against scripts/cluster.sh's Temporal server on
# PostgreSQL, which ensure_postgres installs and starts like the other
# services. Starting the server here puts its build (minutes, once on a
# fresh machine) outside the tests' timeout; it stops after the tests when
# this script started it. -short skips that test and all of this.
if [[ " ${GOTEST_FLAGS:-} " != *" -short "* ]]; then
	ensure_postgres
	if ! bash scripts/cluster.sh status >/dev/null 2>&1; then
		trap 'bash scripts/cluster.sh stop' EXIT
	fi
	bash scripts/cluster.sh server
fi
log "go test -race"
go test -race -count=1 -timeout 30m ${GOTEST_FLAGS:-} ./...

# Each fuzz target runs on its own (Go fuzzes one target per invocation)
# for a fixed number of inputs, about ten seconds' worth on a loaded
# two-core machine. A count, not a duration: with -fuzztime as a duration
# the fuzzer can end a clean run with a bare "context deadline exceeded"
# (golang/go#75804). FUZZTIME=0 skips them; FUZZTIME=<duration> (30s, 5m)
# fuzzes every target for that long instead, for a longer local hunt.
FUZZTIME="${FUZZTIME:-}"
if [ "$FUZZTIME" != "0" ]; then
	for target in \
		./round:FuzzParseInput:100000x \
		./round:FuzzArguments:100000x \
		./internal/workflows:FuzzUnwrap:30000x \
		./internal/workflows:FuzzPassesGiveEveryCallOneResult:5000x \
		./tools:FuzzCanonical:25000x \
		./tools:FuzzValidate:60000x \
		./approval:FuzzRuleNeverOverMatches:50000x; do
		IFS=: read -r pkg name budget <<<"$target"
		budget="${FUZZTIME:-$budget}"
		log "fuzz $name ($budget)"
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$budget" "$pkg"
	done
fi
