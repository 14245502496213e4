"""numabench run: fresh clusters, runs interleaved per configuration, a
checkpoint before each, everything stopped and reset on exit."""

import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import tempfile
import threading

from ._common import HERE, TRIM_TOLERANCE, UsageError, log
from ._stats import balanced_order, mean, percentile, stdev
from ._pgbench import measured, measured_window, parse_log, parse_summary, running_at
from . import _system
from ._system import (Machine, cmd_reset, cmd_tune, read, saved_state,
    system_items, write)
from ._cluster import Cluster, pg_dirs
from . import _companion
from ._workloads import TWO_ROLES, bursty_rate, load_data, size_bursts, stage_workloads, workload_files
from ._config import parse_config, system_overview
from ._evidence import (CpuSampler, allowed, node_cpus, numasched_counters, numastat_delta,
    parse_cpu_list, read_numastat, sample_server, scheduler_cpu, scheduler_cpu_ms)
from ._summary import paired_all, summarise
from ._output import write_outputs


# pgbench runs this many whole seconds past a run's measured part, and the
# sample of its server is taken this long after the measured part's planned
# end (counted from before pgbench starts, so its connections take from it:
# about 0.7 s in a VM under emulation), and counts as after it only this
# long past its real end
RUN_ON_S = 3
SAMPLE_AFTER_S = 2.0
SAMPLE_GUARD_S = 0.25


