#!/usr/bin/env bash
# The scheduler worker's own CPU, read from /proc/PID/stat (utime + stime):
#   1. per rebalancing pass, with CONNECTIONS connected backends: passes every
#      10 ms for 10 s, CPU divided by passes (discovery scans included);
#   2. its share of one core at the default interval (1 s) over SECONDS.
#
#     bash bench/scheduler_cost.sh [CONNECTIONS] [SECONDS]
set -euo pipefail

connections=${1:-100}
seconds=${2:-60}
bindir=$(pg_config --bindir)
work=$(mktemp -d /tmp/numasched-schedcost-XXXXXX)
chown postgres: "$work" 2>/dev/null || true
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
port=$((20000 + RANDOM % 20000))
cleanup() {
	pkill -f "numasched_cost_sleeper" 2>/dev/null || true
	as_pg "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

as_pg "$bindir/initdb" -D "$work/data" -A trust >/dev/null
cat >> "$work/data/postgresql.conf" <<CONF
shared_preload_libraries = 'numasched'
port = $port
unix_socket_directories = '$work'
listen_addresses = ''
max_connections = $((connections + 10))
numasched.groups_per_node = 2
CONF
as_pg "$bindir/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null
psql_() { as_pg "$bindir/psql" -X -A -t -h "$work" -p "$port" -d postgres -c "$1"; }
psql_ "CREATE EXTENSION numasched" >/dev/null

for _ in $(seq 1 "$connections"); do
	as_pg "$bindir/psql" -X -q -h "$work" -p "$port" -d postgres \
		-c "SELECT 'numasched_cost_sleeper', pg_sleep($seconds + 60)" >/dev/null 2>&1 &
done
for _ in $(seq 1 60); do
	[ "$(psql_ "SELECT count(*) FROM numasched_processes")" -ge "$connections" ] && break
	sleep 1
done
echo "placed processes: $(psql_ "SELECT count(*) FROM numasched_processes")"

scheduler=$(psql_ "SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'")
ticks() { awk '{ print $14 + $15 }' "/proc/$scheduler/stat"; }
hz=$(getconf CLK_TCK)

measure() {
	local interval=$1 duration=$2
	psql_ "ALTER SYSTEM SET numasched.rebalance_interval = '$interval'" >/dev/null
	psql_ "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	local t0 p0 t1 p1
	t0=$(ticks)
	p0=$(psql_ "SELECT passes FROM numasched_stats")
	sleep "$duration"
	t1=$(ticks)
	p1=$(psql_ "SELECT passes FROM numasched_stats")
	python3 -c "
ticks, passes, hz, secs = $t1 - $t0, $p1 - $p0, $hz, $duration
cpu = ticks / hz
print('interval $interval: %d passes in %d s, scheduler CPU %.2f s = %.3f%% of one core, %.3f ms per pass' % (
    passes, secs, cpu, 100 * cpu / secs, 1000 * cpu / max(passes, 1)))"
}

measure 10ms 10
measure 1s "$seconds"
