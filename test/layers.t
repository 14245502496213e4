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
# the folders of src/, bottom to top, as doc/architecture.md lists them
my @core = sort glob("$src/core/*.o");
my @os = sort glob("$src/os/*.o");
# the glue, the scheduler worker, the views and the hooks, bottom to top: each may use those before it
my @glue = map { "$src/$_.o" } qw(backend/settings backend/state backend/report backend/books backend/classes
  backend/memory backend/priority backend/binding backend/regroup backend/companion backend/parallel_cap
  backend/placement backend/statement_lending backend/segment worker/schedstat worker/lending worker/homing worker/lock_waits
  worker/inversion worker/doorbell worker/scheduler views/views);
# the entry (_PG_init, the hooks, the worker's registration) stands above the layers it wires
my $entry = "$src/numasched.o";
my @cli = sort glob("$src/tool/*.o");
-f $_ or plan skip_all => "$_ is not built (make first)" for @core, @os, @glue, @cli, $entry;
is(scalar(@core) . ' ' . scalar(@os) . ' ' . scalar(@cli), '8 6 8', 'every layer is built');
my %listed = map { $_ => 1 } @glue;
is(join(' ', grep { !$listed{$_} } sort glob("$src/{backend,worker,views}/*.o")), '', 'every object of the glue is in its order here');

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

# "backend/state" for src/backend/state.o or .c or .h
sub name
{
	my ($file) = @_;
	return basename(dirname($file)) . '/' . basename($file) =~ s/\.[och]$//r;
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
				return join(' -> ', map { m{/} ? name($_) : $_ } @from, $d);
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

my $all = uses(@core, @os, @glue);
for my $c (@core, @os)
{
	my $layer = basename(dirname($c));
	my @up = grep { !m{/core/} && !($layer eq 'os' && m{/os/}) } keys %{ $all->{$c} // {} };
	is("@up", '', "$layer/" . basename($c) . ' uses nothing above its layer');
	my @pg = grep { /^(palloc|elog_|errstart|ereport|pg_)/ } symbols($c, '-u');
	is("@pg", '', "$layer/" . basename($c) . ' calls no PostgreSQL function');
}
is(circle(uses(@glue)), undef, 'no circle of uses in the glue');
my $with_entry = uses(@core, @os, @glue, $entry);
my @use_entry = map { name($_) } grep { $with_entry->{$_}{$entry} } @core, @os, @glue;
is("@use_entry", '', 'no layer uses the entry, which stands above them');
is(join(' ', sort map { name($_) } glob("$src/*.c")), 'src/numasched', 'the entry is the one file above the layers');
my $glue = uses(@glue);
for my $i (0 .. $#glue)
{
	my %above = map { $glue[$_] => 1 } $i + 1 .. $#glue;
	my @up = map { name($_) . " ($glue->{$glue[$i]}{$_})" } grep { $above{$_} } sort keys %{ $glue->{ $glue[$i] } // {} };
	is("@up", '', name($glue[$i]) . ' uses no file above it');
}
is(circle(uses(@cli)), undef, 'no circle of uses in numasched-plan');

# The same read from the sources: an idea (a .c and its .h) uses each idea
# whose header it includes; among the glue's ideas there is no circle, and
# the hooks file has no header for anyone to include
my %includes;
for my $file (glob("$src/{backend,worker,views}/*.[ch]"))
{
	my $idea = name($file);
	open(my $fh, '<', $file) or die "$file: $!";
	while (<$fh>)
	{
		next unless m{^#include "((?:backend|worker|views)/\w+)\.h"};
		$includes{$idea}{$1} //= 'include' if $1 ne $idea && $1 !~ m{/(settings|pg_compat)$};
	}
}
is(circle(\%includes), undef, 'no circle of includes among the glue\'s headers');
ok(!glob("$src/*.h"), 'the entry has no header');
my @include_entry = grep { `grep -l '#include "numasched.h"' $_` } glob("$src/*/*.[ch]");
is("@include_entry", '', 'no layer includes the entry');
my @big = grep { !/\.skel\.h$/ && (() = `cat $_` =~ /\n/g) > 250 } glob("$src/*/*.h");
is("@big", '', 'no header over 250 lines');

# Sizes a reader takes in at once: no C file over 700 lines, no function
# over 120 (from its name at the start of a line to its closing brace)
my (@long_files, @long_functions);
for my $file (grep { !/\.skel\.h$/ } glob("$src/*/*.c"), glob("$src/*.c"))
{
	open(my $fh, '<', $file) or die "$file: $!";
	my @lines = <$fh>;
	push @long_files, name($file) . ' (' . scalar(@lines) . ')' if @lines > 700;
	my ($function, $start);
	for my $n (0 .. $#lines)
	{
		($function, $start) = ($1, $n) if $lines[$n] =~ /^([a-z_]\w*)\(/;
		if ($lines[$n] =~ /^\}/ && defined $function)
		{
			push @long_functions, name($file) . ":$function (" . ($n - $start) . ')' if $n - $start > 120;
			undef $function;
		}
	}
}
is("@long_files", '', 'no C file over 700 lines');
is("@long_functions", '', 'no function over 120 lines');

# the check itself finds a circle where there is one
is(circle({ a => { b => 's' }, b => { c => 's' }, c => { a => 's' } }), 'a -> b -> c -> a',
	'a circle of three is found');
done_testing();
