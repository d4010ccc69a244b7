#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The table of scripts/ab-bench.sh: from the --json files of its paired
turbolb-bench runs (WORK/R-A.json and WORK/R-B.json for R = 1..N), per
run the medians of A's and B's Mpps/CPU and the median (min-max) of the
pairs' B/A ratios.

    ab_bench.py WORK N A_BIN B_BIN

The numbers are tested by tests/python/test_ab_bench.py.
"""
import json
import os
import statistics as st
import sys


def collect(results):
    """{run name: {"A": [..], "B": [..], "pairs": [..]}} from a list, one
    item per pair, of {"A": bench results, "B": bench results} (the
    "results" lists of the two --json files). A pair's ratio counts only
    when both halves measured the run."""
    runs = {}
    for pair in results:
        got = {}
        for v in "AB":
            for x in pair[v]:
                got.setdefault(x["label"], {})[v] = x["median_cpu_mpps"]
        for name, ab in got.items():
            e = runs.setdefault(name, {"A": [], "B": [], "pairs": []})
            for v in "AB":
                if ab.get(v):
                    e[v].append(ab[v])
            if ab.get("A") and ab.get("B"):
                e["pairs"].append(ab["B"] / ab["A"])
    return runs


def table(runs, a_bin, b_bin, n):
    """The printed report, as a list of lines."""
    lines = ["A: %s" % a_bin, "B: %s" % b_bin, "%d pairs, Mpps/CPU" % n,
             "%-28s %8s %8s   %s" % ("run", "A", "B",
                                     "B/A, median (min-max) of the pairs")]
    for name in sorted(runs):
        e = runs[name]
        if not e["pairs"]:
            continue
        lines.append("%-28s %8.2f %8.2f   %.3f (%.3f-%.3f)" % (
            name, st.median(e["A"]), st.median(e["B"]),
            st.median(e["pairs"]), min(e["pairs"]), max(e["pairs"])))
    return lines


def load(work, n):
    """The pairs' results lists from WORK/R-A.json and WORK/R-B.json."""
    out = []
    for r in range(1, n + 1):
        pair = {}
        for v in "AB":
            with open(os.path.join(work, "%d-%s.json" % (r, v))) as f:
                pair[v] = json.load(f)["results"]
        out.append(pair)
    return out


def main(argv):
    work, n, a_bin, b_bin = argv[1], int(argv[2]), argv[3], argv[4]
    print("\n".join(table(collect(load(work, n)), a_bin, b_bin, n)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
