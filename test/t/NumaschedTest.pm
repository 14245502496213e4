# Helpers shared by numasched's TAP tests.
package NumaschedTest;

use strict;
use warnings;
use Exporter 'import';
use Time::HiRes qw(usleep);
use List::Util qw(min sum);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils qw(slurp_file);
use Test::More;

our @EXPORT = qw(kernel_cpus wait_until cpu_count private_pages private_on heap_policy last_cpu first_away stat_field cpu_ticks need_cpus
  node_cpus sched_policy runnable
  numasched_cluster cpu_times idle_share create_slow_table start_slow_parallel_query
  background_mode in_background autogroup_nice may_raise may_raise_in cpu_cgroup expand
  companion sched_ext_ops companion_nodes median);

# A server that does not stop in pg_ctl's time (PGCTLTIMEOUT) says what
# was still running and what it last logged, while it can: a failed test's
# cluster is torn down, and a VM's files are gone with it.  Then pg_ctl waits
# once more (an emulated VM on a busy host is slow, not stuck) before the test
# bails out as PostgreSQL's own would.
{
	no warnings 'redefine';
	my $stop = \&PostgreSQL::Test::Cluster::stop;
	*PostgreSQL::Test::Cluster::stop = sub {
		my ($self, $mode, %params) = @_;
		my $postmaster = $self->{_pid};
		return 1 if $stop->($self, $mode, %params, fail_ok => 1);
		return 0 if $params{fail_ok};
		diag("the server did not stop in pg_ctl's time (" . ($ENV{PGCTLTIMEOUT} || 60) . ' s); its processes then:');
		diag("  $_") for server_processes($postmaster);
		my @log = split /\n/, slurp_file($self->logfile);
		diag("  log: $_") for @log[ -min(30, scalar @log) .. -1 ];
		return 1 if $stop->($self, $mode, %params, fail_ok => 1);
		BAIL_OUT('pg_ctl stop failed twice');
	};
}

# The postmaster and its children: pid, state, what they sleep in, command.
sub server_processes
{
	my ($postmaster) = @_;
	my @rows;
	for my $dir (glob('/proc/[0-9]*'))
	{
		my ($pid) = $dir =~ /(\d+)$/;
		my $ppid = stat_field($pid, 4) // next;
		next unless $pid == $postmaster || $ppid == $postmaster;
		my $state = stat_field($pid, 3) // '?';
		my $wchan = eval { slurp_file("$dir/wchan") } // '?';
		my $cmd = eval { slurp_file("$dir/cmdline") } // '';
		push @rows, "$pid $state " . ($wchan || '-') . ' ' . ($cmd =~ s/\0/ /gr);
	}
	return @rows;
}

# The CPU list the kernel holds for a process, from /proc/PID/status.
sub kernel_cpus
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return undef;
	# a lexical line: callers may loop over pids with $_
	while (my $line = <$fh>)
	{
		return $1 if $line =~ /^Cpus_allowed_list:\s*(\S+)/;
	}
	return undef;
}

# A process's private memory per node id, in base pages, from
# /proc/PID/numa_maps: anonymous memory that no file backs (heap, stack,
# anonymous mmaps: what malloc and palloc hand out).  Not the shared memory
# segment, DSM or files: those lines name a file (/dev/zero, SYSV...,
# /anon_hugepage, /dev/shm/...).  Pages still shared copy-on-write with the
# postmaster count: the process reads them where they are.
sub private_pages
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/numa_maps") or return ();
	my %pages;
	while (my $line = <$fh>)
	{
		next if $line =~ /\bfile=/ || $line !~ /\banon=/;
		my $kb = $line =~ /\bkernelpagesize_kB=(\d+)/ ? $1 : 4;
		$pages{$1} += $2 * $kb / 4 while $line =~ /\bN(\d+)=(\d+)/g;
	}
	return %pages;
}

