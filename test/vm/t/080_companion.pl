# The sched_ext companion in a VM whose kernel has sched_ext (VM_KERNEL=sid
# test/vm/run.sh 2): once numasched-scx is loaded, placed processes switch
# themselves to SCHED_EXT with the CPUs of their whole reach; busy work more
# than its node has CPUs runs on the other node's idle CPU while its private
# pages stay home; killing the loader mid-query loses nothing, and numasched
# puts every process back on its group's CPUs.  Every answer is the kernel's:
# /sys/kernel/sched_ext, the policy in /proc/PID/stat, Cpus_allowed_list,
# the CPU a process last ran on, numa_maps.  Root loads and kills the
# companion on request (test/vm/companion_control.sh).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(sum);
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

my @nodes = companion_nodes();

my ($cpus_of_node, $node_of_cpu) = node_cpus(@nodes);
my %cpus_of_node = %$cpus_of_node;
my %node_of_cpu = %$node_of_cpu;
my ($home) = grep { $cpus_of_node{$_} ne '' } @nodes;
my $width = cpu_count($cpus_of_node{$home});
my $all_cpus = slurp_file('/sys/devices/system/cpu/online') =~ s/\s+//gr;
my $burst = 8;    # seconds: long enough to look at it under emulation

# the CPU groups of node $n in $cluster, as numasched.cpu_groups names them
sub groups_of_node
{
	my ($cluster, $n) = @_;
	return $cluster->safe_psql('postgres',
		"SELECT string_agg(cpu_group::text, ',' ORDER BY cpu_group) FROM numasched_groups WHERE node = $n");
}

