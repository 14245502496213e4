"""The sched_ext companion (numasched-scx) loaded for the runs of a
configuration with bench.companion=on, and unloaded after each: the
configurations' runs interleave, and the other clusters' numasched follows
it back to CPU masks."""

import contextlib
import os
import signal
import subprocess
import time

from ._common import UsageError
from ._system import read

OPS = "/sys/kernel/sched_ext/root/ops"


def wanted(cluster):
    return cluster.settings.get("bench.companion") == "on"


SCHED_EXT = 7


def check(bindir):
    """Before the clusters are set up: root, a kernel with sched_ext, the
    loader.  Then the harness itself becomes SCHED_EXT, and with it all it
    starts (the servers, pgbench): the kernel ranks its fair class above
    sched_ext, so a client or a server process left there would run ahead of
    every backend under the companion, as nothing does on a machine that runs
    only PostgreSQL.  Without the companion loaded, SCHED_EXT is the fair
    class: the other configurations run as before."""
    if os.getuid() != 0:
        raise UsageError("bench.companion=on: loading numasched-scx needs root")
    if read("/sys/kernel/sched_ext/state") is None:
        raise UsageError("bench.companion=on: this kernel has no sched_ext (no /sys/kernel/sched_ext)")
    if not os.access(os.path.join(bindir, "numasched-scx"), os.X_OK):
        raise UsageError("bench.companion=on: no %s (make install where clang, bpftool and "
                         "libbpf-dev are)" % os.path.join(bindir, "numasched-scx"))
    os.sched_setscheduler(0, SCHED_EXT, os.sched_param(0))


def wait_for(check_fn, seconds, what):
    deadline = time.time() + seconds
    while not check_fn():
        if time.time() > deadline:
            raise RuntimeError("numasched-scx: %s within %d s" % (what, seconds))
        time.sleep(0.05)


@contextlib.contextmanager
def loaded(cluster, bindir):
    """numasched-scx loaded and followed by the cluster's numasched (a new
    session is SCHED_EXT) for the body, if the configuration wants it."""
    if not wanted(cluster):
        yield
        return
    # the loader with the kernel's scheduler, not under its own
    loader = subprocess.Popen([os.path.join(bindir, "numasched-scx")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0)))
    try:
        wait_for(lambda: (read(OPS) or "").strip() == "numasched" or loader.poll() is not None, 30,
                 "not loaded")
        if loader.poll() is not None:
            raise RuntimeError("numasched-scx exited: %s" % loader.stderr.read().strip()[-500:])
        # a statement wakes a dozing scheduler, which looks every 100 ms
        wait_for(lambda: cluster.psql("SELECT executor FROM numasched_processes "
                                      "WHERE pid = pg_backend_pid()").strip() == "sched_ext",
                 10, "numasched did not follow it")
        yield
    finally:
        loader.send_signal(signal.SIGTERM)
        loader.wait()
        wait_for(lambda: (read(OPS) or "").strip() == "", 10, "not unloaded")
