# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/progress.py: the estimate of the time left, the
line's format, and the relay that keeps the line under the output."""

import io
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import progress  # noqa: E402


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


class Duration(unittest.TestCase):
    def test_units(self):
        self.assertEqual(progress.duration(0), "0s")
        self.assertEqual(progress.duration(59.4), "59s")
        self.assertEqual(progress.duration(65), "1m05s")
        self.assertEqual(progress.duration(3599), "59m59s")
        self.assertEqual(progress.duration(3720), "1h02m")
        self.assertEqual(progress.duration(-3), "0s")


class Estimate(unittest.TestCase):
    def test_none_before_any_work(self):
        self.assertIsNone(progress.estimate_left(0, 10, 30.0))

    def test_rate_of_the_part_done(self):
        # 2 of 10 units in 30 s: 15 s a unit, 8 left.
        self.assertAlmostEqual(progress.estimate_left(2, 10, 30.0), 120.0)
        self.assertAlmostEqual(progress.estimate_left(10, 10, 30.0), 0.0)
        # More done than planned: nothing left, never negative.
        self.assertEqual(progress.estimate_left(12, 10, 30.0), 0.0)


class Line(unittest.TestCase):
    def test_format(self):
        self.assertEqual(progress.line(3, 12, "jsq: sweep", 65, 130),
                         "[3/12] jsq: sweep  1m05s elapsed, about 2m10s left")
        self.assertEqual(progress.line(1, 4, "start", 2, None),
                         "[1/4] start  2s elapsed, time left not known yet")

    def test_cut_to_width(self):
        t = progress.line(1, 4, "x" * 200, 2, None, width=40)
        self.assertLessEqual(len(t), 40)


class Steps(unittest.TestCase):
    def test_a_step_counts_when_the_next_starts(self):
        clk = Clock()
        p = progress.Progress(4, stream=io.StringIO(), on=False, clock=clk)
        p.start("a")
        clk.t += 10
        self.assertIn("[1/4] a  10s elapsed, time left not known", p.text())
        p.start("b")
        clk.t += 10
        # a took 10 s; 1 of 4 done after 20 s: 60 s left.
        self.assertEqual(p.text(), "[2/4] b  20s elapsed, about 1m00s left")

    def test_units_weigh_the_estimate(self):
        clk = Clock()
        p = progress.Progress(2, stream=io.StringIO(), on=False, units=100,
                              clock=clk)
        p.start("jobs")
        clk.t += 30
        p.done(75)
        # 75 of 100 units in 30 s: 10 s left.
        self.assertTrue(p.text().endswith("about 10s left"), p.text())

    def test_off_writes_nothing(self):
        out = io.StringIO()
        p = progress.Progress(2, stream=out, on=False)
        p.start("a")
        p.clear()
        self.assertEqual(out.getvalue(), "")

    def test_enabled(self):
        self.assertFalse(progress.enabled(io.StringIO()))
        self.assertFalse(progress.enabled(sys.stdout, quiet=True))


class Relay(unittest.TestCase):
    def run_relay(self, data):
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        out = io.StringIO()
        with os.fdopen(r, "rb") as src:
            progress.relay(3, src, out, tick=0.01)
        return out.getvalue()

    def test_output_passes_and_control_lines_do_not(self):
        got = self.run_relay(b"one\n\x1eprogress first step\ntwo\nthree")
        text = got.replace(progress.CLEAR, "\n")
        self.assertIn("one\n", text)
        self.assertIn("two\n", text)
        self.assertIn("three", text)
        self.assertIn("[1/3] first step", text)
        self.assertNotIn("\x1e", got)
        # The line is cleared at the end, and before each output line.
        self.assertTrue(got.endswith(progress.CLEAR))
        self.assertIn(progress.CLEAR + "two\n", got)


if __name__ == "__main__":
    unittest.main()
