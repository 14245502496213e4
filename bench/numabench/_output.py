"""The results: a text table, JSON and a plot."""

import json
import os

from ._common import log
from ._summary import UNSTABLE_CV, cpu_line, metric_label, numa_line


def table(doc):
    lines = ["workload %s, scale %d, %d runs x %d s, interleaved; frequency %s" % (
        doc["workload"], doc["scale"], doc["runs"], doc["duration_s"], doc["system"]["frequency"])]
    head = "%-12s %7s %11s %9s %7s %9s %11s %10s %9s %9s" % (
        "config", "clients", "tps mean", "tps sd", "cv %", "trimmed", "trim cv %", "lat ms", "p95 ms", "p99 ms")
    lines += [head, "-" * len(head)]
    for x in doc["results"]:
        s = x["summary"]
        lines.append("%-12s %7d %11.1f %9.1f %7.2f %9.1f %11.2f %10.3f %9.3f %9.3f" % (
            x["configuration"], x["clients"], s["tps_mean"], s["tps_stddev"], s["tps_cv"],
            s["tps_mean_trimmed"], s["tps_cv_trimmed"], s["latency_avg_ms_mean"], s["p95_ms_mean"],
            s["p99_ms_mean"]))
        digits = 0 if s["tps_mean"] >= 100 else 1
        runs = "  runs: " + " ".join("%.*f%s" % (digits, r["tps"], "*" if r["dropped"] else "")
                                     for r in x["runs"])
        lines.append(runs)
        if numa_line(s):
            lines.append(numa_line(s))
        if cpu_line(s):
            lines.append(cpu_line(s))
    if any(r["dropped"] for x in doc["results"] for r in x["runs"]):
        lines.append("(* dropped by trimming: kept in the JSON, left out of the trimmed mean)")
    for x in doc["results"]:
        if x["summary"]["tps_cv"] > UNSTABLE_CV:
            lines.append("WARNING: %s with %d clients is unstable: tps CV %.1f%% > %.0f%%; its mean (trimmed "
                         "or not) is no headline, the paired ratio below is the figure to read" % (
                             x["configuration"], x["clients"], x["summary"]["tps_cv"], UNSTABLE_CV))
    for x in doc["results"]:
        s = x["summary"]
        if doc.get("bursty") and "p50_ms_mean" in s:
            lines.append("%-12s bursty at %.1f queries/s (%d%% of the CPUs): p50 %.3f ms, p95 %.3f ms, "
                         "p99 %.3f ms" % (x["configuration"], doc["bursty"]["rate"],
                                          doc["bursty"]["utilisation_percent"], s["p50_ms_mean"],
                                          s["p95_ms_mean"], s["p99_ms_mean"]))
        if "analytic_tps_mean" in s:
            oltp = ("at %s tps" % doc.get("rate") if doc.get("rate") else
                    "as fast as it can, %.1f tps" % s["tps_mean"])
            lines.append("%-12s OLTP role %s: p50 %.3f ms, p95 %.3f ms, p99 %.3f ms; "
                         "analytic role: %.2f tps" % (x["configuration"], oltp, s["p50_ms_mean"],
                                                      s["p95_ms_mean"], s["p99_ms_mean"],
                                                      s["analytic_tps_mean"]))
    for p in doc["paired"]:
        lines.append("paired %s/%s, %d clients: median %s ratio %.4f, 95%% CI [%.4f, %.4f] (bootstrap); "
                     "Welch p = %.3f" % (p["b"], p["a"], p["clients"],
                                         metric_label(doc, p.get("metric", "tps")), p["median_ratio"],
                                         p["ci95"][0], p["ci95"][1], p["welch_p"]))
    return "\n".join(lines) + "\n"


def plot(doc, path):
    """TPS per run, each pair's ratio with the median and its 95% interval
    (what the harness concludes), latency, and where the server's private
    memory was when the runs recorded it."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return False
    locality = [x for x in doc["results"] if x["summary"].get("private_on_own_node_percent") is not None]
    panels = 3 + (1 if locality else 0)
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4.5))
    tps, ratios, latency = axes[0], axes[1], axes[2]
    for x in doc["results"]:
        label = "%s, %d clients" % (x["configuration"], x["clients"])
        tps.plot([r["run"] for r in x["runs"]], [r["tps"] for r in x["runs"]], marker="o", label=label)
    tps.xaxis.set_major_locator(MaxNLocator(integer=True))
    tps.set_xlabel("run (interleaved)")
    tps.set_ylabel("transactions per second")
    tps.set_title("TPS per run")
    tps.legend(fontsize=8)
    for k, p in enumerate(doc["paired"]):
        ratios.scatter([k] * len(p["ratios"]), p["ratios"], s=12, alpha=0.6)
        ratios.errorbar([k + 0.15], [p["median_ratio"]],
                        yerr=[[p["median_ratio"] - p["ci95"][0]], [p["ci95"][1] - p["median_ratio"]]],
                        fmt="D", color="black", capsize=4)
    ratios.axhline(1.0, color="grey", linewidth=0.8)
    ratios.set_xlim(-0.5, max(1, len(doc["paired"])) - 0.5)
    ratios.set_xticks(range(len(doc["paired"])))
    ratios.set_xticklabels(["%s/%s\n%d cl.%s" % (p["b"], p["a"], p["clients"],
                                                 "" if p.get("metric", "tps") == "tps"
                                                 else "\n" + metric_label(doc, p["metric"]))
                            for p in doc["paired"]], fontsize=8)
    ratios.set_ylabel("ratio of a pair of runs")
    ratios.set_title("paired ratios, median and 95% CI")
    names = ["%s\n%d cl." % (x["configuration"], x["clients"]) for x in doc["results"]]
    width = 0.25
    for k, (key, label) in enumerate((("latency_avg_ms_mean", "average"), ("p95_ms_mean", "p95"),
                                      ("p99_ms_mean", "p99"))):
        latency.bar([i + (k - 1) * width for i in range(len(names))],
                    [x["summary"][key] for x in doc["results"]], width, label=label)
    latency.set_xticks(range(len(names)))
    latency.set_xticklabels(names, fontsize=8)
    latency.set_ylabel("latency, ms")
    latency.set_title("latency (mean over runs)")
    latency.legend(fontsize=8)
    if locality:
        panel = axes[3]
        panel.bar(range(len(locality)), [x["summary"]["private_on_own_node_percent"] for x in locality])
        panel.set_xticks(range(len(locality)))
        panel.set_xticklabels(["%s\n%d cl." % (x["configuration"], x["clients"]) for x in locality], fontsize=8)
        panel.set_ylim(0, 100)
        panel.set_ylabel("% of the server's private pages")
        panel.set_title("private pages on their process's node")
    fig.suptitle("numabench %s: %s" % (doc["workload"], doc["system"]["date"]))
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def write_outputs(doc, out):
    path = os.path.join(out, "results.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    text = table(doc)
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    has_plot = plot(doc, os.path.join(out, "plot.png"))
    log("results: %s, %s%s" % (path, os.path.join(out, "table.txt"),
                               ", " + os.path.join(out, "plot.png") if has_plot
                               else " (no plot: python3-matplotlib is missing)"))
