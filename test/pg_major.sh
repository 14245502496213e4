#!/usr/bin/env bash
# Prepares a PostgreSQL major other than the system's 15 for building and
# testing numasched, and prints the path of its pg_config.  Run as root:
#
#     PG_CONFIG=$(bash test/pg_major.sh 19) && make PG_CONFIG="$PG_CONFIG"
#
# Debian 12 has no PostgreSQL 17, 18 or 19.  Debian's own packages of them
# (from trixie, sid, experimental: the newest the suites carry, not pinned
# here) are built with libnuma, so that PostgreSQL's own NUMA functions are
# real beside numasched's; but they need a newer glibc than this one.  So a
# major is Debian's server, client and headers together with the shared
# libraries they need from the same suite, glibc among them, unpacked into
# /var/cache/numasched-pg/MAJOR (like the VM's kernel) and never installed:
# its programs are set (patchelf) to start with that glibc's loader and to
# find their libraries there first.  The extension, built here by Debian 12's
# gcc against the older glibc, loads into such a server as into any newer
# one.  "make install" with this pg_config installs into those directories.
set -euo pipefail

major=${1:-}
case "$major" in
	17) suites=(trixie) ;;
	18) suites=(sid) ;;
	# experimental holds the server until it reaches sid; its libraries are sid's
	19) suites=(sid experimental) ;;
	*)
		echo "pg_major.sh: MAJOR must be 17, 18 or 19, not \"$major\"" >&2
		exit 2
		;;
esac
cache=/var/cache/numasched-pg
dir=$cache/$major
root=$dir/root
fail() {
	echo "pg_major.sh: $*" >&2
	exit 1
}

# Everything below is rebuilt when this script changes.
stamp="$dir/.ready-$(sha1sum "${BASH_SOURCE[0]}" | cut -c1-12)"
if [ -f "$stamp" ]; then
	echo "$dir/bin/pg_config"
	exit 0
fi
[ "$(id -u)" = 0 ] || fail "PostgreSQL $major is not prepared yet; run as root to download it"
command -v patchelf >/dev/null || fail "patchelf is missing (bash test/deps.sh test)"
rm -rf "$dir"
mkdir -p "$dir"/{debs,bin}
# Debian's packages, from the suites that carry the major
. "$(dirname "${BASH_SOURCE[0]}")/debian_suite.sh"
debian_suite_apt "$dir" "${suites[@]}" ||
	fail "cannot read Debian's ${suites[*]} from $mirror (see $dir/apt/log)"

# The newest build of the major in those suites (a suite's candidate would
# be the older one where experimental holds a newer)
version=$(apt-cache "${apt_opts[@]}" show "postgresql-$major" 2>/dev/null | sed -n 's/^Version: //p' |
	sort -V | tail -n 1)
[ -n "$version" ] || fail "no postgresql-$major in Debian's ${suites[*]} on $mirror"

# The server, client and headers, and the shared libraries they need, and
# those need, from the first of each package's dependency alternatives;
# programs and data they depend on (postgresql-common, perl, locales) are
# not needed to run the server's own programs
downloads=()
for package in $(debian_library_closure '*perl*' "postgresql-$major" "postgresql-client-$major" \
	"postgresql-server-dev-$major"); do
	# the server's own libraries (libpq) are of its build
	case "$package" in
		postgresql-* | libpq*) downloads+=("$package=$version") ;;
		*) downloads+=("$package") ;;
	esac
done
(cd "$dir/debs" && timeout 600 apt-get "${apt_opts[@]}" download -qq "${downloads[@]}") >>"$dir/apt/log" 2>&1 ||
	fail "cannot download PostgreSQL $version and its libraries from ${suites[*]} (see $dir/apt/log)"
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
rm -rf "$dir/apt/lists" "$dir/apt/cache" "$dir/debs"

# Its programs start with its glibc's loader and find its libraries first
# (DT_RPATH, unlike RUNPATH, holds for the libraries they load in turn and
# for the extensions the server loads)
libdir=$root/usr/lib/postgresql/$major/lib
loader=$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[ -e "$loader" ] || fail "Debian's libc6 from ${suites[*]} has no $loader"
for program in "$root/usr/lib/postgresql/$major/bin"/* "$libdir"/pgxs/src/test/*/*; do
	[ -f "$program" ] && [ "$(head -c 4 "$program")" = $'\x7fELF' ] || continue
	patchelf --set-interpreter "$loader" --force-rpath \
		--set-rpath "$root/usr/lib/x86_64-linux-gnu:$libdir" "$program"
done
"$root/usr/lib/postgresql/$major/bin/postgres" --version >/dev/null 2>&1 ||
	fail "PostgreSQL $version does not run here (see $root/usr/lib/postgresql/$major/bin/postgres --version)"

# Debian's newer gcc has options this one lacks: keep only the flags this
# compiler knows, so that a real warning is not drowned out
global=$libdir/pgxs/src/Makefile.global
for flag in $(sed -n 's/^CFLAGS[^=]*=//p' "$global" | grep -oE -- '-[Wf][^ ]+' | sort -u); do
	gcc -Werror "$flag" -E -x c /dev/null >/dev/null 2>&1 ||
		sed -i "/^CFLAGS/s/ $flag\b//" "$global"
done
# Debian's clang for the JIT bitcode is not this one, and the JIT package is
# not unpacked: no bitcode
sed -i 's/^with_llvm\s*=.*/with_llvm = no/' "$global"

# The headers were configured against a glibc that has strlcpy; Debian 12's
# has not declared it (the newer glibc the server runs with defines it)
cat >"$dir/strlcpy.h" <<'EOF'
#include <stddef.h>
extern size_t strlcpy(char *dst, const char *src, size_t siz);
EOF

# Its own pg_config (relocatable: it answers with the paths under $root),
# but for the flags this build needs on top of Debian's
cat >"$dir/bin/pg_config" <<EOF
#!/bin/sh
# pg_config of Debian's PostgreSQL $version, unpacked by test/pg_major.sh
for option in "\$@"; do
	case "\$option" in
		--cc) echo gcc ;;
		--cppflags) echo "-include $dir/strlcpy.h" ;;
		*) "$root/usr/lib/postgresql/$major/bin/pg_config" "\$option" || exit 1 ;;
	esac
done
EOF
chmod 755 "$dir/bin/pg_config"
[ "$("$dir/bin/pg_config" --pkglibdir)" = "$libdir" ] ||
	fail "Debian's pg_config $version does not answer with the unpacked paths: $("$dir/bin/pg_config" --pkglibdir)"
chmod -R a+rX "$dir"
touch "$stamp"
echo "$dir/bin/pg_config"
