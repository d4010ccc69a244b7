# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/simreport.py: the job plan, the runner's cache
and CPU accounting, and the computations behind the page's tables."""

import io
import math
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import progress  # noqa: E402
import simreport as sr  # noqa: E402

FIG = sr.DaemonFigures(34, 47, 1000, 512)


def slo_line(mult, load, tput):
    return {"slo_multiple": mult, "max_load": load,
            "max_throughput_mrps": tput}


class FakePlan:
    """Just the maps the table functions read."""

    def __init__(self):
        self.grid = {}
        self.dmn = {}
        self.part = {}


def fake_grid(tput):
    """A Grid whose every cell's max throughput is tput(cores, share,
    long, config, multiple)."""
    plan = FakePlan()
    res = {}
    for c in sr.GRID_CORES:
        for lg in sr.LONGS_US:
            for s in sr.SHARES:
                for k in sr.GRID_POLICIES + sr.BASELINES:
                    i = "%d-%g-%d-%s" % (c, s, lg, k)
                    plan.grid[(c, s, lg, k)] = i
                    res[i] = [slo_line(m, tput(c, s, lg, k, m) / c,
                                       tput(c, s, lg, k, m))
                              for m in sr.SLOS]
    return sr.Grid(plan, res)


class TestSpecs(unittest.TestCase):
    def test_mix_spec(self):
        self.assertEqual(sr.mix_spec(0.005, 100), "bimodal:0.995:1us:100us")
        self.assertEqual(sr.mix_spec(0.5, 2), "bimodal:0.5:1us:2us")
        self.assertEqual(sr.mix_spec(0.01, 10), "bimodal:0.99:1us:10us")
        self.assertAlmostEqual(sr.mix_mean_ns(0.005, 100), 1495.0)

    def test_requests_per_core(self):
        self.assertEqual(sr.requests_for(1000, 8), 1000)
        self.assertEqual(sr.requests_for(1000, 16), 1000)
        self.assertEqual(sr.requests_for(1000, 64), 4000)

    def test_baselines(self):
        self.assertEqual(sr.baseline_args("rss/1024", 16), ("rss", 1024))
        self.assertEqual(sr.baseline_args("random", 64), ("random", 64))
        # one client thread per core
        self.assertEqual(sr.baseline_args("fixed", 64), ("fixed", 64))
        self.assertEqual(sr.baseline_args("fixed", 16), ("fixed", 16))
        cmd = sr.cell_command(64, 0.005, 100, "fixed", 1000)
        self.assertIn("--policy fixed", cmd)
        self.assertIn("--flows 64", cmd)
        self.assertIn("--requests 4000", cmd)
        cmd = sr.cell_command(16, 0.005, 100, "fixed", 1000)
        self.assertIn("--flows 16", cmd)
        self.assertIn("--dist bimodal:0.995:1us:100us", cmd)

    def test_layouts(self):
        lays = sr.part_layouts()
        self.assertEqual(sr.layout_args(lays[0]), ())
        shared = [x for x in lays if x[1] == "shared"]
        self.assertTrue(shared)
        a = sr.layout_args(shared[0])
        self.assertEqual(a[:2], ("--dispatchers", shared[0][0]))
        self.assertIn("--view-sync-ns", a)
        few = [x for x in lays if x[2] == "rss" and x[3] == 16]
        self.assertEqual(len(few), len(sr.PART_D))


