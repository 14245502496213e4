#!/usr/bin/perl
# Runs the core's C unit tests (test/build/test_core, TAP) on freshly
# generated fixture trees.
use strict;
use warnings;
use File::Basename qw(dirname);
use File::Temp qw(tempdir);

my $here = dirname(__FILE__);
my $dir = tempdir('numasched-fixtures-XXXX', TMPDIR => 1, CLEANUP => 1);
system('python3', "$here/fixtures/make_fixtures.py", $dir) == 0
  or die "make_fixtures.py failed\n";
my $rc = system("$here/build/test_core", $dir);
exit($rc == 0 ? 0 : 1);
