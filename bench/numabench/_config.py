"""Configurations (baseline, numasched, NAME=BASE,setting=value...) and the
overview of the system a run records."""

import datetime
import glob
import os
import platform
import re
import subprocess

from ._common import TOP, UsageError
from ._system import Machine, numa_balancing, observations, pinned_state, read


BUILTIN_CONFIGS = {
    "baseline": {"shared_preload_libraries": "''"},
    "numasched": {"shared_preload_libraries": "'numasched'"},
}


def parse_config(text):
    """NAME, or NAME=BASE[,setting=value...] with BASE baseline or numasched;
    bench.analytic_clients=N and bench.companion=on are the harness's, not the server's."""
    name, _, rest = text.partition("=")
    if not re.match(r"^[A-Za-z][\w-]*$", name):
        raise UsageError("configuration name \"%s\" must be a word (letters, digits, - and _)" % name)
    if not rest:
        if name not in BUILTIN_CONFIGS:
            raise UsageError("configuration \"%s\" needs a base: %s=baseline or %s=numasched[,setting=value...]"
                             % (name, name, name))
        return name, dict(BUILTIN_CONFIGS[name])
    base, *pairs = rest.split(",")
    if base not in BUILTIN_CONFIGS:
        raise UsageError("configuration \"%s\": base must be baseline or numasched, not \"%s\"" % (name, base))
    settings = dict(BUILTIN_CONFIGS[base])
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not re.match(r"^[a-z_][\w.]*$", key):
            raise UsageError("configuration \"%s\": \"%s\" is not setting=value" % (name, pair))
        if key.startswith("bench.") and not ((key == "bench.analytic_clients" and value.isdigit()) or
                                             (key == "bench.companion" and value in ("on", "off"))):
            raise UsageError("configuration \"%s\": \"%s\": the bench. settings are "
                             "bench.analytic_clients=N (two-roles: N analytic clients in this "
                             "configuration, 0 for the OLTP role alone) and bench.companion=on "
                             "(numasched-scx loaded for its runs)" % (name, pair))
        if key.startswith("role.") and not re.match(r"^role\.[a-z_]\w*\.[a-z_][\w.]*$", key):
            raise UsageError("configuration \"%s\": \"%s\" is not role.ROLE.SETTING=value "
                             "(such as role.oltp.numasched.cpu_groups=0)" % (name, key))
        # a word or a number (with a unit) as it is; anything else ("0-1") quoted,
        # as postgresql.conf and ALTER ROLE ... SET both need it
        plain = re.match(r"^([A-Za-z_]\w*|-?\d+(\.\d+)?[A-Za-z]*)$", value)
        settings[key] = value if plain else "'%s'" % value.replace("'", "''")
    return name, settings


def git_commit():
    """The checkout's commit, or None: a tree from a tarball, or a machine without git (Debian's
    minimal installs have none), measures all the same."""
    try:
        r = subprocess.run(["git", "-C", TOP, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", TOP, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return None
    return (r.stdout.strip() + ("-dirty" if dirty else "")) if r.returncode == 0 else None


def cpu_model():
    m = re.search(r"^model name\s*:\s*(.+)$", read("/proc/cpuinfo", ""), re.M)
    return m.group(1) if m else platform.processor()


def node_summary():
    nodes = sorted(glob.glob("/sys/devices/system/node/node[0-9]*"))
    return ["%s: CPUs %s" % (os.path.basename(n), read(n + "/cpulist", "?")) for n in nodes]


def system_overview(args, bindir, items):
    version = subprocess.run([os.path.join(bindir, "postgres"), "--version"], capture_output=True,
                             text=True).stdout.strip()
    virt, steal, _ = observations()
    state = {name: text for name, _, text, _ in items}
    return {
        "git_commit": git_commit(),
        "postgresql": version,
        "cpu_model": cpu_model(),
        "cpus_online": read("/sys/devices/system/cpu/online"),
        "nodes": node_summary(),
        "server_numactl": args.server_numactl or "none",
        "server_cgroup": "a cpu cgroup of its own per server" if getattr(args, "server_cgroup", False) else "none",
        "pgbench_cpus": args.pgbench_cpus or "any",
        "frequency": pinned_state(items),
        "cpufreq_driver": Machine(args.sysfs).driver() or "none",
        "governor": state.get("governor"),
        "boost": state.get("boost"),
        "idle_states": state.get("idle states"),
        "huge_pages": "on" if args.huge_pages else "off",
        "numa_balancing": numa_balancing(),
        "kernel": platform.release(),
        "virtualization": virt or "none",
        "steal_percent": round(steal, 2),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
    }
