"""Paths, constants and the one-line messages every step shares."""

import os


# bench/, where the workloads and results are
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(HERE)
WORKLOAD_DIR = os.path.join(HERE, "workloads")
STATE_FILE = "/var/tmp/numabench-tune.json"
TRIM_TOLERANCE = 0.01


class UsageError(Exception):
    """Bad input: one line, exit status 2."""


def log(text):
    print("numabench: " + text, flush=True)
