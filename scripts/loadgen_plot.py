#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The data files and gnuplot scripts of scripts/plot.sh, from a folder of
turbolb-loadgen CSVs (see plot.sh for the charts).

    loadgen_plot.py DIR TMP TERM

writes TMP/p99.gp (and its TMP/p*.dat, TMP/lost.dat) and, when an SLO
search ran, TMP/slo.gp (and TMP/bars.dat); the charts go to DIR when
plot.sh runs gnuplot on them. TERM is gnuplot's terminal line. The
selection of the files and the numbers drawn are tested by
tests/python/test_loadgen_plot.py.
"""
import csv
import glob
import os
import sys

POINT = ["policy", "offered_rps", "achieved_rps", "p50_ns", "p90_ns",
         "p99_ns", "p999_ns", "max_ns", "lost"]
SLO = ["policy", "slo_multiple", "slo_ns", "max_rps"]


def header(path):
    with open(path) as f:
        return f.readline().strip().split(",")


def gq(s):
    """s as a gnuplot string."""
    return "'" + s.replace("'", "''") + "'"


def csv_files(d):
    """DIR's CSVs in the order they were written: the order the policies
    ran in."""
    return sorted(glob.glob(os.path.join(d, "*.csv")),
                  key=lambda p: (os.path.getmtime(p), p))


def point_files(csvs):
    """The point CSVs (the loadgen's columns first); only the sweep-*.csv
    ones when there are any: the SLO search's points are bisection
    probes, not a sweep."""
    points = [p for p in csvs if header(p)[:len(POINT)] == POINT]
    sweeps = [p for p in points if os.path.basename(p).startswith("sweep-")]
    return sweeps or points


def read_series(points):
    """({name: [rows]}, [names in first-seen order], {dist}): rows grouped
    by their policy column, the file's stem when that is empty."""
    series, order, dists = {}, [], set()
    for path in points:
        stem = os.path.splitext(os.path.basename(path))[0]
        with open(path) as f:
            for r in csv.DictReader(f):
                name = r["policy"] or stem
                if name not in series:
                    series[name] = []
                    order.append(name)
                series[name].append(r)
                dists.add(r.get("dist", ""))
    return series, order, dists


def slo_rows(d, csvs):
    """The SLO rows, if a search ran: from compare-policies.sh's
    summary.csv, else the --slo-csv files."""
    rows = []
    summ = os.path.join(d, "summary.csv")
    if os.path.exists(summ) and header(summ)[:4] == SLO:
        with open(summ) as f:
            rows = [r for r in csv.DictReader(f) if r["max_rps"] != ""]
    if not rows:
        for path in csvs:
            if header(path)[:4] == SLO and path != summ:
                with open(path) as f:
                    rows += list(csv.DictReader(f))
    return rows


def p99_points(rows):
    """(drawn, lost): (achieved rps, p99 us) of each point by offered
    rate, and of those that lost requests. A point without responses has
    no latency to draw."""
    drawn, lost = [], []
    for r in sorted(rows, key=lambda r: float(r["offered_rps"])):
        if int(r.get("received", "1") or 1) == 0:
            continue
        pt = (r["achieved_rps"], int(r["p99_ns"]) / 1e3)
        drawn.append(pt)
        if int(r["lost"]) > 0:
            lost.append(pt)
    return drawn, lost


def write_points(path, pts):
    with open(path, "w") as f:
        for x, y in pts:
            f.write("%s,%f\n" % (x, y))


def p99_script(d, tmp, term, series, order, dists, slo):
    """The lines of p99.gp; writes its data files into tmp."""
    plots, lost = [], []
    for i, name in enumerate(order):
        drawn, lo = p99_points(series[name])
        dat = os.path.join(tmp, "p%d.dat" % i)
        write_points(dat, drawn)
        lost += lo
        plots.append("%s using 1:2 with linespoints lw 2 pt 7 ps 1.2 title %s"
                     % (gq(dat), gq(name)))
    if lost:
        dat = os.path.join(tmp, "lost.dat")
        write_points(dat, lost)
        plots.append("%s using 1:2 with points pt 6 ps 2.6 lw 1.5 lc rgb "
                     "'red' title 'lost requests'" % gq(dat))

    dist = ", ".join(sorted(x for x in dists if x))
    g = ["set terminal " + term,
         "set output " + gq(os.path.join(d, "p99.png")),
         "set datafile separator ','",
         "set title " + gq("p99 latency vs throughput" +
                           (" (service time %s)" % dist if dist else "")),
         "set xlabel 'achieved throughput (requests/s)'",
         "set ylabel 'p99 latency (us, log scale)'",
         "set logscale y", "set format y '%.0f'",
         "set grid xtics ytics mytics",
         # Beside the plot: inside, it would hide points somewhere.
         "set key outside right top vertical Left reverse box",
         "set xrange [0:*]"]
    if slo:
        s = slo[0]
        us = float(s["slo_ns"]) / 1e3
        # The line as an arrow, its name in the key (a label would sit on
        # the data somewhere).
        g.append("set arrow from graph 0, first %f to graph 1, first %f "
                 "nohead dt 2 lw 2 lc rgb 'gray30'" % (us, us))
        plots.append("1/0 with lines dt 2 lw 2 lc rgb 'gray30' title %s"
                     % gq("SLO: p99 <= %sx mean = %.0f us"
                          % (s["slo_multiple"], us)))
    g.append("plot " + ", \\\n     ".join(plots))
    return g


def slo_bars(slo):
    """(bars, two): one (policy, search's max rps or 0, its label, best
    sweep rps or 0, its label) per policy; two when summary.csv has the
    best sweep point of every policy (drawn beside the search's)."""
    two = all(r.get("sweep_max_rps", "") != "" for r in slo)
    bars = []
    for r in slo:
        v = float(r["max_rps"]) \
            if r.get("found", r.get("slo_found", "1")) != "0" else 0.0
        mark = "+" if r.get("at_max", r.get("slo_at_max", "0")) == "1" \
            else ""
        w = float(r["sweep_max_rps"]) if two else 0.0
        bars.append((r["policy"] or "-", v,
                     "%.0f%s" % (v, mark) if v else "none",
                     w, "%.0f" % w if w else "none"))
    return bars, two


def slo_script(d, tmp, term, slo):
    """The lines of slo.gp; writes bars.dat into tmp."""
    bars, two = slo_bars(slo)
    dat = os.path.join(tmp, "bars.dat")
    with open(dat, "w") as f:
        for b in bars:
            f.write("%s,%f,%s,%f,%s\n" % b)
    anymark = any(b[2].endswith("+") for b in bars)
    s = slo[0]
    top = max([float(r["max_rps"]) for r in slo] +
              [float(r["sweep_max_rps"]) for r in slo if two])
    bw = 0.34 if two else 0.6
    off = bw / 2 if two else 0.0
    g = ["set terminal " + term,
         "set output " + gq(os.path.join(d, "slo-max.png")),
         "set datafile separator ','",
         "set title " + gq("Highest throughput with p99 <= %sx mean service "
                           "time (%.0f us), nothing lost"
                           % (s["slo_multiple"], float(s["slo_ns"]) / 1e3)),
         "set ylabel 'achieved throughput (requests/s)'",
         "set style fill solid 0.75 border -1",
         "set yrange [0:%s]" % ("1" if top <= 0 else "*"),
         "set offsets 0.5, 0.5, graph 0.15, 0",
         "set grid ytics", "set xtics nomirror", "set tics scale 0,1",
         "set key top left"]
    if top <= 0:
        g.append("set label 'no policy met the SLO' at graph 0.5, graph 0.5 "
                 "center")
    if anymark:
        g.append("set label '+ met at the highest rate tried' at graph "
                 "0.99, graph 0.96 right")
    # Tics by hand: the bars sit beside the policy's position, not on it.
    g.append("set xtics (%s)" % ", ".join(
        "%s %d" % (gq(r["policy"] or "-"), i) for i, r in enumerate(slo)))
    p = ["%s using ($0-%g):2:(%g) with boxes lc rgb '#4477aa' "
         "title 'SLO search (--slo-multiple)'" % (gq(dat), off, bw),
         "'' using ($0-%g):2:3 with labels offset 0,0.9 notitle" % off]
    if two:
        p += ["'' using ($0+%g):4:(%g) with boxes lc rgb '#ccbb44' "
              "title 'best sweep point meeting the SLO'" % (off, bw),
              "'' using ($0+%g):4:5 with labels offset 0,0.9 notitle" % off]
    g.append("plot " + ", \\\n     ".join(p))
    return g


def main(argv=None):
    d, tmp, term = (argv if argv is not None else sys.argv[1:])[:3]
    csvs = csv_files(d)
    points = point_files(csvs)
    if not points:
        sys.exit("plot: no turbolb-loadgen point CSVs in %s" % d)
    series, order, dists = read_series(points)
    slo = slo_rows(d, csvs)
    with open(os.path.join(tmp, "p99.gp"), "w") as f:
        f.write("\n".join(p99_script(d, tmp, term, series, order, dists,
                                     slo)) + "\n")
    if slo:
        with open(os.path.join(tmp, "slo.gp"), "w") as f:
            f.write("\n".join(slo_script(d, tmp, term, slo)) + "\n")


if __name__ == "__main__":
    main()
