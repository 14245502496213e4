#!/usr/bin/python3
"""Tests of bench/numabench: statistics, pgbench parsing, configurations, the
workloads' plans, and a smoke run + compare.  Prints TAP (run with prove
--exec /usr/bin/python3)."""

import contextlib
import errno
import importlib.machinery
import io
import importlib.util
import json
import math
import os
import shutil
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader("numabench", os.path.join(HERE, "numabench"))
spec = importlib.util.spec_from_loader("numabench", loader)
nb = importlib.util.module_from_spec(spec)
loader.exec_module(nb)

# pgbench 15's own output, captured from real runs
SUMMARY_OK = """pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: <builtin: select only>
scaling factor: 1
query mode: simple
number of clients: 2
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 24356
number of failed transactions: 0 (0.000%)
latency average = 0.162 ms
initial connection time = 23.731 ms
tps = 12321.658213 (without initial connection time)
"""

SUMMARY_FAILURES = """pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: /tmp/pgb/ser.sql
scaling factor: 1
query mode: simple
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 1016
number of failed transactions: 1931 (65.524%)
number of serialization failures: 1931 (65.524%)
number of deadlock failures: 0 (0.000%)
latency average = 2.701 ms (including failures)
initial connection time = 16.735 ms
tps = 510.475038 (without initial connection time)
"""

LOG_LINES = """0 1 1140 0 1796045193 849553
0 2 88 0 1796045193 849658
1 1 serialization 0 1796045198 803491
1 2 failed 0 1796045198 808797
0 3 5987 0 1796045198 815254
""".splitlines()


