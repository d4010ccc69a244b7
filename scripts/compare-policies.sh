#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Policy comparison in one command, on the emulated memif topology
# (scripts/lib/topology.sh): turbolbd and turbolb-server start once; for
# each policy the daemon switches live through telemetry (no restart) and
# turbolb-loadgen runs the same sweep of rates, then, with --slo-multiple,
# an SLO search between the lowest and the highest rate. Writes one CSV and
# one JSON file per policy run into the output folder, plus summary.csv and
# summary.txt; prints the summary and stops everything.
#
#   scripts/compare-policies.sh [--policies "rss jsq jlq jbsq:2"]
#       [--rates LIST | --sweep LO:HI:STEP] [--dist SPEC] [--duration S]
#       [--warmup S] [--out DIR] [--slo-multiple X] [--slo-iterations N]
#       [--cores N] [--timeout-ms T] [--quiet]
#       [-- more turbolb-loadgen options]
#   scripts/compare-policies.sh --summarize --out DIR [--policies ..]
#       (only rewrite summary.csv/summary.txt from the files in DIR)
#
# On a terminal one updating line shows which load generator run of how
# many is going, the time elapsed and an estimate of what is left;
# --quiet (or output that is not a terminal) leaves it out.
#
# BUILD names the build folder (default build). Plot the result with
# scripts/plot.sh DIR. See docs/loadgen.md.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)

usage() {
	# The header comment, from line 3 to the first line that is not one.
	awk 'NR < 3 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
	exit "${1:-2}"
}

policies="rss jsq jlq jbsq:2"
rates=
sweep=
# Defaults sized for the emulated topology on a small machine: 200 us
# requests put four spinning server threads near saturation at a few
# thousand requests per second, well above the scheduling noise.
dist=exp:200us
duration=2
warmup=0.2
out=
slo=
slo_iter=
cores=4
timeout_ms=1000
summarize=
quiet=0
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--policies) policies=$2; shift 2 ;;
	--rates) rates=$2; shift 2 ;;
	--sweep) sweep=$2; shift 2 ;;
	--dist) dist=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--warmup) warmup=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--slo-multiple) slo=$2; shift 2 ;;
	--slo-iterations) slo_iter=$2; shift 2 ;;
	--cores) cores=$2; shift 2 ;;
	--timeout-ms) timeout_ms=$2; shift 2 ;;
	--summarize) summarize=1; shift ;;
	--quiet) quiet=1; shift ;;
	-h | --help) usage 0 ;;
	--) shift; extra=("$@"); break ;;
	*) echo "compare-policies: unknown argument '$1'" >&2; usage ;;
	esac
done
if [ -n "$rates" ] && [ -n "$sweep" ]; then
	echo "compare-policies: --rates and --sweep exclude each other" >&2
	exit 2
fi
if [ -n "$summarize" ] && [ -z "$out" ]; then
	echo "compare-policies: --summarize needs --out DIR" >&2
	exit 2
fi
[ -n "$rates" ] || [ -n "$sweep" ] || rates=1000,2000,3000,4000,5000

# The SLO search runs between the sweep's lowest and highest rate.
if [ -n "$sweep" ]; then
	rate_args=(--sweep "$sweep")
	IFS=: read -r lo hi _ <<< "$sweep"
else
	rate_args=(--rates "$rates")
	lo=$(tr ',' '\n' <<< "$rates" | sort -g | head -n 1)
	hi=$(tr ',' '\n' <<< "$rates" | sort -g | tail -n 1)
fi
if [ -n "$slo" ] && ! awk -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(hi > lo) }'; then
	echo "compare-policies: --slo-multiple searches between the lowest and the highest rate: give two or more" >&2
	exit 2
fi
[ -n "$out" ] || out=$top/results/compare-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
out=$(cd "$out" && pwd)
common=(--dist "$dist" --duration "$duration" --warmup "$warmup"
	--timeout-ms "$timeout_ms" ${extra[@]+"${extra[@]}"})

# A file name for a policy: "jbsq:2" -> "jbsq-2".
tag_of() { tr -c 'A-Za-z0-9_.\n-' '-' <<< "$1"; }

