# Helpers shared by numasched's TAP tests.
package NumaschedTest;

use strict;
use warnings;
use Exporter 'import';
use Time::HiRes qw(usleep);

our @EXPORT = qw(kernel_cpus wait_until cpu_count);

# The CPU list the kernel holds for a process, from /proc/PID/status.
sub kernel_cpus
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return undef;
	# a lexical line: callers may loop over pids with $_
	while (my $line = <$fh>)
	{
		return $1 if $line =~ /^Cpus_allowed_list:\s*(\S+)/;
	}
	return undef;
}

# Number of CPUs in a kernel CPU list such as "0-3,8".
sub cpu_count
{
	my ($list) = @_;
	my $n = 0;
	for my $part (split /,/, $list)
	{
		my ($a, $b) = split /-/, $part;
		$n += defined $b ? $b - $a + 1 : 1;
	}
	return $n;
}

# Calls $check until it returns true or $seconds pass; returns its last value.
sub wait_until
{
	my ($check, $seconds) = @_;
	$seconds //= 20;
	my $deadline = time() + $seconds;
	while (1)
	{
		my $value = $check->();
		return $value if $value || time() > $deadline;
		usleep(50_000);
	}
}

1;
