"""The machine: frequency, boost and idle states read and set (show, tune,
reset), with every change saved first and undone byte for byte."""

import datetime
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import time

from ._common import STATE_FILE, UsageError


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def write(path, value):
    with open(path, "w") as f:
        f.write(str(value))


def cpu_number(path):
    return int(re.search(r"(?:cpu|policy)(\d+)", path).group(1))


class Machine:
    """The sysfs tree numabench reads and tunes: /sys, or with --sysfs a copy
    of one (the tests' fixture trees of each cpufreq driver).  Every path is
    below its root; its saved state has a file of its own per root."""

    def __init__(self, root="/sys"):
        self.root = os.path.abspath(root)

    def path(self, *parts):
        return os.path.join(self.root, "devices/system/cpu", *parts)

    def state_file(self):
        if self.root == "/sys":
            return STATE_FILE
        digest = hashlib.sha1(self.root.encode()).hexdigest()[:12]
        return STATE_FILE.replace(".json", "-%s.json" % digest)

    def policies(self):
        """cpufreq policies (one per CPU, or one shared by several)."""
        return sorted(glob.glob(self.path("cpufreq/policy[0-9]*")), key=cpu_number)

    def driver(self):
        drivers = sorted({read(os.path.join(p, "scaling_driver"), "?") for p in self.policies()})
        return ",".join(drivers) if drivers else None

    def cpus_of(self, policy):
        return [int(c) for c in (read(os.path.join(policy, "affected_cpus")) or
                                 str(cpu_number(policy))).split()]

    def cur_freq_khz(self, cpus=None):
        """The kernel's current frequency of each CPU (of "cpus"), from the
        policies' scaling_cur_freq; {} without cpufreq."""
        out = {}
        for p in self.policies():
            khz = read(os.path.join(p, "scaling_cur_freq"))
            for cpu in self.cpus_of(p):
                if khz and khz.isdigit() and (cpus is None or cpu in cpus):
                    out[cpu] = int(khz)
        return out


def system_items(machine):
    """What `show` checks and `tune` changes, in the order tune writes it.
    Each item: name, state ('ok', 'change', 'unavailable'), text, and the
    files to write with their values.  Read afresh before each item is
    written: boost off can lower scaling_max_freq, which the minimum follows."""
    items = []
    policies = machine.policies()
    intel = machine.path("intel_pstate")
    # boost: the global switch (acpi-cpufreq), intel_pstate's no_turbo, or
    # per policy (amd-pstate)
    per_policy_boost = [os.path.join(p, "boost") for p in policies if os.path.exists(os.path.join(p, "boost"))]
    if os.path.exists(machine.path("cpufreq/boost")):
        v = read(machine.path("cpufreq/boost"))
        items.append(("boost", "ok" if v == "0" else "change", "boost=%s; wants 0" % v,
                      [] if v == "0" else [(machine.path("cpufreq/boost"), "0")]))
    elif os.path.exists(os.path.join(intel, "no_turbo")):
        v = read(os.path.join(intel, "no_turbo"))
        items.append(("boost", "ok" if v == "1" else "change", "intel_pstate no_turbo=%s; wants 1" % v,
                      [] if v == "1" else [(os.path.join(intel, "no_turbo"), "1")]))
    elif per_policy_boost:
        on = [(f, "0") for f in per_policy_boost if read(f) != "0"]
        items.append(("boost", "change" if on else "ok", "%d of %d policies boost; wants 0" % (
            len(on), len(per_policy_boost)), on))
    else:
        items.append(("boost", "unavailable", "no boost control in sysfs", []))
    # intel_pstate in active mode has its own floor, in percent of the top
    if os.path.exists(os.path.join(intel, "min_perf_pct")) and read(os.path.join(intel, "status")) == "active":
        low, high = read(os.path.join(intel, "min_perf_pct")), read(os.path.join(intel, "max_perf_pct"))
        items.append(("performance floor", "ok" if low == high else "change",
                      "intel_pstate min_perf_pct=%s; wants max_perf_pct (%s)" % (low, high),
                      [] if low == high else [(os.path.join(intel, "min_perf_pct"), high)]))
    epp = [os.path.join(p, "energy_performance_preference") for p in policies
           if os.path.exists(os.path.join(p, "energy_performance_preference"))]
    if epp:
        off = [(f, "performance") for f in epp if read(f) != "performance"]
        items.append(("energy preference", "change" if off else "ok",
                      "%s; wants performance" % ",".join(sorted({read(f, "?") for f in epp})), off))
    if not policies:
        items.append(("governor", "unavailable", "no cpufreq in sysfs (a virtual machine?): "
                      "the CPU frequency cannot be pinned", []))
        items.append(("min frequency", "unavailable", "no cpufreq in sysfs", []))
    else:
        current = {p: read(os.path.join(p, "scaling_governor")) for p in policies}
        wrong = [(os.path.join(p, "scaling_governor"), "performance") for p, v in current.items()
                 if v != "performance"]
        items.append(("governor", "change" if wrong else "ok",
                      "%s (%s); wants performance" % (",".join(sorted(set(current.values()))),
                                                      machine.driver()), wrong))
        # the floor up to the ceiling in force, not to cpuinfo_max_freq: with
        # boost on that can be a boost frequency above scaling_max_freq, which
        # the kernel refuses or clamps
        low = [(os.path.join(p, "scaling_min_freq"), read(os.path.join(p, "scaling_max_freq")))
               for p in policies if read(os.path.join(p, "scaling_min_freq")) != read(os.path.join(p, "scaling_max_freq"))]
        items.append(("min frequency", "change" if low else "ok",
                      "%d of %d policies below scaling_max_freq" % (len(low), len(policies)) if low
                      else "= scaling_max_freq", low))
    # like `cpupower idle-set -D0`: every idle state with an exit latency
    deep = [p + "/disable" for p in sorted(glob.glob(machine.path("cpu[0-9]*/cpuidle/state[1-9]*")))
            if read(p + "/latency", "0") != "0"]
    if not deep:
        items.append(("idle states", "unavailable", "no cpuidle states in sysfs", []))
    else:
        on = [(p, "1") for p in deep if read(p) != "1"]
        items.append(("idle states", "change" if on else "ok",
                      "%d deep states enabled" % len(on) if on else "deep states disabled", on))
    return items


