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

my $node = numasched_cluster('interleave', qq{
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
# counts them (which also maps every resident page into this backend); its
# NOTICE with huge pages is looked at by what_shared_memory_says
sub shared_pages
{
	my ($session) = @_;
	$session->query_safe('SET client_min_messages = warning');
	my %pages = map { split /\|/ } split /\n/,
	  $session->query_safe('SELECT node, pages FROM numasched_shared_memory ORDER BY node');
	return %pages;
}

sub what_shared_memory_says
{
	$node->psql('postgres', 'SELECT count(*) FROM numasched_shared_memory', stderr => \my $said);
	return $said;
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

# every node of @$over holds within 5% of an even share (or one interleave
# unit: a page, or a transparent huge page's 512), the others none
sub even_over
{
	my ($what, $over, %pages) = @_;
	my @counts = map { $pages{$_} // 0 } @$over;
	my $mean = sum(@counts) / @counts;
	my %in = map { $_ => 1 } @$over;
	my $elsewhere = sum(0, map { $pages{$_} // 0 } grep { !$in{$_} } keys %pages);
	ok(sum(@counts) > 0 && max(map { abs($_ - $mean) } @counts) <= max($ENV{INTERLEAVE_THP} ? 512 : 1, 0.05 * $mean) && $elsewhere == 0,
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

# With transparent huge pages for shared memory (inside.sh runs this file a
# second time with shmem_enabled = always, INTERLEAVE_THP set), the segment
# of 4 kB pages is made of 2 MB ones, which the kernel interleaves by their
# own index: only the first part runs then.
my $thp = $ENV{INTERLEAVE_THP};
my $pages = $thp ? 'transparent huge pages' : '4 kB pages';

# --- 4 kB pages, default nodes: those with CPUs ------------------------------------
$node->start;
if ($thp)
{
	my ($pmd) = slurp_file("/proc/$node->{_pid}/smaps") =~ /ShmemPmdMapped:\s+([1-9]\d*) kB/;
	ok($pmd, 'shmem_enabled = always: the postmaster maps its segment in huge pages (ShmemPmdMapped ' . ($pmd // 0) . ' kB)');
}
my $s = check_start("$pages, right after start", \@cpu_nodes, 1);
# what is touched later follows the kernel's interleaving, which agrees
$s->query_safe("CREATE TABLE filler AS SELECT g, repeat('x', 300) AS pad FROM generate_series(1, 60000) g");
even_over("$pages, shared buffers filled", \@cpu_nodes, shared_pages($s));
is(what_shared_memory_says(), '', "$pages: numasched_shared_memory counts every resident page, without a NOTICE");
my $victim = $s->query_safe('SELECT pg_backend_pid()');

# --- after a crash restart the new segment is interleaved the same way ---------------
kill 'KILL', $victim;
$s->{run}->kill_kill;
ok(wait_until(sub { my @l = slurp_file($node->logfile) =~ /numasched interleaved the main/g; @l == 2 }, 120),
	'crash restart: the segment is interleaved again');
wait_until(sub { $node->psql('postgres', 'SELECT 1') == 0 }, 120);
check_start("$pages, after a crash restart", \@cpu_nodes, 2)->quit;
$node->stop;
if ($thp)
{
	done_testing();
	exit 0;
}

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

# --- huge pages without interleave, under numasched.memory_policy = bind ------------
# The segment's huge pages are reserved at start, but not per node: a backend
# bound to a node whose pool is empty got SIGBUS on its first touch of a new
# shared buffer, and the whole cluster restarted.  The postmaster gives the
# segment the local policy of its own, which falls back to another node.
SKIP:
{
	skip 'no huge pages reserved', 7 unless slurp_file('/proc/sys/vm/nr_hugepages') > 0;
	my $last = $cpu_nodes[-1];
	my $pool = "/sys/devices/system/node/node$last/hugepages/hugepages-2048kB";
	my $in_use = sub {
		sum(map { slurp_file("$_/nr_hugepages") - slurp_file("$_/free_hugepages") }
			  glob('/sys/devices/system/node/node*/hugepages/hugepages-2048kB'));
	};
	set_conf("huge_pages = on\nshared_buffers = 128MB\nnumasched.shared_memory = default\nnumasched.memory_policy = bind");
	unlink($node->logfile);
	$node->start;
	my $started = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
	my $s = $node->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	open(my $fh, '<', "/proc/$pid/numa_maps") or die;
	my ($line) = grep { /huge/ && /file=/ } <$fh>;
	like($line // '', qr/^[0-9a-f]+ local /, 'huge pages: the segment has the local policy (numa_maps)');

	# what numasched_shared_memory counts with huge pages: the pages mapped
	# in the calling backend, not those other backends touched since
	$s->query_safe("CREATE TABLE huge_filler AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 30000) g");
	my $fresh = $node->background_psql('postgres');
	my $fresh_pid = $fresh->query_safe('SELECT pg_backend_pid()');
	my %counted = shared_pages($fresh);
	open($fh, '<', "/proc/$fresh_pid/numa_maps") or die;
	my ($fresh_line) = grep { /huge/ && /file=/ } <$fh>;
	my $mapped = sum(0, ($fresh_line // '') =~ /\bN\d+=(\d+)/g);
	is(sum(0, values %counted), $mapped,
		"huge pages: numasched_shared_memory counts the pages mapped in the caller ($mapped)");
	like(what_shared_memory_says(), qr/NOTICE:  with huge pages, only the pages mapped in this backend are counted/,
		'...and says so');
	diag('huge pages in use in the machine (nr - free, all nodes): ' . $in_use->()
		  . "; counted by a backend started after another filled shared buffers: $mapped");
	$fresh->quit;

	# every free huge page of node $last taken by a process of our own
	my $free = slurp_file("$pool/free_hugepages") + 0;
	my ($in, $out) = ('', '');
	my $eater = IPC::Run::start(
		[ 'numactl', "--membind=$last", '/usr/bin/python3', '-c',
		  'import mmap, sys, time; n = int(sys.argv[1]); m = mmap.mmap(-1, n << 21, flags=mmap.MAP_SHARED | 0x40000);'
		  . ' [m.__setitem__(i << 21, 1) for i in range(n)]; print("taken", flush=True); time.sleep(600)', $free ],
		\$in, \$out, \$out);
	ok(wait_until(sub { $eater->pump_nb; $out =~ /taken/ && slurp_file("$pool/free_hugepages") == 0 }, 60),
		"node $last has no free huge page left ($free taken)") or diag($out);

	# a backend bound to that node under bind fills shared buffers
	my $t = $node->background_psql('postgres', on_error_stop => 0);
	my $tpid = $t->query_safe('SELECT pg_backend_pid()');
	$t->query_safe("SELECT numasched_move($tpid, $last)");
	my ($res, $ok) = (undef, 0);
	eval {
		$t->query_safe("CREATE TABLE bound_filler AS SELECT g, repeat('x', 500) AS pad FROM generate_series(1, 30000) g");
		$res = $t->query_safe('SELECT count(*) FROM bound_filler');
		$ok = 1;
	};
	is($res, 30000, "a backend bound to node $last under bind fills shared buffers with its pool empty");
	unlike(slurp_file($node->logfile), qr/terminated by signal/, '...no process was killed by a signal');
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $started, '...and the server did not restart');
	$eater->kill_kill;
	$t->quit if $ok;
	$s->quit;
	$node->stop;
}

done_testing();
