# Multi-node placement against a real kernel, in a VM with emulated NUMA
# nodes (test/vm/run.sh).  Every answer is the kernel's: Cpus_allowed_list in
# /proc/PID/status; the task's memory policy and where its pages are in
# /proc/PID/numa_maps.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(sum);
use lib 'test/t';
use NumaschedTest;
use Time::HiRes qw(usleep);

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my %cpus_of_node = map { $_ => slurp_file("/sys/devices/system/node/node$_/cpulist") =~ s/\s+//gr } @nodes;
my %distance;
for my $a (@nodes)
{
	my @d = split ' ', slurp_file("/sys/devices/system/node/node$a/distance");
	$distance{$a}{ $nodes[$_] } = $d[$_] for 0 .. $#nodes;
}
my $N = scalar @nodes;
my $wait = 120;    # software emulation is slow
my $postmaster_cpus;

sub expand
{
	my @cpus;
	for (split /,/, $_[0]) { my ($a, $b) = split /-/; push @cpus, $a .. ($b // $a) }
	return @cpus;
}

# the node whose CPUs hold all of a process's allowed CPUs, or -1
sub node_of_pid
{
	my @cpus = expand(kernel_cpus($_[0]) // '');
	for my $n (@nodes)
	{
		my %on = map { $_ => 1 } expand($cpus_of_node{$n});
		return $n if @cpus && !grep { !$on{$_} } @cpus;
	}
	return -1;
}

# pages per node of a process's largest private anonymous mapping (numa_maps)
sub largest_private_mapping
{
	open(my $fh, '<', "/proc/$_[0]/numa_maps") or return ();
	my ($best, $most) = ('', 0);
	for my $line (<$fh>)
	{
		next if $line =~ /file=/ || $line !~ /\banon=(\d+)/;
		($best, $most) = ($line, $1) if $1 > $most;
	}
	my %pages;
	$pages{$1} = $2 while $best =~ /\bN(\d+)=(\d+)/g;
	return %pages;
}

# The pages of a process's private mappings (rw-p, no file: what
# private_pages counts) that it still shares with another process, the
# postmaster's copy-on-write pages: present in /proc/PID/pagemap (bit 63)
# and not mapped exclusively (bit 56)
sub shared_private_pages
{
	my ($pid) = @_;
	open(my $maps, '<', "/proc/$pid/maps") or return 0;
	open(my $pagemap, '<:raw', "/proc/$pid/pagemap") or return 0;
	my $shared = 0;
	while (my $line = <$maps>)
	{
		my ($lo, $hi, $perms, $inode, $name) = $line =~ /^(\w+)-(\w+) (\S+) \S+ \S+ (\d+)\s*(.*)$/ or next;
		next unless $perms eq 'rw-p' && $inode == 0 && $name !~ /^\[(vvar|vdso|vsyscall)/;
		my ($first, $count) = (hex($lo) / 4096, (hex($hi) - hex($lo)) / 4096);
		sysseek($pagemap, $first * 8, 0) or next;
		my $got = sysread($pagemap, my $entries, $count * 8) // 0;
		for my $entry (unpack('Q<*', substr($entries, 0, $got - $got % 8)))
		{
			$shared++ if ($entry >> 63) & 1 && !(($entry >> 56) & 1);
		}
	}
	return $shared;
}

# A backend brings its memory to its node at the first statement that starts
# once it has lived a second: wait that long, then run one in each session.
sub settle
{
	sleep 2;
	$_->query_safe('SELECT 1') for @_;
}

# strict node masks and lending (050_lending.pl) off: these checks pin down
# placement, moves and memory, which a lent burst or the kernel's balancing
# across nodes would blur (the default, preferred, is 015_preferred.pl's)
my $node = numasched_cluster('multinode', qq{
numasched.node_binding = strict
numasched.lend_idle_cpus = off
numasched.rebalance_interval = 0
numasched.log_placements = on
log_min_messages = debug1
max_worker_processes = 16
max_parallel_workers_per_gather = 1
parallel_setup_cost = 0
parallel_tuple_cost = 0
min_parallel_table_scan_size = 0
});
$node->start;
$postmaster_cpus = kernel_cpus($node->{_pid});
$node->safe_psql('postgres', q{
CREATE EXTENSION numasched;
-- one row per page: from 17 on a scan's read stream claims blocks ahead, and
-- a leader could claim all of a small table before its worker starts
CREATE TABLE t WITH (fillfactor = 10) AS
  SELECT g AS x, repeat('x', 800) AS pad FROM generate_series(1, 300) g;
CREATE FUNCTION slow(int) RETURNS bool LANGUAGE plpgsql PARALLEL SAFE
  AS $$ BEGIN PERFORM pg_sleep(0.02); RETURN true; END $$;
});

# --- the topology numasched reads is the VM's --------------------------------
is($node->safe_psql('postgres', 'SELECT count(*) FROM numasched_topology WHERE cpu_groups > 0'), $N,
	"numasched sees the $N nodes");
is($node->safe_psql('postgres', 'SELECT string_agg(distance::text, \' \' ORDER BY from_node, to_node) FROM numasched_distances'),
	join(' ', map { my $a = $_; map { $distance{$a}{$_} } @nodes } @nodes), 'and the distances qemu was given');

# --- a short connection copies and moves nothing --------------------------------
# one on each node (its class names it), so some run off the postmaster's node
my $settled = 'SELECT pages_copied || \' \' || pages_migrated FROM numasched_stats';
my $before = $node->safe_psql('postgres', $settled);
for my $n (@nodes)
{
	local $ENV{PGOPTIONS} = "-c numasched.nodes=$n";
	$node->safe_psql('postgres', 'SELECT count(*) FROM pg_class');
}
is($node->safe_psql('postgres', $settled), $before,
	"$N connections that live less than a second copy and move no page (pages_copied, pages_migrated: $before)");

# --- backends spread over nodes by load -----------------------------------------
my @sessions = map { $node->background_psql('postgres') } 1 .. $N;
my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @sessions;
settle(@sessions);
my @on = map { node_of_pid($_) } @pids;
is(join(' ', sort @on), join(' ', sort @nodes), "$N backends land one per node (@on)");
for my $i (0 .. $#pids)
{
	is(heap_policy($pids[$i]), 'default', "backend $pids[$i] keeps the kernel's default policy (local allocation)");
	my ($share, $where) = private_on($pids[$i], $on[$i]);
	cmp_ok($share, '>=', 99, "backend $pids[$i]: its private pages are on its node $on[$i] ($where)");
}
$_->quit for @sessions;

# --- of equally loaded nodes, a backend stays on the one it started on ------------
# The postmaster pinned to the last node's CPUs: a backend it forks runs and
# allocates there until it is placed.  With no other backend placed the
# nodes tie, and it stays (the lowest node took ties before); a second one,
# with the first alive, goes where the load is lower.
my $last_node = $nodes[-1];
wait_until(sub { $node->safe_psql('postgres', 'SELECT count(*) FROM numasched_processes') == 1 }, $wait);
system("taskset -p -c $cpus_of_node{$last_node} $node->{_pid} >/dev/null") == 0 or die 'taskset failed';
my @tied = ($node->background_psql('postgres'));
my $tied_pid = $tied[0]->query_safe('SELECT pg_backend_pid()');
is(node_of_pid($tied_pid), $last_node,
	"nodes tied: a backend started on node $last_node is placed there (" . kernel_cpus($tied_pid) . ')');
push @tied, $node->background_psql('postgres');
my $second_pid = $tied[1]->query_safe('SELECT pg_backend_pid()');
isnt(node_of_pid($second_pid), $last_node,
	"node $last_node busier: the next one started there goes to another node (" . kernel_cpus($second_pid) . ')');
$_->quit for @tied;
system("taskset -p -c $postmaster_cpus $node->{_pid} >/dev/null") == 0 or die 'taskset failed';
wait_until(sub { $node->safe_psql('postgres', 'SELECT count(*) FROM numasched_processes') == 1 }, $wait);

# the explicit policies: the pages a backend had before it was placed follow too
for my $policy ('preferred', 'bind')
{
	$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.memory_policy = '$policy'");
	$node->reload;
	my @s = map { $node->background_psql('postgres') } 1 .. 2;
	settle(@s);
	for my $session (@s)
	{
		my $pid = $session->query_safe('SELECT pg_backend_pid()');
		my $n = node_of_pid($pid);
		my ($share, $where) = private_on($pid, $n);
		like(heap_policy($pid), $policy eq 'bind' ? qr/^bind:$n$/ : qr/^prefer:$n$/,
			"memory_policy = $policy: the kernel holds that policy for node $n");
		cmp_ok($share, '>=', 99, "memory_policy = $policy: private pages on node $n ($where)");
	}
	$_->quit for @s;
}
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.memory_policy');
$node->reload;
wait_until(sub { $node->safe_psql('postgres', 'SELECT count(*) FROM numasched_processes') == 1 }, $wait);

# --- backends settle one at a time -------------------------------------------------
# Clients that connect together would all bring their memory home in the same
# second.  A statement in each of 2N sessions at once, once they have lived a
# second: fewer settle at it than started it, the others settle at a later
# statement, and the settles the server log shows (DEBUG1: when each ended and
# how long it took) never overlap.
{
	# each pid asked at once, while its backend is younger than a second: a
	# statement later than that would settle it before the test begins
	my (@s, @p);
	for (1 .. 2 * $N)
	{
		push @s, $node->background_psql('postgres');
		push @p, $s[-1]->query_safe('SELECT pg_backend_pid()');
	}
	sleep 2;
	my $log_start = -s $node->logfile;
	# sent to all before any answer is awaited: the statements start within
	# milliseconds of each other, and a settle takes tens
	$_->{stdin} .= "SELECT pg_sleep(0.2);\n\\echo done\n" for @s;
	$_->{run}->pump_nb for @s;
	for my $session (@s)
	{
		pump_until($session->{run}, $session->{timeout}, \$session->{stdout}, qr/done/)
		  or die 'a session did not end its statement';
		$session->{stdout} = '';
	}
	my %ours = map { $_ => 1 } @p;
	my $settled = sub {
		my %end;
		for (split /\n/, substr(slurp_file($node->logfile), $log_start))
		{
			# "2026-12-05 17:20:01.123 UTC [pid] ... in 12.345 ms: ..." (from
			# PostgreSQL 19 on "UTC client backend[pid]")
			next unless /^\S+ (\d+):(\d+):([\d.]+) .*brought the private memory of process (\d+) to node \d+ in ([\d.]+) ms/;
			$end{$4} = [ $1 * 3600 + $2 * 60 + $3, $5 / 1000 ] if $ours{$4};
		}
		return \%end;
	};
	my $first_round = keys %{ $settled->() };
	ok($first_round >= 1 && $first_round < @p,
		scalar(@p) . " backends start a statement together: some, not all, settle at it ($first_round)");
	ok(wait_until(sub { $_->query_safe('SELECT 1') for @s; keys %{ $settled->() } == @p }, $wait),
		'the others at a later statement');
	my @spans = sort { $a->[0] <=> $b->[0] } map { [ $_->[0] - $_->[1], $_->[0] ] } values %{ $settled->() };
	# the log's times are to the millisecond
	my @overlaps = grep { $spans[$_][0] < $spans[ $_ - 1 ][1] - 0.001 } 1 .. $#spans;
	is(scalar @overlaps, 0, 'and no two settle at once ('
		  . join(' ', map { sprintf('%.3f-%.3f', @$_) } @spans) . ')');
	$_->quit for @s;
}

# --- parallel workers: compact, spill to the nearest node, spread ----------------
# Starts the slow query in $session and returns the node its worker is bound
# to.  The worker is found by its process title, not with SQL: a polling
# connection would itself be placed and could fill the node being tested.
sub worker_node
{
	my ($session, $leader) = @_;
	$session->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM t WHERE slow(x);\n");
	my $n = wait_until(sub {
		my ($w) = split ' ', `pgrep -f 'parallel worker for PID $leader\\b'`;
		return undef unless $w && (kernel_cpus($w) // $postmaster_cpus) ne $postmaster_cpus;
		my $on = node_of_pid($w);
		usleep(300_000);	# placed: it moves its own pages right after binding
		my %pages = private_pages($w);
		my $total = sum(values %pages) || 1;
		return [ $on, $total - ($pages{$on} // 0), shared_private_pages($w), $total, private_on($w, $on) ];
	}, $wait);
	$session->query_safe('SELECT 1');
	return -2 unless $n;
	# it copies none of the postmaster's pages (most workers live for one
	# short query): all it has elsewhere is those
	my ($on, $elsewhere, $shared, $total, undef, $where) = @$n;
	cmp_ok($elsewhere, '<=', $shared + $total / 100,
		"the parallel worker's private pages off its node $on ($elsewhere of $total: $where) are at most "
		  . "the $shared it still shares with the postmaster");
	return $on;
}

my $leader = $node->background_psql('postgres');
my $lpid = $leader->query_safe('SELECT pg_backend_pid()');
my $home = node_of_pid($lpid);
my $filler;
if (cpu_count($cpus_of_node{$home}) > 1)
{
	is(worker_node($leader, $lpid), $home, 'compact: the worker sits on its leader\'s node');
	# fill the leader's node: one more backend there makes it full
	$filler = $node->background_psql('postgres');
	my $fpid = $filler->query_safe('SELECT pg_backend_pid()');
	$node->safe_psql('postgres', "SELECT numasched_move($fpid, $home)");
}
my ($nearest) = sort { $distance{$home}{$a} <=> $distance{$home}{$b} || $a <=> $b } grep { $_ != $home } @nodes;
my $spill = worker_node($leader, $lpid);
is($spill, $nearest, "leader's node $home full: the worker goes to the nearest node ($nearest)");
is($distance{$home}{$spill}, (sort { $a <=> $b } map { $distance{$home}{$_} } grep { $_ != $home } @nodes)[0],
	'never to a farther node while a nearer one has room');
$filler->quit if $filler;

$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.parallel_placement = 'spread'");
$node->reload;
my $spread = $node->background_psql('postgres');
my $spid = $spread->query_safe('SELECT pg_backend_pid()');
my $shome = node_of_pid($spid);
my $snode = worker_node($spread, $spid);
isnt($snode, $shome, "spread: the worker leaves its leader's node $shome (to $snode)");
$spread->quit;
$leader->quit;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.parallel_placement');

# --- the scheduler's moves go to the nearest node first, memory follows ---------
# (numasched.migrate_memory is on by default).  It moves a process to another
# node only when its group waits (numasched.cross_node_moves = when_waiting):
# as many busy backends as the node has CPUs stay; one more, and one moves.
$node->reload;
my $from = $nodes[0];
my $busy_count = 1 + scalar(expand($cpus_of_node{$from}));
my (@busy, @bpids);

# Starts a busy backend on $from: SELECT 1 settles it on its new node; then 20
# MB of private memory is written there and held while the loop keeps it busy.
sub start_busy
{
	my $session = $node->background_psql('postgres');
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	$node->safe_psql('postgres', "SELECT numasched_move($pid, $from)");
	$session->query_until(qr/started/, "SET statement_timeout = '300s';\nSELECT 1;\n\\echo started\n"
		  . "DO \$\$ DECLARE big text := repeat('x', 20000000); "
		  . "BEGIN FOR i IN 1..2000000000 LOOP END LOOP; PERFORM length(big); END \$\$;\n");
	push @busy, $session;
	push @bpids, $pid;
	ok(wait_until(sub { my %p = largest_private_mapping($pid); my $t = 0; $t += $_ for values %p; $t >= 4800 }, $wait),
		"busy backend $pid holds its 20 MB");
}
start_busy() for 1 .. $busy_count - 1;
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '200ms'");
$node->reload;
my $passes = $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats');
wait_until(sub { $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats') >= $passes + 10 }, $wait);
is(join(' ', map { node_of_pid($_) } @bpids), join(' ', ($from) x @bpids),
	'as many busy backends as node ' . $from . ' has CPUs: none is moved off it in 10 passes (none waits)');
# the last one starts with rebalancing off, and the count is taken before it
# resumes: the backend's own settling counts migrated pages too
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = 0");
$node->reload;
start_busy();
my $migrated_before = $node->safe_psql('postgres', 'SELECT pages_migrated FROM numasched_stats');
# where each one's 20 MB is before the move, so that what follows counts what
# the move took off $from, not what may never have been there
my %on_from_before = map { my %p = largest_private_mapping($_); ($_ => $p{$from} // 0) } @bpids;
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '200ms'");
$node->reload;
my ($near) = sort { $distance{$from}{$a} <=> $distance{$from}{$b} || $a <=> $b } grep { $_ != $from } @nodes;
my $moved = wait_until(sub { grep { node_of_pid($_) != $from } @bpids }, $wait);
ok($moved, "one more busy backend: the scheduler moves one of the $busy_count off node $from");
# one move leaves the node with a CPU for each of the others: no more
is(join(' ', sort map { node_of_pid($_) } @bpids), join(' ', sort(($from) x ($busy_count - 1), $near)),
	"...to the nearest node ($near), and only one");
# with migrate_memory, the moved backend's private pages follow it
my ($mover) = grep { node_of_pid($_) == $near } @bpids;
my $to_move = $on_from_before{$mover};
cmp_ok($to_move, '>=', 1000, "the moved backend had $to_move pages of its allocation on node $from");
# the count is what the scheduler moved, all of that at least (inside.sh runs
# this file with NUMA balancing off, which would move pages too)
ok(wait_until(sub { $node->safe_psql('postgres', 'SELECT pages_migrated FROM numasched_stats') >= $migrated_before + $to_move }, $wait),
	"migrate_memory: numasched_stats counts the migrated pages, those $to_move at least")
  or diag('pages_migrated ' . $node->safe_psql('postgres', 'SELECT pages_migrated FROM numasched_stats')
	  . " (before: $migrated_before); the server log's numasched lines:\n"
	  . join('', grep { /numasched|migrate/ } split /^/m, slurp_file($node->logfile)));
note(join('', grep { /numasched migrated/ } split /^/m, slurp_file($node->logfile)));
# Only the pages of its private mappings that it alone maps move (move_pages
# without CAP_SYS_NICE); its 20 MB allocation is one.
my %big = largest_private_mapping($mover);
cmp_ok($big{$from} // 0, '<', $to_move / 20, "migrate_memory: of the $to_move pages of its allocation on "
	  . "node $from, less than 5% are left (numa_maps: " . join(' ', map { "N$_=$big{$_}" } sort keys %big) . ')');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($_)") for @bpids;
$_->{run}->kill_kill for @busy;

# --- memory_policy = none: the scheduler's move leaves memory where it is -------
# (the scheduler moved it with migrate_memory before, against the docs)
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = 0");
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.memory_policy = 'none'");
$node->reload;
@busy = ();
@bpids = ();
start_busy() for 1 .. $busy_count;
$migrated_before = $node->safe_psql('postgres', 'SELECT pages_migrated FROM numasched_stats');
%on_from_before = map { my %p = largest_private_mapping($_); ($_ => $p{$from} // 0) } @bpids;
$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.rebalance_interval = '200ms'");
$node->reload;
ok(wait_until(sub { grep { node_of_pid($_) != $from } @bpids }, $wait),
	"memory_policy = none: one of $busy_count busy backends is moved off node $from");
($mover) = grep { node_of_pid($_) != $from } @bpids;
$passes = $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats');
wait_until(sub { $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats') >= $passes + 5 }, $wait);
%big = largest_private_mapping($mover);
cmp_ok($big{$from} // 0, '>=', 0.95 * $on_from_before{$mover},
	"memory_policy = none: the moved backend's allocation stays on node $from (numa_maps: "
	  . join(' ', map { "N$_=$big{$_}" } sort keys %big) . ", $on_from_before{$mover} there before)");
is($node->safe_psql('postgres', 'SELECT pages_migrated FROM numasched_stats'), $migrated_before,
	'memory_policy = none: pages_migrated counts nothing');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($_)") for @bpids;
$_->{run}->kill_kill for @busy;
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.memory_policy');

# (interleaved shared memory: 030_interleave.pl)
$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.rebalance_interval');

# --- workload classes: a role on the last node, a database on the first -------------
{
	my ($first, $last) = ($nodes[0], $nodes[-1]);
	$node->safe_psql('postgres', qq{
ALTER SYSTEM SET numasched.memory_policy = 'preferred';
CREATE ROLE reporting LOGIN;
CREATE DATABASE shop;
ALTER ROLE reporting SET numasched.nodes = '$last';
ALTER DATABASE shop SET numasched.nodes = '$first';
});
	$node->reload;
	for my $case ([ 'reporting', 'postgres', $last, 'a role' ], [ 'postgres', 'shop', $first, 'a database' ])
	{
		my ($role, $db, $want, $label) = @$case;
		my @s = map { $node->background_psql($db, extra_params => [ '-U', $role ]) } 1 .. $N;
		my @p = map { $_->query_safe('SELECT pg_backend_pid()') } @s;
		settle(@s);
		my @landed = map { node_of_pid($_) } @p;
		is(join(' ', @landed), join(' ', ($want) x $N),
			"$label on node $want: all $N of its sessions run there (@landed)");
		is(join(' ', map { heap_policy($_) } @p), join(' ', ("prefer:$want") x $N),
			"$label on node $want: numa_maps shows prefer:$want for each");
		for my $pid (@p)
		{
			my ($share, $where) = private_on($pid, $want);
			cmp_ok($share, '>=', 99, "$label on node $want: backend ${pid}'s private pages are there ($where)");
		}
		$_->quit for @s;
	}
	$node->safe_psql('postgres', q{
ALTER SYSTEM RESET numasched.memory_policy;
DROP DATABASE shop;
DROP ROLE reporting;
});
	$node->reload;
}

# --- narrowing numasched.nodes moves what ran on a node it drops ---------------------
{
	my @s = map { $node->background_psql('postgres') } 1 .. $N;
	my @p = map { $_->query_safe('SELECT pg_backend_pid()') } @s;
	my $drop = $nodes[-1];
	my @kept = grep { $_ != $drop } @nodes;
	my $victim = $p[0];
	$node->safe_psql('postgres', "SELECT numasched_move($victim, $drop)");
	is(node_of_pid($victim), $drop, "a backend runs on node $drop before it is dropped");
	$node->safe_psql('postgres', "ALTER SYSTEM SET numasched.nodes = '" . join(',', @kept) . "'");
	$node->reload;
	# the server-wide nodes are every session's class: it moves at its next statement
	my $now = wait_until(sub {
		$s[0]->query_safe('SELECT 1');
		my $n = node_of_pid($victim);
		$n >= 0 && $n != $drop ? $n : undef }, $wait);
	ok(defined $now, "numasched.nodes without node $drop: its backend is bound to node " . ($now // 'none'));
	is($node->safe_psql('postgres', "SELECT node || ' ' || cpus FROM numasched_processes WHERE pid = $victim"),
		($now // '') . ' ' . kernel_cpus($victim), '...and the view says so');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM numasched_processes WHERE pid IN (' . join(',', @p) . ')'),
		$N, '...and every backend is still in the books');
	$_->quit for @s;
	$node->safe_psql('postgres', 'ALTER SYSTEM RESET numasched.nodes');
	$node->reload;
}

# --- a cpuset that excludes a node is respected --------------------------------------
my $excluded = $nodes[-1];
my $allowed = join(',', map { $cpus_of_node{$_} } grep { $_ != $excluded } @nodes);
$node->stop;
system("taskset -p -c $allowed $$ >/dev/null") == 0 or die 'taskset failed';
$node->start;
system("taskset -p -c " . join(',', map { $cpus_of_node{$_} } @nodes) . " $$ >/dev/null");
is($node->safe_psql('postgres', "SELECT cpu_groups FROM numasched_topology WHERE node = $excluded"), '',
	"taskset without node $excluded: numasched does not use it");
@sessions = map { $node->background_psql('postgres') } 1 .. 2 * $N;
my @landed = map { node_of_pid($_->query_safe('SELECT pg_backend_pid()')) } @sessions;
ok(!grep({ $_ == $excluded } @landed), "no backend lands on node $excluded (@landed)");
$_->quit for @sessions;

# --- a number of groups some node cannot be split into -------------------------
# with every CPU of the first node and one of the last, splitting into as many
# groups as the first node has CPUs does not fit the last: the groups cover
# every node, so the value is refused with the reason
my ($first, $last) = ($nodes[0], $nodes[-1]);
my @first_cpus = expand($cpus_of_node{$first});
my @last_cpus = expand($cpus_of_node{$last});
SKIP:
{
	skip 'needs two CPUs in the first and the last node', 2 if @first_cpus < 2 || @last_cpus < 2;
	my $split = scalar @first_cpus;
	$node->stop;
	$node->append_conf('postgresql.conf', "numasched.groups_per_node = $split\n");
	my $log_start = -s $node->logfile;
	system("taskset -p -c " . join(',', @first_cpus, $last_cpus[0]) . " $$ >/dev/null") == 0
	  or die 'taskset failed';
	$node->start;
	system("taskset -p -c " . join(',', map { $cpus_of_node{$_} } @nodes) . " $$ >/dev/null");
	is($node->safe_psql('postgres', 'SHOW numasched.groups_per_node'), '1',
		"numasched.groups_per_node = $split with one usable CPU on node $last: not taken (the default, 1, is)");
	like(substr(slurp_file($node->logfile), $log_start),
		qr/invalid value for parameter "numasched.groups_per_node": $split\n[^\n]*DETAIL:  $split groups per node is more than the 1 usable CPU of node $last/,
		'...and the log says why');
}

$node->stop;
done_testing();
