#!/usr/bin/env bash
# The scheduler worker's own CPU, read from /proc/PID/schedstat (the time it
# ran, in ns; /proc/PID/stat counts in 10 ms ticks, too coarse for a doze),
# and how often it woke (voluntary context switches, /proc/PID/status):
#   1. per rebalancing pass, with CONNECTIONS connected backends: passes every
#      10 ms for 10 s, CPU divided by passes (discovery scans included);
#   2. its share of one core at the default interval (1 s) over SECONDS;
#   3. busy: three backends spinning on the two one-CPU groups for 10 s, so
#      that work waits all along and lending ticks at its fastest.
#
#     bash bench/scheduler_cost.sh [CONNECTIONS] [SECONDS] [MAX_CONNECTIONS]
#
# MAX_CONNECTIONS (default CONNECTIONS + 10) sizes the slots the scheduler
# looks at: "0 30 10000" is an idle server with 10,000 slots.
set -euo pipefail

connections=${1:-100}
seconds=${2:-60}
max_connections=${3:-$((connections + 10))}
. "$(dirname "${BASH_SOURCE[0]}")/throwaway_cluster.sh"
on_cleanup 'pkill -f numasched_cost_sleeper'

# one group per CPU, each its own CPUs (strict), so that lending is in use
init_cluster "max_connections = $max_connections" "numasched.groups_per_node = 2" "numasched.group_binding = strict"
start_cluster
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
ran_ns() { awk '{ print $1 }' "/proc/$scheduler/schedstat"; }
wakes() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$scheduler/status"; }

measure() {
	local interval=$1 duration=$2
	psql_ "ALTER SYSTEM SET numasched.rebalance_interval = '$interval'" >/dev/null
	psql_ "SELECT pg_reload_conf()" >/dev/null
	sleep 1
	local t0 p0 w0 t1 p1 w1 s0 s1
	# the passes over the window, from the counter read around it: reading
	# it is a statement, which would wake a dozing scheduler in the window
	s0=$(date +%s.%N)
	p0=$(psql_ "SELECT passes FROM numasched_stats")
	sleep 2
	t0=$(ran_ns)
	w0=$(wakes)
	sleep "$duration"
	t1=$(ran_ns)
	w1=$(wakes)
	p1=$(psql_ "SELECT passes FROM numasched_stats")
	s1=$(date +%s.%N)
	python3 -c "
ns, wakes, secs = $t1 - $t0, $w1 - $w0, $duration
passes = ($p1 - $p0) * secs / ($s1 - $s0)
cpu = ns / 1e9
print('interval $interval: %.0f passes and %d wakes in %d s, scheduler CPU %.4f s = %.3f%% of one core, %.3f ms per pass' % (
    passes, wakes, secs, cpu, 100 * cpu / secs, 1000 * cpu / max(passes, 1)))"
}

measure 10ms 10
measure 1s "$seconds"

# busy: more spinning backends than CPUs, lending hot
for _ in 1 2 3; do
	as_pg "$bindir/psql" -X -q -h "$work" -p "$port" -d postgres -c \
		"DO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '14 s' LOOP END LOOP; END \$\$" \
		>/dev/null 2>&1 &
done
sleep 2
t0=$(ran_ns)
w0=$(wakes)
l0=$(psql_ "SELECT lends FROM numasched_stats")
sleep 10
t1=$(ran_ns)
w1=$(wakes)
l1=$(psql_ "SELECT lends FROM numasched_stats")
python3 -c "
cpu = ($t1 - $t0) / 1e9
print('busy (3 spinning backends on 2 one-CPU groups): %d wakes in 10 s, %d lends, scheduler CPU %.4f s = %.3f%% of one core' % (
    $w1 - $w0, $l1 - $l0, cpu, 10 * cpu))"
