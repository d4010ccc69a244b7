#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job in one command: set-up and build if needed, then
# turbolb-loadgen -> turbolbd -> turbolb-server on the memif topology
# (scripts/lib/topology.sh), the server's logical cores emulated
# (--mode emulate: each core a FIFO server in TSC time, all on one thread),
# so that the queueing the policies cause, not the machine's scheduling,
# sets the latency. It measures:
#   - the path at light load, the load generator straight to the server
#     and through turbolbd: what the daemon adds;
#   - each policy at 80% of the emulated cores' capacity, switched live
#     through telemetry, in interleaved rounds;
# then prints one table, a verdict per policy against rss, the daemon's
# telemetry, and stops everything it started.
#
#   scripts/demo.sh [--quick] [--rounds N] [--duration S] [--rate RPS]
#                   [--no-build]
#
#   --quick      one round of 1.5 s per policy (the test command runs this)
#   --rounds N   rounds of every policy (default 3)
#   --duration S measured seconds per policy and round (default 3)
#   --rate RPS   offered load (default 1280: 80% of 8 cores of 5 ms)
#   --no-build   use the build as it is (BUILD, default build/)
#
#   scripts/demo.sh --dns [OPTIONS]   real software instead: dnsperf
#                through turbolbd to nsd servers in network namespaces,
#                every policy (scripts/demo-dns.sh, its options; root)
#
# The tables are explained in docs/loadgen.md ("The demo").
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

usage() {
	awk 'NR < 3 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
	exit "${1:-2}"
}

# The emulated server: 8 cores, exponential service times of mean 5 ms,
# so its capacity is 8 / 5 ms = 1600 requests/s. The service times are
# long because a process of this demo descheduled for tens of
# milliseconds (on a busy 2-CPU machine) delays every response in flight
# by as much: the queueing the policies cause must be larger. 40 client
# flows: the Toeplitz hash (rss) gives four cores 6 flows and four cores
# 4, so rss loads its hot cores at 1.2x the mean.
cores=8
svc_ms=5
dist=exp:${svc_ms}ms
flows=40
policies=(rss rr random pod jsq jlq jbsq)
rate=1280
rounds=3
secs=3
warmup=0.5
build=1
# Light load for the path rows: no queueing, so their difference is the
# daemon's hop.
light_runs=3
light_secs=1
light_rate=500
light_dist=fixed:20us

need() {
	[ $# -ge 2 ] || { echo "demo: $1 needs a value" >&2; usage; }
}
while [ $# -gt 0 ]; do
	case $1 in
	--dns) shift; exec "$top/scripts/demo-dns.sh" "$@" ;;
	--quick) rounds=1; secs=1.5; warmup=0.3; shift ;;
	--rounds) need "$@"; rounds=$2; shift 2 ;;
	--duration) need "$@"; secs=$2; shift 2 ;;
	--rate) need "$@"; rate=$2; shift 2 ;;
	--no-build) build=; shift ;;
	-h | --help) usage 0 ;;
	*) echo "demo: unknown argument '$1'" >&2; usage ;;
	esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "demo: --rounds '$rounds': want a whole number >= 1" >&2; exit 2; }
