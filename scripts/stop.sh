#!/usr/bin/env bash
# Stops what the scripts started: the console, the demo's tool worker, the
# worker, the dev server, Redis and scripts/redis-ha.sh's Redis Cluster and
# Sentinel set (only when these scripts started them).
source "$(dirname "$0")/lib.sh"
for name in console toolworker worker temporal redis; do
	pid_file="$RUN_DIR/$name.pid"
	if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
		log "stopping $name"
		kill "$(cat "$pid_file")" || true
		wait_gone "$(cat "$pid_file")"
	fi
	rm -f "$pid_file"
done
if [ -d "$RUN_DIR/redis-ha" ]; then
	log "stopping the Redis Cluster and Sentinel set"
	bash "$(dirname "$0")/redis-ha.sh" stop
fi
