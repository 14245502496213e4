#!/usr/bin/env bash
# The README's main command: installs what is missing, builds and installs
# numasched, then shows what numasched would do on this machine and on a
# 2-socket EPYC (NPS4) and an 8-socket machine, replays a seeded workload
# through numasched and three baselines, and times the decisions.
#
#     bash bench/demo.sh
#
# (The A/B benchmark on throwaway clusters replaces this with bench/.)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"

bash test/deps.sh
make -s >/dev/null && make -s install >/dev/null
plan="$(pg_config --bindir)/numasched-plan"

fixtures=$(mktemp -d /tmp/numasched-demo-XXXXXX)
trap 'rm -rf "$fixtures"' EXIT
python3 test/fixtures/make_fixtures.py "$fixtures" epyc-nps4 8x30

run() {
	echo
	echo "\$ numasched-plan $*" | sed "s|$fixtures/|fixtures/|g"
	"$plan" "$@"
}

run topology
run topology --sysfs "$fixtures/epyc-nps4"
run simulate --sysfs "$fixtures/epyc-nps4"
run simulate --sysfs "$fixtures/8x30"
run bench --sysfs "$fixtures/8x30" --groups-per-node 30 --processes 1000
