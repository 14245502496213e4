#!/usr/bin/env bash
# Boots a VM with emulated NUMA nodes (qemu, software emulation: no /dev/kvm)
# and runs the multi-node checks (test/vm/t/*.pl) inside, against the real
# kernel of the guest.  The guest sees the host's root file system read-only
# over 9p with a tmpfs overlay, so numasched must be installed on the host
# first (make install).  Run as root:
#
#     bash test/vm/run.sh 2      # two nodes, distances like a 2-socket box
#     bash test/vm/run.sh 3      # two nodes and a CPU-less memory node (CXL)
#     bash test/vm/run.sh 4      # four nodes, near and far pairs
#
# VM_ONLY (a regex of multinode, preferred, lending, background, companion, locality, interleave, pgnuma) picks the checks, and
# names the measurements, which run only when named: a connection's cost
# (connections), bursty on masks, preferred and strict (bursts; at
# BURSTS_UTILISATION percent, default 60), the companion's (scx-bench);
# VM_KERNEL=sid boots Debian sid's kernel (sched_ext) instead of Debian 12's;
# VM_CPUS=2 gives the 2-node VM one CPU per node;
# VM_TCG_THREAD=single emulates every vCPU in one host thread: slower, but
# the kernel's int3 text patching (static keys, flipped as a sched_ext
# scheduler loads and unloads) then never races the other vCPUs, as under
# multi-threaded TCG it does (an "Oops: int3" in __schedule or try_to_wake_up
# within tens of loads; none in 150 single-threaded);
# COMPANION_SID the loader built against Debian sid's libbpf, which the
# companion's shared-machine checks run (test/run.sh builds it);
# VM_BENCH_OUT=DIR keeps the measurements' numabench results (results.json
# per workload; what ran before the guest died too, for numabench merge);
# VM_PG_CONFIG the PostgreSQL they run against (default: pg_config on PATH,
# the system's 15; test/pg_major.sh prepares 17, 18 and 19).
#
# Exit status: the guest's (0 = every check passed); 124 if it hung.
set -euo pipefail

nodes=${1:-2}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
timeout_s=${VM_TIMEOUT:-1500}

case "$nodes" in
	2)
		# a 2-socket box: 2 CPUs and 1 GB per node, remote distance 21
		numa=(-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1
			-numa dist,src=0,dst=1,val=21)
		sockets=2
		# VM_CPUS=2: one CPU per node, no more vCPUs than the host's two
		# cores, so that what waits in the guest waits for a CPU, not for
		# the host (measurements)
		if [ "${VM_CPUS:-4}" = 2 ]; then
			numa=(-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1
				-numa dist,src=0,dst=1,val=21)
		fi
		;;
	3)
		# the same box with a CPU-less memory node at distance 30, as a CXL
		# memory expander shows up
		numa=(-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1
			-numa node,nodeid=2,memdev=m2
			-numa dist,src=0,dst=1,val=21 -numa dist,src=0,dst=2,val=30 -numa dist,src=1,dst=2,val=30)
		sockets=2
		;;
	4)
		# four nodes of one CPU: 0-1 and 2-3 near (12), the pairs far (32)
		numa=(-numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1
			-numa node,nodeid=2,cpus=2,memdev=m2 -numa node,nodeid=3,cpus=3,memdev=m3
			-numa dist,src=0,dst=1,val=12 -numa dist,src=2,dst=3,val=12
			-numa dist,src=0,dst=2,val=32 -numa dist,src=0,dst=3,val=32
			-numa dist,src=1,dst=2,val=32 -numa dist,src=1,dst=3,val=32)
		sockets=4
		;;
	*)
		echo "run.sh: nodes must be 2, 3 or 4, not \"$nodes\"" >&2
		exit 2
		;;
esac
memory=()
node_mb=$((2048 / nodes))
for n in $(seq 0 $((nodes - 1))); do
	memory+=(-object "memory-backend-ram,id=m$n,size=${node_mb}M")
done

