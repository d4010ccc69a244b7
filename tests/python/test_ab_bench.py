# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/ab_bench.py (scripts/ab-bench.sh's table): each
pair's own B/A ratio, the medians, and runs one half did not measure."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import ab_bench  # noqa: E402


def res(**runs):
    return [{"label": k, "median_cpu_mpps": v} for k, v in runs.items()]


class Collect(unittest.TestCase):
    def test_ratio_of_each_pair(self):
        # The pairs' ratios are 2.0, 1.0 and 1.5: their median is 1.5,
        # while the ratio of the medians (B 4 / A 2) would be 2.0.
        runs = ab_bench.collect([
            {"A": res(rr=1.0), "B": res(rr=2.0)},
            {"A": res(rr=4.0), "B": res(rr=4.0)},
            {"A": res(rr=2.0), "B": res(rr=3.0)},
        ])
        self.assertEqual(runs["rr"]["pairs"], [2.0, 1.0, 1.5])
        lines = ab_bench.table(runs, "a", "b", 3)
        self.assertEqual(lines[:3], ["A: a", "B: b", "3 pairs, Mpps/CPU"])
        self.assertEqual(lines[4], "%-28s %8.2f %8.2f   %.3f (%.3f-%.3f)" %
                         ("rr", 2.0, 3.0, 1.5, 1.0, 2.0))

    def test_half_missing(self):
        # jsq only in B, and a zero rate in A: no pair, no row.
        runs = ab_bench.collect([
            {"A": res(rr=1.0, jlq=0.0), "B": res(rr=1.0, jsq=2.0, jlq=1.0)},
        ])
        self.assertEqual(runs["jsq"], {"A": [], "B": [2.0], "pairs": []})
        self.assertEqual(runs["jlq"]["pairs"], [])
        lines = ab_bench.table(runs, "a", "b", 1)
        self.assertEqual(len(lines), 5)
        self.assertTrue(lines[4].startswith("rr "))

    def test_rows_sorted(self):
        runs = ab_bench.collect([
            {"A": res(z=1.0, a=1.0), "B": res(z=1.0, a=1.0)}])
        rows = ab_bench.table(runs, "a", "b", 1)[4:]
        self.assertEqual([r.split()[0] for r in rows], ["a", "z"])

    def test_load(self):
        with tempfile.TemporaryDirectory() as d:
            for r in (1, 2):
                for v in "AB":
                    with open(os.path.join(d, "%d-%s.json" % (r, v)),
                              "w") as f:
                        json.dump({"results": res(rr=float(r))}, f)
            got = ab_bench.load(d, 2)
        self.assertEqual(len(got), 2)
        self.assertEqual(got[1]["B"], res(rr=2.0))


if __name__ == "__main__":
    unittest.main()
