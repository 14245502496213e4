"""What the tests of bench/numabench share: pgbench's own output, fixture
sysfs trees, numabench run as a command, and TAP output for prove."""

import math
import os
import shutil
import subprocess
import sys
import unittest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
ENTRY = os.path.join(BENCH, "numabench")




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


def have_postgres():
    return shutil.which("pg_config") is not None and (os.getuid() != 0 or shutil.which("runuser"))


def suite_pg_config():
    """The pg_config of the suite's own PostgreSQL (15 on Debian 12, 17 on
    Debian 13): Debian's pg_config on PATH names the server it builds for."""
    try:
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "pg_config"
    return os.path.join(bindir, "pg_config")


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")


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


def run_numabench(*argv):
    r = subprocess.run([sys.executable, ENTRY] + list(argv),
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


DRIVERS = ("acpi-cpufreq", "intel_pstate", "amd-pstate-epp", "per-policy", "none")


def run_tuned(root, tmp, port, **popen):
    """A 30 s baseline run --tune of the tree at root, in the background."""
    return subprocess.Popen([sys.executable, ENTRY, "run", "--tune",
                             "--sysfs", root, "--pg-config", suite_pg_config(),
                             "--config", "baseline", "--runs", "1", "--duration", "30", "--warmup", "0",
                             "--scale", "1", "--clients", "1", "--port", str(port),
                             "--out", os.path.join(tmp, "out")], **popen)


@unittest.skipUnless(have_postgres(), "needs PostgreSQL")


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


def main(module):
    """Runs a test module's cases, printing TAP."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    with open(os.devnull, "w") as devnull:
        result = unittest.TextTestRunner(stream=devnull, resultclass=TapResult).run(suite)
    print("1..%d" % TapResult.count)
    sys.exit(0 if result.wasSuccessful() else 1)
