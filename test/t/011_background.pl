# numasched.cpu_priority = background on one node split into groups of one
# CPU: a background session runs at SCHED_IDLE on every CPU of its reach,
# and so do its parallel workers; a normal busy session bound to one CPU
# gets that CPU at once beside two busy background sessions; a SET back to
# normal is refused where the kernel would not raise the priority again (and
# works where it would); a role's default applies at connection.  Read from
# /proc: the scheduling policy (field 41 of /proc/PID/stat), Cpus_allowed_list
# and /proc/PID/schedstat.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

use constant SCHED_IDLE => 5;

# The scheduling policy the kernel holds for a process.
sub policy
{
	my ($pid) = @_;
	return stat_field($pid, 41);
}

# Time a process ran and waited for a CPU so far, in ns (/proc/PID/schedstat).
sub schedstat
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/schedstat") or return ();
	my @f = split ' ', <$fh>;
	return @f[ 0, 1 ];
}

# Whether the server's processes may leave SCHED_IDLE: RLIMIT_NICE allows
# nice 0 (a soft limit of 20), as /proc/PID/limits shows it, or they hold
# CAP_SYS_NICE (bit 23 of CapEff in /proc/PID/status).
sub may_raise
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/limits") or return 0;
	while (my $line = <$fh>)
	{
		return 1 if $line =~ /^Max nice priority\s+(\d+)/ && $1 >= 20;
	}
	open($fh, '<', "/proc/$pid/status") or return 0;
	while (my $line = <$fh>)
	{
		return (hex($1) >> 23) & 1 if $line =~ /^CapEff:\s+([0-9a-f]+)/;
	}
	return 0;
}

my $node = numasched_cluster('background', qq{
numasched.groups_per_node = 2
numasched.rebalance_interval = 0
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my $all_cpus = $node->safe_psql('postgres', 'SELECT string_agg(cpus, \',\' ORDER BY cpu_group) FROM numasched_groups');
my $postmaster = $node->safe_psql('postgres', 'SELECT pid FROM pg_stat_activity WHERE backend_type = \'numasched scheduler\'');
my $raise = may_raise($postmaster);
note("the server may raise priorities: " . ($raise ? 'yes' : 'no'));
ok($raise, 'the server holds what it needs to raise priorities (NUMASCHED_EXPECT_RAISE)')
  if $ENV{NUMASCHED_EXPECT_RAISE};

# --- a session set to background -------------------------------------------
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $bg_pid = $bg->query_safe('SELECT pg_backend_pid()');
my $group = $node->safe_psql('postgres', "SELECT cpus FROM numasched_processes WHERE pid = $bg_pid");
is(policy($bg_pid), 0, 'a new session runs at normal priority');
is(kernel_cpus($bg_pid), $group, 'bound to its group');
$bg->query_safe('SET numasched.cpu_priority = background');
$bg->query_safe('SELECT 1');	# the move happens at a statement's start
is(policy($bg_pid), SCHED_IDLE, 'SET background: the kernel runs it at SCHED_IDLE');
my $all = join(',', sort { $a <=> $b } split /,/, expand($all_cpus));
is(expand(kernel_cpus($bg_pid)), $all,
	'and it may run on every CPU of its reach');
is($node->safe_psql('postgres',
	"SELECT cpu_priority || ' ' || cpus || ' ' || coalesce(lent_cpus, '-') FROM numasched_processes WHERE pid = $bg_pid"),
	'background ' . kernel_cpus($bg_pid) . ' -', 'the view says background, with the CPUs /proc has');

# "0-1" or "0,1" as "0,1"
sub expand
{
	my ($list) = @_;
	return join(',', map { my ($a, $b) = split /-/; defined $b ? ($a .. $b) : $a } split /,/, $list // '');
}

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
	my $p = policy($w);
	next unless defined $p;	# done with its part already
	is($p, SCHED_IDLE, "parallel worker $w runs at SCHED_IDLE");
	is(expand(kernel_cpus($w)), $all, "parallel worker $w may run on every CPU of its reach");
}
$bg->query_safe('SELECT 1');

# --- back to normal, where the kernel allows it ------------------------------
$bg->query('SET numasched.cpu_priority = normal');
my $err = $bg->{stderr};
$bg->{stderr} = '';
if ($raise)
{
	is($err, '', 'SET normal is taken where the server may raise priorities');
	$bg->query_safe('SELECT 1');
	is(policy($bg_pid), 0, 'and the kernel runs it at normal priority again');
	is(kernel_cpus($bg_pid), $group, 'bound to its group again');
}
else
{
	like($err, qr/numasched cannot give this session normal CPU priority back/,
		'SET normal is refused where the kernel would not raise the priority');
	like($err, qr/RLIMIT_NICE/, 'saying which limit');
	like($err, qr/LimitNICE=\+0/, 'and what to change');
	is(policy($bg_pid), SCHED_IDLE, 'the session stays at SCHED_IDLE');
	is($bg->query_safe('SHOW numasched.cpu_priority'), 'background', 'and its setting says so');
}
$bg->quit;

# --- a role's default applies at connection --------------------------------
$node->safe_psql('postgres', 'CREATE ROLE reports LOGIN; ALTER ROLE reports SET numasched.cpu_priority = background');
my $r = $node->background_psql('postgres', extra_params => [ '-U', 'reports' ]);
my $r_pid = $r->query_safe('SELECT pg_backend_pid()');
is(policy($r_pid), SCHED_IDLE, 'a role set to background connects at SCHED_IDLE');
is($node->safe_psql('postgres',
	"SELECT role || ' ' || cpu_priority || ' ' || processes FROM numasched_workloads WHERE role = 'reports'"),
	'reports background 1', 'numasched_workloads shows the role at background priority');
$r->quit;

# --- normal work takes the CPU at once ---------------------------------------
# Two busy background sessions on both CPUs; then a busy normal session
# bound to one CPU.  At SCHED_IDLE they yield at once: the normal one waits
# for a CPU for a sliver of the time it runs, where with two normal
# neighbours on its CPU it would wait about as long as it runs.
my $spin = sub {
	my ($seconds) = @_;
	return "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$seconds s' LOOP END LOOP; END \$\$;\n";
};
my @busy = map { $node->background_psql('postgres') } 1 .. 2;
$_->query_safe('SET numasched.cpu_priority = background') for @busy;
$_->query_until(qr/started/, $spin->(6)) for @busy;
my $normal = $node->background_psql('postgres');
my $n_pid = $normal->query_safe('SELECT pg_backend_pid()');
usleep(200_000);
my ($ran0, $waited0) = schedstat($n_pid);
$normal->query_until(qr/started/, $spin->(2));
$normal->query_safe('SELECT 1');
my ($ran1, $waited1) = schedstat($n_pid);
my ($ran, $waited) = ($ran1 - $ran0, $waited1 - $waited0);
note(sprintf('normal session beside two busy background ones: ran %.0f ms, waited %.0f ms', $ran / 1e6, $waited / 1e6));
cmp_ok($ran, '>', 1.5e9, 'the normal session ran most of its 2 s');
cmp_ok($waited, '<', 0.1 * $ran, 'and waited for a CPU less than a tenth of that');
$_->query_safe('SELECT 1') for @busy;
$_->quit for @busy, $normal;

done_testing();
