"""numabench demo: build and install numasched, then measure what this machine
can show, against the kernel alone (numasched not loaded), interleaved:

- what numasched costs: OLTP read-only with its defaults, beside a second
  server without it (how far two identical servers differ here);
- isolation, on any machine: two-roles (OLTP at a fixed rate beside an
  analytic role), the analytic role at numasched.cpu_priority = background;
- locality, where the machine has two memory nodes or more: bursty, and where
  the private pages are (numa_maps);
- where the kernel has sched_ext and numasched-scx is installed: the
  companion beside the masks.

It ends with one line per question and where the JSON and plots are."""

import json
import os
import shutil
import subprocess
import sys

from ._common import HERE, TOP, log
from ._runner import cmd_run
from ._companion import OPS
from ._system import read

BACKGROUND = "numasched,role.analytics.numasched.cpu_priority=background"


def memory_nodes(sysfs="/sys"):
    """Nodes with memory the kernel lists (a machine with one is no NUMA machine)."""
    base = os.path.join(sysfs, "devices/system/node")
    return len([d for d in os.listdir(base) if d.startswith("node") and d[4:].isdigit()]) \
        if os.path.isdir(base) else 1


def companion_available(bindir):
    """The companion can be measured here: root, sched_ext, the loader
    installed, no other sched_ext scheduler loaded."""
    return (os.getuid() == 0 and read("/sys/kernel/sched_ext/state") is not None
            and os.access(os.path.join(bindir, "numasched-scx"), os.X_OK)
            and (read(OPS) or "").strip() in ("", "numasched"))


def paired(doc, b, metric):
    # against the first server alone: the control's own ratio is what it is read beside
    p = next((x for x in doc["paired"] if x["a"] == "baseline" and x["b"] == b
              and x.get("metric", "tps") == metric), None)
    return (p["median_ratio"], p["ci95"][0], p["ci95"][1], len(p["ratios"])) if p else None


def ratio_text(r, what):
    return "%s %.3f [%.3f, %.3f] of the kernel alone's" % (what, r[0], r[1], r[2])


def cost_answer(doc):
    """numasched against the kernel alone, read beside a control: a second
    server without numasched against the first, whose ratio shows how far
    two identical servers differ here (a few per cent on a small machine)."""
    r = paired(doc, "numasched", "tps")
    c = paired(doc, "control", "tps")
    if r is None:
        return "not measured"
    figures = "OLTP read-only tps %.3f [%.3f, %.3f] of the kernel alone's, %d pairs" % (r[0], r[1], r[2], r[3])
    if c is not None:
        figures += "; two servers without it: %.3f [%.3f, %.3f]" % (c[0], c[1], c[2])
    # two identical servers differ by up to this here, either way
    spread = max(abs(1 - c[1]), abs(1 - c[2])) if c is not None else 0.0
    if r[2] < 1.0 - spread:
        verdict = "a loss of %.1f%% was measured" % (100 * (1 - r[0]))
    elif r[2] < 1.0:
        verdict = "no loss beyond what two identical servers differ by here"
    elif r[1] > 1.0:
        verdict = "no loss: faster"
    else:
        verdict = "no loss resolved"
    return "%s: %s" % (verdict, figures)


def isolation_answer(doc, config):
    p50 = paired(doc, config, "p50_ms")
    p99 = paired(doc, config, "p99_ms")
    oltp = paired(doc, config, "tps")
    analytic = paired(doc, config, "analytic_tps")
    if None in (p50, p99, oltp, analytic):
        return "not measured"
    # the reporting role's throughput as the cost is read: lost only where its interval lies below 1
    if p99[2] < 1.0 and analytic[2] >= 1.0:
        verdict = "yes"
    elif p99[2] < 1.0:
        verdict = "yes, at the reporting role's expense"
    elif p99[0] < 1.0:
        verdict = "not resolved"
    else:
        verdict = "not here"
    way = next((c.get("background_way") for c in doc["configurations"] if c["name"] == config), None)
    how = "under the companion" if config.endswith("scx") else "by %s" % (way or "background priority")
    return "%s, %s: %s, p50 %.3f [%.3f, %.3f], OLTP tps %.3f [%.3f, %.3f], the reporting role's tps %.3f [%.3f, %.3f], %d pairs" % (
        verdict, how, ratio_text(p99, "OLTP p99"), p50[0], p50[1], p50[2], oltp[0], oltp[1], oltp[2],
        analytic[0], analytic[1], analytic[2], p99[3])


