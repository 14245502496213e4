# bench/throwaway_cluster.sh - sourced by the measurement scripts: a cluster
# in a temporary directory, numasched preloaded, reached over a Unix socket,
# run as postgres when we are root, and removed on exit.
#
#   init_cluster "setting = value" ...   initdb, then the settings
#   start_cluster / stop_cluster
#   psql_ "SQL"                          one query, unaligned
#   on_cleanup "command"                 run before the cluster goes
bindir=$(pg_config --bindir)
work=$(mktemp -d /tmp/numasched-cluster-XXXXXX)
chown postgres: "$work" 2>/dev/null || true
port=$((20000 + RANDOM % 20000))
cleanup_commands=()

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
on_cleanup() { cleanup_commands+=("$1"); }
cleanup() {
	for c in "${cleanup_commands[@]}"; do eval "$c" || true; done
	as_pg "$bindir/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

init_cluster() {
	as_pg "$bindir/initdb" -D "$work/data" -A trust >/dev/null
	{
		echo "shared_preload_libraries = 'numasched'"
		echo "port = $port"
		echo "unix_socket_directories = '$work'"
		echo "listen_addresses = ''"
		printf '%s\n' "$@"
	} >> "$work/data/postgresql.conf"
}
start_cluster() { as_pg "$bindir/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null; }
stop_cluster() { as_pg "$bindir/pg_ctl" -D "$work/data" -m fast -w -t 600 stop >/dev/null; }
psql_() { as_pg "$bindir/psql" -X -A -t -h "$work" -p "$port" -d postgres -c "$1"; }
