#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The dispatch-cost benchmark (docs/performance.md): turbolbd's request path
# (the real tlb_dp_poll) on one lcore over net_ring ports, next to
# dpdk-testpmd io/macswap and the benchmark's own io/macswap loops on the
# same rings; instructions per packet under callgrind; how both grow with
# host cores and dispatcher lcores. Prints tables, writes
# results/bench-dispatch.json and results/bench-dispatch.csv.
#
#   scripts/bench-dispatch.sh              the full run (a few minutes)
#   scripts/bench-dispatch.sh --smoke      seconds: checks that it all works
#   scripts/bench-dispatch.sh --quiet      no progress line (see below)
#
# Options: --reps N (5), --packets N (2000000), --out DIR (results),
# --no-testpmd, --no-callgrind, --no-sweep, --no-pairs,
# --testpmd-seconds S (3), --pair-packets N (20000000),
# --no-process, --process-only (nothing else), --process-seconds S (2), --process-targets 8,16,32,64,
# --process-policies jsq,rr,jlq, --no-latency, --latency-packets N (200000),
# --huge (turbolb-bench, dpdk-testpmd and turbolbd on hugepages, as on a
# SmartNIC: about 1.2 GiB of them mounted and free; default --no-huge).
# The latency: turbolb-bench --latency, requests arriving (open loop) at
# 50%, 90% and 99% of the dispatcher's own saturation rate, each one's
# time in the daemon (residence) measured, 16 host cores, rr, jsq, jlq,
# jbsq:2 and rss, request and request+response modes, at the default
# datapath.tx_hold_ns and at 0; written to results/bench-latency.json.
# The process: turbolbd itself, started as a process per point (uplink
# net_pcap replaying valid requests with infinite_rx=1, targets the
# queues of one net_null port, one forwarding lcore, credits inband), its
# rate read from its own telemetry over --process-seconds; next to it
# dpdk-testpmd macswap on the same device types (net_pcap -> net_null),
# once before each target count, the median taken.
# The pairs: N times one repetition of turbolbd (rr, jsq, jlq, jbsq:2;
# request+response, the headline, counting requests and responses as
# packets, and request only; --pair-packets each, a few tenths of a
# second here) and right after it one of dpdk-testpmd macswap, each pair's
# ratio taken on its own and the median reported, so that a change in
# what else this machine runs between the two halves of the run does not
# skew the ratio.
# BUILD=DIR picks the build directory (default build/); BENCH_CPUS=0,7
# (main lcore, dispatchers) and TESTPMD_LCORES=0,7 (main, forwarding) pin
# both to chosen CPUs (default: 0 and 1). No speed is asserted anywhere:
# numbers are reported, never judged.
# On a terminal one updating line under the output shows which step of
# how many is running, the time elapsed and an estimate of what is left;
# --quiet, or output that is not a terminal, leaves it out. The arithmetic
# and the tables are scripts/benchdispatch.py's.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$top/results
reps=5
packets=2000000
pair_packets=20000000
smoke=0
quiet=0
do_testpmd=1
do_callgrind=1
do_sweep=1
do_pairs=1
do_process=1
do_latency=1
lat_packets=200000
process_only=0
proc_secs=2
proc_targets=8,16,32,64
proc_policies=jsq,rr,jlq
tp_secs=3
huge=0
# what every turbolb-bench run gets: CPUs, memory
bench_arg=()
[ -n "${BENCH_CPUS:-}" ] && bench_arg=(--cpus "$BENCH_CPUS")
tp_lcores=${TESTPMD_LCORES:-0,1}
tp_fwd=${tp_lcores##*,}

while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
	--quiet) quiet=1 ;;
	--reps) reps=$2; shift ;;
	--packets) packets=$2; shift ;;
	--pair-packets) pair_packets=$2; shift ;;
	--out) out=$2; shift ;;
	--no-testpmd) do_testpmd=0 ;;
	--no-callgrind) do_callgrind=0 ;;
	--no-sweep) do_sweep=0 ;;
	--no-pairs) do_pairs=0 ;;
	--process) do_process=1 ;;
	--no-process) do_process=0 ;;
	--process-only) do_process=1 process_only=1 ;;
	--process-seconds) proc_secs=$2; shift ;;
	--process-targets) proc_targets=$2; shift ;;
	--process-policies) proc_policies=$2; shift ;;
	--testpmd-seconds) tp_secs=$2; shift ;;
	--no-latency) do_latency=0 ;;
	--latency-packets) lat_packets=$2; shift ;;
	--huge) huge=1 ;;
	-h|--help) sed -n 3,46p "$0"; exit 0 ;;
	*) echo "bench-dispatch: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

