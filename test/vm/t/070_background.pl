# Background CPU priority in a VM with emulated nodes (test/vm/run.sh 2): a
# busy background session whose home node's CPUs are taken by normal work
# runs on the other node's idle CPU, its private pages staying at home; a
# busy normal session started on that node then takes the CPU at once.  Read
# from the kernel: the CPU a process last ran on and its scheduling policy
# (/proc/PID/stat), Cpus_allowed_list, numa_maps, /proc/PID/schedstat.  The
# test command runs it the VM's way (autogroups), then in a cgroup v2 cpu
# cgroup owned by postgres (Delegate=yes): by an idle child cgroup.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my ($cpus_of_node, $node_of_cpu) = node_cpus(@nodes);
my %cpus_of_node = %$cpus_of_node;
my %node_of_cpu = %$node_of_cpu;
my ($home, $other) = grep { $cpus_of_node{$_} ne '' } @nodes;
my $width = cpu_count($cpus_of_node{$home});

# no rebalancing, no lending, normal sessions bound to their node (strict):
# what runs elsewhere does so by its priority
my $node = numasched_cluster('background', qq{
numasched.rebalance_interval = 0
numasched.lend_idle_cpus = off
numasched.node_binding = strict
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
is(background_mode($node), $ENV{NUMASCHED_EXPECT_MODE}, "the server gives background priority by $ENV{NUMASCHED_EXPECT_MODE}")
  if $ENV{NUMASCHED_EXPECT_MODE};
$node->safe_psql('postgres', 'CREATE ROLE reports LOGIN; ALTER ROLE reports SET numasched.cpu_priority = background');

my $seconds = 10;
my $spin = "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$seconds s' LOOP END LOOP; END \$\$;\n";

# normal sessions that fill the home node, and a background one homed there
my @normal = map { $node->background_psql('postgres') } 1 .. $width;
my @normal_pids = map { $_->query_safe('SELECT pg_backend_pid()') } @normal;
$_->query_safe("SELECT numasched_move(pg_backend_pid(), $home)") for @normal;
my $bg = $node->background_psql('postgres', extra_params => [ '-U', 'reports' ]);
my $bg_pid = $bg->query_safe('SELECT pg_backend_pid()');
$node->safe_psql('postgres', "SELECT numasched_move($bg_pid, $home)");
# a statement once it has lived a second: it adopts its node's memory policy
# and brings its memory home
sleep 2;
$bg->query_safe('SELECT 1');
ok(wait_until(sub { in_background(background_mode($node), $bg_pid) }, 2), 'the reports role\'s session runs at background priority');
is($node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $bg_pid"), $home,
	"its home is node $home");
my $all = join(',', map { $cpus_of_node{$_} } grep { $cpus_of_node{$_} ne '' } @nodes);
is(join(',', sort { $a <=> $b } map { my ($a, $b) = split /-/; defined $b ? ($a .. $b) : $a } split /,/, kernel_cpus($bg_pid)),
	join(',', sort { $a <=> $b } map { my ($a, $b) = split /-/; defined $b ? ($a .. $b) : $a } split /,/, $all),
	'it may run on the CPUs of both nodes');

$_->query_until(qr/started/, $spin) for @normal;
$bg->query_until(qr/started/, $spin);
# with more than two nodes, any other node's idle CPU will do
my (undef, $away, $away_node) = first_away([$bg_pid], \%node_of_cpu, $home, 5);
$other = $away_node if defined $away;
ok(defined $away, "the background session runs on another node's idle CPU while normal work fills node $home");
note(sprintf('on node %d %.0f ms after the burst began', $other, 1000 * ($away // 0)));
sleep 1;
my ($share, $where) = private_on($bg_pid, $home);
cmp_ok($share, '>=', 99, "its private pages stay on node $home ($where)");

# normal sessions filling the other node take its CPUs back at once: with
# the background session as normal work beside them, they would wait about
# a third of the time
my $other_width = cpu_count($cpus_of_node{$other});
my @takers = map { $node->background_psql('postgres') } 1 .. $other_width;
my @taker_pids = map { $_->query_safe('SELECT pg_backend_pid()') } @takers;
$_->query_safe("SELECT numasched_move(pg_backend_pid(), $other)") for @takers;
$_->query_safe('SELECT 1') for @takers;
sub ran_waited
{
	my ($ran, $waited) = (0, 0);
	for my $pid (@_)
	{
		open(my $fh, '<', "/proc/$pid/schedstat") or die;
		my @f = split ' ', <$fh>;
		$ran += $f[0];
		$waited += $f[1];
	}
	return ($ran, $waited);
}
my ($ran0, $waited0) = ran_waited(@taker_pids);
$_->query_until(qr/started/, "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '3 s' LOOP END LOOP; END \$\$;\n")
  for @takers;
$_->query_safe('SELECT 1') for @takers;
my ($ran1, $waited1) = ran_waited(@taker_pids);
my ($ran, $waited) = ($ran1 - $ran0, $waited1 - $waited0);
note(sprintf('%d normal sessions on node %d: ran %.0f ms, waited %.0f ms', $other_width, $other, $ran / 1e6, $waited / 1e6));
cmp_ok($waited, '<', 0.1 * $ran, "normal sessions filling node $other waited for a CPU less than a tenth of the time they ran");

$_->query_safe('SELECT 1') for @normal, $bg;
$_->quit for @normal, $bg, @takers;
done_testing();
