#!/usr/bin/env bash
# Debian 13 (trixie), as a new user has it: a trixie root built from
# Debian's registry (mmdebstrap, minbase; cached in /var/cache/numasched-
# trixie like the VMs' kernels, the host's packages untouched), in which a
# copy of the tree does what the README says, as root: "bash test/deps.sh
# build" installs trixie's PostgreSQL 17 headers and numasched is built and
# installed; the README's first command runs in its short form ("bash
# bench/demo.sh --short": the server, pgbench, numabench, every question
# once); pg_regress runs against the build; then the Debian packages are
# built (dpkg-buildpackage), installed with apt-get and their autopkgtests
# run (pg_regress and every TAP test as postgres; the companion's package,
# whose loader, on a kernel without sched_ext, says what it needs), and a
# cluster of trixie's postgresql-17 preloaded with numasched places a
# session, read back from /proc.  Run as root:
#
#     bash test/debian13.sh
#     bash test/debian13.sh --prepare   # only download and make the base root
#     bash test/debian13.sh --demo      # the README's first command, whole, in the root
#     bash test/debian13.sh --test      # the README's second command, whole, in the root
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=/var/cache/numasched-trixie
fail() {
	echo "debian13.sh: $*" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || fail "run as root (mmdebstrap, chroot)"

# The base root, made once a day at most (the suite moves): trixie's minbase
# and the archive of packages downloaded into it, kept between runs
base=$cache/base-$(date +%Y%m%d)
if [ ! -f "$base/.ready" ]; then
	if ! command -v mmdebstrap >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null ||
			fail "could not install mmdebstrap"
	fi
	rm -rf "$cache"/base-*
	mkdir -p "$cache/archives"
	mirror=$(grep -rhoE '(https?://[^ ]+/debian)/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		head -1 | tr -d ' ' || true)
	mmdebstrap --quiet --variant=minbase --include=ca-certificates trixie "$base" "${mirror:-http://deb.debian.org/debian}" ||
		fail "mmdebstrap could not make a trixie root"
	touch "$base/.ready"
fi
[ "${1:-}" = --prepare ] && exit 0

# This run's root: the base under an overlay, so that every run starts from
# a fresh trixie; the package archive and the tree mounted in
run=$(mktemp -d /tmp/numasched-trixie-XXXXXX)
root=$run/root
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[i]}" 2>/dev/null || true
	done
	rm -rf "$run"
}
trap cleanup EXIT
mkdir -p "$run"/{upper,work} "$root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root" && mounted+=("$root")
for fs in proc sys dev dev/pts; do
	mount --rbind "/$fs" "$root/$fs" && mounted+=("$root/$fs")
done
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" && mounted+=("$root/dev/shm")
mount --bind "$cache/archives" "$root/var/cache/apt/archives" && mounted+=("$root/var/cache/apt/archives")
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# the machine's own settings for reaching its registry, which are not the
# suite's userland: a mirror that serves a snapshot of the suites needs
# Check-Valid-Until off, or sid's and experimental's Release files "expired"
# (test/pg_major.sh, test/vm/kernel.sh sid) in the root while the host reads them
apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
	>"$root/etc/apt/apt.conf.d/99numasched-host" || true
# the tree as a checkout has it: what git tracks
mkdir -p "$root/src/numasched"
git -C "$top" ls-files -z | tar -C "$top" --null -T - -cf - | tar -C "$root/src/numasched" -xf -

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 bash -c "$1"; }

echo "-- trixie: $(in_root '. /etc/os-release; echo "$PRETTY_NAME"'), kernel $(uname -r) (the host's)"
if [ "${1:-}" = --demo ]; then
	echo "-- the README's first command, whole: bash bench/demo.sh"
	in_root 'cd /src/numasched && bash bench/demo.sh'
	exit
fi
if [ "${1:-}" = --test ]; then
	# a clone's, with its history: make dist and the release check read git
	echo "-- the README's second command, whole: bash test/run.sh"
	cp -a "$top/.git" "$root/src/numasched/.git"
	in_root 'cd /src/numasched && bash test/run.sh'
	exit
