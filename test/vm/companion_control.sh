#!/bin/bash
# Runs inside the test VM as root, beside the companion's tests (which run
# as postgres and may neither load a BPF scheduler, nor run as another
# user, nor take a CPU offline): reads commands from the FIFO $1 and acts on
# numasched-scx ($2, the default loader), whose output goes to $3.
#
#     start [LOADER]   loads it (the test then watches /sys/kernel/sched_ext/root/ops)
#     kill             kills it with SIGKILL, as a crash or an OOM kill would
#     stop             stops it with SIGTERM, as systemctl stop does (still
#                      there 30 s later: its stack, the running tasks and the
#                      kernel's last lines into the log, lines "stop: ...")
#     sysrq            unloads it as an operator would (SysRq-S), and waits
#                      for the loader to exit
#     (each of these three logs "numasched-scx exited STATUS")
#     loops N [ext]    N busy loops of another user (nobody), not PostgreSQL's;
#                      with ext, each switches itself to SCHED_EXT first
#     job N            N busy loops of another user in a session of their own
#                      (setsid), as a build started from a login would be
#     threads BIN N SECONDS  BIN (test/vm/busy_threads.c, built) as another
#                      user in a session of its own, on node 0's CPUs: N
#                      threads that never sleep, for SECONDS
#     cgroups          a busy loop in each of two cpu cgroups (cgroup v2)
#                      with cpu.weight 100 and 300, both on CPU 0, and an
#                      empty cgroup "limited" with cpu.max 50000 100000
#     nice             two users' busy loops in one session, at nice 0 and
#                      nice 10, both on CPU 0
#     cputime N SECONDS  the CPU time each loop used in SECONDS, into the log
#                      as "cputime N: TICKS TICKS ..." (in the order started)
#     stoploops        ends them
#     offline CPU      takes a CPU offline; online CPU brings it back
#     monitor          numasched-scx --monitor once, into the log
set -u
fifo=$1 companion=$2 log=$3
loader=
loops=()
reap() {
	wait "$loader"
	echo "numasched-scx exited $?" >>"$log"
	loader=
}
# a shell's background jobs, all started: written by the shell into FILE
# (started FILE), read by this one (pids_of FILE) once there, as an exec'd
# loop keeps its pid.  Asking pgrep a second later missed the slower ones
started() { echo $(jobs -p) >"$1.part" && mv "$1.part" "$1"; }
export -f started
pids_of() {
	for _ in $(seq 1 300); do [ -s "$1" ] && break; sleep 0.1; done
	cat "$1" && rm -f "$1"
}
# after SIGTERM, where the loader is still there in 30 s: what it and the
# kernel are doing, for the test's log (an unload takes 0.2 to 1.2 s here;
# once, in CI, over 60 s)
stopping() {
	for _ in $(seq 1 300); do
		[ "$(awk '{ print $3 }' "/proc/$loader/stat" 2>/dev/null)" = Z ] || [ ! -e "/proc/$loader" ] && return 0
		sleep 0.1
	done
	{
		echo "stop: numasched-scx still runs 30 s after SIGTERM; sched_ext $(cat /sys/kernel/sched_ext/state), ops '$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)'"
		echo "stop: its state: $(awk '/^State:/ { print $2, $3 }' "/proc/$loader/status"); its kernel stack:"
		cat "/proc/$loader/stack"
		echo "stop: the tasks that are not sleeping:"
		ps -eLo pid,tid,cls,ni,stat,psr,wchan:32,comm | awk 'NR == 1 || $5 !~ /^[SI]/'
		echo "stop: the kernel's last lines:"
		dmesg | tail -n 40
	} >>"$log" 2>&1
}
while true; do
	while read -r command arg1 arg2; do
		case "$command" in
			start)
				"${arg1:-$companion}" --stats 1 >>"$log" 2>&1 &
				loader=$!
				;;
			kill) [ -n "$loader" ] && kill -KILL "$loader" && reap ;;
			stop) [ -n "$loader" ] && kill -TERM "$loader" && stopping && reap ;;
			# the kernel's own unload: the loader is left to see it and exit
			sysrq) echo S >/proc/sysrq-trigger && [ -n "$loader" ] && reap ;;
			loops)
				for _ in $(seq 1 "$arg1"); do
					# sched_setscheduler(0, SCHED_EXT, {0}): no privilege needed
					setpriv --reuid=nobody --regid=nogroup --clear-groups perl -e \
						'my $param = pack("i", 0); syscall(144, 0, 7, $param) == 0 or die "SCHED_EXT: $!" if $ARGV[0] eq "ext"; 1 while 1' \
						"${arg2:-}" &
					loops+=($!)
				done
				;;
			job)
				# one session (one autogroup) for all of them, as one build's
				setsid bash -c 'for _ in $(seq 1 "$1"); do
						setpriv --reuid=nobody --regid=nogroup --clear-groups perl -e "1 while 1" &
					done; started "$2"; wait' _ "$arg1" "$log.job" &
				loops+=($! $(pids_of "$log.job"))
				;;
			threads)
				# arg2 is "N SECONDS"; nobody's RLIMIT_NPROC would stop at
				# half the kernel's threads-max (8,192 in a 2 GB VM)
				read -r count seconds <<<"$arg2"
				setsid bash -c 'ulimit -u $(($2 + 1000)) && exec taskset -c "$(cat /sys/devices/system/node/node0/cpulist)" \
					setpriv --reuid=nobody --regid=nogroup --clear-groups "$1" "$2" "$3"' _ "$arg1" "$count" "$seconds" >>"$log" 2>&1 &
				loops+=($!)
				;;
			cgroups)
				cg=/sys/fs/cgroup
				grep -q "^cgroup2 $cg " /proc/mounts || mount -t cgroup2 none "$cg"
				grep -qw cpu "$cg/cgroup.subtree_control" || echo +cpu >"$cg/cgroup.subtree_control"
				for weight in 100 300; do
					mkdir -p "$cg/weight$weight" && echo "$weight" >"$cg/weight$weight/cpu.weight"
					bash -c 'echo $$ >"$1/cgroup.procs" && exec taskset -c 0 setpriv --reuid=nobody --regid=nogroup \
						--clear-groups perl -e "1 while 1"' _ "$cg/weight$weight" &
					loops+=($!)
				done
				mkdir -p "$cg/limited" && echo "50000 100000" >"$cg/limited/cpu.max"
				;;
			nice)
				# one session for both: the kernel weighs them by nice alone
				setsid bash -c 'taskset -c 0 setpriv --reuid=nobody --regid=nogroup --clear-groups perl -e "1 while 1" &
					taskset -c 0 setpriv --reuid=daemon --regid=daemon --clear-groups nice -n 10 perl -e "1 while 1" &
					started "$1"; wait' _ "$log.nice" &
				loops+=($! $(pids_of "$log.nice"))
				;;
			cputime)
				# utime + stime of each loop (not the shells around them), twice
				ticks() { for p in "${loops[@]}"; do
					[ "$(cat "/proc/$p/comm" 2>/dev/null)" = perl ] && awk '{ printf "%d ", $14 + $15 }' "/proc/$p/stat"
				done; }
				before=($(ticks))
				sleep "$arg2"
				after=($(ticks))
				line="cputime $arg1:"
				for i in "${!after[@]}"; do line+=" $((after[i] - ${before[i]:-0}))"; done
				echo "$line" >>"$log"
				;;
			stoploops)
				((${#loops[@]})) && kill "${loops[@]}" 2>/dev/null
				wait "${loops[@]}" 2>/dev/null
				loops=()
				for d in /sys/fs/cgroup/weight100 /sys/fs/cgroup/weight300 /sys/fs/cgroup/limited; do
					[ -d "$d" ] && for _ in 1 2 3 4 5; do rmdir "$d" 2>/dev/null && break; sleep 0.2; done
				done
				;;
			offline) echo 0 >"/sys/devices/system/cpu/cpu$arg1/online" ;;
			online) echo 1 >"/sys/devices/system/cpu/cpu$arg1/online" ;;
			monitor) { echo "monitor:"; "$companion" --monitor; } >>"$log" 2>&1 ;;
			quit)
				((${#loops[@]})) && kill "${loops[@]}" 2>/dev/null
				exit 0
				;;
		esac
	done <"$fifo"
done
