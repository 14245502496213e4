#!/usr/bin/env bash
# numasched's test command: installs what is missing, builds and installs
# numasched, then runs every test.  Run as root on Debian 12:
#
#     bash test/run.sh
#
# The PostgreSQL tests run as the "postgres" user in a scratch copy of the
# tree, so that nothing root-owned is left in the checkout and PostgreSQL
# (which refuses to run as root) can write its temporary instances.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

bash test/deps.sh || exit 1
echo "== build and install"
{ make -s && make -s install; } >/dev/null || { echo "build failed"; exit 1; }
make -s -C test unit fuzz >/dev/null || { echo "test build failed"; exit 1; }

passed=0
failed=0
failures=()
step() {
	local name=$1
	shift
	echo "== $name"
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name")
	fi
}

# Runs a make target of the PGXS Makefile as postgres in a scratch copy.
scratch=""
as_postgres_make() {
	if [ "$(id -u)" != 0 ]; then
		make -s "$@"
		return
	fi
	if [ -z "$scratch" ]; then
		scratch=$(mktemp -d /tmp/numasched-test-XXXXXX)
		# the tracked files and the new ones not ignored: no build products
		git ls-files -z --cached --others --exclude-standard |
			tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$scratch"
		chown -R postgres: "$scratch"
	fi
	if ! runuser -u postgres -- make -s -C "$scratch" "$@"; then
		[ -f "$scratch/regression.diffs" ] && head -n 200 "$scratch/regression.diffs"
		return 1
	fi
}

step "core unit tests (fixture sysfs trees)" prove test/core.t
step "numasched-plan" prove test/cli.t
step "fuzzers" prove test/fuzz.t
step "numabench: statistics, parsing, workload plans, smoke run" prove --exec /usr/bin/python3 bench/test_numabench.py
step "pg_regress and TAP tests (PostgreSQL::Test::Cluster)" as_postgres_make installcheck
if [ "$(id -u)" = 0 ]; then
	step "multi-node checks and interleave in a qemu VM with 2 NUMA nodes" \
		env VM_ONLY='multinode|interleave' bash test/vm/run.sh 2
	step "interleave with a memory-only node in a qemu VM with 3 NUMA nodes" \
		env VM_ONLY=interleave bash test/vm/run.sh 3
	step "multi-node checks, interleave and private-memory locality in a qemu VM with 4 NUMA nodes" \
		bash test/vm/run.sh 4
else
	echo "== multi-node VM checks skipped: they need root (9p root share)"
fi

[ -n "$scratch" ] && rm -rf "$scratch"
echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
