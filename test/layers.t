#!/usr/bin/perl
# The layers of DESIGN.md, from the built objects: the core uses no
# PostgreSQL symbol and nothing of the glue; no file of the glue uses one
# above it in doc/architecture.md's order; no two files of the glue or of
# numasched-plan use each other, directly or round a circle (a symbol one
# object needs and another defines is a use).
use strict;
use warnings;
use File::Basename qw(basename dirname);
use Test::More;

my $src = dirname(__FILE__) . '/../src';
my @core = map { "$src/$_.o" } qw(ns_cpuset ns_topology ns_plan ns_place ns_rebalance ns_numa_maps ns_lend);
# bottom to top: each may use those before it
my @glue = map { "$src/$_.o" } qw(ns_os ns_cgroup ns_priority ns_companion ns_cpustat settings state classes regroup memory priority companion parallel_cap placement statement_lending segment views
  schedstat lending inversion doorbell scheduler numasched);
my @cli = map { "$src/$_.o" } qw(plan_common numasched_plan plan_simulate sim_trace sim_replay plan_bench
  sim_burst plan_bursts);
-f $_ or plan skip_all => "$_ is not built (make first)" for @core, @glue, @cli;

sub symbols
{
	my ($object, $which) = @_;
	return map { (split)[-1] } grep { /\S/ } `nm $which $object`;
}

# object => { object it uses => first symbol seen }
sub uses
{
	my @objects = @_;
	my (%defined_by, %uses);
	for my $o (@objects)
	{
		$defined_by{$_} = $o for symbols($o, '--defined-only --extern-only');
	}
	for my $o (@objects)
	{
		for my $sym (symbols($o, '-u'))
		{
			my $d = $defined_by{$sym};
			$uses{$o}{$d} //= $sym if $d && $d ne $o;
		}
	}
	return \%uses;
}

# a circle of uses, as "a -> b -> a", or undef
sub circle
{
	my ($uses) = @_;
	my (%state, @path);
	my $visit;
	$visit = sub {
		my ($o) = @_;
		$state{$o} = 1;
		push @path, $o;
		for my $d (sort keys %{ $uses->{$o} // {} })
		{
			if (($state{$d} // 0) == 1)
			{
				my @from = @path[(grep { $path[$_] eq $d } 0 .. $#path)[0] .. $#path];
				return join(' -> ', map { basename($_, '.o') } @from, $d);
			}
			next if $state{$d};
			my $found = $visit->($d);
			return $found if $found;
		}
		pop @path;
		$state{$o} = 2;
		return undef;
	};
	for my $o (sort keys %$uses)
	{
		next if $state{$o};
		my $found = $visit->($o);
		return $found if $found;
	}
	return undef;
}

my $all = uses(@core, @glue);
for my $c (@core)
{
	my @up = grep { !/ns_/ } keys %{ $all->{$c} // {} };
	is("@up", '', basename($c) . ' uses nothing of the glue');
	my @pg = grep { /^(palloc|elog_|errstart|ereport|pg_)/ } symbols($c, '-u');
	is("@pg", '', basename($c) . ' calls no PostgreSQL function');
}
is(circle(uses(@glue)), undef, 'no circle of uses in the glue');
my $glue = uses(@glue);
for my $i (0 .. $#glue)
{
	my %above = map { $glue[$_] => 1 } $i + 1 .. $#glue;
	my @up = map { basename($_, '.o') . " ($glue->{$glue[$i]}{$_})" } grep { $above{$_} } sort keys %{ $glue->{ $glue[$i] } // {} };
	is("@up", '', basename($glue[$i]) . ' uses no file above it');
}
is(circle(uses(@cli)), undef, 'no circle of uses in numasched-plan');

# the check itself finds a circle where there is one
is(circle({ a => { b => 's' }, b => { c => 's' }, c => { a => 's' } }), 'a -> b -> c -> a',
	'a circle of three is found');
done_testing();
