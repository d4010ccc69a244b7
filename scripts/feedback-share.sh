#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the host's feedback frames cost (docs/host-integration.md): the
# memif topology (scripts/lib/topology.sh) with ring credits over
# host.transport: packet, 4 host cores, jsq, turbolb-server --feedback
# packet --batch BATCH; for each --feedback-hold-us in HOLDS (the word
# "state": in-band credits and turbolb-server --feedback state) and each rate
# in RATES one run of DURATION s of DIST requests. The server's stats give
# the feedback frames and responses it sent, the load generator the
# latency and what was lost.
#
#   scripts/feedback-share.sh [OUT_DIR]
#
# Environment: BUILD (build), HOLDS ("0 50"), RATES ("2000 10000 20000
# 50000"), DURATION (3), DIST (exp:5us), BATCH (16).
# Output: OUT_DIR/results.csv (one row per run, scripts/feedback_share.py)
# and OUT_DIR/table.md, printed too. A run takes 10 to 20 s, most of it
# starting and stopping the three processes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$top/feedback-share-out}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
: "${BUILD:=build}"
: "${HOLDS:=0 50}"
: "${RATES:=2000 10000 20000 50000}"
: "${DURATION:=3}"
: "${DIST:=exp:5us}"
: "${BATCH:=16}"
export BUILD

. "$top/scripts/lib/topology.sh"
for b in "$TLBD" "$TLBSRV" "$TLBLG"; do
	[ -x "$b" ] || { echo "feedback-share: $b not built (BUILD=$BUILD)" >&2; exit 1; }
done
mkdir -p "$OUT"
res=$OUT/results.csv
python3 "$top/scripts/feedback_share.py" row --header > "$res"

for hold in $HOLDS; do
	for rate in $RATES; do
		topo_init "fbshare-$hold-$rate"
		# "state": in-band completions, frames of state and heartbeat
		# (the topology gives the server --feedback state).
		credits=ring srv=(--batch "$BATCH" --feedback-hold-us "$hold")
		[ "$hold" != state ] || { credits=inband; srv=(); }
		topo_config cores=4 policy=jsq credits="$credits" transport=packet
		topo_start_daemon
		topo_start_server "${srv[@]}"
		topo_loadgen "$TOPO_RUN/loadgen.json" --rate "$rate" \
			--duration "$DURATION" --dist "$DIST" --flows 64 \
			--timeout-ms 2000
		topo_stop
		python3 "$top/scripts/feedback_share.py" row "$hold" "$rate" \
			"$TOPO_RUN/server.json" "$TOPO_RUN/loadgen.json" | tee -a "$res"
		rm -rf "$TOPO_RUN"
		trap - EXIT
	done
done
python3 "$top/scripts/feedback_share.py" table "$res" | tee "$OUT/table.md"
