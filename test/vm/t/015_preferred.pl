# The default node binding (numasched.node_binding = preferred) against a real
# kernel, in a VM with emulated NUMA nodes (test/vm/run.sh).  Every answer is
# the kernel's: Cpus_allowed_list in /proc/PID/status, the CPU a process last
# ran on (field 39 of /proc/PID/stat), its memory policy and pages in
# /proc/PID/numa_maps.  Where a process runs is read, not timed: with more
# vCPUs than the host has cores the guest's timing means little.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;
use Time::HiRes qw(usleep);

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my ($cpus_of_node, $node_of_cpu) = node_cpus(@nodes);
my @with_cpus = grep { $cpus_of_node->{$_} ne '' } @nodes;
plan skip_all => 'needs two nodes with CPUs' if @with_cpus < 2;
my ($first, $last) = @with_cpus[ 0, -1 ];
my @first_cpus = split /,/, expand($cpus_of_node->{$first});
my @last_cpus = split /,/, expand($cpus_of_node->{$last});
my $all_cpus = kernel_cpus($$);

# rebalancing off: these checks read where the kernel and homing put a
# process, which a move between groups would blur
my $node = numasched_cluster('preferred', qq{
numasched.rebalance_interval = 0
log_min_messages = debug1
max_worker_processes = 16
max_parallel_workers_per_gather = 1
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION numasched;
CREATE TABLE t WITH (fillfactor = 10) AS
  SELECT g AS x, repeat('x', 800) AS pad FROM generate_series(1, 300) g;
CREATE FUNCTION spin(int) RETURNS bigint LANGUAGE sql PARALLEL SAFE
  AS $$ SELECT count(*) FROM generate_series(1, $1) $$;
});
is($node->safe_psql('postgres', 'SHOW numasched.node_binding'), 'preferred', 'the default node binding is preferred');

my $homecomings = sub { $node->safe_psql('postgres', 'SELECT homecomings FROM numasched_stats') };

# A session of a class on node $n (its home), busy in a loop that runs until
# it is cancelled: (session, pid).
sub busy_on
{
	my ($n) = @_;
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$n";
	my $session = $node->background_psql('postgres');
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	$session->query_until(qr/started/, "\\echo started\nSELECT spin(2000000000);\n");
	return ($session, $pid);
}

sub stop_busy
{
	my ($session, $pid) = @_;
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	eval { $session->quit };
}