fi
echo "-- the README's way: bash test/deps.sh build, make, make install"
in_root 'cd /src/numasched && bash test/deps.sh build && make -s && make -s install' >"$run/build.log" 2>&1 ||
	{ tail -n 30 "$run/build.log"; fail "the build failed in the trixie root"; }
in_root 'pg_config --version'
echo "-- the README's first command, short: bash bench/demo.sh --short"
in_root 'cd /src/numasched && bash bench/demo.sh --short' >"$run/demo.log" 2>&1 ||
	{ tail -n 30 "$run/demo.log"; fail "the demo failed in the trixie root"; }
sed -n '/^question /,/^$/p' "$run/demo.log" | sed 's/^/   /'
echo "-- pg_regress against the build, as postgres"
in_root 'cd /src/numasched && bash test/deps.sh check' >"$run/deps.log" 2>&1 ||
	{ tail -n 30 "$run/deps.log"; fail "test/deps.sh check failed in the trixie root"; }
in_root 'chown -R postgres: /src/numasched && cd /src/numasched &&
	runuser -u postgres -- make -s installcheck TAP_TESTS= || { cat regression.diffs; exit 1; }' ||
	fail "pg_regress failed against trixie's PostgreSQL"
echo "-- the Debian packages: dpkg-buildpackage, apt-get install, their autopkgtests"
# debian/control names the packages for bookworm's 15: pg_buildext makes it trixie's
in_root 'cd /src/numasched && make -s clean && bash test/deps.sh package && pg_buildext updatecontrol &&
	dpkg-buildpackage -b -us -uc' \
	>"$run/package.log" 2>&1 || { tail -n 30 "$run/package.log"; fail "dpkg-buildpackage failed in the trixie root"; }
ls "$root"/src/*.deb | sed 's|.*/|   |'
in_root 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /src/postgresql-17-numasched_*.deb /src/numasched-scx_*.deb >/dev/null &&
	dpkg -s postgresql-17-numasched numasched-scx | grep -E "^(Package|Version|Depends):"' ||
	fail "apt-get install of the packages failed"
in_root 'cd /src/numasched && debian/tests/installcheck' >"$run/installcheck.log" 2>&1 ||
	{ grep -E "^(not ok|#   Failed test|# +(got|expected):|t/.*\.pl \.|Failed [0-9]+/)" "$run/installcheck.log" | head -n 80; fail "the autopkgtest installcheck failed on the installed postgresql-17-numasched"; }
grep -E "^(All tests successful|Files=)" "$run/installcheck.log" | sed 's/^/   installcheck: /'
in_root 'cd /src/numasched && debian/tests/scx' | sed 's/^/   /' ||
	fail "the autopkgtest scx failed on the installed numasched-scx"
in_root 'pg_createcluster 17 main >/dev/null &&
	echo "shared_preload_libraries = '"'"'numasched'"'"'" >>/etc/postgresql/17/main/postgresql.conf &&
	echo "numasched.groups_per_node = 2" >>/etc/postgresql/17/main/postgresql.conf &&
	echo "numasched.group_binding = strict" >>/etc/postgresql/17/main/postgresql.conf &&
	pg_ctlcluster 17 main start' || fail "the cluster of postgresql-17 did not start with numasched"
in_root 'runuser -u postgres -- psql -X -A -t -c "CREATE EXTENSION numasched" -c "
	SELECT pid, cpus, (regexp_match(pg_read_file('"'"'/proc/self/status'"'"'), '"'"'Cpus_allowed_list:\s*(\S+)'"'"'))[1]
	  FROM numasched_processes WHERE pid = pg_backend_pid()"' >"$run/placed" || true
in_root 'pg_ctlcluster 17 main stop' || true
IFS='|' read -r pid cpus kernel < <(tail -n 1 "$run/placed")
echo "   session ${pid:-?}: numasched_processes.cpus ${cpus:-none}, Cpus_allowed_list in /proc ${kernel:-?}"
[ -n "${cpus:-}" ] && [ "$cpus" = "$kernel" ] || fail "the session of the packaged numasched was not placed as the view says"
echo "-- Debian 13: the README's way, the demo's short form, pg_regress, the packages and their autopkgtests pass with trixie's PostgreSQL 17"
