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

# The scheduler held still while the kernel is told to move processes away,
# so that they are seen away before it brings them home.
my $scheduler = $node->safe_psql('postgres', "SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");
sub hold_scheduler { kill($_[0] ? 'STOP' : 'CONT', $scheduler) }

# its home's CPUs, and another node's
sub home_and_away
{
	my ($home) = @_;
	my $away = $home == $first ? $last : $first;
	return ($away, $cpus_of_node->{$away});
}

# A session busy in a loop that runs until it is cancelled, where numasched
# placed it: (session, pid, its home node).
sub busy
{
	my $session = $node->background_psql('postgres');
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	my $home = $node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $pid");
	$session->query_until(qr/started/, "\\echo started\nSELECT spin(2000000000);\n");
	# psql said "started" before it sent the query: busy once the backend runs
	ok(wait_until(sub { runnable($pid) }, 10), "backend $pid runs its query");
	return ($session, $pid, $home);
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
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	my $home = $node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $pid");
	is(kernel_cpus($pid), $all_cpus, "a backend may run on every CPU (Cpus_allowed_list $all_cpus)");
	is($node->safe_psql('postgres', "SELECT cpus FROM numasched_processes WHERE pid = $pid"),
		$all_cpus, '...and numasched_processes says so');
	$s->query_safe('SELECT count(*) FROM generate_series(1, 100000)');
	is(heap_policy($pid), "prefer:$home", "...its memory policy is its home node's (numa_maps: prefer:$home), wherever it runs");
	is($node->safe_psql('postgres', 'SELECT sum(statements) FROM numasched_groups'), '0',
		'no statement is counted for lending: the kernel has every CPU in reach already');
	# a visit: run on the other node (the scheduler held still), allocate
	# there.  What it allocates is compared, not where all its pages are: a
	# backend younger than a second has not brought home what it allocated
	# before its policy was set, and the pages it still shares with the
	# postmaster lie where the postmaster's do (one fresh-clone run found
	# N0=2360 N1=159 on a backend of node 0: 93.7%).
	my ($away, $away_cpus) = home_and_away($home);
	hold_scheduler(1);
	system("taskset -p -c $away_cpus $pid >/dev/null");
	my %before = private_pages($pid);
	# an open cursor's sort holds its memory (400,000 rows: its array alone
	# is 9.6 MB) while its pages are read
	$s->query_safe("SET work_mem = '64MB'");
	$s->query_safe('BEGIN');
	$s->query_safe('DECLARE c CURSOR FOR SELECT g FROM generate_series(1, 400000) g ORDER BY g DESC');
	$s->query_safe('FETCH 1 FROM c');
	my $visited = on_node($pid, $away);
	my %after = private_pages($pid);
	$s->query_safe('COMMIT');
	hold_scheduler(0);
	my %grew = map { $_ => ($after{$_} // 0) - ($before{$_} // 0) } $home, $away;
	my $where = join(' ', map { "N$_=" . ($before{$_} // 0) . '->' . ($after{$_} // 0) } sort keys %after);
	ok($visited, "a backend of node $home sent to node $away ran its query there");
	cmp_ok($grew{$home} + $grew{$away}, '>=', 2400, "...its sort holds 10 MB and more (numa_maps: $where)");
	cmp_ok($grew{$away}, '<=', 2 + $grew{$home} / 50,
		"...and they are on its home node $home all the same: $grew{$home} more there, $grew{$away} on node $away");
	$s->quit;
	# a class of one node keeps its sessions there
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$last";
	$s = $node->background_psql('postgres');
	$pid = $s->query_safe('SELECT pg_backend_pid()');
	is(kernel_cpus($pid), $cpus_of_node->{$last},
		"numasched.nodes = '$last': its reach is that node's CPUs ($cpus_of_node->{$last})");
	$s->quit;
}

# --- sent away while its home idles: brought back ------------------------------
{
	my $before = $homecomings->();
	my ($s, $pid, $home) = busy();
	my ($away, $away_cpus) = home_and_away($home);
	# the kernel is told to run it on the other node alone: at once if it runs,
	# at its wakeup if its query has not reached it yet
	hold_scheduler(1);
	system("taskset -p -c $away_cpus $pid >/dev/null");
	ok(wait_until(sub { on_node($pid, $away) }, 10), "a busy backend of node $home runs on node $away once sent there");
	hold_scheduler(0);
	my $back = wait_until(sub { on_node($pid, $home) }, 10);
	ok($back, "...it runs on node $home again, its home's CPUs idle (last CPU " . (last_cpu($pid) // '?') . ')');
	cmp_ok($homecomings->(), '>', $before, '...brought by numasched (numasched_stats.homecomings)');
	is(kernel_cpus($pid), $all_cpus, '...and may run on every CPU again');
	stop_busy($s, $pid);
}

# --- each on the other's home, no CPU idle: they trade places -------------
SKIP:
{
	skip 'needs two nodes of as many CPUs', 3 if @with_cpus != 2 || @first_cpus != @last_cpus;
	my $before = $homecomings->();
	my @busy = map { [ busy() ] } 1 .. @first_cpus + @last_cpus;
	my %homes;
	$homes{ $_->[2] }++ for @busy;
	skip 'numasched did not place as many on each node', 3 if ($homes{$first} // 0) != @first_cpus;
	hold_scheduler(1);
	system("taskset -p -c " . (home_and_away($_->[2]))[1] . " $_->[1] >/dev/null") for @busy;
	my $sent = sub { scalar grep { on_node($_->[1], (home_and_away($_->[2]))[0]) } @busy };
	wait_until(sub { $sent->() == @busy }, 10);
	is($sent->(), scalar @busy, 'every CPU busy, each backend sent to the other node runs there');
	hold_scheduler(0);
	my $traded = wait_until(sub { !grep { !on_node($_->[1], $_->[2]) } @busy }, 15);
	ok($traded, 'all are back home: ' . join(', ', map { "$_->[1] (home $_->[2]) on CPU " . (last_cpu($_->[1]) // '?') } @busy));
	cmp_ok($homecomings->(), '>=', $before + @busy, '...traded by numasched (homecomings ' . ($homecomings->() - $before) . ')');
	stop_busy(@$_) for @busy;
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
