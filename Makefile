# numasched: NUMA-aware placement for PostgreSQL (PGXS)

EXTENSION = numasched
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = numasched
# src/ in the layers of doc/architecture.md, each using only those before it
CORE_OBJS = $(addprefix src/core/,ns_cpuset.o ns_topology.o ns_plan.o ns_place.o ns_rebalance.o ns_numa_maps.o ns_lend.o ns_homing.o)
OS_OBJS = $(addprefix src/os/,ns_os.o ns_settle.o ns_cgroup.o ns_priority.o ns_companion.o ns_cpustat.o)
BACKEND_OBJS = $(addprefix src/backend/,settings.o state.o report.o books.o classes.o regroup.o memory.o priority.o companion.o \
	parallel_cap.o binding.o placement.o statement_lending.o segment.o)
WORKER_OBJS = $(addprefix src/worker/,schedstat.o lending.o homing.o lock_waits.o inversion.o doorbell.o scheduler.o)
OBJS = $(CORE_OBJS) $(OS_OBJS) $(BACKEND_OBJS) $(WORKER_OBJS) src/views/views.o src/numasched.o
DATA = sql/numasched--1.0.sql
PGFILEDESC = "numasched - NUMA-aware placement of backends and parallel workers"

PG_CPPFLAGS = -Isrc -DNUMASCHED_VERSION='"$(EXTVERSION)"' -Wextra -Wno-unused-parameter \
	-Wno-missing-field-initializers -Wno-sign-compare

# pg_regress on a temporary instance with numasched preloaded (tmp_check is
# the TAP tests' directory, which prove_installcheck wipes)
REGRESS = settings views classes
REGRESS_OPTS = --temp-instance=./tmp_regress --temp-config=test/regress.conf

# TAP tests (PostgreSQL::Test::Cluster), run by "make installcheck" too
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# numasched-plan: the same core, linked without PostgreSQL
PLAN_OBJS = $(addprefix src/tool/,numasched_plan.o plan_common.o plan_simulate.o sim_trace.o sim_replay.o \
	plan_bench.o sim_burst.o plan_bursts.o)
# numasched-scx: the sched_ext companion (src/scx), built where clang,
# bpftool and libbpf's headers are (Debian: clang bpftool libbpf-dev)
SCX_CLANG ?= clang
SCX_BPFTOOL ?= $(firstword $(wildcard /usr/sbin/bpftool) bpftool)
SCX_BUILDABLE := $(shell command -v $(SCX_CLANG) >/dev/null && command -v $(SCX_BPFTOOL) >/dev/null && \
	[ -f /usr/include/bpf/libbpf.h ] && echo yes)
SCX_GENERATED = src/scx/numasched_scx.bpf.o src/scx/numasched_scx.skel.h

EXTRA_CLEAN = numasched-plan numasched-scx $(SCX_GENERATED) $(PLAN_OBJS) tmp_check tmp_regress results regression.diffs regression.out

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

all: numasched-plan

# PGXS tracks no header (only a server built with --enable-depend does): an
# object left from before a change to a struct it shares would disagree with
# the rest on its layout, so any header change rebuilds them all; not the
# companion's generated skeleton, made after them, which none includes (else
# "make install" would build them all again, without the flags of "make")
$(OBJS) $(PLAN_OBJS) $(OBJS:.o=.bc): $(wildcard $(addsuffix /*.h,src/core src/os src/backend src/worker src/tool))

numasched-plan: $(CORE_OBJS) $(PLAN_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $^ -lm -o $@

install: install-plan
uninstall: uninstall-plan

ifeq ($(SCX_BUILDABLE),yes)
all: numasched-scx
install: install-scx
uninstall: uninstall-scx
endif

# bpf_tracing.h's name for this machine's architecture
SCX_TARGET_ARCH := $(shell uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/; s/ppc64le/powerpc/; s/riscv64/riscv/; s/s390x/s390/')

# the scheduler: BPF bytecode (no build path in it), and the skeleton the loader embeds it with;
# -mcpu=v3 for atomics that return the value they replaced (any kernel with sched_ext has them)
src/scx/numasched_scx.bpf.o: src/scx/numasched_scx.bpf.c src/scx/numasched_scx_fair.bpf.h \
	src/scx/numasched_scx_groups.bpf.h src/scx/numasched_scx_background.bpf.h src/scx/scx_kernel.h
	$(SCX_CLANG) -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(SCX_TARGET_ARCH) -I/usr/include/$(shell $(CC) -print-multiarch) \
		-fdebug-prefix-map=$(CURDIR)=. -Wall -Werror -c $< -o $@

src/scx/numasched_scx.skel.h: src/scx/numasched_scx.bpf.o
	$(SCX_BPFTOOL) gen skeleton $< name numasched_scx_bpf > $@

# the loader against another libbpf than the system's, unpacked under a root
# (test/libbpf_suite.sh): its headers, its library and that root's C library
SCX_LIBBPF_ROOT ?=
ifneq ($(SCX_LIBBPF_ROOT),)
scx_libdir = $(SCX_LIBBPF_ROOT)/usr/lib/$(shell $(CC) -print-multiarch)
SCX_LOADER_FLAGS = -I$(SCX_LIBBPF_ROOT)/usr/include -L$(scx_libdir) -Wl,--disable-new-dtags,-rpath,$(scx_libdir) \
	-Wl,--dynamic-linker=$(scx_libdir)/ld-linux-x86-64.so.2 -Wl,--allow-shlib-undefined
endif

numasched-scx: src/scx/numasched_scx.c src/scx/ns_bandwidth.c src/scx/ns_bandwidth.h src/scx/numasched_scx.skel.h \
	src/core/ns_topology.o src/core/ns_cpuset.o
	$(CC) $(CFLAGS) $(CPPFLAGS) -Isrc -Isrc/scx $(SCX_LOADER_FLAGS) $(LDFLAGS) $(filter %.c %.o,$^) -lbpf -o $@

.PHONY: install-plan uninstall-plan install-scx uninstall-scx
install-plan: numasched-plan
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) numasched-plan '$(DESTDIR)$(bindir)/numasched-plan'

uninstall-plan:
	rm -f '$(DESTDIR)$(bindir)/numasched-plan'

install-scx: numasched-scx
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) numasched-scx '$(DESTDIR)$(bindir)/numasched-scx'

uninstall-scx:
	rm -f '$(DESTDIR)$(bindir)/numasched-scx'

# The PGXN distribution: the files git tracks at HEAD, as numasched-VERSION.zip
DISTVERSION = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' META.json)

.PHONY: dist
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(DISTVERSION)/ -o $(EXTENSION)-$(DISTVERSION).zip HEAD