class TestPlan(unittest.TestCase):
    def test_same_arguments_run_once(self):
        j = sr.Jobs()
        a = j.add(["--cores", 16, "--policy", "jsq"])
        b = j.add(["--cores", "16", "--policy", "jsq"])
        c = j.add(["--cores", 16, "--policy", "jlq"])
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)
        self.assertEqual(j.order, [a, c])

    def test_sections_share_runs(self):
        p = sr.Plan(1000, FIG)
        # The daemon section's ideal cell is the grid's own run.
        self.assertEqual(p.dmn[("bimodal:0.995:1us:100us", 16, "jlq",
                                "ideal")],
                         p.grid[(16, 0.005, 100, "jlq")])
        # D = 1 of the partition section is the ideal too.
        self.assertEqual(p.part[("bimodal:0.995:1us:100us", 64, "jlq",
                                 sr.part_layouts()[0])],
                         p.grid[(64, 0.005, 100, "jlq")])
        n_grid = (len(sr.GRID_CORES) * len(sr.LONGS_US) * len(sr.SHARES) *
                  (len(sr.GRID_POLICIES) + len(sr.BASELINES)))
        self.assertEqual(len(set(p.grid.values())), n_grid)

    def test_daemon_scenarios_add_costs(self):
        p = sr.Plan(1000, FIG)
        self.assertEqual(p.daemon_extra(16, "ideal"), ())
        self.assertEqual(p.daemon_extra(64, "dispatch"),
                         ("--dispatch-ns", 47))
        inb = p.daemon_extra(16, "inband")
        ring = p.daemon_extra(16, "ring")
        self.assertEqual(inb[inb.index("--feedback-ns") + 1], 1000)
        self.assertEqual(ring[ring.index("--feedback-ns") + 1], 512)
        self.assertEqual(inb[inb.index("--delivery-ns") + 1], 1000)