# Switches the daemon's policy through telemetry; a refusal stops the run.
set_policy() {
	local ans
	ans=$(topo_telemetry "/turbolb/policy,$1")
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])["/turbolb/policy"]
if not d.get("ok"):
    sys.exit("compare-policies: policy %s refused: %s" % (sys.argv[2], d.get("message")))' "$ans" "$1"
}

# run_lg NAME POLICY ARGS..: one loadgen run into NAME.json / .csv / .log.
run_lg() {
	local name=$1 p=$2
	shift 2
	if ! topo_loadgen "$out/$name.json" --label "$p" --csv "$out/$name.csv" "$@"; then
		cat "$TOPO_RUN/loadgen.log" >&2
		echo "compare-policies: turbolb-loadgen failed for $p" >&2
		return 1
	fi
	cp "$TOPO_RUN/loadgen.log" "$out/$name.log"
}

write_command() {
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs," \
		"turbolb $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?')"
	printf '%q ' "$0" --policies "$policies" "${rate_args[@]}" --dist "$dist" \
		--duration "$duration" --warmup "$warmup" --cores "$cores" \
		--timeout-ms "$timeout_ms"
	[ -z "$slo" ] || printf '%q ' --slo-multiple "$slo"
	[ -z "$slo_iter" ] || printf '%q ' --slo-iterations "$slo_iter"
	[ ${#extra[@]} -eq 0 ] || printf '%q ' -- "${extra[@]}"
	echo
	# Other work on the machine shows in the latency: say how much.
	echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}

run_all() {
	local exe p t
	for exe in "$TLBD" "$TLBSRV" "$TLBLG"; do
		[ -x "$exe" ] || { echo "compare-policies: no $exe (BUILD=$BUILD; build first)" >&2; exit 1; }
	done
	# A typo in an option fails here, before anything starts (--help last:
	# every option before it is parsed and checked).
	# shellcheck disable=SC2086 # the wrapper may be a command with words
	${MESON_EXE_WRAPPER:-} "$TLBLG" -- "${rate_args[@]}" "${common[@]}" --help > /dev/null
	write_command > "$out/command.txt"

	topo_init compare
	# topo_init's trap runs topo_stop; under set -e its first failing
	# command (a kill of a process already gone) would end the trap and
	# leave the other processes running, so the trap runs without -e.
	trap 'set +e; topo_stop; progress_end' EXIT
	topo_config cores="$cores" policy=jsq credits=ring
	local n=0
	for p in $policies; do n=$((n + 1)); done
	[ -z "$slo" ] || n=$((n * 2))
	progress_start "$n" "$quiet"
	echo "compare-policies: turbolbd + turbolb-server ($cores host cores) on memif; run folder $TOPO_RUN" >&2
	topo_start_daemon
	topo_start_server
	for p in $policies; do
		t=$(tag_of "$p")
		set_policy "$p"
		echo "compare-policies: $p: sweep" >&2
		progress_step "$p: sweep"
		run_lg "sweep-$t" "$p" "${rate_args[@]}" "${common[@]}"
		if [ -n "$slo" ]; then
			echo "compare-policies: $p: SLO search, p99 <= ${slo}x mean, $lo..$hi rps" >&2
			progress_step "$p: SLO search"
			run_lg "slo-$t" "$p" --slo-multiple "$slo" --rate-min "$lo" \
				--rate-max "$hi" ${slo_iter:+--slo-iterations "$slo_iter"} \
				--slo-csv "$out/slo-$t-summary.csv" "${common[@]}"
		fi
	done
	# Under set -e: topo_stop's kill of an already gone process is no error.
	topo_stop || true
	progress_end
	echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >> "$out/command.txt"
}

: "${BUILD:=build}"
. "$top/scripts/lib/topology.sh"
. "$top/scripts/lib/progress.sh"
[ -n "$summarize" ] || run_all

python3 "$top/scripts/compare_summary.py" "$out" "$policies"
echo "results: $out (plot: scripts/plot.sh $out)"
