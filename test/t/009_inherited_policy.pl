# A postmaster started under a memory policy of its own, as numactl
# --interleave=all leaves it (common advice for PostgreSQL on NUMA): numasched
# says so once at start, backends allocate their private memory by
# numasched.memory_policy (their node, preferred, under local), and the
# main shared memory segment keeps the inherited interleave, so that shared
# buffers are spread as the DBA asked.  Read from /proc/PID/numa_maps.  Only
# with several memory nodes (the VMs run it): with one there is nothing to
# place and numasched makes no memory call.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

my @memory_nodes = map { m{node(\d+)$} ? $1 : () } grep { slurp_file("$_/meminfo") =~ /MemTotal:\s+[1-9]/ }
  glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs several memory nodes (the VMs run it)' if @memory_nodes < 2;
my @all_nodes = map { m{node(\d+)$} ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
my $all = "$all_nodes[0]-$all_nodes[-1]";

my $shim = PostgreSQL::Test::Utils::tempdir() . '/libinterleave_all.so';
system('cc', '-shared', '-fPIC', '-o', $shim, 'test/t/interleave_all.c') == 0
  or BAIL_OUT('could not build the interleave_all shim');

my $node = numasched_cluster('inherited', qq{
numasched.groups_per_node = 1
huge_pages = off
});
{
	local $ENV{LD_PRELOAD} = $shim;
	$node->start;
}

# the policy the segment's line holds (the mapping of /dev/zero or SYSV that
# holds shared memory), as numa_maps prints it
sub segment_policy
{
	open(my $fh, '<', "/proc/$_[0]/numa_maps") or return '';
	my ($line) = sort { ($b =~ /dirty=(\d+)/ ? $1 : 0) <=> ($a =~ /dirty=(\d+)/ ? $1 : 0) }
	  grep { m{file=/(dev/zero|SYSV)} } <$fh>;
	return ($line // '') =~ /^\S+ (\S+)/ ? $1 : '';
}

is(heap_policy($node->{_pid}), "interleave:$all", "the postmaster runs under interleave:$all");
my $log = slurp_file($node->logfile);
my $said = () = $log =~ /LOG:  numasched found the postmaster under the memory policy interleave:\Q$all\E\n/g;
is($said, 1, 'the server log says once which policy the postmaster inherited');

my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
# local, where the node's processes may be lent another node's CPUs, is the
# home node preferred (numasched.lend_idle_cpus, on by default)
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my $home = $node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $pid");
is(heap_policy($pid), "prefer:$home",
	"a backend allocates by numasched.memory_policy = local, not the postmaster's policy: its node $home, preferred");
is(segment_policy($pid), "interleave:$all", 'the shared memory segment keeps the inherited interleave');
$s->query_safe("CREATE TABLE filler AS SELECT g, repeat('x', 300) AS pad FROM generate_series(1, 30000) g");
my %segment;
open(my $fh, '<', "/proc/$pid/numa_maps") or die;
for my $line (grep { m{file=/(dev/zero|SYSV)} && /interleave:/ } <$fh>)
{
	$segment{$1} += $2 while $line =~ /\bN(\d+)=(\d+)/g;
}
my @counts = map { $segment{$_} // 0 } @memory_nodes;
ok(!grep({ $_ == 0 } @counts), 'shared buffers a backend filled are on every node (' .
	join(' ', map { "N$_=" . ($segment{$_} // 0) } @memory_nodes) . ')');
$s->quit;
$node->stop;
done_testing();
