"""numabench compare: two configurations or two result files, with the
configuration overview first and a refusal to compare unlike ones."""

import json
import math

from ._common import UsageError
from ._stats import mean, welch
from ._summary import metric_label


OVERVIEW_KEYS = ("git_commit", "postgresql", "cpu_model", "cpus_online", "nodes", "server_numactl", "server_cgroup",
                 "pgbench_cpus", "frequency", "cpufreq_driver", "governor", "boost", "idle_states", "huge_pages",
                 "numa_balancing", "kernel", "virtualization", "steal_percent")


def load_result(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError("cannot read %s: %s" % (path, e))
    if doc.get("numabench") != 1:
        raise UsageError("%s is not a numabench result" % path)
    return doc


def settings_text(doc, name):
    conf = next((c for c in doc["configurations"] if c["name"] == name), None)
    if conf is None:
        raise UsageError("no configuration \"%s\" in the result (it has %s)" % (
            name, ", ".join(c["name"] for c in doc["configurations"])))
    return ", ".join("%s=%s" % kv for kv in sorted(conf["settings"].items()))


def cmd_compare(args):
    a = load_result(args.files[0])
    b = load_result(args.files[1]) if len(args.files) > 1 else a
    if len(args.files) == 1 and not (args.old and args.new):
        raise UsageError("with one result file, name the two configurations: --old NAME --new NAME")
    for key in ("workload", "scale"):
        if a[key] != b[key]:
            raise UsageError("refusing to compare unlike runs: %s differs (%s vs %s)" % (key, a[key], b[key]))
    # before 6 December 2026 each run's server was sampled inside the run,
    # and tps and latency came from pgbench's summary of all of it
    if bool(a.get("sampled_after_measured")) != bool(b.get("sampled_after_measured")):
        raise UsageError("refusing to compare unlike runs: one sampled its servers inside the measured "
                         "part of each run")
    if sorted(a["clients"]) != sorted(b["clients"]):
        raise UsageError("refusing to compare unlike runs: client counts differ (%s vs %s)" % (
            a["clients"], b["clients"]))
    if len(args.files) == 1:
        pairs = [(args.old, args.new)]
    else:
        common = [c["name"] for c in a["configurations"] if c["name"] in {x["name"] for x in b["configurations"]}]
        if args.old or args.new:
            pairs = [(args.old or args.new, args.new or args.old)]
        elif common:
            pairs = [(n, n) for n in common]
        else:
            raise UsageError("refusing to compare unlike runs: no configuration name in common")

    print("Configuration Overview")
    rows = [(k, a["system"].get(k), b["system"].get(k)) for k in OVERVIEW_KEYS]
    for old, new in pairs:
        rows.append(("settings %s" % (old if old == new else old + " / " + new),
                     settings_text(a, old), settings_text(b, new)))
    width = max(len(str(r[0])) for r in rows)
    print("  %-*s   %-50s %s" % (width, "", "old", "new"))
    for key, x, y in rows:
        mark = " " if x == y else "*"
        xs = ", ".join(x) if isinstance(x, list) else str(x)
        ys = ", ".join(y) if isinstance(y, list) else str(y)
        print("%s %-*s   %-50s %s" % (mark, width, key, xs, ys if x != y else "(same)"))
    print("(* differs)\n")

    head = "%-30s %12s %12s %9s %8s %10s %10s %9s %8s" % (
        "item", "old tps", "new tps", "change", "p", "old lat", "new lat", "change", "p")
    print(head)
    print("-" * len(head))
    ratios = []
    for old, new in pairs:
        for n in sorted(a["clients"]):
            xa = next((x for x in a["results"] if x["configuration"] == old and x["clients"] == n), None)
            xb = next((x for x in b["results"] if x["configuration"] == new and x["clients"] == n), None)
            if xa is None or xb is None:
                raise UsageError("refusing to compare unlike runs: %s or %s has no %d-client result"
                                 % (old, new, n))
            ta, tb = [r["tps"] for r in xa["runs"]], [r["tps"] for r in xb["runs"]]
            la, lb = [r["latency_avg_ms"] for r in xa["runs"]], [r["latency_avg_ms"] for r in xb["runs"]]
            ratios.append(mean(tb) / mean(ta))
            name = "%s, %d clients" % (new if old == new else old + "->" + new, n)
            print("%-30s %12.1f %12.1f %+8.2f%% %8s %10.3f %10.3f %+8.2f%% %8s" % (
                name, mean(ta), mean(tb), 100 * (mean(tb) / mean(ta) - 1), fmt_p(welch(ta, tb)[2]),
                mean(la), mean(lb), 100 * (mean(lb) / mean(la) - 1), fmt_p(welch(la, lb)[2])))
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print("-" * len(head))
    print("geometric mean of the throughput changes: %+.2f%%" % (100 * (geo - 1)))
    for p in (b["paired"] if len(args.files) == 1 else []):
        if p["a"] == args.old and p["b"] == args.new:
            print("paired (runs interleaved) %d clients: median %s ratio %.4f, 95%% CI [%.4f, %.4f]" % (
                p["clients"], metric_label(b, p.get("metric", "tps")), p["median_ratio"], p["ci95"][0],
                p["ci95"][1]))
    return 0


def fmt_p(p):
    return "-" if p is None else ("%.3f" % p if p >= 0.001 else "<0.001")