# The kernel: Debian 12's, or sid's with VM_KERNEL=sid
kernel=$(bash "$top/test/vm/kernel.sh" "${VM_KERNEL:-bookworm}")

# The initramfs: static busybox, the init script, and the kernel's modules
# for virtio, 9p and overlay
initrd="$kernel/initrd.gz"
if [ ! -f "$initrd" ] || [ "$top/test/vm/init" -nt "$initrd" ]; then
	build=$(mktemp -d)
	mkdir -p "$build"/{bin,proc,sys,dev}
	cp "$(command -v busybox)" "$build/bin/busybox"
	cp "$top/test/vm/init" "$build/init"
	chmod +x "$build/init"
	cp -r "$kernel/modules" "$kernel/modules.order" "$build/"
	(cd "$build" && find . | cpio -o -H newc --quiet | gzip -1) > "$initrd"
	rm -rf "$build"
fi

results=$(mktemp -d /tmp/numasched-vm-XXXXXX)
chmod 777 "$results"
# what the guest should run: VM_ONLY (a regex of test names: multinode,
# locality) and the locality probe's LOCALITY_* settings
for v in VM_ONLY VM_PG_CONFIG VM_BENCH_ARGS SCX_WORKLOADS LOCALITY_RUNS LOCALITY_SECONDS LOCALITY_CONFIGS LOCALITY_DETAIL \
	CONNECTION_PAIRS CONNECTION_SECONDS CONNECTION_NODES COMPANION_SID SHARED_SECONDS SHARED_ROUNDS SHARED_JOB_RATE SHARED_THREADS BURSTS_UTILISATION; do
	[ -n "${!v:-}" ] && printf '%s=%q\n' "$v" "${!v}" >> "$results/env"
done
set +e
timeout "$timeout_s" qemu-system-x86_64 -machine pc -accel tcg,thread="${VM_TCG_THREAD:-multi}" -cpu max \
	-smp "${VM_CPUS:-4}",sockets="$sockets",cores=$((${VM_CPUS:-4} / sockets)),threads=1 -m $((node_mb * nodes))M \
	"${memory[@]}" "${numa[@]}" \
	-nographic -no-reboot -serial mon:stdio \
	-kernel "$kernel/vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 quiet panic=-1 numasched.test=$top/test/vm/inside.sh numasched.nodes=$nodes" \
	-virtfs local,path=/,mount_tag=hostroot,readonly=on,security_model=none \
	-virtfs local,path="$results",mount_tag=results,security_model=none \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 > "$results/console" 2>&1 < /dev/null
qemu_status=$?
set -e
if [ -n "${VM_BENCH_OUT:-}" ] && [ -d "$results/bench" ]; then
	mkdir -p "$VM_BENCH_OUT"
	cp -r "$results/bench/." "$VM_BENCH_OUT/"
	echo "run.sh: numabench results kept in $VM_BENCH_OUT"
fi
if [ "$qemu_status" = 124 ]; then
	tail -n 50 "$results/console"
	echo "run.sh: the $nodes-node guest hung (no exit within $timeout_s s)"
	exit 124
fi
cat "$results/output" 2>/dev/null || tail -n 50 "$results/console"
# the guest writes its status to the results share; isa-debug-exit makes
# qemu exit with (status << 1) | 1, which must agree
status=$(cat "$results/status" 2>/dev/null || true)
if [ -z "$status" ]; then
	# the guest stopped before its init could report (a panic reboots it, and
	# -no-reboot ends qemu with 0): its console says why
	echo "run.sh: the guest's console, its last 60 lines:"
	tail -n 60 "$results/console"
	rm -rf "$results"
	echo "run.sh: the $nodes-node guest reported no status (qemu exited with $qemu_status)"
	exit 1
fi
rm -rf "$results"
if [ $(((status << 1) | 1)) != "$qemu_status" ]; then
	echo "run.sh: qemu exited with $qemu_status, but the guest reported status $status"
	exit 1
fi
exit "$status"
