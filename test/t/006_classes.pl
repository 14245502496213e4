# Workload classes: ALTER ROLE / ALTER DATABASE ... SET numasched.cpu_groups
# and numasched.spill put each role's and database's sessions, and their
# parallel workers, in their CPU groups, read back from /proc before the
# session's first query; SET and RESET move a session; a reload that takes
# a group away moves its sessions into what is left.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

# without lending: a group whose sessions wait (connections starting) may be
# lent the other group's CPU for a moment, and the masks read here are the
# classes' (010_lending.pl tests lending)
my $node = numasched_cluster('classes', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
numasched.log_placements = on
numasched.rebalance_interval = 100ms
numasched.lend_idle_cpus = off
max_worker_processes = 16
max_connections = 20
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my %group_cpus = map { split /\|/ } split /\n/,
  $node->safe_psql('postgres', 'SELECT cpu_group, cpus FROM numasched_groups');
is(scalar keys %group_cpus, 2, 'two CPU groups (groups_per_node = 2 on one node)');

$node->safe_psql('postgres', q{
CREATE ROLE oltp LOGIN;
CREATE ROLE reporting LOGIN;
CREATE ROLE tenant LOGIN;
CREATE DATABASE tenantdb;
ALTER ROLE oltp SET numasched.cpu_groups = '0';
ALTER ROLE reporting SET numasched.cpu_groups = '1';
ALTER ROLE reporting SET numasched.spill = never;
ALTER DATABASE tenantdb SET numasched.cpu_groups = '1';
ALTER DATABASE tenantdb SET numasched.spill = never;
ALTER ROLE oltp IN DATABASE tenantdb SET numasched.cpu_groups = '1';
GRANT pg_read_all_stats TO reporting;
-- the test's own observing sessions take no room in the groups
ALTER ROLE postgres SET numasched.enabled = off;
});

# A session of $role in $db that has sent no query yet, and its pid (from
# another session: pg_stat_activity shows no query for it).
sub idle_session
{
	my ($role, $db) = @_;
	my $session = $node->background_psql($db, extra_params => [ '-U', $role ]);
	my $pid = wait_until(sub {
		$node->safe_psql('postgres',
			"SELECT pid FROM pg_stat_activity WHERE usename = '$role' AND datname = '$db'"
			  . " AND backend_type = 'client backend' AND query = ''") || undef;
	});
	return ($session, $pid);
}

# --- roles, databases, roles in databases, before the first query ---------------
my @cases = (
	[ 'oltp', 'postgres', 0, 'a role setting' ],
	[ 'reporting', 'postgres', 1, 'another role, another group' ],
	[ 'tenant', 'tenantdb', 1, 'a database setting' ],
	[ 'oltp', 'tenantdb', 1, 'a role-in-database setting wins over the role\'s' ],
	[ 'reporting', 'tenantdb', 1, 'the role\'s setting wins over the database\'s' ]);
my @open;
for my $case (@cases)
{
	my ($role, $db, $group, $label) = @$case;
	my ($session, $pid) = idle_session($role, $db);
	ok($pid, "$label: $role in $db is connected and has run no query");
	# placed when its start-up transaction commits, just after it shows up
	my $cpus = wait_until(sub { my $c = kernel_cpus($pid // 0) // ''; $c eq $group_cpus{$group} ? $c : undef }, 5);
	is($cpus // kernel_cpus($pid // 0), $group_cpus{$group},
		"$label: $role in $db runs on group ${group}'s CPUs before its first query");
	push @open, $session;
}
is($node->safe_psql('postgres', q{
SELECT string_agg(role || '@' || database || ':' || cpu_group || '/' || class_groups || '/' || spill, ' '
                  ORDER BY role, database)
  FROM numasched_workloads WHERE role IN ('oltp', 'reporting', 'tenant')}),
	'oltp@postgres:0/0/nearest oltp@tenantdb:1/1/never reporting@postgres:1/1/never '
	  . 'reporting@tenantdb:1/1/never tenant@tenantdb:1/1/never',
	'numasched_workloads shows each role and database in its class');
$_->quit for @open;

# --- SET and RESET move a session -----------------------------------------------
my ($oltp, $oltp_pid) = idle_session('oltp', 'postgres');
$node->safe_psql('postgres', 'GRANT SET ON PARAMETER numasched.cpu_groups TO oltp');
$oltp->query_safe(q{SET numasched.cpu_groups = '1'});
is(kernel_cpus($oltp_pid), $group_cpus{1}, 'SET numasched.cpu_groups moves the session at once');
$oltp->query_safe('RESET numasched.cpu_groups');
is(kernel_cpus($oltp_pid), $group_cpus{0}, 'RESET moves it back into its role\'s group');
$oltp->query_safe(q{BEGIN; SET LOCAL numasched.cpu_groups = '1'; SELECT 1});
is(kernel_cpus($oltp_pid), $group_cpus{1}, 'SET LOCAL moves it for the transaction');
$oltp->query_safe('COMMIT; SELECT 1');
is(kernel_cpus($oltp_pid), $group_cpus{0}, '...and back at its next statement after it');

# --- parallel workers stay in their leader's class ------------------------------
create_slow_table($node);

# The CPU lists of the workers of a slow parallel query in $session.
sub worker_cpus
{
	my ($session, $leader) = @_;
	start_slow_parallel_query($session);
	my $workers = wait_until(sub {
		my $w = $node->safe_psql('postgres',
			"SELECT string_agg(pid::text, ' ') FROM numasched_processes WHERE leader_pid = $leader");
		return $w =~ /\d+ \d+/ ? $w : undef;
	});
	my @cpus = map { kernel_cpus($_) // 'gone' } split / /, $workers // '';
	$session->query_safe('SELECT 1');
	return @cpus;
}

my ($reporting, $reporting_pid) = idle_session('reporting', 'postgres');
my @cpus = worker_cpus($reporting, $reporting_pid);
is(scalar @cpus, 2, 'spill = never: the reporting query has two workers');
is_deeply(\@cpus, [ $group_cpus{1}, $group_cpus{1} ],
	'spill = never: both stay in group 1 with their leader, sharing its CPU');
$node->safe_psql('postgres', 'ALTER ROLE reporting SET numasched.spill = nearest');
my ($spilling, $spilling_pid) = idle_session('reporting', 'postgres');
$reporting->quit;
# group 0 has room once the scheduler has measured the idle oltp session
ok(wait_until(sub {
	$node->safe_psql('postgres', 'SELECT load < 1 FROM numasched_groups WHERE cpu_group = 0') eq 't' }, 10),
	'group 0 has room (its oltp session is idle)');
@cpus = worker_cpus($spilling, $spilling_pid);
ok((grep { $_ eq $group_cpus{0} } @cpus),
	"spill = nearest: a worker takes the idle group 0 when group 1 is full (@cpus)");
$spilling->quit;

# --- numasched.enabled = off for a role: neither it nor its workers are placed -----
# (a worker outlives the scheduler's discovery of unplaced workers, two scans
# 100 ms apart)
$node->safe_psql('postgres', q{
CREATE ROLE unplaced LOGIN;
ALTER ROLE unplaced SET numasched.enabled = off;
});
my ($unplaced, $unplaced_pid) = idle_session('unplaced', 'postgres');
start_slow_parallel_query($unplaced);
ok(wait_until(sub {
	$node->safe_psql('postgres', "SELECT count(*) FROM pg_stat_activity WHERE leader_pid = $unplaced_pid") > 0 }),
	"enabled = off: the role's parallel query has workers");
usleep(500_000);
is($node->safe_psql('postgres',
	"SELECT count(*) FROM numasched_processes WHERE pid = $unplaced_pid OR leader_pid = $unplaced_pid"), '0',
	'enabled = off: neither the session nor its workers are placed, not even by the scheduler');
$unplaced->query_safe('SELECT 1');
$unplaced->quit;

$node->safe_psql('postgres', 'ALTER ROLE reporting SET numasched.spill = never');
($reporting, $reporting_pid) = idle_session('reporting', 'postgres');

# --- numasched_move: inside its class for its role, anywhere for a superuser -----
my ($move_ret, $move_out, $move_err) = $node->psql('postgres', "SELECT numasched_move($reporting_pid, 0, 0)",
	extra_params => [ '-U', 'reporting' ]);
like($move_err, qr/ERROR:  permission denied to move process $reporting_pid out of its workload class/,
	'numasched_move by the role itself: refused into a group its class does not allow');
is(kernel_cpus($reporting_pid), $group_cpus{1}, '...and the session stays in group 1');
is($node->safe_psql('postgres', "SELECT numasched_move($reporting_pid, 0)", extra_params => [ '-U', 'reporting' ]),
	't', '...without a group it is moved within its class');
is(kernel_cpus($reporting_pid), $group_cpus{1}, '...that is, into group 1 again');
is($node->safe_psql('postgres', "SELECT numasched_move($reporting_pid, 0, 0)"), 't',
	'a superuser moves it out of its class');
is(kernel_cpus($reporting_pid), $group_cpus{0}, '...onto group 0\'s CPUs');
$node->safe_psql('postgres', "SELECT numasched_move($reporting_pid, 0, 1)");

# --- a reload that takes the class's group away ----------------------------------
$node->safe_psql('postgres',
	q{CREATE FUNCTION in_group_one() RETURNS int LANGUAGE sql SET numasched.cpu_groups = '1' AS 'SELECT 1'});
my $log_start = -s $node->logfile;
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 1');
$node->reload;
my $one_group = kernel_cpus($node->{_pid});
ok(wait_until(sub { kernel_cpus($oltp_pid) eq $one_group }, 15),
	'after a reload to one group, the session of class 0 runs on the one group left');
ok(wait_until(sub { kernel_cpus($reporting_pid) eq $one_group }, 15),
	'...and so does the session of class 1, whose group is gone');
ok(wait_until(sub { substr(slurp_file($node->logfile), $log_start) =~
	  /WARNING:  numasched.cpu_groups = '1' does not fit the CPU groups in force/ }, 10),
	'...with a WARNING for the class whose group is gone');
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT 1', extra_params => [ '-U', 'reporting' ]);
is($out, '1', 'a role whose group is gone still logs in');
like($err, qr/WARNING:  invalid value for parameter "numasched.cpu_groups": "1"/,
	'...with PostgreSQL\'s WARNING for the role setting it cannot apply');
($ret, $out, $err) = $node->psql('postgres', 'SELECT in_group_one()');
is($out, '1', 'a function whose SET clause names a group that is gone still runs')
  or diag($err);
$oltp->quit;
$reporting->quit;

$node->stop;
unlike(slurp_file($node->logfile), qr/TRAP|terminated by signal/, 'no crash in the log');
done_testing();
