# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/loadgen_plot.py (scripts/plot.sh's data): which
CSVs are drawn, the points and the lost ones, the SLO line and bars."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
import loadgen_fixture as fx  # noqa: E402
import loadgen_plot as lp  # noqa: E402


def read(path):
    with open(path) as f:
        return f.read()


class Plot(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = tempfile.TemporaryDirectory()
        self.d, self.t = self.dir.name, self.tmp.name

    def tearDown(self):
        self.dir.cleanup()
        self.tmp.cleanup()

    def test_sweeps_only_in_run_order(self):
        fx.compare_folder(self.d)
        pts = lp.point_files(lp.csv_files(self.d))
        self.assertEqual([os.path.basename(p) for p in pts],
                         ["sweep-jsq.csv", "sweep-rr.csv"])
        series, order, dists = lp.read_series(pts)
        self.assertEqual(order, ["jsq", "rr"])
        self.assertEqual(dists, {"exp:200us"})

    def test_search_points_when_no_sweep(self):
        fx.write_csv(os.path.join(self.d, "slo-jsq.csv"), fx.POINT_COLS,
                     [fx.point("", 4000, 3950, 1900000)])
        pts = lp.point_files(lp.csv_files(self.d))
        series, order, _ = lp.read_series(pts)
        # An empty policy column: the file's stem names the line.
        self.assertEqual(order, ["slo-jsq"])

    def test_points_lost_and_silent(self):
        rows = [fx.point("rr", 5000, 4100, 9000000, lost=12),
                fx.point("rr", 1000, 998, 500000),
                fx.point("rr", 6000, 0, 0, lost=500, received=0)]
        drawn, lost = lp.p99_points(rows)
        # By offered rate; the point without responses is not drawn.
        self.assertEqual(drawn, [("998.000", 500.0), ("4100.000", 9000.0)])
        self.assertEqual(lost, [("4100.000", 9000.0)])

    def test_written_scripts(self):
        fx.compare_folder(self.d)
        lp.main([self.d, self.t, "png"])
        gp = read(os.path.join(self.t, "p99.gp"))
        self.assertIn("set output '%s'" % os.path.join(self.d, "p99.png"), gp)
        self.assertIn("(service time exp:200us)", gp)
        self.assertIn("title 'jsq'", gp)
        self.assertIn("'lost requests'", gp)
        # The SLO: 2,000,000 ns = 2000 us, from the search summaries.
        self.assertIn("first 2000.000000 to graph 1", gp)
        self.assertIn("SLO: p99 <= 10x mean = 2000 us", gp)
        self.assertEqual(read(os.path.join(self.t, "lost.dat")),
                         "4100.000,9000.000000\n")
        self.assertEqual(read(os.path.join(self.t, "p0.dat")).splitlines(),
                         ["999.500,400.000000", "2990.000,900.000000",
                          "4900.000,1500.000000"])
        bars = read(os.path.join(self.t, "bars.dat")).splitlines()
        self.assertEqual(bars, ["jsq,3950.000000,3950,0.000000,none",
                                "rr,5000.000000,5000+,0.000000,none"])
        slo = read(os.path.join(self.t, "slo.gp"))
        self.assertIn("'+ met at the highest rate tried'", slo)
        self.assertIn("set xtics ('jsq' 0, 'rr' 1)", slo)

    def test_no_slo_no_bars(self):
        fx.compare_folder(self.d, with_slo=False)
        lp.main([self.d, self.t, "png"])
        self.assertFalse(os.path.exists(os.path.join(self.t, "slo.gp")))
        self.assertNotIn("SLO", read(os.path.join(self.t, "p99.gp")))

    def test_bars_beside_the_sweep(self):
        rows = [dict(fx.slo("jsq", 3950.0), sweep_max_rps="2990.000"),
                dict(fx.slo("rr", 0, found=0), sweep_max_rps="0.000")]
        bars, two = lp.slo_bars(rows)
        self.assertTrue(two)
        self.assertEqual(bars[0], ("jsq", 3950.0, "3950", 2990.0, "2990"))
        self.assertEqual(bars[1], ("rr", 0.0, "none", 0.0, "none"))

    def test_quoting(self):
        self.assertEqual(lp.gq("it's"), "'it''s'")


if __name__ == "__main__":
    unittest.main()
