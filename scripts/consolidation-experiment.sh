#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The consolidation experiment (docs/results-consolidation.md): the setting
# of Soma et al., IPSJ OS-163 (2024), on the emulated memif topology. The
# server's logical cores are threads pinned to ONE CPU that busy-poll (as
# guests that keep their vCPUs busy), so they compete for it in scheduler
# slices; turbolbd, turbolb-loadgen and turbolb-kickd share the other CPU.
# A low rate of short requests, for 1, 2, 3 and 4 threads per CPU, with:
#
#   nokick       kick disabled, no agent (the baseline)
#   kick         kick enabled, turbolb-kickd boosting kicked threads
#   kick_prefer  kick, and policy.prefer_running
#   kick_wire    kick over the wire: host.transport packet (feedback
#                frames), each doorbell a kick frame out of a net_tap
#                default target, turbolb-kickd --listen on that interface
#   prefer_only  no kick; the agent only publishes which threads are off
#                their CPU (--watch-only), policy.prefer_running steers
#
#   scripts/consolidation-experiment.sh [OUT_DIR]
#
# Environment: BUILD (build), THREADS ("1 2 3 4"), VARIANTS (the first
# three; add prefer_only for the fourth),
# REPS (3: each point's quantiles are the median over the repetitions),
# DURATION (3 s measured per run, after 0.5 s of warm-up), RATE (2000),
# DIST (fixed:5us), PRIO (1; 0 leaves every priority alone, see below),
# PLOT (1: gnuplot charts into OUT_DIR), SUMMARY_ONLY (1: no runs, only
# the medians, table and charts from an existing OUT_DIR/results.csv).
#
# Priorities (PRIO=1): this runs on a small shared machine, so the run gets
# its own session whose autogroup has nice -20 (other users' jobs, in their
# own autogroups, then take little CPU from it); the daemon's datapath
# thread runs SCHED_FIFO 10 and the agent SCHED_FIFO 20 (--self-priority):
# they stand in for the NIC's own cores and for the hypervisor's scheduler,
# which would not wait behind the load generator for a time slice. The
# server threads and the load generator stay SCHED_OTHER. Every variant
# runs with the same priorities. Needs root.
#
# Output: OUT_DIR/results.csv (one row per run), OUT_DIR/summary.csv and
# OUT_DIR/table.md (medians), OUT_DIR/consolidation-*.png. A run takes
# 10 to 20 s (most of it starting and stopping the three processes): about
# 6 minutes with the defaults, 8 with prefer_only, on a quiet machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$top/consolidation-out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
: "${BUILD:=build}"
: "${THREADS:=1 2 3 4}"
: "${VARIANTS:=nokick kick kick_prefer}"
: "${REPS:=3}"
: "${DURATION:=3}"
: "${RATE:=2000}"
: "${DIST:=fixed:5us}"
: "${PRIO:=1}"
: "${PLOT:=1}"
: "${SUMMARY_ONLY:=0}"
export BUILD THREADS VARIANTS REPS DURATION RATE DIST PRIO PLOT SUMMARY_ONLY

if [ "$SUMMARY_ONLY" = 1 ]; then
	PRIO=0
elif [ "$(id -u)" != 0 ]; then
	echo "consolidation-experiment: needs root (SCHED_FIFO boosts, perf events on the server's threads)" >&2
	exit 1
fi
if [ "$SUMMARY_ONLY" != 1 ] && [ "$(nproc)" -lt 2 ]; then
	echo "consolidation-experiment: needs two CPUs" >&2
	exit 1
fi

# A session of our own, its autogroup at nice -20 (see above).
if [ "$PRIO" = 1 ] && [ -z "${TLB_CONSOLIDATION_SESSION:-}" ]; then
	export TLB_CONSOLIDATION_SESSION=1
	exec setsid -w bash -c 'echo -20 > /proc/$$/autogroup 2>/dev/null; exec "$@"' \
		consolidation "$0" "$OUT"
fi

. "$top/scripts/lib/topology.sh"
KICKD=${KICKD:-$TOPO_BUILD/src/kickd/turbolb-kickd}
for b in "$TLBD" "$TLBSRV" "$TLBLG" "$KICKD"; do
	[ "$SUMMARY_ONLY" != 1 ] || break
	[ -x "$b" ] || { echo "consolidation-experiment: $b not built (BUILD=$BUILD)" >&2; exit 1; }
done
mkdir -p "$OUT"
res=$OUT/results.csv
[ "$SUMMARY_ONLY" = 1 ] ||
	echo "threads,variant,rep,p50_us,p99_us,p999_us,max_us,sent,lost,late,kicks_sent,kicks_stall,kicks_served,boosts,reverted_drain,reverted_bound,reverted_yield,boosted_us" > "$res"

