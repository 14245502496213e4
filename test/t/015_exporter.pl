# numasched's figures through Debian's prometheus-postgres-exporter with the
# query file numasched ships (doc/monitoring/postgres_exporter.yaml): the
# exporter, started against a cluster with numasched, serves them over
# loopback with values that agree with the machine and the views; against a
# cluster without numasched it serves none of them and keeps serving.
use strict;
use warnings;
use File::Copy ();
use HTTP::Tiny;
use IO::Socket::INET;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use lib 'test/t';
use NumaschedTest;

my $exporter = '/usr/bin/prometheus-postgres-exporter';
plan skip_all => "Debian's prometheus-postgres-exporter is not installed (bash test/deps.sh test)"
  unless -x $exporter;
my $queries = PostgreSQL::Test::Utils::tempdir() . '/queries.yaml';
File::Copy::copy('doc/monitoring/postgres_exporter.yaml', $queries) or die "copy: $!";

# The exporter against $node on a free loopback port; returns (its handle, its URL).
sub start_exporter
{
	my ($node) = @_;
	my $probe = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1) or die "no port: $!";
	my $port = $probe->sockport;
	close $probe;
	local $ENV{DATA_SOURCE_NAME} = sprintf('host=%s port=%d user=%s dbname=postgres sslmode=disable',
		$node->host, $node->port, scalar getpwuid($<));
	my $log = PostgreSQL::Test::Utils::tempdir() . '/exporter.log';
	my $h = IPC::Run::start([ $exporter, "--web.listen-address=127.0.0.1:$port", "--extend.query-path=$queries",
		'--disable-default-metrics', '--disable-settings-metrics' ], '>', $log, '2>&1');
	return ($h, "http://127.0.0.1:$port/metrics", $log);
}

# /metrics as { name{labels} => value }, or undef if it did not answer
sub scrape
{
	my ($url) = @_;
	for (1 .. 50)
	{
		my $r = HTTP::Tiny->new(timeout => 10)->get($url);
		return { map { /^(\S+) (\S+)$/ ? ($1 => $2) : () } grep { !/^#/ } split /\n/, $r->{content} }
		  if $r->{success};
		select(undef, undef, undef, 0.2);
	}
	return undef;
}

sub sum_of
{
	my ($metrics, $name) = @_;
	my $sum = 0;
	$sum += $metrics->{$_} for grep { /^\Q$name\E(\{|$)/ } keys %$metrics;
	return $sum;
}

my $node = numasched_cluster('exporter', "numasched.rebalance_interval = 1000\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION numasched');
my $session = $node->background_psql('postgres');
$session->query_safe('SELECT 1');

my ($h, $url, $log) = start_exporter($node);
my $m = scrape($url);
ok($m, 'the exporter serves /metrics over loopback') or diag(slurp_file($log));
my $cpus = cpu_count(slurp_file('/sys/devices/system/cpu/online') =~ s/\s+//gr);
is(sum_of($m, 'numasched_node_cpus'), $node->safe_psql('postgres', 'SELECT sum(ncpus) FROM numasched_groups'),
	'numasched_node_cpus: the CPUs of every node\'s groups, as numasched_groups has them');
cmp_ok(sum_of($m, 'numasched_node_cpus'), '<=', $cpus, "no more than the machine's $cpus CPUs");
is(sum_of($m, 'numasched_group_ncpus'), sum_of($m, 'numasched_node_cpus'), 'per group, the same CPUs');
cmp_ok(sum_of($m, 'numasched_placements'), '>=', 2, 'numasched_placements counts the placed sessions');
cmp_ok(sum_of($m, 'numasched_placed_processes'), '>=', 2, 'numasched_placed_processes: the session and the exporter\'s');
ok((grep { /^numasched_placed_processes\{cpu_priority="normal",executor="masks"/ } keys %$m),
	'labelled with the kernel\'s priority and the executor');
cmp_ok(sum_of($m, 'numasched_locality_private_pages_local'), '>', 0,
	'numasched_locality_private_pages_local: pages read from numa_maps');
is(sum_of($m, 'numasched_bind_failures'), 0, 'no bind failures');
is($m->{pg_exporter_last_scrape_error}, 0, 'and no error in the scrape');
$h->kill_kill;
$session->quit;
$node->stop;

# without numasched: the exporter keeps serving, none of numasched's metrics
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
($h, $url, $log) = start_exporter($plain);
$m = scrape($url);
ok($m, 'against a cluster without numasched the exporter still serves /metrics') or diag(slurp_file($log));
is(scalar(grep { /^numasched/ } keys %{ $m // {} }), 0, 'with none of numasched\'s metrics');
ok(defined $m->{pg_up} || defined $m->{pg_exporter_last_scrape_error}, 'and its own');
$h->kill_kill;
$plain->stop;
done_testing();