def locality_answer(doc, config):
    p99 = paired(doc, config, "p99_ms")
    result = next((x for x in doc["results"] if x["configuration"] == config), None)
    base = next((x for x in doc["results"] if x["configuration"] == "baseline"), None)
    share = (result or {}).get("summary", {}).get("private_on_own_node_percent")
    base_share = (base or {}).get("summary", {}).get("private_on_own_node_percent")
    if p99 is None:
        return "not measured"
    verdict = "yes" if share is not None and base_share is not None and share > base_share else "not resolved"
    return "%s (%s): private pages on their process's node %s against %s; bursty %s" % (
        verdict, config, "%.1f%%" % share if share is not None else "?",
        "%.1f%%" % base_share if base_share is not None else "?", ratio_text(p99, "p99"))


def run(args, workload, configs, runs, duration, extra):
    from ._cli import build_parser  # the command line calls this step

    out = os.path.join(HERE, "results", "demo-" + workload)
    shutil.rmtree(out, ignore_errors=True)
    log("%s: %s, %d interleaved rounds of %d s" % (workload, " against ".join(configs), runs, duration))
    argv = ["run", "--pg-config", args.pg_config, "--workload", workload, "--runs", str(runs),
            "--duration", str(duration), "--warmup", "3", "--trim", "--out", out] + extra
    for c in configs:
        argv += ["--config", c]
    cmd_run(build_parser().parse_args(argv))
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f), out


def cmd_demo(args):
    from ._cluster import pg_dirs

    log("building and installing numasched")
    for target in ([], ["install"]):
        r = subprocess.run(["make", "-s", "-C", TOP, "PG_CONFIG=" + args.pg_config] + target,
                           capture_output=True, text=True)
        if r.returncode:
            print(r.stdout + r.stderr, file=sys.stderr)
            raise RuntimeError("make %s failed" % " ".join(target))
    bindir, _ = pg_dirs(args.pg_config)
    nodes = memory_nodes()
    scx = companion_available(bindir)
    log("this machine: %d memory node%s, %s" % (
        nodes, "" if nodes == 1 else "s",
        "sched_ext and numasched-scx: the companion is measured too" if scx else
        "no sched_ext companion to measure (it needs a kernel with sched_ext, root and numasched-scx)"))
    answers, outs = [], []

    def rounds(n):
        return 2 if args.short else n

    def seconds(n):
        return 3 if args.short else n

    doc, out = run(args, "oltp-ro", ["baseline", "numasched", "control=baseline"], rounds(6), seconds(8),
                   ["--clients", "2"])
    outs.append(out)
    answers.append(("does it cost me anything?", cost_answer(doc)))

    configs = ["baseline", "bg=" + BACKGROUND] + (["bg-scx=%s,bench.companion=on" % BACKGROUND] if scx else [])
    doc, out = run(args, "two-roles", configs, rounds(6), seconds(12),
                   ["--clients", "2", "--analytic-clients", "1", "--rate", "200", "--scale", "2"])
    outs.append(out)
    answers.append(("does it isolate OLTP from reporting here?", isolation_answer(doc, "bg")))
    if scx:
        answers.append(("... and with the sched_ext companion?", isolation_answer(doc, "bg-scx")))

    if nodes >= 2:
        configs = ["baseline", "numasched"] + (["scx=numasched,bench.companion=on"] if scx else [])
        doc, out = run(args, "bursty", configs, rounds(6), seconds(10), ["--clients", "8"])
        outs.append(out)
        answers.append(("does locality improve here?", locality_answer(doc, "numasched")))
        if scx:
            answers.append(("... and with the sched_ext companion?", locality_answer(doc, "scx")))
    else:
        answers.append(("does locality improve here?",
                        "not on this machine: it has one memory node, where numasched binds nothing and makes "
                        "no memory call; the multi-node checks run in VMs with 2 to 4 nodes "
                        "(bash test/vm/run.sh 2, doc/testing.md)"))

    print()
    width = max(len(q) for q, _ in answers)
    print("%-*s  %s" % (width, "question", "answer (paired ratios, median and 95% CI)"))
    print("-" * (width + 2 + 60))
    for question, answer in answers:
        print("%-*s  %s" % (width, question, answer))
    print()
    for out in outs:
        log("JSON, table and plot in %s/" % out)
    return 0
