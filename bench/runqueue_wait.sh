#!/usr/bin/env bash
# Where the OLTP role's tail goes beside a background analytic role: how long
# its backends and its pgbench wait on a run queue once woken (perf sched:
# the kernel's sched_wakeup and sched_switch events), and what the CPU ran
# meanwhile.
# two-roles at --rate 200, background priority by SCHED_IDLE (autogroups are
# turned off for the run and restored after), in these scenes:
#   background  the analytic role at numasched.cpu_priority = background
#   cgroup      the same by an idle cpu cgroup: numabench --server-cgroup, so
#               the server runs in a cpu cgroup of its own and numasched puts
#               background work in its child numasched-background
#   burners     the OLTP role beside two SCHED_IDLE processes that are not
#               PostgreSQL and never sleep (each copies 8 MB again and again),
#               filling both CPUs as the analytic role's leader and workers do;
#               burnersN: N of them (burners4)
#   idlecg      the same copiers, as normal processes in an idle cpu cgroup
#               (cpu.idle = 1): one entity per CPU to the kernel where
#               SCHED_IDLE makes one per process; idlecgN: N of them
#   sleepers    three such processes, as the leader and its two workers, but
#               each sleeps 0.2 ms after each copy, as PostgreSQL processes
#               wait for each other; sleepersN: N of them
#   alone       the OLTP role alone
#
#     bash bench/runqueue_wait.sh [ROUNDS] [SECONDS] [SCENES]
#
# SCENES defaults to "background burners alone".
#
# As root (perf, the sysctl); perf is Debian's linux-perf.  A diagnosis, one
# run per scene and round: compare the OLTP role's tail between scenes with
# numabench's interleaved pairs (doc/benchmarking.md).
set -Eeuo pipefail

