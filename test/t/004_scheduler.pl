# The scheduler worker: busy backends forced into one group are separated by
# measured load and not moved back at once; a reload regroups and re-binds;
# it comes back after SIGTERM; shared-memory interleave and the memory views,
# all read back from /proc.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

# Lending off: it widens and narrows the masks of a busy group within
# milliseconds (010_lending.pl checks that), which the passes' moves here
# would be mistaken for.
my $node = numasched_cluster('scheduler', qq{
numasched.groups_per_node = 2
# each group binds its own CPUs alone (numasched.group_binding = preferred: 013)
numasched.group_binding = strict
numasched.lend_idle_cpus = off
numasched.rebalance_interval = 200ms
numasched.log_placements = on
numasched.shared_memory = interleave
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my $postmaster_cpus = kernel_cpus($node->{_pid});
my $node0 = $node->safe_psql('postgres', 'SELECT min(node) FROM numasched_groups');
my $group0 = $node->safe_psql('postgres', "SELECT min(cpu_group) FROM numasched_groups WHERE node = $node0");

# --- two busy backends in one group are separated ---------------------------
my @busy = map { $node->background_psql('postgres') } 1 .. 2;
my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @busy;
for my $pid (@pids)
{
	$node->safe_psql('postgres', "SELECT numasched_move($pid, $node0, $group0)");
}
is(kernel_cpus($pids[0]), kernel_cpus($pids[1]), 'both backends forced into one group');
for my $s (@busy)
{
	$s->query_until(qr/started/, q{
SET statement_timeout = '60s';
\echo started
DO $$ BEGIN FOR i IN 1..2000000000 LOOP END LOOP; END $$;
});
}
my $separated = wait_until(sub { kernel_cpus($pids[0]) ne kernel_cpus($pids[1]) }, 15);
ok($separated, 'the scheduler separates two CPU-busy backends (read from /proc)');
my %cpus_after = map { $_ => kernel_cpus($_) } @pids;
my $stable = 1;
for (1 .. 10)
{
	usleep(100_000);
	$stable &&= kernel_cpus($_) eq $cpus_after{$_} for @pids;
}
ok($stable, 'a moved backend is not moved back at once (1 s = 5 passes)');
my ($passes, $moves, $same_node, $last) = split /\|/, $node->safe_psql('postgres',
	'SELECT passes, moves, moves_same_node, last_pass > now() - interval \'5 s\' FROM numasched_stats');
cmp_ok($passes, '>', 0, 'numasched_stats counts passes');
cmp_ok($same_node, '>=', 1, 'the move stayed on the node: moves_same_node counts it');
is($last, 't', 'last_pass is recent');
is($node->safe_psql('postgres',
	"SELECT string_agg(cpus, ' ' ORDER BY pid) FROM numasched_processes WHERE pid IN ($pids[0], $pids[1])"),
	join(' ', map { kernel_cpus($_) } sort { $a <=> $b } @pids), 'the view shows the CPUs the kernel has');
my @weights = split /\n/, $node->safe_psql('postgres', 'SELECT load FROM numasched_groups ORDER BY cpu_group');
cmp_ok($weights[0] + $weights[1], '>', 0.5, 'group loads are measured CPU use');

# --- a reload regroups and re-binds everything --------------------------------
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 1');
$node->reload;
ok(wait_until(sub { kernel_cpus($pids[0]) eq $postmaster_cpus && kernel_cpus($pids[1]) eq $postmaster_cpus }, 15),
	'after a reload to one group per node, the scheduler re-binds running backends to the whole node');

# --- a process with older settings never turns the groups back ----------------
# A backend processes a reload only between statements: within one, it keeps
# the groups_per_node it had, older than the plan the scheduler rebuilds.
$node->safe_psql('postgres', q{
CREATE FUNCTION reload_then_move(target int, to_node int) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_reload_conf();
	FOR i IN 1 .. 300 LOOP
		EXIT WHEN (SELECT count(*) FROM numasched_groups) = 2;
		PERFORM pg_sleep(0.1);
	END LOOP;
	PERFORM numasched_move(target, to_node);
	RETURN (SELECT count(*) FROM numasched_groups);
END $$;
});
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 2');
is($node->safe_psql('postgres', "SELECT reload_then_move(pg_backend_pid(), $node0)"), 2,
	'numasched_move from a backend that has not seen the reload keeps the new groups');

# --- a shorter rebalance_interval takes effect at once ----------------------------
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '1h'");
$node->reload;
# one pass on the old interval may still come; after it, none for an hour
my $quiet = wait_until(sub {
	my $p = $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats');
	usleep(500_000);
	return $p == $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats') ? $p : undef;
}, 20);
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '100ms'");
$node->reload;
ok(wait_until(sub { $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats') > $quiet + 2 }, 10),
	'from 1 h to 100 ms: passes resume within seconds, not after the hour');
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '200ms'");
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 1');
$node->reload;

# --- SIGTERM: the scheduler comes back and keeps working ------------------------
my $scheduler = $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");
kill 'TERM', $scheduler;
my $again = wait_until(sub {
	my $p = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");
	return $p =~ /^\d+$/ && $p != $scheduler ? $p : undef;
}, 20);
ok($again, 'the scheduler is back after SIGTERM');
is($node->safe_psql('postgres', 'SELECT scheduler_restarts FROM numasched_stats'), '1',
	'numasched_stats counts the restart');
$node->safe_psql('postgres', 'ALTER SYSTEM SET numasched.groups_per_node = 2');
$node->reload;
ok(wait_until(sub { cpu_count(kernel_cpus($pids[0])) < cpu_count($postmaster_cpus) }, 15),
	'the new scheduler re-binds after the next reload');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($_)") for @pids;
$_->{run}->kill_kill for @busy;

# --- shared memory: interleaved where there are nodes to interleave over -------
# (with one memory node nothing is done to memory; the VMs check the rest)
my @memory_nodes = grep { slurp_file("$_/meminfo") =~ /MemTotal:\s+[1-9]/ }
  glob('/sys/devices/system/node/node[0-9]*');
my $interleaving = @memory_nodes > 1;
is($node->log_contains(qr/numasched interleaved the main shared memory segment \(\d+ MB\) over nodes/) ? 1 : 0,
	$interleaving ? 1 : 0,
	$interleaving ? 'the postmaster interleaved the main segment' : 'one memory node: the segment is left alone');
my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
my $shared_pages = $s->query_safe('SELECT sum(pages) FROM numasched_shared_memory');
my ($segment, $rss_kb, $page_kb) = segment_of($pid);
like($segment // '', $interleaving ? qr/interleave:/ : qr/^\S+ default /,
	"the segment's line in /proc/$pid/numa_maps says " . ($interleaving ? 'interleave' : 'default'));
cmp_ok(abs($shared_pages - $rss_kb / $page_kb), '<=', 0.01 * $shared_pages + 16,
	"numasched_shared_memory adds up to the segment's resident pages ($shared_pages vs "
	  . ($rss_kb / $page_kb) . ' from smaps)');

my $own = $s->query_safe('SELECT sum(pages) FROM numasched_memory(pg_backend_pid())');
my $from_proc = numa_maps_pages($pid);
cmp_ok(abs($own - $from_proc), '<=', 0.05 * $from_proc, "numasched_memory agrees with numa_maps ($own vs $from_proc)");
my %private = private_pages($pid);
my $private_proc = 0;
$private_proc += $_ for values %private;
my $private_view = $s->query_safe(
	'SELECT private_pages_local + private_pages_elsewhere FROM numasched_locality WHERE pid = pg_backend_pid()');
cmp_ok(abs($private_view - $private_proc), '<=', 0.05 * $private_proc + 8,
	"numasched_locality counts the private pages numa_maps shows ($private_view vs $private_proc)");
my ($ret, $out, $err) = $node->psql('postgres', 'SELECT * FROM numasched_memory(999999)');
like($err, qr/PID 999999 is not a PostgreSQL backend process/, 'numasched_memory: a bad pid is an error');

# --- after a crash restart the new segment is interleaved again ----------------
my $victim = $s->query_safe('SELECT pg_backend_pid()');
kill 'KILL', $victim;
$s->{run}->kill_kill;
$node->poll_query_until('postgres', 'SELECT true') or die 'no connection after the crash restart';
my $count = () = slurp_file($node->logfile) =~ /numasched interleaved the main shared memory segment/g;
is($count, $interleaving ? 2 : 0, $interleaving ? 'after a crash restart the postmaster interleaved the new segment'
	: 'after a crash restart the new segment is left alone too');

$node->stop;
done_testing();

# The main segment's numa_maps line, its Rss and page size from smaps: the
# mapping that starts with PostgreSQL's shared memory (the largest shared one).
sub segment_of
{
	my ($pid) = @_;
	my ($best, $best_size, %rss, %page);
	my $current;
	open(my $fh, '<', "/proc/$pid/smaps") or return;
	while (<$fh>)
	{
		if (/^([0-9a-f]+)-([0-9a-f]+) (\S+)/)
		{
			$current = undef;
			next unless substr($3, 3, 1) eq 's';
			$current = $1;
			my $size = hex($2) - hex($1);
			($best, $best_size) = ($1, $size) if !defined $best_size || $size > $best_size;
		}
		elsif (defined $current && /^Rss:\s+(\d+) kB/) { $rss{$current} = $1 }
		elsif (defined $current && /^KernelPageSize:\s+(\d+) kB/) { $page{$current} = $1 }
	}
	close $fh;
	open($fh, '<', "/proc/$pid/numa_maps") or return;
	my ($line) = grep { /^0*\Q$best\E / } <$fh>;
	return ($line, $rss{$best}, $page{$best});
}

sub numa_maps_pages
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/numa_maps") or return 0;
	my $kb = 0;
	while (<$fh>)
	{
		my ($page) = /kernelpagesize_kB=(\d+)/;
		$kb += $1 * ($page // 4) while /\bN\d+=(\d+)/g;
	}
	return $kb / 4;
}
