#!/usr/bin/env bash
# A Redis Cluster and a Sentinel set on loopback, for the tests of O1
# (cache/ha_test.go, tests/redis_ha_test.go):
#
#   bash scripts/redis-ha.sh cluster   three masters and three replicas on
#                                      REDIS_CLUSTER_PORT..+5 (default 7101),
#                                      made one cluster by redis-cli --cluster create
#   bash scripts/redis-ha.sh sentinel  a master (REDIS_SENTINEL_PORT, default
#                                      7201), its replica (+1) and three sentinels
#                                      (+10..+12) that watch it as "toolround"
#   bash scripts/redis-ha.sh urls      the REDIS_URLs of both, as the tests read them
#   bash scripts/redis-ha.sh status    each node's role and each sentinel's master
#   bash scripts/redis-ha.sh stop      stops every node this script started
#
# Each command starts only what is not running, so a test that killed a
# master runs it again to bring the node back (as a replica, once the others
# have failed over). Nothing is saved to disk but each node's cluster or
# sentinel configuration, under .run/redis-ha.
source "$(dirname "$0")/lib.sh"

CLUSTER_PORT="${REDIS_CLUSTER_PORT:-7101}"
SENTINEL_PORT="${REDIS_SENTINEL_PORT:-7201}"
HA_DIR="${REDIS_HA_DIR:-$RUN_DIR/redis-ha}"
mkdir -p "$HA_DIR"

# start_node PORT [ARGS...]: a redis-server on 127.0.0.1:PORT, unless one
# answers there already.
start_node() {
	local port=$1
	shift
	if port_open "127.0.0.1:$port"; then
		return
	fi
	mkdir -p "$HA_DIR/$port"
	redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no --repl-diskless-sync-delay 0 \
		--dir "$HA_DIR/$port" --logfile "$HA_DIR/$port/redis.log" --pidfile "$HA_DIR/$port/redis.pid" "$@"
	for _ in $(seq 1 40); do
		port_open "127.0.0.1:$port" && return
		sleep 0.25
	done
	log "redis on $port did not come up; see $HA_DIR/$port/redis.log"
	return 1
}

cluster() {
	local ports=() p
	for i in 0 1 2 3 4 5; do
		p=$((CLUSTER_PORT + i))
		ports+=("127.0.0.1:$p")
		start_node "$p" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000
	done
	if ! redis-cli -p "$CLUSTER_PORT" cluster info | grep -q '^cluster_known_nodes:6'; then
		log "creating the Redis Cluster on ${ports[*]}"
		redis-cli --cluster create "${ports[@]}" --cluster-replicas 1 --cluster-yes >"$HA_DIR/create.log"
	fi
	for _ in $(seq 1 80); do
		if redis-cli -p "$CLUSTER_PORT" cluster info | grep -q '^cluster_state:ok' &&
			[ "$(redis-cli -p "$CLUSTER_PORT" cluster nodes | grep -c 'slave')" = 3 ] &&
			[ "$(for i in 0 1 2 3 4 5; do synced $((CLUSTER_PORT + i)); done | grep -c yes)" = 3 ]; then
			return
		fi
		sleep 0.25
	done
	log "the Redis Cluster is not ok; see $HA_DIR/*/redis.log"
	return 1
}

sentinel() {
	local now p
	# After a failover the old master comes back as the new one's replica.
	now=$(current_master)
	now=${now:-$SENTINEL_PORT}
	for p in "$SENTINEL_PORT" $((SENTINEL_PORT + 1)); do
		if [ "$p" = "$now" ]; then
			start_node "$p"
		else
			start_node "$p" --replicaof 127.0.0.1 "$now"
		fi
	done
	for i in 10 11 12; do
		local p=$((SENTINEL_PORT + i)) conf="$HA_DIR/sentinel-$((SENTINEL_PORT + i)).conf"
		if port_open "127.0.0.1:$p"; then
			continue
		fi
		if [ ! -f "$conf" ]; then
			cat >"$conf" <<CONF
port $p
bind 127.0.0.1
sentinel monitor toolround 127.0.0.1 $SENTINEL_PORT 2
sentinel down-after-milliseconds toolround 1000
sentinel failover-timeout toolround 5000
sentinel parallel-syncs toolround 1
CONF
		fi
		mkdir -p "$HA_DIR/$p"
		redis-server "$conf" --sentinel --daemonize yes --dir "$HA_DIR/$p" \
			--logfile "$HA_DIR/$p/sentinel.log" --pidfile "$HA_DIR/$p/sentinel.pid"
	done
	for _ in $(seq 1 80); do
		now=$(current_master)
		if [ -n "$now" ] && [ "$(synced "$now")" = yes ]; then
			return
		fi
		sleep 0.25
	done
	log "the Sentinel set has no master with its replica; see $HA_DIR/*/*.log"
	return 1
}

# synced PORT prints yes when the node there is a master whose replica is
# online (its first sync done), so that WAIT 1 can be answered.
synced() {
	local info
	info=$(redis-cli -p "$1" info replication 2>/dev/null | tr -d '\r')
	if grep -q '^role:master' <<<"$info" && grep -q '^slave0:.*state=online' <<<"$info"; then
		echo yes
	fi
}

# current_master is the port of the master the sentinels name, if any.
current_master() {
	local p
	for i in 10 11 12; do
		p=$((SENTINEL_PORT + i))
		if port_open "127.0.0.1:$p"; then
			redis-cli -p "$p" sentinel get-master-addr-by-name toolround 2>/dev/null | sed -n 2p
			return
		fi
	done
}

# status prints what each node and sentinel says of its role, for a test
# that failed.
status() {
	local p
	for p in $(seq "$CLUSTER_PORT" $((CLUSTER_PORT + 5))) "$SENTINEL_PORT" $((SENTINEL_PORT + 1)); do
		port_open "127.0.0.1:$p" && echo "$p: $(redis-cli -p "$p" role 2>&1 | head -3 | tr '\n' ' ')"
	done
	for p in $((SENTINEL_PORT + 10)) $((SENTINEL_PORT + 11)) $((SENTINEL_PORT + 12)); do
		port_open "127.0.0.1:$p" && echo "sentinel $p: master $(redis-cli -p "$p" sentinel get-master-addr-by-name toolround 2>&1 | tr '\n' ' ')"
	done
	return 0
}

urls() {
	echo "REDIS_CLUSTER_URL=redis://127.0.0.1:$CLUSTER_PORT?addr=127.0.0.1:$((CLUSTER_PORT + 1))&addr=127.0.0.1:$((CLUSTER_PORT + 2))&cluster=1"
	echo "REDIS_SENTINEL_URL=redis://127.0.0.1:$((SENTINEL_PORT + 10))/0?master_name=toolround&addr=127.0.0.1:$((SENTINEL_PORT + 11))&addr=127.0.0.1:$((SENTINEL_PORT + 12))"
}

stop() {
	local f pid
	local pids=()
	for f in "$HA_DIR"/*/*.pid; do
		[ -f "$f" ] || continue
		pids+=("$(cat "$f")")
		kill "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	# Gone before this returns, so that a set started next on the same
	# ports finds them free.
	for pid in "${pids[@]}"; do
		wait_gone "$pid"
	done
}

case "${1:-}" in
cluster) cluster ;;
sentinel) sentinel ;;
urls) urls ;;
status) status ;;
stop) stop ;;
*)
	echo "usage: $0 cluster|sentinel|urls|status|stop" >&2
	exit 2
	;;
esac
