# The sched_ext companion on a machine PostgreSQL shares (VM_KERNEL=sid
# test/vm/run.sh 2), with the loader built against Debian sid's libbpf
# (COMPANION_SID; 080 runs Debian 12's): it loads, schedules and unloads; busy
# loops of another user, ordinary or switched to SCHED_EXT, do not starve
# PostgreSQL (a fixed-rate select-only load's p99 against the kernel alone
# with the same loops, interleaved), nor does another user's job in a session
# of its own; loops in cgroups of cpu.weight 100 and 300, and at nice 0 and
# 10 in one session, share a CPU as the kernel's weights say; it stays loaded
# a minute beside them; 300 background tasks each run within the wait
# bound; a whole node taken offline under load and back has it loaded again
# (the kernel unloads it at a hotplug and asks for a new load); an
# operator's unload (SysRq-S) is not undone.  Root runs
# the loader, the other user's loops and the hotplug on request
# (test/vm/companion_control.sh); the answers are the kernel's
# (/sys/kernel/sched_ext, /proc) and the scheduler's own counters
# (numasched-scx --monitor).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(max);
use Time::HiRes qw(time usleep);
use File::Temp;
use lib 'test/t';
use NumaschedTest;

my @nodes = companion_nodes();
plan skip_all => 'needs the loader built against sid\'s libbpf (COMPANION_SID, test/libbpf_suite.sh)'
  unless $ENV{COMPANION_SID} && -x $ENV{COMPANION_SID};

my $all_cpus = slurp_file('/sys/devices/system/cpu/online') =~ s/\s+//gr;
my $ncpus = cpu_count($all_cpus);
# a measurement with more rounds or longer runs: SHARED_ROUNDS, SHARED_SECONDS
my $seconds = $ENV{SHARED_SECONDS} || 8;
my $rounds = $ENV{SHARED_ROUNDS} || 2;

sub loaded
{
	my ($loader) = @_;
	companion('start' . ($loader ? " $loader" : ''));
	return wait_until(sub { sched_ext_ops() eq 'numasched' }, 60);
}

sub unloaded
{
	my $log_before = length(slurp_file($ENV{COMPANION_LOG}));
	companion('stop');
	# 0.2 to 1.2 s here, over 20 s beside 16 busy loops, and once in CI,
	# beside two loops in cgroups, between 60 and 90 s, unexplained: where
	# it takes over 30 s, root's control writes what the loader and the
	# kernel were doing into the log, shown here
	my $unloaded = wait_until(sub { sched_ext_ops() eq '' }, 120);
	my ($slow) = substr(slurp_file($ENV{COMPANION_LOG}), $log_before) =~ /(^stop: .*)/ms;
	diag($slow) if $slow;
	return $unloaded;
}

