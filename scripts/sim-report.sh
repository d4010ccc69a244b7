#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs turbolb-sim over the experiments of docs/results-simulation.md and
# writes that page and its charts (docs/img/sim-*.png). The experiments,
# the tables and the charts are scripts/simreport.py's; this builds the
# simulator and passes it the knobs.
#
#   scripts/sim-report.sh [--quiet] [BUILD_DIR]
#                                          build BUILD_DIR (default build/)
#                                          and use its turbolb-sim
#   TURBOLB_SIM=/path/turbolb-sim scripts/sim-report.sh
#                                          use that binary, build nothing
#
# On a terminal one updating line shows how many simulator runs of how
# many are done, the time elapsed and an estimate of what is left;
# --quiet, or a stderr that is not a terminal, leaves it out (a line
# every 50 runs instead).
#
# Knobs (environment): SIM_REQUESTS per run at 16 cores (default 150000;
# runs with more cores get proportionally more), SIM_JOBS parallel runs
# (default: CPUs), SIM_OUT page (default docs/results-simulation.md),
# SIM_IMG chart folder (default docs/img), SIM_RESULTS a folder that keeps
# the runs (default: a temporary one; with a kept folder a rerun reuses
# every run whose arguments did not change, and the page still states the
# CPU time of all of them), TURBOLB_SIM_TEST the unit test binary whose
# validation lines go on the page (default: test_sim next to the
# simulator).
#
# The daemon's figures ("What the daemon adds"), in ns:
#   DAEMON_DISPATCH_NS      dispatcher CPU per request at 16 host cores,
#                           its response included (default 34: jlq with
#                           responses, 29.7 Mpps per CPU-second,
#                           docs/performance.md)
#   DAEMON_DISPATCH_64_NS   the same at 64 host cores (default 47: 34
#                           scaled by the request path's 62.5 / 45.1 Mpps
#                           per CPU-second at 16 / 64 cores)
#   DAEMON_RESIDENCE_NS     a request's residence in the daemon, NIC to
#                           host queue; also the in-band credit's feedback
#                           delay (default 404: jsq's median at half of
#                           saturation, docs/performance.md, "The latency
#                           bound")
#   DAEMON_RING_FEEDBACK_NS how late a ring credit is counted (default
#                           512: one dispatcher loop at a full burst, 32
#                           requests x 16 ns)
# Needs python3 (standard library only) and gnuplot (gnuplot-nox).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

quiet=()
build=build
while [ $# -gt 0 ]; do
	case $1 in
	--quiet) quiet=(--quiet) ;;
	-h | --help) sed -n 3,45p "$0"; exit 0 ;;
	-*) echo "sim-report: unknown option $1" >&2; exit 2 ;;
	*) build=$1 ;;
	esac
	shift
done
requests=${SIM_REQUESTS:-150000}
jobs=${SIM_JOBS:-$(nproc)}
out_md=${SIM_OUT:-docs/results-simulation.md}
img_dir=${SIM_IMG:-docs/img}
DAEMON_DISPATCH_NS=${DAEMON_DISPATCH_NS:-34}
DAEMON_DISPATCH_64_NS=${DAEMON_DISPATCH_64_NS:-47}
DAEMON_RESIDENCE_NS=${DAEMON_RESIDENCE_NS:-404}
DAEMON_RING_FEEDBACK_NS=${DAEMON_RING_FEEDBACK_NS:-512}

if [ -n "${TURBOLB_SIM:-}" ]; then
	sim=$TURBOLB_SIM
else
	if [ ! -f "$build/build.ninja" ]; then
		meson setup "$build"
	fi
	ninja -C "$build" src/sim/turbolb-sim src/sim/test_sim
	sim=$build/src/sim/turbolb-sim
fi
[ -x "$sim" ] || { echo "sim-report: no simulator at $sim" >&2; exit 2; }
sim=$(cd "$(dirname "$sim")" && pwd)/$(basename "$sim")
test_bin=${TURBOLB_SIM_TEST:-$(dirname "$sim")/test_sim}

if ! command -v gnuplot >/dev/null; then
	if [ "$(id -u)" -eq 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends gnuplot-nox
	else
		echo "sim-report: gnuplot missing (apt-get install gnuplot-nox)" >&2
		exit 2
	fi
fi
command -v python3 >/dev/null ||
	{ echo "sim-report: python3 missing" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=${SIM_RESULTS:-$work/results}
mkdir -p "$results" "$img_dir" "$(dirname "$out_md")"

python3 "$top/scripts/simreport.py" --sim "$sim" --test-bin "$test_bin" \
	--out "$out_md" --img "$img_dir" --results "$results" --work "$work" \
	--requests "$requests" --jobs "$jobs" \
	--dispatch-ns "$DAEMON_DISPATCH_NS" \
	--dispatch-64-ns "$DAEMON_DISPATCH_64_NS" \
	--residence-ns "$DAEMON_RESIDENCE_NS" \
	--ring-feedback-ns "$DAEMON_RING_FEEDBACK_NS" ${quiet[@]+"${quiet[@]}"}
