# PostgreSQL's own NUMA views (18 and later, built --with-libnuma, as
# Debian's packages are) beside numasched's, in a VM with emulated nodes
# (test/vm/run.sh 2 or 4 with VM_PG_CONFIG of test/pg_major.sh 19).  Both ask
# the kernel where pages are (move_pages), but PostgreSQL's view first
# touches every page of every allocation, faulting in those never used, and
# counts a page that two allocations share in both; numasched's counts each
# resident page of the whole segment once and faults none.  So after
# PostgreSQL's view has run, the two agree per node within the pages that
# lie outside named allocations (the segment's header, anonymous allocations,
# the free tail) and the pages allocations share.  With and without
# numasched.shared_memory = interleave; with it, pg_buffercache_numa finds
# buffers on every interleave node.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(sum max);
use lib 'test/t';
use NumaschedTest;

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my @cpu_nodes = grep { slurp_file("/sys/devices/system/node/node$_/cpulist") =~ /\d/ } @nodes;

my $node = numasched_cluster('pg_numa', qq{
numasched.rebalance_interval = 0
shared_buffers = 64MB
huge_pages = off
include_if_exists = 'pg_numa.conf'
});
$node->start;
my ($version, $name) = split /\|/, $node->safe_psql('postgres',
	"SELECT current_setting('server_version_num'), current_setting('server_version')");
if ($version < 180000)
{
	$node->stop;
	plan skip_all => "PostgreSQL $name has no NUMA views of its own (18 and later have)";
}
my $configure = `pg_config --configure`;
if ($configure !~ /--with-libnuma/)
{
	$node->stop;
	plan skip_all => 'this PostgreSQL was built without --with-libnuma';
}
is($node->safe_psql('postgres', 'SELECT pg_numa_available()'), 't',
	"PostgreSQL $name built --with-libnuma: pg_numa_available() is true");
$node->safe_psql('postgres', 'CREATE EXTENSION numasched; CREATE EXTENSION pg_buffercache');
$node->stop;

sub per_node
{
	my ($sql) = @_;
	my %pages = map { split /\|/ } split /\n/, $node->safe_psql('postgres', $sql);
	return \%pages;
}

sub show { my ($p) = @_; join(' ', map { "N$_=" . ($p->{$_} // 0) } @nodes) }

# One freshly started server: what each view says, in the order that shows
# how they differ
sub compare
{
	my ($what, $conf) = @_;
	open(my $fh, '>', $node->data_dir . '/pg_numa.conf') or die "pg_numa.conf: $!";
	print $fh "$conf\n";
	close $fh;
	$node->start;
	my $resident_sql = 'SELECT node, pages FROM numasched_shared_memory ORDER BY node';
	my $before = per_node($resident_sql);
	my $page = 4096;    # huge_pages = off: the kernel's base page
	my $postgres = per_node("SELECT numa_node, (sum(size) / $page)::bigint FROM pg_shmem_allocations_numa "
		  . 'WHERE numa_node IS NOT NULL GROUP BY 1 ORDER BY 1');
	my $after = per_node($resident_sql);
	my ($allocations, $outside) = split /\|/, $node->safe_psql('postgres',
		"SELECT count(*) FILTER (WHERE name IS NOT NULL AND name <> '<anonymous>'), "
		  . "ceil(coalesce(sum(allocated_size) FILTER (WHERE name IS NULL OR name = '<anonymous>'), 0) / $page) "
		  . 'FROM pg_shmem_allocations');
	my $segment = $node->safe_psql('postgres',
		"SELECT ceil(setting::bigint * 1024 * 1024 / $page) FROM pg_settings WHERE name = 'shared_memory_size'");
	note("$what: numasched before: " . show($before) . '; pg_shmem_allocations_numa: ' . show($postgres)
		  . '; numasched after: ' . show($after)
		  . "; $allocations named allocations, $outside pages outside them, segment $segment pages");

	cmp_ok(sum(values %$before), '<', sum(values %$after),
		"$what: numasched counted only resident pages (" . sum(values %$before)
		  . '), PostgreSQL\'s view faulted in the rest (' . sum(values %$after) . ' resident after it)');
	my $worst = max(map { abs(($postgres->{$_} // 0) - ($after->{$_} // 0)) } @nodes);
	cmp_ok($worst, '<=', $allocations + $outside,
		"$what: then they agree per node within $allocations shared boundary pages and $outside pages "
		  . "outside named allocations (worst node differs by $worst)");
	cmp_ok(sum(values %$after), '>=', 0.98 * $segment, "$what: and numasched's count is the whole segment ($segment pages)");
	return $after;
}

my $default = compare('shared_memory = default', 'numasched.shared_memory = default');
$node->stop;

my $interleaved = compare('shared_memory = interleave', 'numasched.shared_memory = interleave');
my $mean = sum(map { $interleaved->{$_} // 0 } @cpu_nodes) / @cpu_nodes;
ok(!grep({ abs(($interleaved->{$_} // 0) - $mean) > 0.05 * $mean } @cpu_nodes),
	'shared_memory = interleave: even over nodes ' . join(',', @cpu_nodes) . ' (' . show($interleaved) . ')');
my $buffers = per_node('SELECT numa_node, count(DISTINCT bufferid) FROM pg_buffercache_numa GROUP BY 1 ORDER BY 1');
ok(!grep({ !($buffers->{$_} // 0) } @cpu_nodes),
	'pg_buffercache_numa finds buffers on every interleave node (' . show($buffers) . ')');
$node->stop;
done_testing();
