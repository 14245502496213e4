#!/usr/bin/perl
# numasched-scx, the sched_ext companion's loader, where no sched_ext is
# needed: the topology it gives the scheduler (--topology, on fixture sysfs
# trees: each node's CPUs, the nodes it takes work from in SLIT order within
# --max-steal-distance, the CPUs that share a last-level cache) and its
# answers to bad input.  Loading it needs a kernel with sched_ext: the VM
# booting sid's kernel (test/vm/t/080_companion.pl).
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);
use IPC::Run qw(run);
use Test::More;

my $here = dirname(__FILE__);
chomp(my $bindir = `pg_config --bindir`);
my $scx = $ENV{NUMASCHED_SCX} // "$bindir/numasched-scx";
plan skip_all => "numasched-scx is not built here (it needs clang, bpftool and libbpf's headers: test/deps.sh)"
  unless -x $scx;

my $fx = tempdir('numasched-scx-XXXX', TMPDIR => 1, CLEANUP => 1);
system('python3', "$here/fixtures/make_fixtures.py", $fx) == 0 or die "fixtures failed\n";

# run(args) -> (exit status, stdout, stderr)
sub scx_run
{
	my ($out, $err) = ('', '');
	run([ $scx, @_ ], '<', \undef, '>', \$out, '2>', \$err);
	return ($? >> 8, $out, $err);
}

# node id -> its line's fields, from --topology
sub topology
{
	my ($rc, $out, $err) = scx_run('--topology', @_);
	is($rc, 0, "--topology @_: exit 0") or diag($err);
	my %nodes;
	for (split /\n/, $out)
	{
		/^node (\d+): CPUs (\S+); then nodes (\S+); caches (.+)$/ or do { fail("a node's line: $_"); next };
		$nodes{$1} = { cpus => $2, then => $3, caches => [ split / /, $4 ] };
	}
	return \%nodes;
}

# EPYC in NPS4: 8 nodes of two CCXs (8 cores and their SMT siblings each); SLIT
# 11 to the node beside, 12 within the socket, 32 to the other socket
my $epyc = topology('--sysfs', "$fx/epyc-nps4");
is(scalar keys %$epyc, 8, 'epyc-nps4: 8 nodes');
is($epyc->{0}{cpus}, '0-15,128-143', 'node 0: its CPUs');
is(join(' ', @{ $epyc->{0}{caches} }), '0-7,128-135 8-15,136-143',
	"node 0: two last-level caches, each CCX's cores with their siblings");
is(join(' ', @{ $epyc->{2}{caches} }), '32-39,160-167 40-47,168-175', 'node 2: its two');
is($epyc->{0}{then}, '1,2,3,4,5,6,7', 'node 0 takes work from the nearest nodes first (SLIT 11, then 12, then 32)');
is($epyc->{2}{then}, '3,0,1,4,5,6,7', 'node 2: node 3 (11) before 0 and 1 (12), the other socket last');
my $near = topology('--sysfs', "$fx/epyc-nps4", '--max-steal-distance', '12');
is($near->{2}{then}, '3,0,1', '--max-steal-distance 12: not from the other socket');
is(join(' ', @{ $near->{2}{caches} }), join(' ', @{ $epyc->{2}{caches} }), 'and the same caches');

# a cache never spans two nodes in the scheduler's rounds; a CPU whose cache
# sysfs does not name shares with nobody
my $snc = topology('--sysfs', "$fx/xeon-snc2");
is(join(' ', map { scalar @{ $snc->{$_}{caches} } } sort keys %$snc), '1 1 1 1', 'xeon-snc2: one cache per node');
my $sparse = topology('--sysfs', "$fx/sparse");
is(join(' | ', map { "$_: @{ $sparse->{$_}{caches} }" } sort keys %$sparse), '0: 0 1 2 3 | 2: 4 5 7',
	'sparse (no cache in sysfs): each CPU alone, on nodes 0 and 2 (ids kept)');
is($sparse->{0}{then}, '2', 'and node 0 takes work from node 2');
is(topology('--sysfs', "$fx/tiny")->{0}{then}, 'none', 'one node: from no other');

# bad input: exit 2 (usage), 1 (the machine) or 3 (this kernel cannot load it), one line that says what
sub refused
{
	my ($args, $status, $pattern, $name) = @_;
	my ($rc, $out, $err) = scx_run(@$args);
	is($rc, $status, "$name: exit status $status");
	like($err, qr/\Anumasched-scx: [^\n]*$pattern[^\n]*\n\z/, "$name: one line that says what");
	is($out, '', "$name: nothing on stdout");
}
refused([ '--slice-ms', '0' ], 2, qr/--slice-ms must be an integer from 1 to 1000, not "0"/, 'a slice of 0 ms');
refused([ '--max-steal-distance', 'far' ], 2, qr/--max-steal-distance must be an integer/, 'a distance that is no number');
refused([ '--sysfs', $fx ], 2, qr/--sysfs goes with --topology/, '--sysfs without --topology');
refused([ '--topology', '--sysfs', "$fx/none" ], 1, qr/could not read .*none/, 'a tree that is not there');
refused([ '--max-steal-distance', '5' ], 2, qr/--max-steal-distance is 0 \(any\) or a SLIT distance above 10, not 5/,
	'a steal distance no node is at');
refused([ '--topology', '--background-wait-ms', '50' ], 2, qr/--background-wait-ms applies to loading the scheduler, not to --topology/,
	'an option that does not apply with --topology');
refused([ '--monitor', '--slice-ms', '3' ], 2, qr/--monitor takes no other option/, 'an option beside --monitor');
refused([ '--uid', 'no-such-user-here' ], 2, qr/no user "no-such-user-here": --uid names the user/,
	'a server user who is not there');
refused([ '--uid', 'root' ], 2, qr/--uid root is root/, 'root as the server user');
my ($rc, $out, $err) = scx_run('--no-such-option');
is($rc, 2, 'an unknown option: exit status 2');
like($err, qr/^usage: numasched-scx /m, 'and the usage');
($rc, $out, $err) = scx_run('--help');
is($rc, 0, '--help: exit 0');
like($out, qr/--topology \[--sysfs DIR\]/, 'and the usage names --topology');
SKIP:
{
	skip 'this kernel has sched_ext', 3 if -e '/sys/kernel/sched_ext/state';
	refused([], 3, qr/this kernel has no sched_ext/, 'loading on a kernel without sched_ext');
}

done_testing();
