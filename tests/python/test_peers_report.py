# SPDX-License-Identifier: BSD-3-Clause
"""scripts/peers_report.py: dnsperf's and memcaslap's summaries, a phase's
counters, the demo's table."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "scripts"))
import peers_report as pr  # noqa: E402

DNSPERF = """\
Statistics:

  Queries sent:         400
  Queries completed:    398 (99.50%)
  Queries lost:         2 (0.50%)

  Response codes:       NOERROR 398 (100.00%)
  Average packet size:  request 40, response 89
  Run time (s):         0.402975
  Queries per second:   496.308704

  Average Latency (s):  0.000204 (min 0.000104, max 0.002612)
  Latency StdDev (s):   0.000175
"""

MEMCASLAP = """\
cmd_get: 2000
cmd_set: 4096
get_misses: 7
written_bytes: 92820
packet_disorder: 0
packet_drop: 1
udp_timeout: 0

Run time: 0.0s Ops: 6096 TPS: 10268 Net_rate: 11.6M/s
"""


def stats(**kw):
    return {"/turbolb/stats": kw}


def cores(*rows):
    d = {str(i): {"sent": s, "completed": c, "outstanding": o}
         for i, (s, c, o) in enumerate(rows)}
    return {"/turbolb/cores": d}


class Parse(unittest.TestCase):
    def test_dnsperf(self):
        d = pr.parse_dnsperf(DNSPERF)
        self.assertEqual((d["sent"], d["completed"], d["lost"]),
                         (400, 398, 2))
        self.assertAlmostEqual(d["qps"], 496.308704)
        self.assertEqual((d["lat_avg_s"], d["lat_min_s"], d["lat_max_s"],
                          d["lat_stddev_s"]),
                         (0.000204, 0.000104, 0.002612, 0.000175))
        self.assertEqual(d["rcodes"], "NOERROR 398 (100.00%)")

    def test_dnsperf_without_summary(self):
        with self.assertRaises(ValueError):
            pr.parse_dnsperf("[Fatal] no server\n")

    def test_memcaslap(self):
        d = pr.parse_memcaslap(MEMCASLAP)
        self.assertEqual(d, {"cmd_get": 2000, "cmd_set": 4096,
                             "get_misses": 7, "packet_disorder": 0,
                             "packet_drop": 1, "udp_timeout": 0})

    def test_memcaslap_aborted(self):
        with self.assertRaises(ValueError):
            pr.parse_memcaslap("cmd_get: 5\n")


class Phase(unittest.TestCase):
    def test_deltas_and_outstanding_after(self):
        # Cores listed by id, 10 after 9 (not as strings sort).
        before = cores(*[(1, 1, 0)] * 11)
        after = cores(*([(5, 4, 1)] * 10 + [(9, 9, 0)]))
        p = pr.phase("jsq", stats(steered=10, responses=3, drops=1),
                     before,
                     stats(steered=60, responses=50, drops=1), after,
                     {"sent": 50})
        self.assertEqual((p["steered"], p["responses"], p["drops"]),
                         (50, 47, 0))
        self.assertEqual(p["core_sent"], [4] * 10 + [8])
        self.assertEqual(p["core_completed"], [3] * 10 + [8])
        self.assertEqual(p["outstanding"], [1] * 10 + [0])
        self.assertEqual(pr.field(p, "sent"), "50")  # the client's
        self.assertEqual(pr.field(p, "core_sent"), "4 " * 10 + "8")

    def test_load_phase_and_table(self):
        with tempfile.TemporaryDirectory() as d:
            for name, doc in (("stats0.json", stats(steered=0)),
                              ("stats1.json", stats(steered=400,
                                                    responses=400)),
                              ("cores0.json", cores((0, 0, 0), (0, 0, 0))),
                              ("cores1.json", cores((150, 150, 0),
                                                    (250, 250, 0)))):
                with open(os.path.join(d, name), "w") as f:
                    json.dump(doc, f)
            with open(os.path.join(d, "dnsperf.txt"), "w") as f:
                f.write(DNSPERF)
            p = pr.load_phase("rr", d)
        self.assertEqual(p["client"]["lost"], 2)
        self.assertEqual(p["core_sent"], [150, 250])
        t = pr.table([p]).splitlines()
        self.assertEqual(len(t), 2)
        self.assertTrue(t[0].startswith("policy"))
        self.assertEqual(t[1].split(),
                         ["rr", "400", "2", "496", "204", "104", "2612",
                          "175", "400", "400", "0", "150", "250"])


if __name__ == "__main__":
    unittest.main()
