#!/usr/bin/env bash
# `make bench`: latency, throughput, history size and worker memory of rounds
# against a real Temporal server and Redis (started here when they are not
# running). Arguments go to the benchmark (go run ./cmd/bench -h lists them);
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
#   rps20          (PORT_BASE+3)  temporal_base_flags and history.transferProcessorMaxPollRPS=20
#   rps100         (PORT_BASE+4)  ... 100
#   rps200         (PORT_BASE+5)  ... 200
#   rps1000        (PORT_BASE+6)  ... 1000 (also called pollrps)
# BENCH_PORT_BASE defaults to 7297.
#
# Beside the built-ins' 10-call round (noop10) the benchmark runs 10 calls
# of a user's read-only tool (SPEC Y) in one round, served by a Python tool
# worker (`python -m toolround.tools serve`; case pytool10) and by a Go one
# (the toolworker package; gotool10). It starts both tool workers itself, on
# queues of their own that the worker runs (TOOL_QUEUES, trusted), and
# prints their p50 and p99 over noop10's of the same run
# (ratio_p50_10pytool_vs_10tools, ...). The Python interpreter is
# BENCH_PYTHON, else TOOLROUND_PYTHON, else the one `make run` uses.
#
# BENCH_IDLE_CPU=1 measures instead the idle CPU of the dev server per
# setting: for each of BENCH_IDLE_SETTINGS (default rps20,rps100,rps200,
# rps1000,rps1000all, the names of server_setting_flags) a fresh private dev
# server on PORT_BASE+10, left alone BENCH_IDLE_SETTLE seconds (10) and then
# measured over BENCH_IDLE_SECONDS (60): CPU seconds (utime+stime of
# /proc/PID/stat) per second, and its VmRSS. The table goes to stdout and
# to BENCH_OUT/idlecpu.txt (default bench/results/idlecpu). With
# BENCH_IDLE_WORKER=1 an idle ./cmd/worker polls each server, as under `make run`.
#
# BENCH_LONG=1 runs instead `go run ./cmd/bench long` against TEMPORAL_ADDRESS:
# one round of 500 calls (read-only, then at-most-once) and one round whose
# approval waits BENCH_APPROVAL_WAIT (30m); `go run ./cmd/bench long -h` lists
# the settings; it writes bench/results/long/long.{txt,json}.
#
# BENCH_SOAK=1 runs instead `go run ./cmd/bench soak` against TEMPORAL_ADDRESS
# (SPEC L2, docs/benchmarks/soak.md): one agent run of 10,000 tool calls,
# 20 a round (every fourth at-most-once, the others read-only), max_rounds
# 600, against a scripted model this process serves on loopback (the
# worker's LLM_BASE_URL), with the worker process killed (SIGKILL) and
# started again each time another 1,000 calls have run. The tools report
# every execution to a recorder in this process, by key and operation id.
# It prints calls, rounds, continues-as-new, history events and bytes per
# call and the worker's VmRSS, writes bench/results/soak/soak.{txt,json},
# and exits non-zero unless duplicates = 0, lost = 0, every unknown_outcome
# is justified (an at-most-once call whose round was open at a kill), no
# execution's history passes 10,000 events or 10 MiB, and the last worker's
# VmRSS at the end is within 1.5x the first's after 1,000 calls. It deletes
# the run's workflows from the server once read (about 800 MB of history;
# BENCH_SOAK_KEEP=1 keeps them). `go run ./cmd/bench soak -h` lists the
# settings (BENCH_SOAK_CALLS, ...).
#
# BENCH_CLUSTER=1 measures instead the throughput of one task queue served by
# 1, 2 and 4 worker processes (BENCH_WORKERS) against scripts/cluster.sh's
# Temporal server on PostgreSQL, started here when it is not running
# (`go run ./cmd/bench scaling -h` lists the settings; docs/benchmarks/scaling.md).
source "$(dirname "$0")/lib.sh"