my $node = numasched_cluster('companion', qq{
numasched.rebalance_interval = 0
numasched.log_placements = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
is(sched_ext_ops(), '', 'no sched_ext scheduler before the test');

# --- before: CPU masks ---------------------------------------------------------
my $early = $node->background_psql('postgres');
my $early_pid = $early->query_safe('SELECT pg_backend_pid()');
is($early->query_safe("SELECT executor FROM numasched_processes WHERE pid = $early_pid"), 'masks',
	'without the companion: executor masks');
is(sched_policy($early_pid), 0, 'and the kernel has SCHED_OTHER for it');

# --- the companion is loaded: processes already placed follow ----------------
companion('start');
ok(wait_until(sub { sched_ext_ops() eq 'numasched' }, 60), 'numasched-scx is the sched_ext scheduler')
  or BAIL_OUT('the companion did not load: ' . slurp_file($ENV{COMPANION_LOG}));
# a statement wakes a dozing scheduler, which looks every 100 ms
$early->query_safe('SELECT 1');
ok(wait_until(sub { (sched_policy($early_pid) // -1) == 7 }, 10),
	'a process placed before switches to SCHED_EXT (policy 7)');
is($early->query_safe("SELECT executor FROM numasched_processes WHERE pid = $early_pid"), 'sched_ext',
	'numasched_processes says executor sched_ext');
is(kernel_cpus($early_pid), $all_cpus, "with the CPUs of its whole reach ($all_cpus)");
like(slurp_file($node->logfile), qr/the sched_ext companion numasched-scx is loaded/, 'the server log says so');
# the rest of the server too: the kernel's fair class would run it ahead of every backend
my $postmaster = $node->{_pid};
is(sched_policy($postmaster), 7, 'the postmaster is SCHED_EXT, and so its children from birth');
my @others = split /\n/, $node->safe_psql('postgres',
	"SELECT pid FROM pg_stat_activity WHERE backend_type IN ('checkpointer', 'walwriter', 'background writer')");
ok(@others == 3 && !grep({ (sched_policy($_) // -1) != 7 } @others), 'and its checkpointer, background writer and WAL writer ('
	  . join(', ', map { "$_:" . (sched_policy($_) // '?') } @others) . ')');

# --- a new session under the companion ------------------------------------------
my $late = $node->background_psql('postgres', on_error_stop => 0);
my $late_pid = $late->query_safe('SELECT pg_backend_pid()');
is(sched_policy($late_pid), 7, 'a new backend is SCHED_EXT from its placement');
is(kernel_cpus($late_pid), $all_cpus, 'with its whole reach');
is($late->query_safe("SELECT lent_cpus IS NULL FROM numasched_processes WHERE pid = $late_pid"), 't',
	'nothing is lent: the companion picks among them');

# background: the process's own nice 19, still SCHED_EXT (a SCHED_IDLE task
# would run in the kernel's fair class, ahead of every SCHED_EXT one)
$late->query_safe('SET numasched.cpu_priority = background');
$late->query_safe('SELECT 1');
is(stat_field($late_pid, 19), 19, 'a background session has nice 19');
is(sched_policy($late_pid), 7, 'and stays SCHED_EXT');
is($late->query_safe("SELECT cpu_priority FROM numasched_processes WHERE pid = $late_pid"), 'background',
	'numasched_processes says background');
# the kernel lets it lower its nice, not raise it (RLIMIT_NICE 0 here, no CAP_SYS_NICE)
$late->query('SET numasched.cpu_priority = normal');
like($late->{stderr}, qr/numasched cannot give this session normal CPU priority back/,
	'a SET back to normal is refused, as from SCHED_IDLE');
$late->{stderr} = '';

# it runs on what normal work leaves: beside as many busy normal sessions as
# there are CPUs, it gets the companion's bound (a slice each 100 ms), not a share
my $ncpus = cpu_count($all_cpus);
my @busy = map { $node->background_psql('postgres') } 1 .. $ncpus;
my @busy_pids = map { $_->query_safe('SELECT pg_backend_pid()') } @busy;
my $spin = "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '6 s' LOOP END LOOP; END \$\$;\n";
$_->query_until(qr/started/, $spin) for @busy, $late;
sleep 1;
my %cpu_before = map { $_ => cpu_ticks($_) } @busy_pids, $late_pid;
sleep 3;
my %used = map { $_ => cpu_ticks($_) - $cpu_before{$_} } @busy_pids, $late_pid;
$_->query_safe('SELECT 1') for @busy, $late;
my $normal = sum(map { $used{$_} } @busy_pids) / @busy_pids;
note("CPU ticks in 3 s: normal " . join(' ', map { $used{$_} } @busy_pids) . ", background $used{$late_pid}");
cmp_ok($used{$late_pid}, '<', 0.25 * $normal,
	"the background session gets less than a quarter of a busy normal one's CPU ($used{$late_pid} against $normal ticks)");
cmp_ok($used{$late_pid}, '>', 0, 'but it progresses');
$_->quit for @busy, $late;
# gone from the books before the leader comes: one still counted on the
# leader's node could leave it no room, and the worker would spill elsewhere
my $gone = join(',', @busy_pids, $late_pid);
ok(wait_until(sub {
	$node->safe_psql('postgres', "SELECT count(*) FROM numasched_processes WHERE pid IN ($gone)") == 0 }, 30),
	'the busy sessions have left');

# --- a parallel worker: SCHED_EXT with its whole reach, and its leader's
# node in its memory policy (the companion's hint for where it belongs); the
# leader's class has the groups of a node where no other session is counted
# (the first one's is where it ran at its placement), so that its worker has
# room beside it, and may spill anywhere
my $early_node = $node->safe_psql('postgres', "SELECT node FROM numasched_processes WHERE pid = $early_pid");
note("the first session is counted on node $early_node");
my ($away) = grep { $_ != $early_node && $cpus_of_node{$_} ne '' } @nodes;
my $away_groups = groups_of_node($node, $away);
my $leader = $node->background_psql('postgres');
my $leader_pid = $leader->query_safe('SELECT pg_backend_pid()');
$leader->query_safe($_) for ("SET numasched.cpu_groups = '$away_groups'",
	'SET parallel_setup_cost = 0', 'SET parallel_tuple_cost = 0', 'SET min_parallel_table_scan_size = 0',
	'SET max_parallel_workers_per_gather = 1',
	'CREATE TABLE IF NOT EXISTS slow_rows AS SELECT g FROM generate_series(1, 5000) g');
$leader->query_until(qr/started/, "\\echo started\nSELECT count(*) FROM slow_rows WHERE pg_sleep(0.002) IS NOT NULL;\n");
# it places itself at its executor start, and numasched_processes lists it then
my $worker_pid = '';
wait_until(sub {
	$worker_pid = $node->safe_psql('postgres',
		"SELECT pid FROM numasched_processes WHERE backend_type = 'parallel worker' AND leader_pid = $leader_pid LIMIT 1");
	$worker_pid ne ''
}, 10);
ok($worker_pid, "the leader's parallel worker started ($worker_pid)");
is(sched_policy($worker_pid), 7, 'the parallel worker is SCHED_EXT');
is(kernel_cpus($worker_pid), $all_cpus, 'with its whole reach');
is(heap_policy($leader_pid), "prefer:$away", "its leader's memory prefers node $away");
is(heap_policy($worker_pid), "prefer:$away", "and so does the worker's: its leader's node is its home");
$leader->query_safe('SELECT 1');
# a class of that node alone confines it under the companion too: its reach is the node
$leader->query_safe("SET numasched.nodes = '$away'");
is(kernel_cpus($leader_pid), $cpus_of_node{$away},
	"SET numasched.nodes = '$away' while in its group: the leader's reach is that node's CPUs ($cpus_of_node{$away})");
$leader->quit;

# --- a burst: one busy backend more than node $home has CPUs --------------------
my @sessions = map { $node->background_psql('postgres') } 0 .. $width;
my @pids = map { $_->query_safe('SELECT pg_backend_pid()') } @sessions;
# moved home to node $home (the administrator's override: a class would
# spill the one too many, or keep all from the other node); a statement
# once they have lived a second brings their memory home
my ($home_group) = split /,/, groups_of_node($node, $home);
$_->query_safe("SELECT numasched_move(pg_backend_pid(), $home, $home_group)") for @sessions;
sleep 2;
$_->query_safe('SELECT 1') for @sessions;
# their memory home before the burst (a statement settles it), so that the
# visit alone decides where it is after
sub share_home
{
	my ($share) = private_on($_[0], $home);
	return $share;
}
# (one placed on the other node and moved after its first settle kept the
# pages it still shared copy-on-write with the postmaster there, a third)
ok(wait_until(sub { $_->query_safe('SELECT 1') for @sessions; !grep { share_home($_) < 99 } @pids }, 20),
	"their private pages are on node $home before the burst ("
	  . join(' ', map { sprintf('%.0f%%', share_home($_)) } @pids) . ')');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM numasched_processes WHERE node = $home AND executor = 'sched_ext' AND pid IN ("
	  . join(',', @pids) . ')'), scalar @pids, (1 + $width) . " backends at home on node $home under the companion");
$_->query_until(qr/started/, "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '$burst s' LOOP END LOOP; END \$\$;\n")
  for @sessions;
ok(wait_until(sub { !grep { !runnable($_) } @pids }, 60), 'all busy');
my ($visitor, $after) = first_away(\@pids, \%node_of_cpu, $home, 5);
ok(defined $visitor, 'a busy backend runs on a CPU of another node');
note(sprintf('backend %d ran off node %d %.0f ms after all were busy', $visitor // 0, $home, 1000 * ($after // 0)));
cmp_ok($after // 99, '<=', 0.1, 'within 100 ms');
if (defined $visitor)
{
	my ($share, $where) = private_on($visitor, $home);
	cmp_ok($share, '>=', 99, "its private pages stay on node $home ($where)");
	is(heap_policy($visitor), "prefer:$home", 'its memory policy names its home node (what the companion reads)');
}

# --- the loader killed mid-burst: nothing lost, back to masks -------------------
companion('kill');
ok(wait_until(sub { sched_ext_ops() eq '' }, 10), 'killed, numasched-scx is unloaded at once')
  and is(slurp_file('/sys/kernel/sched_ext/state') =~ s/\s+//gr, 'disabled', 'sched_ext is disabled');
my $lost = 0;
for my $session (@sessions)
{
	eval { $session->query_safe('SELECT 1'); 1 } or $lost++;
}
is($lost, 0, 'every busy query of the burst completed');
ok(wait_until(sub { !grep { (sched_policy($_) // -1) != 0 } @pids, $early_pid, $postmaster, @others }, 10),
	'every process of the server is SCHED_OTHER again');
# the default node binding (preferred) keeps the reach the companion had
ok(wait_until(sub { !grep { (kernel_cpus($_) // '') ne $all_cpus } @pids }, 10),
	"and on masks of their whole reach, as under the companion ($all_cpus)");
is($node->safe_psql('postgres', "SELECT count(*) FROM numasched_processes WHERE executor = 'sched_ext'"), 0,
	'numasched_processes says masks for all');
like(slurp_file($node->logfile), qr/numasched-scx is gone/, 'the server log says so');
note('companion: ' . (split /\n/, slurp_file($ENV{COMPANION_LOG}))[-1]);
$_->quit for @sessions;
$early->quit;

$node->stop;
done_testing();
