# Priority inversion: a background session holds a row lock through a second
# of CPU work while four normal sessions keep both CPUs busy, and a normal
# session updates the same row.  Where the server may raise priorities (an
# autogroup's nice, or SCHED_IDLE with RLIMIT_NICE or CAP_SYS_NICE) the holder
# is raised; where it may not, a CPU of the holder's reach is set aside for
# it: the holder alone runs there, every other placed process is bound
# without it (read from Cpus_allowed_list), until nobody waits.  Either way
# the normal session gets its row within seconds; unguarded, a SCHED_IDLE
# holder beside four busy normal processes gets almost no CPU and the wait
# lasts minutes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);

my $node = numasched_cluster('inversion', "numasched.rebalance_interval = 0\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched; CREATE TABLE hot (id int PRIMARY KEY, v int); INSERT INTO hot VALUES (1, 0)');
my $scheduler = $node->safe_psql('postgres', "SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'");
my $mode = background_mode($node);
my $raise = may_raise_in($mode, $scheduler);
note("background priority by: $mode; the server may raise priorities: " . ($raise ? 'yes' : 'no'));
is($mode, $ENV{NUMASCHED_EXPECT_MODE}, "the server gives background priority by $ENV{NUMASCHED_EXPECT_MODE}")
  if $ENV{NUMASCHED_EXPECT_MODE};

# a second or so of one CPU, sized here: the machine's speed varies
my $t = time();
$node->safe_psql('postgres', 'SELECT sum(g) FROM generate_series(1, 1000000) g');
my $rows = int(1_000_000 / (time() - $t));
note("the holder's work: $rows rows, about a second of one CPU");

my $holder = $node->background_psql('postgres');
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()');
$holder->query_safe('SET numasched.cpu_priority = background');
ok(wait_until(sub { in_background($mode, $holder_pid) }, 2), 'the holder runs at background priority');
my $reach = kernel_cpus($holder_pid);

# four normal sessions keep both CPUs busy for the rest of the test
my @busy = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 4;
my @busy_pids = map { $_->query_safe('SELECT pg_backend_pid()') } @busy;
$_->query_until(qr/started/, "\\echo started\nDO \$\$ BEGIN WHILE clock_timestamp() < statement_timestamp() + interval '30 s' LOOP END LOOP; END \$\$;\n")
  for @busy;

$holder->query_until(qr/locked/,
	"BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = 1;\n\\echo locked\nSELECT sum(g) FROM generate_series(1, $rows) g;\nCOMMIT;\n");
my $waiter = $node->background_psql('postgres');
$waiter->query_until(qr/updating/, "\\echo updating\nUPDATE hot SET v = v + 1 WHERE id = 1;\n\\echo updated\n");
my $t0 = time();

my ($aside, $others_without) = (undef, 0);
my $done = wait_until(
	sub {
		my $cpus = kernel_cpus($holder_pid) // '';
		if (!$raise && !defined $aside && $cpus =~ /^\d+$/ && $cpus ne $reach)
		{
			$aside = $cpus;
			$others_without = !grep { grep { $_ eq $aside } split /,/, expand(kernel_cpus($_)) } @busy_pids;
		}
		return $node->safe_psql('postgres', 'SELECT v FROM hot WHERE id = 1') == 2;
	},
	60);
my $waited = time() - $t0;
ok($done, sprintf('the normal session got its row after %.1f s', $waited));
cmp_ok($waited, '<', 15, 'within seconds, not minutes: the holder ran');
if (!$raise)
{
	ok(defined $aside, "a CPU was set aside for the holder that cannot be raised (its CPUs: " . ($aside // 'as before') . ", of $reach)");
	ok($others_without, 'and the busy normal sessions were bound without it');
	ok(wait_until(sub { !grep { (kernel_cpus($_) // '') ne $reach } @busy_pids }, 3),
		'once nobody waits, they have every CPU again');
	is(kernel_cpus($holder_pid), $reach, 'and the holder its whole reach');
}
$waiter->quit;

# A holder two waits away: a background session queues for the row behind
# the holder, and a normal one behind it (on the first waiter's tuple
# lock).  Both background sessions block normal work, and are raised.
SKIP:
{
	skip 'the server may not raise priorities here', 2 unless $raise;
	$holder->query_until(qr/locked again/,
		"BEGIN;\nUPDATE hot SET v = v + 1 WHERE id = 1;\n\\echo locked again\n");
	my $between = $node->background_psql('postgres');
	my $between_pid = $between->query_safe('SELECT pg_backend_pid()');
	$between->query_safe('SET numasched.cpu_priority = background');
	ok(wait_until(sub { in_background($mode, $between_pid) }, 2), 'a second background session runs at background priority');
	# the holder's raise of the first part has lapsed (5 s after it blocked anybody)
	wait_until(sub { in_background($mode, $holder_pid) }, 10);
	$between->query_until(qr/queued/, "\\echo queued\nUPDATE hot SET v = v + 1 WHERE id = 1;\n");
	# at background priority beside the busy sessions it may take a while to queue
	wait_until(sub { $node->safe_psql('postgres', "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $between_pid") eq 'Lock' }, 10);
	my $last = $node->background_psql('postgres');
	$last->query_until(qr/queued/, "\\echo queued\nUPDATE hot SET v = v + 1 WHERE id = 1;\n");
	ok(wait_until(sub { !in_background($mode, $holder_pid) && !in_background($mode, $between_pid) }, 3),
		'the normal session waits behind the second: both background sessions are raised')
	  or diag("holder background: " . in_background($mode, $holder_pid) . ", the second: " . in_background($mode, $between_pid) . "\n"
		  . $node->safe_psql('postgres', "SELECT pid, locktype, mode, granted FROM pg_locks WHERE locktype IN ('tuple', 'transactionid') ORDER BY pid"));
	$holder->query_safe('COMMIT');
	$between->quit;
	$last->quit;
}
$holder->quit;
$node->safe_psql('postgres', 'SELECT pg_cancel_backend(pid) FROM unnest(ARRAY[' . join(',', @busy_pids) . ']) pid');
$_->quit for @busy;
$node->stop('immediate');
done_testing();