# server_setting_flags NAME: the flags of a named dev server setting.
server_setting_flags() {
	case $1 in
	default) temporal_dev_flags ;;
	rps[0-9]*all)
		local rps=${1#rps}
		rps=${rps%all}
		temporal_base_flags
		echo --dynamic-config-value "history.transferProcessorMaxPollRPS=$rps" \
			--dynamic-config-value "history.timerProcessorMaxPollRPS=$rps" \
			--dynamic-config-value "history.visibilityProcessorMaxPollRPS=$rps"
		;;
	rps[0-9]*)
		temporal_base_flags
		echo --dynamic-config-value "history.transferProcessorMaxPollRPS=${1#rps}"
		;;
	*)
		log "no server setting '$1'"
		return 1
		;;
	esac
}

# cpu_ticks PID: utime+stime of a process, in clock ticks.
cpu_ticks() {
	sed -E 's/^.*\) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# rss_mib PID: the process's VmRSS in MiB.
rss_mib() {
	awk '/^VmRSS:/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"
}

if [ "${BENCH_IDLE_CPU:-0}" = 1 ]; then
	ensure_temporal_cli
	out=${BENCH_OUT:-$ROOT/bench/results/idlecpu}
	mkdir -p "$out"
	port=$((${BENCH_PORT_BASE:-7297} + 10))
	settle=${BENCH_IDLE_SETTLE:-10}
	secs=${BENCH_IDLE_SECONDS:-60}
	hz=$(getconf CLK_TCK)
	with_worker=${BENCH_IDLE_WORKER:-0}
	if [ "$with_worker" = 1 ]; then
		log "building the worker for the idle measurement"
		go build -o "$RUN_DIR/idle-worker" ./cmd/worker
	fi
	private_pids=()
	trap 'for p in "${private_pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
	{
		echo "Idle CPU of a fresh dev server (no workflows) per setting: $(date -u +%Y-%m-%dT%H:%M:%SZ), $secs s after $settle s, $(nproc) CPUs"
		echo
		if [ "$with_worker" = 1 ]; then
			echo "With one idle worker (./cmd/worker) polling each server."
			echo
		fi
		echo "| setting | flags beyond eager dispatch and one partition | CPU s per s | % of one CPU | VmRSS MiB | worker CPU s per s | load average at start |"
		echo "|---|---|---:|---:|---:|---:|---|"
	} | tee "$out/idlecpu.txt"
	for name in $(echo "${BENCH_IDLE_SETTINGS:-rps20,rps100,rps200,rps1000,rps1000all}" | tr ',' ' '); do
		flags=$(server_setting_flags "$name")
		if port_open "127.0.0.1:$port"; then
			log "port $port is taken; set BENCH_PORT_BASE to free ports"
			exit 1
		fi
		log "idle cpu: starting a private dev server '$name' on 127.0.0.1:$port"
		# shellcheck disable=SC2086
		nohup temporal server start-dev --headless --ip 127.0.0.1 --port "$port" --log-level warn $(temporal_search_attribute_flags) $flags \
			>"$RUN_DIR/bench-idle-$name.log" 2>&1 &
		pid=$!
		private_pids=("$pid")
		for _ in $(seq 1 120); do
			temporal operator namespace describe --address "127.0.0.1:$port" -n default >/dev/null 2>&1 && break
			sleep 0.5
		done
		wpid=""
		if [ "$with_worker" = 1 ]; then
			TEMPORAL_ADDRESS="127.0.0.1:$port" TASK_QUEUE="idle-$name" TOOLS_WORKDIR="$(mktemp -d)" \
				nohup "$RUN_DIR/idle-worker" >"$RUN_DIR/bench-idle-$name-worker.log" 2>&1 &
			wpid=$!
			private_pids+=("$wpid")
		fi
		sleep "$settle"
		load=$(cut -d' ' -f1-3 /proc/loadavg)
		t0=$(cpu_ticks "$pid")
		w0=0
		[ -n "$wpid" ] && w0=$(cpu_ticks "$wpid")
		s0=$(date +%s.%N)
		sleep "$secs"
		t1=$(cpu_ticks "$pid")
		w1=0
		[ -n "$wpid" ] && w1=$(cpu_ticks "$wpid")
		s1=$(date +%s.%N)
		rss=$(rss_mib "$pid")
		if [ -n "$wpid" ]; then
			kill "$wpid"
			wait_gone "$wpid"
		fi
		kill "$pid"
		wait_gone "$pid"
		extra=$(echo "$flags" | tr ' ' '\n' | grep -v -e enableActivityEagerExecution -e numTaskqueue -e '^--' | sed 's/^history\.//' | paste -sd ' ' -)
		awk -v n="$name" -v f="$extra" -v t0="$t0" -v t1="$t1" -v w0="$w0" -v w1="$w1" -v s0="$s0" -v s1="$s1" -v hz="$hz" -v rss="$rss" -v la="$load" -v ww="$with_worker" \
			'BEGIN { c = (t1 - t0) / hz / (s1 - s0); w = ww == 1 ? sprintf("%.4f", (w1 - w0) / hz / (s1 - s0)) : "-";
				printf "| %s | %s | %.4f | %.1f | %s | %s | %s |\n", n, f, c, c * 100, rss, w, la }' | tee -a "$out/idlecpu.txt"
	done
	exit 0
