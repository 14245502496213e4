# A decision another process made for a session reaches the kernel after
# numasched's lock is released, by pid.  A session that leaves numasched or
# exits meanwhile must not be told it afterwards: out of numasched, it would
# stay bound to CPUs nobody follows; gone, its pid may be a new process's.
# An LD_PRELOAD shim makes the telling slow (2 s) for one pid, and notes
# whom it reaches: the start time /proc gives that pid at that moment.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
my $tmp = PostgreSQL::Test::Utils::tempdir();
system('cc', '-shared', '-fPIC', '-o', "$tmp/libslowbind.so", 'test/t/slowbind.c') == 0
  or BAIL_OUT('could not build the slowbind shim');
my $pidfile = "$tmp/slow_pid";
my $log = "$tmp/told";

my $node = numasched_cluster('in_flight', qq{
numasched.groups_per_node = 2
numasched.group_binding = strict
numasched.rebalance_interval = 0
numasched.lend_idle_cpus = off
});
{
	local $ENV{LD_PRELOAD} = "$tmp/libslowbind.so";
	local $ENV{SLOWBIND_PIDFILE} = $pidfile;
	local $ENV{SLOWBIND_LOG} = $log;
	local $ENV{SLOWBIND_MS} = 2000;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
# the postmaster's CPUs: what a process out of numasched has
my $usable = kernel_cpus($node->{_pid});
my $node_id = $node->safe_psql('postgres', 'SELECT node FROM numasched_groups ORDER BY cpu_group LIMIT 1');

# A session bound to its group, and another session's numasched_move of it
# into the other group started: its telling waits in the shim.
sub move_in_flight
{
	my ($session) = @_;
	my $pid = $session->query_safe('SELECT pg_backend_pid()');
	my $group = $session->query_safe("SELECT cpu_group FROM numasched_processes WHERE pid = $pid");
	my $other = 1 - $group;
	my $cpus = $session->query_safe("SELECT cpus FROM numasched_groups WHERE cpu_group = $group");
	is(kernel_cpus($pid), $cpus, "the session is bound to its group's CPUs ($cpus)");
	unlink($log);
	open(my $fh, '>', $pidfile) or die;
	print $fh "$pid\n";
	close($fh);
	my $mover = IPC::Run::start(
		[ 'psql', '-X', '-d', $node->connstr('postgres'), '-c', "SELECT numasched_move($pid, $node_id, $other)" ],
		'>', \my $out, '2>', \my $err);
	# its decision is made and being told (the shim holds it 2 s)
	usleep(500_000);
	return ($pid, $mover);
}

# --- leaving numasched while the move is in flight ----------------------------
my $s = $node->background_psql('postgres');
my ($pid, $mover) = move_in_flight($s);
$s->query_safe('SET numasched.enabled = off; SELECT 1');
$mover->finish;
is(kernel_cpus($pid), $usable,
	"a session that left numasched while another's move of it was in flight has every usable CPU ($usable)");
$s->quit;

# --- exiting while the move is in flight --------------------------------------
$s = $node->background_psql('postgres');
($pid, $mover) = move_in_flight($s);
my $start = stat_field($pid, 22);
my $quit = time();
$s->quit;
$mover->finish;
unlink($pidfile);
my $told = -e $log ? slurp_file($log) : '';
chomp $told;
ok($told eq '' || $told eq "$pid $start",
	"the move reaches the session itself, not a pid its exit gave back to the kernel (the shim saw: "
	  . ($told || 'no telling') . ")");
ok(wait_until(sub { !-e "/proc/$pid" }, 10), 'and the session exits once it is told');

$node->stop;
done_testing();