def t_p_by_integration(t, df, steps=200000):
    """Two-sided p of Student's t by Simpson's rule on the density: an
    independent check of the continued-fraction incomplete beta."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    pdf = lambda x: c * (1 + x * x / df) ** (-(df + 1) / 2)
    t = abs(t)
    h = t / steps
    area = pdf(0) + pdf(t) + sum((4 if k % 2 else 2) * pdf(k * h) for k in range(1, steps))
    return 1 - 2 * area * h / 3


class Statistics(unittest.TestCase):
    def test_trim_keeps_a_tight_series(self):
        kept, dropped = nb.trim([100, 100.5, 99.5, 100.2])
        self.assertEqual(dropped, [])
        self.assertEqual(len(kept), 4)

    def test_trim_drops_one_outlier(self):
        kept, dropped = nb.trim([100, 101, 99, 100, 120])
        self.assertEqual(dropped, [120])
        self.assertEqual(kept, [99, 100, 100, 101])

    def test_trim_drops_the_farther_end_first(self):
        # mean 100: both ends 50% off, the high end goes first; then 50 is 43% off
        kept, dropped = nb.trim([50, 100, 100, 100, 150])
        self.assertEqual(dropped, [150, 50])
        self.assertEqual(kept, [100, 100, 100])

    def test_trim_on_the_threads_shape_of_data(self):
        """The shape the REL_16-vs-REL_15 thread trimmed: pinned, stable
        runs within a few tenths of a percent, and now and then a run where a
        core dropped to a lower frequency (C1/C1E), a few percent slower.
        Those go, one end at a time, and what is left is within 1% of its
        mean; the tight runs all stay."""
        steady = [101210, 101380, 101045, 101500, 101290, 101160, 101420, 101330, 101090, 101260,
                  101370, 101200, 101450, 101310, 101120, 101280]
        slow = [97650, 96020, 98880]
        kept, dropped = nb.trim(steady + slow)
        self.assertEqual(sorted(dropped), sorted(slow))
        self.assertEqual(sorted(kept), sorted(steady))
        m = nb.mean(kept)
        self.assertTrue(all(abs(v - m) / m <= 0.01 for v in kept))
        self.assertLess(nb.cv(kept), 0.3)
        # the slowest goes first: it deviates most from the mean
        self.assertEqual(dropped[0], 96020)

    def test_trim_keeps_two_points(self):
        kept, dropped = nb.trim([1, 100])
        self.assertEqual((kept, dropped), ([1, 100], []))

    def test_welch_wikipedia_example(self):
        # Welch's t-test, Wikipedia, example 1: t = -2.46, df = 24.9, p = 0.021
        a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
        b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
        t, df, p = nb.welch(b, a)
        self.assertAlmostEqual(t, -2.46, places=2)
        self.assertLess(abs(df - 24.9), 0.1)
        self.assertAlmostEqual(p, 0.021, places=3)

    def test_t_distribution_against_integration(self):
        for t, df in ((2.228, 10), (1.0, 3.5), (0.3, 40), (4.0, 7.25), (2.0, 1000)):
            self.assertAlmostEqual(nb.t_two_sided_p(t, df), t_p_by_integration(t, df), places=7)
        self.assertAlmostEqual(nb.t_two_sided_p(2.228, 10), 0.0500, places=4)

    def test_welch_identical_samples(self):
        self.assertEqual(nb.welch([5, 5, 5], [5, 5, 5])[2], 1.0)

    def test_cv_and_percentiles(self):
        self.assertAlmostEqual(nb.cv([10, 12, 14]), 100 * 2 / 12)
        values = list(range(1, 101))
        self.assertEqual(nb.percentile(values, 95), 95)
        self.assertEqual(nb.percentile(values, 99), 99)
        self.assertEqual(nb.percentile([5, 1, 3], 50), 3)
        self.assertEqual(nb.percentile([7], 99), 7)

    def test_bootstrap_interval(self):
        ratios = [0.98, 1.01, 1.0, 0.99, 1.02, 1.0, 1.03, 0.97, 1.0, 1.01]
        lo, hi = nb.bootstrap_median_ci(ratios)
        self.assertLessEqual(lo, 1.0)
        self.assertGreaterEqual(hi, 1.0)
        self.assertEqual((lo, hi), nb.bootstrap_median_ci(ratios), "seeded: the same every time")
        lo, hi = nb.bootstrap_median_ci([1.10, 1.12, 1.09, 1.11, 1.13, 1.10, 1.12, 1.11])
        self.assertGreater(lo, 1.0, "a clear 10% gain lies above 1.0")


class Parsing(unittest.TestCase):
    def test_summary(self):
        s = nb.parse_summary(SUMMARY_OK)
        self.assertEqual(s["tps"], 12321.658213)
        self.assertEqual(s["latency_avg_ms"], 0.162)
        self.assertEqual(s["transactions"], 24356)
        self.assertEqual(s["failed"], 0)
        self.assertEqual(s["clients"], 2)
        self.assertEqual(s["scale"], 1)

    def test_summary_with_failed_transactions(self):
        s = nb.parse_summary(SUMMARY_FAILURES)
        self.assertEqual(s["failed"], 1931)
        self.assertEqual(s["latency_avg_ms"], 2.701)
        self.assertEqual(s["tps"], 510.475038)

    def test_summary_without_tps_is_an_error(self):
        with self.assertRaises(ValueError):
            nb.parse_summary("pgbench: error: connection failed")

    def test_log(self):
        latencies, failures = nb.parse_log(LOG_LINES + ["", "garbage"])
        self.assertEqual(latencies, [1.14, 0.088, 5.987])
        self.assertEqual(failures, 2)


class NumaEvidence(unittest.TestCase):
    def test_cpu_list(self):
        self.assertEqual(nb.parse_cpu_list("0-3,8\n"), {0, 1, 2, 3, 8})
        self.assertEqual(nb.parse_cpu_list(""), set())

    def test_private_pages_skip_shared_memory_and_files(self):
        text = "\n".join([
            "55d5c3a1b000 default heap anon=300 dirty=300 N0=200 N1=100 kernelpagesize_kB=4",
            "7f0000000000 default file=/dev/zero\\040(deleted) dirty=50 mapmax=3 N0=50 kernelpagesize_kB=4",
            "7f0800000000 default file=/anon_hugepage\\040(deleted) huge dirty=2 N1=2 kernelpagesize_kB=2048",
            "7f1000000000 default file=/usr/lib/x.so mapped=10 N0=10 kernelpagesize_kB=4",
            "7f2000000000 default anon=512 dirty=512 N1=512 kernelpagesize_kB=4",
            "7f3000000000 default anon=1 dirty=1 N0=1 kernelpagesize_kB=2048",
            "7ffd00000000 default stack anon=5 dirty=5 N1=5 kernelpagesize_kB=4",
        ])
        self.assertEqual(nb.private_pages_by_node(text), {0: 200 + 512, 1: 100 + 512 + 5})

    def test_numastat_and_delta(self):
        with tempfile.TemporaryDirectory() as root:
            for node, hit in ((0, 100), (1, 7)):
                d = os.path.join(root, "devices/system/node/node%d" % node)
                os.makedirs(d)
                with open(os.path.join(d, "numastat"), "w") as f:
                    f.write("numa_hit %d\nnuma_miss 2\nnuma_foreign 0\ninterleave_hit 1\n"
                            "local_node %d\nother_node 3\n" % (hit, hit - 1))
                with open(os.path.join(d, "cpulist"), "w") as f:
                    f.write("%d\n" % node)
            before = nb.read_numastat(root)
            self.assertEqual(before[0]["numa_hit"], 100)
            self.assertEqual(set(before[1]), set(nb.NUMASTAT_COUNTERS))
            after = {0: dict(before[0], numa_hit=150, local_node=149), 1: dict(before[1])}
            self.assertEqual(nb.numastat_delta(before, after)["0"]["numa_hit"], 50)
            self.assertEqual(nb.numastat_delta(before, after)["1"]["other_node"], 0)
            self.assertEqual(nb.node_cpus(root), {0: {0}, 1: {1}})

    def test_summary(self):
        numa = [{"numastat": {"0": {"local_node": 90, "other_node": 10}}, "private_memory": {"percent": 80.0},
                 "numasched_stats": {"placements": 2, "moves": 1, "pages_migrated": 5}},
                {"numastat": {"0": {"local_node": 60, "other_node": 40}}, "private_memory": {"percent": 100.0},
                 "numasched_stats": {"placements": 3, "moves": 0, "pages_migrated": 0}}]
        s = nb.summarise_numa(numa)
        self.assertAlmostEqual(s["kernel_local_percent"], 75.0)
        self.assertAlmostEqual(s["private_on_own_node_percent"], 90.0)
        self.assertEqual(s["numasched_stats"], {"placements": 5, "moves": 1, "pages_migrated": 5})
        self.assertEqual(nb.numa_line(s), "  numa: private pages on their process's node 90.0%; kernel "
                         "allocations local 75.0%; numasched: 5 placed, 1 moves, 5 pages migrated")
        self.assertEqual(nb.summarise_numa([]), {})


class NumaBalancing(unittest.TestCase):
    def setUp(self):
        self.saved = nb.NUMA_BALANCING
        self.dir = tempfile.mkdtemp()
        nb.NUMA_BALANCING = os.path.join(self.dir, "numa_balancing")

    def tearDown(self):
        nb.NUMA_BALANCING = self.saved
        shutil.rmtree(self.dir)

    def test_states(self):
        self.assertEqual(nb.numa_balancing(), "unavailable")
        for value, state in (("0", "off"), ("1", "on"), ("2", "on (mode 2)")):
            with open(nb.NUMA_BALANCING, "w") as f:
                f.write(value + "\n")
            self.assertEqual(nb.numa_balancing(), state)
        self.assertTrue(any("kernel.numa_balancing is on (mode 2)" in n for n in nb.observations()[2]))

    def test_run_refuses_a_kernel_without_it(self):
        with self.assertRaisesRegex(nb.UsageError, "--numa-balancing: this kernel has no"):
            nb.cmd_run(nb.build_parser().parse_args(
                ["run", "--pg-config", "/usr/lib/postgresql/15/bin/pg_config", "--config", "baseline",
                 "--numa-balancing", "off", "--out", self.dir]))


class Table(unittest.TestCase):
    def doc(self, tps):
        runs = [{"tps": t, "latency_avg_ms": 1.0, "p95_ms": 2.0, "p99_ms": 3.0, "run": i + 1}
                for i, t in enumerate(tps)]
        return {"workload": "oltp-ro", "scale": 1, "runs": len(tps), "duration_s": 1,
                "system": {"frequency": "not pinned"}, "paired": [],
                "results": [{"configuration": "a", "clients": 2, "runs": runs,
                             "summary": nb.summarise(runs, False)}]}

    def test_unstable_series_warns(self):
        text = nb.table(self.doc([100.0, 130.0, 90.0]))
        self.assertIn("WARNING: a with 2 clients is unstable: tps CV 19.", text)
        self.assertNotIn("WARNING", nb.table(self.doc([100.0, 101.0, 99.5])))


class Configurations(unittest.TestCase):
    def test_builtins(self):
        self.assertEqual(nb.parse_config("baseline")[1], {"shared_preload_libraries": "''"})
        self.assertEqual(nb.parse_config("numasched")[1], {"shared_preload_libraries": "'numasched'"})

    def test_variant(self):
        name, settings = nb.parse_config("spread=numasched,numasched.parallel_placement=spread,"
                                         "numasched.nodes=0-1")
        self.assertEqual(name, "spread")
        self.assertEqual(settings["numasched.parallel_placement"], "spread")
        # a list would not parse unquoted in postgresql.conf
        self.assertEqual(settings["numasched.nodes"], "'0-1'")

    def test_role_settings(self):
        name, settings = nb.parse_config("split=numasched,role.oltp.numasched.cpu_groups=0,"
                                         "role.analytics.numasched.cpu_groups=1-2,role.oltp.work_mem=8MB")
        self.assertEqual(settings["role.oltp.numasched.cpu_groups"], "0")
        self.assertEqual(settings["role.analytics.numasched.cpu_groups"], "'1-2'")
        self.assertEqual(settings["role.oltp.work_mem"], "8MB")
        with self.assertRaises(nb.UsageError):
            nb.parse_config("x=numasched,role.oltp=1")
        self.assertEqual(settings["shared_preload_libraries"], "'numasched'")

    def test_refused(self):
        for text in ("other", "x=elsewhere", "x=numasched,oops", "1x=baseline"):
            with self.assertRaises(nb.UsageError, msg=text):
                nb.parse_config(text)

    def test_cli_errors_exit_2(self):
        for argv in (["run", "--workload", "nosuch"], ["frob"], ["run", "--runs", "0"],
                     ["compare", "/nonexistent.json", "--old", "a", "--new", "b"],
                     ["run", "--pg-config", "/nonexistent/pg_config"], ["run", "--clients", "2,x"],
                     ["run", "--clients", "0"], ["run", "--warmup", "-1"], ["run", "--pgbench-args", "'-M"]):
            self.assertEqual(nb.main(argv), 2, argv)

    def test_pg_config_without_numasched(self):
        # a PostgreSQL whose pkglibdir has no numasched.so: refused before any server starts
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "pg_config")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho /usr/lib/postgresql/15/bin\necho %s\n" % tmp)
            os.chmod(fake, 0o755)
            with self.assertRaisesRegex(nb.UsageError, re.escape(
                    "numasched is not installed in the PostgreSQL of %s (no %s/numasched.so)" % (fake, tmp))):
                nb.cmd_run(nb.build_parser().parse_args(["run", "--pg-config", fake, "--out", tmp]))

    def test_mixed_weights(self):
        args = nb.workload_files("mixed", 9, 1)
        self.assertIn("-f", args)
        self.assertTrue(args[1].endswith("oltp_ro.sql@9"))
        self.assertTrue(args[3].endswith("analytic_q1.sql@1"))


def have_postgres():
    return shutil.which("pg_config") is not None and (os.getuid() != 0 or shutil.which("runuser"))


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")
class WithServers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="numabench-test-")
        os.chmod(cls.tmp, 0o755)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_analytic_plans_use_parallel_workers(self):
        workdir = tempfile.mkdtemp(dir=self.tmp)
        os.chmod(workdir, 0o777)
        c = nb.Cluster("plans", {"shared_preload_libraries": "'numasched'"}, workdir, 54790, nb.pg_dirs("pg_config")[0])
        try:
            c.initdb()
            c.start()
            nb.load_data(c, "analytic", 1, nb.stage_workloads(workdir))
            for script in ("analytic_q1.sql", "analytic_join.sql"):
                with open(os.path.join(nb.WORKLOAD_DIR, script)) as f:
                    query = "\n".join(l for l in f.read().splitlines() if not l.startswith("--"))
                plan = c.psql("EXPLAIN (ANALYZE, COSTS OFF) " + query.rstrip().rstrip(";"))
                self.assertRegex(plan, r"Workers Launched: [1-9]", script)
                if script == "analytic_join.sql":
                    self.assertRegex(plan, r"Gather[^\n]*\n(.*\n)*.*Hash Join", script)
        finally:
            c.stop()

    def test_smoke_run_and_compare(self):
        out = os.path.join(self.tmp, "smoke")
        # pinned: the server on CPU 1 with its memory on node 0, pgbench on CPU 0
        pin = len(os.sched_getaffinity(0)) >= 2
        rc = nb.main(["run", "--pg-config", "/usr/lib/postgresql/15/bin/pg_config", "--warmup", "1",
                      "--pgbench-args", "-M prepared"]
                     + (["--server-numactl", "--physcpubind=1 --membind=0", "--pgbench-cpus", "0"] if pin else []) + [
                      "--config", "a=baseline", "--config", "b=numasched", "--runs", "2",
                      "--duration", "2", "--scale", "1", "--trim", "--out", out, "--port", "54760"])
        self.assertEqual(rc, 0)
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
        with open(os.path.join(out, "table.txt")) as f:
            table = f.read()
        self.assertEqual([c["name"] for c in doc["configurations"]], ["a", "b"])
        self.assertEqual(len(doc["results"]), 2)
        for x in doc["results"]:
            self.assertEqual(len(x["runs"]), 2)
            for key in ("tps_mean", "tps_stddev", "tps_cv", "tps_mean_trimmed", "tps_cv_trimmed",
                        "latency_avg_ms_mean", "p95_ms_mean", "p99_ms_mean"):
                self.assertIsInstance(x["summary"][key], float, key)
            for r in x["runs"]:
                for key in ("tps", "latency_avg_ms", "p95_ms", "p99_ms", "failed", "dropped", "run"):
                    self.assertIn(key, r)
                self.assertGreater(r["tps"], 0)
                self.assertGreater(r["logged_transactions"], 0)
            self.assertIn("%.1f" % x["summary"]["tps_mean"], table)
        # the NUMA evidence of every run: the kernel's counters, where the
        # server's private memory is, and numasched's counters where it is loaded
        for x in doc["results"]:
            for r in x["runs"]:
                self.assertIsInstance(r["numa"]["numastat"]["0"]["numa_hit"], int)
                self.assertGreaterEqual(r["numa"]["private_memory"]["processes"], 3)
                self.assertGreater(r["numa"]["private_memory"]["private_pages"], 0)
                if x["configuration"] == "b":
                    self.assertGreaterEqual(r["numa"]["numasched_stats"]["placements"], 1)
                else:
                    self.assertNotIn("numasched_stats", r["numa"])
            self.assertIsNotNone(x["summary"]["private_on_own_node_percent"])
        self.assertIn("numa: private pages on their process's node", table)
        # what the kernel let each of them use, read from /proc during every run
        for x in doc["results"]:
            for r in x["runs"]:
                if not pin:
                    continue
                self.assertEqual(r["pinning"]["postmaster"], {"cpus": "1", "mems": "0"}, x["configuration"])
                self.assertEqual(r["pinning"]["backend"], {"cpus": "1", "mems": "0"}, x["configuration"])
                self.assertEqual(r["pinning"]["pgbench"]["cpus"], "0", x["configuration"])
                self.assertGreaterEqual(r["cpu"]["steal_percent"], 0.0)
                if nb.cpuinfo_mhz():
                    self.assertLessEqual(r["cpu"]["mhz_min"], r["cpu"]["mhz_max"])
        self.assertIn("  cpu: steal up to", table)
        self.assertTrue(doc["complete"])
        self.assertEqual(doc["warmup_s"], 1)
        self.assertEqual(doc["pgbench_args"], "-M prepared")
        for x in doc["results"]:
            if x["summary"]["tps_cv"] > nb.UNSTABLE_CV:
                self.assertIn("WARNING: %s with 2 clients is unstable" % x["configuration"], table)
        self.assertEqual(doc["paired"][0]["a"], "a")
        self.assertEqual(len(doc["paired"][0]["ratios"]), 2)
        for key in nb.OVERVIEW_KEYS:
            self.assertIn(key, doc["system"])
        self.assertIn(doc["system"]["frequency"], ("pinned", "not pinned"))
        self.assertTrue(os.path.exists(os.path.join(out, "plot.png")))
        self.assertEqual(nb.main(["compare", os.path.join(out, "results.json"), "--old", "a", "--new", "b"]), 0)
        self.assertEqual(nb.main(["compare", os.path.join(out, "results.json"),
                                  os.path.join(out, "results.json")]), 0)
        # unlike runs are refused
        doc["scale"] = 5
        other = os.path.join(self.tmp, "other.json")
        with open(other, "w") as f:
            json.dump(doc, f)
        self.assertEqual(nb.main(["compare", os.path.join(out, "results.json"), other]), 2)
        # no server is left running
        left = subprocess.run(["pgrep", "-f", "numabench-"], capture_output=True, text=True).stdout
        self.assertEqual(left.strip(), "", "servers left running")


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")
class TwoRoles(unittest.TestCase):
    def test_two_roles_in_their_classes(self):
        """The OLTP role at a fixed rate beside the analytic role; with role
        settings, each role's processes run in its own CPU group."""
        tmp = tempfile.mkdtemp(prefix="numabench-test-")
        os.chmod(tmp, 0o755)
        out = os.path.join(tmp, "two-roles")
        try:
            rc = nb.main(["run", "--pg-config", "/usr/lib/postgresql/15/bin/pg_config", "--warmup", "0",
                          "--workload", "two-roles", "--rate", "50", "--clients", "1",
                          "--config", "shared=numasched,numasched.groups_per_node=2",
                          "--config", "split=numasched,numasched.groups_per_node=2,"
                          "role.oltp.numasched.cpu_groups=0,role.analytics.numasched.cpu_groups=1,"
                          "role.analytics.numasched.spill=never",
                          "--runs", "2", "--duration", "3", "--scale", "1", "--out", out, "--port", "54770"])
            self.assertEqual(rc, 0)
            with open(os.path.join(out, "results.json")) as f:
                doc = json.load(f)
            with open(os.path.join(out, "table.txt")) as f:
                table = f.read()
            for x in doc["results"]:
                for r in x["runs"]:
                    self.assertGreater(r["analytic_tps"], 0)
                    self.assertLessEqual(r["p50_ms"], r["p99_ms"])
                    self.assertAlmostEqual(r["tps"], 50, delta=25)   # the OLTP role's fixed rate
                    groups = {w["role"]: set() for w in r["numa"]["workloads"]}
                    for w in r["numa"]["workloads"]:
                        groups[w["role"]].add(w["cpu_group"])
                    self.assertIn("oltp", groups)
                    self.assertIn("analytics", groups)
                    if x["configuration"] == "split":
                        self.assertEqual(groups["oltp"], {0}, r["numa"]["workloads"])
                        self.assertEqual(groups["analytics"], {1}, r["numa"]["workloads"])
            self.assertEqual(sorted(p["metric"] for p in doc["paired"]), ["analytic_tps", "p99_ms"])
            self.assertIn("OLTP role at 50 tps: p50", table)
            self.assertIn("median OLTP p99 latency ratio", table)
            self.assertIn("median analytic tps ratio", table)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------ tune, show, reset

