#!/usr/bin/env bash
# numasched's test command: installs what is missing, builds and installs
# numasched, then runs every test, with the suite's own PostgreSQL (15 on
# Debian 12, 17 on Debian 13; test/deps.sh chooses).  Run as root:
#
#     bash test/run.sh
#
# The PostgreSQL tests run as the "postgres" user in a scratch copy of the
# tree, so that nothing root-owned is left in the checkout and PostgreSQL
# (which refuses to run as root) can write its temporary instances.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

bash test/deps.sh test || exit 1
major=$(bash test/deps.sh major) || exit 1

# A copy of the tree without version control or build products (what
# .gitignore names), for a build against another major and for the tests
# that run as postgres
copy_tree() {
	local excludes=() pattern
	while read -r pattern; do
		case "$pattern" in
			'' | '#'*) continue ;;
			/*) pattern=".$pattern" ;;
		esac
		excludes+=("--exclude=${pattern%/}")
	done <"$top/.gitignore"
	mkdir -p "$1"
	tar -C "$top" --exclude-vcs "${excludes[@]}" -cf - . | tar -xf - -C "$1"
}

# Runs a build command, failing on a compiler warning as well as on an error
build_quietly() {
	local out status
	out=$("$@" 2>&1)
	status=$?
	if [ $status != 0 ] || grep -q 'warning:' <<<"$out"; then
		grep -E 'warning:|error:' -A3 <<<"$out" | head -n 60
		return 1
	fi
}

# What later steps download (PostgreSQL majors, the trixie root, the VMs'
# kernels, sid's libbpf) is fetched in the background while the first steps
# use the CPUs: on a fresh machine the downloads would otherwise add their
# minutes one after another.  Each step still calls the same script, which
# finds its cache ready; before the first step that needs one, the run
# waits for that chain (a failed download is retried there, and reported).
# The chains run as background work, in a session of their own whose
# autogroup is at nice 19 (and at nice 19 themselves, for when autogroups are
# off), so that the timing checks of the first steps keep their CPUs.
prefetch_log=$(mktemp /tmp/numasched-prefetch-XXXXXX)
prefetch_majors= prefetch_vms=
prefetch() {
	setsid -w bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec nice -n 19 ionice -c 3 "$@"' _ "$@" >>"$prefetch_log" 2>&1 </dev/null &
}
if [ "$(id -u)" = 0 ]; then
	prefetch bash -c '
		[ "$1" != 15 ] || bash test/debian13.sh --prepare
		for other in 17 18 19; do
			[ "$other" = "$1" ] || { [ "$other" = 17 ] && [ "$1" = 15 ]; } || bash test/pg_major.sh "$other"
		done' _ "$major"
	prefetch_majors=$!
	prefetch bash -c 'bash test/vm/kernel.sh; bash test/vm/kernel.sh sid; bash test/libbpf_suite.sh'
	prefetch_vms=$!
fi

echo "== build and install (PostgreSQL $major)"
build_quietly make -s && build_quietly make -s install || { echo "build failed"; exit 1; }
make -s -C test unit fuzz >/dev/null || { echo "test build failed"; exit 1; }

passed=0
failed=0
failures=()
failing=()
# A step's output is kept too: a failed step's failing checks are repeated at
# the end, where a CI log's tail shows them.  The step runs in a subshell of
# the pipeline, so what it must leave behind goes to files (scratch_dir).
step() {
	local name=$1 started=$SECONDS log status
	shift
	echo "== $name"
	log=$(mktemp /tmp/numasched-step-XXXXXX)
	"$@" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	if [ "$status" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$name")
		failing+=("$(failing_checks <"$log")")
	fi
	rm -f "$log"
	echo "-- $((SECONDS - started)) s"
}

# The lines of a step's output that say what failed: TAP's failures and their
# diagnostics, prove's verdicts, pg_regress's (15), the VM runner's and the
# builds' complaints
failing_checks() {
	grep -E '^[[:space:]]*(not ok|# +Failed test|# +(got|expected):|# +at .* line|Bail out|Dubious|Parse errors|No plan|Failed [0-9]+/|Failed tests?:)|\(Wstat: [1-9]|^run\.sh: |build against|\.\.\. FAILED|tests? failed|failed$' |
		head -n 30
}

# A directory for a step's scratch copy, removed when the run ends
scratch_list=$(mktemp /tmp/numasched-scratches-XXXXXX)
scratch_dir() {
	local dir
	dir=$(mktemp -d "/tmp/$1-XXXXXX") || return 1
	echo "$dir" >>"$scratch_list"
	echo "$dir"
}

# pg_regress and the TAP tests against PostgreSQL 17, 18 or 19, put together by
# test/pg_major.sh, as postgres in a scratch copy of the tree: numasched is
# built against their headers (no warning allowed) and installed into them.
pg_suite() {
	local major=$1 tests=${2:-} pg_config scratch
	pg_config=$(bash test/pg_major.sh "$major") || return 1
	scratch=$(scratch_dir "numasched-test-$major") || return 1
	copy_tree "$scratch"
	chown -R postgres: "$scratch"
	build_quietly runuser -u postgres -- make -s -C "$scratch" PG_CONFIG="$pg_config" \
		COPT="$("$pg_config" --cppflags)" &&
		build_quietly make -s -C "$scratch" PG_CONFIG="$pg_config" install ||
		{ echo "build against PostgreSQL $major failed"; return 1; }
	if ! runuser -u postgres -- make -s -C "$scratch" PG_CONFIG="$pg_config" installcheck ${tests:+PROVE_TESTS="$tests"}; then
		[ -f "$scratch/regression.diffs" ] && head -n 200 "$scratch/regression.diffs"
		return 1
	fi
}

# Every TAP test runs on the suite's major, on 17 (Debian 13's, installed) and
# on 19 (the newest); 18 differs from 17 by one switch at build time
# (pg_compat.h: PG_MODULE_MAGIC_EXT, which 001 reads back), so it runs
# pg_regress and the TAP tests of the glue (placement, fail-open, classes,
# views through the exporter, session memory, decisions in flight, faults),
# not the scheduling ones, whose four minutes the hour has no room for
glue_tests() {
	[ "$1" = 18 ] || return 0
	echo test/t/001_placement.pl test/t/002_fail_open.pl test/t/003_coexistence.pl test/t/006_classes.pl \
		test/t/015_exporter.pl test/t/016_session_memory.pl test/t/017_decisions_in_flight.pl test/t/018_faults.pl
}

# The suite's PostgreSQL as a user installs it: the Debian packages, built
# from a scratch copy of the tree (debian/control made for the majors
# installed, as on Debian 13 the README says); the major's must hold the four files numasched is made of
# and depend on the server (and not on libnuma: numasched makes the memory
# calls itself); installed, its autopkgtest
# (debian/tests/installcheck: pg_regress and the TAP tests) runs on it.
# Then the package makes way for the build installed above, which the VMs use.
debian_package() {
	local scratch deb contents scx scx_contents unitdir status=0 f
	if [ "$(id -u)" != 0 ]; then
		make -s installcheck
		return
	fi
	scratch=$(scratch_dir numasched-deb) || return 1
	copy_tree "$scratch/numasched"
	if ! (cd "$scratch/numasched" && pg_buildext updatecontrol && dpkg-buildpackage -b -us -uc) >"$scratch/build.log" 2>&1; then
		tail -n 40 "$scratch/build.log"
		return 1
	fi
	deb=$(echo "$scratch"/postgresql-"$major"-numasched_*.deb)
	contents=$(dpkg-deb -c "$deb") || return 1
	for f in usr/lib/postgresql/$major/lib/numasched.so usr/share/postgresql/$major/extension/numasched.control \
		usr/share/postgresql/$major/extension/numasched--1.0.sql usr/lib/postgresql/$major/bin/numasched-plan; do
		grep -q " \./$f\$" <<<"$contents" || { echo "$(basename "$deb") lacks /$f"; status=1; }
	done
	dpkg-deb -f "$deb" Depends | grep -q "postgresql-$major" && ! dpkg-deb -f "$deb" Depends | grep -q libnuma ||
		{ echo "$(basename "$deb") depends on: $(dpkg-deb -f "$deb" Depends)"; status=1; }
	echo "$(basename "$deb"): $(grep -c . <<<"$contents") entries; depends on $(dpkg-deb -f "$deb" Depends)"
	# the sched_ext companion: a package of its own, with its unit, and in no major's
	! grep -q numasched-scx <<<"$contents" || { echo "$(basename "$deb") holds numasched-scx"; status=1; }
	scx=$(echo "$scratch"/numasched-scx_*.deb)
	scx_contents=$(dpkg-deb -c "$scx") || return 1
	# the unit where debhelper puts it (/lib, /usr/lib from Debian 13), the drop-in beside it
	unitdir=$(sed -n 's|.* \./\(.*\)/numasched-scx\.service$|\1|p' <<<"$scx_contents")
	for f in usr/sbin/numasched-scx "${unitdir:-lib/systemd/system}/numasched-scx.service" \
		"$unitdir/postgresql@.service.d/numasched-scx.conf" usr/share/man/man8/numasched-scx.8.gz; do
		grep -q " \./$f\$" <<<"$scx_contents" || { echo "$(basename "$scx") lacks /$f"; status=1; }
	done
	# an upgrade restarts a running service (the old BPF program would run on)
	dpkg-deb -I "$scx" postinst | grep -q 'try-restart numasched-scx.service' ||
		{ echo "$(basename "$scx"): its postinst does not restart a running service on upgrade"; status=1; }
	echo "$(basename "$scx"): depends on $(dpkg-deb -f "$scx" Depends)"
	companion_package "$scx" || status=1
	dpkg -i "$deb" >/dev/null || return 1
	(cd "$scratch/numasched" && debian/tests/installcheck) || status=1
	dpkg -r postgresql-"$major"-numasched >/dev/null
	make -s install || status=1
	return $status
}

# The companion's package, installed, and its autopkgtest (debian/tests/scx)
companion_package() {
	local status=0
	dpkg -i "$1" >/dev/null || return 1
	debian/tests/scx || status=1
	dpkg -r numasched-scx >/dev/null || status=1
	return $status
}

# Background priority as SCHED_IDLE, as where autogroups do not share the
# CPU (a server in a cpu cgroup of its own, a container): 011 with
# kernel.sched_autogroup_enabled = 0, unprivileged (a SET back is refused),
# then with the server holding CAP_SYS_NICE as AmbientCapabilities= would
# give it (the SET is taken); the test checks the server chose SCHED_IDLE.
background_by_sched_idle() {
	local scratch was status=0 knob=/proc/sys/kernel/sched_autogroup_enabled
	if ! [ -w "$knob" ]; then
		echo "no $knob to switch off: the TAP runs above tested the one way this kernel has"
		return 0
	fi
	scratch=$(scratch_dir numasched-idle) || return 1
	copy_tree "$scratch"
	chown -R postgres: "$scratch"
	was=$(cat "$knob")
	echo 0 >"$knob"
	runuser -u postgres -- env NUMASCHED_EXPECT_MODE=idle make -s -C "$scratch" installcheck REGRESS= \
		PROVE_TESTS="test/t/011_background.pl test/t/012_inversion.pl" || status=1
	setpriv --reuid postgres --regid postgres --init-groups --inh-caps=+sys_nice --ambient-caps=+sys_nice \
		env HOME="$scratch" NUMASCHED_EXPECT_MODE=idle NUMASCHED_EXPECT_RAISE=1 make -s -C "$scratch" installcheck \
		REGRESS= PROVE_TESTS="test/t/011_background.pl test/t/012_inversion.pl" || status=1
	echo "$was" >"$knob"
	return $status
}

# Background priority by an idle cpu cgroup, as for a server given a cgroup
# of its own (Delegate=yes in its systemd unit): 011 and 012 with everything
# the tests start in a cpu cgroup owned by postgres, in the cgroup v1 cpu
# hierarchy where there is one (this machine), else in cgroup v2.
background_by_cgroup() {
	local scratch cg mnt status=0
	mnt=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -z "$mnt" ]; then
		mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
		if [ -z "$mnt" ] || ! grep -qw cpu "$mnt/cgroup.controllers" 2>/dev/null; then
			echo "no cpu cgroup hierarchy here: the cgroup way is not tested"
			return 0
		fi
		grep -qw cpu "$mnt/cgroup.subtree_control" || echo +cpu >"$mnt/cgroup.subtree_control" || return 1
	fi
	cg="$mnt/numasched-test-$$"
	mkdir "$cg" && chown -R postgres: "$cg" || return 1
	scratch=$(scratch_dir numasched-cgroup) || return 1
	copy_tree "$scratch"
	chown -R postgres: "$scratch"
	# the shell joins the cgroup, then becomes postgres: all the tests start is in it
	bash -c 'echo $$ >"$1/cgroup.procs" && exec setpriv --reuid postgres --regid postgres --init-groups \
		env HOME="$2" NUMASCHED_EXPECT_MODE=cgroup make -s -C "$2" installcheck REGRESS= \
		PROVE_TESTS="test/t/011_background.pl test/t/012_inversion.pl"' _ "$cg" "$scratch" || status=1
	for d in "$cg"/numasched-* "$cg"; do
		for i in 1 2 3 4 5; do rmdir "$d" 2>/dev/null && break; sleep 1; done
	done
	return $status
}

# The sched_ext companion in the VM booting sid's kernel: the loader built
# here against Debian 12's libbpf (installed above), and one built against
# sid's, the libbpf of the distributions whose kernels have sched_ext
# (test/libbpf_suite.sh), beside it in that libbpf's directory.
companion_vm() {
	local root scratch loader
	root=$(bash test/libbpf_suite.sh) || return 1
	scratch=$(scratch_dir numasched-scx-sid) || return 1
	copy_tree "$scratch"
	build_quietly make -s -C "$scratch" numasched-scx SCX_LIBBPF_ROOT="$root" ||
		{ echo "numasched-scx did not build against sid's libbpf"; return 1; }
	loader=$(dirname "$root")/numasched-scx
	install -m 755 "$scratch/numasched-scx" "$loader"
	env VM_KERNEL=sid VM_TCG_THREAD=single VM_ONLY=companion COMPANION_SID="$loader" bash test/vm/run.sh 2
}

step "core unit tests (fixture sysfs trees)" prove test/core.t
step "release: versions, oldest PostgreSQL, maintainer, licence agree; make dist" prove test/release.t
step "layers: the core uses nothing above it, no circle of uses in the glue or the CLI" prove test/layers.t
step "numasched-plan" prove test/cli.t
step "numasched-scx: the topology it gives the sched_ext scheduler, its answers to bad input" prove test/scx.t
step "fuzzers" prove test/fuzz.t
step "numabench: statistics, parsing, workload plans, smoke run" prove --exec /usr/bin/python3 bench/tests/test_*.py
step "PostgreSQL $major, as the Debian package: its contents, then pg_regress and TAP tests on it" debian_package
if [ "$(id -u)" = 0 ]; then
	step "PostgreSQL $major: background priority as SCHED_IDLE (autogroups off), unprivileged and with CAP_SYS_NICE, and its inversion guard" \
		background_by_sched_idle
fi
if [ "$(id -u)" = 0 ]; then
	step "PostgreSQL $major: background priority by an idle cpu cgroup the server may change (Delegate=yes), and its inversion guard" \
		background_by_cgroup
fi
# 17 as Debian 13 has it, in a trixie root, from Debian 12 (where 17 is no
# package of the suite); the other majors unpacked (test/pg_major.sh)
[ -z "$prefetch_majors" ] || wait "$prefetch_majors"
for other in 17 18 19; do
	[ "$other" = "$major" ] && continue
	if [ "$(id -u)" != 0 ]; then
		echo "== PostgreSQL $other skipped: preparing it needs root (downloads, make install)"
	elif [ "$other" = 17 ] && [ "$major" = 15 ]; then
		step "PostgreSQL 17 on Debian 13 (trixie): in a trixie root, test/deps.sh, the build, pg_regress, the TAP tests, the demo's short form and the packages installed" \
			bash test/debian13.sh
	else
		tests=$(glue_tests "$other") what="TAP tests"
		[ -z "$tests" ] || what="the glue's TAP tests"
		step "PostgreSQL $other: pg_regress and $what (PostgreSQL::Test::Cluster)" pg_suite "$other" "$tests"
	fi
done
[ -z "$prefetch_vms" ] || wait "$prefetch_vms"
if [ "$(id -u)" = 0 ]; then
	# against the newest major (built and installed into it above), whose
	# own NUMA views are compared with numasched's; the 3- and 4-node VMs
	# run the system's major, and the 4-node one the comparison on 19 too
	step "PostgreSQL 19: multi-node checks, interleave, lending, background priority and its own NUMA views in a qemu VM with 2 NUMA nodes" \
		env VM_ONLY='multinode|preferred|interleave|lending|background|pgnuma' VM_PG_CONFIG="$(bash test/pg_major.sh 19)" bash test/vm/run.sh 2
	step "PostgreSQL $major: interleave with a memory-only node in a qemu VM with 3 NUMA nodes" \
		env VM_ONLY=interleave bash test/vm/run.sh 3
	# locality in one run per configuration (3 by hand): what it asserts holds
	# run by run (numasched 100% in every run so far, the kernel alone at most
	# 94%), and each further round of runs took 3 minutes of the hour
	step "PostgreSQL $major: multi-node checks, interleave, lending and private-memory locality in a qemu VM with 4 NUMA nodes" \
		env LOCALITY_RUNS=1 bash test/vm/run.sh 4
	step "PostgreSQL 19: its own NUMA views against numasched's in a qemu VM with 4 NUMA nodes" \
		env VM_ONLY=pgnuma VM_PG_CONFIG="$(bash test/pg_major.sh 19)" bash test/vm/run.sh 4
	step "PostgreSQL $major: the sched_ext companion (numasched-scx, built against this suite's libbpf and sid's) in a qemu VM with 2 NUMA nodes booting Debian sid's kernel" \
		companion_vm
else
	echo "== multi-node VM checks skipped: they need root (9p root share)"
fi

xargs -r rm -rf <"$scratch_list"
rm -f "$scratch_list" "$prefetch_log"
echo
for i in "${!failures[@]}"; do
	echo "FAILED: ${failures[i]}"
	[ -n "${failing[i]}" ] && sed 's/^/    /' <<<"${failing[i]}"
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
