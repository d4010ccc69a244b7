# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of tests/cli/cores_pages.py (test_cores_many.sh's telemetry
peers): the page walk's checks, and the fake server's answers."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
import cores_pages as cp  # noqa: E402


def server(pages):
    """ask() over a dict of request -> page."""
    return lambda req: json.dumps({cp.CMD: pages[req]}).encode()


class Follow(unittest.TestCase):
    def test_every_core_once(self):
        ask = server({cp.CMD: {"0": {}, "1": {}, "next": 2},
                      cp.CMD + ",2": {"2": {}}})
        pages, longest = cp.follow(ask, 3, 1000)
        self.assertEqual(pages, 2)
        self.assertEqual(longest, len(ask(cp.CMD)))

    def test_over_budget(self):
        ask = server({cp.CMD: {"0": {"pad": "x" * 100}}})
        with self.assertRaises(AssertionError):
            cp.follow(ask, 1, 50)

    def test_next_that_skips(self):
        ask = server({cp.CMD: {"0": {}, "next": 2},
                      cp.CMD + ",2": {"2": {}}})
        with self.assertRaisesRegex(AssertionError, "^2$"):
            cp.follow(ask, 3, 1000)

    def test_missing_cores(self):
        ask = server({cp.CMD: {"0": {}, "1": {}}})
        with self.assertRaises(AssertionError):
            cp.follow(ask, 3, 1000)

    def test_next_that_loops_ends(self):
        ask = server({cp.CMD: {"0": {}, "next": 1},
                      cp.CMD + ",1": {"1": {}, "next": 2},
                      cp.CMD + ",2": {"next": 2}})
        with self.assertRaises(AssertionError):
            cp.follow(ask, 3, 1000)


class Fake(unittest.TestCase):
    def test_answers(self):
        first = cp.FAKE_PAGES[0]
        self.assertEqual(list(cp.answer(first, cp.CMD + ",7")), [cp.CMD])
        self.assertEqual(cp.answer(first, cp.CMD + ",7")[cp.CMD]["next"], 9)
        # An unknown request: null, as DPDK answers a refused one.
        self.assertEqual(cp.answer(first, cp.CMD + ",8"), {cp.CMD: None})

    def test_first_connection_walks_to_the_end(self):
        # Cores 0, 1, 2, 7, 9, 10: not 0..n-1, so follow() refuses it,
        # but every page is reached and the last has no next.
        seen, req = [], cp.CMD
        while True:
            page = cp.answer(cp.FAKE_PAGES[0], req)[cp.CMD]
            seen += [k for k in page if k != "next"]
            if "next" not in page:
                break
            req = "%s,%d" % (cp.CMD, page["next"])
        self.assertEqual(seen, ["0", "1", "2", "7", "9", "10"])


if __name__ == "__main__":
    unittest.main()
