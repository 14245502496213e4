#!/bin/bash
# Runs inside the test VM (as root, on the host's root file system with a
# tmpfs overlay): the multi-node TAP checks, as the postgres user.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
echo "guest: kernel $(uname -r), $(nproc) CPUs, $nodes NUMA nodes"
for n in /sys/devices/system/node/node[0-9]*; do
	echo "  $(basename "$n"): CPUs $(cat "$n/cpulist"), distances $(cat "$n/distance")"
done

# huge pages for the interleave check with huge_pages = on (2 MB pages)
echo 160 > /proc/sys/vm/nr_hugepages
echo "guest: $(cat /proc/sys/vm/nr_hugepages) huge pages reserved"
grep -hE 'MemFree|HugePages_Total' /sys/devices/system/node/node*/meminfo

work=/var/tmp/numasched-vmtest
rm -rf "$work"
mkdir -p "$work"
cp -r "$top/test" "$work/"
chown -R postgres: "$work"
cd "$work" || exit 1
# settings from run.sh (VM_ONLY, VM_PG_CONFIG, LOCALITY_*), through the results share
[ -f /vmresults/env ] && . /vmresults/env
pg_config=${VM_PG_CONFIG:-pg_config}
pgxs=$(cd "$(dirname "$("$pg_config" --pgxs)")/../.." && pwd)
echo "guest: $("$pg_config" --version)"
# su needs PAM, which cannot read the host's shadow file over 9p: setpriv
tap() {
	setpriv --reuid=postgres --regid=postgres --init-groups \
		env HOME="$work" PATH="$("$pg_config" --bindir):$PATH" TESTDIR="$work" \
		PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
		LOCALITY_RUNS="${LOCALITY_RUNS:-}" LOCALITY_SECONDS="${LOCALITY_SECONDS:-}" \
		LOCALITY_CONFIGS="${LOCALITY_CONFIGS:-}" LOCALITY_DETAIL="${LOCALITY_DETAIL:-}" \
		CONNECTION_PAIRS="${CONNECTION_PAIRS:-}" CONNECTION_SECONDS="${CONNECTION_SECONDS:-}" \
		CONNECTION_NODES="${CONNECTION_NODES:-}" \
		INTERLEAVE_THP="${INTERLEAVE_THP:-}" NUMASCHED_EXPECT_MODE="${NUMASCHED_EXPECT_MODE:-}" \
		COMPANION_CONTROL="${COMPANION_CONTROL:-}" COMPANION_LOG="${COMPANION_LOG:-}" \
		COMPANION_SID="${COMPANION_SID:-}" SHARED_SECONDS="${SHARED_SECONDS:-}" SHARED_ROUNDS="${SHARED_ROUNDS:-}" SHARED_THREADS="${SHARED_THREADS:-}" SHARED_JOB_RATE="${SHARED_JOB_RATE:-}" \
		prove -v -I "$pgxs/src/test/perl" -I test/t "$@"
}
wanted() { [ -z "${VM_ONLY:-}" ] || [[ $1 =~ $VM_ONLY ]]; }
# a measurement, not a check: only when VM_ONLY names it
measured() { [ -n "${VM_ONLY:-}" ] && [[ $1 =~ $VM_ONLY ]]; }

status=0
# the multi-node checks look at what numasched does, with NUMA balancing off:
# it would move pages too, and on Linux 6.1 to 6.4 it hides the pages it marks
# for a hinting fault from move_pages (the locality probe runs with it on)
if wanted multinode; then
	balancing=$(cat /proc/sys/kernel/numa_balancing)
	echo 0 > /proc/sys/kernel/numa_balancing
	tap test/vm/t/010_multinode.pl || status=1
	echo "$balancing" > /proc/sys/kernel/numa_balancing
	# the memory calls refused as in a container: said once, nothing sent to clients
	tap test/t/008_seccomp.pl || status=1
	# a postmaster under numactl --interleave=all: said once, the segment keeps it
	tap test/t/009_inherited_policy.pl || status=1
fi
# the default node binding: the kernel's balancing across nodes, memory at
# home, processes brought home (NUMA balancing off, as for multinode)
if wanted preferred; then
	balancing=$(cat /proc/sys/kernel/numa_balancing)
	echo 0 > /proc/sys/kernel/numa_balancing
	tap test/vm/t/015_preferred.pl || status=1
	echo "$balancing" > /proc/sys/kernel/numa_balancing
fi
if wanted interleave; then
	tap test/vm/t/030_interleave.pl || status=1
	# again with transparent huge pages for shared memory, which the kernel
	# interleaves by huge page
	thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
	if [ -w "$thp" ]; then
		was=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp")
		echo always > "$thp"
		INTERLEAVE_THP=1 tap test/vm/t/030_interleave.pl || status=1
		echo "$was" > "$thp"
	fi
fi
# idle CPUs lent to a burst, and given back (with AutoNUMA on, Debian's default)
if wanted lending; then
	tap test/vm/t/050_lending.pl || status=1