def one_run(cluster, args, clients, workdir, tag, duration=None, seed=None, keep_log_in=None):
    """CHECKPOINT, then one pgbench run with a per-transaction log, kept as
    TAG.log in "keep_log_in" if given; an open loop's arrivals drawn with
    pgbench's --random-seed "seed" when given."""
    duration = duration or args.duration
    cluster.psql("CHECKPOINT")
    # which start of its server a run had (--restart-each-round)
    server_started = cluster.psql("SELECT pg_postmaster_start_time()")
    logdir = tempfile.mkdtemp(prefix="log-", dir=workdir)
    if os.getuid() == 0:
        shutil.chown(logdir, "postgres", "postgres")
    prefix = os.path.join(logdir, tag)
    threads = max(1, min(clients, os.cpu_count() or 1))
    cpus_of = node_cpus()
    numastat_before, stats_before = read_numastat(), numasched_counters(cluster)
    # what numasched's own worker costs: its CPU time up to the sample
    scheduler_before = scheduler_cpu(cluster)
    # pgbench runs on past the measured part, so that the sample of what
    # exists only while its backends do (their memory, their masks) costs
    # the measured transactions nothing: reading numa_maps under emulation
    # and a query beside them took the tail of every run's last second
    sample = {}
    sampler = threading.Timer(duration + SAMPLE_AFTER_S, sample_server,
                              (cluster, cpus_of, scheduler_before, sample))
    sampler.start()
    server_cpus = parse_cpu_list((allowed(cluster.postmaster_pid()) or {}).get("cpus"))
    pgbench_cpus = parse_cpu_list(args.pgbench_cpus) if args.pgbench_cpus else None
    cpu = CpuSampler(Machine(args.sysfs), None if pgbench_cpus is None else server_cpus | pgbench_cpus)
    cpu.start()
    streams = []
    if args.workload == "bursty":
        # open loop: queries start at random times, at a rate that keeps
        # --utilisation of the CPUs busy, whether or not earlier ones ended
        streams = ["-R", "%.2f" % args.bursty_rate, "-D", "burst_rows=%d" % args.burst_rows]
    analytic = None
    if args.workload == "two-roles":
        # the analytic role's stream beside the OLTP role's, for as long; at
        # --rate 0 the OLTP role runs as fast as it can
        streams = ["-U", TWO_ROLES[0]] + (["-R", str(args.rate)] if args.rate > 0 else [])
        analytic_clients = int(cluster.settings.get("bench.analytic_clients", args.analytic_clients))
        if analytic_clients > 0:
            analytic = cluster.pgbench_start(
                ["-n", "-U", TWO_ROLES[1], "-c", str(analytic_clients), "-j", "1",
                 "-T", str(duration + RUN_ON_S)]
                + shlex.split(args.pgbench_args or "")
                + workload_files("two-roles-analytic", 0, 0, args.workload_dir), cpus=args.pgbench_cpus)
    if streams and "-R" in streams and seed is not None:
        # the same arrival times for every configuration of a round (common
        # random numbers): a pair differs by what the server did, not by how
        # many transactions the schedule happened to ask for
        streams = streams + ["--random-seed=%d" % seed]
    r = cluster.pgbench(["-n", "-c", str(clients), "-j", str(threads), "-T", str(duration + RUN_ON_S),
                         "-l", "--log-prefix=" + prefix] + streams + shlex.split(args.pgbench_args or "")
                        + workload_files(args.workload, args.oltp_weight, args.analytic_weight,
                                         args.workload_dir),
                        cpus=args.pgbench_cpus)
    if analytic is not None:
        analytic_out, analytic_err = analytic.communicate()
        if analytic.returncode not in (0, 2) or "tps = " not in analytic_out:
            raise RuntimeError("the analytic pgbench on %s failed: %s" % (
                cluster.name, (analytic_err or analytic_out).strip()[-2000:]))
    if r.returncode not in (0, 2) or "tps = " not in r.stdout:
        raise RuntimeError("pgbench on %s failed: %s" % (cluster.name, (r.stderr or r.stdout).strip()[-2000:]))
    sampler.join()
    lines = []
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            lines.extend(f)
    # the measured part: "duration" seconds from the first transaction,
    # ending before the sample if the connections took long
    sampled = sample.get("time")
    rows = parse_log(lines)
    window = measured_window(rows, duration, not_after=sampled and sampled - SAMPLE_GUARD_S)
    if window is None:
        raise RuntimeError("pgbench on %s completed no transaction in %d s" % (cluster.name, duration))
    if window[1] - window[0] < duration:
        log("%s: its connections took long, the measured part ends %.2f s early, before the sample"
            % (tag, duration - (window[1] - window[0])))
    latencies, failures = measured(rows, window[1])
    # measured transactions still running when the sample began: it may have
    # slowed them
    overlapped = running_at(rows, window[1], sampled) if sampled else 0
    if overlapped:
        log("%s: %d measured transactions were still running when the server was sampled" % (tag, overlapped))
    cpu_use = cpu.result(window[:2])
    numa = {"numastat": numastat_delta(numastat_before, read_numastat()),
            "private_memory": sample.get("locality") or {}}
    if stats_before is not None:
        numa["workloads"] = sample.get("workloads") or []
        after = numasched_counters(cluster)
        numa["numasched_stats"] = {k: after[k] - stats_before.get(k, 0) for k in after}
    scheduler_ms = scheduler_cpu_ms(scheduler_before, sample.get("scheduler"))
    if scheduler_ms is not None:
        numa["scheduler_cpu_ms"] = scheduler_ms
    if keep_log_in:
        with open(os.path.join(keep_log_in, tag + ".log"), "w") as f:
            f.writelines(lines)
    shutil.rmtree(logdir, ignore_errors=True)
    measured_s = window[1] - window[0]
    transactions = window[2]
    result = {
        "server_started": server_started,
        "numa": numa,
        "cpu": cpu_use,
        "pinning": sample.get("pinned") or {},
        # what completed in the measured part, as pgbench's summary would
        # count it had the run ended there
        "tps": transactions / measured_s,
        "transactions": transactions,
        "measured_s": round(measured_s, 3),
        "measured_until": window[1],
        "sampled_after_s": round(sampled - window[1], 3) if sampled else None,
        "measured_running_at_sample": overlapped,
        "failed": failures,
        "latency_avg_ms": mean(latencies),
        "latency_stddev_ms": stdev(latencies),
        "p95_ms": percentile(latencies, 95),
        "p99_ms": percentile(latencies, 99),
        "logged_transactions": len(latencies),
        "logged_failures": failures,
    }
    if args.workload != "two-roles" and cpu_use.get("busy_cpu_s") is not None and transactions:
        # what a transaction cost all the CPUs (two-roles' analytic role
        # would count in the time, not in the transactions)
        result["cpu_ms_per_txn"] = 1000.0 * cpu_use["busy_cpu_s"] / transactions
    if streams:
        # at a fixed rate, latency is measured from each transaction's
        # scheduled start; for two-roles, tps, latency and percentiles above
        # are the OLTP role's
        result["p50_ms"] = percentile(latencies, 50)
    if args.workload == "two-roles":
        result["analytic_tps"] = parse_summary(analytic_out)["tps"] if analytic is not None else 0.0
    return result


