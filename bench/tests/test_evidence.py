#!/usr/bin/python3
"""Tests of bench/numabench: the NUMA evidence of a run: numastat, pages per node,
pinning. Prints TAP (prove --exec /usr/bin/python3)."""

import os
import sys
import tempfile
import unittest

import support  # noqa: E402  (puts bench/ on sys.path)
from numabench import _evidence as evidence
from numabench import _summary as summary


class NumaEvidence(unittest.TestCase):
    def test_cpu_list(self):
        self.assertEqual(evidence.parse_cpu_list("0-3,8\n"), {0, 1, 2, 3, 8})
        self.assertEqual(evidence.parse_cpu_list(""), set())

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
        self.assertEqual(evidence.private_pages_by_node(text), {0: 200 + 512, 1: 100 + 512 + 5})

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
            before = evidence.read_numastat(root)
            self.assertEqual(before[0]["numa_hit"], 100)
            self.assertEqual(set(before[1]), set(evidence.NUMASTAT_COUNTERS))
            after = {0: dict(before[0], numa_hit=150, local_node=149), 1: dict(before[1])}
            self.assertEqual(evidence.numastat_delta(before, after)["0"]["numa_hit"], 50)
            self.assertEqual(evidence.numastat_delta(before, after)["1"]["other_node"], 0)
            self.assertEqual(evidence.node_cpus(root), {0: {0}, 1: {1}})

    def test_summary(self):
        numa = [{"numastat": {"0": {"local_node": 90, "other_node": 10}}, "private_memory": {"percent": 80.0},
                 "numasched_stats": {"placements": 2, "moves": 1, "homecomings": 7, "pages_migrated": 5},
                 "scheduler_cpu_ms": 30.0},
                {"numastat": {"0": {"local_node": 60, "other_node": 40}}, "private_memory": {"percent": 100.0},
                 "numasched_stats": {"placements": 3, "moves": 0, "homecomings": 4, "pages_migrated": 0},
                 "scheduler_cpu_ms": 50.0}]
        s = summary.summarise_numa(numa)
        self.assertAlmostEqual(s["kernel_local_percent"], 75.0)
        self.assertAlmostEqual(s["private_on_own_node_percent"], 90.0)
        self.assertEqual(s["numasched_stats"], {"placements": 5, "moves": 1, "homecomings": 11, "pages_migrated": 5})
        self.assertAlmostEqual(s["scheduler_cpu_ms_per_run"], 40.0)
        self.assertEqual(summary.numa_line(s), "  numa: private pages on their process's node 90.0%; kernel "
                         "allocations local 75.0%; numasched over all runs: 5 placed, 1 moves, 11 homecomings, 5 pages migrated; "
                         "its scheduler's CPU 40 ms a run")
        self.assertEqual(summary.summarise_numa([]), {})
        # results from before homing counted none: no homecomings, no worker's CPU
        older = summary.summarise_numa([dict(n, numasched_stats={"placements": 2, "moves": 1, "pages_migrated": 5})
                                        for n in numa[:1]])
        older.pop("scheduler_cpu_ms_per_run")
        self.assertTrue(summary.numa_line(older).endswith("numasched over all runs: 2 placed, 1 moves, 5 pages migrated"))

    def test_busy_cpu_within_the_measured_part(self):
        # busy CPU seconds sampled every 0.25 s; the measured part's ends
        # fall between samples
        cpu = evidence.CpuSampler(None, None)
        cpu.busy = [(100.0, 10.0), (100.25, 10.5), (100.5, 11.0), (100.75, 11.1)]
        self.assertAlmostEqual(cpu.busy_at(100.125), 10.25)
        self.assertAlmostEqual(cpu.busy_at(100.5), 11.0)
        self.assertAlmostEqual(cpu.busy_at(99.0), 10.0)      # before the first: the first
        self.assertAlmostEqual(cpu.busy_at(101.0), 11.1)     # after the last: the last
        self.assertAlmostEqual(cpu.busy_at(100.625) - cpu.busy_at(100.125), 0.8)
        # a stalled sampling leaves a gap it does not bridge
        cpu.busy.append((103.0, 12.0))
        self.assertIsNone(cpu.busy_at(102.0))

    def test_scheduler_cpu(self):
        # a delta only between two reads of the same worker (a restarted
        # scheduler's count starts again)
        self.assertAlmostEqual(evidence.scheduler_cpu_ms(("41", 2_000_000), ("41", 14_500_000)), 12.5)
        self.assertIsNone(evidence.scheduler_cpu_ms(("41", 2_000_000), ("57", 14_500_000)))
        self.assertIsNone(evidence.scheduler_cpu_ms(None, ("41", 1)))


if __name__ == "__main__":
    support.main(sys.modules[__name__])
