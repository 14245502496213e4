"""A configuration's runs summarised, and two configurations compared as
interleaved pairs."""

import math
import statistics

from ._stats import bootstrap_median_ci, cv, mean, stdev, trim, welch


UNSTABLE_CV = 5.0   # percent: above it a series' mean is no headline (pyperf warns likewise)


def summarise(runs, do_trim):
    tps = [r["tps"] for r in runs]
    out = {
        "tps_mean": mean(tps), "tps_stddev": stdev(tps), "tps_cv": cv(tps),
        "latency_avg_ms_mean": mean([r["latency_avg_ms"] for r in runs]),
        "p95_ms_mean": mean([r["p95_ms"] for r in runs]),
        "p99_ms_mean": mean([r["p99_ms"] for r in runs]),
    }
    kept, dropped = trim(tps) if do_trim else (tps, [])
    out.update({"tps_mean_trimmed": mean(kept), "tps_cv_trimmed": cv(kept), "dropped_tps": dropped})
    if all("p50_ms" in r for r in runs):
        out["p50_ms_mean"] = mean([r["p50_ms"] for r in runs])
    if all("analytic_tps" in r for r in runs):
        out["analytic_tps_mean"] = mean([r["analytic_tps"] for r in runs])
    for r in runs:
        r["dropped"] = False
    for value in dropped:
        next(r for r in runs if r["tps"] == value and not r["dropped"])["dropped"] = True
    out.update(summarise_numa([r["numa"] for r in runs if r.get("numa")]))
    cpu = [r["cpu"] for r in runs if r.get("cpu")]
    if cpu:
        freq = [c for c in cpu if c.get("mhz_median") is not None]
        out["cpu"] = {"steal_percent_max": max(c["steal_percent"] for c in cpu)}
        per_txn = [r["cpu_ms_per_txn"] for r in runs if r.get("cpu_ms_per_txn")]
        if len(per_txn) == len(runs):
            out["cpu"]["cpu_ms_per_txn_mean"] = mean(per_txn)
        if freq:
            out["cpu"].update({"mhz_min": min(c["mhz_min"] for c in freq),
                               "mhz_median": statistics.median(c["mhz_median"] for c in freq),
                               "mhz_max": max(c["mhz_max"] for c in freq),
                               "frequency_source": freq[0]["frequency_source"]})
    return out


def cpu_line(summary):
    """The table's line of what the CPUs did in one configuration's runs."""
    c = summary.get("cpu")
    if not c:
        return None
    text = "  cpu: steal up to %.1f%%" % c["steal_percent_max"]
    if "cpu_ms_per_txn_mean" in c:
        text += "; busy %.2f ms of CPU a transaction" % c["cpu_ms_per_txn_mean"]
    if "mhz_median" in c:
        text += "; frequency min %.0f / median %.0f / max %.0f MHz (%s)" % (
            c["mhz_min"], c["mhz_median"], c["mhz_max"], c["frequency_source"])
    return text


def summarise_numa(numa):
    """Over the runs: the share of the kernel's allocations that were local
    (local_node / (local_node + other_node)), the mean share of the server's
    private pages on their process's node, and numasched's counters summed."""
    if not numa:
        return {}
    local = sum(c.get("local_node", 0) for n in numa for c in n["numastat"].values())
    other = sum(c.get("other_node", 0) for n in numa for c in n["numastat"].values())
    shares = [n["private_memory"]["percent"] for n in numa if n["private_memory"].get("percent") is not None]
    out = {"kernel_local_percent": 100.0 * local / (local + other) if local + other else None,
           "private_on_own_node_percent": mean(shares) if shares else None}
    stats = [n["numasched_stats"] for n in numa if "numasched_stats" in n]
    if stats:
        out["numasched_stats"] = {k: sum(s.get(k, 0) for s in stats) for k in stats[0]}
    scheduler = [n["scheduler_cpu_ms"] for n in numa if "scheduler_cpu_ms" in n]
    if scheduler:
        out["scheduler_cpu_ms_per_run"] = mean(scheduler)
    return out


