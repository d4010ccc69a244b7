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
#
# Options: --reps N (5), --packets N (2000000), --out DIR (results),
# --no-testpmd, --no-callgrind, --no-sweep, --no-pairs,
# --testpmd-seconds S (3), --pair-packets N (20000000),
# --no-process, --process-only (nothing else), --process-seconds S (2), --process-targets 8,16,32,64,
# --process-policies jsq,rr,jlq, --no-latency, --latency-packets N (200000).
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
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
out=$top/results
reps=5
packets=2000000
pair_packets=20000000
smoke=0
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
cpus_arg=()
[ -n "${BENCH_CPUS:-}" ] && cpus_arg=(--cpus "$BENCH_CPUS")
tp_lcores=${TESTPMD_LCORES:-0,1}
tp_fwd=${tp_lcores##*,}

while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1 ;;
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
	-h|--help) sed -n 3,40p "$0"; exit 0 ;;
	*) echo "bench-dispatch: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

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
trap 'rm -rf "$work"' EXIT

step() { printf '\n==> %s\n' "$*"; }

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
elif [ $smoke = 1 ]; then
	step "turbolb-bench --smoke"
	"$bench" --smoke "${cpus_arg[@]}" --json "$work/main.json"
else
	step "turbolbd request path and forwarding baselines: 16 host cores, 1 dispatcher, $reps reps"
	"$bench" --cores 16 --dispatchers 1 --reps "$reps" --packets "$packets" \
		"${cpus_arg[@]}" --json "$work/main.json"
fi

if [ $do_sweep = 1 ]; then
	step "host cores 2/8/16/64 x dispatchers 1/2 (rr, jsq, jlq)"
	"$bench" --cores 2,8,16,64 --dispatchers 1,2 --policies rr,jsq,jlq \
		--modes request --no-baselines --reps 3 \
		--packets $((packets / 2)) "${cpus_arg[@]}" --json "$work/sweep.json"
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
			"${hold_arg[@]}" "${cpus_arg[@]}" \
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
	dpdk-testpmd --no-huge -m 512 --no-pci --no-shconf \
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
	python3 - "$log" "$mode" "$kind" "$rep" "$cpu_ticks" "$hz" <<'PY'
import json, re, sys
log, mode, kind, rep, ticks, hz = sys.argv[1:]
text = open(log, errors="replace").read()
# "show port stats all" prints one NIC block per port with Rx-pps since
# the previous show: the last show covers the measured seconds (wall).
# "stop" prints the packets forwarded since "start" (per CPU time).
blocks = re.findall(r"NIC statistics for port \d+.*?Rx-pps:\s+(\d+)", text, re.S)
acc = re.search(r"Accumulated forward statistics for all ports.*?RX-packets:\s+(\d+)",
                text, re.S)
res = {"kind": "testpmd", "mode": mode, "ports": kind, "rep": int(rep)}
cpu_s = int(ticks) / int(hz)
if len(blocks) >= 4 and acc and cpu_s >= 0.2:
    res["mpps"] = sum(int(x) for x in blocks[-2:]) / 1e6
    res["cpu_mpps"] = int(acc.group(1)) / cpu_s / 1e6
    res["cpu_s"] = cpu_s
else:
    res["error"] = "no usable statistics (cpu %.2f s)" % cpu_s
print(json.dumps(res))
PY
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
			--no-baselines "${cpus_arg[@]}" \
			--json "$work/pair-$r.json" >/dev/null
		tp_run macswap ring "$r" >"$work/pair-tp-$r.json"
		python3 - "$work/pair-$r.json" "$work/pair-tp-$r.json" "$r" \
			>>"$work/pairs.jsonl" <<'PY'
import json, sys
tb, tp, rep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
for x in tb["results"]:
    # packets handled: a request, and in reqresp mode its response too
    per = 2 if x["mode"] == "reqresp" else 1
    print(json.dumps({"rep": rep, "policy": x["policy"], "mode": x["mode"],
                      "cpu_mpps": x["median_cpu_mpps"] * per,
                      "testpmd_cpu_mpps": tp.get("cpu_mpps")}))