tp_mem=(--no-huge -m 512)
proc_huge=()
if [ $huge = 1 ]; then
	bench_arg+=(--huge)
	tp_mem=(-m 512)
	proc_huge=(--huge)
fi

bench=$build/src/bench/turbolb-bench
if [ ! -x "$bench" ]; then
	if [ -f "$build/build.ninja" ]; then
		ninja -C "$build" src/bench/turbolb-bench >/dev/null
	else
		echo "bench-dispatch: no $bench; build first:" >&2
		echo "  meson setup build && ninja -C build" >&2
		exit 2
	fi
fi
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-dispatch.XXXXXX")
# shellcheck source=scripts/lib/progress.sh
. "$top/scripts/lib/progress.sh"
trap 'progress_end; rm -rf "$work"' EXIT

step() {
	printf '\n==> %s\n' "$*"
	progress_step "$*"
}

if [ $smoke = 1 ]; then
	reps=1
	do_callgrind=0
	do_sweep=0
	tp_secs=1
	proc_secs=0.5
	proc_targets=8,64
	proc_policies=jsq
	lat_packets=5000
fi
if [ $process_only = 1 ]; then
	do_testpmd=0
	do_callgrind=0
	do_sweep=0
	do_pairs=0
	do_latency=0
fi

# The steps below, counted for the progress line: each one that runs
# calls step once.
have() { command -v "$1" >/dev/null; }
steps=1
[ $process_only = 1 ] || steps=$((steps + 1))
[ $do_sweep = 0 ] || steps=$((steps + 1))
[ $do_latency = 0 ] || steps=$((steps + 2))
[ $do_testpmd = 0 ] || ! have dpdk-testpmd || steps=$((steps + 1))
[ $do_pairs = 0 ] || [ $do_testpmd = 0 ] || ! have dpdk-testpmd ||
	steps=$((steps + 1))
[ $do_process = 0 ] || [ ! -x "$build/src/daemon/turbolbd" ] ||
	steps=$((steps + 1))
[ $do_callgrind = 0 ] || ! have valgrind || steps=$((steps + 1))
progress_start "$steps" "$quiet"

if [ $process_only = 1 ]; then
	true # the process runs only
elif [ $smoke = 1 ]; then
	step "turbolb-bench --smoke"
	"$bench" --smoke "${bench_arg[@]}" --json "$work/main.json"
else
	step "turbolbd request path and forwarding baselines: 16 host cores, 1 dispatcher, $reps reps"
	"$bench" --cores 16 --dispatchers 1 --reps "$reps" --packets "$packets" \
		"${bench_arg[@]}" --json "$work/main.json"
fi

if [ $do_sweep = 1 ]; then
	step "host cores 2/8/16/64 x dispatchers 1/2 (rr, jsq, jlq)"
	"$bench" --cores 2,8,16,64 --dispatchers 1,2 --policies rr,jsq,jlq \
		--modes request --no-baselines --reps 3 \
		--packets $((packets / 2)) "${bench_arg[@]}" --json "$work/sweep.json"
fi

if [ $do_latency = 1 ]; then
	lat_cores=16
	lat_loads=0.5,0.9,0.99
	[ $smoke = 1 ] && lat_cores=4 lat_loads=0.5
	for hold in default 0; do
		hold_arg=()
		[ $hold = 0 ] && hold_arg=(--tx-hold-ns 0)
		step "latency: residence in the daemon at $lat_loads of saturation, $lat_cores host cores, tx_hold_ns $hold"
		"$bench" --latency "$lat_loads" --latency-packets "$lat_packets" \
			--cores "$lat_cores" --policies rr,jsq,jlq,jbsq,rss \
			"${hold_arg[@]}" "${bench_arg[@]}" \
			--json "$work/latency-$hold.json" | grep -v '^turbolb-bench'
	done
fi

