# numasched.shared_memory = interleave against a real kernel, in a VM with
# emulated nodes (test/vm/run.sh 2, 3 or 4; the 3-node shape has a CPU-less
# memory node, as a CXL expander shows up).  Right after start, before any
# query has filled shared buffers, the segment's resident pages (what the
# postmaster initialised: buffer descriptors, lock tables, PGPROCs) must be
# spread evenly over the interleave nodes, with 4 kB and with 2 MB pages, and
# after a crash restart too.  Where the pages are comes from the kernel:
# move_pages() through numasched_shared_memory, and the segment's line in a
# backend's /proc/PID/numa_maps.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(min max sum);
use lib 'test/t';
use NumaschedTest;

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my @cpu_nodes = grep { slurp_file("/sys/devices/system/node/node$_/cpulist") =~ /\d/ } @nodes;
my @memory_only = grep { my $n = $_; !grep { $_ == $n } @cpu_nodes } @nodes;
note("nodes with CPUs: @cpu_nodes; memory-only nodes: @memory_only");

my $node = PostgreSQL::Test::Cluster->new('interleave');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'numasched'
numasched.shared_memory = interleave
numasched.rebalance_interval = 0
restart_after_crash = on
shared_buffers = 64MB
huge_pages = off
include_if_exists = 'interleave.conf'
});
# the extension's views, created before the servers whose start is looked at
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
$node->stop;
unlink($node->logfile);

sub set_conf
{
	open(my $fh, '>', $node->data_dir . '/interleave.conf') or die "interleave.conf: $!";
	print $fh "$_[0]\n";
	close $fh;
}

# "N0=12 N1=13": pages per node of the segment, as numasched_shared_memory
# counts them (which also maps every resident page into this backend)
sub shared_pages
{
	my ($session) = @_;
	my %pages = map { split /\|/ } split /\n/,
	  $session->query_safe('SELECT node, pages FROM numasched_shared_memory ORDER BY node');
	return %pages;
}

# pages per node of the segment's line in a process's numa_maps
sub segment_pages
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/numa_maps") or return ();
	my ($line) = grep { /interleave:/ && /file=/ } <$fh>;
	my %pages;
	$pages{$1} = $2 while ($line // '') =~ /\bN(\d+)=(\d+)/g;
	return %pages;
}

sub show { my %p = @_; join(' ', map { "N$_=" . ($p{$_} // 0) } sort { $a <=> $b } keys %p) }

# every node of @$over holds within 5% of an even share (or one page), the others none
sub even_over
{
	my ($what, $over, %pages) = @_;
	my @counts = map { $pages{$_} // 0 } @$over;
	my $mean = sum(@counts) / @counts;
	my %in = map { $_ => 1 } @$over;
	my $elsewhere = sum(0, map { $pages{$_} // 0 } grep { !$in{$_} } keys %pages);
	ok(sum(@counts) > 0 && max(map { abs($_ - $mean) } @counts) <= max(1, 0.05 * $mean) && $elsewhere == 0,
		"$what: even over nodes @$over (" . show(%pages) . ')');
}

# one check of a freshly started server: the LOG line, then the pages
sub check_start
{
	my ($what, $over, $starts) = @_;
	my $log = slurp_file($node->logfile);
	my @lines = $log =~ /(numasched interleaved the main shared memory segment .*\n.*DETAIL:.*)/g;
	is(scalar @lines, $starts, "$what: the postmaster interleaved the segment");
	my $list = join(',', @$over);
	like($lines[-1] // '', qr/over nodes \Q$list\E|over nodes $over->[0]-$over->[-1]\b/, "$what: over nodes @$over");
	my ($moved, $resident, $ms) = ($lines[-1] // '') =~ /(\d+) of its (\d+) resident pages .* in ([\d.]+) ms/;
	note("$what: moved $moved of $resident resident pages in $ms ms") if defined $ms;
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	even_over("$what, numasched_shared_memory", $over, shared_pages($s));
	even_over("$what, numa_maps of backend $pid", $over, segment_pages($pid));
	return $s;
}

# --- 4 kB pages, default nodes: those with CPUs ------------------------------------
$node->start;
my $s = check_start('4 kB pages, right after start', \@cpu_nodes, 1);
# what is touched later follows the kernel's interleaving, which agrees
$s->query_safe("CREATE TABLE filler AS SELECT g, repeat('x', 300) AS pad FROM generate_series(1, 60000) g");
even_over('4 kB pages, shared buffers filled', \@cpu_nodes, shared_pages($s));
my $victim = $s->query_safe('SELECT pg_backend_pid()');

# --- after a crash restart the new segment is interleaved the same way ---------------
kill 'KILL', $victim;
$s->{run}->kill_kill;
ok(wait_until(sub { my @l = slurp_file($node->logfile) =~ /numasched interleaved the main/g; @l == 2 }, 120),
	'crash restart: the segment is interleaved again');
wait_until(sub { $node->psql('postgres', 'SELECT 1') == 0 }, 120);
check_start('4 kB pages, after a crash restart', \@cpu_nodes, 2)->quit;
$node->stop;

# --- a memory-only node only when named ----------------------------------------------
SKIP:
{
	skip 'no memory-only node', 4 unless @memory_only;
	unlink($node->logfile);
	set_conf("numasched.interleave_nodes = '" . join(',', @nodes) . "'");
	$node->start;
	check_start('numasched.interleave_nodes naming the memory-only node', \@nodes, 1)->quit;
	$node->stop;
}

# --- a bad list: PostgreSQL applies a library's settings from postgresql.conf
# when the library loads, so it is refused with a WARNING and the default holds
set_conf("numasched.interleave_nodes = '7'");
unlink($node->logfile);
$node->start;
like(slurp_file($node->logfile), qr/WARNING:  invalid value for parameter "numasched.interleave_nodes": "7"\n.*DETAIL:  Node 7 does not exist or its memory is not allowed here/,
	'numasched.interleave_nodes naming a node that does not exist is refused, naming the node');
check_start('a refused list', \@cpu_nodes, 1)->quit;
$node->stop;
set_conf('');

# --- 2 MB huge pages -------------------------------------------------------------------
SKIP:
{
	skip 'no huge pages reserved', 5 unless slurp_file('/proc/sys/vm/nr_hugepages') > 0;
	set_conf("huge_pages = on\nshared_buffers = 128MB");
	unlink($node->logfile);
	$node->start;
	my $h = check_start('2 MB pages, right after start', \@cpu_nodes, 1);
	my $pid = $h->query_safe('SELECT pg_backend_pid()');
	open(my $fh, '<', "/proc/$pid/numa_maps") or die;
	my ($line) = grep { /interleave:/ && /huge/ } <$fh>;
	like($line // '', qr/kernelpagesize_kB=2048/, '2 MB pages: the segment is a huge-page mapping');
	$h->quit;
	$node->stop;
}

done_testing();
