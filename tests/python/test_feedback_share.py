# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/feedback_share.py (scripts/feedback-share.sh's
arithmetic): frames per response, their share of the host's frames, and
the table."""

import csv
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import feedback_share as fs  # noqa: E402


def server(frames, responses):
    return {"total": {"responses_sent": responses,
                      "feedback": {"frames": frames, "tx_drops": 0,
                                   "no_mbuf": 0}}}


def loadgen(p50_ns=5000, p99_ns=20000, lost=0):
    return {"p50_ns": p50_ns, "p99_ns": p99_ns, "lost": lost}


class Row(unittest.TestCase):
    def test_share(self):
        r = fs.row("50", "2000", server(100, 300), loadgen())
        self.assertEqual(r["hold_us"], 50)
        self.assertEqual(r["rate"], 2000)
        self.assertAlmostEqual(r["frames_per_response"], 1 / 3)
        # 100 of the 400 frames the host sent
        self.assertAlmostEqual(r["share_pct"], 25.0)
        self.assertAlmostEqual(r["p50_us"], 5.0)
        self.assertAlmostEqual(r["p99_us"], 20.0)

    def test_state_only(self):
        r = fs.row("state", "2000", server(10, 990), loadgen())
        self.assertEqual(r["hold_us"], "state")
        self.assertAlmostEqual(r["share_pct"], 1.0)

    def test_nothing_sent(self):
        r = fs.row(0, 2000, server(0, 0), loadgen())
        self.assertEqual(r["frames_per_response"], 0.0)
        self.assertEqual(r["share_pct"], 0.0)


class Table(unittest.TestCase):
    def rows(self):
        out = []
        for h, q, fr, lost in ((0, 10000, 880, 0), (50, 10000, 400, 0),
                               (0, 2000, 890, 0), (50, 2000, 700, 3)):
            line = fs.csv_line(fs.row(h, q, server(fr, 1000),
                                      loadgen(lost=lost)))
            out.append(dict(zip(fs.COLS, line.split(","))))
        return out

    def test_table(self):
        t = fs.table(self.rows()).splitlines()
        self.assertEqual(len(t), 4)
        self.assertIn("hold 0 µs", t[0])
        self.assertLess(t[0].index("hold 0 µs"), t[0].index("hold 50 µs"))
        # rates ascending, each hold's cells in order
        self.assertTrue(t[2].startswith("| 2k | 0.890 | 47.1% |"))
        self.assertIn("0.700 | 41.2% | 5.0 / 20.0 (3 lost) |", t[2])
        self.assertTrue(t[3].startswith("| 10k | 0.880 | 46.8% |"))

    def test_table_state_only(self):
        rows = []
        for h, fr in (("50", 400), ("state", 10)):
            line = fs.csv_line(fs.row(h, 2000, server(fr, 1000), loadgen()))
            rows.append(dict(zip(fs.COLS, line.split(","))))
        t = fs.table(rows).splitlines()
        self.assertIn("hold 50 µs", t[0])
        self.assertIn("state only", t[0])
        self.assertTrue(t[2].endswith("| 0.010 | 1.0% | 5.0 / 20.0 |"))

    def test_main_round_trip(self):
        with tempfile.TemporaryDirectory() as d:
            sj, lj = os.path.join(d, "s.json"), os.path.join(d, "l.json")
            with open(sj, "w") as f:
                json.dump(server(16, 256), f)
            with open(lj, "w") as f:
                json.dump(loadgen(), f)
            buf = io.StringIO()
            with redirect_stdout(buf):
                self.assertEqual(fs.main(["x", "row", "--header"]), 0)
                self.assertEqual(fs.main(["x", "row", "20", "50000", sj,
                                          lj]), 0)
            rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
            self.assertEqual(rows[0]["frames"], "16")
            self.assertEqual(rows[0]["frames_per_response"], "0.0625")


if __name__ == "__main__":
    unittest.main()
