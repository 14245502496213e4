# numasched beside pg_stat_statements and auto_explain (every hook chained),
# and without being preloaded (a clear error with a hint).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

my $node = PostgreSQL::Test::Cluster->new('coexist');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'pg_stat_statements, numasched, auto_explain'
auto_explain.log_min_duration = 0
numasched.groups_per_node = 1
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched; CREATE EXTENSION pg_stat_statements;
	CREATE TABLE numasched_coexistence_marker (x int)');

my $s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('SELECT count(*) FROM numasched_coexistence_marker');
is($node->safe_psql('postgres', "SELECT cpus FROM numasched_processes WHERE pid = $pid"),
	kernel_cpus($pid), 'numasched places backends beside the other two');
is($node->safe_psql('postgres',
	"SELECT calls FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM numasched_coexistence_marker'"),
	'1', 'pg_stat_statements still sees the statements')
  or diag($node->safe_psql('postgres', 'SELECT query FROM pg_stat_statements'));
ok($node->log_contains(qr/Query Text: SELECT count\(\*\) FROM numasched_coexistence_marker/),
	'auto_explain still logs plans');
$s->quit;
$node->stop;

# not preloaded: CREATE EXTENSION works, every function says what to do
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION numasched');
for my $query ('SELECT * FROM numasched_processes', 'SELECT * FROM numasched_topology',
	'SELECT * FROM numasched_groups', 'SELECT * FROM numasched_distances',
	'SELECT * FROM numasched_stats', 'SELECT numasched_reset_stats()',
	'SELECT numasched_move(pg_backend_pid(), 0)')
{
	my ($ret, $out, $err) = $plain->psql('postgres', $query);
	like($err, qr/ERROR:  numasched must be loaded via "shared_preload_libraries"\nHINT:  Add numasched to shared_preload_libraries in postgresql.conf and restart the server./,
		"not preloaded: $query fails with a hint");
}
$plain->stop;
done_testing();
