# SPDX-License-Identifier: BSD-3-Clause
"""scripts/demo_report.py: rows, disturbed rounds, verdicts, the table."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
import demo_report as dr  # noqa: E402


def point(p99_us, p50_us=100, lost=0, lag_ms=1, per_core=(5, 5),
          rate=3200.0, received=10):
    return {"record": "point", "target_rps": rate, "achieved_rps": rate,
            "p50_ns": int(p50_us * 1000), "p99_ns": int(p99_us * 1000),
            "lost": lost, "max_lag_ns": int(lag_ms * 1e6),
            "per_core": list(per_core), "received": received,
            "dist": "exp:2ms"}


STALLED = point(5000000, lag_ms=2000, lost=99)


class Row(unittest.TestCase):
    def test_median_of_rounds_and_range(self):
        r = dr.policy_row("jsq", [point(300), point(100), point(200)])
        self.assertEqual(r["p99_us"], 200)
        self.assertEqual((r["p99_min_us"], r["p99_max_us"]), (100, 300))
        self.assertEqual((r["ok_rounds"], r["rounds"]), (3, 3))
        self.assertFalse(r["disturbed"])

    def test_even_count_takes_a_measured_value(self):
        r = dr.policy_row("jsq", [point(100), point(400)])
        self.assertEqual(r["p99_us"], 100)

    def test_per_core_summed_and_lost_summed(self):
        r = dr.policy_row("rss", [point(1, lost=2, per_core=(3, 1)),
                                  point(1, lost=1, per_core=(2, 0))])
        self.assertEqual(r["per_core"], [5, 1])
        self.assertEqual(r["lost"], 3)

    def test_disturbed_round_left_out(self):
        r = dr.policy_row("jsq", [point(100), STALLED, None])
        self.assertEqual(r["p99_us"], 100)
        self.assertEqual(r["ok_rounds"], 1)
        self.assertEqual(r["lost"], 0)

    def test_all_disturbed_uses_them_and_says_so(self):
        r = dr.policy_row("jsq", [STALLED, None])
        self.assertTrue(r["disturbed"])
        self.assertEqual(r["p99_us"], 5000000)
        self.assertIn("!", dr.fmt_row("jsq", r))

    def test_all_failed(self):
        r = dr.policy_row("jsq", [None, None])
        self.assertNotIn("p99_us", r)
        self.assertIn("failed", dr.fmt_row("jsq", r))

    def test_disturbed_rule(self):
        self.assertTrue(dr.disturbed(None))
        self.assertTrue(dr.disturbed(point(1, lag_ms=51)))
        self.assertFalse(dr.disturbed(point(1, lag_ms=49)))
        self.assertTrue(dr.disturbed(dict(point(1), interrupted=True)))

    def test_hot_ratio(self):
        self.assertAlmostEqual(dr.hot_ratio([6, 6, 4, 4]), 1.2)
        self.assertEqual(dr.hot_ratio([5, 5]), 1.0)
        self.assertIsNone(dr.hot_ratio([0, 0]))
        self.assertIsNone(dr.hot_ratio([]))


class Verdict(unittest.TestCase):
    def verdict(self, pol, ref):
        rows = dr.policy_row("jsq", pol), dr.policy_row("rss", ref)
        return dr.verdict(rows[0], rows[1], dr.paired_rounds(pol, ref))

    def test_better_in_every_round(self):
        v = self.verdict([point(100), point(120), point(110)],
                         [point(400), point(500), point(450)])
        self.assertTrue(v.startswith("jsq: better: p99 4.1x lower than rss"),
                        v)
        self.assertIn("lower in 3 of 3 rounds", v)

    def test_worse_in_every_round(self):
        v = self.verdict([point(400), point(500)], [point(100), point(110)])
        self.assertIn("worse: p99 4.0x higher than rss", v)

    def test_most_rounds_decide_and_are_counted(self):
        v = self.verdict([point(100), point(500), point(110)],
                         [point(400), point(450), point(420)])
        self.assertIn("better: p99 3.8x lower than rss (lower in 2 of 3 "
                      "rounds)", v)
        v = self.verdict([point(500), point(100), point(500)],
                         [point(400), point(450), point(420)])
        self.assertIn("worse: p99 1.2x higher than rss (higher in 2 of 3 "
                      "rounds)", v)

    def test_split_rounds_are_noise(self):
        v = self.verdict([point(100), point(500)],
                         [point(400), point(450)])
        self.assertIn("no clear difference", v)
        self.assertIn("lower in 1 of 2 rounds (machine noise)", v)

    def test_median_against_most_rounds_is_noise(self):
        # Lower in 2 of 3 rounds, but by little, and far higher in the
        # third: the medians say higher.
        v = self.verdict([point(399), point(449), point(2000)],
                         [point(400), point(450), point(300)])
        self.assertIn("no clear difference", v)

    def test_pairs_skip_rounds_disturbed_on_either_side(self):
        pol = [point(100), STALLED, point(100)]
        ref = [point(400), point(400), None]
        self.assertEqual(dr.paired_rounds(pol, ref), [(100000, 400000)])
        self.assertIn("one round: no noise estimate", self.verdict(pol, ref))

    def test_no_common_round(self):
        v = self.verdict([point(100), STALLED], [STALLED, point(400)])
        self.assertEqual(v, "jsq: better: p99 4.0x lower than rss "
                         "(undisturbed in different rounds: no noise "
                         "estimate)")

    def test_only_disturbed_rounds_are_noise(self):
        v = self.verdict([STALLED, STALLED], [point(400), point(400)])
        self.assertTrue(v.startswith("jsq: no clear difference: p99 "
                                     "12500.0x higher than rss (measured "
                                     "in disturbed rounds only: noise)"), v)

    def test_reference_and_missing(self):
        ref = dr.policy_row("rss", [point(400, lost=3)])
        self.assertEqual(dr.verdict(ref, ref, []),
                         "rss: the reference (static hash), p99 400 us; "
                         "lost 3")
        none = dr.policy_row("jsq", [None])
        self.assertIn("no result", dr.verdict(none, ref, []))
        self.assertEqual(dr.verdict(ref, None, []),
                         "rss: no comparison: p99 400 us, no rss row; lost 3")


class Path(unittest.TestCase):
    def test_best_point_is_lowest_p50(self):
        pts = [point(1, p50_us=300), None, point(1, p50_us=200)]
        self.assertEqual(dr.best_point(pts)["p50_ns"], 200000)
        self.assertIsNone(dr.best_point([None, None]))

    def test_direct_slower_gives_no_estimate(self):
        lines = dr.baseline_lines([point(1, p50_us=500)],
                                  [point(1, p50_us=100)])
        self.assertIn("no estimate of what turbolbd adds", lines[-1])

    def test_missing_path_rows(self):
        lines = dr.baseline_lines([None], [point(1, p50_us=100)])
        self.assertIn("direct   (load generator failed", "\n".join(lines))
        self.assertFalse(any("adds" in ln for ln in lines))


class Table(unittest.TestCase):
    def write(self, d, name, p):
        with open(os.path.join(d, name), "w") as f:
            if p is not None:
                f.write(json.dumps(p) + "\n")

    def test_one_row_per_policy_and_verdicts(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "direct-1.json", point(80, p50_us=90, rate=500))
            self.write(d, "direct-2.json", point(80, p50_us=60, rate=500))
            self.write(d, "via-1.json", point(200, p50_us=130, rate=500,
                                              lag_ms=70))
            self.write(d, "via-2.json", None)
            for k, (a, b) in enumerate([(400, 100), (500, 120)], 1):
                self.write(d, "rss-r%d.json" % k, point(a))
                self.write(d, "jsq-r%d.json" % k, point(b))
            lines = dr.table(d, ["rss", "jsq"], 2, light_runs=2)
        text = "\n".join(lines)
        self.assertIn("turbolbd adds 70 us at p50", text)
        self.assertIn("of 2 runs each, the one with the lowest p50", text)
        self.assertRegex(text, r"\nvia-lb +500 +500 +130 +200 +200-200 +1/1 ")
        rows = [ln for ln in lines if ln.split()[:1] in (["rss"], ["jsq"])]
        self.assertEqual(len(rows), 2, text)
        self.assertRegex(rows[1], r"^jsq +3200 +3200 +100 +100 +100-120 +2/2")
        self.assertIn("  jsq: better: p99 4.0x lower than rss (lower in 2 "
                      "of 2 rounds)", lines)

    def test_missing_files_make_failed_rows(self):
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "jsq-r1.json", None)
            lines = dr.table(d, ["rss", "jsq"], 1)
        text = "\n".join(lines)
        self.assertIn("rss      (load generator failed in every round)", text)
        self.assertIn("path, light load (no result)", text)

    def test_load_point_reads_the_last_record(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "p.json")
            with open(path, "w") as f:
                f.write(json.dumps(point(1)) + "\n" +
                        json.dumps(point(7)) + "\n")
            self.assertEqual(dr.load_point(path)["p99_ns"], 7000)
            with open(path, "w") as f:
                f.write(json.dumps(point(7, received=0)) + "\n")
            self.assertIsNone(dr.load_point(path))
            with open(path, "w") as f:
                f.write("not json")
            self.assertIsNone(dr.load_point(path))


class Telemetry(unittest.TestCase):
    def test_stats_nonzero_only(self):
        lines = dr.stats_lines({"/turbolb/stats": {"a": 0, "b": 3}})
        self.assertEqual([ln.split() for ln in lines], [["b", "3"]])

    def test_cores_in_numeric_order(self):
        c = {"sent": 1, "completed": 1, "outstanding": 0, "state": "running"}
        lines = dr.cores_lines({"/turbolb/cores": {"10": c, "2": c}})
        self.assertTrue(lines[0].startswith("  core 2:"))
        self.assertTrue(lines[1].startswith("  core 10:"))


if __name__ == "__main__":
    unittest.main()
