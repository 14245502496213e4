# What a new connection costs with numasched against the kernel alone, on a
# machine with several nodes, for connections placed off the node the
# postmaster's memory is on (numasched.nodes names another node): pgbench -C
# -S, one select per connection, in interleaved pairs (A B, B A, ...) on
# freshly started servers.  Per run: connections per second, and the minor
# page faults per connection (the postmaster's cminflt, the faults of the
# children it reaped, over the run's connections).
#
# The faults are asserted (numasched must not copy what a short connection
# never uses); the connection rate is reported as the paired ratio with its
# 95% confidence interval, never asserted: wall-clock in an emulated VM is
# a measurement, not a test.  CONNECTION_PAIRS and CONNECTION_SECONDS set
# the size (default 6 pairs of 10 s); CONNECTION_NODES=any leaves
# numasched.nodes alone (numasched places each connection on the least-loaded
# node), CONNECTION_NODES=unplaced loads numasched with numasched.enabled = off
# (what loading it costs, without binding).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use List::Util qw(sum);
use lib 'test/t';
use NumaschedTest;

my @nodes = map { /node(\d+)$/ ? $1 : () } glob('/sys/devices/system/node/node[0-9]*');
plan skip_all => 'needs a machine with several NUMA nodes (run test/vm/run.sh)' if @nodes < 2;
my $pairs = $ENV{CONNECTION_PAIRS} || 6;
my $seconds = $ENV{CONNECTION_SECONDS} || 10;

my $node = PostgreSQL::Test::Cluster->new('connections');
$node->init;
$node->append_conf('postgresql.conf', qq{
include_if_exists = 'connections.conf'
autovacuum = off
numasched.rebalance_interval = 0
});
$node->start;
$node->command_ok([ 'pgbench', '-i', '-q', '-s', '1', '-h', $node->host, '-p', $node->port, 'postgres' ],
	'pgbench tables');
$node->stop;

# the node most of a process's private pages are on
sub memory_node
{
	my %pages = private_pages($_[0]);
	my ($most) = sort { $pages{$b} <=> $pages{$a} } keys %pages;
	return $most;
}

# field 11 of /proc/PID/stat, cminflt: the minor faults of the children the
# process waited for (the fields after the command name start at field 3)
sub children_minor_faults
{
	my $stat = slurp_file("/proc/$_[0]/stat");
	my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
	return $f[11 - 3];
}

sub write_conf
{
	open(my $fh, '>', $node->data_dir . '/connections.conf') or die "connections.conf: $!";
	print $fh "$_[0]\n";
	close $fh;
}

my %runs;
my @configs = ('kernel alone', 'numasched');
for my $pair (1 .. $pairs)
{
	for my $config ($pair % 2 ? @configs : reverse @configs)
	{
		my $mode = $ENV{CONNECTION_NODES} // '';
		write_conf($config ne 'numasched' ? ''
			: "shared_preload_libraries = 'numasched'" . ($mode eq 'unplaced' ? "\nnumasched.enabled = off" : ''));
		$node->start;
		my $postmaster = $node->{_pid};
		my $elsewhere = '';
		if ($config eq 'numasched' && $mode ne 'any' && $mode ne 'unplaced')
		{
			my $home = memory_node($postmaster);
			my ($other) = grep { $_ != $home } @nodes;
			write_conf("shared_preload_libraries = 'numasched'\nnumasched.nodes = '$other'");
			$node->reload;
			wait_until(sub { $node->safe_psql('postgres', 'SHOW numasched.nodes') eq $other }, 60)
			  or die 'the reload did not take numasched.nodes';
			$elsewhere = " on node $other (the postmaster's memory: node $home)";
		}
		my $faults = children_minor_faults($postmaster);
		my ($out, $err) = ('', '');
		IPC::Run::run([ 'pgbench', '-n', '-C', '-S', '-c', '1', '-T', $seconds,
			'-h', $node->host, '-p', $node->port, 'postgres' ], '>', \$out, '2>', \$err);
		my ($done) = $out =~ /number of transactions actually processed: (\d+)/;
		my ($tps) = $out =~ /tps = ([\d.]+)/;
		$faults = children_minor_faults($postmaster) - $faults;
		$node->stop;
		die "pgbench: $err$out" unless $done;
		push @{ $runs{$config} }, { tps => $tps, faults => $faults / $done };
		note(sprintf('pair %d, %s%s: %.2f connections/s, %.0f minor faults per connection',
			$pair, $config, $elsewhere, $tps, $faults / $done));
	}
}

# t quantiles (two-sided 95%) for 1 to 10 degrees of freedom
my @t = (0, 12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23);
my @log_ratio = map { log($runs{numasched}[$_]{tps} / $runs{'kernel alone'}[$_]{tps}) } 0 .. $pairs - 1;
my $mean = sum(@log_ratio) / $pairs;
my $sd = $pairs > 1 ? sqrt(sum(map { ($_ - $mean)**2 } @log_ratio) / ($pairs - 1)) : 0;
my $half = ($t[ $pairs - 1 ] // 2.0) * $sd / sqrt($pairs);
my %faults = map { $_ => median(map { $_->{faults} } @{ $runs{$_} }) } @configs;
diag(sprintf('connections/s, numasched against the kernel alone: paired ratio %.3f (median of pairs %.3f), '
	  . '95%% CI [%.3f, %.3f], %d pairs of %d s', exp($mean),
	median(map { exp($_) } @log_ratio), exp($mean - $half), exp($mean + $half), $pairs, $seconds));
diag(sprintf('minor page faults per connection (median of runs): %.0f with numasched, %.0f for the kernel alone',
	$faults{numasched}, $faults{'kernel alone'}));
cmp_ok($faults{numasched}, '<=', $faults{'kernel alone'} * 1.02 + 2,
	'a connection placed off the postmaster\'s node faults no more than 2% above the kernel alone: '
	  . 'nothing is copied for it');
done_testing();
