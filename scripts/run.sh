#!/usr/bin/env bash
# The main job: install what is missing, start the Temporal dev server and
# Redis if they are not running, start a worker and run the example rounds.
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