class TestTables(unittest.TestCase):
    def test_ratio_and_format(self):
        self.assertEqual(sr.ratio(6.0, 2.0), 3.0)
        self.assertEqual(sr.ratio(1.0, 0.0), float("inf"))
        self.assertTrue(math.isnan(sr.ratio(0.0, 0.0)))
        self.assertEqual(sr.fr(float("inf")), "inf")
        self.assertEqual(sr.fr(float("nan")), "n/a")
        self.assertEqual(sr.fr(2.345, 1), "2.3")
        self.assertEqual(sr.pct(0.974), "97%")

    def test_slo_of(self):
        lines = [slo_line(10.0, 0.5, 8.0), slo_line(30.0, 0.9, 14.0)]
        self.assertEqual(sr.slo_of(lines, 30.0)["max_load"], 0.9)
        with self.assertRaises(KeyError):
            sr.slo_of(lines[:1], 30.0)

    def test_best_picks_the_highest_dynamic_policy(self):
        def tput(c, s, lg, k, m):
            return {"jsq": 10.0, "jlq": 12.0, "jbsq:1": 11.0,
                    "jbsq:2": 9.0, "cfcfs": 20.0}.get(k, 2.0)
        g = fake_grid(tput)
        x, p = g.best(16, 0.005, 100, "rss/64", 10.0)
        # cfcfs is the ideal, never the "best policy"
        self.assertEqual((x, p), (6.0, "jlq"))

    def test_paper_cells(self):
        def tput(c, s, lg, k, m):
            if k in sr.GRID_DYNAMIC:
                return 10.0
            if (c, s, lg, k, m) == (16, 0.005, 100, "rss/64", 10.0):
                return 0.1    # 100x: the paper's 95x
            if (c, s, lg, k, m) == (64, 0.05, 50, "random", 10.0):
                return 0.125  # 80x: 84% of 95x, counts
            if (c, s, lg, k, m) == (64, 0.1, 10, "random", 10.0):
                return 0.14   # 71x: 75%, does not
            if k == "fixed" and m == 10.0 and lg == 2:
                return 0.0    # misses at every load: inf
            return 5.0
        g = fake_grid(tput)
        cells = sr.paper_cells(g, 10.0, 95.0)
        self.assertEqual(cells[0][0], float("inf"))
        finite = [x for x in cells if x[0] != float("inf")]
        self.assertEqual([(x[1], x[2], x[3], x[4]) for x in finite],
                         [(16, 0.005, 100, "rss/64"),
                          (64, 0.05, 50, "random")])
        self.assertAlmostEqual(finite[0][0], 100.0)
        self.assertEqual(len(cells) - len(finite),
                         len(sr.GRID_CORES) * len(sr.SHARES))
        # 30x: everything is 2x, nothing near 5x
        self.assertEqual(sr.paper_cells(g, 30.0, 5.0), [])
        x, s, lg, p = sr.max_over(g, 10.0, 16, "rss/64")
        self.assertEqual((x, s, lg), (100.0, 0.005, 100))
        # the boundary share and inf are never the maximum
        self.assertEqual(sr.max_over(g, 10.0, 64, "fixed")[:3],
                         (2.0, 0.005, 10))
        lo, hi = sr.bracket(g, 10.0, 95.0)
        self.assertAlmostEqual(lo[0], 80.0)
        self.assertEqual(lo[1:], (64, 0.05, 50, "random"))
        self.assertAlmostEqual(hi[0], 100.0)
        self.assertEqual(hi[1:], (16, 0.005, 100, "rss/64"))

    def test_joint(self):
        def tput(c, s, lg, k, m):
            if k in sr.GRID_DYNAMIC:
                return 10.0
            if (c, s, lg, k) == (16, 0.005, 100, "rss/64"):
                return 0.1 if m == 10.0 else 0.5    # 100x and 20x
            if (c, s, lg, k) == (64, 0.01, 100, "random"):
                return 0.0                          # inf: left out
            return 5.0
        cells = sr.joint(fake_grid(tput))
        self.assertEqual(len(cells), 1)
        self.assertAlmostEqual(cells[0][0], 100.0)
        self.assertAlmostEqual(cells[0][1], 20.0)
        self.assertEqual(cells[0][2:], (16, 0.005, 100, "rss/64"))

    def test_kept_and_partition_cost(self):
        self.assertAlmostEqual(sr.kept(7.5, 10.0), 0.75)
        self.assertAlmostEqual(sr.partition_cost(10.0, 8.0), 0.2)
        self.assertAlmostEqual(sr.partition_cost(10.0, 11.0), -0.1)
        self.assertTrue(math.isnan(sr.partition_cost(0.0, 0.0)))

    def test_part_summary(self):
        lays = sr.part_layouts()
        rows = [("m", 16, "jlq", lays[0], 0.9, 0.0),
                ("m", 16, "jlq", lays[1], 0.8, 0.1),
                ("m", 64, "jlq", lays[1], 0.7, 0.3),
                ("m", 64, "jsq", lays[1], 0.7, 0.2),
                ("m", 64, "jsq", lays[2], 0.0, float("nan"))]
        summ = sr.part_summary(rows)
        self.assertEqual(set(summ), {lays[1]})  # D = 1 and n/a left out
        self.assertEqual(summ[lays[1]], (0.1, 0.2, 0.3))

    def test_daemon_table(self):
        plan = FakePlan()
        res = {}
        ideal = {"jsq": 10.0, "jlq": 10.0, "jbsq:1": 10.0, "jbsq:2": 10.0}
        for d in sr.KEY_MIXES:
            for c in sr.GRID_CORES:
                for p in ("cfcfs", "rss"):
                    i = "%s-%d-%s" % (d, c, p)
                    plan.dmn[(d, c, p, "ideal")] = i
                    res[i] = [slo_line(m, 0.5, 12.5 if p == "cfcfs" else 2.0)
                              for m in sr.SLOS]
                for p in sr.DAEMON_POLICIES:
                    for k, sc in enumerate(sr.DAEMON_SCENARIOS):
                        i = "%s-%d-%s-%s" % (d, c, p, sc)
                        plan.dmn[(d, c, p, sc)] = i
                        t = ideal[p] - k  # each cost takes 1 Mrps
                        res[i] = [slo_line(m, t / 20.0, t) for m in sr.SLOS]
        rows = sr.daemon_table(plan, res, 10.0)
        self.assertEqual(len(rows), len(sr.KEY_MIXES) * len(sr.GRID_CORES) *
                         len(sr.DAEMON_POLICIES))
        d, c, p, loads, kr, ki, xc, xr = rows[0]
        self.assertEqual(len(loads), len(sr.DAEMON_SCENARIOS))
        self.assertAlmostEqual(kr, 7.0 / 10.0)   # ring: 3 costs
        self.assertAlmostEqual(ki, 6.0 / 10.0)   # in-band: 4 costs
        self.assertAlmostEqual(xc, 6.0 / 12.5)
        self.assertAlmostEqual(xr, 3.0)


