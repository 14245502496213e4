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


def parse_log(lines):
    """pgbench 15's per-transaction log: "client tx time script epoch us
    [lag] [retries]"; time is the latency in microseconds, or "failed",
    "serialization" or "deadlock" for a failed transaction.
    Returns (latencies in ms, failures)."""
    latencies, failures = [], 0
    for line in lines:
        fields = line.split()
        if len(fields) < 6:
            continue
        if fields[2].isdigit():
            latencies.append(int(fields[2]) / 1000.0)
        else:
            failures += 1
    return latencies, failures


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
