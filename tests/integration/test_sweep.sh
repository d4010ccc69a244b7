#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# turbolb-loadgen sweeps on the memif topology (loadgen -> turbolbd ->
# turbolb-server): a three-rate sweep gives a CSV with the fixed header and
# exactly one row per rate, in order, each accounting for every request
# (sent = received + errors + lost) and matching the JSON records; an SLO
# search's summary agrees with its own points; a closed loop sends exactly
# what it was asked; several source addresses all get answers; and
# scripts/compare-policies.sh and scripts/plot.sh produce their files.
# Nothing here asserts latency or speed: this machine's CPUs are shared.
#
#   tests/integration/test_sweep.sh BUILD_DIR (absolute)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
# py 'expression or statements' ARGS..: prints what the code prints.
py() { local code=$1; shift; python3 -c "$code" "$@" 2>&1; }

header="policy,offered_rps,achieved_rps,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,lost,sent,received"

# CSV rows as "offered:sent:received:errors:lost" lines.
rows() {
	py '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print("%g:%s:%s:%s:%s:%s" % (float(r["offered_rps"]), r["sent"],
          r["received"], r["errors"], r["lost"], r["policy"]))' "$1"
}

# Every row: sent = received + errors + lost, and something was sent.
rows_balance() {
	py '
import csv, sys
bad = [r for r in csv.DictReader(open(sys.argv[1]))
       if int(r["sent"]) <= 0 or int(r["sent"]) !=
          int(r["received"]) + int(r["errors"]) + int(r["lost"])]
print(len(bad))' "$1"
}

topo_init sweep
topo_config cores=4 policy=jsq credits=ring
if ! topo_start_daemon || ! topo_start_server; then
	echo "topology did not start"
	echo "0 passed, 1 failed"
	exit 1
fi

# --- a three-rate sweep --------------------------------------------------
csv=$TOPO_RUN/sweep.csv
json=$TOPO_RUN/sweep.json
topo_loadgen "$json" --rates 1000,2000,3000 --duration 0.5 --warmup 0.1 \
	--dist exp:2us --flows 16 --timeout-ms 5000 --label jsq --csv "$csv"
check "sweep: loadgen exited 0" eq "$?" 0
check "sweep: CSV written" [ -s "$csv" ]
check "sweep: CSV header" eq "$(head -n 1 "$csv" | cut -d, -f1-11)" "$header"
check "sweep: one row per rate" eq "$(($(wc -l < "$csv") - 1))" 3
check "sweep: offered rates in order" eq \
	"$(rows "$csv" | cut -d: -f1 | tr '\n' ' ')" "1000 2000 3000 "
check "sweep: policy label on every row" eq \
	"$(rows "$csv" | cut -d: -f6 | sort -u)" "jsq"
check "sweep: sent = received + errors + lost on every row" eq \
	"$(rows_balance "$csv")" 0
rows "$csv" | sed 's/^/    offered:sent:received:errors:lost:policy /'
# The JSON has the same points, one object per line, old keys kept.
check "sweep: JSON agrees with the CSV" eq "$(py '
import csv, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
rows = list(csv.DictReader(open(sys.argv[2])))
ok = len(recs) == 3 and all(
    j["record"] == "point" and j["policy"] == "jsq" and j["point"] == i and
    j["offered_rps"] == j["target_rps"] == float(r["offered_rps"]) and
    j["sent"] == int(r["sent"]) and j["lost"] == int(r["lost"]) and
    j["p99_ns"] == int(r["p99_ns"]) and "per_core" in j and
    "achieved_rps" in j and "warmup" in j
    for i, (j, r) in enumerate(zip(recs, rows)))
print(int(ok))' "$json" "$csv")" 1
# One id space: a point only hears about its own ids. Stragglers beyond
# the settle time could show up as unknown in the next point, so this
# holds only while no earlier point lost anything.
check "sweep: no point got another point's responses" eq "$(py '
import json, sys
lost = 0
for l in open(sys.argv[1]):
    j = json.loads(l)
    if lost == 0 and (j["unknown"] != 0 or j["duplicates"] != 0):
        print("point %d: unknown %d duplicates %d" % (j["point"],
              j["unknown"], j["duplicates"]))
        sys.exit(0)
    lost += j["lost"] - j["late"]
print("none")' "$json")" none

# --- an SLO search: the summary agrees with its points --------------------
csv=$TOPO_RUN/slo.csv
slocsv=$TOPO_RUN/slo-summary.csv
json=$TOPO_RUN/slo.json
topo_loadgen "$json" --slo-multiple 100000 --rate-min 500 --rate-max 1500 \
	--slo-iterations 1 --duration 0.3 --warmup 0.05 --dist exp:2us \
	--timeout-ms 5000 --label jsq --csv "$csv" --slo-csv "$slocsv"
