"""The command line: the parser, its checks, and dispatch to the steps."""

import argparse
import os
import shlex
import sys

from . import __doc__ as USAGE
from ._common import UsageError
from ._system import Machine, cmd_reset, cmd_show, cmd_tune, tuned_warning
from ._workloads import WORKLOADS
from ._runner import Interrupted, cmd_run, parse_clients
from ._compare import cmd_compare
from ._merge import cmd_merge
from ._timeline import cmd_timeline
from ._demo import cmd_demo


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    p = Parser(prog="numabench", description=USAGE.split("\n\n")[0],
               formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", metavar="{show,tune,reset,run,compare,merge,timeline,demo}")
    sub.required = True
    for name, text in (("show", "what keeps this machine from stable measurements"),
                       ("tune", "boost off, performance governor and preference, min = max frequency, "
                                "deep idle off"),
                       ("reset", "undo tune, byte for byte")):
        sub.add_parser(name, help=text).add_argument(
            "--sysfs", metavar="ROOT", default="/sys", help="the sysfs tree to read and tune (default /sys)")
    r = sub.add_parser("run", help="run configurations A/B interleaved")
    r.add_argument("--config", action="append", metavar="NAME[=BASE[,setting=value...]]",
                   help="baseline (numasched not loaded), numasched (loaded with defaults), or a "
                        "named variant of either; repeat; default: baseline and numasched")
    r.add_argument("--workload", choices=WORKLOADS, default="oltp-ro")
    r.add_argument("--clients", default="2", help="client counts, e.g. 1,2,4")
    r.add_argument("--duration", type=int, default=10,
                   help="seconds measured per run (pgbench runs 2 s more, while the server is sampled)")
    r.add_argument("--runs", type=int, default=10, help="runs per configuration")
    r.add_argument("--first-round", type=int, default=1, metavar="N",
                   help="number the rounds from N (their seeds and A/B order too): a later sitting of a "
                        "series, to join with numabench merge")
    r.add_argument("--restart-each-round", action="store_true",
                   help="stop and start every server before each round after the first: what a server's "
                        "lifetime fixes (where its postmaster and background processes run, their memory) "
                        "then varies from round to round instead of staying with one configuration")
    r.add_argument("--scale", type=int, default=10, help="pgbench scale; analytic: 300k lineitem rows per unit")
    r.add_argument("--trim", action="store_true", help="trim outliers (1%% rule), keeping them marked")
    r.add_argument("--warmup", type=int, default=5,
                   help="seconds of pgbench per configuration before the counted runs (0: none)")
    r.add_argument("--pgbench-args", metavar="ARGS",
                   help="more pgbench options for every run, e.g. \"-M prepared\" or \"-R 500\"")
    r.add_argument("--pg-config", metavar="PATH", default="pg_config",
                   help="the PostgreSQL to benchmark, by its pg_config (default: the first on PATH), "
                        "e.g. /usr/lib/postgresql/15/bin/pg_config")
    r.add_argument("--server-numactl", metavar="ARGS",
                   help="start the servers under numactl, e.g. \"--cpunodebind=0 --membind=0\"")
    r.add_argument("--server-cgroup", action="store_true",
                   help="start each server in a cpu cgroup of its own, owned by postgres, as Delegate=yes in its "
                        "systemd unit gives it (root; numasched then puts background work in an idle child cgroup)")
    r.add_argument("--pgbench-cpus", metavar="LIST", help="pin pgbench with taskset -c LIST")
    r.add_argument("--huge-pages", action="store_true", help="huge_pages = on (default off)")
    r.add_argument("--tune", action="store_true", help="tune the machine for the run, reset after")
    r.add_argument("--sysfs", metavar="ROOT", default="/sys",
                   help="the sysfs tree --tune writes and the frequency is read from (default /sys)")
    r.add_argument("--numa-balancing", choices=("on", "off"),
                   help="set kernel.numa_balancing (AutoNUMA) for the run, restored after")
    r.add_argument("--oltp-weight", type=int, default=9, help="mixed: weight of the OLTP script")
    r.add_argument("--rate", type=int, default=200,
                   help="two-roles: the OLTP role's fixed rate, transactions per second (pgbench -R); 0: as fast as it can")
    r.add_argument("--analytic-clients", type=int, default=1,
                   help="two-roles: clients of the analytic role's stream")
    r.add_argument("--analytic-weight", type=int, default=1, help="mixed: weight of each analytic query")
    r.add_argument("--utilisation", type=int, default=60,
                   help="bursty: percent of the server's CPUs its queries keep busy on average (pgbench -R)")
    r.add_argument("--burst-ms", type=int, default=20,
                   help="bursty: milliseconds of one CPU per query (sized on the first configuration)")
    r.add_argument("--port", type=int, default=54800, help="first port (socket name) of the clusters")
    r.add_argument("--out", help="result directory (default bench/results/DATE-WORKLOAD)")
    r.add_argument("--keep-logs", action="store_true",
                   help="keep pgbench's per-transaction log of every run in OUT/logs (CONFIG-CLIENTS-RUN.log), "
                        "for numabench timeline")
    c = sub.add_parser("compare", help="compare two results, or two configurations of one")
    c.add_argument("files", nargs="+", metavar="RESULT.json")
    c.add_argument("--old", help="configuration on the old side")
    c.add_argument("--new", help="configuration on the new side")
    m = sub.add_parser("merge", help="join sittings of one series (run --first-round) into one result")
    m.add_argument("files", nargs="+", metavar="RESULT.json")
    m.add_argument("--out", required=True, help="result directory for the joined series")
    m.add_argument("--across-commits", action="store_true",
                   help="join sittings that ran different commits (each sitting's is kept in the result; "
                        "say why the difference leaves the measured path alone)")
    t = sub.add_parser("timeline", help="where in its runs each configuration's slow transactions fell "
                                         "(the logs of run --keep-logs)")
    t.add_argument("result", metavar="RESULT_DIR", help="a run's --out directory")
    t.add_argument("--window", type=float, default=0.5, help="seconds per window (default 0.5)")
    t.add_argument("--until", type=float, default=5.0,
                   help="windows up to this second of the runs, the rest in one (default 5)")
    d = sub.add_parser("demo", help="build, install, and A/B baseline vs numasched (about 5 minutes)")
    d.add_argument("--pg-config", metavar="PATH", default="pg_config",
                   help="the PostgreSQL to build for and benchmark (default: the first pg_config on PATH)")
    d.add_argument("--short", action="store_true",
                   help="two rounds of 3 s per question: every step once, in about two minutes; "
                        "too short for its verdicts (the test command runs it on Debian 13)")
    return p


def main(argv):
    try:
        args = build_parser().parse_args(argv)
        if args.command == "run":
            if args.runs < 1 or args.duration < 1 or args.scale < 1 or args.first_round < 1:
                raise UsageError("--runs, --duration, --scale and --first-round must be at least 1")
            if args.warmup < 0:
                raise UsageError("--warmup must be 0 or more seconds")
            if args.rate < 0 or args.analytic_clients < 1:
                raise UsageError("--rate must be 0 (as fast as it can) or more, --analytic-clients at least 1")
            if not 1 <= args.utilisation <= 100 or args.burst_ms < 1:
                raise UsageError("--utilisation must be 1 to 100 and --burst-ms at least 1")
            parse_clients(args.clients)
            try:
                shlex.split(args.pgbench_args or "")
            except ValueError as e:
                raise UsageError("--pgbench-args: %s" % e)
        if getattr(args, "sysfs", None) is not None:
            if not os.path.isdir(os.path.join(args.sysfs, "devices/system/cpu")):
                raise UsageError("--sysfs %s has no devices/system/cpu" % args.sysfs)
        # a machine left tuned (by tune, or by a run --tune that was killed)
        warning = tuned_warning(Machine(getattr(args, "sysfs", None) or "/sys"))
        if warning and args.command != "reset":
            print("numabench: WARNING: " + warning, file=sys.stderr)
        if args.command == "compare" and len(args.files) > 2:
            raise UsageError("compare takes one or two result files")
        return {"show": cmd_show, "tune": cmd_tune, "reset": cmd_reset, "run": cmd_run,
                "compare": cmd_compare, "merge": cmd_merge, "timeline": cmd_timeline,
                "demo": cmd_demo}[args.command](args)
    except UsageError as e:
        print("numabench: %s" % e, file=sys.stderr)
        return 2
    except (RuntimeError, Interrupted, KeyboardInterrupt) as e:
        print("numabench: %s" % (e or "interrupted"), file=sys.stderr)
        return 1
