#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Charts from turbolb-loadgen CSVs (scripts/compare-policies.sh output, or
# any folder of --csv / --slo-csv files), drawn with gnuplot:
#
#   DIR/p99.png       p99 latency (log scale) against achieved throughput,
#                     one line per policy; points that lost requests ringed
#   DIR/slo-max.png   highest throughput meeting the SLO per policy: the
#                     search's answer and, from compare-policies.sh's
#                     summary.csv, the best sweep point meeting it (else
#                     from the --slo-csv files; only when a search ran)
#
#   scripts/plot.sh DIR
#
# Point files are the CSVs whose header starts with the loadgen's columns;
# when sweep-*.csv files are there, only those (the SLO search's points are
# bisection probes, not a sweep). Rows are grouped by their policy column.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	awk 'NR < 3 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
	exit 2
fi
dir=$(cd "$1" && pwd)
command -v gnuplot > /dev/null || { echo "plot: gnuplot not found (scripts/setup.sh installs gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Cairo draws smoother text and lines; plain png is the fallback.
if gnuplot -e 'set terminal' 2>&1 | grep -qw pngcairo; then
	term="pngcairo size 1100,600 enhanced font 'Sans,11'"
else
	term="png size 1100,600"
fi

# Data files and the gnuplot scripts, written by one Python pass.
python3 - "$dir" "$tmp" "$term" <<'PY'
import csv, glob, os, sys
d, tmp, term = sys.argv[1:4]
POINT = ["policy", "offered_rps", "achieved_rps", "p50_ns", "p90_ns",
         "p99_ns", "p999_ns", "max_ns", "lost"]
SLO = ["policy", "slo_multiple", "slo_ns", "max_rps"]

def header(path):
    with open(path) as f:
        return f.readline().strip().split(",")

# In the order they were written: the order the policies ran in.
csvs = sorted(glob.glob(os.path.join(d, "*.csv")),
              key=lambda p: (os.path.getmtime(p), p))
points = [p for p in csvs if header(p)[:len(POINT)] == POINT]
sweeps = [p for p in points if os.path.basename(p).startswith("sweep-")]
points = sweeps or points
if not points:
    sys.exit("plot: no turbolb-loadgen point CSVs in %s" % d)

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

def gq(s):
    return "'" + s.replace("'", "''") + "'"

# The SLO, if a search ran: from summary.csv, else the --slo-csv files.
slo_rows = []
summ = os.path.join(d, "summary.csv")
if os.path.exists(summ) and header(summ)[:4] == SLO:
    with open(summ) as f:
        slo_rows = [r for r in csv.DictReader(f) if r["max_rps"] != ""]
if not slo_rows:
    for path in csvs:
        if header(path)[:4] == SLO and path != summ:
            with open(path) as f:
                slo_rows += list(csv.DictReader(f))

plots, lost = [], []
for i, name in enumerate(order):
    rows = sorted(series[name], key=lambda r: float(r["offered_rps"]))
    dat = os.path.join(tmp, "p%d.dat" % i)
    with open(dat, "w") as f:
        for r in rows:
            # A point without responses has no latency to draw.
            if int(r.get("received", "1") or 1) == 0:
                continue
            f.write("%s,%f\n" % (r["achieved_rps"], int(r["p99_ns"]) / 1e3))
            if int(r["lost"]) > 0:
                lost.append((r["achieved_rps"], int(r["p99_ns"]) / 1e3))
    plots.append("%s using 1:2 with linespoints lw 2 pt 7 ps 1.2 title %s"
                 % (gq(dat), gq(name)))
if lost:
    dat = os.path.join(tmp, "lost.dat")
    with open(dat, "w") as f:
        for x, y in lost:
            f.write("%s,%f\n" % (x, y))
    plots.append("%s using 1:2 with points pt 6 ps 2.6 lw 1.5 lc rgb 'red' "
                 "title 'lost requests'" % gq(dat))

dist = ", ".join(sorted(x for x in dists if x))
g = ["set terminal " + term,
     "set output " + gq(os.path.join(d, "p99.png")),
     "set datafile separator ','",
     "set title " + gq("p99 latency vs throughput" +
                       (" (service time %s)" % dist if dist else "")),
     "set xlabel 'achieved throughput (requests/s)'",
     "set ylabel 'p99 latency (us, log scale)'",
     "set logscale y", "set format y '%.0f'", "set grid xtics ytics mytics",
     # Beside the plot: inside, it would hide points somewhere.
     "set key outside right top vertical Left reverse box",
     "set xrange [0:*]"]
if slo_rows:
    s = slo_rows[0]
    us = float(s["slo_ns"]) / 1e3
    # The line as an arrow, its name in the key (a label would sit on
    # the data somewhere).
    g.append("set arrow from graph 0, first %f to graph 1, first %f nohead "
             "dt 2 lw 2 lc rgb 'gray30'" % (us, us))
    plots.append("1/0 with lines dt 2 lw 2 lc rgb 'gray30' title %s"
                 % gq("SLO: p99 <= %sx mean = %.0f us"
                      % (s["slo_multiple"], us)))
g.append("plot " + ", \\\n     ".join(plots))
with open(os.path.join(tmp, "p99.gp"), "w") as f:
    f.write("\n".join(g) + "\n")

if slo_rows:
    # The search's answer per policy; beside it, when summary.csv has it,
    # the best sweep point that met the SLO (a second opinion).
    two = all(r.get("sweep_max_rps", "") != "" for r in slo_rows)
    dat = os.path.join(tmp, "bars.dat")
    anymark = False
    with open(dat, "w") as f:
        for r in slo_rows:
            v = float(r["max_rps"]) if r.get("found", r.get("slo_found", "1")) != "0" else 0.0
            mark = "+" if r.get("at_max", r.get("slo_at_max", "0")) == "1" else ""
            anymark = anymark or (mark != "" and v > 0)
            w = float(r["sweep_max_rps"]) if two else 0.0
            f.write("%s,%f,%s,%f,%s\n" % (r["policy"] or "-", v,
                                          "%.0f%s" % (v, mark) if v else "none",
                                          w, "%.0f" % w if w else "none"))
    s = slo_rows[0]
    top = max([float(r["max_rps"]) for r in slo_rows] +
              [float(r["sweep_max_rps"]) for r in slo_rows if two])
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
        "%s %d" % (gq(r["policy"] or "-"), i) for i, r in enumerate(slo_rows)))
    p = ["%s using ($0-%g):2:(%g) with boxes lc rgb '#4477aa' "
         "title 'SLO search (--slo-multiple)'" % (gq(dat), off, bw),
         "'' using ($0-%g):2:3 with labels offset 0,0.9 notitle" % off]
    if two:
        p += ["'' using ($0+%g):4:(%g) with boxes lc rgb '#ccbb44' "
              "title 'best sweep point meeting the SLO'" % (off, bw),
              "'' using ($0+%g):4:5 with labels offset 0,0.9 notitle" % off]
    g.append("plot " + ", \\\n     ".join(p))
    with open(os.path.join(tmp, "slo.gp"), "w") as f:
        f.write("\n".join(g) + "\n")
PY

gnuplot "$tmp/p99.gp"
echo "$dir/p99.png"
if [ -f "$tmp/slo.gp" ]; then
	gnuplot "$tmp/slo.gp"
	echo "$dir/slo-max.png"
fi
