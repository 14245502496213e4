#!/usr/bin/env bash
# Priority inversion: normal sessions keep every CPU busy while background
# sessions update the rows a normal updater updates too, holding each row
# lock through some CPU work.  The updater's longest transaction is the
# longest wait of a normal backend behind a background lock holder (plus its
# own few ms); compared with the same roles without numasched, in
# interleaved runs on fresh clusters.
#
#     bash bench/inversion.sh [RUNS] [SECONDS]
#
# Prints, per run and configuration, the updater's transactions, its mean
# and its longest latency (pgbench's log), and the background updates done.
set -euo pipefail

runs=${1:-4}
seconds=${2:-15}
here=$(dirname "${BASH_SOURCE[0]}")
. "$here/throwaway_cluster.sh"
cpus=$(nproc)
scripts=$work/scripts
mkdir -p "$scripts"
cat > "$scripts/hold.sql" <<'EOF'
\set id random(1, 4)
BEGIN;
UPDATE hot SET v = v + 1 WHERE id = :id;
SELECT sum(g) FROM generate_series(1, 300000) g;
COMMIT;
EOF
cat > "$scripts/update.sql" <<'EOF'
\set id random(1, 4)
UPDATE hot SET v = v + 1 WHERE id = :id;
EOF
cat > "$scripts/busy.sql" <<'EOF'
SELECT sum(g) FROM generate_series(1, 300000) g;
EOF
chown -R postgres: "$scripts"

pgbench_() { as_pg "$bindir/pgbench" -n -h "$work" -p "$port" "$@"; }

# one run: $1 = label, $2 = "numasched" or "baseline"
run_once() {
	local label=$1 config=$2
	rm -rf "$work/data"
	if [ "$config" = numasched ]; then
		init_cluster "numasched.rebalance_interval = 1000"
	else
		init_cluster
		sed -i "s/^shared_preload_libraries = 'numasched'/#&/" "$work/data/postgresql.conf"
	fi
	start_cluster
	psql_ "CREATE TABLE hot (id int PRIMARY KEY, v int); INSERT INTO hot SELECT g, 0 FROM generate_series(1, 4) g;
	       CREATE ROLE reports LOGIN; CREATE ROLE app LOGIN; GRANT ALL ON hot TO reports, app;" >/dev/null
	[ "$config" = numasched ] && psql_ "ALTER ROLE reports SET numasched.cpu_priority = background" >/dev/null
	(cd "$work" && pgbench_ -U reports -c 2 -T "$seconds" -f "$scripts/hold.sql" postgres > "$work/hold.out" 2>&1) &
	(cd "$work" && pgbench_ -U app -c "$((cpus * 2))" -T "$seconds" -f "$scripts/busy.sql" postgres > /dev/null 2>&1) &
	(cd "$work" && pgbench_ -U app -c 1 -T "$seconds" -R 20 -l --log-prefix="$work/upd" -f "$scripts/update.sql" postgres > /dev/null 2>&1) &
	wait
	stop_cluster
	# pgbench's log: client, tx, latency (us), script, epoch, us
	awk -v label="$label" -v holds="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/hold.out")" '
		{ n++; sum += $3; if ($3 > max) max = $3 }
		END { printf "%-10s updater: %d transactions, mean %.1f ms, longest %.1f ms; background updates %s\n",
		      label, n, sum / n / 1000, max / 1000, holds }' "$work"/upd.*
	rm -f "$work"/upd.*
}

for r in $(seq 1 "$runs"); do
	for c in baseline numasched; do
		run_once "$c" "$c"
	done
done
