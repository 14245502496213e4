# numasched.group_binding = preferred (the default): on one node split into
# groups of one CPU (numasched.groups_per_node = 2), a backend is counted in
# its group but may run on every CPU of its node in its class's groups, so
# that two busy backends of one group run on both CPUs at once, as the kernel
# alone would run them, with nothing lent.  A class's groups still bind, and
# a SET of them that keeps the session's group changes its mask at once.  A
# reload to strict narrows what runs to its group, and back.  Read from
# /proc: Cpus_allowed_list, the CPU each last ran on, /proc/stat's idle time.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

my $node = numasched_cluster('preferred', qq{
numasched.groups_per_node = 2
max_worker_processes = 16
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
is($node->safe_psql('postgres', 'SHOW numasched.group_binding'), 'preferred', 'preferred is the default');

my $postmaster_cpus = kernel_cpus($node->{_pid});
my %group_cpus = split /[|\n]/, $node->safe_psql('postgres', 'SELECT cpu_group, cpus FROM numasched_groups');
is(scalar keys %group_cpus, 2, 'two CPU groups (groups_per_node = 2 on one node)');

sub placement
{
	my ($pid) = @_;
	return split /\|/, $node->safe_psql('postgres',
		"SELECT cpus, cpu_group, coalesce(lent_cpus, 'none') FROM numasched_processes WHERE pid = $pid");
}

my @sessions = map { $node->background_psql('postgres') } 1 .. 2;
my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @sessions;
my %groups;
for my $pid (@pids)
{
	my ($cpus, $group, $lent) = placement($pid);
	$groups{$group} = 1;
	is(kernel_cpus($pid), $postmaster_cpus, "backend $pid of group $group may run on every CPU of its node");
	is($cpus, kernel_cpus($pid), "backend $pid: the view shows the CPUs the kernel has");
	is($lent, 'none', "backend $pid: nothing is lent");
}
is(scalar keys %groups, 2, 'two concurrent backends are counted in different groups');

# --- a class's groups still bind ----------------------------------------------
$node->safe_psql('postgres', q{
CREATE ROLE reporting LOGIN;
ALTER ROLE reporting SET numasched.cpu_groups = '1';
});
my $r = $node->background_psql('postgres', extra_params => [ '-U', 'reporting' ]);
my $rpid = $r->query_safe('SELECT pg_backend_pid()');
is(kernel_cpus($rpid), $group_cpus{1}, "a session of a class of group 1 is bound to its CPUs ($group_cpus{1})");
$r->quit;
# a SET that widens the class but keeps the session's group: the mask follows
my $s = $node->background_psql('postgres');
my $spid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe("SET numasched.cpu_groups = '1'");
is(kernel_cpus($spid), $group_cpus{1}, "SET numasched.cpu_groups = '1' binds a session to group 1's CPUs");
$s->query_safe("SET numasched.cpu_groups = '0,1'");
is((placement($spid))[1], 1, "SET numasched.cpu_groups = '0,1': still counted in group 1");
is(kernel_cpus($spid), $postmaster_cpus, 'and free on every CPU of its node at once');
$s->query_safe("SET numasched.cpu_groups = '1'");
is(kernel_cpus($spid), $group_cpus{1}, "back to '1': group 1's CPUs alone");
$s->quit;

# --- two busy backends of one group run on both CPUs at once ------------------
$_->query_safe("SELECT numasched_move(pg_backend_pid(), (SELECT node FROM numasched_groups WHERE cpu_group = 0), 0)")
  for @sessions;
is(join(',', map { (placement($_))[1] } @pids), '0,0', 'both backends counted in group 0');
my %other = map { $_ => 1 } split /,/, $group_cpus{1};
my $lends = $node->safe_psql('postgres', 'SELECT lends FROM numasched_stats');
$_->query_until(qr/started/,
	"\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '4 s' LOOP END LOOP; END \$\$;\n")
  for @sessions;
my $t0 = time();
my $visitor;
while (time() - $t0 < 3 && !defined $visitor)
{
	for my $pid (@pids)
	{
		my $cpu = last_cpu($pid);
		$visitor = $pid if defined $cpu && $other{$cpu};
	}
	usleep(2_000);
}
ok(defined $visitor, sprintf('one of them runs on CPU %s of group 1, seen after %.0f ms', $group_cpus{1}, 1000 * (time() - $t0)));
usleep(200_000);
my $before = cpu_times();
usleep(1_000_000);
my $idle = idle_share($before, cpu_times(), [ keys %other ]) // 1;
cmp_ok($idle, '<', 0.2, sprintf('CPU %s is busy while both run (idle %.0f%% of a second)', $group_cpus{1}, 100 * $idle));
is(join(' ', map { kernel_cpus($_) } @pids), "$postmaster_cpus $postmaster_cpus", 'their masks are the node\'s all along');
is($node->safe_psql('postgres', 'SELECT lends FROM numasched_stats'), $lends, 'nothing was lent: the kernel gave the idle CPU');
$_->query_safe('SELECT 1') for @sessions;    # the end of the burst

# --- a reload to strict narrows each to its group's CPUs, and back ----------------
$node->safe_psql('postgres', "SELECT numasched_move($pids[1], (SELECT node FROM numasched_groups WHERE cpu_group = 1), 1)");
# exact CPU sets: nothing lent to a group that waits a moment meanwhile
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.group_binding = strict');
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.lend_idle_cpus = off');
$node->reload;
ok(wait_until(sub { !grep { kernel_cpus($_) ne (placement($_))[0] || kernel_cpus($_) eq $postmaster_cpus } @pids }, 10),
	'group_binding = strict: at the reload both are bound to their group\'s CPUs')
  or diag(join('; ', map { "$_: kernel " . kernel_cpus($_) . ', view ' . join('|', placement($_)) } @pids));
is(join(' ', map { kernel_cpus($_) } @pids), "$group_cpus{0} $group_cpus{1}", 'each to its own group\'s');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.group_binding');
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.lend_idle_cpus');
$node->reload;
ok(wait_until(sub { !grep { kernel_cpus($_) ne $postmaster_cpus } @pids }, 10),
	'back to preferred: both may run on the whole node again');
is(join(' ', map { (placement($_))[0] } @pids), "$postmaster_cpus $postmaster_cpus", 'and the view says so');

# --- parallel workers: on their leader's node, the view as the kernel -------------
create_slow_table($node);
start_slow_parallel_query($sessions[0]);
my $workers = wait_until(sub {
	$node->safe_psql('postgres', "SELECT string_agg(pid::text, ' ') FROM numasched_processes WHERE leader_pid = $pids[0]") });
ok($workers, 'parallel workers are placed');
for my $w (split / /, $workers // '')
{
	my ($cpus) = placement($w);
	is(kernel_cpus($w), $cpus, "worker $w: /proc has the CPUs the view shows") if defined $cpus && $cpus ne '';
}
$sessions[0]->query_safe('SELECT 1');
$_->quit for @sessions;

$node->stop;
done_testing();