rounds=${1:-2}
seconds=${2:-8}
scenes=${3:-background burners alone}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v perf >/dev/null || { echo "runqueue_wait.sh: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "runqueue_wait.sh: run as root (perf sched, kernel.sched_autogroup_enabled)" >&2; exit 1; }

out=$(mktemp -d /tmp/numasched-rqwait-XXXXXX)
autogroups=$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo)
burners=()
idle_cgroup=""
restore() {
	[ ${#burners[@]} -eq 0 ] || { kill "${burners[@]}" 2>/dev/null; wait "${burners[@]}" 2>/dev/null; } || true
	[ -z "$idle_cgroup" ] || rmdir "$idle_cgroup" 2>/dev/null || true
	[ -z "$autogroups" ] || echo "$autogroups" >/proc/sys/kernel/sched_autogroup_enabled
	rm -rf "$out"
}
trap restore EXIT
trap 'echo "runqueue_wait.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
[ -z "$autogroups" ] || echo 0 >/proc/sys/kernel/sched_autogroup_enabled

# per kind of scene, numabench's configuration
declare -A config=(
	[background]="numasched,role.analytics.numasched.cpu_priority=background"
	[cgroup]="numasched,role.analytics.numasched.cpu_priority=background"
	[burners]="baseline,bench.analytic_clients=0"
	[idlecg]="baseline,bench.analytic_clients=0"
	[sleepers]="baseline,bench.analytic_clients=0"
	[alone]="baseline,bench.analytic_clients=0"
)
copiers="burners idlecg sleepers"

# A cpu cgroup with cpu.idle = 1 for the idlecg scenes (cgroup v1 or v2).
make_idle_cgroup() {
	if [ -e /sys/fs/cgroup/cpu/cpu.idle ]; then
		idle_cgroup=/sys/fs/cgroup/cpu/numasched-rqwait
	elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		idle_cgroup=/sys/fs/cgroup/numasched-rqwait
	else
		echo "runqueue_wait.sh: no cpu cgroup with cpu.idle here for the idlecg scenes" >&2
		exit 1
	fi
	mkdir -p "$idle_cgroup"
	echo 1 >"$idle_cgroup/cpu.idle"
}

scene() {
	local name=$1 round=$2 kind=${1%%[0-9]*} bench oltp client postmaster normal idle="" cgroup=() copies
	copies=${name#"$kind"}
	[ -n "$copies" ] || copies=$([ "$kind" = sleepers ] && echo 3 || echo 2)
	[ "$kind" = cgroup ] && cgroup=(--server-cgroup)
	# no warm-up: its OLTP backends would be the ones found below, and gone
	# before the recording ends
	python3 "$top/bench/numabench" run --workload two-roles --rate 200 --clients 2 --analytic-clients 1 \
		--config "$name=${config[$kind]}" "${cgroup[@]}" --runs 1 --warmup 0 --duration $((seconds + 20)) --scale 2 \
		--out "$out/$name-$round" >"$out/$name-$round.log" 2>&1 &
	bench=$!
	until pgrep -f '^postgres: oltp ' >/dev/null; do
		kill -0 "$bench" 2>/dev/null || { echo "runqueue_wait.sh: numabench ended before the OLTP role started:" >&2; cat "$out/$name-$round.log" >&2; exit 1; }
		sleep 0.5
	done
	if [[ " $copiers " == *" $kind "* ]]; then
		for _ in $(seq 1 "$copies"); do
			$([ "$kind" = idlecg ] || echo chrt -i 0) python3 -c 'import sys, time
b, nap = bytearray(8 << 20), float(sys.argv[1])
while True:
    c = bytes(b)
    if nap: time.sleep(nap)' "$([ "$kind" = sleepers ] && echo 0.0002 || echo 0)" &
			burners+=($!)
			[ "$kind" != idlecg ] || echo "$!" >"$idle_cgroup/cgroup.procs"
		done
	fi
	sleep 2
	oltp=$(pgrep -f '^postgres: oltp ' | paste -sd,)
	client=$(for p in $(pgrep -x pgbench); do if grep -qz '^oltp$' "/proc/$p/cmdline"; then echo "$p"; fi; done | paste -sd,)
	# the server's normal processes: the postmaster and its children but the
	# analytic role's backends (parallel workers come later, and are not here)
	postmaster=$(pgrep -f "numabench-.*/$name/data" | head -1)
	normal=$( (echo "$postmaster"; pgrep -P "$postmaster" || true) |
		grep -vxFf <(pgrep -f '^postgres: analytics ' || true) | paste -sd,)
	perf sched record -q -o "$out/$name.data" -- sleep "$seconds" >/dev/null 2>&1
	[ ${#burners[@]} -eq 0 ] || { idle=$(IFS=,; echo "${burners[*]}"); kill "${burners[@]}"; wait "${burners[@]}" 2>/dev/null || true; burners=(); }
	wait "$bench" || { cat "$out/$name-$round.log" >&2; exit 1; }
	perf sched timehist -i "$out/$name.data" 2>/dev/null >"$out/$name.txt"
	python3 - "$out/$name.txt" "$oltp" "$client" "$normal" "$idle" "$name" "$round" \
		"$(grep -o 'p99 [0-9.]* ms' "$out/$name-$round.log" | tail -1)" <<'EOF'
import collections, re, sys
path, oltp, client, normal, idle, name, round_, p99 = sys.argv[1:9]
oltp = {int(p) for p in oltp.split(",") if p}
client = {int(p) for p in client.split(",") if p}
normal = {int(p) for p in normal.split(",") if p}
idle = {int(p) for p in idle.split(",") if p}
rows = []
for line in open(path):
    f = line.split()
    m = re.search(r"\[(\d+)", f[2]) if len(f) >= 6 and f[1].startswith("[") else None
    if m:
        try:
            rows.append((float(f[0]), f[1], f[2].split("[")[0], int(m.group(1)), float(f[4]), float(f[5])))
        except ValueError:
            pass
def kind(comm, pid):
    if comm == "postgres":
        return "OLTP" if pid in oltp else "server, normal" if pid in normal else "analytic, background"
    if pid in client:
        return "OLTP's pgbench"
    return "the copiers" if pid in idle else "other"
def waits(who, label):
    """who's run-queue waits once woken, and what its CPU ran during those over 1 ms"""
    delays = sorted(d for _, _, _, pid, d, _ in rows if pid in who)
    long_ = [(t, cpu, d, run) for t, cpu, _, pid, d, run in rows if pid in who and d > 1]
    ran = collections.Counter()
    for t, cpu, d, run in long_:
        lo, hi = t - (run + d) / 1000, t - run / 1000
        for t2, cpu2, comm2, pid2, _, run2 in rows:
            if cpu2 == cpu and lo < t2 <= hi + 1e-6:
                ran[kind(comm2, pid2)] += min(run2, (t2 - lo) * 1000)
    total = sum(ran.values()) or 1
    return "%s: %d wakeups, wait p99 %.2f ms, max %.2f ms, %d over 1 ms (%.1f per 1000)%s" % (
        label, len(delays), delays[int(len(delays) * .99)] if delays else 0, delays[-1] if delays else 0,
        len(long_), 1000.0 * len(long_) / max(1, len(delays)),
        ": the CPU ran " + ", ".join("%s %.0f%%" % (k, 100 * v / total) for k, v in ran.most_common(3))
        if ran else "")
print("%-10s round %s: OLTP %s\n    %s\n    %s" % (
    name, round_, p99 or "p99 ?", waits(oltp, "its backends"), waits(client, "its pgbench")))
EOF
}

for name in $scenes; do
	kind=${name%%[0-9]*}
	if [ -z "${config[$kind]:-}" ] || ! [[ "$name" =~ ^[a-z]+([1-9][0-9]*)?$ ]] ||
		{ [ "$name" != "$kind" ] && [[ " $copiers " != *" $kind "* ]]; }; then
		echo "runqueue_wait.sh: no scene \"$name\" (${!config[*]}; burners, idlecg and sleepers may end in a count)" >&2
		exit 1
	fi
	[ "$kind" != idlecg ] || [ -n "$idle_cgroup" ] || make_idle_cgroup
done
for round in $(seq 1 "$rounds"); do
	for name in $scenes; do
		scene "$name" "$round"
	done
done