# The share in percent of a process's private pages on node $n, and where
# they are ("N0=12 N1=3"), from numa_maps.
sub private_on
{
	my ($pid, $n) = @_;
	my %pages = private_pages($pid);
	my $total = sum(values %pages) || 1;
	return (100 * ($pages{$n} // 0) / $total, join(' ', map { "N$_=$pages{$_}" } sort keys %pages));
}

# A process's memory policy as numa_maps shows it on its heap's line
# ("prefer:1", "bind:0", "default"...), or '' if it is gone.
sub heap_policy
{
	open(my $fh, '<', "/proc/$_[0]/numa_maps") or return '';
	my ($line) = grep { /\bheap\b/ } <$fh>;
	return ($line // '') =~ /^\S+ (\S+)/ ? $1 : '';
}

# Field $n (counted from 1, as proc(5) does) of /proc/PID/stat, or undef.
sub stat_field
{
	my ($pid, $n) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or return undef;
	my $stat = <$fh> // return undef;
	# the command name in parentheses may hold spaces: split after it
	my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
	return $f[ $n - 3 ];
}

# The scheduling policy the kernel holds for a process (field 41 of
# /proc/PID/stat: 0 SCHED_OTHER, 5 SCHED_IDLE, 7 SCHED_EXT), or undef.
sub sched_policy
{
	my ($pid) = @_;
	return stat_field($pid, 41);
}

# Whether a process is runnable now (state R in /proc/PID/stat).
sub runnable
{
	my ($pid) = @_;
	return (stat_field($pid, 3) // '') eq 'R';
}

# The CPUs of each node id ('' for a memory-only node) and the node of each
# CPU, from sysfs: (\%cpus_of_node, \%node_of_cpu).
sub node_cpus
{
	my @nodes = @_;
	my (%cpus_of_node, %node_of_cpu);
	for my $n (@nodes)
	{
		$cpus_of_node{$n} = slurp_file("/sys/devices/system/node/node$n/cpulist") =~ s/\s+//gr;
		$node_of_cpu{$_} = $n for split /,/, expand($cpus_of_node{$n});
	}
	return (\%cpus_of_node, \%node_of_cpu);
}

# The CPU time a process has had, in clock ticks (utime + stime, fields 14
# and 15 of /proc/PID/stat), or undef.
sub cpu_ticks
{
	my ($pid) = @_;
	my ($user, $system) = (stat_field($pid, 14), stat_field($pid, 15));
	return defined $system ? $user + $system : undef;
}

# The CPU a process last ran on (field 39 of /proc/PID/stat), or undef.
sub last_cpu
{
	my ($pid) = @_;
	return stat_field($pid, 39);
}

# The first of the processes @$pids seen on a CPU of a node other than
# $home (%$node_of_cpu: CPU => node), looking every 2 ms for up to $timeout
# seconds: (pid, seconds until seen, that node), or () if none left.
sub first_away
{
	my ($pids, $node_of_cpu, $home, $timeout) = @_;
	my $t0 = Time::HiRes::time();
	while (Time::HiRes::time() - $t0 < $timeout)
	{
		for my $pid (@$pids)
		{
			my $cpu = last_cpu($pid);
			return ($pid, Time::HiRes::time() - $t0, $node_of_cpu->{$cpu})
			  if defined $cpu && $node_of_cpu->{$cpu} != $home;
		}
		usleep(2_000);
	}
	return ();
}

# Each CPU's busy and idle time so far (idle and iowait), in clock ticks,
# from /proc/stat: { cpu => [busy, idle] }.
sub cpu_times
{
	open(my $fh, '<', '/proc/stat') or return {};
	my %times;
	while (my $line = <$fh>)
	{
		next unless $line =~ /^cpu(\d+)\s+(.*)/;
		my ($cpu, @t) = ($1, split ' ', $2);
		my $idle = $t[3] + $t[4];
		my $busy = 0;
		$busy += $t[$_] for 0 .. 2, 5 .. 7;
		$times{$cpu} = [ $busy, $idle ];
	}
	return \%times;
}

# The share of the time between two cpu_times readings that the CPUs of
# @$cpus were idle, or undef if no time passed.
sub idle_share
{
	my ($before, $after, $cpus) = @_;
	my ($idle, $all) = (0, 0);
	for my $cpu (@$cpus)
	{
		next unless $before->{$cpu} && $after->{$cpu};
		my $busy = $after->{$cpu}[0] - $before->{$cpu}[0];
		my $i = $after->{$cpu}[1] - $before->{$cpu}[1];
		$idle += $i;
		$all += $busy + $i;
	}
	return $all > 0 ? $idle / $all : undef;
}

# Number of CPUs in a kernel CPU list such as "0-3,8".
sub cpu_count
{
	my ($list) = @_;
	my $n = 0;
	for my $part (split /,/, $list)
	{
		my ($a, $b) = split /-/, $part;
		$n += defined $b ? $b - $a + 1 : 1;
	}
	return $n;
}

# Calls $check until it returns true or $seconds pass; returns its last value.
sub wait_until
{
	my ($check, $seconds) = @_;
	$seconds //= 20;
	my $deadline = time() + $seconds;
	while (1)
	{
		my $value = $check->();
		return $value if $value || time() > $deadline;
		usleep(50_000);
	}
}

# Skips the whole file unless this process may run on at least $n CPUs.
sub need_cpus
{
	my ($n) = @_;
	my $cpus = kernel_cpus($$);
	plan skip_all => "needs at least $n CPUs, this process has $cpus" if cpu_count($cpus) < $n;
}

# How the server gives background priority, as it said at start: 'cgroup'
# (the idle cpu cgroup numasched-background), 'autogroup' (nice 19 for the
# process's autogroup) or 'idle' (SCHED_IDLE).
sub background_mode
{
	my ($node) = @_;
	my $log = slurp_file($node->logfile);
	return $log =~ /background processes the idle cpu cgroup / ? 'cgroup'
	  : $log =~ /nice 19 for their autogroups here/ ? 'autogroup'
	  : 'idle';
}

# Whether the server may give a background process normal priority back:
# by moving it out of the idle cgroup or setting its autogroup's nice to 0
# anyone may; out of SCHED_IDLE, only with RLIMIT_NICE or CAP_SYS_NICE.
sub may_raise_in
{
	my ($mode, $pid) = @_;
	return $mode ne 'idle' || may_raise($pid);
}

# The cgroup of a process in the hierarchy with the cpu controller (v1),
# else cgroup v2's, from /proc/PID/cgroup, or undef.
sub cpu_cgroup
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/cgroup") or return undef;
	my $v2;
	while (my $line = <$fh>)
	{
		chomp $line;
		my ($id, $controllers, $path) = split /:/, $line, 3;
		return $path if grep { $_ eq 'cpu' } split /,/, $controllers;
		$v2 = $path if $controllers eq '';
	}
	return $v2;
}

# The nice value of a process's autogroup (/proc/PID/autogroup), or undef.
sub autogroup_nice
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/autogroup") or return undef;
	return <$fh> =~ /nice (-?\d+)/ ? $1 : undef;
}

# Whether the kernel runs a process at background priority in that mode:
# in the idle cgroup, its autogroup at nice 19, or SCHED_IDLE (field 41 of
# /proc/PID/stat).
sub in_background
{
	my ($mode, $pid) = @_;
	return ($mode eq 'cgroup' ? (cpu_cgroup($pid) // '') =~ m{/numasched-background$}
		  : $mode eq 'autogroup' ? (autogroup_nice($pid) // 0) == 19
		  : (stat_field($pid, 41) // 0) == 5) ? 1 : 0;
}

# A table of 600 one-row pages (from 17 on, a scan's read stream claims
# blocks ahead, and a leader could claim all of a small table before its
# workers start) and a slow PARALLEL SAFE function, readable by everybody: a
# parallel query over it runs long enough for its workers to be looked at.
sub create_slow_table
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
CREATE TABLE t WITH (fillfactor = 10) AS
  SELECT g AS x, repeat('x', 800) AS pad FROM generate_series(1, 600) g;
ALTER TABLE t SET (parallel_workers = 2);
CREATE FUNCTION slow(int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE
  AS $$ BEGIN PERFORM pg_sleep(0.005); RETURN true; END $$;
GRANT SELECT ON t TO PUBLIC;
});
}

# Starts a parallel query with two workers over that table in $session and
# returns without waiting for its end.
sub start_slow_parallel_query
{
	my ($session) = @_;
	$session->query_until(qr/started/, q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
\echo started
SELECT count(*) FROM t WHERE slow(x);
});
}

# A new cluster, initialized, with numasched preloaded and $conf appended to
# postgresql.conf; not started, since some tests start it their own way.
# Whether the server's processes may leave SCHED_IDLE: RLIMIT_NICE allows
# nice 0 (a soft limit of 20), as /proc/PID/limits shows it, or they hold
# CAP_SYS_NICE (bit 23 of CapEff in /proc/PID/status).
sub may_raise
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/limits") or return 0;
	while (my $line = <$fh>)
	{
		return 1 if $line =~ /^Max nice priority\s+(\d+)/ && $1 >= 20;
	}
	open($fh, '<', "/proc/$pid/status") or return 0;
	while (my $line = <$fh>)
	{
		return (hex($1) >> 23) & 1 if $line =~ /^CapEff:\s+([0-9a-f]+)/;
	}
	return 0;
}

# A kernel CPU list ("0-2,5") written out: "0,1,2,5".
sub expand
{
	my ($list) = @_;
	return join(',', map { my ($a, $b) = split /-/; defined $b ? ($a .. $b) : $a } split /,/, $list // '');
}

# The machine's nodes, where the companion can be tested (a VM booting a
# kernel with sched_ext, root's companion_control.sh beside); else skips all
sub companion_nodes
{
	my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
	plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
	plan skip_all => 'needs a kernel with sched_ext (VM_KERNEL=sid test/vm/run.sh 2)'
	  unless -e '/sys/kernel/sched_ext/state';
	plan skip_all => 'needs root to load the companion (COMPANION_CONTROL, test/vm/inside.sh)'
	  unless $ENV{COMPANION_CONTROL};
	return @nodes;
}

# The median of a list of numbers
sub median
{
	my @sorted = sort { $a <=> $b } @_;
	return @sorted % 2 ? $sorted[$#sorted / 2] : ($sorted[@sorted / 2 - 1] + $sorted[@sorted / 2]) / 2;
}

# A command to root's companion_control.sh in the VM (test/vm/inside.sh)
sub companion
{
	my ($command) = @_;
	open(my $fh, '>', $ENV{COMPANION_CONTROL}) or die "$ENV{COMPANION_CONTROL}: $!";
	print $fh "$command\n";
	close $fh;
}

# The sched_ext scheduler loaded now, '' if none
sub sched_ext_ops
{
	open(my $fh, '<', '/sys/kernel/sched_ext/root/ops') or return '';
	my $ops = <$fh> // '';
	chomp $ops;
	return $ops;
}

sub numasched_cluster
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'numasched'\n" . $conf);
	return $node;
}

1;
