#!/bin/bash
# Runs inside the test VM as root, beside the companion's tests (which run
# as postgres and may neither load a BPF scheduler, nor run as another
# user, nor take a CPU offline): reads commands from the FIFO $1 and acts on
# numasched-scx ($2, the default loader), whose output goes to $3.
#
#     start [LOADER]   loads it (the test then watches /sys/kernel/sched_ext/root/ops)
#     kill             kills it with SIGKILL, as a crash or an OOM kill would
#     stop             stops it with SIGTERM, as systemctl stop does
#     loops N [ext]    N busy loops of another user (nobody), not PostgreSQL's;
#                      with ext, each switches itself to SCHED_EXT first
#     stoploops        ends them
#     offline CPU      takes a CPU offline; online CPU brings it back
#     monitor          numasched-scx --monitor once, into the log
set -u
fifo=$1 companion=$2 log=$3
loader=
loops=()
while true; do
	while read -r command arg1 arg2; do
		case "$command" in
			start)
				"${arg1:-$companion}" --stats 1 >>"$log" 2>&1 &
				loader=$!
				;;
			kill) [ -n "$loader" ] && kill -KILL "$loader" && wait "$loader" ;;
			stop) [ -n "$loader" ] && kill -TERM "$loader" && wait "$loader" ;;
			loops)
				for _ in $(seq 1 "$arg1"); do
					# sched_setscheduler(0, SCHED_EXT, {0}): no privilege needed
					setpriv --reuid=nobody --regid=nogroup --clear-groups perl -e \
						'syscall(144, 0, 7, pack("i", 0)) if $ARGV[0] eq "ext"; 1 while 1' "${arg2:-}" &
					loops+=($!)
				done
				;;
			stoploops)
				((${#loops[@]})) && kill "${loops[@]}" && wait "${loops[@]}" 2>/dev/null
				loops=()
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