PY
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
	trap 'stop_daemon; rm -rf "$work"' EXIT
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
				--prefix "$prefix" --lcores "$tp_main,$tp_fwd"
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
			--housekeeping-us 5000 "${cpus_arg[@]}" \
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
python3 - "$work" "$out" "$top" <<'PY'
import glob, json, os, re, statistics, subprocess, sys, time
work, out, top = sys.argv[1:]

def load(name):
    p = os.path.join(work, name)
    return json.load(open(p)) if os.path.exists(p) else None

main, sweep = load("main.json"), load("sweep.json")
process = load("process.json")
tp = [json.loads(l) for l in open(os.path.join(work, "testpmd.jsonl")) if l.strip()]

# callgrind: one dump per measured window, named by the window's label
cg = {}
for name in ("main", "sweep", "ring", "ringref"):
    meta = load("cg-%s.json" % name)
    if not meta:
        continue
    pk = {r["label"]: r["packets"] for r in meta["results"]}
    for f in glob.glob(os.path.join(out, "callgrind", "cg.%s.*" % name)):
        t = open(f).read()
        m = re.search(r"Client Request: (\S+)", t)
        s = re.search(r"^summary: (\d+)", t, re.M)
        if m and s and m.group(1) in pk and pk[m.group(1)]:
            cg[m.group(1)] = int(s.group(1)) / pk[m.group(1)]

def tp_median(mode, ports, key):
    v = [r[key] for r in tp if r["mode"] == mode and r["ports"] == ports
         and r.get(key)]
    return statistics.median(v) if v else None

rows = []
for run, src in (("main", main), ("sweep", sweep)):
    for r in (src or {}).get("results", []):
        r = dict(r, run=run)
        r["ir_per_pkt"] = cg.get(r["label"])
        rows.append(r)
for label, ir in cg.items():  # windows only measured under callgrind
    if not any(r["label"] == label for r in rows):
        c, mode, what = label.split("/")
        m = re.match(r"c(\d+)d(\d+)(copy)?(ring)?", c)
        rows.append({"label": label, "run": "callgrind",
                     "kind": what if what in ("io", "macswap") else "turbolbd",
                     "policy": None if what in ("io", "macswap") else what, "mode": mode,
                     "cores": int(m.group(1)), "dispatchers": int(m.group(2)),
                     "topology": "copy" if m.group(3) else "direct",
                     "median_mpps": None, "median_cpu_mpps": None, "ir_per_pkt": ir})

tp_ms = {k: tp_median("macswap", "ring", k) for k in ("mpps", "cpu_mpps")}

# The pairs: each rep's ratio on its own, then the median of those.
pairs = [json.loads(l) for l in open(os.path.join(work, "pairs.jsonl")) if l.strip()]
pair_sum = {}
for key in sorted({(x["policy"], x.get("mode", "request")) for x in pairs}):
    rs = [x["cpu_mpps"] / x["testpmd_cpu_mpps"] for x in pairs
          if (x["policy"], x.get("mode", "request")) == key and x["cpu_mpps"]
          and x["testpmd_cpu_mpps"]]
    if rs:
        pair_sum["%s/%s" % key] = {"median_ratio": round(statistics.median(rs), 3),
                                   "min_ratio": round(min(rs), 3),
                                   "max_ratio": round(max(rs), 3), "pairs": len(rs)}
latency = []
for hold in ("default", "0"):
    for x in (load("latency-%s.json" % hold) or {}).get("latency", []):
        latency.append(x)
if latency:
    json.dump({"latency": latency}, open(os.path.join(out, "bench-latency.json"), "w"),
              indent=1)
def ratio(a, b):
    return round(a / b, 3) if a and b else None
for r in rows:
    if r["kind"] == "turbolbd":
        r["ratio_testpmd_macswap_cpu"] = ratio(r.get("median_cpu_mpps"), tp_ms["cpu_mpps"])
        r["ratio_testpmd_macswap_wall"] = ratio(r.get("median_mpps"), tp_ms["mpps"])

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except Exception:
        return ""
