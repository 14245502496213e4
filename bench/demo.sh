#!/usr/bin/env bash
# The README's main command: installs what is missing, builds and installs
# numasched, then runs a short A/B benchmark (numasched not loaded vs loaded)
# on throwaway clusters, OLTP read-only and parallel analytic, with runs
# interleaved, and prints the comparison and where the JSON and plots are.
# About five minutes on a two-core machine.
#
#     bash bench/demo.sh
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/test/deps.sh" bench
exec /usr/bin/python3 "$top/bench/numabench" demo
