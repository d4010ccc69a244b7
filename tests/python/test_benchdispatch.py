# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/benchdispatch.py (scripts/bench-dispatch.sh's
arithmetic and tables): testpmd's rates from its log, the pairs' ratios,
instructions per packet from callgrind dumps, the rows and the tables."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import benchdispatch as bd  # noqa: E402


def nic(port, pps):
    return ("  ######### NIC statistics for port %d  #########\n"
            "  RX-packets: 1   RX-missed: 0\n"
            "  Throughput (since last show)\n"
            "  Rx-pps: %12d          Rx-bps:            0\n" % (port, pps))


def testpmd_log(first, last, forwarded):
    return (nic(0, first[0]) + nic(1, first[1]) + nic(0, last[0]) +
            nic(1, last[1]) +
            "  ---- Forward statistics for port 0 ----\n"
            "  RX-packets: 7 RX-dropped: 0\n"
            "  +++++ Accumulated forward statistics for all ports+++++\n"
            "  RX-packets: %d       RX-dropped: 0\n" % forwarded)


def result(label, kind, policy, mode, cpu, wall=None, topology="direct"):
    return {"label": label, "kind": kind, "policy": policy, "mode": mode,
            "cores": 16, "dispatchers": 1, "topology": topology,
            "median_mpps": wall if wall is not None else cpu,
            "median_cpu_mpps": cpu, "packets": 1000}


class Testpmd(unittest.TestCase):
    def test_rates(self):
        text = testpmd_log((0, 0), (27000000, 26000000), 60000000)
        r = bd.testpmd_result(text, "macswap", "ring", "2", "300", "100")
        # wall: the last show's two ports; CPU: 60 M packets in 3 s.
        self.assertAlmostEqual(r["mpps"], 53.0)
        self.assertAlmostEqual(r["cpu_mpps"], 20.0)
        self.assertEqual(r["cpu_s"], 3.0)
        self.assertEqual((r["rep"], r["mode"], r["ports"]),
                         (2, "macswap", "ring"))

    def test_unusable(self):
        text = testpmd_log((0, 0), (1, 1), 5)
        r = bd.testpmd_result(text, "io", "null", "1", "10", "100")
        self.assertEqual(r["error"], "no usable statistics (cpu 0.10 s)")
        self.assertNotIn("mpps", r)
        r = bd.testpmd_result(nic(0, 5) * 3, "io", "null", "1", "100", "100")
        self.assertIn("error", r)


class Pairs(unittest.TestCase):
    def test_lines_count_responses(self):
        tb = {"results": [result("x", "turbolbd", "jsq", "request", 40.0),
                          result("y", "turbolbd", "jsq", "reqresp", 15.0)]}
        lines = bd.pair_lines(tb, {"cpu_mpps": 60.0}, 3)
        self.assertEqual(lines[0]["cpu_mpps"], 40.0)
        self.assertEqual(lines[1]["cpu_mpps"], 30.0)
        self.assertEqual(lines[1]["testpmd_cpu_mpps"], 60.0)
        self.assertEqual(lines[1]["rep"], 3)

    def test_summary_is_the_median_of_each_pairs_ratio(self):
        pairs = [
            {"policy": "jsq", "mode": "request", "cpu_mpps": 30.0,
             "testpmd_cpu_mpps": 60.0},
            {"policy": "jsq", "mode": "request", "cpu_mpps": 40.0,
             "testpmd_cpu_mpps": 50.0},
            {"policy": "jsq", "mode": "request", "cpu_mpps": 35.0,
             "testpmd_cpu_mpps": 100.0},
            # a pair whose testpmd half failed: left out
            {"policy": "jsq", "mode": "request", "cpu_mpps": 10.0,
             "testpmd_cpu_mpps": None},
            {"policy": "rr", "cpu_mpps": 20.0, "testpmd_cpu_mpps": 40.0},
        ]
        s = bd.pairs_summary(pairs)
        # The median of 0.5, 0.8 and 0.35; the ratio of the medians would
        # be 35 / 60.
        self.assertEqual(s["jsq/request"], {"median_ratio": 0.5,
                                            "min_ratio": 0.35,
                                            "max_ratio": 0.8, "pairs": 3})
        # no mode: request
        self.assertEqual(s["rr/request"]["median_ratio"], 0.5)


