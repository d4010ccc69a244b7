#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The arithmetic of scripts/consolidation-experiment.sh: one results.csv
row per run, and the medians over the repetitions with the files made from
them (summary.csv, p99.dat and quantiles3.dat for gnuplot, table.md, the
latter printed too).

    consolidation.py row RUN_DIR THREADS VARIANT REP KICKS_SENT KICKS_STALL
        the results.csv row of one run, from RUN_DIR/loadgen.json and
        RUN_DIR/kickd.json (absent without an agent)
    consolidation.py summary OUT_DIR "THREADS ..." "VARIANTS ..."
        the medians of OUT_DIR/results.csv and the files above

The numbers are tested by tests/python/test_consolidation.py.
"""
import csv
import json
import os
import statistics
import sys

# The results.csv columns the summary takes the median of.
COLS = ["p50_us", "p99_us", "p999_us", "max_us", "lost", "kicks_sent",
        "kicks_stall", "kicks_served", "boosts", "reverted_bound",
        "reverted_yield"]


def row(r, k, n, v, rep, ks, kst):
    """The results.csv row of one run: r the load generator's JSON, k the
    agent's "total" counters ({} without an agent), ks and kst the daemon's
    kicks_sent and kicks_stall."""
    def us(key):
        return r[key] / 1000.0
    return (f"{n},{v},{rep},{us('p50_ns'):.1f},{us('p99_ns'):.1f},"
            f"{us('p999_ns'):.1f},"
            f"{us('max_ns'):.1f},{r['sent']},{r['lost']},"
            f"{r.get('late_sends', 0)},{ks},{kst},"
            f"{k.get('kicks_served', 0)},{k.get('boosts', 0)},"
            f"{k.get('reverted_drain', 0)},"
            f"{k.get('reverted_bound', 0)},{k.get('reverted_yield', 0)},"
            f"{k.get('boosted_us', 0)}")


def medians(rows, threads, variants):
    """{(threads, variant): {column: median over the repetitions, "reps":
    their count}} for the points that have rows."""
    med = {}
    for n in threads:
        for v in variants:
            rs = [r for r in rows if r["threads"] == n and r["variant"] == v]
            if rs:
                med[(n, v)] = {c: statistics.median(float(r[c]) for r in rs)
                               for c in COLS}
                med[(n, v)]["reps"] = len(rs)
    return med


def summary_csv(med):
    out = "threads,variant,reps," + ",".join(COLS) + "\n"
    for (n, v), m in med.items():
        out += (f"{n},{v},{m['reps']}," +
                ",".join(f"{m[c]:g}" for c in COLS) + "\n")
    return out


def p99_dat(med, threads, variants):
    """One row per thread count, p99 of each variant (NaN where a point is
    missing): the chart's data, with a header gnuplot reads with
    columnhead()."""
    out = "threads " + " ".join(variants) + "\n"
    for n in threads:
        out += n + " " + " ".join(
            f"{med[(n, v)]['p99_us']:g}" if (n, v) in med else "NaN"
            for v in variants) + "\n"
    return out


def quantiles3(med, variants):
    """p50, p99 and p99.9 of each variant at 3 threads per CPU."""
    out = "# variant p50 p99 p99.9 (3 threads per CPU)\n"
    for v in variants:
        m = med.get(("3", v))
        if m:
            out += f"{v} {m['p50_us']:g} {m['p99_us']:g} {m['p999_us']:g}\n"
    return out


def table_md(med, threads, variants):
    """The Markdown table; each variant's p99 is compared with nokick's at
    the same thread count."""
    out = ("| threads/CPU | variant | p50 (µs) | p99 (µs) | p99.9 (µs) "
           "| p99 vs nokick | lost | kicks sent+stall | boosts |\n")
    out += "|---|---|---|---|---|---|---|---|---|\n"
    for n in threads:
        base = med.get((n, "nokick"))
        for v in variants:
            m = med.get((n, v))
            if not m:
                continue
            ratio = (f"{base['p99_us'] / m['p99_us']:.1f}x lower"
                     if base and v != "nokick" and m["p99_us"] > 0 else "")
            out += (f"| {n} | {v} | {m['p50_us']:.0f} | {m['p99_us']:.0f} "
                    f"| {m['p999_us']:.0f} | {ratio} | {m['lost']:g} "
                    f"| {m['kicks_sent']:g}+{m['kicks_stall']:g} "
                    f"| {m['boosts']:g} |\n")
    return out


def cmd_row(run, n, v, rep, ks, kst):
    with open(os.path.join(run, "loadgen.json")) as f:
        r = json.load(f)
    k = {}
    try:
        with open(os.path.join(run, "kickd.json")) as f:
            k = json.load(f)["total"]
    except (OSError, ValueError, KeyError):
        pass
    print(row(r, k, n, v, rep, ks, kst))


def cmd_summary(out, threads, variants):
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    med = medians(rows, threads, variants)
    files = {
        "summary.csv": summary_csv(med),
        "p99.dat": p99_dat(med, threads, variants),
        "quantiles3.dat": quantiles3(med, variants),
        "table.md": table_md(med, threads, variants),
    }
    for name, text in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    print(files["table.md"])


def main(argv):
    if len(argv) == 8 and argv[1] == "row":
        cmd_row(*argv[2:])
    elif len(argv) == 5 and argv[1] == "summary":
        cmd_summary(argv[2], argv[3].split(), argv[4].split())
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
