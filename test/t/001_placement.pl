# Backends and parallel workers are bound as numasched_processes says, read
# back from the kernel (/proc/PID/status).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

my $node = numasched_cluster('placement', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
# exact CPU sets are checked here: no CPUs lent to a busy group
numasched.lend_idle_cpus = off
numasched.log_placements = on
max_worker_processes = 16
max_connections = 20
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');

my $postmaster_cpus = kernel_cpus($node->{_pid});

# "pid|cpus|cpu_group|node|bound" of a placed process, or '' if not placed
sub placement
{
	my ($pid) = @_;
	return $node->safe_psql('postgres',
		"SELECT pid, cpus, cpu_group, node, bound FROM numasched_processes WHERE pid = $pid");
}

sub cpus_of { (split /\|/, placement($_[0]))[1] // '' }
sub group_of { (split /\|/, placement($_[0]))[2] // '' }
sub node_of { (split /\|/, placement($_[0]))[3] // '' }

# --- concurrent backends land in different groups --------------------------
my $s1 = $node->background_psql('postgres');
my $s2 = $node->background_psql('postgres');
my $pid1 = $s1->query_safe('SELECT pg_backend_pid()');
my $pid2 = $s2->query_safe('SELECT pg_backend_pid()');

for my $pid ($pid1, $pid2)
{
	my $cpus = cpus_of($pid);
	isnt($cpus, '', "backend $pid is placed");
	is(kernel_cpus($pid), $cpus, "backend $pid: /proc/$pid/status has the CPUs the view shows");
	cmp_ok(cpu_count(kernel_cpus($pid)), '<', cpu_count($postmaster_cpus),
		"backend $pid: bound to fewer CPUs than the postmaster has");
}
isnt(group_of($pid1), group_of($pid2), 'two concurrent backends are in different groups');
is($node->safe_psql('postgres', "SELECT bool_and(bound) FROM numasched_processes"), 't',
	'every placed process is bound');

# --- parallel workers of a query sit with their leader ----------------------
$node->safe_psql('postgres', q{
-- one row per page: from 17 on a scan's read stream claims blocks ahead, and
-- a leader could claim all of a small table before its workers start
CREATE TABLE t WITH (fillfactor = 10) AS
  SELECT g AS x, repeat('x', 800) AS pad FROM generate_series(1, 600) g;
ALTER TABLE t SET (parallel_workers = 2);
CREATE FUNCTION slow(int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE
  AS $$ BEGIN PERFORM pg_sleep(0.005); RETURN true; END $$;
});

# Runs a slow parallel query in $session; returns the leader's worker pids
# once they are placed, and checks them against the kernel.
sub check_parallel_query
{
	my ($session, $leader, $label) = @_;
	$session->query_until(qr/started/, q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
\echo started
SELECT count(*) FROM t WHERE slow(x);
});
	# both workers, unless one is late (then the one there is looked at)
	my $placed = sub {
		$node->safe_psql('postgres',
			"SELECT string_agg(pid::text, ' ') FROM numasched_processes WHERE leader_pid = $leader");
	};
	wait_until(sub { (() = $placed->() =~ /\d+/g) >= 2 }, 5);
	my $workers = wait_until(sub { my $w = $placed->(); $w =~ /\d/ ? $w : undef });
	ok($workers, "$label: parallel workers of backend $leader are placed");
	for my $w (split / /, $workers // '')
	{
		my $cpus = cpus_of($w);
		is(kernel_cpus($w), $cpus, "$label: worker $w: /proc has the CPUs the view shows")
		  if $cpus ne '';	# it may have finished its part already
		is(node_of($w), node_of($leader), "$label: worker $w is on its leader's node") if $cpus ne '';
	}
	$session->query_safe('SELECT 1');	# waits for the query to end
	return $workers;
}
check_parallel_query($s1, $pid1, 'compact, 2 groups');

# with one group per node, compact puts the workers in the leader's very group
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 1');
$node->reload;
my $s3 = $node->background_psql('postgres');
my $pid3 = $s3->query_safe('SELECT pg_backend_pid()');
is(kernel_cpus($pid3), $postmaster_cpus, 'after reload to 1 group: a new backend gets the whole node');
my ($mret, $mout, $merr) = $node->psql('postgres',
	"SELECT numasched_move($pid1, (SELECT min(node) FROM numasched_topology), 1)");
like($merr, qr/ERROR:  CPU group 1 is not on node \d+/,
	'a group that the reload took away is refused (checked against the plan in force)');
my $workers = $s3->query_until(qr/started/, q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
\echo started
SELECT count(*) FROM t WHERE slow(x);
});
my $w3 = wait_until(sub {
	$node->safe_psql('postgres', "SELECT min(pid) FROM numasched_processes WHERE leader_pid = $pid3") });
ok($w3, 'compact, 1 group: a worker is placed');
is(kernel_cpus($w3), kernel_cpus($pid3), 'compact, 1 group: the worker has exactly its leader\'s CPUs')
  if $w3;
$s3->query_safe('SELECT 1');

# --- a reload changes the groups of new sessions ------------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 2');
$node->reload;
my $s4 = $node->background_psql('postgres');
my $pid4 = $s4->query_safe('SELECT pg_backend_pid()');
is(cpu_count(kernel_cpus($pid4)), cpu_count($postmaster_cpus) / 2,
	'after reload to 2 groups: a new backend gets half the node');
is(kernel_cpus($pid1), cpus_of($pid1), 'a backend placed before the reloads keeps its CPUs');
$s4->quit;
$s3->quit;

# --- parallel CREATE INDEX workers, placed by the scheduler -------------------
$node->safe_psql('postgres', q{
CREATE TABLE big AS SELECT g AS x FROM generate_series(1, 400000) g;
ALTER TABLE big SET (parallel_workers = 2);
});
my $scheduler = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");
like($scheduler, qr/^\d+$/, 'the numasched scheduler runs');
$s2->query_until(qr/started/, q{
SET max_parallel_maintenance_workers = 2;
\echo started
CREATE INDEX ON big (md5(repeat(x::text, 300)));
});
my $iw = wait_until(sub {
	$node->safe_psql('postgres', "SELECT min(pid) FROM numasched_processes WHERE leader_pid = $pid2") });
ok($iw, 'parallel CREATE INDEX: a worker is placed');
if ($iw)
{
	# its slot may be seen a moment before the scheduler binds it
	my $cpus = wait_until(sub { cpus_of($iw) }, 5);
	is(kernel_cpus($iw), $cpus, 'parallel CREATE INDEX: /proc has the CPUs the view shows') if $cpus;
	ok($node->log_contains(qr/\[$scheduler\] LOG:  numasched placed parallel worker $iw /),
		'parallel CREATE INDEX: the worker was placed by the scheduler (it never enters the executor)');
}
$s2->query_safe('SELECT 1');

# --- numasched.enabled = off binds nothing ----------------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.enabled = off');
$node->reload;
my $s5 = $node->background_psql('postgres');
my $pid5 = $s5->query_safe('SELECT pg_backend_pid()');
is(placement($pid5), '', 'enabled = off: a new backend is not placed');
is(kernel_cpus($pid5), $postmaster_cpus, 'enabled = off: it keeps the postmaster\'s CPUs');
$s5->quit;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.enabled');
$node->reload;

# --- slots are given back -----------------------------------------------------
$s1->quit;
$s2->quit;
my $victim = $node->background_psql('postgres');
my $vpid = $victim->query_safe('SELECT pg_backend_pid()');
isnt(placement($vpid), '', 'a backend to terminate is placed');
$node->safe_psql('postgres', "SELECT pg_terminate_backend($vpid, 5000)");
wait_until(sub { placement($vpid) eq '' }, 10);
is(placement($vpid), '', 'FATAL (terminated): its slot is given back');
$victim->{run}->kill_kill;

$node->connect_fails('dbname=postgres user=nosuchrole', 'a failed authentication',
	expected_stderr => qr/role "nosuchrole" does not exist/);

# 400 connections, each slot of max_connections = 20 reused 20 times (019
# churns 1,000 at max_connections = 10,000 beside a load)
$node->pgbench('--no-vacuum --connect --client=2 --transactions=200', 0,
	[qr{processed: 400/400}], [qr{^$}], '400 connect/disconnect cycles',
	{ '001_churn' => 'SELECT 1;' });
my ($left, $load) = split /\|/, $node->safe_psql('postgres',
	"SELECT (SELECT count(*) FROM numasched_processes WHERE pid <> pg_backend_pid()),
	        (SELECT sum(load) FROM numasched_groups)");
is($left, 0, 'after 400 connections no slot is left but our own')
  or diag($node->safe_psql('postgres', 'SELECT p.*, a.backend_type, a.state, a.query FROM numasched_processes p LEFT JOIN pg_stat_activity a USING (pid)'));
is($load, 1, 'after 400 connections the groups carry only our own load');
cmp_ok($node->safe_psql('postgres', 'SELECT placements FROM numasched_stats'), '>=', 400,
	'numasched_stats counted the placements');

# --- the module says who it is where PostgreSQL asks (18's PG_MODULE_MAGIC_EXT)
SKIP:
{
	skip 'pg_get_loaded_modules() is new in PostgreSQL 18', 1
	  if $node->pg_version < 18;
	is($node->safe_psql('postgres',
			"SELECT module_name || ' ' || version FROM pg_get_loaded_modules()
			 WHERE file_name = 'numasched.so'"),
		'numasched ' . $node->safe_psql('postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'numasched'"),
		'pg_get_loaded_modules() names numasched with the version of its extension');
}

$node->stop;
done_testing();
