# A failure while numasched decides, forced with numasched.inject_fault in a
# parallel query's workers: an allocation that fails (the room for a
# decision is made before numasched's lock is taken) and an ERROR with the
# lock held (the worker's exit gives its slot back all the same).  Each
# gives the query an ERROR and nothing hangs: the leader returns, other
# sessions log in within a second, and the workers' slots are given back.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
# no lending: the leader itself decides nothing while its query starts
my $node = numasched_cluster('faults', qq{
numasched.groups_per_node = 2
numasched.group_binding = strict
numasched.lend_idle_cpus = off
numasched.lend_at_start = off
max_worker_processes = 8
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
create_slow_table($node);

for my $fault (qw(out_of_memory error_under_lock))
{
	my ($out, $err) = ('', '');
	my $started = time();
	my $query = IPC::Run::start(
		[
			'psql', '-X', '-d', $node->connstr('postgres'), '-c', qq{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SET numasched.inject_fault = '$fault';
SELECT count(*) FROM t WHERE slow(x);
}
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout(60));
	my @logins;
	for (1 .. 5)
	{
		my $t = time();
		$node->safe_psql('postgres', 'SELECT 1');
		push @logins, time() - $t;
	}
	my $returned = eval { $query->finish; 1 };
	$query->kill_kill unless $returned;
	my $took = time() - $started;
	ok($returned, sprintf("$fault in its workers: the parallel query's leader returns (%.1f s)", $took));
	like($err, $fault eq 'out_of_memory' ? qr/ERROR:  out of memory/ : qr/ERROR:  numasched.inject_fault/,
		"$fault: the query gets the ERROR");
	cmp_ok((sort { $b <=> $a } @logins)[0], '<', 1,
		sprintf("$fault: meanwhile other sessions log in within a second (slowest %.2f s)", (sort { $b <=> $a } @logins)[0]));
	ok( wait_until(
			sub {
				$node->safe_psql('postgres',
					"SELECT count(*) = 0 FROM numasched_processes WHERE leader_pid IS NOT NULL") eq 't';
			},
			10),
		"$fault: the workers' slots are given back");
}

# the setting is for the tests: a session without it decides as before
ok($node->safe_psql('postgres', q{SHOW numasched.inject_fault}) eq 'none', 'numasched.inject_fault is off by default');
$node->stop;
done_testing();