pin0=()
if command -v taskset > /dev/null; then pin0=(taskset -c 0); fi

# The datapath thread of the daemon (an EAL worker) to SCHED_FIFO 10.
daemon_fifo() {
	local t
	for t in /proc/"$TOPO_DPID"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		rte-worker-* | lcore-worker-*) chrt -f -p 10 "${t##*/}" ;;
		esac
	done
}

# "kicks_sent kicks_stall" from the daemon's telemetry.
kick_counters() {
	topo_telemetry /turbolb/stats | python3 -c "import json,sys; d=json.load(sys.stdin)['/turbolb/stats']; print(d.get('kicks_sent', 0), d.get('kicks_stall', 0))" 2>/dev/null || echo 0 0
}

# run_point THREADS VARIANT REP
run_point() {
	local n=$1 v=$2 rep=$3 kick=false prefer=false agent= lc="0@0" i
	local wire=()
	case $v in
	nokick) ;;
	kick) kick=true agent=boost ;;
	kick_wire) kick=true agent=boost wire=(transport=packet default_tap="tlbc$$") ;;
	kick_prefer) kick=true prefer=true agent=boost ;;
	prefer_only) prefer=true agent=watch ;;
	*) echo "unknown variant $v" >&2; return 1 ;;
	esac
	for ((i = 1; i <= n; i++)); do lc="$lc,$i@1"; done

	topo_init "consol-$n-$v"
	# Datapath on CPU 0 (its main lcore, which sleeps, on CPU 1).
	# Stall kicks after 50 us without a completion; run states read
	# every 20 us (the housekeeping period).
	topo_config cores="$n" policy=jsq credits=ring lcores=0 main_lcore=1 \
		housekeeping_us=20 idle_us=20 kick=$kick kick_stall_us=50 \
		prefer_running=$prefer "${wire[@]}"
	export TOPO_SRV_LCORES=$lc
	topo_start_daemon
	[ "$PRIO" != 1 ] || daemon_fifo > /dev/null
	local kargs=(--credit-ring "$TOPO_RING" --stats "$TOPO_RUN/kickd.json")
	local sargs=()
	if [ ${#wire[@]} -ne 0 ]; then
		# The threads in a ring the server makes for the agent; the
		# doorbells as kick frames on the tap interface.
		kargs=(--credit-ring "$TOPO_RING-agent" --listen "tlbc$$"
			--stats "$TOPO_RUN/kickd.json")
		sargs=(--agent-ring "$TOPO_RING-agent")
	fi
	[ "$PRIO" != 1 ] || kargs+=(--self-priority 20)
	[ "$agent" != watch ] || kargs+=(--watch-only)
	local kpid=
	if [ -n "$agent" ]; then
		"${pin0[@]}" "$KICKD" "${kargs[@]}" > /dev/null 2> "$TOPO_RUN/kickd.log" &
		kpid=$!
		TOPO_PIDS+=("$kpid")
	fi
	topo_start_server --idle-sleep-us 0 "${sargs[@]}"
	topo_loadgen "$TOPO_RUN/loadgen.json" --rate "$RATE" --duration "$DURATION" \
		--warmup 0.5 --dist "$DIST" --flows 64 --timeout-ms 1000 || true
	local ks kst
	read -r ks kst < <(kick_counters)
	[ -z "$kpid" ] || topo_kill "$kpid"
	topo_stop
	python3 - "$TOPO_RUN" "$n" "$v" "$rep" "$ks" "$kst" >> "$res" <<'PY'
import json, os, sys
run, n, v, rep, ks, kst = sys.argv[1:]
r = json.load(open(os.path.join(run, "loadgen.json")))
k = {}
try:
    k = json.load(open(os.path.join(run, "kickd.json")))["total"]
except (OSError, ValueError, KeyError):
    pass
us = lambda key: r[key] / 1000.0
print(f"{n},{v},{rep},{us('p50_ns'):.1f},{us('p99_ns'):.1f},{us('p999_ns'):.1f},"
      f"{us('max_ns'):.1f},{r['sent']},{r['lost']},{r.get('late_sends', 0)},{ks},{kst},"
      f"{k.get('kicks_served', 0)},{k.get('boosts', 0)},{k.get('reverted_drain', 0)},"
      f"{k.get('reverted_bound', 0)},{k.get('reverted_yield', 0)},"
      f"{k.get('boosted_us', 0)}")
PY
	tail -n 1 "$res" | awk -F, '{ printf "  %s threads/CPU %-12s rep %s: p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us  lost %s  kicks %s+%s\n", $1, $2, $3, $4, $5, $6, $9, $11, $12 }'
	rm -rf "$TOPO_RUN"
}

if [ "$SUMMARY_ONLY" != 1 ]; then
echo "consolidation experiment: $RATE rps of $DIST, ${DURATION}s per run, $REPS repetitions; threads per CPU: $THREADS; variants: $VARIANTS; PRIO=$PRIO"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
for rep in $(seq 1 "$REPS"); do
	for n in $THREADS; do
		for v in $VARIANTS; do
			run_point "$n" "$v" "$rep" || echo "  $n $v rep $rep: failed" >&2
		done
	done
done
echo "took $(($(date +%s) - start)) s; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
fi

# Medians over the repetitions, the table, and the data files for gnuplot.
python3 - "$OUT" "$THREADS" "$VARIANTS" <<'PY'
import csv, os, statistics, sys
out, threads, variants = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
cols = ["p50_us", "p99_us", "p999_us", "max_us", "lost", "kicks_sent",
        "kicks_stall", "kicks_served", "boosts", "reverted_bound",
        "reverted_yield"]
med = {}
for n in threads:
    for v in variants:
        rs = [r for r in rows if r["threads"] == n and r["variant"] == v]
        if rs:
            med[(n, v)] = {c: statistics.median(float(r[c]) for r in rs)
                           for c in cols}
            med[(n, v)]["reps"] = len(rs)
with open(os.path.join(out, "summary.csv"), "w") as f:
    f.write("threads,variant,reps," + ",".join(cols) + "\n")
    for (n, v), m in med.items():
        f.write(f"{n},{v},{m['reps']}," +
                ",".join(f"{m[c]:g}" for c in cols) + "\n")
# One row per thread count, p99 of each variant: the chart's data.
with open(os.path.join(out, "p99.dat"), "w") as f:
    # A header gnuplot reads with columnhead().
    f.write("threads " + " ".join(variants) + "\n")
    for n in threads:
        f.write(n + " " + " ".join(
            f"{med[(n, v)]['p99_us']:g}" if (n, v) in med else "NaN"
            for v in variants) + "\n")
with open(os.path.join(out, "quantiles3.dat"), "w") as f:
    f.write("# variant p50 p99 p99.9 (3 threads per CPU)\n")
    for v in variants:
        m = med.get(("3", v))
        if m:
            f.write(f"{v} {m['p50_us']:g} {m['p99_us']:g} {m['p999_us']:g}\n")
with open(os.path.join(out, "table.md"), "w") as f:
    f.write("| threads/CPU | variant | p50 (µs) | p99 (µs) | p99.9 (µs) "
            "| p99 vs nokick | lost | kicks sent+stall | boosts |\n")
    f.write("|---|---|---|---|---|---|---|---|---|\n")
    for n in threads:
        base = med.get((n, "nokick"))
        for v in variants:
            m = med.get((n, v))
            if not m:
                continue
            ratio = (f"{base['p99_us'] / m['p99_us']:.1f}x lower"
                     if base and v != "nokick" and m["p99_us"] > 0 else "")
            f.write(f"| {n} | {v} | {m['p50_us']:.0f} | {m['p99_us']:.0f} "
                    f"| {m['p999_us']:.0f} | {ratio} | {m['lost']:g} "
                    f"| {m['kicks_sent']:g}+{m['kicks_stall']:g} "
                    f"| {m['boosts']:g} |\n")
print(open(os.path.join(out, "table.md")).read())
PY

if [ "$PLOT" = 1 ] && command -v gnuplot > /dev/null; then
	ncol=$(echo $VARIANTS | wc -w)
	gnuplot <<GP
set terminal pngcairo size 800,480 font "sans,10"
set output "$OUT/consolidation-p99.png"
set title "p99 latency, $RATE rps of $DIST, server threads busy-polling on one CPU"
set xlabel "server threads per CPU"
set ylabel "p99 latency (µs, log scale)"
set logscale y
set grid ytics mytics
set key top left
set xtics 1
set termoption noenhanced
set arrow from graph 0, first 200 to graph 1, first 200 nohead dashtype 2 lc rgb "gray40"
set label "goal: 0.2 ms" at graph 0.87, first 230 tc rgb "gray40"
plot for [i=2:$((ncol + 1))] "$OUT/p99.dat" using 1:i with linespoints lw 2 pt 7 title columnhead(i)
GP
	# The quantiles at 3 threads per CPU, when THREADS has 3.
	[ "$(grep -vc '^#' "$OUT/quantiles3.dat")" -gt 0 ] && gnuplot <<GP
set terminal pngcairo size 800,480 font "sans,10"
set output "$OUT/consolidation-quantiles.png"
set title "3 server threads on one CPU: latency quantiles"
set ylabel "latency (µs, log scale)"
set logscale y
set grid ytics
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set termoption noenhanced
plot "$OUT/quantiles3.dat" using 2:xtic(1) title "p50", '' using 3 title "p99", '' using 4 title "p99.9"
GP
	echo "charts: $OUT/consolidation-*.png"
fi