class TestKept(unittest.TestCase):
    def test_kept_by_policy(self):
        rows = [("a", 16, "jlq", [0.9, 0.9], 0.95, 0.9, 1, 1),
                ("b", 16, "jlq", [0.5, 0.5], 0.99, 0.8, 1, 1),
                ("c", 16, "jlq", [0.0, 0.0], float("nan"), float("nan"),
                 1, 1),  # the ideal misses the SLO: left out
                ("a", 64, "jsq", [0.9, 0.3], 0.3, 0.2, 1, 1)]
        kb = sr.kept_by_policy(rows)
        self.assertEqual(kb[("jlq", 16)], ((0.95, 0.99), (0.8, 0.9)))
        self.assertEqual(kb[("jsq", 64)], ((0.3, 0.3), (0.2, 0.2)))
        self.assertEqual(len(kb), 2)


class TestRunner(unittest.TestCase):
    def test_runs_once_and_counts_cpu(self):
        with tempfile.TemporaryDirectory() as tmp:
            calls = os.path.join(tmp, "calls")
            sim = os.path.join(tmp, "sim")
            with open(sim, "w") as f:
                f.write("#!/bin/sh\necho x >>%s\n"
                        "echo '{\"slo_multiple\":10,\"max_load\":0.5}'\n"
                        % calls)
            os.chmod(sim, os.stat(sim).st_mode | stat.S_IXUSR)

            class P:
                jobs = sr.Jobs()
            for k in range(5):
                P.jobs.add(["--requests", 10, "--n", k, "--slo-multiple",
                            10])
            log = open(os.devnull, "w")
            sr.run_jobs(sim, P, tmp, 2, log=log)
            res, cpu = sr.load_results(P, tmp)
            self.assertEqual(len(res), 5)
            self.assertEqual(res[P.jobs.order[0]][0]["max_load"], 0.5)
            self.assertGreaterEqual(cpu, 0.0)
            sr.run_jobs(sim, P, tmp, 2, log=log)  # all kept: none rerun
            log.close()
            with open(calls) as f:
                self.assertEqual(len(f.readlines()), 5)

    def test_progress_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            sim = os.path.join(tmp, "sim")
            with open(sim, "w") as f:
                f.write("#!/bin/sh\necho '{}'\n")
            os.chmod(sim, os.stat(sim).st_mode | stat.S_IXUSR)

            class P:
                jobs = sr.Jobs()
            for k in range(3):
                P.jobs.add(["--requests", 10 * (k + 1), "--n", k])
            log = io.StringIO()
            sr.run_jobs(sim, P, tmp, 1, log=log, show=True)
            text = log.getvalue()
            self.assertIn("[1/3] simulator runs", text)
            self.assertIn("[3/3] simulator runs", text)
            # the largest job (30 of 60 requests) runs first: when it is
            # done, half the work is
            self.assertRegex(text, r"\[2/3\] simulator runs  \d+s elapsed, "
                             r"about \d+s left")
            self.assertTrue(text.endswith(progress.CLEAR))

    def test_a_failed_run_stops_the_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            sim = os.path.join(tmp, "sim")
            with open(sim, "w") as f:
                f.write("#!/bin/sh\nexit 1\n")
            os.chmod(sim, os.stat(sim).st_mode | stat.S_IXUSR)

            class P:
                jobs = sr.Jobs()
            P.jobs.add(["--requests", 10])
            with open(os.devnull, "w") as log:
                with self.assertRaises(RuntimeError):
                    sr.run_jobs(sim, P, tmp, 1, log=log)
            self.assertFalse(os.path.exists(
                os.path.join(tmp, P.jobs.order[0] + ".jsonl")))


if __name__ == "__main__":
    unittest.main()
