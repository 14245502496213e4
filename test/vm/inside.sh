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
pgxs=$(cd "$(dirname "$(pg_config --pgxs)")/../.." && pwd)
cd "$work" || exit 1
# su needs PAM, which cannot read the host's shadow file over 9p: setpriv
setpriv --reuid=postgres --regid=postgres --init-groups \
	env HOME="$work" PATH="$(pg_config --bindir):$PATH" TESTDIR="$work" \
	PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
	prove -v -I "$pgxs/src/test/perl" -I test/t test/vm/t/*.pl