class Callgrind(unittest.TestCase):
    def test_ir_per_packet(self):
        metas = {"main": {"results": [{"label": "c16d1/request/jsq",
                                       "packets": 1000},
                                      {"label": "c16d1/request/rr",
                                       "packets": 0}]}}
        dumps = {"main": [
            "desc: x\nClient Request: c16d1/request/jsq\nsummary: 250000\n",
            # no packets: no figure
            "Client Request: c16d1/request/rr\nsummary: 5\n",
            # a window that is not in the run's JSON
            "Client Request: c2d1/request/jsq\nsummary: 5\n"]}
        self.assertEqual(bd.callgrind_ir(metas, dumps),
                         {"c16d1/request/jsq": 250.0})

    def test_rows_and_ratios(self):
        main = {"results": [
            result("c16d1/request/macswap", "macswap", None, "request", 80.0),
            result("c16d1/request/jsq", "turbolbd", "jsq", "request", 40.0,
                   wall=30.0)]}
        cg = {"c16d1/request/jsq": 250.0, "c64d1ring/request/jbsq": 400.0,
              "c64d1/request/jbsq": 300.0}
        rows = bd.result_rows(main, None, cg, {"mpps": 60.0,
                                               "cpu_mpps": 50.0})
        by = {r["label"]: r for r in rows}
        self.assertEqual(by["c16d1/request/jsq"]["ir_per_pkt"], 250.0)
        self.assertEqual(by["c16d1/request/jsq"]["ratio_testpmd_macswap_cpu"],
                         0.8)
        self.assertEqual(
            by["c16d1/request/jsq"]["ratio_testpmd_macswap_wall"], 0.5)
        self.assertNotIn("ratio_testpmd_macswap_cpu",
                         by["c16d1/request/macswap"])
        ring = by["c64d1ring/request/jbsq"]
        self.assertEqual((ring["run"], ring["kind"], ring["policy"],
                          ring["cores"], ring["topology"]),
                         ("callgrind", "turbolbd", "jbsq", 64, "direct"))
        self.assertIsNone(ring["ratio_testpmd_macswap_cpu"])

        tp = [{"mode": "macswap", "ports": "ring", "rep": 1, "mpps": 60.0,
               "cpu_mpps": 50.0}]
        mach = {"cpus": 2, "cpu_model": "cpu", "loadavg": ["1", "2", "3"],
                "dpdk": "22.11"}
        lines = bd.tables(mach, tp, main, cg, {}, [], None,
                          {"mpps": 60.0, "cpu_mpps": 50.0})
        text = "\n".join(lines)
        self.assertIn("machine: 2 CPUs (cpu), load average 1 2 3, DPDK 22.11, "
                      "4 KiB pages (--no-huge);", text)
        huge = bd.tables(mach, tp, dict(main, hugepages=True), cg, {}, [],
                         None, {"mpps": 60.0, "cpu_mpps": 50.0})
        self.assertIn("DPDK 22.11, hugepages;", huge[0])
        jsq = next(x for x in lines if x.startswith("turbolbd jsq request"))
        # Mpps, Mpps/CPU, Ir/pkt, over testpmd, over the bench's macswap
        self.assertEqual(jsq.split()[3:], ["30.00", "40.00", "250", "0.800",
                                           "0.500"])
        self.assertIn("c64d1ring/request/jbsq" + " " * 12 + "400   in-band 300",
                      text)
        grid = next(x for x in lines if x.startswith("jsq "))
        self.assertEqual(grid.split(), ["jsq", "-", "-", "250", "-", "-",
                                        "-", "-", "-"])


class Latency(unittest.TestCase):
    ROW = {"policy": "jsq", "mode": "reqresp", "tx_hold_ns": 1000,
           "load_fraction": 0.9, "residence_p50_ns": 1200,
           "residence_p99_ns": 3000, "residence_p999_ns": 9000,
           "residence_max_ns": 40000, "polls_waited_max": 5,
           "preempted": 2, "samples": 1000}

    def test_row_with_drops(self):
        row = bd.latency_row(dict(self.ROW, nic_drop_share=0.0123,
                                  poll_ns=512.4, requests_per_poll=7.26))
        self.assertEqual(row.split(), [
            "jsq", "reqresp", "1000", "0.90", "1200", "3000", "9000",
            "40000", "5", "0.200%", "1.23%", "512", "7.3"])

    def test_row_of_an_older_result(self):
        self.assertEqual(bd.latency_row(self.ROW).split()[-3:],
                         ["0.00%", "-", "-"])


class Files(unittest.TestCase):
    def test_results_folder(self):
        with tempfile.TemporaryDirectory() as work, \
                tempfile.TemporaryDirectory() as out:
            with open(os.path.join(work, "main.json"), "w") as f:
                json.dump({"tool": "turbolb-bench", "results": [
                    result("c16d1/request/jsq", "turbolbd", "jsq", "request",
                           40.0)]}, f)
            with open(os.path.join(work, "testpmd.jsonl"), "w") as f:
                f.write(json.dumps({"kind": "testpmd", "mode": "macswap",
                                    "ports": "ring", "rep": 1, "mpps": 60.0,
                                    "cpu_mpps": 50.0}) + "\n\n")
            open(os.path.join(work, "pairs.jsonl"), "w").close()
            lines = bd.results(work, out, work)
            with open(os.path.join(out, "bench-dispatch.csv")) as f:
                csv = f.read().splitlines()
            with open(os.path.join(out, "bench-dispatch.json")) as f:
                doc = json.load(f)
            latency = os.path.exists(os.path.join(out, "bench-latency.json"))
        self.assertEqual(csv[0], ",".join(bd.CSV_COLS))
        self.assertEqual(csv[1], "c16d1/request/jsq,main,turbolbd,jsq,request,"
                         "16,1,direct,40.0,40.0,,0.8")
        self.assertEqual(csv[2], "testpmd/ring/macswap/1,testpmd,testpmd,,"
                         "macswap,,,ring,60.0,50.0,,")
        self.assertEqual(doc["bench"], {"tool": "turbolb-bench"})
        self.assertEqual(doc["testpmd_median"]["macswap/ring"],
                         {"mpps": 60.0, "cpu_mpps": 50.0})
        self.assertFalse(latency)
        self.assertTrue(lines[-1].startswith("\nwritten: "))


if __name__ == "__main__":
    unittest.main()
