# When the kernel refuses to bind (seccomp, cpusets), a backend runs unbound:
# the connection works, one WARNING per process, a counter.  Simulated with an
# LD_PRELOAD shim that makes sched_setaffinity fail (008_seccomp.pl refuses
# the memory calls).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

my $shim = PostgreSQL::Test::Utils::tempdir() . '/libfailbind.so';
system('cc', '-shared', '-fPIC', '-o', $shim, 'test/t/failbind.c') == 0
  or BAIL_OUT('could not build the failbind shim');

# groups smaller than the postmaster's CPUs, so that placing binds (one
# group of every CPU would leave nothing to bind)
my $several = () = glob('/sys/devices/system/node/node[0-9]*');
my $node = numasched_cluster('failopen', qq{
numasched.groups_per_node = @{[ $several > 1 ? 1 : 2 ]}
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
});
{
	local $ENV{LD_PRELOAD} = $shim;
	$node->start;
}
my $postmaster_cpus = kernel_cpus($node->{_pid});

$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT 42');
is($ret, 0, 'a connection works although binding fails');
is($out, '42', '...and runs queries');

my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
is($node->safe_psql('postgres', "SELECT bound FROM numasched_processes WHERE pid = $pid"), 'f',
	'the view says the backend is not bound');
is(kernel_cpus($pid), $postmaster_cpus, 'the kernel shows it unbound');
cmp_ok($node->safe_psql('postgres', 'SELECT bind_failures FROM numasched_stats'), '>=', 2,
	'numasched_stats counts the failures');
ok($node->log_contains(qr/WARNING:  numasched could not set its CPU affinity, process $pid runs unbound\n.*DETAIL:  Sched_setaffinity failed: Operation not permitted/),
	'a WARNING says what failed');
my $log = slurp_file($node->logfile);
my $warnings = () = $log =~ /process $pid runs unbound/g;
is($warnings, 1, 'one WARNING per process');
my $failures = $node->safe_psql('postgres', 'SELECT bind_failures FROM numasched_stats');
$s->query_safe('SELECT 1') for 1 .. 5;
# the checking session itself fails once; the five statements add nothing
is($node->safe_psql('postgres', 'SELECT bind_failures FROM numasched_stats'), $failures + 1,
	'a refused binding is not retried at every statement');
$s->quit;

$node->stop;
done_testing();
