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
import os

from ._common import UsageError
from ._pgbench import parse_log_times


def run_logs(logdir):
    """{configuration: [[(start s from the run's first, latency ms)], ...]} of the kept logs."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(logdir, "*.log"))):
        # CONFIG-CLIENTS-RUN.log; CONFIG-warmup.log is not a run
        parts = os.path.basename(path)[:-len(".log")].rsplit("-", 2)
        if len(parts) != 3 or not (parts[1].isdigit() and parts[2].isdigit()):
            continue
        name = parts[0]
        with open(path) as f:
            rows = parse_log_times(f)
        if rows:
            first = min(start for start, _ in rows)
            runs.setdefault(name, []).append([(start - first, latency) for start, latency in rows])
    return runs


def percentile95(values):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.95))]


def timeline(runs, window, until):
    """Rows of (label, {configuration: (mean ms, p95 ms, transactions)}) per window, then the rest."""
    last = int(round(until / window))
    windows = {name: [[] for _ in range(last + 1)] for name in runs}
    for name, logs in runs.items():
        for rows in logs:
            for start, latency in rows:
                windows[name][min(int(start / window), last)].append(latency)
    table = []
    for w in range(last + 1):
        label = "%.1f-%.1f s" % (w * window, (w + 1) * window) if w < last else "after %.1f s" % (last * window)
        table.append((label, {name: (sum(v) / len(v), percentile95(v), len(v)) if v else None
                              for name, v in ((n, windows[n][w]) for n in runs)}))
    return table


def cmd_timeline(args):
    if args.window <= 0 or args.until < args.window:
        raise UsageError("--window must be above 0 and --until at least one window")
    logdir = os.path.join(args.result, "logs")
    if not os.path.isdir(logdir):
        raise UsageError("%s has no logs/: run numabench run --keep-logs" % args.result)
    runs = run_logs(logdir)
    if not runs:
        raise UsageError("%s holds no run's log" % logdir)
    names = sorted(runs, key=lambda n: (n != "baseline", n))
    print("latency of the transactions scheduled in each window of the runs: mean / p95 ms "
          "(%s)" % ", ".join("%s %d runs" % (n, len(runs[n])) for n in names))
    print("%-14s" % "window" + "".join("%20s" % n for n in names))
    for label, cells in timeline(runs, args.window, args.until):
        print("%-14s" % label + "".join("%20s" % ("%.1f / %.0f" % cells[n][:2] if cells[n] else "-")
                                        for n in names))
    return 0
