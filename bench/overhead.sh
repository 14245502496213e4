#!/usr/bin/env bash
# What numasched costs a backend, counted in instructions (callgrind), not
# seconds: wall-clock on a shared machine cannot resolve a 0.5% cost.
#
#     bash bench/overhead.sh [CONNECTIONS] [TRANSACTIONS] [SETTING ...]
#
# A throwaway cluster (numasched preloaded) runs under valgrind's callgrind.
# Part 1: pgbench -S -C makes CONNECTIONS connections (default 200), one
# select-only transaction each; for each backend, numasched's functions
# (inclusive) against all of the backend's instructions.  Part 2: one
# persistent connection runs TRANSACTIONS select-only transactions (default
# 2000); numasched's instructions per transaction against the backend's.
# SETTINGs are postgresql.conf lines added to the cluster's, e.g.
# "numasched.groups_per_node = 2" "numasched.group_binding = strict": one
# node split in groups that bind, where every statement is counted for
# lending.
set -euo pipefail

connections=${1:-200}
transactions=${2:-2000}
settings=("${@:3}")
. "$(dirname "${BASH_SOURCE[0]}")/throwaway_cluster.sh"
pid=""
on_cleanup '[ -n "$pid" ] && { as_pg "$bindir/pg_ctl" -D "$work/data" -m immediate stop; wait "$pid"; }'

init_cluster "max_connections = 20" "autovacuum = off" "${settings[@]}"
start_cluster
as_pg "$bindir/pgbench" -h "$work" -p "$port" -i -q -s 1 postgres >/dev/null 2>&1
stop_cluster

run_under_callgrind() {
	local out=$1
	mkdir -p "$out" && chown postgres: "$out" 2>/dev/null || true
	# a forked backend inherits the postmaster's counts (its start-up, 45-50
	# million instructions); zeroed as each fork begins, a backend's total is
	# its own life
	as_pg valgrind --tool=callgrind --trace-children=yes --zero-before=fork_process --callgrind-out-file="$out/callgrind.out.%p" \
		"$bindir/postgres" -D "$work/data" >"$out/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 120); do
		as_pg "$bindir/pg_isready" -q -h "$work" -p "$port" && break
		sleep 1
	done
}
stop_server() {
	stop_cluster
	wait "$pid" || true
	pid=""
}

# numasched's inclusive instructions in one callgrind file: the hooks (a
# backend is placed in the start-up transaction's commit callback), minus
# what they call of PostgreSQL (standard_planner, standard_ExecutorStart and
# _ExecutorEnd, standard_ProcessUtility), with the transaction callbacks,
# plus the exit path.
analyse() {
	python3 - "$@" <<'PY'
import re, subprocess, sys, glob, statistics

def totals(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True).stdout
    incl = {}
    total = 0
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(.*?\)\s+(\S+):(\S+)", line)
        if m:
            incl[m.group(3).split()[0]] = max(incl.get(m.group(3).split()[0], 0), int(m.group(1).replace(",", "")))
        m = re.match(r"\s*([\d,]+)\s+\(100\.0+%\)\s+PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
    return total, incl

def numasched_cost(incl):
    own = incl.get("numasched_client_authentication", 0)
    own += incl.get("numasched_xact_callback", 0)
    own += incl.get("numasched_executor_start", 0) - incl.get("standard_ExecutorStart", 0)
    own += incl.get("numasched_planner", 0) - incl.get("standard_planner", 0)
    # statement_lending.c hooks ExecutorEnd in a process once it counts a statement
    if "executor_end" in incl:
        own += incl["executor_end"] - incl.get("standard_ExecutorEnd", 0)
    own += incl.get("on_xact_end", 0) + incl.get("on_subxact_abort", 0)
    own += incl.get("numasched_process_utility", 0) - incl.get("standard_ProcessUtility", 0)
    own += incl.get("release_own_slot", 0)
    return own

mode, directory = sys.argv[1], sys.argv[2]
rows = []
for path in glob.glob(directory + "/callgrind.out.*"):
    total, incl = totals(path)
    if "numasched_client_authentication" not in incl:
        continue                      # not a client backend
    rows.append((total, numasched_cost(incl), incl))
if not rows:
    sys.exit("no backend profiles found in " + directory)
if mode == "connections":
    shares = [100.0 * c / t for t, c, _ in rows]
    costs = [c for _, c, _ in rows]
    totals_ = [t for t, _, _ in rows]
    print("backends profiled: %d" % len(rows))
    print("instructions per backend: median %d (numasched: median %d)" % (statistics.median(totals_), statistics.median(costs)))
    print("numasched share of a backend's instructions: median %.3f%%, max %.3f%%" % (statistics.median(shares), max(shares)))
else:
    tx = int(sys.argv[3])
    total, cost, incl = max(rows, key=lambda r: r[0])
    print("one backend, %d select-only transactions: %d instructions, %d per transaction" % (tx, total, total // tx))
    print("numasched: %d instructions in all, %.1f per transaction = %.4f%% of a transaction" % (cost, cost / tx, 100.0 * cost / total))
PY
}

echo "== $connections connections (pgbench -S -C), one transaction each"
run_under_callgrind "$work/connections"
as_pg "$bindir/pgbench" -h "$work" -p "$port" -n -S -C -c 1 -t "$connections" postgres >/dev/null
stop_server
analyse connections "$work/connections"

echo "== one persistent connection, $transactions select-only transactions"
run_under_callgrind "$work/persistent"
as_pg "$bindir/pgbench" -h "$work" -p "$port" -n -S -c 1 -t "$transactions" postgres >/dev/null
stop_server
analyse persistent "$work/persistent" "$transactions"
