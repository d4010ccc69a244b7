#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The arithmetic of scripts/feedback-share.sh: what the host's feedback
frames cost against its responses, from turbolb-server's stats JSON and
turbolb-loadgen's JSON of one run.

    feedback_share.py row HOLD_US RATE SERVER_JSON LOADGEN_JSON
        one CSV row (header with --header instead of the four arguments);
        HOLD_US "state": frames of run state and heartbeat only
        (turbolb-server --feedback state, host.credits: inband)
    feedback_share.py table RESULTS_CSV
        the Markdown table of docs/host-integration.md

Tested by tests/python/test_feedback_share.py.
"""
import csv
import json
import sys

# The hold column's value for frames that carry no completions.
STATE = "state"
COLS = ["hold_us", "rate", "responses", "frames", "frames_per_response",
        "share_pct", "p50_us", "p99_us", "lost"]


def hold_value(h):
    """A hold as given (a number of µs, or STATE), as the rows keep it."""
    return STATE if h == STATE else int(h)


def row(hold_us, rate, server, loadgen):
    """One run's numbers: frames per response, and the frames' share of
    everything the host sent the NIC (frames + responses)."""
    total = server["total"]
    frames = total["feedback"]["frames"]
    resp = total["responses_sent"]
    return {
        "hold_us": hold_value(hold_us),
        "rate": int(rate),
        "responses": resp,
        "frames": frames,
        "frames_per_response": frames / resp if resp else 0.0,
        "share_pct": 100.0 * frames / (frames + resp) if frames + resp else 0.0,
        "p50_us": loadgen["p50_ns"] / 1e3,
        "p99_us": loadgen["p99_ns"] / 1e3,
        "lost": loadgen["lost"],
    }


def csv_line(r):
    return ",".join(
        "%.4f" % r[c] if isinstance(r[c], float) else str(r[c]) for c in COLS)


def rate_label(rate):
    return "%gk" % (rate / 1000) if rate >= 1000 else str(rate)


def table(rows):
    """Markdown: one line per rate, for each hold its frames per response,
    share, and p50/p99, in the order the holds first appear."""
    holds, rates, by = [], [], {}
    for r in rows:
        h, q = hold_value(r["hold_us"]), int(r["rate"])
        if h not in holds:
            holds.append(h)
        if q not in rates:
            rates.append(q)
        by[(h, q)] = r
    rates.sort()
    head = "| req/s |"
    rule = "|---:|"
    for h in holds:
        head += " %s: frames/resp | share | p50 / p99 µs |" % (
            "state only" if h == STATE else "hold %d µs" % h)
        rule += "---:|---:|---:|"
    out = [head, rule]
    for q in rates:
        line = "| %s |" % rate_label(q)
        for h in holds:
            r = by.get((h, q))
            if r is None:
                line += " | | |"
                continue
            lost = int(r["lost"])
            line += " %.3f | %.1f%% | %.1f / %.1f%s |" % (
                float(r["frames_per_response"]), float(r["share_pct"]),
                float(r["p50_us"]), float(r["p99_us"]),
                " (%d lost)" % lost if lost else "")
        out.append(line)
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) >= 2 and argv[1] == "row":
        if argv[2:] == ["--header"]:
            print(",".join(COLS))
            return 0
        if len(argv) != 6:
            usage()
            return 2
        with open(argv[4]) as f:
            server = json.load(f)
        with open(argv[5]) as f:
            loadgen = json.load(f)
        print(csv_line(row(argv[2], argv[3], server, loadgen)))
        return 0
    if len(argv) == 3 and argv[1] == "table":
        with open(argv[2]) as f:
            sys.stdout.write(table(list(csv.DictReader(f))))
        return 0
    usage()
    return 2


def usage():
    sys.stderr.write(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
