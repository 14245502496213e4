# Sourced by test/pg_major.sh and test/vm/kernel.sh: apt options for reading
# Debian suites other than the system's own (trixie, sid, experimental) from
# the mirror of the system's sources, with a sources list, state and cache of
# their own under a directory (an empty dpkg status: nothing counts as
# installed), so that the system's apt is untouched.
#
#     debian_suite_apt DIR SUITE...   # sets apt_opts and mirror; fails with
#                                     # apt's output in DIR/apt/log
#     apt-get "${apt_opts[@]}" download PACKAGE
#     debian_library_closure SKIP PACKAGE...   # the packages and the shared
#                                     # libraries they need, and those need
debian_suite_apt() {
	local dir=$1 suite
	shift
	mkdir -p "$dir"/apt/{lists/partial,cache/archives/partial,sources.list.d}
	: >"$dir/apt/status"
	mirror=$(grep -rhoE '(https?://[^ ]+/debian)/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		head -1 | tr -d ' ' || true)
	[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
	for suite in "$@"; do
		echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} $suite main"
	done >"$dir/apt/sources.list"
	apt_opts=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o "Dir::Etc::sourceparts=$dir/apt/sources.list.d"
		-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o "Dir::State::status=$dir/apt/status"
		-o APT::Architecture=amd64 -o APT::Architectures::=amd64
		-o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o APT::Sandbox::User=root)
	timeout 600 apt-get "${apt_opts[@]}" update -qq >"$dir/apt/log" 2>&1
}

# Prints PACKAGE... and, level by level, the libraries they depend on (lib*
# and zlib1g, the first of each alternative), but those matching the glob
# SKIP: what is needed to run their programs, not to install them.
debian_library_closure() {
	local skip=$1 package dep
	shift
	local -A wanted=()
	local level=("$@") next
	while ((${#level[@]})); do
		for package in "${level[@]}"; do
			wanted[$package]=1
		done
		# one apt-cache call a level: each reads the suites' whole package lists
		next=()
		for dep in $(apt-cache "${apt_opts[@]}" depends --no-recommends --no-suggests --no-conflicts \
			--no-breaks --no-replaces --no-enhances "${level[@]}" 2>/dev/null |
			awk '/^  Depends:/ && !alt { print $2 } { alt = ($1 ~ /^\|/) }' | sed 's/:any$//' | sort -u); do
			# shellcheck disable=SC2254
			case "$dep" in
				$skip) ;;
				lib* | zlib1g) [ -n "${wanted[$dep]:-}" ] || next+=("$dep") ;;
			esac
		done
		level=("${next[@]}")
	done
	printf '%s\n' "${!wanted[@]}"
}