machine = {
    "cpus": os.cpu_count(),
    "cpu_model": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip(),
    "loadavg": open("/proc/loadavg").read().split()[:3],
    "kernel": sh("uname -r"),
    "dpdk": sh("pkg-config --modversion libdpdk"),
    "commit": sh("git -C '%s' rev-parse --short HEAD 2>/dev/null" % top),
    "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
}
doc = {"machine": machine, "bench": {k: v for k, v in (main or {}).items() if k != "results"},
       "results": rows, "testpmd": tp, "pairs": pairs, "pairs_summary": pair_sum,
       "process": process, "latency": latency,
       "testpmd_median": {"%s/%s" % (m, p): {k: tp_median(m, p, k) for k in ("mpps", "cpu_mpps")}
                          for m in ("macswap", "io") for p in ("ring", "null")},
       "note": "Mpps: wall clock; cpu_mpps: per second of the forwarding thread's CPU time "
               "(this machine is shared). ir_per_pkt: callgrind instructions in tlb_dp_poll "
               "(or bench_fwd_poll) per uplink packet, the stable number."}
json.dump(doc, open(os.path.join(out, "bench-dispatch.json"), "w"), indent=1)
cols = ["label", "run", "kind", "policy", "mode", "cores", "dispatchers", "topology",
        "median_mpps", "median_cpu_mpps", "ir_per_pkt", "ratio_testpmd_macswap_cpu"]
with open(os.path.join(out, "bench-dispatch.csv"), "w") as f:
    f.write(",".join(cols) + "\n")
    for r in rows:
        f.write(",".join("" if r.get(c) is None else str(r.get(c)) for c in cols) + "\n")
    for r in tp:
        f.write("testpmd/%s/%s/%d,testpmd,testpmd,,%s,,,%s,%s,%s,,\n" % (
            r["ports"], r["mode"], r["rep"], r["mode"], r["ports"],
            r.get("mpps", ""), r.get("cpu_mpps", "")))
    for r in (process or {}).get("rows", []):
        f.write("process/t%d/%s,process,turbolbd,%s,request,%d,1,pcap-null,%s,%s,,%s\n" % (
            r["targets"], r["policy"], r["policy"], r["targets"],
            "" if r.get("mpps") is None else r["mpps"],
            "" if r.get("cpu_mpps") is None else r["cpu_mpps"],
            "" if r.get("ratio_cpu") is None else r["ratio_cpu"]))

def f(v, fmt="%8.2f"):
    return fmt % v if v is not None else "%8s" % "-"
print("machine: %d CPUs (%s), load average %s, DPDK %s; Mpps are noisy here, "
      "instructions/packet are not" % (machine["cpus"], machine["cpu_model"],
                                       " ".join(machine["loadavg"]), machine["dpdk"]))
print("\nMpps: wall clock; Mpps/CPU: per second of the forwarding thread's CPU time;")
print("x tp-ms / x b-ms: Mpps/CPU over dpdk-testpmd macswap (net_ring) / the bench's macswap")
print("%-34s %8s %8s %8s %8s %8s" % ("16 host cores, 1 dispatcher", "Mpps", "Mpps/CPU", "Ir/pkt",
                                     "x tp-ms", "x b-ms"))
for m in ("macswap", "io"):
    for p in ("ring", "null"):
        print("%-34s %s %s %8s %8s %8s" % ("dpdk-testpmd %s (net_%s)" % (m, p),
              f(tp_median(m, p, "mpps")), f(tp_median(m, p, "cpu_mpps")), "-", "-", "-"))
# The main run's own rows (the sweep repeats some labels).
main_rows = [dict(x, ir_per_pkt=cg.get(x["label"])) for x in (main or {}).get("results", [])]
bench_ms = next((x["median_cpu_mpps"] for x in main_rows
                 if x["label"] == "c16d1/request/macswap"), None)
