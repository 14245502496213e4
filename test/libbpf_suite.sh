#!/usr/bin/env bash
# Prepares the libbpf of a Debian suite, sid's by default (the newest Debian
# carries, the libbpf of the distributions that ship a kernel with
# sched_ext), or trixie's (Debian 13's, for its backports' kernel), for
# building numasched-scx against it, and prints its root for the Makefile:
#
#     make numasched-scx SCX_LIBBPF_ROOT=$(bash test/libbpf_suite.sh)
#     make numasched-scx SCX_LIBBPF_ROOT=$(bash test/libbpf_suite.sh trixie)
#
# Like test/pg_major.sh: libbpf1, libbpf-dev and the shared libraries they
# need, the suite's glibc among them, unpacked into /var/cache/numasched-libbpf
# and never installed; the loader built with them starts with that glibc's
# loader and finds its libraries there.  Run as root the first time.
set -euo pipefail

suite=${1:-sid}
cache=/var/cache/numasched-libbpf
dir=$cache/$suite
root=$dir/root
fail() {
	echo "libbpf_suite.sh: $*" >&2
	exit 1
}
case "$suite" in
	sid | trixie) ;;
	*) fail "the suite is sid or trixie, not \"$suite\"" ;;
esac

stamp="$dir/.ready-$(sha1sum "${BASH_SOURCE[0]}" | cut -c1-12)"
if [ ! -f "$stamp" ]; then
	[ "$(id -u)" = 0 ] || fail "$suite's libbpf is not prepared yet; run as root to download it"
	rm -rf "$dir"
	mkdir -p "$dir/debs"
	. "$(dirname "${BASH_SOURCE[0]}")/debian_suite.sh"
	debian_suite_apt "$dir" "$suite" || fail "cannot read Debian's $suite from $mirror (see $dir/apt/log)"
	# libbpf and the shared libraries it needs, and those need (not their headers)
	mapfile -t packages < <(debian_library_closure '*-dev' libbpf1 libbpf-dev)
	(cd "$dir/debs" && timeout 600 apt-get "${apt_opts[@]}" download -qq "${packages[@]}") >>"$dir/apt/log" 2>&1 ||
		fail "cannot download ${packages[*]} from $suite (see $dir/apt/log)"
	for deb in "$dir"/debs/*.deb; do
		dpkg-deb -x "$deb" "$root"
	done
	rm -rf "$dir/apt/lists" "$dir/apt/cache" "$dir/debs"
	[ -f "$root/usr/include/bpf/libbpf_version.h" ] || fail "$suite's libbpf-dev has no bpf/libbpf_version.h"
	[ -e "$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ] || fail "$suite's libc6 has no loader"
	touch "$stamp"
fi
echo "$root"
