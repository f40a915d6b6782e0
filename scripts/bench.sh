#!/usr/bin/env bash
# `make bench`: latency, throughput, history size and worker memory of rounds
# against a real Temporal server and Redis (started here when they are not
# running). Arguments go to the benchmark (go run ./bench -h lists them);
# TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE point it at another cluster.
#
# BENCH_SERVER_COMPARE=all (or a comma-separated list of the names below)
# starts private in-memory dev servers, each with one setting changed, and
# measures them in the same run instead of TEMPORAL_ADDRESS; it stops them
# afterwards:
#   onepartition   (PORT_BASE+1)  the flags of temporal_dev_flags (what `make run` uses);
#                                 always started, the base the others are compared with
#   fourpartitions (PORT_BASE)    eager activities, default task-queue partitions
#   noeager        (PORT_BASE+2)  one partition, no eager activity dispatch
#   pollrps        (PORT_BASE+3)  temporal_dev_flags and history.transferProcessorMaxPollRPS=1000
# BENCH_PORT_BASE defaults to 7297.
#
# BENCH_CLUSTER=1 measures instead the throughput of one task queue served by
# 1, 2 and 4 worker processes (BENCH_WORKERS) against scripts/cluster.sh's
# Temporal server on PostgreSQL, started here when it is not running
# (`go run ./bench scaling -h` lists the settings; BENCHMARKS.md, "Scaling
# out").
source "$(dirname "$0")/lib.sh"

ensure_redis
if [ "${BENCH_CLUSTER:-0}" = 1 ]; then
	bash "$ROOT/scripts/cluster.sh" server >&2
	cd "$ROOT"
	log "go run ./bench scaling $*"
	TEMPORAL_ADDRESS="${CLUSTER_ADDRESS:-127.0.0.1:7333}" REDIS_URL="${CLUSTER_REDIS_URL:-redis://127.0.0.1:6379/5}" \
		BENCH_SERVER_PID="$(cat "$RUN_DIR/cluster/temporal.pid")" exec go run ./bench scaling "$@"
fi
ensure_temporal_server
ensure_search_attributes
cd "$ROOT"

private_pids=()
stop_private_servers() {
	for pid in "${private_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${private_pids[@]}"; do
		wait_gone "$pid"
	done
}

# start_private_server NAME PORT FLAGS...: an in-memory dev server for one
# comparison run; its log is .run/bench-NAME.log.
start_private_server() {
	local name=$1 port=$2
	shift 2
	if port_open "127.0.0.1:$port"; then
		log "port $port is taken; set BENCH_PORT_BASE to free ports"
		return 1
	fi
	ensure_temporal_cli
	log "starting a private dev server '$name' on 127.0.0.1:$port"
	nohup temporal server start-dev --headless --ip 127.0.0.1 --port "$port" --log-level warn $(temporal_search_attribute_flags) "$@" \
		>"$RUN_DIR/bench-$name.log" 2>&1 &
	private_pids+=("$!")
	for _ in $(seq 1 120); do
		if temporal operator namespace describe --address "127.0.0.1:$port" -n default >/dev/null 2>&1; then
			return
		fi
		sleep 0.5
	done
	log "the dev server '$name' did not come up; see .run/bench-$name.log"
	return 1
}

# wanted NAME: whether BENCH_SERVER_COMPARE asks for the server NAME.
wanted() {
	case ",${BENCH_SERVER_COMPARE}," in
	*,1,* | *,all,* | *,"$1",*) return 0 ;;
	esac
	return 1
}

args=()
# BENCH_TELEMETRY=1 adds a setup with metrics (METRICS_ADDR) and traces
# (OTLP to the benchmark's own receiver) on; the main setup has both off.
if [ "${BENCH_TELEMETRY:-0}" = 1 ]; then
	args+=(-compare "telemetry:METRICS_ADDR=127.0.0.1:0,OTEL_EXPORTER_OTLP_ENDPOINT=sink")
fi
if [ -n "${BENCH_SERVER_COMPARE:-}" ]; then
	trap stop_private_servers EXIT
	base=${BENCH_PORT_BASE:-7297}
	eager="--dynamic-config-value system.enableActivityEagerExecution=true"
	one="--dynamic-config-value matching.numTaskqueueReadPartitions=1 --dynamic-config-value matching.numTaskqueueWritePartitions=1"
	# shellcheck disable=SC2046
	start_private_server onepartition "$((base + 1))" $(temporal_dev_flags)
	args+=(-address "127.0.0.1:$((base + 1))" -label onepartition)
	if wanted fourpartitions; then
		# shellcheck disable=SC2086
		start_private_server fourpartitions "$base" $eager
		args+=(-compare "fourpartitions:TEMPORAL_ADDRESS=127.0.0.1:$base")
	fi
	if wanted noeager; then
		# shellcheck disable=SC2086
		start_private_server noeager "$((base + 2))" $one
		args+=(-compare "noeager:TEMPORAL_ADDRESS=127.0.0.1:$((base + 2))")
	fi
	if wanted pollrps; then
		# shellcheck disable=SC2046
		start_private_server pollrps "$((base + 3))" $(temporal_dev_flags) \
			--dynamic-config-value history.transferProcessorMaxPollRPS=1000
		args+=(-compare "pollrps:TEMPORAL_ADDRESS=127.0.0.1:$((base + 3))")
	fi
fi

log "go run ./bench ${args[*]} $*"
go run ./bench "${args[@]}" "$@"