for r in main_rows:
    if r["kind"] != "turbolbd":
        name = "bench %s (same rings)" % r["kind"]
    else:
        name = "turbolbd %s %s%s" % (r["policy"], r["mode"],
                                     " (copy)" if r["topology"] == "copy" else "")
    tb = r["kind"] == "turbolbd"
    print("%-34s %s %s %s %s %s" % (name, f(r.get("median_mpps")), f(r.get("median_cpu_mpps")),
          f(r.get("ir_per_pkt"), "%8.0f"),
          f(ratio(r.get("median_cpu_mpps"), tp_ms["cpu_mpps"]) if tb else None, "%8.3f"),
          f(ratio(r.get("median_cpu_mpps"), bench_ms) if tb else None, "%8.3f")))
if pair_sum:
    print("\npairs (one turbolbd rep, then one testpmd macswap rep on net_ring; packets per "
          "CPU-second,\nrequest+response counting requests and responses):")
    print("%-20s %8s %8s %8s %6s   %s" % ("policy", "median", "min", "max", "pairs",
                                        "ratio to testpmd macswap of its own pair"))
    for mode in ("reqresp", "request"):
        for pol in ("rr", "jsq", "jlq", "jbsq"):
            v = pair_sum.get("%s/%s" % (pol, mode))
            if v:
                print("%-20s %8.3f %8.3f %8.3f %6d" % ("%s %s" % (pol, mode), v["median_ratio"],
                      v["min_ratio"], v["max_ratio"], v["pairs"]))
if latency:
    print("\nresidence in the daemon (ns), 1 dispatcher, open loop at a fraction of its "
          "saturation:")
    print("%-8s %-8s %6s %5s %8s %8s %8s %9s %6s %8s" % ("policy", "mode", "hold", "load",
          "p50", "p99", "p99.9", "max", "polls", "preempt"))
    for x in latency:
        print("%-8s %-8s %6d %5.2f %8d %8d %8d %9d %6d %7.3f%%" % (
            x["policy"], x["mode"], x["tx_hold_ns"], x["load_fraction"],
            x["residence_p50_ns"], x["residence_p99_ns"], x["residence_p999_ns"],
            x["residence_max_ns"], x["polls_waited_max"],
            100.0 * x["preempted"] / x["samples"] if x["samples"] else 0))
if cg:
    print("\ninstructions per packet (callgrind), request mode, by host cores:")
    print("%-12s" % "policy" + "".join("%9s" % ("D=%d/%d" % (d, c)) for d in (1, 2) for c in (2, 8, 16, 64)))
    for p in ("rr", "jsq", "jlq"):
        line = "%-12s" % p
        for d in (1, 2):
            for c in (2, 8, 16, 64):
                line += f(cg.get("c%dd%d/request/%s" % (c, d, p)), "%9.0f")
        print(line)
if sweep:
    print("\nMpps per CPU-second, request mode (D=2: aggregate of both dispatchers):")
    print("%-12s" % "policy" + "".join("%9s" % ("D=%d/%d" % (d, c)) for d in (1, 2) for c in (2, 8, 16, 64)))
    sw = {r["label"]: r for r in sweep["results"]}
    for p in ("rr", "jsq", "jlq"):
        line = "%-12s" % p
        for d in (1, 2):
            for c in (2, 8, 16, 64):
                r = sw.get("c%dd%d/request/%s" % (c, d, p))
                line += f(r["median_cpu_mpps"] if r else None, "%9.2f")
        print(line)
rings = sorted(l for l in cg if re.match(r"c\d+d\d+(copy)?ring/", l))
if rings:
    print("\ncredit ring (host.credits: ring) against in-band credits, instructions per packet:")
    for l in rings:
        ref = l.replace("ring/", "/", 1)
        print("%-28s %8.0f   in-band %s" % (l, cg[l], f(cg.get(ref), "%.0f").strip()))
print("\nwritten: %s/bench-dispatch.json, %s/bench-dispatch.csv%s" % (
    out, out, ", %s/bench-latency.json" % out if latency else ""))
PY
