"""numabench: prove on your own machine whether numasched helps.

    numabench show | tune | reset [--sysfs ROOT]
    numabench run [--config NAME[=BASE[,setting=value|role.ROLE.setting=value...]]]...
                  [--workload W] [--rate TPS] [--analytic-clients N]
                  [--clients N[,N...]] [--duration S] [--runs N] [--scale N] [--trim]
                  [--server-numactl ARGS] [--server-cgroup] [--pgbench-cpus LIST] [--huge-pages]
                  [--tune [--sysfs ROOT]] [--out DIR] [--keep-logs]
    numabench compare A.json [B.json] [--old CONFIG --new CONFIG]
    numabench merge A.json B.json... --out DIR [--across-commits]
    numabench timeline DIR [--window S] [--until S]
    numabench demo

Each configuration gets a fresh cluster (initdb) with the same generated data;
the runs of the configurations are interleaved, each at each place of a round
equally often (A B, B A, ...; a balanced Latin square for more) so that
drift of a shared machine hits all of them, with a CHECKPOINT before each run.  Results
are written as JSON (every run, every setting), a text table and a PNG plot.
Run as root, the servers run as the postgres user.  Every server started is
stopped, and a tuned machine is reset, on exit, on error and on Ctrl-C.

Python standard library only (Debian's python3-matplotlib for the plot).
"""
