# The invariant under every interleaving we can provoke: connection churn,
# reloads that change the groups, numasched_move, parallel queries and
# rebalancing, all at once; then, once quiet, every placed and bound process
# has in /proc the CPUs numasched_processes shows, no slot is left behind, and
# the server never restarted.  STRESS_SECONDS per seed (default 12), seeds 1-3
# (STRESS_SEEDS).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
my $seconds = $ENV{STRESS_SECONDS} || 12;
my @seeds = split /,/, ($ENV{STRESS_SEEDS} || '1,2,3');

my $node = numasched_cluster('stress', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
numasched.rebalance_interval = 50ms
numasched.imbalance_threshold = 1
max_connections = 60
max_worker_processes = 24
max_parallel_workers = 16
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION numasched;
-- one row per page: the workers of a parallel scan each get blocks
CREATE TABLE t WITH (fillfactor = 10) AS
  SELECT g AS x, repeat('x', 800) AS pad FROM generate_series(1, 400) g;
ALTER TABLE t SET (parallel_workers = 2);
});
my $started = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');

my %scripts = (
	# a connection that lives for one statement
	churn => "SELECT 1;\n",
	# a parallel query whose workers the scheduler and the moves shuffle
	parallel => "SET parallel_setup_cost = 0;\nSET parallel_tuple_cost = 0;\n"
	  . "SET min_parallel_table_scan_size = 0;\nSET max_parallel_workers_per_gather = 2;\n"
	  . "SELECT count(*) FROM t WHERE x % 7 <> 0 AND pg_sleep(0.0005) IS NOT NULL;\n",
	# numasched_move of a random placed process to a random group; the
	# process may be gone or exiting: that is part of the test, not an error
	move => "\\set k random(0, 1000000)\n"
	  . "DO \$\$ BEGIN PERFORM numasched_move(p.pid, g.node, g.cpu_group)\n"
	  . "  FROM (SELECT pid FROM numasched_processes ORDER BY pid OFFSET :k % greatest(1, (SELECT count(*) FROM numasched_processes)) LIMIT 1) p,\n"
	  . "       (SELECT node, cpu_group FROM numasched_groups ORDER BY cpu_group OFFSET :k % greatest(1, (SELECT count(*) FROM numasched_groups)) LIMIT 1) g;\n"
	  . "EXCEPTION WHEN OTHERS THEN NULL; END \$\$;\n",
	# reloads that regroup: one group per node and two, back and forth
	regroup => "\\set ms random(20, 200)\n"
	  . "ALTER SYSTEM SET numasched.groups_per_node = 1;\nSELECT pg_reload_conf();\n\\sleep :ms ms\n"
	  . "ALTER SYSTEM SET numasched.groups_per_node = 2;\nSELECT pg_reload_conf();\n\\sleep :ms ms\n",
);
my %files;
for my $name (keys %scripts)
{
	$files{$name} = "${PostgreSQL::Test::Utils::tmp_check}/stress_$name.sql";
	open(my $fh, '>', $files{$name}) or die "$files{$name}: $!";
	print $fh $scripts{$name};
	close $fh;
}

# Runs one pgbench in the background; returns its harness.
sub pgbench_start
{
	my ($seed, $script, @options) = @_;
	my ($out, $err) = ('', '');
	my @cmd = ('pgbench', '--no-vacuum', '--random-seed', $seed, '-T', $seconds,
		@options, '-f', $files{$script}, '-h', $node->host, '-p', $node->port, 'postgres');
	return { script => $script, out => \$out, err => \$err,
		run => IPC::Run::start(\@cmd, '<', \undef, '>', \$out, '2>', \$err) };
}

for my $seed (@seeds)
{
	# the seed also varies how many clients of each kind run
	my @runs = (
		pgbench_start($seed, 'churn', '--connect', '-c', 2 + $seed % 3),
		pgbench_start($seed, 'parallel', '-c', 1 + $seed % 2),
		pgbench_start($seed, 'move', '-c', 2),
		pgbench_start($seed, 'regroup', '-c', 1),
	);
	for my $r (@runs)
	{
		$r->{run}->finish;
		like(${ $r->{out} }, qr/number of transactions actually processed: [1-9]/,
			"seed $seed: $r->{script} ran") or diag(${ $r->{err} });
	}
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.groups_per_node');
	$node->reload;

	# quiet: the scheduler re-binds after the last regroup and forgets the
	# workers that exited; then the books equal the kernel
	my $mismatch;
	wait_until(sub {
		$mismatch = '';
		for my $row (split /\n/, $node->safe_psql('postgres',
			'SELECT pid, cpus FROM numasched_processes WHERE bound ORDER BY pid'))
		{
			my ($pid, $cpus) = split /\|/, $row;
			my $kernel = kernel_cpus($pid) // next;    # exited since
			$mismatch .= " $pid: view $cpus, kernel $kernel" if $kernel ne $cpus;
		}
		return $mismatch eq '';
	}, 20);
	is($mismatch, '', "seed $seed: every bound process has in /proc the CPUs the view shows");
	my $left = wait_until(sub {
		my $n = $node->safe_psql('postgres',
			'SELECT count(*) FROM numasched_processes WHERE pid <> pg_backend_pid()');
		return $n == 0 ? 'none' : undef;
	}, 20);
	is($left, 'none', "seed $seed: no slot is left behind")
	  or diag($node->safe_psql('postgres',
		'SELECT p.*, a.backend_type FROM numasched_processes p LEFT JOIN pg_stat_activity a USING (pid)'));
	# our own backend's load at most (measured CPU use, 1 until measured)
	cmp_ok($node->safe_psql('postgres', 'SELECT sum(load) FROM numasched_groups'), '<=', 1,
		"seed $seed: the groups carry no load of processes that are gone");
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started,
		"seed $seed: the server never restarted");
}
is($node->safe_psql('postgres', 'SELECT scheduler_restarts FROM numasched_stats'), 0,
	'the scheduler never restarted');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC|TRAP:/, 'no crash in the log');

$node->stop;
done_testing();