sub on_node
{
	my ($pid, $n) = @_;
	my $cpu = last_cpu($pid);
	return defined $cpu && ($node_of_cpu->{$cpu} // -1) == $n;
}

# --- the mask spans the nodes in reach; memory stays at home ----------------
{
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$last";
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	is(kernel_cpus($pid), $all_cpus, "a backend of node $last may run on every CPU (Cpus_allowed_list $all_cpus)");
	is($node->safe_psql('postgres', "SELECT node || ' ' || cpus FROM numasched_processes WHERE pid = $pid"),
		"$last $all_cpus", '...and numasched_processes says its home and those CPUs');
	$s->query_safe('SELECT count(*) FROM generate_series(1, 100000)');
	is(heap_policy($pid), "prefer:$last", "...its memory policy is its home node's (numa_maps: prefer:$last), wherever it runs");
	is($node->safe_psql('postgres', 'SELECT sum(statements) FROM numasched_groups'), '0',
		'no statement is counted for lending: the kernel has every CPU in reach already');
	$s->quit;
}

# --- away while its home idles: brought back -------------------------------
SKIP:
{
	my $before = $homecomings->();
	my ($s, $pid) = busy_on($first);
	# the kernel is told to run it on the other node, then every CPU again,
	# as its own balancing would leave it there
	system("taskset -p -c " . join(',', @last_cpus) . " $pid >/dev/null") == 0 or skip 'taskset failed', 3;
	ok(wait_until(sub { on_node($pid, $last) }, 10), "a busy backend of node $first runs on node $last once it is sent there");
	system("taskset -p -c $all_cpus $pid >/dev/null");
	my $home = wait_until(sub { on_node($pid, $first) }, 10);
	ok($home, "...it runs on node $first again, its home's CPUs idle (last CPU " . (last_cpu($pid) // '?') . ')');
	cmp_ok($homecomings->(), '>', $before, '...brought by numasched (numasched_stats.homecomings)');
	is(kernel_cpus($pid), $all_cpus, '...and may run on every CPU again');
	stop_busy($s, $pid);
}

# --- each on the other's home, no CPU idle: they trade places -------------
SKIP:
{
	skip 'needs as many CPUs on the first and the last node', 2 if @first_cpus != @last_cpus;
	my $before = $homecomings->();
	my (@first_busy, @last_busy);
	push @first_busy, [ busy_on($first) ] for @first_cpus;
	push @last_busy, [ busy_on($last) ] for @last_cpus;
	system("taskset -p -c " . join(',', @last_cpus) . " $_->[1] >/dev/null") for @first_busy;
	system("taskset -p -c " . join(',', @first_cpus) . " $_->[1] >/dev/null") for @last_busy;
	my $away = wait_until(sub { !grep { !on_node($_->[1], $last) } @first_busy }, 10) &&
	  wait_until(sub { !grep { !on_node($_->[1], $first) } @last_busy }, 10);
	system("taskset -p -c $all_cpus $_->[1] >/dev/null") for @first_busy, @last_busy;
	my $traded = wait_until(
		sub {
			!grep { !on_node($_->[1], $first) } @first_busy and !grep { !on_node($_->[1], $last) } @last_busy;
		},
		15);
	ok($away && $traded,
		"every CPU busy, each backend sent to the other node: all back home "
		  . join(', ', map { "$_->[1] on " . (last_cpu($_->[1]) // '?') } @first_busy, @last_busy));
	cmp_ok($homecomings->(), '>=', $before + 2, '...traded by numasched (homecomings ' . ($homecomings->() - $before) . ')');
	stop_busy(@$_) for @first_busy, @last_busy;
}

# --- a parallel query's worker beside its leader while its node has room -----
SKIP:
{
	skip 'needs two CPUs on the first node', 2 if @first_cpus < 2;
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$first";
	my $leader = $node->background_psql('postgres');
	my $leader_pid = $leader->query_safe('SELECT pg_backend_pid()');
	$leader->query_until(qr/started/,
		"\\echo started\nSET parallel_leader_participation = on;\nSELECT count(*) FROM t WHERE spin(3000000) > 0;\n");
	my $worker;
	wait_until(
		sub {
			$worker = $node->safe_psql('postgres',
				"SELECT pid FROM numasched_processes WHERE leader_pid = $leader_pid AND pid <> $leader_pid LIMIT 1");
			$worker ne '';
		});
	skip 'no parallel worker started', 2 if !$worker;
	is($node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $worker"), $first,
		"the parallel worker's home is its leader's node $first");
	my ($samples, $home) = (0, 0);
	for (1 .. 40)
	{
		my $cpu = last_cpu($worker) // last;
		$samples++;
		$home++ if ($node_of_cpu->{$cpu} // -1) == $first;
		usleep(50_000);
	}
	cmp_ok($home, '>=', 0.8 * $samples, "...and it runs there ($home of $samples looks on node $first)");
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($leader_pid)");
	eval { $leader->quit };
}

# --- strict keeps today's node masks ------------------------------------------
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.node_binding = 'strict'");
$node->reload;
{
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$last";
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	my $got = wait_until(sub { kernel_cpus($pid) eq $cpus_of_node->{$last} }, 5);
	ok($got, "numasched.node_binding = strict: a backend of node $last is bound to its CPUs (" . kernel_cpus($pid) . ')');
	$s->quit;
}

$node->stop;
done_testing();
