# Lending in a VM with emulated nodes (test/vm/run.sh 2): one busy backend
# more than its node has CPUs runs on the other node's idle CPU within
# milliseconds, as the kernel alone would run it, while its private pages stay
# at home; after the burst it is back home within a second.  Twice: lent at
# its statement's start, and by the scheduler's tick (numasched.lend_at_start
# = off).  Every answer is
# the kernel's: the CPU a process last ran on (/proc/PID/stat),
# Cpus_allowed_list, numa_maps.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my ($cpus_of_node, $node_of_cpu) = node_cpus(@nodes);
my %cpus_of_node = %$cpus_of_node;
my %node_of_cpu = %$node_of_cpu;
my ($home) = grep { $cpus_of_node{$_} ne '' } @nodes;
my $width = cpu_count($cpus_of_node{$home});
my $burst = 8;    # seconds of each burst: long enough to look at it under emulation

# no rebalancing: what leaves home here is lent, not moved
my $node = numasched_cluster('lending', qq{
numasched.rebalance_interval = 0
numasched.log_placements = on
numasched.node_binding = strict
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');

# Starts $n busy backends, all moved to the home node (no workload class:
# numasched.nodes would keep them on it).
sub start_burst
{
	my ($n) = @_;
	my @sessions = map { $node->background_psql('postgres') } 1 .. $n;
	my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @sessions;
	$_->query_safe("SELECT numasched_move(pg_backend_pid(), $home)") for @sessions;
	# a statement once they have lived a second: they adopt their node's
	# memory policy and bring their memory home (as 010_multinode.pl's settle)
	sleep 2;
	$_->query_safe('SELECT 1') for @sessions;
	# busy for $burst s of the clock, then done (a cancel would end the session)
	$_->query_until(qr/started/, "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$burst s' LOOP END LOOP; END \$\$;\n")
	  for @sessions;
	return (\@sessions, \@pids);
}

# waits for the end of the burst
sub end_of_burst
{
	my ($sessions) = @_;
	$_->query_safe('SELECT 1') for @$sessions;
}

sub stat_of
{
	my ($column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM numasched_stats");
}

# A burst of busy backends on the home node; $how says who lends:
# 'statement' (twice as many as the node has CPUs: the last statement to
# start would wait a whole statement at home, and none on the other node) or
# 'tick' (one more than the node has CPUs, with numasched.lend_at_start =
# off: the scheduler).
sub lend_a_burst
{
	my ($how) = @_;
	my @before = map { stat_of($_) } qw(lends lend_returns statement_lends);
	my $watcher = $node->background_psql('postgres');
	my $busy = $how eq 'statement' ? 2 * $width : $width + 1;
	my ($sessions, $pids) = start_burst($busy);
	my $burst_end = time() + $burst - 1;
	# a statement once the watcher has lived a second brings its memory to its
	# node (start_burst waited two): that migration is not the visit's
	$watcher->query_safe('SELECT 1');
	my $migrated = stat_of('pages_migrated');
	my $all_running = wait_until(sub { !grep { !runnable($_) } @$pids }, 60);
	ok($all_running, "$how: $busy busy backends on node $home ($cpus_of_node{$home}): all runnable");
	my ($visitor, $after) = first_away($pids, \%node_of_cpu, $home, 10);
	ok(defined $visitor, "$how: a busy backend runs on a CPU of another node");
	note(sprintf('backend %d ran off node %d %.0f ms after all were runnable', $visitor // 0, $home, 1000 * ($after // 0)));
	cmp_ok($after // 99, '<=', 0.1, "$how: within 100 ms of the burst (the kernel alone: at the next wakeup or balance)");
	BAIL_OUT('no backend left its node: nothing more to look at') unless defined $visitor;
	# The view and /proc are read one after the other, and the loan may change in
	# between: a borrower turns to another lender, or the loan passes to another
	# backend of the burst (in the 4-node VM, whose vCPUs share two host cores, a
	# CI run counted 106 lends in one burst).  A new psql takes a second or two
	# under emulation, so the view is read by one session opened before the burst,
	# between two reads of /proc: the kernel's answer held still across the view's.
	# Equal, with a lender, for one of the burst's backends, while the burst lasts.
	my ($borrower, $lent, $group_cpus, $kernel);
	my $reads = 0;
  TRY: while (time() < $burst_end)
	{
		for my $pid (@$pids)
		{
			my $before = kernel_cpus($pid);
			($lent, $group_cpus) = split /\|/, $watcher->query_safe(
				"SELECT lent_cpus, cpus FROM numasched_processes WHERE pid = $pid");
			$kernel = kernel_cpus($pid);
			$borrower = $pid;
			$reads++;
			last TRY if defined $kernel && $kernel eq ($before // '') && $kernel eq $group_cpus && $lent;
		}
		usleep(20_000);
	}
	$watcher->quit;
	note("the view read $reads times");
	is($node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $visitor"), $home,
		"$how: its home stays where it was");
	is($kernel, $group_cpus, "$how: the view shows the CPUs the kernel has (backend $borrower: $group_cpus)");
	isnt($lent // '', '', "$how: and which of them are lent ($lent)");
	my @lent = map { stat_of($_) } qw(lends lend_returns statement_lends);
	if ($how eq 'statement')
	{
		cmp_ok($lent[2], '>', $before[2], 'statement: numasched_stats counts a statement lent a CPU at its start');
	}
	else
	{
		cmp_ok($lent[0], '>', $before[0], 'tick: numasched_stats counts the lend');
		is($lent[2], $before[2], 'tick: ...and no statement lent one at its start');
	}

	# its memory: allocated at home, nothing migrated for the visit
	sleep 2;
	my ($share, $where) = private_on($visitor, $home);
	cmp_ok($share, '>=', 99, "$how: the visitor's private pages stay on node $home ($where)");
	is(heap_policy($visitor), "prefer:$home", "$how: its memory policy names its home node, wherever it runs");
	is(stat_of('pages_migrated'), $migrated, "$how: and nothing was migrated for the visit");

	# after the burst: home within a second (a statement's visit ends with it)
	end_of_burst($sessions);
	my $t1 = time();
	my $home_again = wait_until(sub {
		!grep { (kernel_cpus($_) // '') ne $cpus_of_node{$home} } @$pids }, 10);
	my $took = time() - $t1;
	ok($home_again, "$how: after the burst every backend is bound to node $home alone again ("
		  . join(' ', map { "$_:" . (kernel_cpus($_) // '?') } @$pids) . ')');
	cmp_ok($took, '<=', 1, sprintf('%s: within a second (%.0f ms; the return window is 200 ms)', $how, 1000 * $took));
	cmp_ok(stat_of('lend_returns'), '>', $before[1], 'tick: numasched_stats counts the return') if $how eq 'tick';
	note('lends, returns, statement lends: ' . join(', ', map { stat_of($_) } qw(lends lend_returns statement_lends)));
	$_->quit for @$sessions;
}

# --- a burst: the statement that does not fit at home starts on an idle CPU ------
lend_a_burst('statement');

# --- the same, lent by the scheduler's tick -------------------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.lend_at_start = off');
$node->reload;
lend_a_burst('tick');

# --- lend_idle_cpus = off: the same burst stays home -----------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.lend_idle_cpus = off');
$node->reload;
my ($sessions, $pids) = start_burst($width + 1);
wait_until(sub { !grep { !runnable($_) } @$pids }, 60);
my $stayed = 1;
for (1 .. 50)
{
	$stayed &&= !grep { (kernel_cpus($_) // '') ne $cpus_of_node{$home} } @$pids;
	usleep(20_000);
}
ok($stayed, 'lend_idle_cpus = off: the burst keeps node ' . $home . ' for a second (hard binding)');
end_of_burst($sessions);
$_->quit for @$sessions;

$node->stop;
done_testing();
