#!/usr/bin/perl
# What a release is made of agrees with itself: the version in META.json, the
# control file, CHANGELOG.md and debian/changelog; the oldest PostgreSQL in
# META.json, src/backend/pg_compat.h, debian/pgversions and the README; the maintainer
# in META.json and debian/control; the majors tested in META.json, the README,
# test/run.sh and test/pg_major.sh; the licence; and `make dist` packs the
# tracked files, nothing built.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use File::Temp qw(tempdir);

sub slurp { open(my $fh, '<', $_[0]) or die "$_[0]: $!"; local $/; <$fh> }

my $meta = decode_json(slurp('META.json'));
my $version = $meta->{version};
like($version, qr/^\d+\.\d+\.\d+$/, "META.json: a semantic version ($version)");
is($meta->{provides}{numasched}{version}, $version, '...and numasched provides the same');
my ($default) = slurp('numasched.control') =~ /^default_version = '([^']+)'/m;
is("$default.0", $version, "numasched.control's default_version $default is that version's SQL");
ok(-f "sql/numasched--$default.sql", "...and sql/numasched--$default.sql exists");
my ($changelog) = slurp('CHANGELOG.md') =~ /^## (\S+)/m;
is($changelog, $version, 'CHANGELOG.md: its newest entry is that version');
my ($debian) = slurp('debian/changelog') =~ /^numasched \(([^)-]+)-\d+\)/;
is($debian, $version, 'debian/changelog: its newest entry packages that version');

my $oldest = $meta->{prereqs}{runtime}{requires}{PostgreSQL};
is($oldest, '15.1.0', 'META.json requires PostgreSQL 15.1');
like(slurp('src/backend/pg_compat.h'), qr/PG_VERSION_NUM < 150001\b/, '...src/backend/pg_compat.h refuses anything older');
is(slurp('debian/pgversions'), "15+\n", '...debian/pgversions builds for 15 and later');
like(slurp('README.md'), qr/15 \(15\.1 or later\)/, '...and the README says so');

# The majors the test command runs on: META.json names them, the README's
# table says "tested" for each and for no other, test/run.sh runs each
# besides the suite's (17 on Debian 12 in a trixie root), and
# test/pg_major.sh can prepare those
my @tested = @{ $meta->{x_tested_with}{PostgreSQL} // [] };
ok(@tested && $tested[0] eq '15', 'META.json: x_tested_with names the majors tested, 15 first (' . join(', ', @tested) . ')');
my %readme_tested = map { $_ => 1 } slurp('README.md') =~ /^\| (\d+)(?: \([^)]*\))? \| tested:/mg;
is(join(' ', sort { $a <=> $b } keys %readme_tested), join(' ', @tested), "...the README's table says tested for the same");
my ($run_majors) = slurp('test/run.sh') =~ /^for other in ([\d ]+); do/m;
is($run_majors // '', join(' ', @tested[ 1 .. $#tested ]), '...test/run.sh runs the others on their servers');
my ($cases) = slurp('test/pg_major.sh') =~ /^case "\$major" in\n(.*?)\n\t\*\)/ms;
is(join(' ', ($cases // '') =~ /^\t(\d+)\)/mg), join(' ', @tested[ 1 .. $#tested ]), '...and test/pg_major.sh prepares them');
like(slurp('debian/pgversions'), qr/^15\+$/m, '...and the Debian package builds for each whose headers are installed');

my ($maintainer) = slurp('debian/control') =~ /^Maintainer: (.+)$/m;
is($meta->{maintainer}[0], $maintainer, "one maintainer in META.json and debian/control ($maintainer)");
is(slurp('debian/control.in') =~ s/PGVERSION/15/gr, slurp('debian/control'),
	'debian/control is debian/control.in for 15 (pg_buildext updatecontrol)');

is($meta->{license}, 'postgresql', 'META.json: the PostgreSQL licence');
like(slurp('LICENSE'), qr/Permission to use, copy, modify, and distribute this software/,
	'...and LICENSE has its text');

SKIP:
{
	skip 'make dist packs what git tracks: not a git checkout', 4
	  unless system('git rev-parse --is-inside-work-tree >/dev/null 2>&1') == 0;
	my $zip = "numasched-$version.zip";
	unlink $zip;
	is(system("make -s dist >/dev/null"), 0, 'make dist');
	my $listing = `unzip -l $zip`;
	unlink $zip;
	like($listing, qr{ numasched-\Q$version\E/META\.json\n}, "$zip holds numasched-$version/META.json");
	ok(!grep({ $listing !~ m{ numasched-\Q$version\E/\Q$_\E\n} }
			qw(Makefile numasched.control LICENSE sql/numasched--1.0.sql debian/control src/backend/state.c)),
		'...and the sources, the SQL script, the licence and debian/');
	unlike($listing, qr/\.(o|so|bc)\n|numasched-plan\n/, '...and nothing built');
}
done_testing();
