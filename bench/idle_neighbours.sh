#!/usr/bin/env bash
# What work in a saturating OLTP role's idle moments costs it, with neither
# PostgreSQL in the background nor numasched: pgbench's select-only
# transactions as fast as they go (2 clients, scale 2, 8 s), alone and beside
# two SCHED_IDLE processes that copy 8 MB again and again, in interleaved
# pairs; each pair, then the median ratio with its bootstrap 95% CI.
#
#     bash bench/idle_neighbours.sh [PAIRS]
#
# As root: autogroups are turned off for the run (SCHED_IDLE outside a cpu
# cgroup needs it) and restored after.
set -Eeuo pipefail

pairs=${1:-12}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "$(id -u)" = 0 ] || { echo "idle_neighbours.sh: run as root (kernel.sched_autogroup_enabled)" >&2; exit 1; }
. "$here/throwaway_cluster.sh"

autogroups=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo)
copiers=()
# evaluated at exit, when the copiers may still run
# shellcheck disable=SC2016
on_cleanup '[ ${#copiers[@]} -eq 0 ] || { kill "${copiers[@]}"; wait "${copiers[@]}"; } 2>/dev/null'
# shellcheck disable=SC2016
on_cleanup '[ -z "$autogroups" ] || echo "$autogroups" >/proc/sys/kernel/sched_autogroup_enabled'
[ -z "$autogroups" ] || echo 0 >/proc/sys/kernel/sched_autogroup_enabled

# the kernel alone: numasched is not loaded
init_cluster "shared_preload_libraries = ''"
start_cluster
as_pg "$bindir/pgbench" -h "$work" -p "$port" -i -s 2 -q postgres >/dev/null 2>&1
tps() {
	as_pg "$bindir/pgbench" -h "$work" -p "$port" -S -c 2 -j 2 -T 8 -n postgres 2>/dev/null |
		awk '/^tps/ { print $3; exit }'
}
tps >/dev/null					# warm-up
ratios=()
for pair in $(seq 1 "$pairs"); do
	alone=$(tps)
	for _ in 1 2; do
		chrt -i 0 python3 -c 'b = bytearray(8 << 20)
while True:
    c = bytes(b)' &
		copiers+=($!)
	done
	beside=$(tps)
	kill "${copiers[@]}"
	wait "${copiers[@]}" 2>/dev/null || true
	copiers=()
	ratios+=("$(python3 -c "print('%.3f' % ($beside / $alone))")")
	printf 'pair %d: alone %.0f tps, beside two SCHED_IDLE copiers %.0f tps: %s\n' "$pair" "$alone" "$beside" "${ratios[-1]}"
done
PYTHONPATH="$here" python3 -c '
import statistics, sys
from numabench._stats import bootstrap_median_ci
r = [float(x) for x in sys.argv[1:]]
lo, hi = bootstrap_median_ci(r)
print("beside two SCHED_IDLE copiers: median %.3f [%.3f, %.3f] of the tps alone, %d pairs" % (statistics.median(r), lo, hi, len(r)))
' "${ratios[@]}"