fi
# a background session on the other node's idle CPU, memory home, and a
# normal one taking that CPU back
if wanted background; then
	tap test/vm/t/070_background.pl || status=1
	# again in a cgroup v2 cpu cgroup of its own, owned by postgres as systemd's
	# Delegate=yes leaves it: background priority by an idle child cgroup
	if mount -t cgroup2 none /sys/fs/cgroup && echo +cpu > /sys/fs/cgroup/cgroup.subtree_control; then
		cg=/sys/fs/cgroup/numasched-test
		mkdir "$cg" && chown -R postgres: "$cg"
		# a failed first run leaves its data directory behind
		rm -rf "$work"/tmp_check/t_070_background_*
		(echo "$BASHPID" > "$cg/cgroup.procs" && NUMASCHED_EXPECT_MODE=cgroup tap test/vm/t/070_background.pl) || status=1
	else
		echo "guest: no cgroup v2 with the cpu controller: the cgroup way is not tested here"
		status=1
	fi
fi
# the sched_ext companion, where the guest's kernel has sched_ext (VM_KERNEL=sid):
# root loads and kills numasched-scx when the test asks (companion_control.sh)
if wanted companion; then
	if [ -e /sys/kernel/sched_ext/state ]; then
		# khugepaged (nice 19) copying a huge page under emulation, beside
		# another user's 16-process job, keeps an RCU read section open
		# 20 s and more with the kernel alone too; the kernel unloads any
		# sched_ext scheduler on an RCU stall. Real CPUs copy 2 MB in well
		# under a millisecond: no huge pages collapsed here
		echo never >/sys/kernel/mm/transparent_hugepage/enabled
		echo 0 >/sys/kernel/mm/transparent_hugepage/khugepaged/defrag
		companion=$("$pg_config" --bindir)/numasched-scx
		COMPANION_CONTROL=$work/companion.fifo COMPANION_LOG=$work/companion.log
		mkfifo -m 622 "$COMPANION_CONTROL" && : >"$COMPANION_LOG" && chmod 644 "$COMPANION_LOG"
		bash test/vm/companion_control.sh "$COMPANION_CONTROL" "$companion" "$COMPANION_LOG" &
		control=$!
		tap test/vm/t/080_companion.pl || status=1
		# on a machine PostgreSQL shares, with the loader built against sid's libbpf
		: >"$COMPANION_LOG"
		tap test/vm/t/090_companion_shared.pl || status=1
		echo quit >"$COMPANION_CONTROL"
		wait "$control"
		unset COMPANION_CONTROL COMPANION_LOG
	else
		echo "guest: kernel $(uname -r) has no sched_ext: the companion is tested with VM_KERNEL=sid"
	fi
fi
# PostgreSQL's own NUMA views beside numasched's (18 and later, built
# --with-libnuma; skipped on others)
if wanted pgnuma; then
	tap test/vm/t/060_pg_numa.pl || status=1
fi
# the locality probe once with AutoNUMA on (Debian's default) and once off:
# only root can switch it
if wanted locality; then
	for balancing in 1 0; do
		echo "$balancing" > /proc/sys/kernel/numa_balancing
		echo "guest: kernel.numa_balancing = $(cat /proc/sys/kernel/numa_balancing)"
		tap test/vm/t/020_locality.pl || status=1
	done
fi
# numabench in the guest, as root (scx-bench loads numasched-scx): VM_BENCH_ARGS
# adds options (a later --runs or --duration wins); the results go to the
# share, where run.sh keeps them with VM_BENCH_OUT
bench() {
	local workload=$1
	shift
	# shellcheck disable=SC2086
	PATH=/usr/sbin:/usr/bin:/sbin:/bin python3 "$top/bench/numabench" run --pg-config "$pg_config" --workload "$workload" \
		"$@" --runs 6 --duration 10 --warmup 3 --out "/vmresults/bench/$workload" ${VM_BENCH_ARGS:-} || status=1
}
# bursty across nodes (bursts): numasched's default (node_binding =
# preferred) and its strict masks with lending, against the kernel alone
if measured bursts; then
	bench bursty --utilisation "${BURSTS_UTILISATION:-60}" --burst-ms 20 --clients 8 --config baseline \
		--config numasched --config strict=numasched,numasched.node_binding=strict
fi
# the companion measured (scx-bench): bursty and two-roles, the kernel alone,
# numasched on masks and numasched with the companion, interleaved;
# SCX_WORKLOADS picks the workloads (a regex of bursty, two-roles)
if measured scx-bench; then
	bg=numasched,role.analytics.numasched.cpu_priority=background
	for workload in "bursty --utilisation 60 --burst-ms 20 --clients 8 --config baseline --config numasched
			--config scx=numasched,bench.companion=on" \
		"two-roles --rate 20 --clients 2 --analytic-clients 1 --scale 2 --config baseline --config bg=$bg
			--config bg-scx=$bg,bench.companion=on"; do
		[[ ${workload%% *} =~ ${SCX_WORKLOADS:-.} ]] || continue
		# shellcheck disable=SC2086
		bench $workload
	done
fi
# the cost of a new connection against the kernel alone (CONNECTION_PAIRS,
# CONNECTION_SECONDS)
if measured connections; then
	tap test/vm/t/040_connections.pl || status=1
fi
exit $status
