# Lending on one node split into groups of one CPU (numasched.groups_per_node
# = 2): two busy backends forced into one group, the other CPU idle.
#
# - At its start: the second statement to start, its group's CPU running the
#   first, is moved to the other group's CPU at once, and bound to its own
#   group alone again at its end (not 200 ms later, as the tick gives back).
#   Where another program beside the first statement made its group wait,
#   the tick lends that group the idle CPU too, and the checks allow for it.
# - By the scheduler's tick, for work that the statements' counts do not
#   show: with a statement that sleeps counted in the other group, the
#   waiting one still gets the idle CPU within a second (a few ms in the VM,
#   where test/vm/t/050_lending.pl also looks at memory), both are bound to
#   their group again after the burst.  Before the burst nothing runs, and
#   the scheduler dozes (it wakes about once a second, not 20 times); the
#   burst's statements wake it.
# - With numasched.lend_idle_cpus = off they share their one CPU.
#
# Read from /proc: Cpus_allowed_list, the CPU each last ran on, the
# scheduler's voluntary context switches.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

my $node = numasched_cluster('lending', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
numasched.rebalance_interval = 0
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my ($home, $home_cpus, $other_cpus) = split /\|/, $node->safe_psql('postgres',
	'SELECT g.cpu_group, g.cpus, o.cpus FROM numasched_groups g JOIN numasched_groups o ON o.node = g.node '
	  . 'AND o.cpu_group > g.cpu_group ORDER BY g.cpu_group LIMIT 1');
my $burst = 6;

my $scheduler = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");

sub scheduler_wakes
{
	return slurp_file("/proc/$scheduler/status") =~ /^voluntary_ctxt_switches:\s+(\d+)/m ? $1 : undef;
}

# two sessions in the home group, idle
sub sessions_at_home
{
	my @sessions = map { $node->background_psql('postgres') } 1 .. 2;
	my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @sessions;
	$_->query_safe("SELECT numasched_move(pg_backend_pid(), (SELECT node FROM numasched_groups WHERE cpu_group = $home), $home)")
	  for @sessions;
	return (\@sessions, \@pids);
}

sub start_burst
{
	my ($sessions) = @_;
	$_->query_until(qr/started/, "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$burst s' LOOP END LOOP; END \$\$;\n")
	  for @$sessions;
}

sub stat_of
{
	my ($column) = @_;
	return $node->safe_psql('postgres', "SELECT $column FROM numasched_stats");
}

my %other = map { $_ => 1 } split /,/, $other_cpus;

# At its start: the first statement runs at home, the second, finding the
# home CPU running one, on the other group's CPU from its first instant
my ($sessions, $pids) = sessions_at_home();
my $statement_lends = stat_of('statement_lends');
my $tick_lends = stat_of('lends');
my $cpu_ticks0 = (cpu_ticks($pids->[0]) // 0);
start_burst([ $sessions->[0] ]);
# psql says "started" before it sends the statement: wait until the kernel
# has run the first one a little, so that it is counted when the second starts
ok(wait_until(sub { (cpu_ticks($pids->[0]) // 0) >= $cpu_ticks0 + 3 }, 5), 'statement lending: the first busy statement runs');
start_burst([ $sessions->[1] ]);
my $t_second = time();
# Another program (this test, its psql) running beside the first statement
# on its CPU makes it wait while the other CPU idles, and the tick then lends
# its group that CPU too, rightly: where it did, the group gets it back from
# the tick, 200 ms after the last wait, not at a statement's end.
my $tick_lent = sub { stat_of('lends') > $tick_lends };
my $first_cpus = kernel_cpus($pids->[0]);
my $lent_at_start = wait_until(sub { my $cpu = last_cpu($pids->[1]); defined $cpu && $other{$cpu} }, 1);
if (!$lent_at_start && $tick_lent->())
{
	# the first may have the lent CPU already: then no CPU idles either way
	ok(wait_until(sub { (last_cpu($pids->[0]) // -1) != (last_cpu($pids->[1]) // -1) }, 1),
		'statement lending: with the tick\'s lend as well, the two run on two CPUs');
}
else
{
	ok($lent_at_start, sprintf('statement lending: the second runs on the idle CPU %s (the CPU it last ran on, %.0f ms after its start)',
		$other_cpus, 1000 * (time() - $t_second)))
	  or diag('allowed: ' . (kernel_cpus($pids->[1]) // '?'));
}
if ($tick_lent->())
{
	note("the tick lent group $home the other CPU too: another program's work waited beside the first statement");
	# read before the lend, or after it
	my $view = $node->safe_psql('postgres', "SELECT cpus FROM numasched_processes WHERE pid = $pids->[0]");
	ok($first_cpus eq $home_cpus || $first_cpus eq $view,
		"statement lending: the first busy statement runs in its group, or where the view says with the tick's lend ($first_cpus)");
}
else
{
	is($first_cpus, $home_cpus, "statement lending: the first busy statement runs in its group ($home_cpus)");
}
my ($cpus, $lent, $group) = split /\|/, $node->safe_psql('postgres',
	"SELECT cpus, lent_cpus, cpu_group FROM numasched_processes WHERE pid = $pids->[1]");
is($group, $home, 'statement lending: its group stays its own');
is($cpus, kernel_cpus($pids->[1]), "statement lending: the view shows the CPUs the kernel has ($cpus)");
is($lent, $other_cpus, "statement lending: lent_cpus names the lent CPU ($other_cpus)");
cmp_ok(stat_of('statement_lends'), '>', $statement_lends, 'statement lending: numasched_stats counts it');
$sessions->[1]->query_safe('SELECT 1');
my $end_cpus = kernel_cpus($pids->[1]);
if ($tick_lent->())
{
	my $t_end = time();
	ok(wait_until(sub { (kernel_cpus($pids->[1]) // '') eq $home_cpus }, 2),
		sprintf('statement lending: after its end it is bound to its group alone again (%s) once the tick gives its lend back (%.0f ms)',
			$home_cpus, 1000 * (time() - $t_end)));
}
else
{
	is($end_cpus, $home_cpus, "statement lending: at its end it is bound to its group alone again ($home_cpus), at once");
}
$sessions->[0]->query_safe('SELECT 1');
$_->quit for @$sessions;

# By the tick: a statement that sleeps in the other group keeps its CPU
# counted as busy, so the burst's statements start at home and only the
# scheduler sees the idle CPU
my $sleeper = $node->background_psql('postgres');
my $sleeper_pid = $sleeper->query_safe('SELECT pg_backend_pid()');
my $other_group = $node->safe_psql('postgres',
	"SELECT cpu_group FROM numasched_groups WHERE cpus = '$other_cpus'");
$sleeper->query_safe("SELECT numasched_move(pg_backend_pid(), (SELECT node FROM numasched_groups WHERE cpu_group = $other_group), $other_group)");
$sleeper->query_until(qr/started/, "\\echo started\nSELECT pg_sleep(600);\n");
my $lends = stat_of('lends');
$statement_lends = stat_of('statement_lends');
($sessions, $pids) = sessions_at_home();

# The test's premise is an idle CPU: wait until the other CPU is, so that
# another program's load on it (it is not numasched's to lend) is not taken
# for a failure to lend.
my $quiet = wait_until(
	sub {
		my $before = cpu_times();
		usleep(300_000);
		return (idle_share($before, cpu_times(), [ keys %other ]) // 0) >= 0.8;
	},
	30);
diag("CPU $other_cpus was not idle for 30 s before the burst: another program keeps it busy") unless $quiet;

# a second after the last statement the scheduler dozes: at most one wake a
# second (rebalance_interval = 0), where the lending tick alone would wake it
# 20 times
usleep(1_200_000);
my $wakes0 = scheduler_wakes();
sleep 2;
my $wakes = scheduler_wakes() - $wakes0;
cmp_ok($wakes, '<=', 5, "no statement for a second: the scheduler dozes ($wakes wakes in 2 s)");

start_burst($sessions);
my $t0 = time();
my $times0 = cpu_times();
my $visitor;
while (time() - $t0 < 5 && !defined $visitor)
{
	for my $pid (@$pids)
	{
		my $cpu = last_cpu($pid);
		$visitor = $pid if defined $cpu && $other{$cpu} && (kernel_cpus($pid) // '') ne $home_cpus;
	}
	usleep(5_000);
}
ok(defined $visitor, sprintf('one of two busy backends in group %d (CPU %s) runs on the idle CPU %s, after %.0f ms',
	$home, $home_cpus, $other_cpus, 1000 * (time() - $t0)))
  or diag(sprintf('CPU %s was idle %.0f%% of that time; the two backends: %s', $other_cpus,
	100 * (idle_share($times0, cpu_times(), [ keys %other ]) // 0),
	join('; ', map { "$_ on CPU " . (last_cpu($_) // '?') . ', allowed ' . (kernel_cpus($_) // '?') } @$pids)));
cmp_ok(time() - $t0, '<=', 1, 'within a second, the burst\'s statements waking the scheduler');
($cpus, $lent, $group) = split /\|/, $node->safe_psql('postgres',
	"SELECT cpus, lent_cpus, cpu_group FROM numasched_processes WHERE pid = " . ($visitor // 0));
is($group, $home, 'its group stays its own');
is($cpus, kernel_cpus($visitor // 0), "the view shows the CPUs the kernel has ($cpus)");
is($lent, $other_cpus, "lent_cpus names the lent CPU ($other_cpus)");
cmp_ok(stat_of('lends'), '>', $lends, 'numasched_stats counts the lend');
is(stat_of('statement_lends'), $statement_lends, '...the tick\'s, not a statement\'s');

$_->query_safe('SELECT 1') for @$sessions;    # the end of the burst
my $t1 = time();
ok(wait_until(sub { !grep { (kernel_cpus($_) // '') ne $home_cpus } @$pids }, 10),
	"after the burst both are bound to group $home alone again");
cmp_ok(time() - $t1, '<=', 1.5, sprintf('within a second or so (%.0f ms; the return window is 200 ms)', 1000 * (time() - $t1)));
$_->quit for @$sessions;
$node->safe_psql('postgres', "SELECT pg_cancel_backend($sleeper_pid)");
$sleeper->{run}->kill_kill;

# Counting follows numasched.lend_at_start in a session that stays: a backend
# looks at whether it counts once per plan, and a reload that turns counting
# off or on again must make it look again.  Read while a statement of the
# session runs: the statements counted in its group, by a session of the
# other group (its own statements are counted there).
my ($counted) = sessions_at_home();
my $watcher = $node->background_psql('postgres');
$watcher->query_safe("SELECT numasched_move(pg_backend_pid(), (SELECT node FROM numasched_groups WHERE cpu_group = $other_group), $other_group)");
sub counted_while_sleeping
{
	my ($session) = @_;
	$session->query_until(qr/started/, "\\echo started\nSELECT pg_sleep(2);\n");
	my $n;
	# psql says "started" before it sends the statement
	wait_until(sub { $n = $watcher->query_safe("SELECT statements FROM numasched_groups WHERE cpu_group = $home"); $n > 0 }, 1);
	$session->query_safe('SELECT 1');
	return $n;
}
sub lend_at_start
{
	my ($value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.lend_at_start = $value");
	$node->reload;
	# a backend reads the reload before its next command, not during the one it waits for
	ok(wait_until(sub { $counted->[0]->query_safe('SHOW numasched.lend_at_start') eq $value }, 5),
		"a session that stays sees lend_at_start = $value");
}
is(counted_while_sleeping($counted->[0]), 1, 'a running statement is counted in its group');
lend_at_start('off');
is(counted_while_sleeping($counted->[0]), 0, 'lend_at_start = off: the same session\'s statement is not counted');
lend_at_start('on');
is(counted_while_sleeping($counted->[0]), 1, 'lend_at_start = on again: it is counted again');
$_->quit for (@$counted, $watcher);
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.lend_at_start');

$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.lend_idle_cpus = off');
$node->reload;
($sessions, $pids) = sessions_at_home();
start_burst($sessions);
my $stayed = 1;
for (1 .. 40)
{
	$stayed &&= !grep { (kernel_cpus($_) // '') ne $home_cpus } @$pids;
	usleep(25_000);
}
ok($stayed, "lend_idle_cpus = off: both keep CPU $home_cpus for a second (hard binding)");
$_->query_safe('SELECT 1') for @$sessions;
$_->quit for @$sessions;

$node->stop;
done_testing();
