#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The arithmetic and the tables of scripts/bench-dispatch.sh (the
dispatch-cost benchmark); the shell script starts and stops the programs.

    benchdispatch.py testpmd LOG MODE KIND REP CPU_TICKS HZ
        one dpdk-testpmd run's rates from its log: one JSON object
    benchdispatch.py pair TB.json TP.json REP
        one pair (a turbolb-bench repetition, then a testpmd one): a JSON
        line per policy and mode, packets per CPU-second of each
    benchdispatch.py results WORK OUT TOP
        everything in the work folder WORK: OUT/bench-dispatch.json,
        OUT/bench-dispatch.csv, OUT/bench-latency.json and the tables
        printed (TOP: the source tree, for its commit)

The computations (testpmd's rates, instructions per packet from the
callgrind dumps, the pairs' ratios, the rows and tables) are tested by
tests/python/test_benchdispatch.py. Standard library only.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

POLICIES = ("rr", "jsq", "jlq")
SWEEP_CORES = (2, 8, 16, 64)
SWEEP_DISPATCHERS = (1, 2)


# ---- one testpmd run, one pair

def testpmd_result(text, mode, kind, rep, ticks, hz):
    """The rates of one dpdk-testpmd run from its log text. "show port
    stats all" prints one NIC block per port with Rx-pps since the
    previous show: the last show covers the measured seconds (wall).
    "stop" prints the packets forwarded since "start" (per CPU time of
    the forwarding thread, ticks / hz seconds)."""
    blocks = re.findall(r"NIC statistics for port \d+.*?Rx-pps:\s+(\d+)",
                        text, re.S)
    acc = re.search(r"Accumulated forward statistics for all ports.*?"
                    r"RX-packets:\s+(\d+)", text, re.S)
    res = {"kind": "testpmd", "mode": mode, "ports": kind, "rep": int(rep)}
    cpu_s = int(ticks) / int(hz)
    if len(blocks) >= 4 and acc and cpu_s >= 0.2:
        res["mpps"] = sum(int(x) for x in blocks[-2:]) / 1e6
        res["cpu_mpps"] = int(acc.group(1)) / cpu_s / 1e6
        res["cpu_s"] = cpu_s
    else:
        res["error"] = "no usable statistics (cpu %.2f s)" % cpu_s
    return res


def pair_lines(tb, tp, rep):
    """One pair's records: per turbolb-bench result, its packets per
    CPU-second (a request, and in reqresp mode its response too) beside
    testpmd's of the same pair."""
    out = []
    for x in tb["results"]:
        per = 2 if x["mode"] == "reqresp" else 1
        out.append({"rep": rep, "policy": x["policy"], "mode": x["mode"],
                    "cpu_mpps": x["median_cpu_mpps"] * per,
                    "testpmd_cpu_mpps": tp.get("cpu_mpps")})
    return out


# ---- the results

def ratio(a, b):
    return round(a / b, 3) if a and b else None


def tp_median(tp, mode, ports, key):
    """The median of key over the testpmd runs of that mode and ports."""
    v = [r[key] for r in tp if r["mode"] == mode and r["ports"] == ports
         and r.get(key)]
    return statistics.median(v) if v else None


def callgrind_ir(metas, dumps):
    """{window label: instructions per packet}. metas: {run name:
    turbolb-bench's JSON under callgrind}; dumps: {run name: [dump texts]},
    one dump per measured window, named by the window's label in its
    "Client Request" line."""
    cg = {}
    for name, meta in metas.items():
        pk = {r["label"]: r["packets"] for r in meta["results"]}
        for t in dumps.get(name, []):
            m = re.search(r"Client Request: (\S+)", t)
            s = re.search(r"^summary: (\d+)", t, re.M)
            if m and s and m.group(1) in pk and pk[m.group(1)]:
                cg[m.group(1)] = int(s.group(1)) / pk[m.group(1)]
    return cg


def result_rows(main, sweep, cg, tp_ms):
    """The rows of bench-dispatch.json and .csv: the main run's and the
    sweep's results with their instructions per packet, then the windows
    only measured under callgrind; turbolbd's with their ratios to
    testpmd macswap (tp_ms: its median mpps and cpu_mpps)."""
    rows = []
    for run, src in (("main", main), ("sweep", sweep)):
        for r in (src or {}).get("results", []):
            r = dict(r, run=run)
            r["ir_per_pkt"] = cg.get(r["label"])
            rows.append(r)
    for label, ir in cg.items():
        if not any(r["label"] == label for r in rows):
            c, mode, what = label.split("/")
            m = re.match(r"c(\d+)d(\d+)(copy)?(ring)?", c)
            fwd = what in ("io", "macswap")
            rows.append({"label": label, "run": "callgrind",
                         "kind": what if fwd else "turbolbd",
                         "policy": None if fwd else what, "mode": mode,
                         "cores": int(m.group(1)),
                         "dispatchers": int(m.group(2)),
                         "topology": "copy" if m.group(3) else "direct",
                         "median_mpps": None, "median_cpu_mpps": None,
                         "ir_per_pkt": ir})
    for r in rows:
        if r["kind"] == "turbolbd":
            r["ratio_testpmd_macswap_cpu"] = ratio(r.get("median_cpu_mpps"),
                                                   tp_ms["cpu_mpps"])
            r["ratio_testpmd_macswap_wall"] = ratio(r.get("median_mpps"),
                                                    tp_ms["mpps"])
    return rows


def pairs_summary(pairs):
    """{"policy/mode": median, min and max of the pairs' ratios, and how
    many}: each pair's ratio taken on its own, then their median."""
    out = {}
    for key in sorted({(x["policy"], x.get("mode", "request"))
                       for x in pairs}):
        rs = [x["cpu_mpps"] / x["testpmd_cpu_mpps"] for x in pairs
              if (x["policy"], x.get("mode", "request")) == key
              and x["cpu_mpps"] and x["testpmd_cpu_mpps"]]
        if rs:
            out["%s/%s" % key] = {"median_ratio": round(statistics.median(rs),
                                                        3),
                                  "min_ratio": round(min(rs), 3),
                                  "max_ratio": round(max(rs), 3),
                                  "pairs": len(rs)}
    return out


CSV_COLS = ["label", "run", "kind", "policy", "mode", "cores", "dispatchers",
            "topology", "median_mpps", "median_cpu_mpps", "ir_per_pkt",
            "ratio_testpmd_macswap_cpu"]


def csv_lines(rows, tp, process):
    """bench-dispatch.csv: the rows, the testpmd runs, the process runs."""
    out = [",".join(CSV_COLS)]
    for r in rows:
        out.append(",".join("" if r.get(c) is None else str(r.get(c))
                            for c in CSV_COLS))
    for r in tp:
        out.append("testpmd/%s/%s/%d,testpmd,testpmd,,%s,,,%s,%s,%s,," % (
            r["ports"], r["mode"], r["rep"], r["mode"], r["ports"],
            r.get("mpps", ""), r.get("cpu_mpps", "")))
    for r in (process or {}).get("rows", []):
        out.append("process/t%d/%s,process,turbolbd,%s,request,%d,1,pcap-null,"
                   "%s,%s,,%s" % (
                       r["targets"], r["policy"], r["policy"], r["targets"],
                       "" if r.get("mpps") is None else r["mpps"],
                       "" if r.get("cpu_mpps") is None else r["cpu_mpps"],
                       "" if r.get("ratio_cpu") is None else r["ratio_cpu"]))
    return out


def f(v, fmt="%8.2f"):
    return fmt % v if v is not None else "%8s" % "-"


def grid_header():
    return "%-12s" % "policy" + "".join(
        "%9s" % ("D=%d/%d" % (d, c))
        for d in SWEEP_DISPATCHERS for c in SWEEP_CORES)


def latency_row(x):
    """One row of the residence table: a latency result of turbolb-bench's
    JSON. dropped: the arrivals a full uplink RX ring dropped (absent
    from older results: 0); poll ns and req/poll: a poll's mean length
    and the requests arriving in one (absent from older results: -)."""
    poll = x.get("poll_ns")
    per = x.get("requests_per_poll")
    return ("%-8s %-8s %6d %5.2f %8d %8d %8d %9d %6d %7.3f%% %7.2f%% "
            "%7s %8s") % (
        x["policy"], x["mode"], x["tx_hold_ns"], x["load_fraction"],
        x["residence_p50_ns"], x["residence_p99_ns"],
        x["residence_p999_ns"], x["residence_max_ns"],
        x["polls_waited_max"],
        100.0 * x["preempted"] / x["samples"] if x["samples"] else 0,
        100.0 * x.get("nic_drop_share", 0),
        "-" if poll is None else "%.0f" % poll,
        "-" if per is None else "%.1f" % per)


def tables(machine, tp, main, cg, pair_sum, latency, sweep, tp_ms):
    """The printed tables, as lines."""
    out = []
    out.append("machine: %d CPUs (%s), load average %s, DPDK %s, %s; Mpps "
               "are noisy here, instructions/packet are not" % (
                   machine["cpus"], machine["cpu_model"],
                   " ".join(machine["loadavg"]), machine["dpdk"],
                   "hugepages" if (main or {}).get("hugepages")
                   else "4 KiB pages (--no-huge)"))
    out.append("\nMpps: wall clock; Mpps/CPU: per second of the forwarding "
               "thread's CPU time;")
    out.append("x tp-ms / x b-ms: Mpps/CPU over dpdk-testpmd macswap "
               "(net_ring) / the bench's macswap")
    out.append("%-34s %8s %8s %8s %8s %8s" % (
        "16 host cores, 1 dispatcher", "Mpps", "Mpps/CPU", "Ir/pkt",
        "x tp-ms", "x b-ms"))
    for m in ("macswap", "io"):
        for p in ("ring", "null"):
            out.append("%-34s %s %s %8s %8s %8s" % (
                "dpdk-testpmd %s (net_%s)" % (m, p),
                f(tp_median(tp, m, p, "mpps")),
                f(tp_median(tp, m, p, "cpu_mpps")), "-", "-", "-"))
    # The main run's own rows (the sweep repeats some labels).
    main_rows = [dict(x, ir_per_pkt=cg.get(x["label"]))
                 for x in (main or {}).get("results", [])]
    bench_ms = next((x["median_cpu_mpps"] for x in main_rows
                     if x["label"] == "c16d1/request/macswap"), None)
    for r in main_rows:
        tb = r["kind"] == "turbolbd"
        if not tb:
            name = "bench %s (same rings)" % r["kind"]
        else:
            name = "turbolbd %s %s%s" % (
                r["policy"], r["mode"],
                " (copy)" if r["topology"] == "copy" else "")
        out.append("%-34s %s %s %s %s %s" % (
            name, f(r.get("median_mpps")), f(r.get("median_cpu_mpps")),
            f(r.get("ir_per_pkt"), "%8.0f"),
            f(ratio(r.get("median_cpu_mpps"), tp_ms["cpu_mpps"])
              if tb else None, "%8.3f"),
            f(ratio(r.get("median_cpu_mpps"), bench_ms) if tb else None,
              "%8.3f")))
    if pair_sum:
        out.append("\npairs (one turbolbd rep, then one testpmd macswap rep "
                   "on net_ring; packets per CPU-second,\nrequest+response "
                   "counting requests and responses):")
        out.append("%-20s %8s %8s %8s %6s   %s" % (
            "policy", "median", "min", "max", "pairs",
            "ratio to testpmd macswap of its own pair"))
        for mode in ("reqresp", "request"):
            for pol in ("rr", "jsq", "jlq", "jbsq"):
                v = pair_sum.get("%s/%s" % (pol, mode))
                if v:
                    out.append("%-20s %8.3f %8.3f %8.3f %6d" % (
                        "%s %s" % (pol, mode), v["median_ratio"],
                        v["min_ratio"], v["max_ratio"], v["pairs"]))
    if latency:
        out.append("\nresidence in the daemon (ns), 1 dispatcher, open loop "
                   "at a fraction of its saturation:")
        out.append("%-8s %-8s %6s %5s %8s %8s %8s %9s %6s %8s %8s %7s %8s" % (
            "policy", "mode", "hold", "load", "p50", "p99", "p99.9", "max",
            "polls", "preempt", "dropped", "poll ns", "req/poll"))
        for x in latency:
            out.append(latency_row(x))
    if cg:
        out.append("\ninstructions per packet (callgrind), request mode, by "
                   "host cores:")
        out.append(grid_header())
        for p in POLICIES:
            line = "%-12s" % p
            for d in SWEEP_DISPATCHERS:
                for c in SWEEP_CORES:
                    line += f(cg.get("c%dd%d/request/%s" % (c, d, p)),
                              "%9.0f")
            out.append(line)
    if sweep:
        out.append("\nMpps per CPU-second, request mode (D=2: aggregate of "
                   "both dispatchers):")
        out.append(grid_header())
        sw = {r["label"]: r for r in sweep["results"]}
        for p in POLICIES:
            line = "%-12s" % p
            for d in SWEEP_DISPATCHERS:
                for c in SWEEP_CORES:
                    r = sw.get("c%dd%d/request/%s" % (c, d, p))
                    line += f(r["median_cpu_mpps"] if r else None, "%9.2f")
            out.append(line)
    rings = sorted(x for x in cg if re.match(r"c\d+d\d+(copy)?ring/", x))
    if rings:
        out.append("\ncredit ring (host.credits: ring) against in-band "
                   "credits, instructions per packet:")
        for x in rings:
            ref = x.replace("ring/", "/", 1)
            out.append("%-28s %8.0f   in-band %s" % (
                x, cg[x], f(cg.get(ref), "%.0f").strip()))
    return out


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except Exception:
        return ""


def machine_info(top):
    with open("/proc/loadavg") as fh:
        loadavg = fh.read().split()[:3]
    return {
        "cpus": os.cpu_count(),
        "cpu_model": sh("grep -m1 'model name' /proc/cpuinfo | "
                        "cut -d: -f2").strip(),
        "loadavg": loadavg,
        "kernel": sh("uname -r"),
        "dpdk": sh("pkg-config --modversion libdpdk"),
        "commit": sh("git -C '%s' rev-parse --short HEAD 2>/dev/null" % top),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def json_lines(path):
    with open(path) as fh:
        return [json.loads(x) for x in fh if x.strip()]


def results(work, out, top):
    """Reads the work folder, writes the result files, returns the
    tables' lines."""
    def load(name):
        p = os.path.join(work, name)
        if not os.path.exists(p):
            return None
        with open(p) as fh:
            return json.load(fh)

    main, sweep = load("main.json"), load("sweep.json")
    process = load("process.json")
    tp = json_lines(os.path.join(work, "testpmd.jsonl"))
    metas, dumps = {}, {}
    for name in ("main", "sweep", "ring", "ringref"):
        meta = load("cg-%s.json" % name)
        if not meta:
            continue
        metas[name] = meta
        dumps[name] = []
        for p in glob.glob(os.path.join(out, "callgrind", "cg.%s.*" % name)):
            with open(p) as fh:
                dumps[name].append(fh.read())
    cg = callgrind_ir(metas, dumps)
    tp_ms = {k: tp_median(tp, "macswap", "ring", k)
             for k in ("mpps", "cpu_mpps")}
    rows = result_rows(main, sweep, cg, tp_ms)
    pairs = json_lines(os.path.join(work, "pairs.jsonl"))
    pair_sum = pairs_summary(pairs)
    latency = []
    for hold in ("default", "0"):
        latency += (load("latency-%s.json" % hold) or {}).get("latency", [])
    if latency:
        with open(os.path.join(out, "bench-latency.json"), "w") as fh:
            json.dump({"latency": latency}, fh, indent=1)
    mach = machine_info(top)
    doc = {"machine": mach,
           "bench": {k: v for k, v in (main or {}).items()
                     if k != "results"},
           "results": rows, "testpmd": tp, "pairs": pairs,
           "pairs_summary": pair_sum, "process": process, "latency": latency,
           "testpmd_median": {"%s/%s" % (m, p): {
               k: tp_median(tp, m, p, k) for k in ("mpps", "cpu_mpps")}
               for m in ("macswap", "io") for p in ("ring", "null")},
           "note": "Mpps: wall clock; cpu_mpps: per second of the forwarding "
                   "thread's CPU time (this machine is shared). ir_per_pkt: "
                   "callgrind instructions in tlb_dp_poll (or bench_fwd_poll) "
                   "per uplink packet, the stable number."}
    with open(os.path.join(out, "bench-dispatch.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
    with open(os.path.join(out, "bench-dispatch.csv"), "w") as fh:
        fh.write("\n".join(csv_lines(rows, tp, process)) + "\n")
    lines = tables(mach, tp, main, cg, pair_sum, latency, sweep, tp_ms)
    lines.append("\nwritten: %s/bench-dispatch.json, %s/bench-dispatch.csv%s"
                 % (out, out, ", %s/bench-latency.json" % out
                    if latency else ""))
    return lines


def main(argv=None):
    a = argv if argv is not None else sys.argv[1:]
    cmd, args = a[0], a[1:]
    if cmd == "testpmd":
        log, mode, kind, rep, ticks, hz = args
        with open(log, errors="replace") as fh:
            text = fh.read()
        print(json.dumps(testpmd_result(text, mode, kind, rep, ticks, hz)))
    elif cmd == "pair":
        with open(args[0]) as fh:
            tb = json.load(fh)
        with open(args[1]) as fh:
            tp = json.load(fh)
        for x in pair_lines(tb, tp, int(args[2])):
            print(json.dumps(x))
    elif cmd == "results":
        print("\n".join(results(*args)))
    else:
        sys.exit("benchdispatch.py: unknown command %s" % cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
