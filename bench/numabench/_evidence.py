"""The NUMA evidence beside each run: numastat, where processes' pages are,
pinning, the CPUs' frequency and steal time, numasched's counters."""

import glob
import json
import os
import re
import statistics
import threading
import time

from ._system import busy_cpu_seconds, cpu_times, read


NUMASTAT_COUNTERS = ("numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node")


def parse_cpu_list(text):
    """The kernel's list syntax ("0-3,8"), as a set of CPU numbers."""
    cpus = set()
    for part in (text or "").strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def read_numastat(root="/sys"):
    """The kernel's per-node allocation counters, {node: {counter: pages}}."""
    out = {}
    for path in glob.glob(os.path.join(root, "devices/system/node/node[0-9]*/numastat")):
        node = int(re.search(r"node(\d+)/numastat$", path).group(1))
        counters = {}
        for line in (read(path) or "").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] in NUMASTAT_COUNTERS:
                counters[parts[0]] = int(parts[1])
        out[node] = counters
    return out


def numastat_delta(before, after):
    return {str(n): {k: v - before.get(n, {}).get(k, 0) for k, v in after[n].items()} for n in sorted(after)}


def node_cpus(root="/sys"):
    """{node: CPUs} from sysfs; a kernel without NUMA is one node."""
    out = {}
    for path in glob.glob(os.path.join(root, "devices/system/node/node[0-9]*/cpulist")):
        out[int(re.search(r"node(\d+)/cpulist$", path).group(1))] = parse_cpu_list(read(path))
    return out or {0: set(range(os.cpu_count() or 1))}


def private_pages_by_node(numa_maps):
    """Base pages per node of a process's private memory in /proc/PID/numa_maps
    text: the anonymous pages of mappings no file backs (heap, stack,
    anonymous mmaps), as numasched counts them (src/core/ns_numa_maps.c); not the
    shared memory segment, which a file backs, nor files."""
    pages = {}
    for line in numa_maps.splitlines():
        if " file=" in line or " anon=" not in line:
            continue
        size = re.search(r"kernelpagesize_kB=(\d+)", line)
        scale = int(size.group(1)) // 4 if size else 1
        for node, count in re.findall(r"\bN(\d+)=(\d+)", line):
            pages[int(node)] = pages.get(int(node), 0) + int(count) * scale
    return pages


def process_node(pid, cpus_of):
    """The node of the CPU a process last ran on (field 39 of /proc/PID/stat)."""
    stat = read("/proc/%d/stat" % pid)
    if stat is None:
        return None
    cpu = int(stat.rsplit(")", 1)[1].split()[36])
    return next((n for n, cpus in cpus_of.items() if cpu in cpus), None)


def server_locality(postmaster, cpus_of):
    """Every process of the server (the postmaster and its children): their
    private pages, and how many are on the node each runs on."""
    pids = [postmaster]
    for stat in glob.glob("/proc/[0-9]*/stat"):
        fields = (read(stat) or ")").rsplit(")", 1)[1].split()
        if len(fields) > 1 and fields[1] == str(postmaster):
            pids.append(int(stat.split("/")[2]))
    total = local = processes = 0
    for pid in pids:
        node = process_node(pid, cpus_of)
        text = read("/proc/%d/numa_maps" % pid)
        if node is None or text is None:
            continue            # gone, or not ours to read
        pages = private_pages_by_node(text)
        processes += 1
        total += sum(pages.values())
        local += pages.get(node, 0)
    return {"processes": processes, "private_pages": total, "on_own_node": local,
            "percent": 100.0 * local / total if total else None}


def children(pid):
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        fields = (read(stat) or ")").rsplit(")", 1)[1].split()
        if len(fields) > 1 and fields[1] == str(pid):
            out.append(int(stat.split("/")[2]))
    return out


def allowed(pid):
    """A process's Cpus_allowed_list and Mems_allowed_list, from the kernel."""
    status = read("/proc/%d/status" % pid) or ""
    found = dict(re.findall(r"^(Cpus_allowed_list|Mems_allowed_list):\s*(\S+)", status, re.M))
    return {"cpus": found.get("Cpus_allowed_list"), "mems": found.get("Mems_allowed_list")} if found else None


def pinning(cluster):
    """Where the kernel lets the server and pgbench run: the postmaster, a
    client backend and the pgbench of this cluster (its socket directory is
    on pgbench's command line), from /proc/PID/status."""
    postmaster = cluster.postmaster_pid()
    out = {"postmaster": allowed(postmaster)}
    for pid in children(postmaster):
        if "[local]" in (read("/proc/%d/cmdline" % pid) or ""):
            out["backend"] = allowed(pid)
            break
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        args = (read(cmdline) or "").split("\0")
        if os.path.basename(args[0]) == "pgbench" and cluster.dir in args:
            out["pgbench"] = allowed(int(cmdline.split("/")[2]))
            break
    return out


