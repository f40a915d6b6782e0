#!/usr/bin/env bash
# The main job: install what is missing, start the Temporal dev server and
# Redis if they are not running (the dev server with its Web UI), start a
# worker, run the example rounds and print where the UI is.
source "$(dirname "$0")/lib.sh"

ensure_redis
ensure_bubblewrap
ensure_temporal_server
ensure_search_attributes
build
# A tool worker of one's own: examples/python/orders.py's tools, served from
# Python on the task queue demo-orders, which the worker runs (TOOL_QUEUES;
# trusted, so its read-only tool runs without asking); the demo calls one.
if [ -z "${TOOL_QUEUES:-}" ] && ensure_python_tool_worker; then
	export DEMO_TOOL_QUEUE=demo-orders
	export TOOL_QUEUES="$DEMO_TOOL_QUEUE:trusted"
fi
# Each session's file and command tools act in a folder of its own,
# TOOLS_WORKDIR/sessions/<session_id>, as for agents that share a worker.
# It needs the bubblewrap sandbox: where that does not work, the worker
# refuses it, and the example runs in the shared workdir instead.
given=${WORKSPACE:+yes}
export WORKSPACE="${WORKSPACE:=session}"
if ! start_worker; then
	if [ -n "$given" ] || [ "$WORKSPACE" != session ] || ! grep -q "WORKSPACE=session keeps" "$RUN_DIR/worker.log"; then
		exit 1
	fi
	log "no working bubblewrap sandbox here, so no workspace per session: the worker starts with WORKSPACE=shared"
	export WORKSPACE=shared
	start_worker
fi
start_console
if [ -n "${DEMO_TOOL_QUEUE:-}" ]; then
	start_tool_worker "$ROOT/examples/python/orders.py" "$DEMO_TOOL_QUEUE"
fi
log "running the example rounds (examples/demo)"
cd "$ROOT" && go run ./examples/demo
log "the worker keeps running (pid $(cat "$RUN_DIR/worker.pid")); try: bin/starter round examples/round.json"
if [ -n "${DEMO_TOOL_QUEUE:-}" ]; then
	log "the Python tool worker keeps serving examples/python/orders.py (pid $(cat "$RUN_DIR/toolworker.pid")); bin/starter tools --worker lists its tools"
fi
if [ "$WORKSPACE" = session ]; then
	log "each session's files are in $TOOLS_WORKDIR/sessions/<session_id>; TOOLS_WORKDIR=$TOOLS_WORKDIR bin/starter workspace ls lists them"
fi
log "$(grep -m1 "console listening" "$RUN_DIR/console.log") (pid $(cat "$RUN_DIR/console.pid"))"
if grep -q "console sign-in link" "$RUN_DIR/console.log"; then
	log "open the console, signed in: $(grep -m1 -o "http[^ ]*/signin#[0-9a-f]*" "$RUN_DIR/console.log") (the link works once, for an hour)"
fi
if port_open "${TEMPORAL_ADDRESS%:*}:$TEMPORAL_UI_PORT"; then
	log "Temporal Web UI: $(temporal_ui_url)/namespaces/${TEMPORAL_NAMESPACE:-default}/workflows"
else
	log "no Temporal Web UI at $(temporal_ui_url) (the server on $TEMPORAL_ADDRESS was started without it, or on another UI port: set TEMPORAL_UI_PORT)"
fi
if [ -n "${METRICS_ADDR:-}" ]; then
	log "worker metrics: http://$METRICS_ADDR/metrics"
fi
