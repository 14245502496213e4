#!/usr/bin/env bash
# Whether numasched's own lock holds logins back: a login storm (pgbench -C,
# 8 clients of a normal role, SELECT 1) on a machine saturated by normal work
# (a CPU-bound query per CPU), in three arms on one cluster with numasched
# preloaded, in interleaved rounds (the order rotates):
#   alone      the storm only
#   numasched  while 4 sessions loop on every view of numasched and sessions
#              at numasched.cpu_priority = background come and go (pgbench -C,
#              2 clients): what takes numasched's lock beside the logins
#   control    the same, the 4 loopers on PostgreSQL's own views instead: the
#              CPU their work takes from the storm, without numasched's lock
# Per round the storm's login latency p50 and p99 (pgbench's per-transaction
# log, which counts the connection in), and how often a login was seen
# waiting for numasched's lock (pg_stat_activity's wait_event, sampled every
# 10 ms); then the median ratios numasched/control and control/alone with
# their bootstrap 95% CI.
#
#     bash bench/login_contention.sh [ROUNDS] [SECONDS]
set -Eeuo pipefail

pairs=${1:-8}
seconds=${2:-5}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/throwaway_cluster.sh"

ncpu=$(nproc)
init_cluster "max_connections = 100" "numasched.groups_per_node = 2"
start_cluster
psql_ "CREATE EXTENSION numasched; CREATE ROLE app LOGIN; CREATE ROLE bg LOGIN;
ALTER ROLE bg SET numasched.cpu_priority = background;
GRANT pg_read_all_stats TO app" >/dev/null
echo 'SELECT 1;' >"$work/select1.sql"
cat >"$work/views.sql" <<'SQL'
SELECT count(*) FROM numasched_processes;
SELECT count(*) FROM numasched_workloads;
SELECT count(*) FROM numasched_groups;
SELECT count(*) FROM numasched_stats;
SELECT count(*) FROM numasched_locality;
SELECT count(*) FROM numasched_topology;
SQL
cat >"$work/own_views.sql" <<'SQL'
SELECT count(*) FROM pg_stat_activity;
SELECT count(*) FROM pg_locks;
SELECT count(*) FROM pg_stat_database;
SELECT count(*) FROM pg_settings;
SELECT count(*) FROM pg_stat_user_tables;
SELECT count(*) FROM pg_class;
SQL
echo 'SELECT count(*) FROM generate_series(1, 200000000);' >"$work/busy.sql"
chown postgres: "$work"/*.sql

bench() { as_pg "$bindir/pgbench" -h "$work" -p "$port" -n "$@" postgres >/dev/null 2>&1; }

# the machine saturated by normal work for the whole run
bench -U app -c "$ncpu" -j "$ncpu" -T $((pairs * seconds * 3 + 60)) -f "$work/busy.sql" &
busy=$!
# shellcheck disable=SC2016
on_cleanup 'kill '"$busy"' 2>/dev/null'
sleep 2

# The storm in arm $1: prints "p50 p99" of its login latency in ms and the
# share of samples that saw a session waiting for numasched's lock.
storm() {
	local others=() sampler
	rm -f "$work"/log_storm* "$work/waits"
	case $1 in
		numasched) loop=views.sql ;;
		control) loop=own_views.sql ;;
		*) loop= ;;
	esac
	if [ -n "$loop" ]; then
		bench -U app -c 4 -j 4 -T "$seconds" -f "$work/$loop" &
		others+=($!)
		bench -U bg -C -c 2 -j 2 -T "$seconds" -f "$work/select1.sql" &
		others+=($!)
	fi
	echo "SELECT count(*) FILTER (WHERE wait_event = 'numasched') FROM pg_stat_activity \\watch 0.01" |
		as_pg "$bindir/psql" -X -A -t -h "$work" -p "$port" -d postgres >"$work/waits" 2>/dev/null &
	sampler=$!
	bench -U app -C -c 8 -j 2 -T "$seconds" -f "$work/select1.sql" -l --log-prefix="$work/log_storm"
	kill "$sampler" 2>/dev/null || true
	[ ${#others[@]} -eq 0 ] || wait "${others[@]}"
	wait "$sampler" 2>/dev/null || true
	cat "$work"/log_storm* | awk '{ print $3 / 1000 }' | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.3f %.3f", v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1] }'
	awk '/^[0-9]+$/ { n++; if ($1 > 0) w++ } END { printf " %.4f %d\n", n ? w / n : 0, n }' "$work/waits"
}

storm alone >/dev/null		# warm-up
results=$(mktemp /tmp/numasched-login-contention-XXXXXX)
on_cleanup "rm -f $results"
arms=(alone numasched control)
for round in $(seq 1 "$pairs"); do
	declare -A got=()
	for k in 0 1 2; do
		arm=${arms[$(((round + k) % 3))]}
		got[$arm]=$(storm "$arm")
	done
	echo "${got[alone]} ${got[numasched]} ${got[control]}" >>"$results"
	for arm in "${arms[@]}"; do
		read -r p50 p99 waits samples <<<"${got[$arm]}"
		awk -v r="$round" -v a="$arm" -v p50="$p50" -v p99="$p99" -v w="$waits" -v n="$samples" 'BEGIN {
			printf "round %d %-9s login p50 %s ms, p99 %s ms; a session waiting for numasched'"'"'s lock in %.1f%% of %d samples\n", r, a, p50, p99, w * 100, n }'
	done
	unset got
done
PYTHONPATH="$here" python3 - "$results" <<'PY'
import statistics, sys
from numabench._stats import bootstrap_median_ci
rounds = [[float(x) for x in line.split()] for line in open(sys.argv[1])]
# per round: alone p50 p99 waits samples, numasched ..., control ...
for k, name in enumerate(["login p50", "login p99"]):
    for num, den, label in ((4, 8, "numasched/control"), (8, 0, "control/alone")):
        r = [p[num + k] / p[den + k] for p in rounds if p[den + k] > 0]
        lo, hi = bootstrap_median_ci(r)
        print("%-9s %-17s %.3f [%.3f, %.3f], %d rounds (%.2f ms against %.2f)" % (
            name, label, statistics.median(r), lo, hi, len(r),
            statistics.median(p[num + k] for p in rounds), statistics.median(p[den + k] for p in rounds)))
for i, arm in enumerate(["alone", "numasched", "control"]):
    print("%-9s a session waiting for numasched's lock in %.2f%% of samples (median)" % (
        arm, 100 * statistics.median(p[4 * i + 2] for p in rounds)))
PY
