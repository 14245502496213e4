# numasched in a container whose seccomp filter refuses the memory calls, as
# Docker's default profile does without CAP_SYS_NICE: connections get no
# WARNING, backends are still bound to their CPU group (read from /proc).
# With one memory node numasched makes no memory call at all: the filter
# kills any process that makes one.  With several (the VMs run this file),
# the calls are refused with EPERM and the server log says so once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
my @memory_nodes = grep { slurp_file("$_/meminfo") =~ /MemTotal:\s+[1-9]/ }
  glob('/sys/devices/system/node/node[0-9]*');
my $several = @memory_nodes > 1;

my $shim = PostgreSQL::Test::Utils::tempdir() . '/libseccomp_shim.so';
system('cc', '-shared', '-fPIC', '-o', $shim, 'test/t/seccomp.c') == 0
  or BAIL_OUT('could not build the seccomp shim');

# every memory feature on: interleaved shared memory, an explicit policy,
# copies of inherited pages, memory that follows moves; groups smaller than
# all of the postmaster's CPUs (one node: two groups; several: one per node)
my $groups_per_node = $several ? 1 : 2;
my $node = numasched_cluster('seccomp', qq{
numasched.groups_per_node = $groups_per_node
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
# the group's CPUs are checked: none lent
numasched.lend_idle_cpus = off
numasched.shared_memory = interleave
numasched.memory_policy = bind
numasched.rebalance_interval = 100
max_parallel_workers_per_gather = 2
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
{
	local $ENV{LD_PRELOAD} = $shim;
	local $ENV{NUMASCHED_SECCOMP} = $several ? 'errno' : 'kill';
	$node->start;
}
ok(slurp_file("/proc/$node->{_pid}/status") =~ /^Seccomp:\s+2$/m, 'the postmaster runs under the filter');

my ($ret, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION numasched');
is($err, '', 'CREATE EXTENSION: no WARNING');
my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
# a second statement once it has lived long enough to settle its memory
sleep 2;
$s->query_safe('CREATE TABLE t AS SELECT g FROM generate_series(1, 100000) g');
$s->query_safe('SELECT count(*) FROM t');
is($s->{stderr}, '', 'the session got no WARNING, settling included');
($ret, $out, $err) = $node->psql('postgres', 'SELECT 42');
is($out, '42', 'a new connection works');
is($err, '', '...with no WARNING');

# the scheduler's passes (every 100 ms) may move the backend between a read
# of the view and one of /proc: the view is read before and after /proc, and
# a read that a move came between is taken again
my ($cpus, $bound, $kernel);
wait_until(
	sub {
		my $view = "SELECT cpus, bound FROM numasched_processes WHERE pid = $pid";
		($cpus, $bound) = split /\|/, $node->safe_psql('postgres', $view);
		$kernel = kernel_cpus($pid);
		return $node->safe_psql('postgres', $view) eq "$cpus|$bound" && $kernel eq $cpus;
	},
	5);
is($bound, 't', 'the view says the backend is bound');
is($kernel, $cpus, "the kernel holds the CPUs of its group ($cpus)");
isnt($cpus, kernel_cpus($node->{_pid}), '...which are not all the postmaster has');
is($node->safe_psql('postgres', 'SELECT bind_failures FROM numasched_stats'), '0',
	'no failure counted');
is($node->safe_psql('postgres', 'SELECT memory_calls FROM numasched_stats'),
	$several ? 'refused: set_mempolicy, get_mempolicy, mbind, move_pages' : 'not needed: one memory node',
	'numasched_stats says what the memory side does');
$s->quit;

my $log = slurp_file($node->logfile);
my @bad = grep { /terminated by signal|WARNING/ } split /^/m, $log;
is(join('', @bad), '', 'no process was killed, no WARNING in the log');
my $said = () = $log =~ /LOG:  numasched cannot make the memory calls/g;
if ($several)
{
	is($said, 1, 'the server log says once that the kernel refused the memory calls');
	like($log, qr/LOG:  numasched cannot make the memory calls set_mempolicy, get_mempolicy, mbind, move_pages, the kernel refused them\n.*DETAIL:  Get_mempolicy failed: Operation not permitted, mbind failed: Operation not permitted, move_pages failed: Operation not permitted/,
		'...naming each call and what the kernel answered');
}
else
{
	is($said, 0, 'with one memory node nothing is tried, nothing said');
}

$node->stop;
done_testing();
