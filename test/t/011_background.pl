# numasched.cpu_priority = background on one node split into groups of one
# CPU: a background session runs at background priority (the idle cpu cgroup
# where the server may change its own, its autogroup at nice 19 where
# autogroups share the CPU, else SCHED_IDLE) on every CPU of
# its reach, and so do its parallel workers, no more of them than the CPUs of
# its reach but one (EXPLAIN, and cached plans made again when the priority
# changes); a normal busy session bound to one CPU
# gets that CPU at once beside two busy background sessions; a SET back to
# normal is refused where the kernel would not raise the priority again (and
# works where it would); a role's default applies at connection.  Read from
# /proc: the scheduling policy (field 41 of /proc/PID/stat), /proc/PID/autogroup,
# /proc/PID/cgroup, Cpus_allowed_list and /proc/PID/schedstat.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

# Time a process ran and waited for a CPU so far, in ns (/proc/PID/schedstat).
sub schedstat
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/schedstat") or return ();
	my @f = split ' ', <$fh>;
	return @f[ 0, 1 ];
}

my $node = numasched_cluster('background', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
numasched.rebalance_interval = 0
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my $all_cpus = $node->safe_psql('postgres', 'SELECT string_agg(cpus, \',\' ORDER BY cpu_group) FROM numasched_groups');
my $postmaster = $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity WHERE backend_type = \'numasched scheduler\'');
my $mode = background_mode($node);
my $raise = may_raise_in($mode, $postmaster);
note("background priority by: $mode; the server may raise priorities: " . ($raise ? 'yes' : 'no'));
is($mode, $ENV{NUMASCHED_EXPECT_MODE}, "the server gives background priority by $ENV{NUMASCHED_EXPECT_MODE}")
  if $ENV{NUMASCHED_EXPECT_MODE};
ok($raise, 'the server holds what it needs to raise priorities (NUMASCHED_EXPECT_RAISE)')
  if $ENV{NUMASCHED_EXPECT_RAISE};
my $what = { cgroup => 'its idle cpu cgroup', autogroup => 'its autogroup at nice 19', idle => 'SCHED_IDLE' }->{$mode};

# --- a session set to background -------------------------------------------
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $bg_pid = $bg->query_safe('SELECT pg_backend_pid()');
my $group = $node->safe_psql('postgres', "SELECT cpus FROM numasched_processes WHERE pid = $bg_pid");
ok(!in_background($mode, $bg_pid), 'a new session runs at normal priority');
is(kernel_cpus($bg_pid), $group, 'bound to its group');
$bg->query_safe('SET numasched.cpu_priority = background');
$bg->query_safe('SELECT 1');	# the move happens at a statement's start
ok(wait_until(sub { in_background($mode, $bg_pid) }, 2), "SET background: the kernel runs it with $what");
my $all = join(',', sort { $a <=> $b } split /,/, expand($all_cpus));
is(expand(kernel_cpus($bg_pid)), $all,
	'and it may run on every CPU of its reach');
is($node->safe_psql('postgres',
	"SELECT cpu_priority || ' ' || cpus || ' ' || coalesce(lent_cpus, '-') FROM numasched_processes WHERE pid = $bg_pid"),
	'background ' . kernel_cpus($bg_pid) . ' -', 'the view says background, with the CPUs /proc has');

