#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The summary of scripts/test.sh: from meson's test logs
(BUILD/meson-logs/testlog*.json, one JSON object per test and line), a
line per log with its passed, failed and skipped tests, each failed test
named, and the total. A log that is missing counts as one failure.

    testlog_summary.py LOG...

Exits 0; test.sh's exit status comes from the meson runs themselves. The
counting is tested by tests/python/test_testlog_summary.py.
"""
import json
import sys

PASSED = ("OK", "EXPECTEDFAIL")


def count(lines):
    """(passed, failed, skipped, [(name, result) of the failed]) of the
    JSON lines of one log."""
    p = f = s = 0
    failed = []
    for line in lines:
        t = json.loads(line)
        r = t.get("result")
        if r in PASSED:
            p += 1
        elif r == "SKIP":
            s += 1
        else:
            f += 1
            failed.append((t.get("name"), r))
    return p, f, s, failed


def log_name(path):
    """build/meson-logs/testlog-valgrind.json -> build:testlog-valgrind"""
    return path.replace("/meson-logs/", ":").replace(".json", "")


def summary(paths, opener=open):
    """The summary's lines."""
    out = []
    passed = failed = skipped = 0
    for path in paths:
        name = log_name(path)
        try:
            fh = opener(path)
        except OSError:
            out.append("%s: no results" % name)
            failed += 1
            continue
        with fh:
            p, f, s, bad = count(fh)
        for test, r in bad:
            out.append("  FAILED %s: %s (%s)" % (name, test, r))
        out.append("%s: %d passed, %d failed, %d skipped" % (name, p, f, s))
        passed += p
        failed += f
        skipped += s
    out.append("total: %d passed, %d failed, %d skipped"
               % (passed, failed, skipped))
    return out


def main(argv=None):
    for line in summary(argv if argv is not None else sys.argv[1:]):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
