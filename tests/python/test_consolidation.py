# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/consolidation.py (scripts/consolidation-
experiment.sh's arithmetic): a run's results row, the medians over the
repetitions, and the files made from them."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import consolidation as co  # noqa: E402

LG = {"p50_ns": 12345, "p99_ns": 99999, "p999_ns": 123456,
      "max_ns": 999999, "sent": 1000, "lost": 2}


def result(n, v, p99, **kw):
    r = {c: "0" for c in co.COLS}
    r.update(threads=n, variant=v, p99_us=str(p99))
    r.update({k: str(x) for k, x in kw.items()})
    return r


class Row(unittest.TestCase):
    def test_with_agent(self):
        k = {"kicks_served": 5, "boosts": 4, "reverted_drain": 1,
             "reverted_bound": 2, "reverted_yield": 3, "boosted_us": 77}
        self.assertEqual(
            co.row(dict(LG, late_sends=3), k, "3", "kick", "2", "10", "11"),
            "3,kick,2,12.3,100.0,123.5,1000.0,1000,2,3,10,11,5,4,1,2,3,77")

    def test_without_agent(self):
        # No kickd.json and no late_sends: their columns are 0.
        self.assertEqual(
            co.row(LG, {}, "1", "nokick", "1", "0", "0"),
            "1,nokick,1,12.3,100.0,123.5,1000.0,1000,2,0,0,0,0,0,0,0,0,0")


class Summary(unittest.TestCase):
    rows = [result("1", "nokick", 300), result("1", "nokick", 100),
            result("1", "nokick", 200, lost=4),
            result("1", "kick", 50), result("1", "kick", 30),
            result("3", "kick", 10, p50_us=2, p999_us=40)]

    def test_medians(self):
        med = co.medians(self.rows, ["1", "3"], ["nokick", "kick"])
        self.assertEqual(med[("1", "nokick")]["p99_us"], 200.0)
        self.assertEqual(med[("1", "nokick")]["reps"], 3)
        # An even count: the mean of the middle two.
        self.assertEqual(med[("1", "kick")]["p99_us"], 40.0)
        self.assertNotIn(("3", "nokick"), med)

    def test_p99_dat_marks_missing_points(self):
        med = co.medians(self.rows, ["1", "3"], ["nokick", "kick"])
        self.assertEqual(co.p99_dat(med, ["1", "3"], ["nokick", "kick"]),
                         "threads nokick kick\n1 200 40\n3 NaN 10\n")

    def test_quantiles3(self):
        med = co.medians(self.rows, ["1", "3"], ["nokick", "kick"])
        self.assertEqual(co.quantiles3(med, ["nokick", "kick"]),
                         "# variant p50 p99 p99.9 (3 threads per CPU)\n"
                         "kick 2 10 40\n")

    def test_table_compares_with_nokick(self):
        med = co.medians(self.rows, ["1", "3"], ["nokick", "kick"])
        lines = co.table_md(med, ["1", "3"], ["nokick", "kick"]).splitlines()
        self.assertEqual(len(lines), 5)
        self.assertIn("| 1 | nokick | 0 | 200 | 0 |  | 0 |", lines[2])
        # 200 / 40: five times lower; no nokick at 3 threads, no ratio.
        self.assertIn("| 5.0x lower |", lines[3])
        self.assertIn("| 3 | kick | 2 | 10 | 40 |  |", lines[4])

    def test_summary_csv(self):
        med = co.medians(self.rows, ["1"], ["kick"])
        text = co.summary_csv(med).splitlines()
        self.assertEqual(text[0], "threads,variant,reps," + ",".join(co.COLS))
        self.assertEqual(text[1], "1,kick,2,0,40,0,0,0,0,0,0,0,0,0")


if __name__ == "__main__":
    unittest.main()
