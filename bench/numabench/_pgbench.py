"""pgbench's output: the summary and the per-transaction log."""

import collections
import math
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


# a line of the per-transaction log; a failed transaction has no latency,
# and so no known start
Transaction = collections.namedtuple("Transaction", "start end latency_ms")


def parse_log(lines):
    """pgbench 15's per-transaction log: "client tx time script epoch us
    [lag] [retries]"; time is the latency in microseconds, or "failed",
    "serialization" or "deadlock" for a failed transaction.  It ended at
    "epoch us", and at a fixed rate its latency counts from its scheduled
    start.  Times in seconds since the epoch."""
    rows = []
    for line in lines:
        fields = line.split()
        if len(fields) < 6:
            continue
        end = int(fields[4]) + int(fields[5]) / 1e6
        if fields[2].isdigit():
            latency_us = int(fields[2])
            rows.append(Transaction(end - latency_us / 1e6, end, latency_us / 1000.0))
        else:
            rows.append(Transaction(None, end, None))
    return rows


def succeeded(rows):
    return [t for t in rows if t.latency_ms is not None]


def measured_window(rows, duration, not_after=None):
    """The part of a run that is measured: its first "duration" seconds from
    the first transaction's scheduled start, ending at "not_after" if that
    comes first, as (start, until), with how many transactions succeeded
    within it; None for a log with no succeeded transaction."""
    done = succeeded(rows)
    if not done:
        return None
    start = min(t.start for t in done)
    until = start + duration if not_after is None else min(start + duration, not_after)
    return start, until, sum(1 for t in done if t.end < until)


def measured(rows, until=math.inf):
    """(latencies in ms, failures) of a run measured until "until": the
    transactions scheduled to start before it, the failures that ended
    before it."""
    return ([t.latency_ms for t in succeeded(rows) if t.start < until],
            sum(1 for t in rows if t.latency_ms is None and t.end < until))


def running_at(rows, until, when):
    """How many transactions scheduled before "until" were still running at
    "when"."""
    return sum(1 for t in succeeded(rows) if t.start < until and t.end > when)