# "0-1" or "0,1" as "0,1"
# --- its parallel workers are background too ---------------------------------
create_slow_table($node);
start_slow_parallel_query($bg);
my $workers = wait_until(sub {
	my $w = $node->safe_psql('postgres', "SELECT string_agg(pid::text, ' ') FROM numasched_processes WHERE leader_pid = $bg_pid");
	$w =~ /\d/ ? $w : undef;
}, 5);
ok($workers, 'the background session\'s parallel workers are placed');
for my $w (split / /, $workers // '')
{
	next unless defined sched_policy($w);	# done with its part already
	# in autogroup mode its change may wait for the kernel's rate limit
	ok(wait_until(sub { !defined sched_policy($w) || in_background($mode, $w) }, 2),
		"parallel worker $w runs with $what");
	is(expand(kernel_cpus($w)), $all, "parallel worker $w may run on every CPU of its reach");
}
$bg->query_safe('SELECT 1');

# --- its plans: no more parallel workers than the CPUs of its reach but one ---
# A table that asks for as many workers as the reach has CPUs, so that the
# cap shows on any machine; a normal session plans them all.
my $reach = my @reach = split /,/, expand(kernel_cpus($bg_pid));
my $cap = $reach - 1;
$node->safe_psql('postgres', "CREATE TABLE wide AS SELECT g FROM generate_series(1, 1000) g; "
	  . "ALTER TABLE wide SET (parallel_workers = $reach); GRANT SELECT ON wide TO PUBLIC");
my $parallel_settings = 'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; '
  . "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = $reach; ";
sub workers_planned
{
	my ($session, $explain) = @_;
	my $out = $session->query_safe("${parallel_settings}EXPLAIN $explain");
	return $out =~ /Workers Planned: (\d+)/ ? $1 : 0;
}
my $normal_plan = $node->background_psql('postgres');
is(workers_planned($normal_plan, '(COSTS OFF) SELECT count(*) FROM wide'), $reach,
	"a normal session plans $reach parallel workers over the table");
is(workers_planned($bg, '(COSTS OFF) SELECT count(*) FROM wide'), $cap,
	"the background session plans $cap: the $reach CPUs of its reach but its own");
my $analyzed = $bg->query_safe('EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM wide');
my ($launched) = $analyzed =~ /Workers Launched: (\d+)/;
cmp_ok($launched // 0, '<=', $cap, "and starts at most $cap (" . ($launched // 0) . ')');
is($bg->query_safe('SHOW max_parallel_workers_per_gather'), $reach, 'its max_parallel_workers_per_gather is as it set it');
$bg->query_safe('SET plan_cache_mode = force_generic_plan; PREPARE capped AS SELECT count(*) FROM wide');
is(workers_planned($bg, '(COSTS OFF) EXECUTE capped'), $cap, 'its prepared plan too');
# a plan cached at normal priority is made again at background
$normal_plan->query_safe("${parallel_settings}SET plan_cache_mode = force_generic_plan; "
	  . 'PREPARE q AS SELECT count(*) FROM wide');
is(workers_planned($normal_plan, '(COSTS OFF) EXECUTE q'), $reach, 'a normal session\'s prepared plan has them all');
$normal_plan->query_safe('SET numasched.cpu_priority = background');
$normal_plan->query_safe('SELECT 1');
is(workers_planned($normal_plan, '(COSTS OFF) EXECUTE q'), $cap, 'made again when the session turns background');
$normal_plan->quit;

# --- back to normal, where the kernel allows it ------------------------------
# The kernel takes one autogroup change in 100 ms machine-wide from a process
# without CAP_SYS_ADMIN.  One of our own just before (a no-op: our nice as it
# is) makes the backend's change back to nice 0 wait, and numasched must make
# it later.
sub take_the_autogroup_change
{
	return unless $mode eq 'autogroup' && open(my $own, '>', '/proc/self/autogroup');
	print $own autogroup_nice($$) // 0;
	close $own;
}
take_the_autogroup_change();
$bg->query('SET numasched.cpu_priority = normal');
my $err = $bg->{stderr};
$bg->{stderr} = '';
if ($raise)
{
	is($err, '', 'SET normal is taken where the server may raise priorities');
	$bg->query_safe('SELECT 1');
	ok(wait_until(sub { !in_background($mode, $bg_pid) }, 2), 'and the kernel runs it at normal priority again');
	is(sched_policy($bg_pid), 0, 'as SCHED_OTHER');
	# the mask comes back with the priority, not necessarily in the same
	# instant: in a trixie root it was once still the background reach
	ok(wait_until(sub { kernel_cpus($bg_pid) eq $group }, 2), 'bound to its group again')
	  or diag('Cpus_allowed_list ' . kernel_cpus($bg_pid) . ", group $group");
	is(workers_planned($bg, '(COSTS OFF) EXECUTE capped'), $reach,
		'and its plan cached at background is made again with all the parallel workers');
}
else
{
	like($err, qr/numasched cannot give this session normal CPU priority back/,
		'SET normal is refused where the kernel would not raise the priority');
	like($err, qr/RLIMIT_NICE/, 'saying which limit');
	like($err, qr/LimitNICE=\+0/, 'and what to change');
	ok(in_background($mode, $bg_pid), 'the session stays at SCHED_IDLE');
	is($bg->query_safe('SHOW numasched.cpu_priority'), 'background', 'and its setting says so');
}
$bg->quit;

# --- leaving numasched in the background -------------------------------------
# Its slot is gone, so no scheduler makes a refused change back: the session
# asks again at its statements.
if ($raise)
{
	my $leaver = $node->background_psql('postgres');
	my $l_pid = $leaver->query_safe('SELECT pg_backend_pid()');
	$leaver->query_safe('SET numasched.cpu_priority = background');
	$leaver->query_safe('SELECT 1');
	ok(wait_until(sub { in_background($mode, $l_pid) }, 2), "another session set to background runs with $what");
	take_the_autogroup_change();
	$leaver->query_safe('SET numasched.enabled = off');
	ok(wait_until(sub { $leaver->query_safe('SELECT 1'); !in_background($mode, $l_pid) }, 2),
		'SET numasched.enabled = off: the kernel runs it at normal priority again, at its next statements');
	is($node->safe_psql('postgres', "SELECT count(*) FROM numasched_processes WHERE pid = $l_pid"), 0,
		'and numasched has let it go');
	$leaver->quit;
}

# --- a role's default applies at connection --------------------------------
$node->safe_psql('postgres', 'CREATE ROLE reports LOGIN; ALTER ROLE reports SET numasched.cpu_priority = background');
my $r = $node->background_psql('postgres', extra_params => [ '-U', 'reports' ]);
my $r_pid = $r->query_safe('SELECT pg_backend_pid()');
ok(wait_until(sub { in_background($mode, $r_pid) }, 2), "a role set to background connects with $what");
is(workers_planned($r, '(COSTS OFF) SELECT count(*) FROM wide'), $cap, "and plans $cap parallel workers from its first query");
is($node->safe_psql('postgres',
	"SELECT role || ' ' || cpu_priority || ' ' || processes FROM numasched_workloads WHERE role = 'reports'"),
	'reports background 1', 'numasched_workloads shows the role at background priority');
$r->quit;

# --- normal work takes the CPU at once ---------------------------------------
# Two busy background sessions on both CPUs; then a busy normal session
# bound to one CPU.  At background priority they yield at once: the normal one waits
# for a CPU for a sliver of the time it runs, where with two normal
# neighbours on its CPU it would wait about as long as it runs.
my $spin = sub {
	my ($seconds) = @_;
	return "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$seconds s' LOOP END LOOP; END \$\$;\n";
};
my @busy = map { $node->background_psql('postgres') } 1 .. 2;
$_->query_safe('SET numasched.cpu_priority = background') for @busy;
my @busy_pids = map { $_->query_safe('SELECT pg_backend_pid()') } @busy;
# the kernel's limit on autogroup changes may delay the second
ok(wait_until(sub { !grep { !in_background($mode, $_) } @busy_pids }, 2), 'two sessions at background priority');
$_->query_until(qr/started/, $spin->(8)) for @busy;
my $normal = $node->background_psql('postgres');
my $n_pid = $normal->query_safe('SELECT pg_backend_pid()');
usleep(200_000);
# a second look if the first waited too long: another program's burst (this
# machine's, not numasched's) is not taken for the priority failing, which
# makes it wait about half the time, every time
my ($ran, $waited);
for my $look (1 .. 2)
{
	my ($ran0, $waited0) = schedstat($n_pid);
	$normal->query_until(qr/started/, $spin->(2));
	$normal->query_safe('SELECT 1');
	my ($ran1, $waited1) = schedstat($n_pid);
	($ran, $waited) = ($ran1 - $ran0, $waited1 - $waited0);
	note(sprintf('normal session beside two busy background ones: ran %.0f ms, waited %.0f ms', $ran / 1e6, $waited / 1e6));
	last if $waited < 0.1 * $ran;
}
cmp_ok($ran, '>', 1.5e9, 'the normal session ran most of its 2 s');
cmp_ok($waited, '<', 0.1 * $ran, 'and waited for a CPU less than a tenth of that');
$_->query_safe('SELECT 1') for @busy;
$_->quit for @busy, $normal;

done_testing();
