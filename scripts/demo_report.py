# SPDX-License-Identifier: BSD-3-Clause
"""The tables of scripts/demo.sh, from the files its runs leave.

    demo_report.py table RUN_DIR --policies "rss jsq" --rounds N
                         [--light-runs M]
        the path rows, one row per policy and a verdict per policy,
        from RUN_DIR/direct-<k>.json, RUN_DIR/via-<k>.json (k = 1..M) and
        RUN_DIR/<policy>-r<k>.json (turbolb-loadgen --json, one point each)
    demo_report.py check FILE   exit status 0 if FILE holds an undisturbed
        point, 1 if not (see disturbed())
    demo_report.py stats FILE   non-zero counters of /turbolb/stats
    demo_report.py cores FILE   per host core counts of /turbolb/cores
        (FILE: a dpdk-telemetry.py answer, JSON)

A policy's row is the median of its undisturbed rounds (the rounds run
interleaved with the other policies', so that a stall of the machine
lands in one round of one policy, not in all rounds of it); the p99 range
across those rounds is how much this machine's noise moved it. The
verdict compares a policy with rss round by round.
"""

import argparse
import json
import os
import statistics
import sys

REFERENCE = "rss"
# A point whose load generator fell this far behind its schedule measured
# a stall of the machine (the generator sent nothing meanwhile, then a
# burst), not the policy: 10 mean service times of the demo, above the
# lags of tens of milliseconds a shared 2-CPU machine gives it anyway.
LAG_LIMIT_NS = 50 * 1000 * 1000


def load_point(path):
    """One turbolb-loadgen --json point, or None if the run left none or
    nothing was received."""
    try:
        with open(path) as f:
            lines = [ln for ln in f if ln.strip()]
        r = json.loads(lines[-1])
    except (OSError, ValueError, IndexError):
        return None
    if r.get("record", "point") != "point" or not r.get("received"):
        return None
    return r


def disturbed(point):
    """Whether a point says nothing about the policy: no result, the load
    generator held up past LAG_LIMIT_NS, or interrupted (by the demo's
    bound on a run)."""
    return point is None or point.get("max_lag_ns", 0) > LAG_LIMIT_NS or \
        bool(point.get("interrupted"))


def policy_row(policy, points):
    """A policy's row from its rounds' points (None for a failed round):
    the undisturbed rounds, or every round with a result if all were
    disturbed (then row["disturbed"] is set)."""
    ok = [p for p in points if not disturbed(p)]
    row = {"policy": policy, "rounds": len(points), "ok_rounds": len(ok),
           "disturbed": not ok}
    if not ok:
        ok = [p for p in points if p is not None]
    if not ok:
        return row
    p99 = [p["p99_ns"] / 1e3 for p in ok]
    cores = [0] * max(len(p.get("per_core", [])) for p in ok)
    for p in ok:
        for i, n in enumerate(p.get("per_core", [])):
            cores[i] += n
    row.update({
        "target_rps": ok[0]["target_rps"],
        "achieved_rps": statistics.median(p["achieved_rps"] for p in ok),
        # median_low: a value one round measured, also for even counts.
        "p50_us": statistics.median_low(p["p50_ns"] / 1e3 for p in ok),
        "p99_us": statistics.median_low(p99),
        "p99_min_us": min(p99),
        "p99_max_us": max(p99),
        "lost": sum(p["lost"] for p in ok),
        "per_core": cores,
    })
    return row


def hot_ratio(per_core):
    """Busiest core's requests over the mean per core: 1.0 is even."""
    if not per_core or sum(per_core) == 0:
        return None
    return max(per_core) / (sum(per_core) / len(per_core))


def paired_rounds(points, ref_points):
    """(p99 of the policy, p99 of the reference) for each round in which
    neither was disturbed."""
    return [(p["p99_ns"], r["p99_ns"]) for p, r in zip(points, ref_points)
            if not disturbed(p) and not disturbed(r)]


def verdict(row, ref, pairs):
    """One line on a policy against the reference policy's row, judged by
    the rounds in `pairs` (paired_rounds): better or worse if it was so in
    most of them (the median's side), saying in how many."""
    name = row["policy"]
    if "p99_us" not in row:
        return "%s: no result (every round failed)" % name
    lost = "; lost %d" % row["lost"] if row["lost"] else ""
    if ref is None or "p99_us" not in ref:
        return "%s: no comparison: p99 %.0f us, no %s row%s" % (
            name, row["p99_us"], REFERENCE, lost)
    if row is ref:
        return "%s: the reference (static hash), p99 %.0f us%s" % (
            name, row["p99_us"], lost)
    ratio = row["p99_us"] / ref["p99_us"] if ref["p99_us"] else float("inf")
    if ratio <= 1:
        text = "p99 %.1fx lower than %s" % (1 / ratio, REFERENCE)
    else:
        text = "p99 %.1fx higher than %s" % (ratio, REFERENCE)
    n = len(pairs)
    lower = sum(1 for a, b in pairs if a < b)
    if n == 0 and (row["disturbed"] or ref["disturbed"]):
        text = "no clear difference: %s (measured in disturbed rounds " \
               "only: noise)" % text
    elif n == 0:
        text = "%s: %s (undisturbed in different rounds: no noise " \
               "estimate)" % ("better" if ratio < 1 else "worse", text)
    elif n == 1:
        text = "%s: %s (one round: no noise estimate)" % (
            "better" if lower else "worse", text)
    elif 2 * lower > n and ratio < 1:
        text = "better: %s (lower in %d of %d rounds)" % (text, lower, n)
    elif 2 * lower < n and ratio > 1:
        text = "worse: %s (higher in %d of %d rounds)" % (text, n - lower, n)
    else:
        text = "no clear difference: %s, lower in %d of %d rounds " \
               "(machine noise)" % (text, lower, n)
    return "%s: %s%s" % (name, text, lost)


