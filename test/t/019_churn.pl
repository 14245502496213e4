# Connections opened and closed at max_connections = 10,000, beside a
# parallel query load: sessions of two roles with classes of their own and of
# a background role come and go (pgbench -C, 8 clients).  No login takes a
# second; afterwards numasched's books match the kernel (a new session's CPUs
# in /proc are those numasched_processes shows, and no slot is left behind),
# and the scheduler's private memory has not grown with the churn.
# CHURN_CONNECTIONS of them (1,000 by default: a login takes 15-20 ms of this
# machine's two CPUs with or without numasched, so 10,000 take 200 s, run by
# hand with CHURN_CONNECTIONS=10000).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use List::Util qw(max);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
my $connections = $ENV{CHURN_CONNECTIONS} || 1_000;
# 8 clients: 3 of each role with a class, 2 of the background role
my %clients = (oltp => 3, reporting => 3, batch => 2);

my $node = numasched_cluster('churn', qq{
max_connections = 10000
numasched.groups_per_node = 2
numasched.rebalance_interval = 100ms
max_worker_processes = 16
max_parallel_workers = 8
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION numasched;
CREATE ROLE oltp SUPERUSER LOGIN;
CREATE ROLE reporting SUPERUSER LOGIN;
CREATE ROLE batch SUPERUSER LOGIN;
ALTER ROLE oltp SET numasched.cpu_groups = '0';
ALTER ROLE reporting SET numasched.cpu_groups = '1';
ALTER ROLE batch SET numasched.cpu_priority = background;
});
create_slow_table($node);

# The private memory of a process: its private mappings' written pages, kB.
sub private_kb
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/smaps") or return undef;
	my ($kb, $private) = (0, 0);
	while (my $line = <$fh>)
	{
		if ($line =~ /^[0-9a-f]+-[0-9a-f]+ \S{3}(\S)/) { $private = $1 eq 'p'; }
		elsif ($private && $line =~ /^Private_Dirty:\s+(\d+) kB/) { $kb += $1; }
	}
	return $kb;
}

my $scheduler = $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'});
# a first churn of the same kind: what the scheduler keeps for a busy server is made
my $dir = PostgreSQL::Test::Utils::tempdir();
my $script = "$dir/connect.sql";
open(my $fh, '>', $script) or die;
print $fh "SELECT 1;\n";
close($fh);

sub churn
{
	my ($per_client, $log) = @_;
	my @runs;
	for my $role (sort keys %clients)
	{
		push @runs,
		  IPC::Run::start(
			[
				'pgbench', '-n', '-C', '-c', $clients{$role}, '-j', $clients{$role}, '-t', $per_client, '-f', $script,
				'-U', $role, ($log ? ('-l', "--log-prefix=$dir/log_$role") : ()),
				'-h', $node->host, '-p', $node->port, 'postgres'
			],
			'>', \my $out, '2>', \my $err);
	}
	$_->finish for @runs;
}
churn(20, 0);
my $before = private_kb($scheduler);

# the parallel query load, meanwhile
my ($pout, $perr) = ('', '');
my $parallel = IPC::Run::start(
	[
		'psql', '-X', '-d', $node->connstr('postgres'), '-c', q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
DO $$ BEGIN FOR i IN 1..100000 LOOP PERFORM count(*) FROM t WHERE x % 7 <> 0; END LOOP; END $$;
}
	],
	'>', \$pout, '2>', \$perr);
churn(int($connections / 8) + 1, 1);
$node->safe_psql('postgres', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%FOR i IN%' AND pid <> pg_backend_pid()});
$parallel->finish;

# per role: each connection's latency (pgbench's log counts the connection in)
my %latency_ms = map {
	my $role = $_;
	($role => [ map { (split)[2] / 1000 } map { split /\n/, slurp_file($_) } glob("$dir/log_$role*") ])
} keys %clients;
my $opened = 0;
$opened += scalar @{ $latency_ms{$_} } for keys %latency_ms;
cmp_ok($opened, '>=', $connections, "$opened connections opened and closed");
my $slowest = max(@{ $latency_ms{oltp} }, @{ $latency_ms{reporting} });
cmp_ok($slowest, '<', 1000, sprintf('no login of the normal roles took a second (slowest %.0f ms)', $slowest));
# the background role's run where the others leave a CPU idle: slower, by design
note(sprintf('the background role\'s slowest: %.0f ms', max(@{ $latency_ms{batch} })));

# quiet: only this test's own session is left, and the scheduler's pass has run
my $left;
ok( wait_until(
		sub {
			$left = $node->safe_psql('postgres',
				q{SELECT count(*) FROM numasched_processes p
				   WHERE NOT EXISTS (SELECT FROM pg_stat_activity a WHERE a.pid = p.pid)
				      OR p.pid <> pg_backend_pid()});
			$left eq '0';
		},
		10),
	"no slot is left behind ($left besides the session asking)");
my $s = $node->background_psql('postgres', extra_params => [ '-U', 'oltp' ]);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
my $books = $s->query_safe("SELECT cpus FROM numasched_processes WHERE pid = $pid");
is(kernel_cpus($pid), $books, "a new session's CPUs in /proc are those numasched_processes shows ($books)");
$s->quit;
my $after = private_kb($scheduler);
cmp_ok($after - $before, '<=', 64,
	"the scheduler's private memory did not grow with the churn ($before kB before, $after kB after)");
$node->stop;
done_testing();