def numa_line(summary):
    """The table's line of NUMA evidence for one configuration, or None."""
    parts = []
    if summary.get("private_on_own_node_percent") is not None:
        parts.append("private pages on their process's node %.1f%%" % summary["private_on_own_node_percent"])
    if summary.get("kernel_local_percent") is not None:
        parts.append("kernel allocations local %.1f%%" % summary["kernel_local_percent"])
    stats = summary.get("numasched_stats")
    if stats:
        # results from before homing have no homecomings to show
        homecomings = ", %d homecomings" % stats["homecomings"] if "homecomings" in stats else ""
        # summed over the runs (its scheduler's CPU, below, is a run's)
        parts.append("numasched over all runs: %d placed, %d moves%s, %d pages migrated" % (
            stats.get("placements", 0), stats.get("moves", 0), homecomings, stats.get("pages_migrated", 0)))
    if summary.get("scheduler_cpu_ms_per_run") is not None:
        parts.append("its scheduler's CPU %.0f ms a run" % summary["scheduler_cpu_ms_per_run"])
    return "  numa: " + "; ".join(parts) if parts else None


# what a pair of runs is compared on: tps, and for two-roles the OLTP role's
# p99 latency (at its fixed rate, its tps is the rate) and the analytic role's tps
PAIRED_METRICS = {"tps": "tps", "p99_ms": "p99 latency", "p50_ms": "p50 latency", "analytic_tps": "analytic tps",
                  "cpu_ms_per_txn": "CPU time a transaction (all CPUs)"}


def metric_label(doc, metric):
    """What a paired ratio compares; two-roles' latencies are the OLTP role's."""
    label = PAIRED_METRICS[metric]
    return "OLTP " + label if doc.get("workload") == "two-roles" and metric.endswith("_ms") else label


def paired(results, reference, second, clients, metric="tps"):
    """second against reference, one or more servers of the same settings:
    with several, each round's reference is their geometric mean."""
    refs = [next(x for x in results if x["configuration"] == name and x["clients"] == clients)["runs"]
            for name in reference]
    b = next(x for x in results if x["configuration"] == second and x["clients"] == clients)
    if any(not ra.get(metric) for runs in refs for ra in runs) or any(rb.get(metric) is None for rb in b["runs"]):
        return None             # nothing to compare with (the OLTP role alone has no analytic tps)
    # x ** 1.0 is x: one reference gives the plain ratio, to the last bit
    base = [math.prod(r[metric] for r in rounds) ** (1 / len(rounds)) for rounds in zip(*refs)]
    ratios = [rb[metric] / ra for ra, rb in zip(base, b["runs"])]
    lo, hi = bootstrap_median_ci(ratios)
    _, _, p = welch(base, [r[metric] for r in b["runs"]])
    return {"clients": clients, "a": "+".join(reference), "b": second, "metric": metric, "ratios": ratios,
            "median_ratio": statistics.median(ratios), "ci95": [lo, hi], "welch_p": p}


def replicates_of_first(doc):
    """The first configuration and every other with its very settings
    (control=baseline): servers that differ only in which came first."""
    first = doc["configurations"][0]["settings"]
    return [c["name"] for c in doc["configurations"] if c["settings"] == first]


def paired_all(doc):
    """Every configuration against the first, on the workload's metrics; and
    where the first was run more than once, every other against all of its
    servers together.  The first server is set up first and the workload
    sized on it: what sets it apart then leans on no ratio, and a round's
    reference is steadier."""
    metrics = {"two-roles": ("tps", "p50_ms", "p99_ms", "analytic_tps"),
               "bursty": ("p99_ms", "p50_ms", "tps", "cpu_ms_per_txn")}.get(doc["workload"], ("tps",))
    names = [c["name"] for c in doc["configurations"]]
    rounds = min(len(x["runs"]) for x in doc["results"])
    if rounds < 2 or len(names) < 2:
        return []
    pairs = [paired(doc["results"], names[:1], other, n, m) for n in doc["clients"] for other in names[1:]
             for m in metrics]
    pool = replicates_of_first(doc)
    if len(pool) > 1:
        pairs += [paired(doc["results"], pool, other, n, m) for n in doc["clients"]
                  for other in names if other not in pool for m in metrics]
    return [p for p in pairs if p is not None]
