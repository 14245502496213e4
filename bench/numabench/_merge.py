"""numabench merge: sittings of one series joined into one result.

A long series may not fit one sitting (a machine that must be handed back, a
guest that dies).  Each sitting is its own interleaved rounds, so its pairs
stand alone; a later one started with --first-round continues the numbering,
the seeds and the A/B order where the last ended, and the joined rounds are
the series a single run would have made.  Only like sittings join: the same
workload, configurations and code on the same machine, no round twice; an
interrupted sitting gives its complete rounds.  --across-commits joins
sittings of different commits, when their difference leaves the measured
path alone: the result names them all."""

import copy
import os

from ._common import UsageError, log
from ._compare import load_result
from ._output import write_outputs
from ._summary import paired_all, summarise

# what makes two sittings one series: the workload as run...
SAME_RUN = ("workload", "scale", "duration_s", "clients", "trim", "warmup_s", "pgbench_args", "rate",
            "analytic_clients", "weights", "configurations")
# ...and the code and machine it ran on
SAME_SYSTEM = ("git_commit", "postgresql", "kernel", "cpu_model", "cpus_online", "nodes", "server_numactl",
               "server_cgroup", "pgbench_cpus", "huge_pages", "numa_balancing", "virtualization")


def complete_rounds(doc):
    """The rounds every configuration and client count finished."""
    per_result = [{r["run"] for r in x["runs"]} for x in doc["results"]]
    return sorted(set.intersection(*per_result)) if per_result else []


def check_alike(first, doc, path, across_commits=False):
    for key in SAME_RUN:
        if first.get(key) != doc.get(key):
            raise UsageError("refusing to merge unlike sittings: %s differs in %s (%s vs %s)"
                             % (key, path, first.get(key), doc.get(key)))
    # a sitting from before the option restarted nothing
    if bool(first.get("restart_each_round")) != bool(doc.get("restart_each_round")):
        raise UsageError("refusing to merge unlike sittings: one restarted its servers each round, %s %s"
                         % (path, "did" if doc.get("restart_each_round") else "did not"))
    # a sitting from before 6 December 2026 sampled its servers inside the
    # measured runs, which raised their last second's latency
    if bool(first.get("sampled_after_measured")) != bool(doc.get("sampled_after_measured")):
        raise UsageError("refusing to merge unlike sittings: one sampled its servers inside the measured "
                         "part of each run, %s %s" % (path, "did not" if doc.get("sampled_after_measured") else "did"))
    bursty = [(d.get("bursty") or {}) for d in (first, doc)]
    for key in ("utilisation_percent", "burst_ms", "rate"):
        if bursty[0].get(key) != bursty[1].get(key):
            raise UsageError("refusing to merge unlike sittings: bursty %s differs in %s" % (key, path))
    for key in SAME_SYSTEM:
        if key == "git_commit" and across_commits:
            continue
        if first["system"].get(key) != doc["system"].get(key):
            raise UsageError("refusing to merge unlike sittings: system %s differs in %s (%s vs %s)"
                             % (key, path, first["system"].get(key), doc["system"].get(key)))


def cmd_merge(args):
    if len(args.files) < 2:
        raise UsageError("merge takes two or more result files")
    docs = [load_result(p) for p in args.files]
    first = docs[0]
    merged = copy.deepcopy(first)
    for x in merged["results"]:
        x["runs"] = []
    merged["sittings"] = []
    seen = {}
    for path, doc in zip(args.files, docs):
        check_alike(first, doc, path, args.across_commits)
        rounds = complete_rounds(doc)
        if not rounds:
            raise UsageError("%s has no complete round" % path)
        twice = [r for r in rounds if r in seen]
        if twice:
            raise UsageError("round %d is in %s and %s: start a later sitting with --first-round"
                             % (twice[0], seen[twice[0]], path))
        seen.update((r, path) for r in rounds)
        for x in merged["results"]:
            source = next(y for y in doc["results"]
                          if y["configuration"] == x["configuration"] and y["clients"] == x["clients"])
            x["runs"] += [r for r in source["runs"] if r["run"] in rounds]
        merged["sittings"].append({"file": os.path.abspath(path), "date": doc["system"].get("date"),
                                   "git_commit": doc["system"].get("git_commit"),
                                   "rounds": rounds, "complete": bool(doc.get("complete")),
                                   "bursty": doc.get("bursty")})
        log("%s: rounds %d-%d, %d complete%s" % (path, rounds[0], rounds[-1], len(rounds),
                                                  "" if doc.get("complete") else " (the sitting was interrupted)"))
    for x in merged["results"]:
        x["runs"].sort(key=lambda r: r["run"])
        x["summary"] = summarise(x["runs"], merged["trim"])
    commits = list(dict.fromkeys(s["git_commit"] for s in merged["sittings"]))
    if len(commits) > 1:
        # the joined series names every commit it ran, never one of them alone
        merged["system"]["git_commit"] = "+".join(str(c) for c in commits)
        log("the sittings ran %d commits (%s), joined as asked (--across-commits)"
            % (len(commits), ", ".join(str(c) for c in commits)))
    merged["runs"] = len(seen)
    merged["first_round"] = min(seen)
    merged["paired"] = paired_all(merged)
    merged["complete"] = True
    os.makedirs(args.out, exist_ok=True)
    write_outputs(merged, args.out)
    return 0
