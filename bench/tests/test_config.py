#!/usr/bin/python3
"""Tests of bench/numabench: configurations and the workloads' plans. Prints TAP
(prove --exec /usr/bin/python3)."""

import os
import re
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _cli as cli
from numabench import _common as common
from numabench import _config as config
from numabench import _runner as runner
from numabench import _workloads as workloads


class GitCommit(unittest.TestCase):
    def test_without_git(self):
        # a minimal Debian has no git: the run records no commit instead of failing
        saved = os.environ.get("PATH")
        os.environ["PATH"] = tempfile.mkdtemp()
        try:
            self.assertIsNone(config.git_commit())
        finally:
            os.rmdir(os.environ["PATH"])
            os.environ["PATH"] = saved

    def test_in_the_checkout(self):
        if not os.path.isdir(os.path.join(config.TOP, ".git")):
            self.skipTest("not a git checkout")
        self.assertRegex(config.git_commit() or "", r"^[0-9a-f]{7,}(-dirty)?$")


class Configurations(unittest.TestCase):
    def test_builtins(self):
        self.assertEqual(config.parse_config("baseline")[1], {"shared_preload_libraries": "''"})
        self.assertEqual(config.parse_config("numasched")[1], {"shared_preload_libraries": "'numasched'"})

    def test_variant(self):
        name, settings = config.parse_config("spread=numasched,numasched.parallel_placement=spread,"
                                         "numasched.nodes=0-1")
        self.assertEqual(name, "spread")
        self.assertEqual(settings["numasched.parallel_placement"], "spread")
        # a list would not parse unquoted in postgresql.conf
        self.assertEqual(settings["numasched.nodes"], "'0-1'")

    def test_role_settings(self):
        name, settings = config.parse_config("split=numasched,role.oltp.numasched.cpu_groups=0,"
                                         "role.analytics.numasched.cpu_groups=1-2,role.oltp.work_mem=8MB")
        self.assertEqual(settings["role.oltp.numasched.cpu_groups"], "0")
        self.assertEqual(settings["role.analytics.numasched.cpu_groups"], "'1-2'")
        self.assertEqual(settings["role.oltp.work_mem"], "8MB")
        with self.assertRaises(common.UsageError):
            config.parse_config("x=numasched,role.oltp=1")
        self.assertEqual(settings["shared_preload_libraries"], "'numasched'")

    def test_harness_setting(self):
        name, settings = config.parse_config("alone=baseline,bench.analytic_clients=0")
        self.assertEqual(settings["bench.analytic_clients"], "0")
        for text in ("x=baseline,bench.analytic_clients=-1", "x=baseline,bench.clients=2"):
            with self.assertRaises(common.UsageError, msg=text):
                config.parse_config(text)

    def test_refused(self):
        for text in ("other", "x=elsewhere", "x=numasched,oops", "1x=baseline"):
            with self.assertRaises(common.UsageError, msg=text):
                config.parse_config(text)

    def test_cli_errors_exit_2(self):
        for argv in (["run", "--workload", "nosuch"], ["frob"], ["run", "--runs", "0"],
                     ["compare", "/nonexistent.json", "--old", "a", "--new", "b"],
                     ["run", "--pg-config", "/nonexistent/pg_config"], ["run", "--clients", "2,x"],
                     ["run", "--clients", "0"], ["run", "--warmup", "-1"], ["run", "--pgbench-args", "'-M"]):
            self.assertEqual(cli.main(argv), 2, argv)

    def test_pg_config_without_numasched(self):
        # a PostgreSQL whose pkglibdir has no numasched.so: refused before any server starts
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "pg_config")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho /usr/lib/postgresql/15/bin\necho %s\n" % tmp)
            os.chmod(fake, 0o755)
            with self.assertRaisesRegex(common.UsageError, re.escape(
                    "numasched is not installed in the PostgreSQL of %s (no %s/numasched.so)" % (fake, tmp))):
                runner.cmd_run(cli.build_parser().parse_args(["run", "--pg-config", fake, "--out", tmp]))

    def test_mixed_weights(self):
        args = workloads.workload_files("mixed", 9, 1)
        self.assertIn("-f", args)
        self.assertTrue(args[1].endswith("oltp_ro.sql@9"))
        self.assertTrue(args[3].endswith("analytic_q1.sql@1"))


if __name__ == "__main__":
    support.main(sys.modules[__name__])
