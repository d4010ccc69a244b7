#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The summary of scripts/compare-policies.sh: from the sweep-*.csv and
slo-*-summary.csv files of its output folder, summary.csv (one row per
policy) and summary.txt (p99 by offered rate), the latter printed too.

    compare_summary.py DIR "POLICY ..."

The table's numbers are tested by tests/python/test_compare_summary.py.
"""
import csv
import os
import sys


def tag(p):
    """A file name for a policy: "jbsq:2" -> "jbsq-2" (compare-policies.sh's
    tag_of)."""
    return "".join(c if c.isalnum() or c in "_.-" else "-" for c in p)


def num(rate):
    return "%g" % rate


def load(out, policies):
    """({policy: sweep rows}, [offered rates, sorted], {policy: SLO search
    summary row}) from the folder."""
    rows, rates, slo = {}, [], {}
    for p in policies:
        with open(os.path.join(out, "sweep-%s.csv" % tag(p))) as f:
            rows[p] = list(csv.DictReader(f))
        for r in rows[p]:
            if float(r["offered_rps"]) not in rates:
                rates.append(float(r["offered_rps"]))
        path = os.path.join(out, "slo-%s-summary.csv" % tag(p))
        if os.path.exists(path):
            with open(path) as f:
                slo[p] = next(csv.DictReader(f), None)
    rates.sort()
    return rows, rates, slo


def at(rows, rate):
    """The sweep row at that offered rate, or None."""
    for r in rows:
        if float(r["offered_rps"]) == rate:
            return r
    return None


def sweep_best(rows, slo_ns):
    """The sweep's own best point under the SLO, by the search's rule (no
    loss, no errors, p99 within the SLO): a second opinion on a noisy
    machine. 0.0 when no point meets it."""
    ok = [float(r["achieved_rps"]) for r in rows
          if int(r["lost"]) + int(r["errors"]) == 0 and int(r["received"]) > 0
          and int(r["p99_ns"]) <= slo_ns and float(r["achieved_rps"]) > 0]
    return max(ok) if ok else 0.0


def csv_rows(policies, rows, rates, slo):
    """summary.csv: a header, then one row per policy."""
    out = [["policy", "slo_multiple", "slo_ns", "max_rps", "slo_found",
            "slo_at_max", "sweep_max_rps"] +
           ["p99_ns_at_%s" % num(x) for x in rates] +
           ["lost_at_%s" % num(x) for x in rates]]
    for p in policies:
        s = slo.get(p)
        line = [p] + ([s["slo_multiple"], s["slo_ns"], s["max_rps"],
                       s["found"], s["at_max"],
                       "%.3f" % sweep_best(rows[p], float(s["slo_ns"]))]
                      if s else [""] * 6)
        line += [at(rows[p], x)["p99_ns"] if at(rows[p], x) else ""
                 for x in rates]
        line += [at(rows[p], x)["lost"] if at(rows[p], x) else ""
                 for x in rates]
        out.append(line)
    return out


def text_lines(policies, rows, rates, slo):
    """summary.txt: p99 in us per offered rate; "!" lost some, "~" the
    load generator was behind schedule; with a search, its answer and the
    sweep's best point first."""
    lines = []
    head = "%-10s" % "policy"
    if slo:
        s0 = next(iter(slo.values()))
        head += " %22s %11s" % ("max rps @ p99<=%.0fus"
                                % (float(s0["slo_ns"]) / 1e3), "(sweep)")
    head += "".join(" %10s" % ("@" + num(x)) for x in rates)
    lines.append("p99 latency (us) by offered rate (rps)")
    lines.append(head)
    for p in policies:
        ln = "%-10s" % p
        if slo:
            s = slo.get(p)
            v = "-" if not s else ("none" if s["found"] == "0" else
                                   "%.0f%s" % (float(s["max_rps"]),
                                               "+" if s["at_max"] == "1"
                                               else ""))
            b = sweep_best(rows[p], float(s["slo_ns"])) if s else 0.0
            ln += " %22s %11s" % (v, ("%.0f" % b) if b else "none")
        for x in rates:
            r = at(rows[p], x)
            if r is None:
                ln += " %10s" % "-"
                continue
            mark = ("!" if int(r["lost"]) else "") + \
                ("~" if r["behind"] == "1" else "")
            # No response at all: there is no latency to show.
            v = "none" if int(r["received"]) == 0 else \
                "%.0f" % (float(r["p99_ns"]) / 1e3)
            ln += " %10s" % (v + mark)
        lines.append(ln)
    lines.append("! some requests lost   ~ load generator behind schedule"
                 + ("   + SLO met at the highest rate tried" if slo else ""))
    if slo:
        lines.append("(sweep): the best sweep point that met the SLO, for "
                     "comparison with the search")
    return lines


def main(argv=None):
    out, policies = (argv if argv is not None else sys.argv[1:])[:2]
    policies = policies.split()
    rows, rates, slo = load(out, policies)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        csv.writer(f).writerows(csv_rows(policies, rows, rates, slo))
    lines = text_lines(policies, rows, rates, slo)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
