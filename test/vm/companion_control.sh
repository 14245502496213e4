#!/bin/bash
# Runs inside the test VM as root, beside test/vm/t/080_companion.pl (which
# runs as postgres and may not load a BPF scheduler): reads commands from the
# FIFO $1 and acts on numasched-scx ($2), whose output goes to $3.
#
#     start   loads it (the test then watches /sys/kernel/sched_ext/root/ops)
#     kill    kills it with SIGKILL, as a crash or an OOM kill would
#     stop    stops it with SIGTERM, as systemctl stop does
set -u
fifo=$1 companion=$2 log=$3
loader=
while true; do
	while read -r command; do
		case "$command" in
			start) "$companion" --stats 1 >>"$log" 2>&1 & loader=$! ;;
			kill) [ -n "$loader" ] && kill -KILL "$loader" && wait "$loader" ;;
			stop) [ -n "$loader" ] && kill -TERM "$loader" && wait "$loader" ;;
			quit) exit 0 ;;
		esac
	done <"$fifo"
done
