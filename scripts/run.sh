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
start_worker
start_console
log "running the example rounds (examples/demo)"
cd "$ROOT" && go run ./examples/demo
log "the worker keeps running (pid $(cat "$RUN_DIR/worker.pid")); try: bin/starter round examples/round.json"
log "$(grep -m1 "console listening" "$RUN_DIR/console.log") (pid $(cat "$RUN_DIR/console.pid"))"
if port_open "${TEMPORAL_ADDRESS%:*}:$TEMPORAL_UI_PORT"; then
	log "Temporal Web UI: $(temporal_ui_url)/namespaces/${TEMPORAL_NAMESPACE:-default}/workflows"
else
	log "no Temporal Web UI at $(temporal_ui_url) (the server on $TEMPORAL_ADDRESS was started without it, or on another UI port: set TEMPORAL_UI_PORT)"
fi
if [ -n "${METRICS_ADDR:-}" ]; then
	log "worker metrics: http://$METRICS_ADDR/metrics"
fi
