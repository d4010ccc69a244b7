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

# Data files and the gnuplot scripts (scripts/loadgen_plot.py).
python3 "$(dirname "$0")/loadgen_plot.py" "$dir" "$tmp" "$term"

gnuplot "$tmp/p99.gp"
echo "$dir/p99.png"
if [ -f "$tmp/slo.gp" ]; then
	gnuplot "$tmp/slo.gp"
	echo "$dir/slo-max.png"
fi
