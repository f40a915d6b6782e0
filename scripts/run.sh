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
log "running the example rounds (examples/demo)"
cd "$ROOT" && go run ./examples/demo
log "the worker keeps running (pid $(cat "$RUN_DIR/worker.pid")); try: bin/starter round examples/round.json"
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
