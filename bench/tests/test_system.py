#!/usr/bin/python3
"""Tests of bench/numabench: the machine: show, tune and reset on fixture sysfs
trees, and a run --tune killed. Prints TAP (prove --exec /usr/bin/python3)."""

import contextlib
import errno
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import support  # noqa: E402  (puts bench/ on sys.path)
from support import DRIVERS, make_sysfs, run_numabench, run_tuned, snapshot
from numabench import _cli as cli
from numabench import _common as common
from numabench import _evidence as evidence
from numabench import _runner as runner
from numabench import _system as system


class NumaBalancing(unittest.TestCase):
    def setUp(self):
        self.saved = system.NUMA_BALANCING
        self.dir = tempfile.mkdtemp()
        system.NUMA_BALANCING = os.path.join(self.dir, "numa_balancing")

    def tearDown(self):
        system.NUMA_BALANCING = self.saved
        shutil.rmtree(self.dir)

    def test_states(self):
        self.assertEqual(system.numa_balancing(), "unavailable")
        for value, state in (("0", "off"), ("1", "on"), ("2", "on (mode 2)")):
            with open(system.NUMA_BALANCING, "w") as f:
                f.write(value + "\n")
            self.assertEqual(system.numa_balancing(), state)
        self.assertTrue(any("kernel.numa_balancing is on (mode 2)" in n for n in system.observations()[2]))

    def test_run_refuses_a_kernel_without_it(self):
        with self.assertRaisesRegex(common.UsageError, "--numa-balancing: this kernel has no"):
            runner.cmd_run(cli.build_parser().parse_args(
                ["run", "--pg-config", support.suite_pg_config(), "--config", "baseline",
                 "--numa-balancing", "off", "--out", self.dir]))