TUNE_ORDER = ("boost", "performance floor", "energy preference", "governor", "min frequency", "idle states")


def virtualization():
    try:
        out = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True).stdout.strip()
        if out and out != "none":
            return out
    except OSError:
        pass
    flags = read("/proc/cpuinfo", "")
    return "a hypervisor (cpuinfo flag)" if re.search(r"^flags\s*:.*\bhypervisor\b", flags, re.M) else None


def all_cpus_jiffies():
    """The first line of /proc/stat, all CPUs: user, nice, system, idle,
    iowait, irq, softirq, steal, ... in jiffies (zeros where a field is missing)."""
    return [int(x) for x in read("/proc/stat", "cpu 0").splitlines()[0].split()[1:]] + [0] * 8


def cpu_times():
    """(steal, total) jiffies of all CPUs, from /proc/stat."""
    values = all_cpus_jiffies()
    return values[7], sum(values)


def busy_cpu_seconds():
    """The CPU time all CPUs have spent on anything (user, nice, system, irq,
    softirq: not idle, iowait or steal), in seconds, from /proc/stat."""
    values = all_cpus_jiffies()
    return sum(values[i] for i in (0, 1, 2, 5, 6)) / float(os.sysconf("SC_CLK_TCK"))


def steal_percent(seconds=0.5):
    s0, t0 = cpu_times()
    time.sleep(seconds)
    s1, t1 = cpu_times()
    return 100.0 * (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0


NUMA_BALANCING = "/proc/sys/kernel/numa_balancing"


def numa_balancing():
    """kernel.numa_balancing (AutoNUMA): "off", "on" (1), "on (mode 2)"..., or "unavailable"."""
    value = read(NUMA_BALANCING)
    return {None: "unavailable", "0": "off", "1": "on"}.get(value, "on (mode %s)" % value)


def observations():
    virt = virtualization()
    steal = steal_percent()
    notes = []
    if numa_balancing().startswith("on"):
        notes.append("kernel.numa_balancing is %s (AutoNUMA): it moves pages and tasks of processes "
                     "numasched binds; the kernel's documentation advises turning it off for bound "
                     "workloads (run --numa-balancing off sets it for the run)" % numa_balancing())
    if virt:
        notes.append("virtualization: %s; the host's other guests add noise" % virt)
    notes.append("steal time: %.1f%% of CPU time over 0.5 s%s" % (steal, " (noisy)" if steal > 1 else ""))
    return virt, steal, notes


def boot_id():
    return read("/proc/sys/kernel/random/boot_id")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def saved_state(machine):
    path = machine.state_file()
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError("cannot read numabench's saved tuning %s: %s" % (path, e))


def tuned_warning(machine):
    """One line when the machine is still tuned by numabench, or None: after
    `tune`, or after a `run --tune` that was killed before it could reset."""
    state = saved_state(machine)
    if state is None:
        return None
    who = "numabench tune"
    if state.get("run_pid"):
        who = "numabench run --tune (pid %d, %s)" % (
            state["run_pid"], "still running" if pid_alive(state["run_pid"]) else "killed before it could reset")
    other_boot = state.get("boot_id") != boot_id()
    return "%s is tuned by %s since %s: %s" % (
        machine.root, who, state.get("time", "?"),
        "the saved state is from another boot, numabench reset will not write it back" if other_boot
        else "numabench reset%s restores it" % ("" if machine.root == "/sys" else " --sysfs " + machine.root))


def pinned_state(items):
    if any(state == "unavailable" for name, state, _, _ in items if name in ("governor", "min frequency")):
        return "not pinned"
    return "pinned" if all(state == "ok" for _, state, _, _ in items) else "not pinned"


def cmd_show(args):
    machine = Machine(args.sysfs)
    items = system_items(machine)
    print("%-18s %s" % ("cpufreq driver:", machine.driver() or "none"))
    for name, state, text, _ in items:
        label = {"ok": "OK", "change": "CHANGE (numabench tune)", "unavailable": "NOT AVAILABLE"}[state]
        print("%-18s %-24s %s" % (name + ":", label, text))
    for note in observations()[2]:
        print("note: " + note)
    print("frequency: %s" % pinned_state(items))
    print("numa balancing: %s" % numa_balancing())
    return 0


def cmd_tune(args, run_pid=None):
    """Writes each item in TUNE_ORDER, read afresh, checks what the kernel
    kept, and saves every file's bytes before its first change."""
    machine = Machine(args.sysfs)
    if machine.root == "/sys" and os.getuid() != 0 and \
            any(state == "change" for _, state, _, _ in system_items(machine)):
        raise UsageError("tune writes to /sys: run it as root")
    state = saved_state(machine) or {"files": [], "boot_id": boot_id(), "sysfs": machine.root}
    if state.get("boot_id") != boot_id():
        raise UsageError("the saved tuning %s is from another boot: it is not written back nor added to; "
                         "remove it once the settings are as they should be" % machine.state_file())
    state["time"] = datetime.datetime.now().isoformat(timespec="seconds")
    state["run_pid"] = run_pid
    saved = {f["path"] for f in state["files"]}
    wrote = refused = 0
    for name in TUNE_ORDER:
        item = next((i for i in system_items(machine) if i[0] == name), None)
        if item is None or item[1] != "change":
            continue
        for path, value in item[3]:
            with open(path) as f:
                before = f.read()
            if path not in saved:
                state["files"].append({"path": path, "bytes": before})
                saved.add(path)
                # saved before it is written: a kill in between loses nothing
                with open(machine.state_file(), "w") as f:
                    json.dump(state, f)
            try:
                write(path, value + "\n")
            except OSError as e:
                refused += 1
                print("the kernel refused %s = %s: %s" % (path, value, e.strerror or e), file=sys.stderr)
                continue
            kept = read(path)
            if kept != value:
                refused += 1
                print("the kernel kept %s = %s, not %s" % (path, kept, value), file=sys.stderr)
            else:
                wrote += 1
    with open(machine.state_file(), "w") as f:
        json.dump(state, f)
    print("tuned: %d written, %d refused; the state before is in %s for `numabench reset`" % (
        wrote, refused, machine.state_file()))
    return 0


def cmd_reset(args):
    machine = Machine(args.sysfs)
    state = saved_state(machine)
    if state is None:
        print("nothing to reset")
        return 0
    if state.get("boot_id") != boot_id():
        raise UsageError("the saved tuning %s is from another boot (boot id %s, now %s): not written back; "
                         "remove it once the settings are as they should be" % (
                             machine.state_file(), state.get("boot_id"), boot_id()))
    failed = 0
    # in the reverse order of tune: the floor comes down before boost is back
    for f in reversed(state["files"]):
        try:
            write(f["path"], f["bytes"])
        except OSError as e:
            failed += 1
            print("could not restore %s: %s" % (f["path"], e), file=sys.stderr)
    os.unlink(machine.state_file())
    print("restored %d settings%s" % (len(state["files"]) - failed, ", %d failed" % failed if failed else ""))
    return 0