class Interrupted(Exception):
    pass


def on_signal(signum, frame):
    raise Interrupted("interrupted by signal %d" % signum)


def parse_clients(text):
    """--clients: positive client counts, "1,2,4"."""
    try:
        clients = [int(c) for c in str(text).split(",")]
    except ValueError:
        clients = []
    if not clients or min(clients) < 1:
        raise UsageError("--clients takes positive client counts like 1,2,4, not \"%s\"" % text)
    return clients




def cmd_run(args):
    configs = [parse_config(c) for c in (args.config or ["baseline", "numasched"])]
    names = [n for n, _ in configs]
    if len(set(names)) != len(names):
        raise UsageError("configuration names must differ: %s" % ", ".join(names))
    for _, settings in configs:
        if args.huge_pages:
            settings["huge_pages"] = "on"
        settings.setdefault("huge_pages", "off")
    clients = parse_clients(args.clients)
    if "--sampling-rate" in (args.pgbench_args or ""):
        raise UsageError("--pgbench-args cannot take --sampling-rate: tps and latency come from the whole "
                         "per-transaction log")
    bindir, pkglibdir = pg_dirs(args.pg_config)
    if any(settings.get("bench.companion") == "on" for _, settings in configs):
        _companion.check(bindir)
    library = os.path.join(pkglibdir, "numasched.so")
    if any("numasched" in settings.get("shared_preload_libraries", "") for _, settings in configs) \
            and not os.path.exists(library):
        raise UsageError("numasched is not installed in the PostgreSQL of %s (no %s): "
                         "make PG_CONFIG=%s install" % (args.pg_config, library, args.pg_config))
    out = args.out or os.path.join(HERE, "results", datetime.datetime.now().strftime("%Y%m%d-%H%M%S-")
                                   + args.workload)
    os.makedirs(out, exist_ok=True)
    keep_logs_in = os.path.join(out, "logs") if args.keep_logs else None
    if keep_logs_in:
        # a run before into the same --out leaves none of its logs to mix in
        shutil.rmtree(keep_logs_in, ignore_errors=True)
        os.makedirs(keep_logs_in)
    workdir = tempfile.mkdtemp(prefix="numabench-")
    if os.getuid() == 0:
        shutil.chown(workdir, "postgres", "postgres")
    os.chmod(workdir, 0o755)
    args.workload_dir = stage_workloads(workdir)
    clusters = []
    tuned = False
    balancing_before = None
    old_int, old_term = signal.signal(signal.SIGINT, on_signal), signal.signal(signal.SIGTERM, on_signal)
    try:
        if args.tune:
            try:
                cmd_tune(args, run_pid=os.getpid())
            finally:
                # what was written is saved: undone at the end, even after
                # a signal in the middle (not another boot's state)
                state = saved_state(Machine(args.sysfs))
                tuned = state is not None and state.get("run_pid") == os.getpid()
        if args.numa_balancing:
            balancing_before = read(_system.NUMA_BALANCING)
            if balancing_before is None:
                raise UsageError("--numa-balancing: this kernel has no %s" % _system.NUMA_BALANCING)
            try:
                write(_system.NUMA_BALANCING, "1" if args.numa_balancing == "on" else "0")
            except OSError as e:
                raise UsageError("--numa-balancing: cannot write %s (%s): run as root" % (_system.NUMA_BALANCING,
                                                                                          e.strerror))
        items = system_items(Machine(args.sysfs))
        port = args.port
        for name, settings in configs:
            c = Cluster(name, settings, workdir, port, bindir, args.server_numactl, args.server_cgroup)
            port += 1
            clusters.append(c)
            log("setting up %s: initdb, start, load %s data (scale %d)" % (name, args.workload, args.scale))
            c.initdb()
            c.start()
            load_data(c, args.workload, args.scale, args.workload_dir)
            c.apply_role_settings()
            if "numasched" in c.settings.get("shared_preload_libraries", ""):
                c.psql("CREATE EXTENSION IF NOT EXISTS numasched")
        if args.workload == "bursty":
            # the same queries and rate for every configuration: sized on the
            # first, for the CPUs its postmaster may use
            args.burst_rows = size_bursts(clusters[0], args.burst_ms, args.workload_dir)
            server_cpus = len(parse_cpu_list((allowed(clusters[0].postmaster_pid()) or {}).get("cpus")) or
                              os.sched_getaffinity(0))
            args.bursty_rate = bursty_rate(args.utilisation, args.burst_ms, server_cpus)
            log("bursty: %d rows per query for about %d ms, %.1f queries/s for %d%% of %d CPUs" % (
                args.burst_rows, args.burst_ms, args.bursty_rate, args.utilisation, server_cpus))
        results = [{"configuration": c.name, "clients": n, "runs": []} for n in clients for c in clusters]
        def warm_up():
            for c in clusters:
                log("warm-up of %s: %d s, not counted" % (c.name, args.warmup))
                with _companion.loaded(c, bindir):
                    one_run(c, args, max(clients), workdir, "%s-warmup" % c.name, duration=args.warmup)
        if args.warmup > 0:
            warm_up()
        doc = {
            "numabench": 1, "complete": False, "workload": args.workload, "scale": args.scale,
            "duration_s": args.duration, "runs": args.runs, "first_round": args.first_round,
            "restart_each_round": args.restart_each_round,
            # since 6 December 2026; before, the sample fell inside each run
            "sampled_after_measured": True, "clients": clients, "trim": args.trim,
            "trim_tolerance": TRIM_TOLERANCE if args.trim else None, "warmup_s": args.warmup,
            "pgbench_args": args.pgbench_args,
            "rate": args.rate if args.workload == "two-roles" else None,
            "analytic_clients": args.analytic_clients if args.workload == "two-roles" else None,
            "bursty": {"utilisation_percent": args.utilisation, "burst_ms": args.burst_ms,
                       "burst_rows": args.burst_rows, "rate": args.bursty_rate}
            if args.workload == "bursty" else None,
            "weights": {"oltp": args.oltp_weight, "analytic": args.analytic_weight}
            if args.workload == "mixed" else None,
            "system": system_overview(args, bindir, items),
            "configurations": [{"name": c.name, "settings": c.settings, "background_way": c.background_way()}
                               for c in clusters],
            "results": results, "paired": [],
        }
        # rounds numbered from --first-round: a later sitting continues a series
        # (the same seeds and order a longer run would have had)
        for i in range(args.first_round - 1, args.first_round - 1 + args.runs):
            if args.restart_each_round and i > args.first_round - 1:
                for c in clusters:
                    c.stop()
                    c.start()
                # every round as warm as the first
                if args.warmup > 0:
                    warm_up()
            for n in clients:
                # each configuration at each place of a round as often as
                # the others: a drift within a round hits them all alike
                for c in [clusters[k] for k in balanced_order(len(clusters), i)]:
                    with _companion.loaded(c, bindir):
                        r = one_run(c, args, n, workdir, "%s-%d-%d" % (c.name, n, i + 1), seed=i + 1,
                                    keep_log_in=keep_logs_in)
                    r["run"] = i + 1
                    next(x for x in results if x["configuration"] == c.name and x["clients"] == n)["runs"].append(r)
                    log("run %d/%d, %d clients, %-10s tps %10.1f  latency %.3f ms" % (
                        i + 1, args.first_round - 1 + args.runs, n, c.name, r["tps"], r["latency_avg_ms"]))
                    # what ran is kept if the comparison is interrupted
                    for x in results:
                        if x["runs"]:
                            x["summary"] = summarise(x["runs"], args.trim)
                    with open(os.path.join(out, "results.json"), "w") as f:
                        json.dump(doc, f, indent=1)
        for x in results:
            x["summary"] = summarise(x["runs"], args.trim)
        doc["paired"] = paired_all(doc)
        doc["complete"] = True
    finally:
        for c in clusters:
            c.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        if tuned:
            cmd_reset(args)
        if balancing_before is not None:
            write(_system.NUMA_BALANCING, balancing_before)
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    write_outputs(doc, out)
    return 0
