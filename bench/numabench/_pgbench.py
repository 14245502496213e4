"""pgbench's output: the summary and the per-transaction log."""

import re


SUMMARY_PATTERNS = {
    "transaction_type": (r"^transaction type: (.+)$", str),
    "scale": (r"^scaling factor: (\d+)$", int),
    "clients": (r"^number of clients: (\d+)$", int),
    "threads": (r"^number of threads: (\d+)$", int),
    "transactions": (r"^number of transactions actually processed: (\d+)", int),
    "failed": (r"^number of failed transactions: (\d+)", int),
    "latency_avg_ms": (r"^latency average = ([\d.]+) ms", float),
    "latency_stddev_ms": (r"^latency stddev = ([\d.]+) ms", float),
    "tps": (r"^tps = ([\d.]+) \(without initial connection time\)", float),
}


def parse_summary(text):
    """The summary pgbench 15 prints at the end of a run."""
    out = {}
    for key, (pattern, kind) in SUMMARY_PATTERNS.items():
        m = re.search(pattern, text, re.M)
        if m:
            out[key] = kind(m.group(1))
    if "tps" not in out:
        raise ValueError("no tps line in pgbench's output")
    out.setdefault("failed", 0)
    return out


def parse_log(lines, until=None):
    """pgbench 15's per-transaction log: "client tx time script epoch us
    [lag] [retries]"; time is the latency in microseconds, or "failed",
    "serialization" or "deadlock" for a failed transaction.
    Returns (latencies in ms, failures): with "until" (seconds since the
    epoch), of the transactions scheduled to start before it (a failed one:
    that ended before it)."""
    latencies, failures = [], 0
    for line in lines:
        fields = line.split()
        if len(fields) < 6:
            continue
        end = int(fields[4]) + int(fields[5]) / 1e6
        if fields[2].isdigit():
            if until is None or end - int(fields[2]) / 1e6 < until:
                latencies.append(int(fields[2]) / 1000.0)
        elif until is None or end < until:
            failures += 1
    return latencies, failures


def measured_window(lines, duration, not_after=None):
    """The part of a run that is measured: its first "duration" seconds from
    the first transaction's scheduled start, ending at "not_after" if that
    comes first, as (start, until) in seconds since the epoch, with how many
    transactions succeeded within it; None for a log with no succeeded
    transaction."""
    rows = parse_log_times(lines)
    if not rows:
        return None
    start = min(s for s, _ in rows)
    until = start + duration if not_after is None else min(start + duration, not_after)
    return start, until, sum(1 for s, latency in rows if s + latency / 1000.0 < until)


def parse_log_times(lines):
    """The succeeded transactions of a per-transaction log as (when it was
    scheduled to start, in seconds since the epoch; latency in ms): it
    ended at "epoch us", and at a fixed rate its latency counts from its
    scheduled start."""
    rows = []
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[2].isdigit():
            latency_us = int(fields[2])
            rows.append((int(fields[4]) + int(fields[5]) / 1e6 - latency_us / 1e6, latency_us / 1000.0))
    return rows
