"""numabench demo: build, install and compare baseline against numasched on
two workloads."""

import os
import shutil
import subprocess
import sys

from ._common import HERE, TOP, log
from ._runner import cmd_run
from ._compare import cmd_compare


def cmd_demo(args):
    from ._cli import build_parser  # the command line calls this step

    log("building and installing numasched")
    for target in ([], ["install"]):
        r = subprocess.run(["make", "-s", "-C", TOP, "PG_CONFIG=" + args.pg_config] + target,
                           capture_output=True, text=True)
        if r.returncode:
            print(r.stdout + r.stderr, file=sys.stderr)
            raise RuntimeError("make %s failed" % " ".join(target))
    outs = []
    for workload, clients, runs, duration in (("oltp-ro", "2", 8, 8), ("analytic", "2", 5, 10)):
        out = os.path.join(HERE, "results", "demo-" + workload)
        shutil.rmtree(out, ignore_errors=True)
        log("%s: baseline vs numasched, %d interleaved runs of %d s each" % (workload, runs, duration))
        run_args = build_parser().parse_args(
            ["run", "--pg-config", args.pg_config, "--workload", workload, "--clients", clients,
             "--runs", str(runs),
             "--duration", str(duration), "--scale", "2" if workload == "analytic" else "10",
             "--trim", "--out", out])
        cmd_run(run_args)
        outs.append(out)
    for out in outs:
        print()
        cmd_compare(build_parser().parse_args(
            ["compare", os.path.join(out, "results.json"), "--old", "baseline", "--new", "numasched"]))
    print()
    for out in outs:
        log("JSON, table and plot in %s/" % out)
    return 0
