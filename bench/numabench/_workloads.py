"""The pgbench workloads: their scripts, weights and data."""

import os
import shutil

from ._common import WORKLOAD_DIR
from ._pgbench import parse_summary


WORKLOADS = ("oltp-ro", "tpcb", "analytic", "mixed", "two-roles", "bursty")

# two-roles: the OLTP stream's role and the analytic stream's, each its own
# pgbench at once, so that a configuration can give each a workload class
TWO_ROLES = ("oltp", "analytics")


def stage_workloads(workdir):
    """A copy of the workload scripts in the work directory: pgbench and psql
    run as postgres, which may not enter the checkout (root's home, a
    mktemp -d directory: 0700)."""
    staged = os.path.join(workdir, "workloads")
    shutil.copytree(WORKLOAD_DIR, staged)
    for f in [staged] + [os.path.join(staged, n) for n in os.listdir(staged)]:
        os.chmod(f, 0o755 if os.path.isdir(f) else 0o644)
    return staged


def workload_files(workload, oltp_weight, analytic_weight, wdir=WORKLOAD_DIR):
    """pgbench arguments that select the workload's scripts."""
    ro = os.path.join(wdir, "oltp_ro.sql")
    q1 = os.path.join(wdir, "analytic_q1.sql")
    join = os.path.join(wdir, "analytic_join.sql")
    if workload == "oltp-ro":
        return ["-f", ro]
    if workload == "tpcb":
        return ["-b", "tpcb-like"]
    if workload in ("analytic", "two-roles-analytic"):
        return ["-f", q1 + "@1", "-f", join + "@1"]
    if workload == "two-roles":
        return ["-f", ro]
    if workload == "bursty":
        return ["-f", os.path.join(wdir, "bursty.sql")]
    return ["-f", "%s@%d" % (ro, oltp_weight), "-f", "%s@%d" % (q1, analytic_weight),
            "-f", "%s@%d" % (join, analytic_weight)]


def size_bursts(cluster, burst_ms, wdir=WORKLOAD_DIR):
    """burst_rows for bursty's query to take about burst_ms alone on this
    cluster: timed once at 200,000 rows (one client, 20 queries), scaled."""
    probe = 200000
    r = cluster.pgbench(["-n", "-c", "1", "-j", "1", "-t", "20", "-D", "burst_rows=%d" % probe,
                         "-f", os.path.join(wdir, "bursty.sql")])
    if r.returncode or "latency average" not in r.stdout:
        raise RuntimeError("sizing bursty's query failed: " + (r.stderr or r.stdout).strip()[-2000:])
    latency_ms = parse_summary(r.stdout)["latency_avg_ms"]
    return max(1000, int(probe * burst_ms / max(latency_ms, 0.001)))


def bursty_rate(utilisation, burst_ms, cpus):
    """pgbench -R for bursty: queries of burst_ms arriving at random so that,
    on average, they keep utilisation percent of the server's CPUs busy."""
    return utilisation / 100.0 * cpus * 1000.0 / burst_ms


def analytic_rows(scale):
    """Rows of lineitem and part: about 30 MB of lineitem per scale unit, well
    above min_parallel_table_scan_size, so the plans use parallel workers."""
    return 300000 * scale, 20000 * scale


def load_data(cluster, workload, scale, wdir=WORKLOAD_DIR):
    if workload in ("oltp-ro", "tpcb", "mixed", "two-roles"):
        r = cluster.pgbench(["-i", "-q", "-s", str(scale)])
        if r.returncode:
            raise RuntimeError("pgbench -i failed: " + r.stderr.strip())
    if workload in ("analytic", "mixed", "two-roles"):
        rows, parts = analytic_rows(scale)
        cluster.psql(None, {"rows": rows, "parts": parts},
                     file=os.path.join(wdir, "analytic_setup.sql"))
    if workload == "two-roles":
        for role in TWO_ROLES:
            cluster.psql('CREATE ROLE "%s" LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO "%s"'
                         % (role, role))
