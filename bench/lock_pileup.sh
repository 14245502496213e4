#!/usr/bin/env bash
# What numasched's inversion guard costs the lock manager during a pile-up:
# a session of a role at numasched.cpu_priority = background holds a row
# lock in an open transaction, and WAITERS (default 50) normal sessions
# queue to update that row; meanwhile pgbench takes and releases
# transaction-level advisory locks (2 clients), each a lock-manager
# partition lock taken exclusively, as fast as it goes.  The cluster is
# started with numasched preloaded and without it, in interleaved pairs;
# per pair, the advisory-lock tps and the CPU time of the numasched
# scheduler (which looks at the lock table while normal work waits beside
# background work); then the median ratio loaded/not loaded with its
# bootstrap 95% CI.
#
#     bash bench/lock_pileup.sh [PAIRS] [SECONDS] [WAITERS]
set -Eeuo pipefail

pairs=${1:-8}
seconds=${2:-5}
waiters=${3:-50}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/throwaway_cluster.sh"

sessions=()
# shellcheck disable=SC2016
on_cleanup '[ ${#sessions[@]} -eq 0 ] || kill "${sessions[@]}" 2>/dev/null'

init_cluster "max_connections = $((waiters + 20))"
printf '\\set k random(1, 1000000)\nSELECT pg_advisory_xact_lock(:k);\n' >"$work/advisory.sql"
chown postgres: "$work/advisory.sql"

start_with() {
	sed -i '/^shared_preload_libraries/d' "$work/data/postgresql.conf"
	echo "shared_preload_libraries = $1" >>"$work/data/postgresql.conf"
	start_cluster
}

psql_as() { as_pg "$bindir/psql" -X -A -t -q -h "$work" -p "$port" -U "$1" -d postgres -c "$2"; }

# The holder and its queue; returns once every waiter waits.
pile_up() {
	psql_as reporting "BEGIN; UPDATE pileup SET v = v + 1 WHERE id = 1; SELECT pg_sleep(3600)" >/dev/null 2>&1 &
	sessions+=($!)
	sleep 0.5
	for _ in $(seq 1 "$waiters"); do
		psql_as oltp "UPDATE pileup SET v = v + 1 WHERE id = 1" >/dev/null 2>&1 &
		sessions+=($!)
	done
	for _ in $(seq 1 100); do
		[ "$(psql_ "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")" -ge "$waiters" ] && return
		sleep 0.1
	done
	echo "lock_pileup.sh: the waiters did not queue" >&2
	exit 1
}

# CPU time of the numasched scheduler so far, in clock ticks (0 when not loaded)
scheduler_ticks() {
	local pid
	pid=$(psql_ "SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'")
	[ -n "$pid" ] && awk '{ print $14 + $15 }' "/proc/$pid/stat" || echo 0
}

# advisory-lock tps, and the scheduler's CPU share (%) meanwhile
measure() {
	local before after tps
	pile_up
	as_pg "$bindir/pgbench" -h "$work" -p "$port" -U oltp -n -c 2 -j 2 -T 2 -f "$work/advisory.sql" postgres >/dev/null 2>&1
	before=$(scheduler_ticks)
	tps=$(as_pg "$bindir/pgbench" -h "$work" -p "$port" -U oltp -n -c 2 -j 2 -T "$seconds" -f "$work/advisory.sql" postgres 2>/dev/null |
		awk '/^tps/ { print $3; exit }')
	after=$(scheduler_ticks)
	kill "${sessions[@]}" 2>/dev/null || true
	wait "${sessions[@]}" 2>/dev/null || true
	sessions=()
	echo "$tps $(awk -v a="$after" -v b="$before" -v hz="$(getconf CLK_TCK)" -v s="$seconds" \
		'BEGIN { printf "%.1f", (a - b) * 100 / hz / s }')"
}

start_with numasched
psql_ "CREATE ROLE reporting LOGIN; CREATE ROLE oltp LOGIN;
	ALTER ROLE reporting SET numasched.cpu_priority = background;
	CREATE TABLE pileup (id int PRIMARY KEY, v int); INSERT INTO pileup VALUES (1, 0);
	GRANT ALL ON pileup TO reporting, oltp" >/dev/null
stop_cluster

results=$(mktemp /tmp/numasched-lock-pileup-XXXXXX)
on_cleanup "rm -f $results"
for pair in $(seq 1 "$pairs"); do
	line=""
	for preload in "''" numasched; do
		start_with "$preload"
		line="$line $(measure)"
		stop_cluster
	done
	echo "$line" >>"$results"
	read -r t0 c0 t1 c1 <<<"$line"
	printf 'pair %d: %s tps not loaded, %s loaded (the scheduler: %s%% of a CPU)\n' "$pair" "$t0" "$t1" "$c1"
done
PYTHONPATH="$here" python3 - "$results" "$waiters" <<'EOF'
import statistics, sys
from numabench._stats import bootstrap_median_ci
pairs = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
r = [p[2] / p[0] for p in pairs]
lo, hi = bootstrap_median_ci(r)
print("advisory locks beside %s waiters, loaded/not loaded: %.3f [%.3f, %.3f], %d pairs (%.0f tps against %.0f); "
      "the scheduler used %.1f%% of a CPU (median)" % (
          sys.argv[2], statistics.median(r), lo, hi, len(r),
          statistics.median(p[2] for p in pairs), statistics.median(p[0] for p in pairs),
          statistics.median(p[3] for p in pairs)))
EOF
