#!/usr/bin/env bash
# A Temporal cluster on the machine's PostgreSQL with N toolround workers:
# the production layout of docs/operations.md ("Scaling out") on one machine, without
# Docker. The server is built from its own module (go.temporal.io/server, the
# version inside the pinned CLI) into .tools/bin, its schema is set up with
# its SQL tool, and it uses the dynamic config of the compose file
# (docker/dynamicconfig/toolround.yaml).
#
#   scripts/cluster.sh start [N]   server, then exactly N workers (default 3)
#   scripts/cluster.sh server      the server only (builds it and sets up the schema)
#   scripts/cluster.sh workers N   exactly N workers (0 stops them all)
#   scripts/cluster.sh status      what runs, and whether the frontend answers
#   scripts/cluster.sh stop        workers, then the server
#   scripts/cluster.sh reset       stop, then drop the cluster's databases
#
# Every command is idempotent. The cluster keeps off the dev server's and
# `make run`'s settings: its own ports (frontend CLUSTER_ADDRESS, default
# 127.0.0.1:7333; history, matching and worker services on the next ports),
# databases (CLUSTER_DB, default toolround_temporal and ..._visibility),
# Redis DB (CLUSTER_REDIS_URL, default redis://127.0.0.1:6379/5), task queue
# (CLUSTER_TASK_QUEUE, default toolround-cluster) and one workdir shared by
# its workers (CLUSTER_WORKDIR, default .run/cluster/workdir). Logs and pid
# files are in .run/cluster/.
source "$(dirname "$0")/lib.sh"

