# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of tests/fuzz/pcap/replay_check.py (test_pcap_replay.sh's
verdicts): the per-reason accounting of the replayed frames and the
frame counts of the output pcaps."""

import io
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fuzz",
                                "pcap"))
import replay_check as rc  # noqa: E402


def stats(**kw):
    s = {"rx_uplink": 4, "drops": 2, "drop_parse_short": 1,
         "drop_bad_direction": 1, "steered": 1, "pass_up": 1,
         "messages": 1, "affinity_hits": 0}
    s.update(kw)
    return s


EXP = {"frames": 4, "counters": {"drop_parse_short": 1,
                                 "drop_bad_direction": 1, "steered": 1,
                                 "pass_up": 1}}


class Counters(unittest.TestCase):
    def test_every_frame_once(self):
        ok, out, err = rc.counters(EXP, stats())
        self.assertTrue(ok, err)
        self.assertEqual(err, [])
        self.assertEqual(out[0], "    %-28s %d" % ("drop_bad_direction", 1))
        self.assertEqual(len(out), 4)

    def test_wrong_reason(self):
        # The frame expected as too short is counted under another reason:
        # both counters are off, the total still adds up.
        ok, _, err = rc.counters(EXP, stats(drop_parse_short=0,
                                            drop_parse_magic=1))
        self.assertFalse(ok)
        self.assertEqual(len(err), 2)
        self.assertIn("drop_parse_magic", err[0])

    def test_drops_total_is_no_reason(self):
        # "drops" is their sum, not a reason.
        ok, _, err = rc.counters(EXP, stats(drops=99))
        self.assertTrue(ok, err)

    def test_counted_twice(self):
        exp = dict(EXP, frames=3)
        ok, _, err = rc.counters(exp, stats(rx_uplink=3))
        self.assertFalse(ok)
        self.assertEqual(err, ["    3 frames, 3 received, 4 counted"])

    def test_missing_counter(self):
        s = stats()
        del s["pass_up"]
        ok, _, err = rc.counters(EXP, s)
        self.assertFalse(ok)
        self.assertIn("expected 1, daemon None", err[0])

    def test_steered_not_accounted(self):
        ok, _, err = rc.counters(EXP, stats(messages=0))
        self.assertFalse(ok)
        self.assertEqual(err,
                         ["    messages 0 + affinity_hits 0 != steered 1"])


def pcap(*lengths):
    b = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
    for n in lengths:
        b += struct.pack("<IIII", 0, 0, n, n) + bytes(n)
    return io.BytesIO(b)


class Outputs(unittest.TestCase):
    def test_pcap_frames(self):
        self.assertEqual(rc.pcap_frames(pcap()), 0)
        self.assertEqual(rc.pcap_frames(pcap(60, 1514, 64)), 3)

    def test_outputs(self):
        ok, line = rc.outputs(stats(), 1, 1)
        self.assertTrue(ok)
        self.assertEqual(line, "    host.pcap 1 frames (steered 1), "
                         "slowpath.pcap 1 (pass_up 1)")
        self.assertFalse(rc.outputs(stats(), 1, 0)[0])
        self.assertFalse(rc.outputs(stats(), 2, 1)[0])


if __name__ == "__main__":
    unittest.main()
