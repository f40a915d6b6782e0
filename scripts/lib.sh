# Shared set-up steps for the Makefile targets: each step is idempotent and
# does nothing when its service or tool is already there.
# shellcheck shell=bash

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="$ROOT/.run"
TOOLS_BIN="$ROOT/.tools/bin"
TEMPORAL_CLI_VERSION="v1.5.1" # pinned, with its SQLite driver, in scripts/temporal-cli/go.mod
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:7233}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
# The dev server's Web UI listens on TEMPORAL_UI_PORT (default the server's
# port + 1000, Temporal's own default: 8233 beside 7233).
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-$((${TEMPORAL_ADDRESS##*:} + 1000))}"
export PATH="$TOOLS_BIN:$(go env GOPATH)/bin:$PATH"
mkdir -p "$RUN_DIR" "$TOOLS_BIN"

log() { printf '==> %s\n' "$*" >&2; }

# port_open HOST:PORT
port_open() {
	local host=${1%:*} port=${1##*:}
	(exec 3<>"/dev/tcp/$host/$port") 2>/dev/null
}

ensure_go_tool() { # ensure_go_tool NAME MODULE@VERSION
	if [ ! -x "$TOOLS_BIN/$1" ]; then
		log "installing $1 ($2)"
		GOBIN="$TOOLS_BIN" GOFLAGS=-mod=mod go install "$2"
	fi
}

# ensure_lint_tools installs the pinned static checkers that scripts/test.sh
# runs after go vet (both build with Go 1.26).
STATICCHECK_VERSION="v0.8.2" # staticcheck 2026.2.2
ERRCHECK_VERSION="v1.30.0"
ensure_lint_tools() {
	ensure_go_tool staticcheck "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
	ensure_go_tool errcheck "github.com/kisielk/errcheck@$ERRCHECK_VERSION"
}

# ensure_python_tools makes the virtualenv .tools/python with pytest,
# schemathesis, the frameworks that the Python client's adapters are tested
# with, temporalio for its tool workers and the MCP Python SDK whose client
# tests/mcpgateway_clients_test.go runs against the gateway (at pinned
# versions), and the client itself installed from clients/python as users
# install it, with its extras; TOOLROUND_PYTHON is its interpreter, which
# tests/python_test.go and tests/schemathesis_test.go run. Under CI=true a
# failure here fails the tests instead of skipping them.
PYTHON_TOOLS="pytest==9.2.0 schemathesis==4.32.5 langgraph==1.2.24 langgraph-checkpoint-sqlite==3.1.2 langchain-core==1.8.3 openai-agents==0.24.0 temporalio==1.35.0 mcp==2.3.0"
ensure_python_tools() {
	local venv="$ROOT/.tools/python" stamp
	stamp="$PYTHON_TOOLS $(cat "$ROOT/clients/python/pyproject.toml" | cksum)"
	if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
		if ! command -v python3 >/dev/null 2>&1; then
			log "python3 is missing: the Python client's tests will skip (fail under CI=true)"
			return 0
		fi
		log "installing the Python test tools into .tools/python ($PYTHON_TOOLS)"
		python3 -m venv "$venv" &&
			"$venv/bin/pip" install -q $PYTHON_TOOLS &&
			"$venv/bin/pip" install -q "$ROOT/clients/python[langgraph,openai-agents,tools]" &&
			printf '%s' "$stamp" >"$venv/.stamp" ||
			{ log "could not install the Python test tools: their tests will skip (fail under CI=true)"; return 0; }
	else
		"$venv/bin/pip" install -q --no-deps --force-reinstall "$ROOT/clients/python" >/dev/null
	fi
	export TOOLROUND_PYTHON="$venv/bin/python"
}

# ensure_python_tool_worker makes the virtualenv .tools/python-tools with
# the Python client and its tools extra (temporalio, pydantic) installed from
# clients/python as users install it, for the demo's tool worker (`make
# run`); PYTHON_TOOL_WORKER is its interpreter. Without python3 (3.10 or
# newer) or the packages it answers 1, and the demo calls no Python tool.
ensure_python_tool_worker() {
	local venv="$ROOT/.tools/python-tools" stamp
	stamp="$(cksum <"$ROOT/clients/python/pyproject.toml")"
	if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
		if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
			log "no python3 of 3.10 or newer: the demo serves no Python tool"
			return 1
		fi
		log "installing the Python client with its tools extra into .tools/python-tools"
		python3 -m venv "$venv" &&
			"$venv/bin/pip" install -q "$ROOT/clients/python[tools]" &&
			printf '%s' "$stamp" >"$venv/.stamp" ||
			{ log "could not install the Python client's tools extra: the demo serves no Python tool"; return 1; }
	else
		"$venv/bin/pip" install -q --no-deps --force-reinstall "$ROOT/clients/python" >/dev/null
	fi
	export PYTHON_TOOL_WORKER="$venv/bin/python"
}

# start_tool_worker FILE QUEUE serves FILE's tools with `python -m
# toolround.tools serve` on task queue QUEUE in the background (its log
# .run/toolworker.log), after the one these scripts started before.
start_tool_worker() {
	if [ -f "$RUN_DIR/toolworker.pid" ] && kill -0 "$(cat "$RUN_DIR/toolworker.pid")" 2>/dev/null; then
		kill "$(cat "$RUN_DIR/toolworker.pid")" 2>/dev/null || true
		wait_gone "$(cat "$RUN_DIR/toolworker.pid")"
	fi
	log "starting a Python tool worker: $1 on task queue $2 (log .run/toolworker.log)"
	TOOLROUND_TASK_QUEUE="${TASK_QUEUE:-toolround}" nohup "$PYTHON_TOOL_WORKER" -m toolround.tools serve "$1" --task-queue "$2" >"$RUN_DIR/toolworker.log" 2>&1 &
	echo $! >"$RUN_DIR/toolworker.pid"
}

# ensure_node_tools installs the TypeScript client's dev dependencies
# (typescript, the frameworks its adapters are tested with, and the Temporal
# TypeScript SDK and zod that toolround/tools serves tools with, at the exact
# versions of clients/typescript/package-lock.json) with `npm ci`, and builds
# the client into clients/typescript/dist; tests/typescript_test.go builds it
# again from its sources and runs `node --test` there. Node.js 18 or newer
# comes from Debian's packages when it is missing. TOOLROUND_NODE is the node
# the tests run. Under CI=true a failure here fails those tests instead of
# skipping them.
ensure_node_tools() {
	local dir="$ROOT/clients/typescript" stamp sudo=""
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		[ "$(id -u)" -ne 0 ] && sudo="sudo"
		log "installing nodejs and npm from Debian's packages (the TypeScript client's tests)"
		{ command -v apt-get >/dev/null 2>&1 && $sudo apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nodejs npm >/dev/null; } ||
			{ log "could not install Node.js: the TypeScript client's tests will skip (fail under CI=true)"; return 0; }
	fi
	if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 18 ]; then
		log "node $(node --version) is older than 18: the TypeScript client's tests will skip (fail under CI=true)"
		return 0
	fi
	stamp="$(node --version) $(cksum <"$dir/package-lock.json")"
	if [ ! -d "$dir/node_modules" ] || [ "$(cat "$dir/node_modules/.stamp" 2>/dev/null)" != "$stamp" ]; then
		log "installing the TypeScript client's dev dependencies (npm ci in clients/typescript)"
		(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) &&
			printf '%s' "$stamp" >"$dir/node_modules/.stamp" ||
			{ log "npm ci failed: the TypeScript client's tests will skip (fail under CI=true)"; return 0; }
	fi
	(cd "$dir" && node node_modules/typescript/bin/tsc -p tsconfig.json) ||
		{ log "the TypeScript client does not build: its tests will fail"; }
	# The MCP TypeScript SDK whose client tests/mcpgateway_clients_test.go
	# runs against the gateway, at the version of its package-lock.json.
	local sdk="$ROOT/tests/mcpclients/ts"
	stamp="$(node --version) $(cksum <"$sdk/package-lock.json")"
	if [ ! -d "$sdk/node_modules" ] || [ "$(cat "$sdk/node_modules/.stamp" 2>/dev/null)" != "$stamp" ]; then
		log "installing the MCP TypeScript SDK (npm ci in tests/mcpclients/ts)"
		(cd "$sdk" && npm ci --no-audit --no-fund --loglevel=error) &&
			printf '%s' "$stamp" >"$sdk/node_modules/.stamp" ||
			log "npm ci in tests/mcpclients/ts failed: its test will skip (fail under CI=true)"
	fi
	# The MCP reference server whose image tool tests/images_test.go runs
	# (the version is that test's everythingVersion).
	local ev="$ROOT/.tools/mcp-everything" evv="2026.8.31"
	if [ "$(node -p "require('$ev/node_modules/@modelcontextprotocol/server-everything/package.json').version" 2>/dev/null)" != "$evv" ]; then
		log "installing @modelcontextprotocol/server-everything $evv into .tools/mcp-everything"
		mkdir -p "$ev" && npm install --no-audit --no-fund --loglevel=error --prefix "$ev" "@modelcontextprotocol/server-everything@$evv" >/dev/null ||
			log "npm install of the MCP everything server failed: its test will skip (fail under CI=true)"
	fi
	# The official MCP conformance suite and the Node.js 22 it needs, both
	# from npm (node@22 brings its own binary), for
	# tests/mcp_conformance_test.go (the versions are that test's
	# conformanceVersion and conformanceNode).
	local mc="$ROOT/.tools/mcp-conformance" mcv="0.1.16" mcn="22.23.3"
	if [ "$(node -p "require('$mc/node_modules/@modelcontextprotocol/conformance/package.json').version" 2>/dev/null)" != "$mcv" ] ||
		[ "$("$mc/node_modules/.bin/node" --version 2>/dev/null)" != "v$mcn" ]; then
		log "installing @modelcontextprotocol/conformance $mcv and node@$mcn into .tools/mcp-conformance"
		mkdir -p "$mc" && npm install --no-audit --no-fund --loglevel=error --prefix "$mc" \
			"@modelcontextprotocol/conformance@$mcv" "node@$mcn" >/dev/null ||
			log "npm install of the MCP conformance suite failed: its test will skip (fail under CI=true)"
	fi
	# Its later release, whose server mode tests/mcpgateway_conformance_test.go
	# runs against the MCP gateway on that node (the version is that test's
	# conformanceServerVersion).
	local ms="$ROOT/.tools/mcp-conformance-server" msv="0.2.0-alpha.12"
	if [ "$(node -p "require('$ms/node_modules/@modelcontextprotocol/conformance/package.json').version" 2>/dev/null)" != "$msv" ]; then
		log "installing @modelcontextprotocol/conformance $msv into .tools/mcp-conformance-server"
		mkdir -p "$ms" && npm install --no-audit --no-fund --loglevel=error --prefix "$ms" \
			"@modelcontextprotocol/conformance@$msv" >/dev/null ||
			log "npm install of the MCP conformance suite $msv failed: the gateway's conformance test will skip (fail under CI=true)"
	fi
	export TOOLROUND_NODE="$(command -v node)"
}

# ensure_temporal_cli builds the Temporal CLI into .tools/bin from the small
# module in scripts/temporal-cli: the CLI's own release, with a newer
# modernc.org/sqlite than it names. Its older driver keeps answering
# "interrupted (9)" on a connection after one cancelled query, and from then on
# the dev server fails every request that touches that connection. The stamp
# beside the binary is that module's go.sum, so a change there rebuilds it.
ensure_temporal_cli() {
	local src="$ROOT/scripts/temporal-cli" stamp="$TOOLS_BIN/temporal.go.sum"
	if [ -x "$TOOLS_BIN/temporal" ] && cmp -s "$src/go.sum" "$stamp"; then
		return
	fi
	log "building the Temporal CLI $TEMPORAL_CLI_VERSION from the Go module proxy (a few minutes, once)"
	(cd "$src" && GOFLAGS=-mod=readonly go build -o "$TOOLS_BIN/temporal" github.com/temporalio/cli/cmd/temporal)
	cp "$src/go.sum" "$stamp"
}

# ensure_helm builds helm into .tools/bin from the module deploy/check, which
# pins it (its go.mod's tool line) beside the k8s.io/api types that
# deploy/check decodes the chart's manifests into (O4). The stamp beside the
# binary is that module's go.sum, so a change there rebuilds it. The build
# takes about two and a half minutes on two cores, once.
ensure_helm() {
	local src="$ROOT/deploy/check" stamp="$TOOLS_BIN/helm.go.sum"
	if [ -x "$TOOLS_BIN/helm" ] && cmp -s "$src/go.sum" "$stamp"; then
		return
	fi
	log "building helm from the Go module proxy (the version deploy/check/go.mod pins; a few minutes, once)"
	(cd "$src" && GOFLAGS=-mod=readonly go build -o "$TOOLS_BIN/helm" helm.sh/helm/v4/cmd/helm)
	cp "$src/go.sum" "$stamp"
}

# temporal_base_flags are the dev server's settings for low round latency
# that cost nothing (measured in docs/benchmarks/dev-server.md): eager activity dispatch,
# and one task-queue partition, so that an activity never waits in a
# partition that no poller is watching (that wait was a 2 s tail).
temporal_base_flags() {
	echo --dynamic-config-value system.enableActivityEagerExecution=true \
		--dynamic-config-value matching.numTaskqueueReadPartitions=1 \
		--dynamic-config-value matching.numTaskqueueWritePartitions=1
}

# TEMPORAL_DEV_POLL_RPS is how many times a second the dev server may read
# its transfer queue (history.transferProcessorMaxPollRPS; Temporal's
# default is 20): every workflow and activity task passes through it, and
# at 20 a task waits for the limiter. docs/benchmarks/dev-server.md ("The dev server's
# settings") measures latency and idle CPU per value. TEMPORAL_DEV_FAST=1,
# from before, means 1000.
TEMPORAL_DEV_POLL_RPS_DEFAULT=1000

# temporal_dev_flags are the flags of the dev server that `make run`,
# `make test` and `make bench` start.
temporal_dev_flags() {
	local rps=${TEMPORAL_DEV_POLL_RPS:-$TEMPORAL_DEV_POLL_RPS_DEFAULT}
	if [ "${TEMPORAL_DEV_FAST:-0}" = 1 ]; then
		rps=1000
	fi
	temporal_base_flags
	echo --dynamic-config-value "history.transferProcessorMaxPollRPS=$rps"
}

# SEARCH_ATTRIBUTES are the search attributes that rounds keep current for
# the inbox (T7, round/wire.go), NAME=TYPE; a worker refuses a namespace
# without them.
SEARCH_ATTRIBUTES="ToolroundSession=Keyword ToolroundWaiting=Bool ToolroundWaitingCalls=Int ToolroundParent=Keyword"

# temporal_search_attribute_flags registers them on a dev server at start.
temporal_search_attribute_flags() {
	local sa
	for sa in $SEARCH_ATTRIBUTES; do
		echo --search-attribute "$sa"
	done
}

# ensure_search_attributes adds the ones that TEMPORAL_NAMESPACE (default:
# default) lacks on the server at TEMPORAL_ADDRESS, for a server started
# before they existed or elsewhere; adding is additive and harmless.
ensure_search_attributes() {
	local ns=${TEMPORAL_NAMESPACE:-default} have sa
	ensure_temporal_cli
	have=$(temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" -n "$ns" 2>/dev/null) || {
		log "cannot list the search attributes of namespace $ns on $TEMPORAL_ADDRESS"
		return 1
	}
	for sa in $SEARCH_ATTRIBUTES; do
		if ! printf '%s\n' "$have" | grep -qw "${sa%%=*}"; then
			log "adding the search attribute ${sa%%=*} (${sa##*=}) to namespace $ns"
			temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$ns" --name "${sa%%=*}" --type "${sa##*=}" >/dev/null
		fi
	done
}

# temporal_ui_url is the dev server's Web UI.
temporal_ui_url() {
	echo "http://${TEMPORAL_ADDRESS%:*}:$TEMPORAL_UI_PORT"
}

# ensure_temporal_server starts a dev server on TEMPORAL_ADDRESS, with its
# Web UI on TEMPORAL_UI_PORT, unless one answers there.
ensure_temporal_server() {
	if port_open "$TEMPORAL_ADDRESS"; then
		return
	fi
	ensure_temporal_cli
	local host=${TEMPORAL_ADDRESS%:*} port=${TEMPORAL_ADDRESS##*:}
	log "starting the Temporal dev server on $TEMPORAL_ADDRESS (log: .run/temporal.log)"
	nohup temporal server start-dev --ip "$host" --port "$port" --ui-port "$TEMPORAL_UI_PORT" $(temporal_dev_flags) \
		$(temporal_search_attribute_flags) --log-level warn >"$RUN_DIR/temporal.log" 2>&1 &
	echo $! >"$RUN_DIR/temporal.pid"
	for _ in $(seq 1 120); do
		if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n default >/dev/null 2>&1; then
			return
		fi
		sleep 0.5
	done
	log "the Temporal dev server did not come up; see .run/temporal.log"
	tail -20 "$RUN_DIR/temporal.log" >&2
	return 1
}

# ensure_redis starts Redis on 127.0.0.1:6379 unless it answers, installing
# it from Debian's packages when it is missing.
ensure_redis() {
	if [ "$REDIS_URL" = "none" ]; then
		return
	fi
	local hostport
	hostport=$(printf '%s' "$REDIS_URL" | sed -E 's#^rediss?://([^@/]*@)?([^/]+).*#\2#')
	if port_open "$hostport"; then
		return
	fi
	if ! command -v redis-server >/dev/null 2>&1; then
		ensure_redis_install
	fi
	log "starting redis-server on ${hostport}"
	redis-server --daemonize yes --bind "${hostport%:*}" --port "${hostport##*:}" --save "" --appendonly no \
		--dir "$RUN_DIR" --logfile "$RUN_DIR/redis.log" --pidfile "$RUN_DIR/redis.pid"
	for _ in $(seq 1 40); do
		port_open "$hostport" && return
		sleep 0.25
	done
	log "redis did not come up; see .run/redis.log"
	return 1
}

# ensure_redis_ha starts the Redis Cluster (three masters, three replicas)
# and the Sentinel set (a master, its replica, three sentinels) on loopback
# that the O1 tests use (scripts/redis-ha.sh), after installing redis-server
# as ensure_redis does, and exports their REDIS_CLUSTER_URL and
# REDIS_SENTINEL_URL. Without them those tests skip (fail under CI=true).
ensure_redis_ha() {
	if ! command -v redis-server >/dev/null 2>&1; then
		ensure_redis_install
	fi
	bash "$ROOT/scripts/redis-ha.sh" cluster || log "no Redis Cluster: its tests will skip (fail under CI=true)"
	bash "$ROOT/scripts/redis-ha.sh" sentinel || log "no Sentinel set: its tests will skip (fail under CI=true)"
	local line
	while read -r line; do
		export "${line?}"
	done < <(bash "$ROOT/scripts/redis-ha.sh" urls)
}

# ensure_redis_install installs redis-server from Debian's packages.
ensure_redis_install() {
	log "installing redis-server from Debian's packages"
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
}

# pg_answers tells whether PostgreSQL at PGHOST:PGPORT lets PGUSER in.
pg_answers() {
	PGCONNECT_TIMEOUT=3 psql -h "${PGHOST:-127.0.0.1}" -p "${PGPORT:-5432}" -U "${PGUSER:-postgres}" -d postgres \
		-w -tAc 'SELECT 1' >/dev/null 2>&1
}

# ensure_postgres makes PostgreSQL answer on PGHOST:PGPORT (default
# 127.0.0.1:5432) for PGUSER (default postgres) without a password, as
# scripts/cluster.sh's Temporal server connects: it installs Debian's
# postgresql when the server is missing, starts the machine's cluster on
# that port, and, when that cluster refuses the user over TCP, adds a
# `trust` line for PGUSER from loopback only to the top of its pg_hba.conf
# (marked, so that it is added once). A server it did not start and cannot
# configure is left alone with one line that says what it needs.
ensure_postgres() {
	local host=${PGHOST:-127.0.0.1} port=${PGPORT:-5432} user=${PGUSER:-postgres}
	pg_answers && return
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	if ! command -v pg_lsclusters >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
		if ! command -v apt-get >/dev/null 2>&1; then
			log "PostgreSQL does not answer on $host:$port and this is no Debian system: start one that lets $user in from loopback"
			return 1
		fi
		log "installing postgresql from Debian's packages (the cluster test's Temporal server)"
		$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
	fi
	# The machine's cluster on that port (Debian creates "main" on 5432).
	local ver name cport
	read -r ver name cport _ < <(pg_lsclusters -h | awk -v p="$port" '$3 == p' | head -1) || true
	if [ -z "${ver:-}" ]; then
		ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
		log "creating the PostgreSQL $ver cluster toolround on port $port"
		$sudo pg_createcluster -p "$port" "$ver" toolround >/dev/null
		name=toolround
	fi
	local hba="/etc/postgresql/$ver/$name/pg_hba.conf"
	if ! $sudo grep -q 'added by toolround' "$hba" 2>/dev/null; then
		log "letting $user in from loopback without a password ($hba)"
		$sudo sed -i "1i # added by toolround scripts/lib.sh: scripts/cluster.sh connects as $user without a password\nhost all $user 127.0.0.1/32 trust\nhost all $user ::1/128 trust" "$hba"
	fi
	if pg_lsclusters -h | awk -v v="$ver" -v n="$name" '$1 == v && $2 == n && $4 == "online"' | grep -q .; then
		$sudo pg_ctlcluster "$ver" "$name" reload
	else
		log "starting PostgreSQL $ver/$name on port $port"
		$sudo pg_ctlcluster "$ver" "$name" start
	fi
	for _ in $(seq 1 40); do
		pg_answers && return
		sleep 0.25
	done
	log "PostgreSQL on $host:$port does not let $user in; see /var/log/postgresql/postgresql-$ver-$name.log"
	return 1
}

# ensure_bubblewrap installs bubblewrap from Debian's packages when it is
# missing: the worker's default SANDBOX=auto runs commands under it, and
# without it falls back to no sandbox (docs/sandbox.md). SANDBOX=none skips
# the install.
ensure_bubblewrap() {
	if [ "${SANDBOX:-auto}" = "none" ] || command -v bwrap >/dev/null 2>&1; then
		return
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		log "bubblewrap (bwrap) is missing and this is no Debian system: install it, or commands run without a sandbox"
		return
	fi
	log "installing bubblewrap from Debian's packages (the command sandbox)"
	apt_install bubblewrap
}

# apt_install installs Debian packages, as root or through sudo.
apt_install() {
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

# ensure_strace installs strace from Debian's packages when it is missing:
# the matcher's oracle (T13, tools/command TestMatcherOracle) traces the
# commands that rules approve with it, inside the sandbox, and under
# CI=true fails without it.
ensure_strace() {
	if command -v strace >/dev/null 2>&1; then
		return
	fi
	if ! command -v apt-get >/dev/null 2>&1; then
		log "strace is missing and this is no Debian system: install it, or the matcher's oracle (T13) skips (fails under CI=true)"
		return
	fi
	log "installing strace from Debian's packages (the matcher's oracle, T13)"
	apt_install strace
}

build() {
	log "building bin/worker, bin/starter and bin/console"
	mkdir -p "$ROOT/bin"
	(cd "$ROOT" && go build -o bin/ ./cmd/worker ./cmd/starter ./cmd/console)
}

# ensure_chromium installs Debian's chromium, which the console's browser
# tests drive, when it is missing; under CI=true those tests then fail
# instead of skipping if it still is.
ensure_chromium() {
	if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
		return
	fi
	log "installing chromium from Debian's packages (the console's browser tests)"
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	{ $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; } ||
		log "could not install chromium: the browser tests will skip (fail under CI=true)"
}

# start_console starts bin/console (CONSOLE_ADDR, default 127.0.0.1:8780)
# beside the worker and prints its URL and token; its log is
# .run/console.log.
start_console() {
	if [ -f "$RUN_DIR/console.pid" ] && kill -0 "$(cat "$RUN_DIR/console.pid")" 2>/dev/null; then
		kill "$(cat "$RUN_DIR/console.pid")" 2>/dev/null || true
		wait_gone "$(cat "$RUN_DIR/console.pid")"
	fi
	nohup "$ROOT/bin/console" >"$RUN_DIR/console.log" 2>&1 &
	echo $! >"$RUN_DIR/console.pid"
	for _ in $(seq 1 40); do
		if grep -q "console listening" "$RUN_DIR/console.log"; then
			log "$(grep -m1 "console listening" "$RUN_DIR/console.log")"
			return
		fi
		kill -0 "$(cat "$RUN_DIR/console.pid")" 2>/dev/null || break
		sleep 0.25
	done
	log "the console did not start; see .run/console.log"
	tail -5 "$RUN_DIR/console.log" >&2
	return 1
}

# start_worker starts bin/worker in the background unless a worker started
# by these scripts still runs; its log is .run/worker.log.
start_worker() {
	if [ -f "$RUN_DIR/worker.pid" ] && kill -0 "$(cat "$RUN_DIR/worker.pid")" 2>/dev/null; then
		log "stopping the previous worker so the new build serves"
		kill "$(cat "$RUN_DIR/worker.pid")" 2>/dev/null || true
		wait_gone "$(cat "$RUN_DIR/worker.pid")"
	fi
	export TOOLS_WORKDIR="${TOOLS_WORKDIR:-$RUN_DIR/workdir}"
	log "starting a worker (task queue ${TASK_QUEUE:-toolround}, workdir $TOOLS_WORKDIR, WORKSPACE=${WORKSPACE:-shared}, log .run/worker.log)"
	nohup "$ROOT/bin/worker" >"$RUN_DIR/worker.log" 2>&1 &
	echo $! >"$RUN_DIR/worker.pid"
	for _ in $(seq 1 60); do
		grep -q "worker started" "$RUN_DIR/worker.log" && return
		kill -0 "$(cat "$RUN_DIR/worker.pid")" 2>/dev/null || break
		sleep 0.25
	done
	log "the worker did not start; see .run/worker.log"
	tail -20 "$RUN_DIR/worker.log" >&2
	return 1
}

wait_gone() {
	for _ in $(seq 1 40); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.25
	done
}