fi

ensure_redis
if [ "${BENCH_CLUSTER:-0}" = 1 ]; then
	bash "$ROOT/scripts/cluster.sh" server >&2
	cd "$ROOT"
	log "go run ./cmd/bench scaling $*"
	TEMPORAL_ADDRESS="${CLUSTER_ADDRESS:-127.0.0.1:7333}" REDIS_URL="${CLUSTER_REDIS_URL:-redis://127.0.0.1:6379/5}" \
		BENCH_SERVER_PID="$(cat "$RUN_DIR/cluster/temporal.pid")" exec go run ./cmd/bench scaling "$@"
fi
ensure_temporal_server
ensure_search_attributes
cd "$ROOT"
if [ "${BENCH_LONG:-0}" = 1 ]; then
	log "go run ./cmd/bench long $*"
	exec go run ./cmd/bench long "$@"
fi
if [ "${BENCH_SOAK:-0}" = 1 ]; then
	log "go run ./cmd/bench soak $*"
	exec go run ./cmd/bench soak "$@"
fi

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
# The CPU time of the dev server per round goes into the throughput lines
# when the server is the one the scripts started.
if [ -z "${BENCH_SERVER_PID:-}" ] && [ -f "$RUN_DIR/temporal.pid" ] && kill -0 "$(cat "$RUN_DIR/temporal.pid")" 2>/dev/null; then
	BENCH_SERVER_PID="$(cat "$RUN_DIR/temporal.pid")"
	export BENCH_SERVER_PID
fi
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
	export BENCH_SERVER_PID="${private_pids[-1]}"
	if wanted fourpartitions; then
		# shellcheck disable=SC2086
		start_private_server fourpartitions "$base" $eager
		args+=(-compare "fourpartitions:TEMPORAL_ADDRESS=127.0.0.1:$base,BENCH_SERVER_PID=${private_pids[-1]}")
	fi
	if wanted noeager; then
		# shellcheck disable=SC2086
		start_private_server noeager "$((base + 2))" $one
		args+=(-compare "noeager:TEMPORAL_ADDRESS=127.0.0.1:$((base + 2)),BENCH_SERVER_PID=${private_pids[-1]}")
	fi
	for i in 3 4 5 6; do
		rps=$(((i == 3) * 20 + (i == 4) * 100 + (i == 5) * 200 + (i == 6) * 1000))
		if wanted "rps$rps" || { [ "$rps" = 1000 ] && wanted pollrps; }; then
			# shellcheck disable=SC2046
			start_private_server "rps$rps" "$((base + i))" $(server_setting_flags "rps$rps")
			args+=(-compare "rps$rps:TEMPORAL_ADDRESS=127.0.0.1:$((base + i)),BENCH_SERVER_PID=${private_pids[-1]}")
		fi
	done
fi

# The user-tool cases' Python tool worker runs on BENCH_PYTHON, else
# TOOLROUND_PYTHON, else the virtualenv `make run` serves its Python tools
# with (installed here when missing); without one the Python case is left
# out, with a line saying so.
if [ -z "${BENCH_PYTHON:-}" ] && [ -z "${TOOLROUND_PYTHON:-}" ] && ensure_python_tool_worker; then
	export BENCH_PYTHON="$PYTHON_TOOL_WORKER"
fi
log "go run ./cmd/bench ${args[*]} $*"
go run ./cmd/bench "${args[@]}" "$@"
