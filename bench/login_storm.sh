#!/usr/bin/env bash
# What numasched costs a login storm: pgbench -C (a new connection for every
# transaction, SELECT 1) with 4 clients of a role at
# numasched.cpu_priority = background and 4 of a normal role at once, on one
# cluster started with numasched preloaded and without it, in interleaved
# pairs, for each way the server may give background priority:
#   autogroup  each process its autogroup, nice 19 for background ones
#   idle       SCHED_IDLE (kernel.sched_autogroup_enabled = 0 for the run)
#   cgroup     the idle cpu cgroup: the server started in a cpu cgroup of its
#              own, owned by postgres, as systemd's Delegate=yes leaves it
# Per pair, each role's connection latency (pgbench's per-transaction log,
# which counts the connection in) p50 and p99; then, per way and role, the
# median ratio loaded/not loaded with its bootstrap 95% CI.
#
#     bash bench/login_storm.sh [PAIRS] [SECONDS] [WAYS]
#
# As root (the sysctl, the cgroup).  WAYS defaults to "autogroup idle cgroup".
set -Eeuo pipefail

pairs=${1:-8}
seconds=${2:-5}
ways=${3:-autogroup idle cgroup}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$(id -u)" = 0 ] || { echo "login_storm.sh: run as root (kernel.sched_autogroup_enabled, a cpu cgroup)" >&2; exit 1; }
. "$here/throwaway_cluster.sh"

knob=/proc/sys/kernel/sched_autogroup_enabled
autogroups=$(cat "$knob" 2>/dev/null || echo)
cgroup=""
# shellcheck disable=SC2016
on_cleanup '[ -z "$autogroups" ] || echo "$autogroups" >"$knob"'
# shellcheck disable=SC2016
on_cleanup '[ -z "$cgroup" ] || { as_pg "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1; sleep 1; rmdir "$cgroup"/numasched-* "$cgroup" 2>/dev/null; }'

# The cpu cgroup the server starts in for the cgroup way: cgroup v1's cpu
# hierarchy where there is one, else v2's.
make_cgroup() {
	local mnt
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -z "$mnt" ]; then
		mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
		grep -qw cpu "$mnt/cgroup.subtree_control" || echo +cpu >"$mnt/cgroup.subtree_control"
	fi
	cgroup="$mnt/numasched-login-storm-$$"
	mkdir "$cgroup"
	chown -R postgres: "$cgroup"
}

init_cluster "max_connections = 50"
echo 'SELECT 1;' >"$work/select1.sql"
chown postgres: "$work/select1.sql"

# $1: the way; $2: "numasched" or "''" for shared_preload_libraries
start_with() {
	sed -i '/^shared_preload_libraries/d' "$work/data/postgresql.conf"
	echo "shared_preload_libraries = $2" >>"$work/data/postgresql.conf"
	if [ "$1" = cgroup ]; then
		bash -c 'echo $$ >"$1/cgroup.procs" && exec runuser -u postgres -- "$2/pg_ctl" -D "$3/data" -l "$3/log" -w start' \
			_ "$cgroup" "$bindir" "$work" >/dev/null
	else
		start_cluster
	fi
}

# Both roles' storms at once; prints "p50 p99" in ms for the background role, then the normal one.
storm() {
	rm -f "$work"/log_bg* "$work"/log_normal*
	as_pg "$bindir/pgbench" -h "$work" -p "$port" -U bg -n -C -c 4 -j 2 -T "$seconds" -f "$work/select1.sql" \
		-l --log-prefix="$work/log_bg" postgres >/dev/null 2>&1 &
	local bg=$!
	as_pg "$bindir/pgbench" -h "$work" -p "$port" -U normal -n -C -c 4 -j 2 -T "$seconds" -f "$work/select1.sql" \
		-l --log-prefix="$work/log_normal" postgres >/dev/null 2>&1
	wait $bg
	for role in bg normal; do
		cat "$work"/log_"$role"* | awk '{ print $3 / 1000 }' | sort -n |
			awk '{ v[NR] = $1 } END { printf "%.3f %.3f ", v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1] }'
	done
	echo
}

results=$(mktemp /tmp/numasched-login-storm-XXXXXX)
on_cleanup "rm -f $results"
for way in $ways; do
	case $way in
		autogroup) [ -z "$autogroups" ] || echo 1 >"$knob" ;;
		idle) [ -n "$autogroups" ] || { echo "no $knob: the idle way is not measured"; continue; }; echo 0 >"$knob" ;;
		cgroup) [ -n "$cgroup" ] || make_cgroup; [ -z "$autogroups" ] || echo 1 >"$knob" ;;
		*) echo "login_storm.sh: no way \"$way\" (autogroup, idle, cgroup)" >&2; exit 1 ;;
	esac
	start_with "$way" numasched
	psql_ "CREATE ROLE bg LOGIN; CREATE ROLE normal LOGIN; ALTER ROLE bg SET numasched.cpu_priority = background" \
		>/dev/null 2>&1 || true
	grep -o 'numasched gives background processes.*\|numasched.cpu_priority = background lasts.*' "$work/log" | tail -n 1
	stop_cluster
	for pair in $(seq 1 "$pairs"); do
		line="$way"
		for preload in "''" numasched; do
			start_with "$way" "$preload"
			storm >/dev/null		# warm-up: the first connections fill the caches
			line="$line $(storm)"
			stop_cluster
		done
		echo "$line" >>"$results"
		read -r _ b0 b1 n0 n1 B0 B1 N0 N1 <<<"$line"
		printf '%s pair %d: background role p50/p99 %s/%s ms not loaded, %s/%s loaded; normal role %s/%s, %s/%s\n' \
			"$way" "$pair" "$b0" "$b1" "$B0" "$B1" "$n0" "$n1" "$N0" "$N1"
	done
done
PYTHONPATH="$here" python3 - "$results" <<'EOF'
import statistics, sys
from numabench._stats import bootstrap_median_ci
rows = {}
for line in open(sys.argv[1]):
    way, *v = line.split()
    rows.setdefault(way, []).append([float(x) for x in v])
names = ["background role p50", "background role p99", "normal role p50", "normal role p99"]
for way, pairs in rows.items():
    for k, name in enumerate(names):
        r = [p[4 + k] / p[k] for p in pairs if p[k] > 0]
        lo, hi = bootstrap_median_ci(r)
        print("%-9s %-20s loaded/not loaded: %.3f [%.3f, %.3f], %d pairs (%.2f ms against %.2f)" % (
            way, name, statistics.median(r), lo, hi, len(r),
            statistics.median(p[4 + k] for p in pairs), statistics.median(p[k] for p in pairs)))
EOF
