# numasched's lock under contention: no message reaches a client while the
# lock is held (a client that stops reading would hold every login, SET of
# a class and the scheduler behind it), simulated with an LD_PRELOAD shim
# that stalls a send to the client as a full socket would.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

my $tmp = PostgreSQL::Test::Utils::tempdir();
for my $shim (qw(failbind stallsend))
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
done_testing();
