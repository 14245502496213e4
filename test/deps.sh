#!/usr/bin/env bash
# Installs what is missing for one purpose, and only that, with the suite's
# own PostgreSQL: 15 on Debian 12 (bookworm), 17 on Debian 13 (trixie), or
# the major PG_MAJOR names where the suite carries it.  Run as root.
#
#     bash test/deps.sh build    # compile numasched and numasched-plan
#     bash test/deps.sh package  # build + what dpkg-buildpackage needs for debian/
#     bash test/deps.sh bench    # build + a PostgreSQL server, pgbench, numabench, valgrind
#     bash test/deps.sh check    # bench + what pg_regress and the TAP tests need
#     bash test/deps.sh test     # bench + package + the test tools: TAP, fuzzers,
#                                # the sched_ext companion's compiler and libbpf,
#                                # PostgreSQL 17 to 19 (Debian's, unpacked), the qemu VMs
#     bash test/deps.sh major    # print the major it would choose, install nothing
#
# At run time numasched needs only the PostgreSQL it was built for: it makes
# the kernel's memory calls itself, without libnuma.  Installing the server
# package (postgresql-NN) does not create or
# start a cluster here: the demo and the tests make throwaway ones.
set -euo pipefail

purpose=${1:-test}
# shellcheck disable=SC1091
[ -r /etc/os-release ] && . /etc/os-release
if [ "${ID:-}" != debian ]; then
	echo "deps.sh: Debian 12 (bookworm) or 13 (trixie) only, not ${PRETTY_NAME:-this system}: install a C compiler, PostgreSQL's server headers (PGXS) and, for the demo, its server and pgbench by hand" >&2
	exit 2
fi
case "${VERSION_CODENAME:-}" in
	bookworm) major=15 ;;
	trixie) major=17 ;;
	*) major= ;;
esac
major=${PG_MAJOR:-$major}
if [ -z "$major" ]; then
	echo "deps.sh: Debian ${VERSION_CODENAME:-of no known suite} is neither 12 (bookworm) nor 13 (trixie): name the PostgreSQL major its apt sources carry, PG_MAJOR=NN bash test/deps.sh $purpose" >&2
	exit 2
fi
if [ "$purpose" = major ]; then
	echo "$major"
	exit 0
fi
build=(
	make gcc
	"postgresql-server-dev-$major" # PGXS and headers (it brings clang and llvm for the JIT bitcode)
	libkrb5-dev               # libpq/libpq-be.h includes gssapi
)
package=(
	"${build[@]}"
	build-essential debhelper postgresql-server-dev-all # dpkg-buildpackage, pg_buildext
	clang bpftool libbpf-dev            # numasched-scx, the sched_ext companion
)
bench=(
	"${build[@]}"
	"postgresql-$major" postgresql-contrib # the server, pgbench, pg_stat_statements
	numactl util-linux procps         # pinning (numactl, taskset)
	python3 python3-matplotlib        # bench/numabench and its plots
	valgrind                          # bench/overhead.sh's instruction counts
)
check=(
	"${bench[@]}"
	libipc-run-perl                     # PostgreSQL's TAP tests
)
test=(
	"${check[@]}"
	"${package[@]}"
	clang libclang-rt-dev               # libFuzzer for the fuzzers
	bpftool libbpf-dev                  # numasched-scx, the sched_ext companion (with clang)
	unzip git                           # make dist and its check
	qemu-system-x86 busybox-static cpio xz-utils # the multi-node VMs (test/vm/run.sh)
	patchelf                            # PostgreSQL 17 to 19 run with their own glibc (test/pg_major.sh)
	mmdebstrap                          # the trixie root (test/debian13.sh)
	prometheus-postgres-exporter        # numasched's figures through it (test/t/015_exporter.pl)
)
case "$purpose" in
	build) packages=("${build[@]}") ;;
	package) packages=("${package[@]}") ;;
	bench) packages=("${bench[@]}") ;;
	check) packages=("${check[@]}") ;;
	test) packages=("${test[@]}") ;;
	*)
		echo "deps.sh: the purpose is build, package, bench, check, test or major, not \"$purpose\"" >&2
		exit 2
		;;
esac

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]})) || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@" >/dev/null
}
apt-get update -qq
if ! apt-cache show "postgresql-server-dev-$major" >/dev/null 2>&1; then
	echo "deps.sh: this system's apt sources carry no PostgreSQL $major (postgresql-server-dev-$major); name another with PG_MAJOR=NN" >&2
	exit 1
fi
# Debian's server package creates and starts a "main" cluster on port 5432
# unless createcluster.conf says not to: say so while it is installed, then
# put the file back as it was
conf=/etc/postgresql-common/createcluster.conf
if [[ " ${missing[*]} " == *" postgresql-$major "* ]]; then
	apt_install postgresql-common
	saved=$(mktemp)
	cp -p "$conf" "$saved"
	echo 'create_main_cluster = false' >>"$conf"
	trap 'cp -p "$saved" "$conf"; rm -f "$saved"' EXIT
fi
# the exporter's package enables and starts a service listening on every
# interface: the tests start their own on loopback, so none starts here
# (invoke-rc.d asks policy-rc.d), and it stays disabled
if [[ " ${missing[*]} " == *" prometheus-postgres-exporter "* ]] && [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	apt_install "${missing[@]}" || { rm -f /usr/sbin/policy-rc.d; exit 1; }
	rm -f /usr/sbin/policy-rc.d
	systemctl disable prometheus-postgres-exporter >/dev/null 2>&1 || true
else
	apt_install "${missing[@]}"
fi
