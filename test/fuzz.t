#!/usr/bin/perl
# Runs each fuzzer for a bounded time (FUZZ_SECONDS, default 20).
use strict;
use warnings;
use File::Basename qw(dirname);
use Test::More;

my $here = dirname(__FILE__);
my $seconds = $ENV{FUZZ_SECONDS} // 20;
for my $target (qw(cpulist sysfs)) {
	my $log = "$here/build/fuzz_$target.log";
	# new inputs go to the first corpus directory: keep them out of the tree
	mkdir "$here/build/corpus_$target";
	my $rc = system("$here/build/fuzz_$target -max_total_time=$seconds -timeout=10 "
		  . "-rss_limit_mb=1024 -artifact_prefix=$here/build/crash_$target- "
		  . "$here/build/corpus_$target $here/fuzz/corpus_$target > $log 2>&1");
	my $text = do { local (@ARGV, $/) = ($log); <> };
	my ($runs) = $text =~ /Done (\d+) runs/;
	ok($rc == 0, "fuzz_$target: no crash in $seconds s" . ($runs ? " ($runs runs)" : ''))
	  or diag(substr($text, -3000));
}
done_testing();