def cpuinfo_mhz():
    """{cpu: MHz} from /proc/cpuinfo (where there is no cpufreq)."""
    out, cpu = {}, None
    for line in (read("/proc/cpuinfo") or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "processor":
            cpu = int(value)
        elif key.strip() == "cpu MHz" and cpu is not None:
            out[cpu] = float(value)
    return out


class CpuSampler(threading.Thread):
    """What the CPUs did during a run, not what was asked: the frequency of
    the CPUs the server and pgbench may use, every 0.25 s (scaling_cur_freq,
    else /proc/cpuinfo), the steal time over the run, and the CPU time all
    CPUs were busy (the server's, pgbench's and anything else's), over the
    run or the part of it that is measured."""

    def __init__(self, machine, cpus):
        super().__init__(daemon=True)
        self.machine, self.cpus = machine, cpus
        self.mhz, self.source = [], None
        self.busy = []              # (time.time(), busy CPU seconds)
        self.done = threading.Event()

    def run(self):
        self.steal0 = cpu_times()
        while True:
            self.busy.append((time.time(), busy_cpu_seconds()))
            khz = self.machine.cur_freq_khz(self.cpus)
            if khz:
                self.source = "scaling_cur_freq"
                self.mhz.extend(v / 1000.0 for v in khz.values())
            else:
                self.source = "/proc/cpuinfo"
                self.mhz.extend(v for c, v in cpuinfo_mhz().items() if self.cpus is None or c in self.cpus)
            if self.done.wait(0.25):
                break

    def busy_at(self, when):
        """The busy CPU seconds at "when", between the two samples around it;
        None where they are more than a second apart (the sampling stalled)."""
        before = [x for x in self.busy if x[0] <= when] or self.busy[:1]
        after = [x for x in self.busy if x[0] >= when] or self.busy[-1:]
        (t0, b0), (t1, b1) = before[-1], after[0]
        if t1 - t0 > 1.0:
            return None
        return b0 if t1 <= t0 else b0 + (b1 - b0) * (when - t0) / (t1 - t0)

    def result(self, window=None):
        """The run's figures; the busy CPU time within "window" (start, end
        in seconds since the epoch) where given."""
        self.done.set()
        self.join()
        self.busy.append((time.time(), busy_cpu_seconds()))
        s1, t1 = cpu_times()
        s0, t0 = self.steal0
        start, end = window or (self.busy[0][0], self.busy[-1][0])
        busy = [self.busy_at(end), self.busy_at(start)]
        out = {"steal_percent": round(100.0 * (s1 - s0) / (t1 - t0), 3) if t1 > t0 else 0.0,
               "busy_cpu_s": None if None in busy else round(busy[0] - busy[1], 3),
               "frequency_source": self.source if self.mhz else None}
        if self.mhz:
            out.update({"mhz_min": min(self.mhz), "mhz_median": statistics.median(self.mhz),
                        "mhz_max": max(self.mhz)})
        return out


def numasched_counters(cluster):
    """numasched_stats as {counter: value}, or None where numasched is not loaded."""
    if "numasched" not in cluster.settings.get("shared_preload_libraries", ""):
        return None
    row = json.loads(cluster.psql("SELECT row_to_json(s) FROM numasched_stats s"))
    return {k: v for k, v in row.items() if isinstance(v, int)}


def scheduler_cpu(cluster):
    """(pid, ns) of numasched's scheduler worker: the CPU time it has run
    (/proc/PID/schedstat), or None where it does not run."""
    if "numasched" not in cluster.settings.get("shared_preload_libraries", ""):
        return None
    return scheduler_cpu_again(cluster.psql(
        "SELECT pid FROM pg_stat_activity WHERE backend_type = 'numasched scheduler'"))


def scheduler_cpu_again(pid):
    """(pid, ns) of the process "pid" read again, from /proc only (no query,
    so it can be read while a run is measured), or None."""
    if not str(pid).isdigit():
        return None
    try:
        with open("/proc/%s/schedstat" % pid) as f:
            return str(pid), int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def scheduler_cpu_ms(before, after):
    """The scheduler worker's CPU time between two scheduler_cpu() reads, in
    ms; None unless both read the same process."""
    if before is None or after is None or before[0] != after[0]:
        return None
    return (after[1] - before[1]) / 1e6


def numasched_workloads(cluster):
    """Where each role's processes run (numasched_workloads), or None where
    numasched is not loaded."""
    if "numasched" not in cluster.settings.get("shared_preload_libraries", ""):
        return None
    return json.loads(cluster.psql(
        "SELECT coalesce(json_agg(w ORDER BY role, cpu_group), '[]') FROM numasched_workloads w"))


def sample_server(cluster, cpus_of, scheduler_before, sample):
    """What a run leaves to see only while its backends exist, taken after
    the part of it that is measured (its reads of /proc and its query cost
    CPU): when, the scheduler worker's CPU time, where the server's private
    memory is, what the kernel lets it use, and numasched's view of it."""
    sample["time"] = time.time()
    sample["scheduler"] = scheduler_cpu_again(scheduler_before[0]) if scheduler_before else None
    sample["locality"] = server_locality(cluster.postmaster_pid(), cpus_of)
    sample["pinned"] = pinning(cluster)
    sample["workloads"] = numasched_workloads(cluster)
