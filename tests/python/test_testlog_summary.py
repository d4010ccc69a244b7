# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/testlog_summary.py (scripts/test.sh's summary)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "scripts"))
import testlog_summary as ts  # noqa: E402


def log_lines(*results):
    return [json.dumps({"name": n, "result": r}) + "\n" for n, r in results]


class Summary(unittest.TestCase):
    def test_count(self):
        p, f, s, bad = ts.count(log_lines(
            ("a", "OK"), ("b", "EXPECTEDFAIL"), ("c", "SKIP"),
            ("d", "FAIL"), ("e", "TIMEOUT"), ("f", "UNEXPECTEDPASS")))
        self.assertEqual((p, f, s), (2, 3, 1))
        self.assertEqual(bad, [("d", "FAIL"), ("e", "TIMEOUT"),
                               ("f", "UNEXPECTEDPASS")])

    def test_logs_and_total(self):
        with tempfile.TemporaryDirectory() as d:
            logs = os.path.join(d, "build", "meson-logs")
            os.makedirs(logs)
            one = os.path.join(logs, "testlog.json")
            with open(one, "w") as f:
                f.writelines(log_lines(("proto", "OK"), ("kick", "FAIL"),
                                       ("memif", "SKIP")))
            missing = os.path.join(logs, "testlog-valgrind.json")
            lines = ts.summary([one, missing])
        name = os.path.join(d, "build") + ":testlog"
        self.assertEqual(lines, [
            "  FAILED %s: kick (FAIL)" % name,
            "%s: 1 passed, 1 failed, 1 skipped" % name,
            "%s:testlog-valgrind: no results" % os.path.join(d, "build"),
            # the missing log counts as a failure
            "total: 1 passed, 2 failed, 1 skipped"])

    def test_log_name(self):
        self.assertEqual(ts.log_name("build-asan/meson-logs/testlog-dp.json"),
                         "build-asan:testlog-dp")


if __name__ == "__main__":
    unittest.main()
