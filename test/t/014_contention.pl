# numasched's lock under contention: no message reaches a client while the
# lock is held (a client that stops reading would hold every login, SET of
# a class and the scheduler behind it), simulated with an LD_PRELOAD shim
# that stalls a send to the client as a full socket would; and a session's
# priority, changed by its SETs while the scheduler retries the changes the
# kernel's rate limit refused, ends as its setting says (read from
# /proc/PID/autogroup), with a shim that makes each change slow.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

my $tmp = PostgreSQL::Test::Utils::tempdir();
for my $shim (qw(failbind stallsend slowautogroup))
{
	system('cc', '-shared', '-fPIC', '-o', "$tmp/lib$shim.so", "test/t/$shim.c") == 0
	  or BAIL_OUT("could not build the $shim shim");
}

# --- a message to a client that does not read --------------------------------
# Binding is refused, so a SET of a class makes numasched report a failed
# bind, at DEBUG1, to a client that asked for it; sending it takes 4 s.
my $several = () = glob('/sys/devices/system/node/node[0-9]*');
my $node = numasched_cluster('contention', qq{
numasched.groups_per_node = @{[ $several > 1 ? 1 : 2 ]}
numasched.group_binding = strict
});
{
	local $ENV{LD_PRELOAD} = "$tmp/libfailbind.so $tmp/libstallsend.so";
	local $ENV{STALLSEND_TEXT} = 'numasched could not bind process';
	local $ENV{STALLSEND_SECONDS} = 4;
	$node->start;
}
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');

my ($out, $err) = ('', '');
my $stalled = IPC::Run::start(
	[
		'psql', '-X', '-d', $node->connstr('postgres'), '-c',
		'SET client_min_messages = debug1; SET numasched.spill = never; SELECT 1'
	],
	'>', \$out, '2>', \$err);
# its statement has started, and its client stopped reading
usleep(1_000_000);
my $started = time();
$node->safe_psql('postgres', 'SELECT 1');
my $login = time() - $started;
$stalled->finish;
like($err, qr/DEBUG:  numasched could not bind process \d+/, 'the session is told of the failed bind');
cmp_ok($login, '<', 2, sprintf('meanwhile another session logs in at once (%.2f s)', $login));

$node->stop;

# --- priority changes that overlap ---------------------------------------
# The scheduler retries a change the kernel's rate limit refused (one
# autogroup change in 100 ms, machine-wide); the kernel's answer to its
# write comes back 200 ms late here.  The session changes its priority back
# meanwhile: that change is refused (too soon) and left to the scheduler,
# which must not take the answer to its older write for it.
my $prio = numasched_cluster('overlap', qq{
numasched.groups_per_node = @{[ $several > 1 ? 1 : 2 ]}
numasched.group_binding = strict
numasched.rebalance_interval = 0
});
{
	local $ENV{LD_PRELOAD} = "$tmp/libslowautogroup.so";
	local $ENV{SLOWAUTOGROUP_IN} = 'numasched scheduler';
	local $ENV{SLOWAUTOGROUP_MS} = 200;
	$prio->start;
}
SKIP:
{
	my $mode = background_mode($prio);
	skip "background priority by $mode here: only autogroups' changes are retried", 2
	  unless $mode eq 'autogroup' && open(my $own, '>', '/proc/self/autogroup');
	my $s = $prio->background_psql('postgres');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	# the kernel's window for a change taken now, so that the session's is refused
	print $own autogroup_nice($$) // 0;
	close($own);
	$s->query_safe('SET numasched.cpu_priority = background; SELECT 1');
	my $deadline = time() + 5;
	usleep(5_000) until in_background('autogroup', $pid) || time() > $deadline;
	ok(in_background('autogroup', $pid), 'the scheduler gives the session background priority');
	$s->query_safe('SET numasched.cpu_priority = normal; SELECT 1');
	ok(wait_until(sub { !in_background('autogroup', $pid) }, 3),
		'its SET back to normal, made while the scheduler waited for an answer, is not lost');
	$s->quit;
}
$prio->stop;
done_testing();