[[ $rate =~ ^[1-9][0-9]*$ ]] || { echo "demo: --rate '$rate': want a whole number of requests/s >= 1" >&2; exit 2; }
[[ $secs =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "demo: --duration '$secs': want seconds" >&2; exit 2; }

BUILD=${BUILD:-build}
if [ -n "$build" ]; then
	if [ ! -x "$BUILD/src/daemon/turbolbd" ] || [ ! -x "$BUILD/src/loadgen/turbolb-loadgen" ]; then
		scripts/setup.sh
		[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
	fi
	ninja -C "$BUILD" >/dev/null
fi
. scripts/lib/topology.sh
for exe in "$TLBD" "$TLBSRV" "$TLBLG"; do
	[ -x "$exe" ] || { echo "demo: no $exe (BUILD=$BUILD; build first)" >&2; exit 1; }
done

topo_init demo
# Under set -e the trap's first failing kill would end it early.
trap 'set +e; topo_stop' EXIT
# A failure says where, never a silent exit.
trap 'echo "demo: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
# The server's worker lcore on CPU 1 beside the daemon (both sleep when
# idle), the load generator on CPU 0.
export TOPO_SRV_LCORES=0@0,1@1
srv_opts=(--mode emulate --emu-arrival sent)
echo "turbolb demo: turbolb-loadgen -> turbolbd -> turbolb-server ($cores emulated cores, $dist) on memif, --no-huge"
echo "run folder: $TOPO_RUN; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# A bound on one load generator run, not a timing assumption: a machine
# that stalls a run for minutes gets it interrupted (SIGINT: the generator
# writes its point, marked interrupted, which the report counts as
# disturbed).
lg_limit_s=60
lg_bound() { timeout -s INT -k 10 "$lg_limit_s" "$@"; }

# report NAME: the load generator's log when a run failed.
report_fail() {
	echo "demo: turbolb-loadgen failed ($1):" >&2
	tail -n 5 "$TOPO_RUN/loadgen.log" >&2
}

# measure OUT CMD..: runs CMD, which writes the point OUT, and while the
# machine disturbed it (no result, or the load generator held up past
# demo_report.py's limit) again, up to twice. The report leaves out a point
# still disturbed, and says so.
measure() {
	local out=$1 try
	shift
	"$@"
	for try in 1 2; do
		python3 scripts/demo_report.py check "$out" && return 0
		echo "  $(basename "$out" .json): disturbed by the machine (load generator held up), again"
		mv "$out" "${out%.json}-disturbed$try.json"
		"$@"
	done
}

# direct_run OUT: the load generator straight to a server of one emulated
# core, the point into OUT: the generator is the memif server here
# (role=server), the server its client, and no daemon sits between them.
direct_run() {
	local out=$1 sock=$TOPO_RUN/direct.sock pid rc=0
	rm -f "$sock"
	${MESON_EXE_WRAPPER:-} "$TLBSRV" --no-huge -m 128 --file-prefix "srvd-$TOPO_NAME" \
		--lcores="$TOPO_SRV_LCORES" \
		--vdev="net_memif0,role=client,socket=$sock,socket-abstract=no,id=0" \
		--log-level=lib.*:warning -- --cores 1 "${srv_opts[@]}" \
		--idle-sleep-us 20 --stats "$TOPO_RUN/direct-server.json" \
		> "$TOPO_RUN/direct-server.log" 2>&1 &
	pid=$!
	TOPO_PIDS+=("$pid")
	lg_bound ${MESON_EXE_WRAPPER:-} "$TLBLG" --no-huge -m 128 --file-prefix "lgd-$TOPO_NAME" -l 0 \
		--vdev="net_memif0,role=server,socket=$sock,socket-abstract=no,id=0" \
		--log-level=lib.*:warning \
		-- --json --rate "$light_rate" --duration "$light_secs" --warmup 0.3 \
		--dist "$light_dist" --flows "$flows" --timeout-ms 1000 \
		> "$out" 2> "$TOPO_RUN/loadgen.log" || rc=$?
	[ "$rc" = 0 ] || report_fail direct
	topo_kill "$pid"
	unset 'TOPO_PIDS[-1]'
}
# The path rows: noise only ever adds latency, so each path runs
# $light_runs times and the report takes the run with the lowest p50.
for ((k = 1; k <= light_runs; k++)); do
	direct_run "$TOPO_RUN/direct-$k.json"
done

topo_config cores=$cores policy=jsq credits=ring
topo_start_daemon
topo_start_server "${srv_opts[@]}"

# topo_loadgen under lg_bound (through the wrapper it honours).
lg_bound_topo() {
	MESON_EXE_WRAPPER="timeout -s INT -k 10 $lg_limit_s ${MESON_EXE_WRAPPER:-}" \
		topo_loadgen "$@"
}

lg() {
	local out=$1
	shift
	lg_bound_topo "$out" --duration "$secs" --warmup "$warmup" \
		--flows "$flows" --timeout-ms 1000 "$@" || report_fail "$out"
}
for ((k = 1; k <= light_runs; k++)); do
	lg_bound_topo "$TOPO_RUN/via-$k.json" --duration "$light_secs" \
		--warmup 0.3 --flows "$flows" --timeout-ms 1000 \
		--rate "$light_rate" --dist "$light_dist" || report_fail via
done

# Switches the daemon's policy through telemetry; a busy machine may let
# one request time out, so it tries three times before it gives up.
set_policy() {
	local try ans=
	for try in 1 2 3; do
		ans=$(topo_telemetry "/turbolb/policy,$1") || true
		case $ans in
		*'"ok": 1'*) return 0 ;;
		esac
	done
	echo "demo: turbolbd did not switch to policy $1: ${ans:-no telemetry answer}" >&2
	return 1
}

for ((r = 1; r <= rounds; r++)); do
	echo "round $r of $rounds: ${policies[*]}"
	for p in "${policies[@]}"; do
		set_policy "$p"
		out=$TOPO_RUN/$p-r$r.json
		measure "$out" lg "$out" --rate "$rate" --dist "$dist"
	done
done

echo
python3 scripts/demo_report.py table "$TOPO_RUN" --policies "${policies[*]}" \
	--rounds "$rounds" --light-runs "$light_runs"

topo_telemetry /turbolb/stats > "$TOPO_RUN/stats.json"
topo_telemetry /turbolb/cores > "$TOPO_RUN/cores.json"
echo
echo "daemon telemetry, all runs (/turbolb/stats, non-zero counters):"
python3 scripts/demo_report.py stats "$TOPO_RUN/stats.json"
echo "per host core (/turbolb/cores):"
python3 scripts/demo_report.py cores "$TOPO_RUN/cores.json"
cat <<EOF

How to read it: each host core is emulated (turbolb-server --mode emulate):
a request waits for the requests ahead of it on its core and then takes
its service time ($dist), so p99 shows how well a policy spreads the
load. rate: offered requests/s (capacity $((cores * 1000 / svc_ms)): $cores cores
of $svc_ms ms mean); hot: the busiest core's requests over the mean (1.00: even).
Machine noise: the p99 range across rounds, and every absolute number of
the path rows, come from this machine ($(nproc) CPUs shared by the load
generator, turbolbd, turbolb-server and whatever else runs), and so does
any difference the verdict calls no clear difference.
EOF
