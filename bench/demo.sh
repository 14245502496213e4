#!/usr/bin/env bash
# The README's main command: installs what is missing, builds and installs
# numasched, then measures on throwaway clusters, against numasched not
# loaded, with runs interleaved: what its defaults cost (OLTP read-only),
# isolation of an OLTP role from a reporting role at background priority
# (any machine), locality (machines with two memory nodes or more) and the
# sched_ext companion (where it is installed and the kernel has sched_ext).
# Ends with a verdict table and where the JSON and plots are. About seven
# minutes on a two-core machine.
#
#     bash bench/demo.sh
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/test/deps.sh" bench
exec /usr/bin/python3 "$top/bench/numabench" demo "$@"
