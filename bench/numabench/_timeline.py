"""numabench timeline: where in its runs each configuration's slow
transactions fell, from the per-transaction logs a run --keep-logs kept.

A run's tail can be made by one moment of it: every server's clients
connect at the start, so whatever a configuration does once per connection
(numasched brings a backend's memory home at its first statement after a
second) happens in every run at the same time.  The table gives, for each
window of the runs (from each run's first scheduled transaction), the mean
and 95th percentile latency of the transactions scheduled in it, over all
the runs of each configuration."""

import glob
import json
import math
import os

from ._common import UsageError
from ._pgbench import parse_log, succeeded
from ._stats import percentile


def run_logs(logdir, measured_until=None):
    """{column: [[(start s from the run's first, latency ms)], ...]} of the kept
    logs; a column is a configuration, with its client count where it ran more
    than one.  A run named in "measured_until" ({(configuration, clients,
    run): seconds since the epoch}) keeps only its measured part."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(logdir, "*.log"))):
        # CONFIG-CLIENTS-RUN.log
        parts = os.path.basename(path)[:-len(".log")].rsplit("-", 2)
        if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
            continue
        with open(path) as f:
            rows = [(t.start, t.latency_ms) for t in succeeded(parse_log(f))]
        until = (measured_until or {}).get((parts[0], int(parts[1]), int(parts[2])))
        if until is not None:
            rows = [(start, latency) for start, latency in rows if start < until]
        if rows:
            first = min(start for start, _ in rows)
            runs.setdefault((parts[0], int(parts[1])), []).append([(start - first, latency) for start, latency in rows])
    clients = {}
    for name, n in runs:
        clients.setdefault(name, set()).add(n)
    return {(name if len(clients[name]) == 1 else "%s/%d" % (name, n)): logs for (name, n), logs in runs.items()}


def timeline(runs, window, until):
    """Rows of (label, {column: (mean ms, p95 ms, transactions) or None}) per
    window up to "until" (rounded up to a whole window), then the rest."""
    last = int(math.ceil(until / window - 1e-9))
    windows = {name: [[] for _ in range(last + 1)] for name in runs}
    for name, logs in runs.items():
        for rows in logs:
            for start, latency in rows:
                windows[name][min(int(start / window), last)].append(latency)
    table = []
    for w in range(last + 1):
        label = "%g-%g s" % (w * window, (w + 1) * window) if w < last else "after %g s" % (last * window)
        table.append((label, {name: (sum(v) / len(v), percentile(v, 95), len(v)) if v else None
                              for name, v in ((n, windows[n][w]) for n in runs)}))
    return table


def cmd_timeline(args):
    if args.window <= 0 or args.until < args.window:
        raise UsageError("--window must be above 0 and --until at least one window")
    logdir = os.path.join(args.result, "logs")
    if not os.path.isdir(logdir):
        raise UsageError("%s has no logs/: run numabench run --keep-logs" % args.result)
    # runs since 6 December 2026 record where their measured part ended:
    # pgbench ran on past it while the server was sampled
    measured_until = {}
    results = os.path.join(args.result, "results.json")
    if os.path.exists(results):
        with open(results) as f:
            for x in json.load(f)["results"]:
                for r in x["runs"]:
                    if r.get("measured_until") is not None:
                        measured_until[(x["configuration"], x["clients"], r["run"])] = r["measured_until"]
    runs = run_logs(logdir, measured_until)
    if not runs:
        raise UsageError("%s holds no run's log" % logdir)
    names = sorted(runs, key=lambda n: (n.split("/")[0] != "baseline", n))
    print("latency of the transactions scheduled in each window of the runs: mean / p95 ms "
          "(%s)" % ", ".join("%s %d runs" % (n, len(runs[n])) for n in names))
    print("%-14s" % "window" + "".join("%20s" % n for n in names))
    for label, cells in timeline(runs, args.window, args.until):
        print("%-14s" % label + "".join("%20s" % ("%.1f / %.0f" % cells[n][:2] if cells[n] else "-")
                                        for n in names))
    return 0
