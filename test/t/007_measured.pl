# Every placed process is measured, also past the scheduler's budget of files
# it may keep open (AcquireExternalFD, a third of what max_files_per_process
# leaves): an idle session's load falls to about 0 instead of staying at the
# one CPU a new process counts until measured.  Read back from the view the
# rebalancer's loads come from.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

# max_files_per_process = 80 leaves the scheduler about 20 files to keep open
my $sessions = 40;
my $node = numasched_cluster('measured', qq{
numasched.rebalance_interval = 100ms
max_files_per_process = 80
max_connections = 60
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');

my @idle = map { $node->background_psql('postgres') } 1 .. $sessions;
my $passes = $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats');
ok(wait_until(sub { $node->safe_psql('postgres', 'SELECT passes FROM numasched_stats') >= $passes + 5 }, 60),
	'the scheduler made 5 passes');
my $placed = $node->safe_psql('postgres',
	q{SELECT count(*) FROM numasched_processes WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()});
is($placed, $sessions, "$sessions idle sessions are placed");
# the querying backend is new, and counts one CPU until its first pass
my $unmeasured = $node->safe_psql('postgres',
	q{SELECT count(*) FROM numasched_processes
	  WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND load > 0.5});
is($unmeasured, 0, "all $sessions measured, more than the scheduler keeps files open for (load below half a CPU)");

$_->quit for @idle;
$node->stop;
done_testing();