check "slo: loadgen exited 0" eq "$?" 0
check "slo: summary CSV has one row" eq "$(($(wc -l < "$slocsv") - 1))" 1
check "slo: summary consistent with the points" eq "$(py '
import csv, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
pts, s = recs[:-1], recs[-1]
rows = list(csv.DictReader(open(sys.argv[2])))
summ = next(csv.DictReader(open(sys.argv[3])))
ok = s["record"] == "slo" and s["slo_ns"] == 100000 * 2000
ok = ok and all(p["record"] == "point" for p in pts)
ok = ok and s["points"] == len(pts) == len(rows) and 1 <= len(pts) <= 3
ok = ok and pts[0]["offered_rps"] == 500
good = [p["achieved_rps"] for p in pts if p["lost"] + p["errors"] == 0
        and p["p99_ns"] <= s["slo_ns"] and p["achieved_rps"] > 0]
ok = ok and s["found"] == bool(good)
ok = ok and abs(s["max_rps"] - (max(good) if good else 0)) < 1e-3
ok = ok and abs(float(summ["max_rps"]) - s["max_rps"]) < 1e-3
print(int(ok) if ok else json.dumps(s))' "$json" "$csv" "$slocsv")" 1
check "slo: sent = received + errors + lost on every row" eq \
	"$(rows_balance "$csv")" 0

# --- a closed loop ---------------------------------------------------------
json=$TOPO_RUN/closed.json
topo_loadgen "$json" --closed-loop 8 --requests 2000 --dist exp:2us \
	--timeout-ms 5000
check "closed: loadgen exited 0" eq "$?" 0
check "closed: exactly the requests asked for, all accounted for" eq "$(py '
import json, sys
j = json.load(open(sys.argv[1]))
print(int(j["sent"] == 2000 and j["closed_loop"] == 8 and
          j["arrival"] == "closed" and
          j["sent"] == j["received"] + j["errors"] + j["lost"]))' "$json")" 1

# --- several source addresses ------------------------------------------------
json=$TOPO_RUN/ips.json
topo_loadgen "$json" --rate 2000 --requests 1000 --flows 8 --src-ips 4 \
	--dist exp:2us --timeout-ms 5000
check "src-ips: loadgen exited 0" eq "$?" 0
# Answers to one address in four would be 25%: more than half means the
# other addresses are answered too.
check "src-ips: all addresses answered" eq "$(py '
import json, sys
j = json.load(open(sys.argv[1]))
print(int(j["src_ips"] == 4 and j["sent"] == 1000 and
          j["received"] > j["sent"] // 2 and
          j["sent"] == j["received"] + j["errors"] + j["lost"]))' "$json")" 1
topo_stop

# --- compare-policies.sh and plot.sh --------------------------------------
cmp=$(mktemp -d /tmp/turbolb-compare-test.XXXXXX)
BUILD=$BUILD "$top/scripts/compare-policies.sh" --policies "rss jbsq:2" \
	--rates 1000,2000 --duration 0.3 --warmup 0.05 --dist exp:2us \
	--timeout-ms 5000 --slo-multiple 100000 --slo-iterations 1 \
	--out "$cmp" > "$cmp/stdout.txt" 2> "$cmp/stderr.txt"
rc=$?
check "compare: exited 0" eq "$rc" 0
[ "$rc" -eq 0 ] || tail -n 20 "$cmp/stderr.txt"
for f in sweep-rss.csv sweep-rss.json sweep-jbsq-2.csv sweep-jbsq-2.json \
	slo-rss.csv slo-rss-summary.csv slo-jbsq-2.json summary.csv summary.txt; do
	check "compare: wrote $f" [ -s "$cmp/$f" ]
done
check "compare: per-policy CSV rows" eq \
	"$(rows "$cmp/sweep-jbsq-2.csv" | cut -d: -f1,6- | tr '\n' ' ')" \
	"1000:jbsq:2 2000:jbsq:2 "
check "compare: summary has a row per policy" eq \
	"$(tail -n +2 "$cmp/summary.csv" | cut -d, -f1 | tr '\n' ' ')" "rss jbsq:2 "
check "compare: printed the summary" grep -q "^jbsq:2 " "$cmp/stdout.txt"
if command -v gnuplot > /dev/null; then
	"$top/scripts/plot.sh" "$cmp" > /dev/null
	check "plot: exited 0" eq "$?" 0
	for f in p99.png slo-max.png; do
		check "plot: $f is a PNG" eq \
			"$(head -c 4 "$cmp/$f" 2>/dev/null | tail -c 3)" PNG
	done
else
	echo "skip - plot.sh: no gnuplot"
fi
rm -rf "$cmp"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