# ---- dpdk-testpmd on net_ring: two loopback ports (what a port sends it
# receives), the same number of packets in flight as turbolb-bench
# (tx_first bursts of 32 on each port), one forwarding lcore on the same
# CPU as the benchmark's dispatcher. Non-interactive: commands on stdin.
tp_run() { # mode vdev-kind rep -> one JSON object on stdout
	local mode=$1 kind=$2 rep=$3
	local log=$work/tp-$mode-$kind-$rep.log fifo=$work/tp.fifo
	local vdevs bursts=16 pid tid hz
	if [ "$kind" = ring ]; then
		vdevs="--vdev net_ring0 --vdev net_ring1"
	elif [ "$kind" = pcap ]; then
		# the process's devices: requests replayed forever, sent to a
		# port that takes everything and gives nothing back
		vdevs="--vdev net_pcap0,rx_pcap=$proc_pcap,infinite_rx=1"
		vdevs="$vdevs --vdev net_null0,no-rx=1"
	else
		vdevs="--vdev net_null0 --vdev net_null1"
		bursts=1
	fi
	rm -f "$fifo"
	mkfifo "$fifo"
	# shellcheck disable=SC2086
	dpdk-testpmd "${tp_mem[@]}" --no-pci --no-shconf \
		--file-prefix "bench-tp-$$" -l "$tp_lcores" $vdevs \
		--log-level='lib.*:error' -- -i --forward-mode="$mode" \
		--nb-cores=1 --total-num-mbufs=16384 <"$fifo" >"$log" 2>&1 &
	pid=$!
	exec 3>"$fifo"
	for _ in $(seq 300); do
		grep -q 'testpmd>' "$log" 2>/dev/null && break
		sleep 0.1
	done
	# net_null makes packets itself: tx_first only starts the ring ones
	if [ "$kind" = ring ]; then
		echo "start tx_first $bursts" >&3
	else
		echo "start" >&3
	fi
	sleep 1
	echo "show port stats all" >&3
	sleep "$tp_secs"
	echo "show port stats all" >&3
	sleep 0.3
	# The forwarding thread's CPU time so far: it blocks until "start",
	# so this is its forwarding time, whatever else this machine runs.
	tid=$(grep -l "^rte-worker-$tp_fwd\$" "/proc/$pid"/task/*/comm 2>/dev/null |
		head -1 | cut -d/ -f5 || true)
	local cpu_ticks=0
	[ -n "$tid" ] && cpu_ticks=$(awk '{print $14 + $15}' \
		"/proc/$pid/task/$tid/stat" 2>/dev/null || echo 0)
	echo "stop" >&3
	echo "quit" >&3
	exec 3>&-
	wait "$pid" || true
	hz=$(getconf CLK_TCK)
	python3 "$top/scripts/benchdispatch.py" testpmd "$log" "$mode" "$kind" "$rep" \
		"$cpu_ticks" "$hz"
}

: >"$work/testpmd.jsonl"
if [ $do_testpmd = 1 ] && command -v dpdk-testpmd >/dev/null; then
	step "dpdk-testpmd io/macswap on net_ring (and net_null), ${tp_secs}s x $reps"
	for kind in ring null; do
		n=$reps
		# net_null (packets made and freed by the PMD) is for reference
		[ $kind = null ] && [ "$n" -gt 3 ] && n=3
		for mode in macswap io; do
			for r in $(seq "$n"); do
				tp_run "$mode" "$kind" "$r" | tee -a "$work/testpmd.jsonl"
			done
			[ $smoke = 1 ] && break
		done
		[ $smoke = 1 ] && break
	done
elif [ $do_testpmd = 1 ]; then
	echo "(dpdk-testpmd not installed: skipped)"
fi

: >"$work/pairs.jsonl"
if [ $do_pairs = 1 ] && [ $do_testpmd = 1 ] && command -v dpdk-testpmd >/dev/null; then
	step "pairs: turbolbd (request+response, request), then dpdk-testpmd macswap (net_ring), x $reps"
	# each turbolbd half long enough to see the spell of this machine
	# that testpmd's will; not much longer: nothing completes in request
	# mode, and past 2^32 ns of work outstanding a core's key saturates
	# (16 cores: about 40 M requests)
	pp=$pair_packets
	[ $smoke = 1 ] && pp=$packets
	for r in $(seq "$reps"); do
		"$bench" --cores 16 --dispatchers 1 --reps 1 --packets "$pp" \
			--policies rr,jsq,jlq,jbsq --modes request,reqresp \
			--no-baselines "${bench_arg[@]}" \
			--json "$work/pair-$r.json" >/dev/null
		tp_run macswap ring "$r" >"$work/pair-tp-$r.json"
		python3 "$top/scripts/benchdispatch.py" pair "$work/pair-$r.json" \
			"$work/pair-tp-$r.json" "$r" >>"$work/pairs.jsonl"
		tail -7 "$work/pairs.jsonl"
		[ $smoke = 1 ] && break
	done
fi

# ---- turbolbd as a process, one per point (see the header).
proc_pcap=$work/requests.pcap
: >"$work/process.jsonl"
tlbd=$build/src/daemon/turbolbd
if [ $do_process = 1 ] && [ -x "$tlbd" ]; then
	step "turbolbd process: net_pcap -> net_null, targets $proc_targets, policies $proc_policies, ${proc_secs}s each"
	python3 "$top/scripts/benchproc.py" gen-pcap "$proc_pcap" --count 256
	tp_main=${tp_lcores%%,*}
	dpid=
	stop_daemon() {
		[ -n "$dpid" ] || return 0
		kill -INT "$dpid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$dpid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$dpid" 2>/dev/null || true
		wait "$dpid" 2>/dev/null || true
		dpid=
	}
	trap 'stop_daemon; progress_end; rm -rf "$work"' EXIT
	for nt in ${proc_targets//,/ }; do
		if command -v dpdk-testpmd >/dev/null; then
			tp_run macswap pcap "$nt" | tee -a "$work/process.jsonl"
		fi
		for pol in ${proc_policies//,/ }; do
			prefix=bench-proc-$$-$nt-$pol
			cfg=$work/proc-$nt-$pol.yaml
			log=$work/proc-$nt-$pol.log
			python3 "$top/scripts/benchproc.py" config "$cfg" \
				--targets "$nt" --policy "$pol" --pcap "$proc_pcap" \
				--prefix "$prefix" --lcores "$tp_main,$tp_fwd" \
				"${proc_huge[@]}"
			"$tlbd" -c "$cfg" >"$log" 2>&1 &
			dpid=$!
			python3 "$top/scripts/benchproc.py" measure --prefix "$prefix" \
				--pid "$dpid" --comm "rte-worker-$tp_fwd" \
				--seconds "$proc_secs" --warmup 0.5 \
				--label "{\"kind\": \"turbolbd\", \"targets\": $nt, \"policy\": \"$pol\"}" |
				tee -a "$work/process.jsonl"
			stop_daemon
			grep -q "final counters" "$log" ||
				{ echo "bench-dispatch: turbolbd ($nt targets, $pol) did not stop cleanly:" >&2
				  tail -20 "$log" >&2; exit 1; }
		done
	done
	strict=()
	[ $smoke = 1 ] && strict=(--strict)
	python3 "$top/scripts/benchproc.py" report "$work/process.jsonl" \
		--json "$work/process.json" "${strict[@]}"
elif [ $do_process = 1 ]; then
	echo "(no $tlbd: the process runs skipped)"
fi

if [ $do_callgrind = 1 ] && command -v valgrind >/dev/null; then
	step "callgrind: instructions per packet (tlb_dp_poll and the forwarding loops only)"
	mkdir -p "$work/cg" "$out/callgrind"
	rm -f "$out"/callgrind/cg.out*
	cg() { # name bench-args...
		local name=$1
		shift
		valgrind --tool=callgrind --collect-atstart=no \
			--toggle-collect=tlb_dp_poll --toggle-collect=bench_fwd_poll \
			--callgrind-out-file="$out/callgrind/cg.$name" \
			"$bench" --callgrind --tx-hold-ns 50000 \
			--housekeeping-us 5000 "${bench_arg[@]}" \
			--json "$work/cg-$name.json" "$@" >"$work/cg-$name.log" 2>&1 ||
			{ tail -20 "$work/cg-$name.log"; exit 1; }
	}
	# Under callgrind the datapath runs ~50x slower: a hold of 50 us and
	# housekeeping every 5 ms keep both as many polls apart as the
	# defaults (1 us, 100 us) are at full speed.
	cg main --cores 16 --dispatchers 1 --packets 50000
	[ $do_sweep = 1 ] &&
		cg sweep --cores 2,8,16,64 --dispatchers 1,2 --policies rr,jsq,jlq \
			--modes request --no-baselines --packets 30000
	# What the credit ring (host.credits: ring) costs over in-band
	# credits: the once-a-poll drain of every core (request mode: there
	# is never anything to drain) and the completions (reqresp).
	cg ring --cores 16,64 --dispatchers 1 --policies jsq,jbsq \
		--credits ring --no-baselines --packets 30000
	cg ringref --cores 64 --dispatchers 1 --policies jsq,jbsq \
		--modes reqresp --no-baselines --packets 30000
	for p in rr jsq jlq rss; do
		f=$(grep -l "Client Request: c16d1/request/$p\$" "$out"/callgrind/cg.main.* | head -1)
		[ -n "$f" ] && callgrind_annotate --threshold=100 "$f" \
			>"$out/callgrind/annotate-c16-request-$p.txt" 2>/dev/null
	done
elif [ $do_callgrind = 1 ]; then
	echo "(valgrind not installed: no instruction counts)"
fi

step "results"
python3 "$top/scripts/benchdispatch.py" results "$work" "$out" "$top"
progress_end
