# What numasched keeps in a session does not grow with max_connections: at
# 100 and at 10,000, a session placed in a class has within 8 kB of the
# private memory of a session of the same server that numasched leaves alone
# (a role with numasched.enabled = off), after the same statements.  The
# same server, because where glibc's heap puts things depends on the
# environment the postmaster started with: two servers differ by up to 20 kB
# with or without numasched (the notes show a server without it).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(sum);
use lib 'test/t';
use NumaschedTest;

need_cpus(2);
my $sessions = 20;

# kB of memory the process alone has: the pages of its private mappings
# that it wrote and no other process shares (heap, stack, anonymous mmaps,
# its libraries' data).  Not smaps_rollup's Private_Dirty, which counts the
# pages of the shared memory segment only this backend touched, nor
# Private_Clean, which counts pages of the binary's text no other process
# happens to map.
sub private_kb
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/smaps") or return undef;
	my ($kb, $private) = (0, 0);
	while (my $line = <$fh>)
	{
		if ($line =~ /^[0-9a-f]+-[0-9a-f]+ \S{3}(\S)/)
		{
			$private = $1 eq 'p';
		}
		elsif ($private && $line =~ /^Private_Dirty:\s+(\d+) kB/)
		{
			$kb += $1;
		}
	}
	return $kb;
}

# The median private memory of sessions of "role" that each joined a class
# (the two groups in turn), after the same statements; and whether they were
# placed (the kernel holds each to its group's CPU).
sub session_kb
{
	my ($node, $role) = @_;
	my @psql = map { $node->background_psql('postgres', extra_params => [ '-U', $role ]) }
	  1 .. $sessions;
	my (@kb, %cpus);
	for my $i (0 .. $#psql)
	{
		my $pid = $psql[$i]->query_safe(
			"SET numasched.cpu_groups = '" . ($i % 2) . "'; SELECT count(*) FROM pg_class; SELECT pg_backend_pid()");
		$pid =~ s/.*\n//s;
		push @kb, private_kb($pid);
		$cpus{ kernel_cpus($pid) } = 1;
	}
	$_->quit for @psql;
	@kb = sort { $a <=> $b } @kb;
	note("$role: private kB of each session: @kb; CPUs: " . join(" ", sort keys %cpus));
	return ($kb[ $#kb / 2 ], scalar keys %cpus);
}

for my $max_connections (100, 10_000)
{
	my $node = PostgreSQL::Test::Cluster->new("sessions_$max_connections");
	$node->init;
	$node->append_conf('postgresql.conf', qq{
max_connections = $max_connections
numasched.groups_per_node = 2
numasched.group_binding = strict
# the masks read are the classes': no group lent the other's CPU meanwhile
numasched.lend_idle_cpus = off
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE ROLE placed SUPERUSER LOGIN; CREATE ROLE unplaced SUPERUSER LOGIN');
	my ($without) = session_kb($node, 'placed');
	$node->stop;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'numasched'\n");
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION numasched; ALTER ROLE unplaced SET numasched.enabled = off');
	my ($placed, $bound_to) = session_kb($node, 'placed');
	my ($unplaced, $unbound_to) = session_kb($node, 'unplaced');
	$node->stop;
	is("$bound_to $unbound_to", '2 1', "max_connections $max_connections: one role's sessions are bound to their groups, the other's not");
	cmp_ok($placed - $unplaced, '<=', 8,
		"max_connections $max_connections: a placed session has within 8 kB of the private memory of one numasched leaves alone "
		  . "($placed kB against $unplaced kB; $without kB on the server without numasched)");
}
done_testing();