def fmt_row(label, row):
    if "p99_us" not in row:
        return "%-8s (load generator failed in every round)" % label
    hot = hot_ratio(row.get("per_core", []))
    return "%-8s %6.0f %8.0f %7.0f %7.0f %13s %6s %5d %5s  %s" % (
        label, row["target_rps"], row["achieved_rps"], row["p50_us"],
        row["p99_us"], "%.0f-%.0f" % (row["p99_min_us"], row["p99_max_us"]),
        "%d/%d%s" % (row["ok_rounds"], row["rounds"],
                     "!" if row["disturbed"] else ""),
        row["lost"], "-" if hot is None else "%.2f" % hot,
        "/".join(str(n) for n in row.get("per_core", [])))


HEAD = "%-8s %6s %8s %7s %7s %13s %6s %5s %5s  %s" % (
    "policy", "rate", "achieved", "p50_us", "p99_us", "p99_range_us",
    "rounds", "lost", "hot", "requests per core")


def best_point(points):
    """Of repeated light-load runs, the one with the lowest p50 (None if
    none has a result): noise only ever adds latency."""
    ok = [p for p in points if p is not None]
    return min(ok, key=lambda p: p["p50_ns"]) if ok else None


def baseline_lines(directs, vias):
    """The two light-load rows, each the best of its runs, and what the
    daemon adds at p50."""
    direct, via = best_point(directs), best_point(vias)
    lines = ["path, light load (%s)" % (
        "no result" if direct is None and via is None else
        "%.0f rps, %s; of %d runs each, the one with the lowest p50" % (
            (direct or via)["target_rps"], (direct or via).get("dist", "?"),
            max(len(directs), len(vias))))]
    lines.append(HEAD)
    rows = {}
    for label, p in (("direct", direct), ("via-lb", via)):
        # Rows of one point: a lag counts as noise here, not as a reason
        # to leave the point out.
        row = policy_row(label, [p])
        if p is not None:
            row.update(policy_row(label, [dict(p, max_lag_ns=0)]))
        rows[label] = row
        lines.append(fmt_row(label, row))
    if "p50_us" not in rows["direct"] or "p50_us" not in rows["via-lb"]:
        return lines
    added = rows["via-lb"]["p50_us"] - rows["direct"]["p50_us"]
    if added < 0:
        lines.append("no estimate of what turbolbd adds: the direct path "
                     "measured slower (machine noise)")
    else:
        lines.append("turbolbd adds %.0f us at p50 (via-lb minus direct: "
                     "the daemon's hop, its polling and wake-ups)" % added)
    return lines


def table(run, policies, rounds, light_runs=1):
    """The whole report as a list of lines."""
    lines = baseline_lines(
        [load_point(os.path.join(run, "direct-%d.json" % k))
         for k in range(1, light_runs + 1)],
        [load_point(os.path.join(run, "via-%d.json" % k))
         for k in range(1, light_runs + 1)])
    rows, pts = {}, {}
    for p in policies:
        pts[p] = [load_point(os.path.join(run, "%s-r%d.json" % (p, k)))
                  for k in range(1, rounds + 1)]
        rows[p] = policy_row(p, pts[p])
    lines += ["", "policies, %d round%s each (median of the undisturbed "
              "rounds)" % (rounds, "" if rounds == 1 else "s"), HEAD]
    lines += [fmt_row(p, rows[p]) for p in policies]
    lines += ["", "verdict (p99 against %s, round by round):" % REFERENCE]
    ref = rows.get(REFERENCE)
    for p in policies:
        pairs = paired_rounds(pts[p], pts[REFERENCE]) if ref else []
        lines.append("  " + verdict(rows[p], ref, pairs))
    return lines


def stats_lines(answer):
    d = answer["/turbolb/stats"]
    return ["  %-28s %s" % (k, v) for k, v in d.items() if v]


def cores_lines(answer):
    d = answer["/turbolb/cores"]
    out = []
    for k in sorted(d, key=int):
        c = d[k]
        out.append("  core %s: sent %8d completed %8d outstanding %3d %s" % (
            k, c["sent"], c["completed"], c["outstanding"], c["state"]))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("run")
    t.add_argument("--policies", required=True)
    t.add_argument("--rounds", type=int, default=1)
    t.add_argument("--light-runs", type=int, default=1)
    for name in ("check", "stats", "cores"):
        sub.add_parser(name).add_argument("file")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        return 1 if disturbed(load_point(a.file)) else 0
    if a.cmd == "table":
        if a.rounds < 1 or a.light_runs < 1:
            ap.error("--rounds and --light-runs must be 1 or more")
        print("\n".join(table(a.run, a.policies.split(), a.rounds,
                               a.light_runs)))
        return 0
    try:
        with open(a.file) as f:
            answer = json.load(f)
        lines = stats_lines(answer) if a.cmd == "stats" else \
            cores_lines(answer)
    except (OSError, ValueError, KeyError) as e:
        print("  (no telemetry answer: %s)" % e)
        return 0
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
