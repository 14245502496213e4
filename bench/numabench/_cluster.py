"""Throwaway PostgreSQL clusters, run as the postgres user."""

import os
import shutil
import subprocess
import time

from ._common import UsageError
from ._system import read


def pg_dirs(pg_config):
    """The bindir and pkglibdir of the PostgreSQL that pg_config describes."""
    try:
        out = subprocess.run([pg_config, "--bindir", "--pkglibdir"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        if pg_config == "pg_config":
            raise UsageError("pg_config not found: install the suite's postgresql-server-dev-NN (bash "
                             "test/deps.sh bench) or name one with --pg-config")
        raise UsageError("--pg-config %s does not run as pg_config" % pg_config)
    if len(out) < 2 or not out[0] or not out[1]:
        raise UsageError("%s --bindir --pkglibdir printed no directories" % pg_config)
    return out[0].strip(), out[1].strip()


def cpu_cgroup_mount():
    """Where the hierarchy with the cpu controller is mounted: cgroup v1's,
    else cgroup v2's (cpu turned on below its root)."""
    mounts = [line.split() for line in (read("/proc/mounts") or "").splitlines()]
    for f in mounts:
        if len(f) > 3 and f[2] == "cgroup" and "cpu" in f[3].split(","):
            return f[1]
    for f in mounts:
        if len(f) > 2 and f[2] == "cgroup2" and "cpu" in (read(os.path.join(f[1], "cgroup.controllers")) or "").split():
            if "cpu" not in (read(os.path.join(f[1], "cgroup.subtree_control")) or "").split():
                with open(os.path.join(f[1], "cgroup.subtree_control"), "w") as out:
                    out.write("+cpu")
            return f[1]
    raise UsageError("--server-cgroup: no cgroup hierarchy with the cpu controller is mounted here")


def remove_cgroup(path):
    """A cgroup and the children the server made, once their processes are gone."""
    if not path or not os.path.isdir(path):
        return
    children = [os.path.join(path, d) for d in os.listdir(path) if os.path.isdir(os.path.join(path, d))]
    for d in children + [path]:
        for _ in range(50):
            try:
                os.rmdir(d)
                break
            except OSError:
                time.sleep(0.1)


def as_postgres(cmd):
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.getuid() == 0 else cmd


class Cluster:
    """A throwaway cluster in its own directory, reached over a Unix socket."""

    def __init__(self, name, settings, workdir, port, bindir, numactl=None, cgroup=False):
        self.name, self.settings, self.port, self.bindir = name, settings, port, bindir
        self.dir = os.path.join(workdir, name)
        self.data = os.path.join(self.dir, "data")
        self.numactl = numactl
        self.running = False
        # a cpu cgroup of its own, the postgres user's, as Delegate=yes in a
        # systemd unit gives it (numasched puts background work in an idle child)
        self.cgroup = None
        if cgroup:
            if os.getuid() != 0:
                raise UsageError("--server-cgroup: making a cgroup for each server needs root")
            self.cgroup = os.path.join(cpu_cgroup_mount(), "numabench-%s-%d" % (name, os.getpid()))

    def run(self, cmd, **kw):
        # in a directory postgres may enter: the caller's may be 0700
        kw.setdefault("cwd", os.path.dirname(self.dir))
        return subprocess.run(as_postgres(cmd), capture_output=True, text=True, **kw)

    def initdb(self):
        os.makedirs(self.dir)
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        r = self.run([os.path.join(self.bindir, "initdb"), "-D", self.data, "-A", "trust", "-N"])
        if r.returncode:
            raise RuntimeError("initdb failed: " + r.stderr.strip())
        conf = {"port": self.port, "unix_socket_directories": "'%s'" % self.dir,
                "listen_addresses": "''", "max_connections": 100}
        conf.update({k: v for k, v in self.settings.items() if not k.startswith(("role.", "bench."))})
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n# numabench configuration %s\n" % self.name)
            for key, value in conf.items():
                f.write("%s = %s\n" % (key, value))

    def start(self):
        cmd = [os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-l",
               os.path.join(self.dir, "server.log"), "-w", "start"]
        if self.numactl:
            cmd = ["numactl"] + self.numactl.split() + cmd
        if self.cgroup:
            os.makedirs(self.cgroup, exist_ok=True)
            shutil.chown(self.cgroup, "postgres", "postgres")
            for f in ("cgroup.procs", "tasks", "cgroup.subtree_control"):
                if os.path.exists(os.path.join(self.cgroup, f)):
                    shutil.chown(os.path.join(self.cgroup, f), "postgres", "postgres")
            # joined by root, which cgroup v2 requires of a move from outside
            r = subprocess.run(["sh", "-c", 'echo $$ >"$0/cgroup.procs" && exec "$@"', self.cgroup] + as_postgres(cmd),
                               capture_output=True, text=True, cwd=os.path.dirname(self.dir))
        else:
            r = self.run(cmd)
        if r.returncode:
            raise RuntimeError("server %s did not start: %s\n%s" % (
                self.name, r.stderr.strip(), read(os.path.join(self.dir, "server.log"), "")[-2000:]))
        self.running = True

    def stop(self):
        if self.running:
            self.run([os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop"])
            self.running = False
        remove_cgroup(self.cgroup)

    def conninfo(self):
        return ["-h", self.dir, "-p", str(self.port)]

    def postmaster_pid(self):
        return int((read(os.path.join(self.data, "postmaster.pid")) or "0").split("\n")[0])

    def psql(self, sql, variables=None, file=None):
        cmd = [os.path.join(self.bindir, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"] + \
            self.conninfo() + ["-d", "postgres"]
        for k, v in (variables or {}).items():
            cmd += ["-v", "%s=%s" % (k, v)]
        cmd += ["-f", file] if file else ["-c", sql]
        r = self.run(cmd)
        if r.returncode:
            raise RuntimeError("psql on %s failed: %s" % (self.name, r.stderr.strip()))
        return r.stdout.strip()

    def pgbench_cmd(self, args, cpus=None):
        cmd = [os.path.join(self.bindir, "pgbench")] + self.conninfo() + args + ["postgres"]
        return as_postgres(["taskset", "-c", cpus] + cmd if cpus else cmd)

    def pgbench(self, args, cpus=None):
        return subprocess.run(self.pgbench_cmd(args, cpus), capture_output=True, text=True,
                              cwd=os.path.dirname(self.dir))

    def pgbench_start(self, args, cpus=None):
        """pgbench in the background (the second role of two-roles)."""
        return subprocess.Popen(self.pgbench_cmd(args, cpus), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=os.path.dirname(self.dir))

    def background_way(self):
        """How numasched gives background priority in this server, as it
        said at start: None where numasched is not loaded."""
        log = read(os.path.join(self.dir, "server.log"), "") or ""
        if "numasched" not in self.settings.get("shared_preload_libraries", ""):
            return None
        if "numasched gives background processes the idle cpu cgroup" in log:
            return "an idle cpu cgroup"
        if "numasched gives background processes nice 19 for their autogroups" in log:
            return "its autogroup at nice 19"
        return "SCHED_IDLE"

    def apply_role_settings(self):
        """role.NAME.SETTING=VALUE of the configuration: ALTER ROLE NAME SET
        SETTING = VALUE, a workload class for that role's sessions."""
        for key, value in self.settings.items():
            if key.startswith("role."):
                _, role, setting = key.split(".", 2)
                self.psql('ALTER ROLE "%s" SET %s = %s' % (role, setting, value))
