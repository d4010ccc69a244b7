# SPDX-License-Identifier: BSD-3-Clause
"""A folder as scripts/compare-policies.sh leaves it: turbolb-loadgen's
point CSVs (sweep-*.csv, the SLO search's slo-*.csv) and SLO summaries
(slo-*-summary.csv), with the columns of src/loadgen/lg_report.c."""

import os
import time

POINT_COLS = ("policy,offered_rps,achieved_rps,p50_ns,p90_ns,p99_ns,p999_ns,"
              "max_ns,lost,sent,received,errors,late,mean_ns,received_rps,"
              "duration_s,behind,point,arrival,window,dist,duplicates,"
              "unknown")
SLO_COLS = ("policy,slo_multiple,slo_ns,max_rps,found,at_max,"
            "best_offered_rps,best_p99_ns,pass_rps,fail_rps,points,"
            "rate_min,rate_max,aborted,dist")


def strings(**kw):
    return {k: str(v) for k, v in kw.items()}


def point(policy, offered, achieved, p99_ns, lost=0, received=None,
          behind=0, errors=0):
    """One row as csv.DictReader gives it: every value a string."""
    received = 1000 if received is None else received
    return strings(policy=policy, offered_rps="%.3f" % offered,
                achieved_rps="%.3f" % achieved, p50_ns=p99_ns // 3,
                p90_ns=p99_ns // 2, p99_ns=p99_ns, p999_ns=p99_ns * 2,
                max_ns=p99_ns * 3, lost=lost, sent=received + lost,
                received=received, errors=errors, late=0, mean_ns="200.0",
                received_rps="%.3f" % achieved, duration_s="2.000000",
                behind=behind, point=0, arrival="poisson", window=0,
                dist="exp:200us", duplicates=0, unknown=0)


def slo(policy, max_rps, found=1, at_max=0, mult=10, slo_ns=2000000):
    return strings(policy=policy, slo_multiple=mult, slo_ns=slo_ns,
                max_rps="%.3f" % max_rps, found=found, at_max=at_max,
                best_offered_rps=max_rps, best_p99_ns=1000, pass_rps=0,
                fail_rps=0, points=5, rate_min=1000, rate_max=5000,
                aborted=0, dist="exp:200us")


def write_csv(path, cols, rows, mtime=None):
    names = cols.split(",")
    with open(path, "w") as f:
        f.write(cols + "\n")
        for r in rows:
            f.write(",".join(str(r.get(c, "")) for c in names) + "\n")
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def compare_folder(d, with_slo=True):
    """Two policies, jsq run first: three rates each; rr loses requests at
    5000 rps and gets no response at all at 6000; the search's own points
    in slo-*.csv, which the sweep's charts and tables leave out."""
    t = time.time() - 100
    write_csv(os.path.join(d, "sweep-jsq.csv"), POINT_COLS, [
        point("jsq", 1000, 999.5, 400000),
        point("jsq", 3000, 2990, 900000),
        point("jsq", 5000, 4900, 1500000, behind=1),
    ], t)
    write_csv(os.path.join(d, "sweep-rr.csv"), POINT_COLS, [
        point("rr", 1000, 998, 500000),
        point("rr", 3000, 2950, 2500000),
        point("rr", 5000, 4100, 9000000, lost=12),
        point("rr", 6000, 0, 0, lost=500, received=0),
    ], t + 10)
    if with_slo:
        write_csv(os.path.join(d, "slo-jsq.csv"), POINT_COLS, [
            point("jsq", 4000, 3950, 1900000)], t + 20)
        write_csv(os.path.join(d, "slo-jsq-summary.csv"), SLO_COLS,
                  [slo("jsq", 3950.0)], t + 21)
        write_csv(os.path.join(d, "slo-rr-summary.csv"), SLO_COLS,
                  [slo("rr", 5000.0, at_max=1)], t + 22)