def make_sysfs(root, driver):
    """A sysfs tree of 4 CPUs as each cpufreq driver users have lays it out
    (files as the kernel prints them, with a newline)."""
    def put(rel, value):
        path = os.path.join(root, "devices/system/cpu", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("%s\n" % value)
    put("online", "0-3")
    for cpu in range(4):
        put("cpu%d/online" % cpu, 1)
        if driver != "none":
            for state, (name, latency) in enumerate((("POLL", 0), ("C1", 2), ("C1E", 10))):
                put("cpu%d/cpuidle/state%d/name" % (cpu, state), name)
                put("cpu%d/cpuidle/state%d/latency" % (cpu, state), latency)
                put("cpu%d/cpuidle/state%d/disable" % (cpu, state), 0)
    if driver == "none":
        return
    policies = {0: "0 1", 2: "2 3"} if driver == "per-policy" else {c: str(c) for c in range(4)}
    for n, cpus in policies.items():
        d = "cpufreq/policy%d/" % n
        put(d + "affected_cpus", cpus)
        put(d + "related_cpus", cpus)
        put(d + "scaling_cur_freq", 2100000 + 100000 * n)
        if driver in ("acpi-cpufreq", "per-policy"):
            put(d + "scaling_driver", "acpi-cpufreq")
            put(d + "scaling_governor", "schedutil" if driver == "acpi-cpufreq" else "ondemand")
            put(d + "scaling_available_governors", "conservative ondemand userspace powersave performance schedutil")
            # boost on: cpuinfo_max_freq is the boost frequency, above scaling_max_freq
            put(d + "cpuinfo_max_freq", 3700000)
            put(d + "cpuinfo_min_freq", 1400000)
            put(d + "scaling_max_freq", 2900000)
            put(d + "scaling_min_freq", 1400000)
        elif driver == "intel_pstate":
            put(d + "scaling_driver", "intel_pstate")
            put(d + "scaling_governor", "powersave")
            put(d + "scaling_available_governors", "performance powersave")
            put(d + "energy_performance_preference", "balance_performance")
            put(d + "cpuinfo_max_freq", 4700000)
            put(d + "scaling_max_freq", 4700000)
            put(d + "scaling_min_freq", 800000)
        elif driver == "amd-pstate-epp":
            put(d + "scaling_driver", "amd-pstate-epp")
            put(d + "scaling_governor", "powersave")
            put(d + "scaling_available_governors", "performance powersave")
            put(d + "energy_performance_preference", "balance_performance")
            put(d + "boost", 1)
            put(d + "cpuinfo_max_freq", 5200000)
            put(d + "scaling_max_freq", 3500000)
            put(d + "scaling_min_freq", 400000)
    if driver in ("acpi-cpufreq", "per-policy"):
        put("cpufreq/boost", 1)
    if driver == "intel_pstate":
        put("intel_pstate/status", "active")
        put("intel_pstate/no_turbo", 0)
        put("intel_pstate/min_perf_pct", 17)
        put("intel_pstate/max_perf_pct", 100)


def snapshot(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as f:
                out[os.path.join(dirpath, name)] = f.read()
    return out


def numabench(*argv):
    r = subprocess.run([sys.executable, os.path.join(HERE, "numabench")] + list(argv),
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


DRIVERS = ("acpi-cpufreq", "intel_pstate", "amd-pstate-epp", "per-policy", "none")


class Tuning(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="numabench-sysfs-")

    def tearDown(self):
        for driver in DRIVERS:
            state = nb.Machine(os.path.join(self.tmp, driver)).state_file()
            if os.path.exists(state):
                os.unlink(state)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tree(self, driver):
        root = os.path.join(self.tmp, driver)
        make_sysfs(root, driver)
        return root

    def cpu(self, root, rel):
        with open(os.path.join(root, "devices/system/cpu", rel)) as f:
            return f.read().strip()

    def test_state_file_per_root(self):
        a, b = nb.Machine(self.tree("none")), nb.Machine(self.tree("acpi-cpufreq"))
        self.assertNotEqual(a.state_file(), b.state_file())
        self.assertNotEqual(a.state_file(), nb.STATE_FILE)
        self.assertEqual(nb.Machine("/sys").state_file(), nb.STATE_FILE)

    def test_tune_show_reset_every_driver(self):
        wanted = {
            "acpi-cpufreq": {"cpufreq/boost": "0", "cpufreq/policy0/scaling_governor": "performance",
                             # scaling_max_freq, not the boost frequency cpuinfo_max_freq
                             "cpufreq/policy3/scaling_min_freq": "2900000"},
            "intel_pstate": {"intel_pstate/no_turbo": "1", "intel_pstate/min_perf_pct": "100",
                             "cpufreq/policy1/energy_performance_preference": "performance",
                             "cpufreq/policy1/scaling_governor": "performance",
                             "cpufreq/policy1/scaling_min_freq": "4700000"},
            "amd-pstate-epp": {"cpufreq/policy2/boost": "0",
                               "cpufreq/policy2/energy_performance_preference": "performance",
                               "cpufreq/policy2/scaling_min_freq": "3500000"},
            "per-policy": {"cpufreq/policy0/scaling_governor": "performance",
                           "cpufreq/policy2/scaling_min_freq": "2900000", "cpufreq/boost": "0"},
        }
        for driver in DRIVERS:
            root = self.tree(driver)
            before = snapshot(root)
            rc, out, err = numabench("show", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertIn("cpufreq driver:", out)
            self.assertIn("frequency: not pinned", out)
            if driver == "none":
                self.assertIn("governor:          NOT AVAILABLE", out)
                rc, out, err = numabench("tune", "--sysfs", root)
                self.assertEqual(rc, 0, err)
                self.assertIn("0 written", out)
                self.assertEqual(snapshot(root), before)
                numabench("reset", "--sysfs", root)
                continue
            self.assertIn("CHANGE (numabench tune)", out)
            rc, out, err = numabench("tune", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertIn("0 refused", out)
            for rel, value in wanted[driver].items():
                self.assertEqual(self.cpu(root, rel), value, "%s: %s" % (driver, rel))
            self.assertEqual(self.cpu(root, "cpu1/cpuidle/state0/disable"), "0", "POLL stays")
            self.assertEqual(self.cpu(root, "cpu1/cpuidle/state2/disable"), "1", "C1E off")
            rc, out, err = numabench("show", "--sysfs", root)
            self.assertIn("frequency: pinned", out, driver)
            self.assertIn("is tuned by numabench tune since", err)
            rc, out, err = numabench("reset", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertEqual(snapshot(root), before, "%s: every file byte for byte after reset" % driver)
            self.assertFalse(os.path.exists(nb.Machine(root).state_file()))

    def test_write_order(self):
        """Boost off first, then the floor read afresh; the preference before
        the governor (intel_pstate refuses a preference under performance)."""
        for driver in ("intel_pstate", "acpi-cpufreq"):
            root = self.tree(driver)
            order = []
            real = nb.write

            def recording(path, value):
                order.append(path)
                real(path, value)
            with mock.patch.object(nb, "write", recording), contextlib.redirect_stdout(io.StringIO()):
                nb.cmd_tune(nb.build_parser().parse_args(["tune", "--sysfs", root]))
            first = lambda name: min(i for i, p in enumerate(order) if p.endswith(name))
            last = lambda name: max(i for i, p in enumerate(order) if p.endswith(name))
            boost = "no_turbo" if driver == "intel_pstate" else "cpufreq/boost"
            self.assertLess(last(boost), first("scaling_min_freq"), driver)
            self.assertLess(last("scaling_governor"), first("scaling_min_freq"), driver)
            if driver == "intel_pstate":
                self.assertLess(last("energy_performance_preference"), first("scaling_governor"))
            nb.cmd_reset(nb.build_parser().parse_args(["reset", "--sysfs", root]))

    def test_refused_and_clamped_writes_are_reported(self):
        root = self.tree("intel_pstate")
        real = nb.write

        def kernel(path, value):
            if path.endswith("policy1/energy_performance_preference"):
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
            real(path, "1200000\n" if path.endswith("policy2/scaling_min_freq") else value)
        err, out = io.StringIO(), io.StringIO()
        with mock.patch.object(nb, "write", kernel), contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(out):
            nb.cmd_tune(nb.build_parser().parse_args(["tune", "--sysfs", root]))
        self.assertIn("the kernel refused %s = performance: Device or resource busy"
                      % nb.Machine(root).path("cpufreq/policy1/energy_performance_preference"), err.getvalue())
        self.assertIn("the kernel kept %s = 1200000, not 4700000"
                      % nb.Machine(root).path("cpufreq/policy2/scaling_min_freq"), err.getvalue())
        self.assertIn("2 refused", out.getvalue())
        nb.cmd_reset(nb.build_parser().parse_args(["reset", "--sysfs", root]))

    def test_another_boot_is_refused(self):
        root = self.tree("acpi-cpufreq")
        numabench("tune", "--sysfs", root)
        tuned = snapshot(root)
        state_file = nb.Machine(root).state_file()
        with open(state_file) as f:
            state = json.load(f)
        state["boot_id"] = "00000000-0000-0000-0000-000000000000"
        with open(state_file, "w") as f:
            json.dump(state, f)
        rc, out, err = numabench("reset", "--sysfs", root)
        self.assertEqual(rc, 2)
        self.assertIn("is from another boot", err)
        self.assertEqual(snapshot(root), tuned, "nothing written back")
        rc, out, err = numabench("show", "--sysfs", root)
        self.assertIn("the saved state is from another boot, numabench reset will not write it back", err)

    def test_cpu_sampler(self):
        root = self.tree("per-policy")
        sampler = nb.CpuSampler(nb.Machine(root), {0, 1, 2, 3})
        sampler.start()
        time.sleep(0.6)
        got = sampler.result()
        self.assertEqual(got["frequency_source"], "scaling_cur_freq")
        # policy0 (CPUs 0, 1) at 2100 MHz, policy2 (CPUs 2, 3) at 2300 MHz
        self.assertEqual((got["mhz_min"], got["mhz_median"], got["mhz_max"]), (2100.0, 2200.0, 2300.0))
        self.assertGreaterEqual(got["steal_percent"], 0.0)
        sampler = nb.CpuSampler(nb.Machine(self.tree("none")), None)
        sampler.start()
        time.sleep(0.3)
        got = sampler.result()
        if nb.cpuinfo_mhz():
            self.assertEqual(got["frequency_source"], "/proc/cpuinfo")
            self.assertGreater(got["mhz_min"], 0)

    def test_bad_sysfs(self):
        rc, out, err = numabench("show", "--sysfs", os.path.join(self.tmp, "nothing"))
        self.assertEqual(rc, 2)
        self.assertIn("has no devices/system/cpu", err)


def run_tuned(root, tmp, port, **popen):
    """A 30 s baseline run --tune of the tree at root, in the background."""
    return subprocess.Popen([sys.executable, os.path.join(HERE, "numabench"), "run", "--tune",
                             "--sysfs", root, "--pg-config", "/usr/lib/postgresql/15/bin/pg_config",
                             "--config", "baseline", "--runs", "1", "--duration", "30", "--warmup", "0",
                             "--scale", "1", "--clients", "1", "--port", str(port),
                             "--out", os.path.join(tmp, "out")], **popen)


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")
class KilledWhileTuned(unittest.TestCase):
    def test_sigkill_then_reset(self):
        """A run --tune killed with SIGKILL leaves the machine tuned: the next
        command says so, and reset restores every file."""
        tmp = tempfile.mkdtemp(prefix="numabench-kill-")
        root = os.path.join(tmp, "sys")
        make_sysfs(root, "acpi-cpufreq")
        before = snapshot(root)
        state_file = nb.Machine(root).state_file()
        run = run_tuned(root, tmp, 54780, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not os.path.exists(state_file):
                time.sleep(0.1)
            time.sleep(0.5)
            self.assertTrue(os.path.exists(state_file), "run --tune saved the state")
            self.assertEqual(self.boost(root), "0", "tuned while it runs")
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
            rc, out, err = numabench("show", "--sysfs", root)
            self.assertIn("numabench run --tune (pid %d, killed before it could reset)" % run.pid, err)
            self.assertIn("numabench reset --sysfs %s restores it" % root, err)
            rc, out, err = numabench("reset", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertEqual(snapshot(root), before, "every file byte for byte after reset")
        finally:
            # the killed run could not stop its server and pgbench, nor
            # remove its work directory
            workdirs = set()
            for line in subprocess.run(["pgrep", "-f", "-a", "/numabench-[a-z0-9_]{8}/"],
                                       capture_output=True, text=True).stdout.splitlines():
                pid, _, cmd = line.partition(" ")
                workdirs.update(re.findall(r"(/\S*/numabench-[a-z0-9_]{8})/", cmd))
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.time() + 10
            while time.time() < deadline and subprocess.run(
                    ["pgrep", "-f", "/numabench-[a-z0-9_]{8}/"], capture_output=True).returncode == 0:
                time.sleep(0.2)
            for d in workdirs:
                shutil.rmtree(d, ignore_errors=True)
            if os.path.exists(state_file):
                os.unlink(state_file)
            shutil.rmtree(tmp, ignore_errors=True)

    def test_sigterm_resets(self):
        """A run --tune that gets SIGTERM resets the machine before it exits,
        and stops its server."""
        tmp = tempfile.mkdtemp(prefix="numabench-term-")
        root = os.path.join(tmp, "sys")
        make_sysfs(root, "intel_pstate")
        before = snapshot(root)
        state_file = nb.Machine(root).state_file()
        run = run_tuned(root, tmp, 54785, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.time() + 60
            while time.time() < deadline and not os.path.exists(state_file):
                time.sleep(0.1)
            time.sleep(2)
            with open(os.path.join(root, "devices/system/cpu/intel_pstate/no_turbo")) as f:
                self.assertEqual(f.read().strip(), "1", "tuned while it runs")
            run.send_signal(signal.SIGTERM)
            out, _ = run.communicate(timeout=120)
            self.assertEqual(run.returncode, 1, out)
            self.assertIn("interrupted by signal 15", out)
            self.assertIn("restored 22 settings", out)
            self.assertEqual(snapshot(root), before, "every file byte for byte after SIGTERM")
            self.assertFalse(os.path.exists(state_file))
            left = subprocess.run(["pgrep", "-f", "/numabench-[a-z0-9_]{8}/"], capture_output=True, text=True)
            self.assertEqual(left.stdout.strip(), "", "no server left")
        finally:
            if run.poll() is None:
                run.kill()
            if os.path.exists(state_file):
                os.unlink(state_file)
            shutil.rmtree(tmp, ignore_errors=True)

    def boost(self, root):
        with open(os.path.join(root, "devices/system/cpu/cpufreq/boost")) as f:
            return f.read().strip()


class TapResult(unittest.TextTestResult):
    count = 0

    def _tap(self, test, ok, why=""):
        TapResult.count += 1
        print("%sok %d - %s%s" % ("" if ok else "not ", TapResult.count, test.id().split(".", 1)[1], why),
              flush=True)

    def addSuccess(self, test):
        self._tap(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._tap(test, False)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addError(self, test, err):
        super().addError(test, err)
        self._tap(test, False)
        print("# " + self._exc_info_to_string(err, test).replace("\n", "\n# "))

    def addSkip(self, test, reason):
        self._tap(test, True, " # SKIP " + reason)


if __name__ == "__main__":
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    with open(os.devnull, "w") as devnull:
        result = unittest.TextTestRunner(stream=devnull, resultclass=TapResult).run(suite)
    print("1..%d" % TapResult.count)
    sys.exit(0 if result.wasSuccessful() else 1)