# the loader's last line of counters, and what it says of background work
sub counters
{
	my ($line) = grep { /^numasched-scx: woke/ } reverse split /\n/, slurp_file($ENV{COMPANION_LOG});
	my %c = (line => $line // '');
	$c{longest} = $1 if ($line // '') =~ /longest background wait ([\d.]+) ms/;
	$c{late} = $1 if ($line // '') =~ /background later than its bound (\d+)/;
	$c{served} = $1 if ($line // '') =~ /served from its own node's queue (\d+)/;
	$c{due} = $1 if ($line // '') =~ /background served at its wait bound (\d+)/;
	$c{looked} = $1 if ($line // '') =~ /looked for work (\d+)/;
	return \%c;
}

my $node = numasched_cluster('shared', qq{
numasched.rebalance_interval = 0
max_connections = 30
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
$node->command_ok([ 'pgbench', '-i', '-q', '-s', '1', $node->connstr('postgres') ], 'pgbench tables');

# select-only at 100 transactions a second (or $rate) for $seconds (or
# $run): (p99 in ms, tps), latency counted from each transaction's scheduled
# start
sub select_only
{
	my ($run, $rate) = @_;
	$run //= $seconds;
	$rate //= 100;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pgbench', '-n', '-S', '-R', $rate, '-c', '2', '-j', '2', '-T', $run,
		'-l', "--log-prefix=$dir/tx", $node->connstr('postgres') ], '>', \$out, '2>', \$err);
	my @ms;
	for my $file (glob("$dir/tx*"))
	{
		open(my $fh, '<', $file) or next;
		while (<$fh>)
		{
			my @f = split;
			push @ms, ($f[2] + ($f[6] // 0)) / 1000;
		}
	}
	@ms = sort { $a <=> $b } @ms;
	my ($tps) = $out =~ /^tps = ([\d.]+)/m;
	return (@ms ? $ms[ int(0.99 * $#ms) ] : 99_999, $tps // 0);
}

# --- built against sid's libbpf: it loads, schedules and unloads --------------
my $session = $node->background_psql('postgres');
my $pid = $session->query_safe('SELECT pg_backend_pid()');
ok(loaded($ENV{COMPANION_SID}), "numasched-scx built against another libbpf (sid's in the test command) loads ($ENV{COMPANION_SID})")
  or BAIL_OUT('the companion did not load: ' . slurp_file($ENV{COMPANION_LOG}));
ok(wait_until(sub { slurp_file($ENV{COMPANION_LOG}) =~ /loaded \(libbpf v?1\.([2-9]|\d\d)/ }, 10),
	"with libbpf 1.2 or later") or diag(slurp_file($ENV{COMPANION_LOG}));
$session->query_safe('SELECT 1');
ok(wait_until(sub { (sched_policy($pid) // -1) == 7 }, 10), 'a placed backend switches to SCHED_EXT');
$session->query_safe('SELECT count(*) FROM pgbench_accounts');
sleep 2;
cmp_ok(counters()->{served} // 0, '>', 0, 'and work is served from its queues: ' . counters()->{line});
ok(unloaded(), 'stopped, it unloads');
ok(wait_until(sub { slurp_file($ENV{COMPANION_LOG}) =~ /numasched-scx: unloaded/ }, 10), 'and says so');
$session->quit;

# --- another user's busy loops: as many as CPUs, or a 16-process job in a
# session of its own. Each guard is against the kernel alone with the same
# loops in the same round: the emulation's speed varies from machine to
# machine, the ratio does not ---------------------------------------------------
# The job at 100 tps is the measurement's (2 vCPUs); here, where four vCPUs
# share one emulation thread, the kernel alone served 29-32 tps of 100 beside
# it: a rate the guest carries
for my $load ([ "loops $ncpus", "another user's busy loops", 100 ],
	[ "loops $ncpus ext", 'busy loops of another user that switched themselves to SCHED_EXT', 100 ],
	[ 'job 16', "another user's 16-process job in a session of its own", $ENV{SHARED_JOB_RATE} || 15 ])
{
	my ($command, $what, $rate) = @$load;
	companion($command);
	my (@ratios, @tps_ratios, @kernel, @scx);
	for my $round (1 .. $rounds)
	{
		my ($p99_kernel, $tps_kernel) = select_only(undef, $rate);
		ok(loaded(), "round $round: loaded beside $what");
		my ($p99_scx, $tps_scx) = select_only(undef, $rate);
		is(sched_ext_ops(), 'numasched', 'and still loaded after the run');
		ok(unloaded(), 'unloaded');
		push @ratios, $p99_scx / max($p99_kernel, 0.001);
		push @tps_ratios, $tps_scx / max($tps_kernel, 0.001);
		push @kernel, sprintf('%.0f ms at %.0f tps', $p99_kernel, $tps_kernel);
		push @scx, sprintf('%.0f ms at %.0f tps', $p99_scx, $tps_scx);
	}
	cmp_ok(median(@tps_ratios), '>=', 0.8,
		sprintf("the companion serves the $rate tps offered beside $what as the kernel alone does (median of the rounds' ratios %.2f, at least 0.8)",
			median(@tps_ratios)));
	note("select-only at $rate tps beside $what: kernel alone @kernel; companion @scx; ratios "
		  . join(' ', map { sprintf('%.2f', $_) } @ratios));
	# The figure itself is a measurement (doc/benchmarking.md: more rounds, 2
	# vCPUs); here four vCPUs share one emulation thread, one round has gone
	# from 0.4 to 18x on its own, and the kernel alone's p99 from 366 to 842
	# ms in two rounds beside the job.  The guard is against starvation, at
	# five times the kernel's median: sharing per task, not per session,
	# gave 10-13 tps of 100 and a p99 of 15 s, one floor for the machine
	# 13.0 and 1.50; the companion as it is gave medians of 1.0 to 3.13
	# beside the job and up to 2.3 beside ordinary loops, short of the
	# kernel's tail (an open gap, not guarded here)
	cmp_ok(median(@ratios), '<=', 5,
		sprintf("beside $what, PostgreSQL's p99 with the companion is within 5x of the kernel alone's (median of the rounds %.2f)",
			median(@ratios)));
	if ($command =~ /ext/)
	{
		my ($chose) = counters()->{line} =~ /fair-tier tasks that chose SCHED_EXT (\d+)/;
		cmp_ok($chose // 0, '>', 0, 'and the loops did run under SCHED_EXT (the scheduler counted them)');
	}
	companion('stoploops');
}

# --- the kernel's shares between other tenants: CPU time of two loops on one
# CPU, kernel alone and companion, each in the same round -----------------------
my $cputimes = 0;
# the ticks each loop used in $seconds, measured by root in the VM
sub cputime
{
	my $n = ++$cputimes;
	companion("cputime $n $seconds");
	my @ticks;
	wait_until(sub { (@ticks) = slurp_file($ENV{COMPANION_LOG}) =~ /^cputime $n:((?: \d+)+)$/m; @ticks }, $seconds + 30);
	return split ' ', $ticks[0] // '';
}

for my $share ([ 'cgroups', 'cpu.weight 100 and 300 (two cgroups)', 1 / 3 ],
	[ 'nice', 'nice 0 and nice 10 (two users, one session)', 1024 / 110 ])
{
	my ($command, $what, $kernel_says) = @$share;
	companion($command);
	sleep 1;
	my @kernel = cputime();
	my $log_before = length(slurp_file($ENV{COMPANION_LOG}));
	ok(loaded(), "loaded beside loops at $what");
	# the cgroups come with a third, empty, limited to half a CPU
	like(substr(slurp_file($ENV{COMPANION_LOG}), $log_before),
		qr{^numasched-scx: /sys/fs/cgroup/limited: cpu\.max 50000 100000 will not apply}m,
		'the loader says which cgroup has a cpu.max it will not keep')
	  if $command eq 'cgroups';
	sleep 1;
	my @scx = cputime();
	ok(unloaded(), 'unloaded');
	companion('stoploops');
	my $ratio_kernel = ($kernel[0] // 0) / max($kernel[1] // 0, 1);
	my $ratio_scx = ($scx[0] // 0) / max($scx[1] // 0, 1);
	note(sprintf("CPU ticks of loops at $what in %d s: kernel alone @kernel (%.2f:1), companion @scx (%.2f:1); the kernel's weights say %.2f:1",
		$seconds, $ratio_kernel, $ratio_scx, $kernel_says));
	# against the weights, and against what the kernel alone gave in the
	# same round: in 8 s of emulated time the kernel alone itself once gave
	# 0.25:1 for weights of 0.33:1, while the companion gave 0.33:1.  Each
	# is a fair answer; per-task sharing (1:1, or nice ignored) is neither
	my $off_weights = abs($ratio_scx / $kernel_says - 1);
	my $off_kernel = abs($ratio_scx / max($ratio_kernel, 0.001) - 1);
	cmp_ok(List::Util::min($off_weights, $off_kernel), '<=', 0.2,
		sprintf("loops at $what share a CPU with the companion within 20%% of the kernel's weights or of what the kernel alone gave them in the same round (%.2f:1; weights %.2f:1, kernel alone %.2f:1)",
			$ratio_scx, $kernel_says, $ratio_kernel));
	cmp_ok($off_weights, '<=', 0.4,
		sprintf("and within 40%% of the weights whatever the round (%.2f:1 for %.2f:1)", $ratio_scx, $kernel_says));
}

# --- a minute beside all kinds of loops ---------------------------------------------
ok(loaded(), 'loaded for a minute beside all kinds of loops');
companion("loops $ncpus");
companion("loops $ncpus ext");
companion('job 16');
my ($p99, $tps) = select_only(60);
is(sched_ext_ops(), 'numasched', "still loaded after 60 s (select-only p99 $p99 ms at $tps tps)");
unlike(slurp_file($ENV{COMPANION_LOG}), qr/the kernel unloaded the scheduler/, 'the kernel never threw it out');
companion('stoploops');

# --- 300 background tasks of the server beside busy normal ones ---------------
my $due_before = counters()->{due} // 0;
my $looked_before = counters()->{looked} // 0;
my $started = time();
my @tasks;
for my $i (1 .. 300 + $ncpus)
{
	my $child = fork();
	die "fork: $!" unless defined $child;
	if ($child == 0)
	{
		# the server's user: the first 300 at nice 19 (numasched's background mark)
		setpriority(0, 0, 19) if $i <= 300;
		1 while 1;
	}
	push @tasks, $child;
}
sleep 20;
my $c = counters();
my $elapsed = time() - $started;
kill 'KILL', @tasks;
waitpid($_, 0) for @tasks;
# the loader's whole log: the kernel's dump names the task that waited
is(sched_ext_ops(), 'numasched', '300 background tasks beside busy normal ones: still loaded')
  or diag(slurp_file($ENV{COMPANION_LOG}));
# the bound: background_wait_ms, or, with more tasks per node than that leaves
# room for, a turn each in order of their wait: as long as the node takes to
# serve as many background tasks as wait there, at the rate it served them
# ahead of normal work (by time, a fifth of a busy CPU, half while they are
# past their bound)
my $per_node = 300 / @nodes;
my $due_per_node = (($c->{due} // 0) - $due_before) / $elapsed / @nodes;
my $bound = 100 + 1000 * $per_node / max($due_per_node, 0.001);
note(sprintf('%.0f background tasks per node, served %.1f times a second per node at their bound', $per_node, $due_per_node));
ok(defined $c->{longest} && $c->{longest} <= 1.5 * $bound,
	sprintf('the longest background wait, %s ms, is within one turn of them all (%.0f ms, and half as much again for the emulation)',
		$c->{longest} // '?', $bound))
  or diag($c->{line});
# against the times the CPUs looked for work, not the time: under emulation
# a slice's end comes late, the later the slower the host
my $looked = ($c->{looked} // 0) - $looked_before;
cmp_ok((($c->{due} // 0) - $due_before) / max($looked, 1), '>=', 1 / 15,
	sprintf('the CPUs served background work at its bound at least once in 15 looks for work (%d in %d)',
		($c->{due} // 0) - $due_before, $looked));

# --- a whole node taken offline under load, and back: the kernel unloads the
# scheduler at a CPU hotplug and asks for a new load, which the loader makes
# with the topology of then --------------------------------------------------------
ok(sched_ext_ops() eq 'numasched' || loaded(), 'loaded before a node goes offline');
my $last = $nodes[-1];
my @gone = split /,/, expand(slurp_file("/sys/devices/system/node/node$last/cpulist") =~ s/\s+//gr);
companion("loops $ncpus");
my (undef, $tps_all) = select_only();
my $reloads = sub { scalar(() = slurp_file($ENV{COMPANION_LOG}) =~ /^numasched-scx: loading the scheduler again/mg) };
my $reloads_before = $reloads->();
companion("offline $_") for @gone;
ok(wait_until(sub { slurp_file('/sys/devices/system/cpu/online') !~ /\b$gone[-1]\b/ }, 10),
	"node ${last}'s CPUs (@gone) offline under load within 10 s");
ok(wait_until(sub { $reloads->() > $reloads_before && sched_ext_ops() eq 'numasched' }, 60),
	'the companion loaded again, as the kernel asked');
my ($p99_gone, $tps_gone) = select_only(20);
ok(sched_ext_ops() eq 'numasched', "node $last offline for 20 s under load: the companion is loaded");
cmp_ok($tps_gone, '>=', 0.5 * $tps_all,
	"and PostgreSQL is served on the other node ($tps_gone tps, p99 $p99_gone ms; $tps_all with every CPU)");
$reloads_before = $reloads->();
companion("online $_") for @gone;
ok(wait_until(sub { cpu_count(slurp_file('/sys/devices/system/cpu/online') =~ s/\s+//gr) == $ncpus }, 10),
	"node $last back within 10 s");
ok(wait_until(sub { $reloads->() > $reloads_before && sched_ext_ops() eq 'numasched' }, 60),
	'and the companion loaded again with every node');
companion('stoploops');
my @thrown = grep { /the kernel unloaded the scheduler/ } split /\n/, slurp_file($ENV{COMPANION_LOG});
ok(@thrown && !grep({ !/cpu \d+ going (offline|online)/ } @thrown), 'the kernel unloaded it for the hotplug alone')
  or diag(join("\n", @thrown));
companion('monitor');
ok(wait_until(sub { slurp_file($ENV{COMPANION_LOG}) =~ /^monitor:\nnumasched-scx: woke on its idle previous CPU \d+.*looked for work \d+/m }, 10),
	'numasched-scx --monitor reads the counters of the loader that runs')
  or diag(slurp_file($ENV{COMPANION_LOG}));
note('companion: ' . counters()->{line});

# --- SHARED_THREADS (10,000, by hand) runnable threads of another user on
# one node's CPUs for 60 s, as a runaway job's: the kernel's watchdog unloads
# a scheduler that leaves any task runnable 30 s.  Not in the test command:
# on 7 December 2026 the kernel unloaded the companion while 10,000 such
# threads exited ("runnable task stall: busy_threads failed to run for
# 39.744s"): their virtual time, charged at a share of 1/10,000 of their
# group's, ran thousands of seconds ahead of the other tasks of the node,
# and a slice ends at the next tick (4 ms at 250 Hz), so that 10,000 of
# them need 40 s of CPU per turn where a fair half of 2 CPUs gives 30 ------
if (my $nthreads = $ENV{SHARED_THREADS})
{
	my $threads_dir = File::Temp::tempdir(CLEANUP => 1);
	chmod 0755, $threads_dir;
	system('cc', '-O2', '-pthread', '-o', "$threads_dir/busy_threads", 'test/vm/busy_threads.c') == 0
	  or BAIL_OUT('could not build test/vm/busy_threads.c');
	my $unloads = sub { scalar(() = slurp_file($ENV{COMPANION_LOG}) =~ /the kernel unloaded the scheduler/g) };
	my $unloads_before = $unloads->();
	my $asked = time();
	companion("threads $threads_dir/busy_threads $nthreads 60");
	ok(wait_until(sub { slurp_file($ENV{COMPANION_LOG}) =~ /^busy_threads: $nthreads of $nthreads started$/m }, 300),
		sprintf("another user's %d threads started (in %.0f s)", $nthreads, time() - $asked))
	  or diag(slurp_file($ENV{COMPANION_LOG}));
	my ($most_runnable, $not_loaded, $answered_in) = (0, 0);
	my $threads_end = time() + 60;
	while (time() < $threads_end)
	{
		my ($runnable) = slurp_file('/proc/loadavg') =~ m{ (\d+)/\d+ };
		$most_runnable = max($most_runnable, $runnable // 0);
		$not_loaded++ if sched_ext_ops() ne 'numasched';
		if (!defined $answered_in && time() > $threads_end - 30)
		{
			my $asked_at = time();
			$node->safe_psql('postgres', 'SELECT 1');
			$answered_in = time() - $asked_at;
		}
		sleep 1;
	}
	cmp_ok($most_runnable, '>=', 0.9 * $nthreads, "runnable at once (/proc/loadavg: at most $most_runnable)");
	ok(defined $answered_in, sprintf('PostgreSQL answered meanwhile (SELECT 1 in %.1f s)', $answered_in // -1));
	# they end by themselves after 60 s; each must run once more to exit
	ok(wait_until(sub { !`pgrep -x busy_threads` }, 120), 'they exit');
	ok($not_loaded == 0 && $unloads->() == $unloads_before && sched_ext_ops() eq 'numasched',
		'and the companion stayed loaded throughout') or diag(slurp_file($ENV{COMPANION_LOG}));
	companion('stoploops');
	ok(loaded(), 'loaded for what follows') if sched_ext_ops() ne 'numasched';
}

# --- an operator's unload (SysRq-S) is not undone: the loader exits 0, which
# the unit's Restart=on-failure leaves alone, and loads nothing again ---------
my $before_sysrq = length(slurp_file($ENV{COMPANION_LOG}));
my $since_sysrq = sub { substr(slurp_file($ENV{COMPANION_LOG}), $before_sysrq) };
companion('sysrq');
ok(wait_until(sub { sched_ext_ops() eq '' }, 60), 'SysRq-S unloads it');
ok(wait_until(sub { $since_sysrq->() =~ /^numasched-scx exited \d+$/m }, 30)
	  && $since_sysrq->() =~ /^numasched-scx exited 0$/m
	  && $since_sysrq->() =~ /unloaded as asked: not loading it again/,
	'the loader says it was unloaded as asked and exits 0')
  or diag($since_sysrq->());
sleep 2;
is(sched_ext_ops(), '', 'and nothing loads it again');

$node->stop;
done_testing();