class Tuning(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="numabench-sysfs-")

    def tearDown(self):
        for driver in DRIVERS:
            state = system.Machine(os.path.join(self.tmp, driver)).state_file()
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
        a, b = system.Machine(self.tree("none")), system.Machine(self.tree("acpi-cpufreq"))
        self.assertNotEqual(a.state_file(), b.state_file())
        self.assertNotEqual(a.state_file(), common.STATE_FILE)
        self.assertEqual(system.Machine("/sys").state_file(), common.STATE_FILE)

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
            rc, out, err = run_numabench("show", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertIn("cpufreq driver:", out)
            self.assertIn("frequency: not pinned", out)
            if driver == "none":
                self.assertIn("governor:          NOT AVAILABLE", out)
                rc, out, err = run_numabench("tune", "--sysfs", root)
                self.assertEqual(rc, 0, err)
                self.assertIn("0 written", out)
                self.assertEqual(snapshot(root), before)
                run_numabench("reset", "--sysfs", root)
                continue
            self.assertIn("CHANGE (numabench tune)", out)
            rc, out, err = run_numabench("tune", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertIn("0 refused", out)
            for rel, value in wanted[driver].items():
                self.assertEqual(self.cpu(root, rel), value, "%s: %s" % (driver, rel))
            self.assertEqual(self.cpu(root, "cpu1/cpuidle/state0/disable"), "0", "POLL stays")
            self.assertEqual(self.cpu(root, "cpu1/cpuidle/state2/disable"), "1", "C1E off")
            rc, out, err = run_numabench("show", "--sysfs", root)
            self.assertIn("frequency: pinned", out, driver)
            self.assertIn("is tuned by numabench tune since", err)
            rc, out, err = run_numabench("reset", "--sysfs", root)
            self.assertEqual(rc, 0, err)
            self.assertEqual(snapshot(root), before, "%s: every file byte for byte after reset" % driver)
            self.assertFalse(os.path.exists(system.Machine(root).state_file()))

    def test_write_order(self):
        """Boost off first, then the floor read afresh; the preference before
        the governor (intel_pstate refuses a preference under performance)."""
        for driver in ("intel_pstate", "acpi-cpufreq"):
            root = self.tree(driver)
            order = []
            real = system.write

            def recording(path, value):
                order.append(path)
                real(path, value)
            with mock.patch.object(system, "write", recording), contextlib.redirect_stdout(io.StringIO()):
                system.cmd_tune(cli.build_parser().parse_args(["tune", "--sysfs", root]))
            first = lambda name: min(i for i, p in enumerate(order) if p.endswith(name))
            last = lambda name: max(i for i, p in enumerate(order) if p.endswith(name))
            boost = "no_turbo" if driver == "intel_pstate" else "cpufreq/boost"
            self.assertLess(last(boost), first("scaling_min_freq"), driver)
            self.assertLess(last("scaling_governor"), first("scaling_min_freq"), driver)
            if driver == "intel_pstate":
                self.assertLess(last("energy_performance_preference"), first("scaling_governor"))
            system.cmd_reset(cli.build_parser().parse_args(["reset", "--sysfs", root]))

    def test_refused_and_clamped_writes_are_reported(self):
        root = self.tree("intel_pstate")
        real = system.write

        def kernel(path, value):
            if path.endswith("policy1/energy_performance_preference"):
                raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
            real(path, "1200000\n" if path.endswith("policy2/scaling_min_freq") else value)
        err, out = io.StringIO(), io.StringIO()
        with mock.patch.object(system, "write", kernel), contextlib.redirect_stderr(err), \
                contextlib.redirect_stdout(out):
            system.cmd_tune(cli.build_parser().parse_args(["tune", "--sysfs", root]))
        self.assertIn("the kernel refused %s = performance: Device or resource busy"
                      % system.Machine(root).path("cpufreq/policy1/energy_performance_preference"), err.getvalue())
        self.assertIn("the kernel kept %s = 1200000, not 4700000"
                      % system.Machine(root).path("cpufreq/policy2/scaling_min_freq"), err.getvalue())
        self.assertIn("2 refused", out.getvalue())
        system.cmd_reset(cli.build_parser().parse_args(["reset", "--sysfs", root]))

    def test_another_boot_is_refused(self):
        root = self.tree("acpi-cpufreq")
        run_numabench("tune", "--sysfs", root)
        tuned = snapshot(root)
        state_file = system.Machine(root).state_file()
        with open(state_file) as f:
            state = json.load(f)
        state["boot_id"] = "00000000-0000-0000-0000-000000000000"
        with open(state_file, "w") as f:
            json.dump(state, f)
        rc, out, err = run_numabench("reset", "--sysfs", root)
        self.assertEqual(rc, 2)
        self.assertIn("is from another boot", err)
        self.assertEqual(snapshot(root), tuned, "nothing written back")
        rc, out, err = run_numabench("show", "--sysfs", root)
        self.assertIn("the saved state is from another boot, numabench reset will not write it back", err)

    def test_cpu_sampler(self):
        root = self.tree("per-policy")
        sampler = evidence.CpuSampler(system.Machine(root), {0, 1, 2, 3})
        sampler.start()
        time.sleep(0.6)
        got = sampler.result()
        self.assertEqual(got["frequency_source"], "scaling_cur_freq")
        # policy0 (CPUs 0, 1) at 2100 MHz, policy2 (CPUs 2, 3) at 2300 MHz
        self.assertEqual((got["mhz_min"], got["mhz_median"], got["mhz_max"]), (2100.0, 2200.0, 2300.0))
        self.assertGreaterEqual(got["steal_percent"], 0.0)
        sampler = evidence.CpuSampler(system.Machine(self.tree("none")), None)
        sampler.start()
        time.sleep(0.3)
        got = sampler.result()
        if evidence.cpuinfo_mhz():
            self.assertEqual(got["frequency_source"], "/proc/cpuinfo")
            self.assertGreater(got["mhz_min"], 0)

    def test_bad_sysfs(self):
        rc, out, err = run_numabench("show", "--sysfs", os.path.join(self.tmp, "nothing"))
        self.assertEqual(rc, 2)
        self.assertIn("has no devices/system/cpu", err)


class KilledWhileTuned(unittest.TestCase):
    def test_sigkill_then_reset(self):
        """A run --tune killed with SIGKILL leaves the machine tuned: the next
        command says so, and reset restores every file."""
        tmp = tempfile.mkdtemp(prefix="numabench-kill-")
        root = os.path.join(tmp, "sys")
        make_sysfs(root, "acpi-cpufreq")
        before = snapshot(root)
        state_file = system.Machine(root).state_file()
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
            rc, out, err = run_numabench("show", "--sysfs", root)
            self.assertIn("numabench run --tune (pid %d, killed before it could reset)" % run.pid, err)
            self.assertIn("numabench reset --sysfs %s restores it" % root, err)
            rc, out, err = run_numabench("reset", "--sysfs", root)
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
        state_file = system.Machine(root).state_file()
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


if __name__ == "__main__":
    support.main(sys.modules[__name__])