# The server inside `temporal` v1.5.1 (TEMPORAL_CLI_VERSION, built from
# scripts/temporal-cli): its go.mod requires go.temporal.io/server v1.29.1. docker/docker-compose.yml runs the
# same version.
TEMPORAL_SERVER_VERSION="v1.29.1"
SERVER_BUILD_DIR="$ROOT/.tools/temporal-server"
CLUSTER_DIR="$RUN_DIR/cluster"
CLUSTER_ADDRESS="${CLUSTER_ADDRESS:-127.0.0.1:7333}"
CLUSTER_DB="${CLUSTER_DB:-toolround_temporal}"
CLUSTER_REDIS_URL="${CLUSTER_REDIS_URL:-redis://127.0.0.1:6379/5}"
CLUSTER_TASK_QUEUE="${CLUSTER_TASK_QUEUE:-toolround-cluster}"
CLUSTER_WORKDIR="${CLUSTER_WORKDIR:-$CLUSTER_DIR/workdir}"
PGHOST="${PGHOST:-127.0.0.1}" PGPORT="${PGPORT:-5432}" PGUSER="${PGUSER:-postgres}"
DYNAMIC_CONFIG="$ROOT/docker/dynamicconfig/toolround.yaml"
HOST=${CLUSTER_ADDRESS%:*} PORT=${CLUSTER_ADDRESS##*:}
mkdir -p "$CLUSTER_DIR"

# The search attributes the workflows set (internal/workflows/), registered on the
# dev server by scripts/lib.sh and in docker/docker-compose.yml too.
SEARCH_ATTRIBUTES="ToolroundSession=Keyword ToolroundWaiting=Bool ToolroundWaitingCalls=Int ToolroundParent=Keyword"

ensure_server_binaries() {
	if [ -x "$TOOLS_BIN/temporal-server" ] && [ -x "$TOOLS_BIN/temporal-sql-tool" ] &&
		[ "$(cat "$SERVER_BUILD_DIR/version" 2>/dev/null)" = "$TEMPORAL_SERVER_VERSION" ]; then
		return
	fi
	log "building the Temporal server $TEMPORAL_SERVER_VERSION and its SQL tool into .tools/bin (several minutes, once)"
	mkdir -p "$SERVER_BUILD_DIR"
	# A module of its own: the server's go.mod chooses every dependency
	# version, as `go install ...@version` would, and the build does not
	# touch the project's go.mod.
	(
		cd "$SERVER_BUILD_DIR"
		rm -f go.mod go.sum version
		go mod init toolround.local/temporal-server >/dev/null 2>&1
		go get "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
			"go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" 2>get.log
		# One build for both, so that their shared packages compile once.
		nice -n 10 go build ${SERVER_BUILD_FLAGS:-} -o out/ go.temporal.io/server/cmd/server go.temporal.io/server/cmd/tools/sql
		mv out/server "$TOOLS_BIN/temporal-server"
		mv out/sql "$TOOLS_BIN/temporal-sql-tool"
	)
	echo "$TEMPORAL_SERVER_VERSION" >"$SERVER_BUILD_DIR/version"
}

# schema_dir is where the server module ships its PostgreSQL schemas.
schema_dir() {
	local dir
	dir="$(cd "$SERVER_BUILD_DIR" && go list -m -f '{{.Dir}}' go.temporal.io/server)/schema/postgresql/v12"
	[ -d "$dir" ] || { log "no schema at $dir"; return 1; }
	echo "$dir"
}

sql_tool() { # sql_tool DB ARGS...
	local db=$1
	shift
	temporal-sql-tool --plugin postgres12 --endpoint "$PGHOST" --port "$PGPORT" --user "$PGUSER" --db "$db" "$@"
}

db_exists() {
	[ "$(psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$1'")" = 1 ]
}

# ensure_schema creates the two databases with the schema's first version
# when they are missing, then brings both to the newest version the server
# ships (update-schema does nothing when they are there already).
ensure_schema() {
	local dir
	dir=$(schema_dir)
	local db kind
	for kind in temporal visibility; do
		db=$CLUSTER_DB
		[ "$kind" = visibility ] && db="${CLUSTER_DB}_visibility"
		if ! db_exists "$db"; then
			log "creating the database $db with the $kind schema"
			{ sql_tool "$db" create-database && sql_tool "$db" setup-schema -v 0.0; } >"$CLUSTER_DIR/schema-$kind.log" 2>&1 || {
				log "setting up $db failed; see .run/cluster/schema-$kind.log"
				tail -5 "$CLUSTER_DIR/schema-$kind.log" >&2
				return 1
			}
		fi
		sql_tool "$db" update-schema -d "$dir/$kind/versioned" >>"$CLUSTER_DIR/schema-$kind.log" 2>&1 || {
			log "update-schema of $db failed; see .run/cluster/schema-$kind.log"
			tail -5 "$CLUSTER_DIR/schema-$kind.log" >&2
			return 1
		}
	done
}

# write_config writes the server's static configuration: PostgreSQL
# persistence and SQL visibility, one cluster, every service in one process
# on its own ports, and the shared dynamic config file.
write_config() {
	mkdir -p "$CLUSTER_DIR/config"
	local store
	store() {
		cat <<-YAML
		      sql:
		        pluginName: postgres12
		        databaseName: $1
		        connectAddr: "$PGHOST:$PGPORT"
		        connectProtocol: tcp
		        user: $PGUSER
		        password: ""
		        maxConns: $2
		        maxIdleConns: $3
		        maxConnLifetime: 1h
		YAML
	}
	service() { # service NAME GRPC_PORT MEMBERSHIP_PORT [EXTRA]
		cat <<-YAML
		  $1:
		    rpc:
		      grpcPort: $2
		      membershipPort: $3
		      bindOnIP: $HOST
		${4:-}
		YAML
	}
	{
		cat <<-YAML
		# Written by scripts/cluster.sh; edit the script, not this file.
		log:
		  stdout: true
		  level: ${CLUSTER_LOG_LEVEL:-warn}
		persistence:
		  defaultStore: default
		  visibilityStore: visibility
		  numHistoryShards: ${CLUSTER_HISTORY_SHARDS:-4}
		  datastores:
		    default:
		YAML
		# Each of the four services opens pools of its own, so these are
		# per service: at most 4 x (10 + 3) connections with the defaults,
		# well under PostgreSQL's default max_connections of 100 that the
		# machine's other users share.
		store "$CLUSTER_DB" "${CLUSTER_PG_CONNS:-10}" 5
		echo "    visibility:"
		store "${CLUSTER_DB}_visibility" 3 3
		cat <<-YAML
		global:
		  membership:
		    maxJoinDuration: 30s
		    broadcastAddress: $HOST
		services:
		YAML
		service frontend "$PORT" $((PORT + 20)) "      httpPort: $((PORT + 10))"
		service history $((PORT + 1)) $((PORT + 21))
		service matching $((PORT + 2)) $((PORT + 22))
		service worker $((PORT + 6)) $((PORT + 26))
		cat <<-YAML
		clusterMetadata:
		  enableGlobalNamespace: false
		  failoverVersionIncrement: 10
		  masterClusterName: active
		  currentClusterName: active
		  clusterInformation:
		    active:
		      enabled: true
		      initialFailoverVersion: 1
		      rpcName: frontend
		      rpcAddress: $CLUSTER_ADDRESS
		dcRedirectionPolicy:
		  policy: noop
		dynamicConfigClient:
		  filepath: $DYNAMIC_CONFIG
		  pollInterval: 10s
		YAML
	} >"$CLUSTER_DIR/config/toolround.yaml"
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

cli() { temporal --address "$CLUSTER_ADDRESS" "$@"; }

# ensure_namespace registers the default namespace and the search
# attributes unless they are there.
ensure_namespace() {
	if ! cli operator namespace describe -n default >/dev/null 2>&1; then
		log "registering the namespace default"
		cli operator namespace create -n default --retention 72h >/dev/null
	fi
	# A namespace just registered takes a moment to reach the frontend's
	# cache.
	local have="" sa
	for _ in $(seq 1 60); do
		have=$(cli operator search-attribute list -n default 2>/dev/null) && break
		sleep 0.5
	done
	for sa in $SEARCH_ATTRIBUTES; do
		if ! grep -qw "${sa%=*}" <<<"$have"; then
			log "registering the search attribute ${sa%=*} (${sa#*=})"
			cli operator search-attribute create -n default --name "${sa%=*}" --type "${sa#*=}" >/dev/null || {
				log "registering ${sa%=*} failed"
				return 1
			}
		fi
	done
}

start_server() {
	ensure_temporal_cli
	if pid_alive "$CLUSTER_DIR/temporal.pid"; then
		ensure_namespace
		return
	fi
	if port_open "$CLUSTER_ADDRESS"; then
		log "$CLUSTER_ADDRESS is taken by a process these scripts did not start; set CLUSTER_ADDRESS"
		return 1
	fi
	ensure_postgres
	ensure_server_binaries
	ensure_schema
	write_config
	log "starting the Temporal server $TEMPORAL_SERVER_VERSION on $CLUSTER_ADDRESS (PostgreSQL $PGHOST:$PGPORT/$CLUSTER_DB, log .run/cluster/temporal.log)"
	nohup temporal-server --root "$CLUSTER_DIR" --config config --env toolround --allow-no-auth start \
		>>"$CLUSTER_DIR/temporal.log" 2>&1 &
	echo $! >"$CLUSTER_DIR/temporal.pid"
	local started=$SECONDS
	for _ in $(seq 1 240); do
		if ! pid_alive "$CLUSTER_DIR/temporal.pid"; then
			break
		fi
		if cli operator cluster health >/dev/null 2>&1; then
			ensure_namespace
			log "the server answers after $((SECONDS - started)) s"
			return
		fi
		sleep 0.5
	done
	log "the Temporal server did not come up; see .run/cluster/temporal.log"
	tail -20 "$CLUSTER_DIR/temporal.log" >&2
	return 1
}

# set_workers N: exactly N workers run, numbered 1..N; higher numbers stop.
set_workers() {
	local want=$1 i pid_file
	for pid_file in "$CLUSTER_DIR"/worker-*.pid; do
		[ -e "$pid_file" ] || continue
		i=${pid_file##*/worker-}
		i=${i%.pid}
		if [ "$i" -gt "$want" ]; then
			stop_pid "worker $i" "$pid_file"
		fi
	done
	[ "$want" -gt 0 ] || return 0
	build
	mkdir -p "$CLUSTER_WORKDIR"
	for i in $(seq 1 "$want"); do
		pid_file="$CLUSTER_DIR/worker-$i.pid"
		pid_alive "$pid_file" && continue
		TEMPORAL_ADDRESS="$CLUSTER_ADDRESS" REDIS_URL="$CLUSTER_REDIS_URL" TASK_QUEUE="$CLUSTER_TASK_QUEUE" \
			TOOLS_WORKDIR="$CLUSTER_WORKDIR" nohup "$ROOT/bin/worker" >"$CLUSTER_DIR/worker-$i.log" 2>&1 &
		echo $! >"$pid_file"
	done
	for i in $(seq 1 "$want"); do
		for _ in $(seq 1 120); do
			grep -q "worker started" "$CLUSTER_DIR/worker-$i.log" && break
			pid_alive "$CLUSTER_DIR/worker-$i.pid" || break
			sleep 0.25
		done
		if ! grep -q "worker started" "$CLUSTER_DIR/worker-$i.log"; then
			log "worker $i did not start; see .run/cluster/worker-$i.log"
			tail -20 "$CLUSTER_DIR/worker-$i.log" >&2
			return 1
		fi
	done
}

stop_pid() { # stop_pid NAME PID_FILE
	if pid_alive "$2"; then
		log "stopping $1 (pid $(cat "$2"))"
		kill "$(cat "$2")" 2>/dev/null || true
		wait_gone "$(cat "$2")"
		if kill -0 "$(cat "$2")" 2>/dev/null; then
			kill -9 "$(cat "$2")" 2>/dev/null || true
		fi
	fi
	rm -f "$2"
}

status() {
	local up=0 pid_file
	if pid_alive "$CLUSTER_DIR/temporal.pid"; then
		if cli operator cluster health >/dev/null 2>&1; then
			echo "server   pid $(cat "$CLUSTER_DIR/temporal.pid")  $CLUSTER_ADDRESS  SERVING  (Temporal $TEMPORAL_SERVER_VERSION, PostgreSQL $PGHOST:$PGPORT/$CLUSTER_DB)"
			up=1
		else
			echo "server   pid $(cat "$CLUSTER_DIR/temporal.pid")  $CLUSTER_ADDRESS  not answering"
		fi
	else
		echo "server   stopped"
	fi
	for pid_file in "$CLUSTER_DIR"/worker-*.pid; do
		[ -e "$pid_file" ] || continue
		local name=${pid_file##*/}
		name=${name%.pid}
		if pid_alive "$pid_file"; then
			echo "$name pid $(cat "$pid_file")  task queue $CLUSTER_TASK_QUEUE  workdir $CLUSTER_WORKDIR  redis $CLUSTER_REDIS_URL"
		else
			echo "$name exited (log .run/cluster/$name.log)"
		fi
	done
	[ "$up" = 1 ]
}

case "${1:-status}" in
start)
	start_server
	set_workers "${2:-3}"
	status
	;;
server)
	start_server
	status
	;;
workers)
	set_workers "${2:?workers N}"
	status
	;;
status)
	status
	;;
stop)
	set_workers 0
	stop_pid server "$CLUSTER_DIR/temporal.pid"
	;;
reset)
	set_workers 0
	stop_pid server "$CLUSTER_DIR/temporal.pid"
	for db in "$CLUSTER_DB" "${CLUSTER_DB}_visibility"; do
		if db_exists "$db"; then
			log "dropping the database $db"
			psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -d postgres -qc "DROP DATABASE $db" >/dev/null
		fi
	done
	;;
*)
	sed -n '2,/^source/p' "$0" | sed '$d' >&2
	exit 2
	;;
esac
