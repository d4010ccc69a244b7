#!/usr/bin/env bash
# Paired A/B of two turbolb-bench binaries (docs/performance.md): N
# times one repetition of A, then at once one of B, each pair's B/A ratio
# of Mpps/CPU taken on its own, and per run the medians of A and B and
# the median (min-max) of the pairs' ratios. On a machine whose rate
# drifts by tens of percent over minutes, two halves a fraction of a
# second apart see the same spell; two copies of one binary give
# 0.99-1.005 here, the floor of what a result can tell.
#
#   scripts/ab-bench.sh OLD/turbolb-bench NEW/turbolb-bench
#
# Options: --pairs N (16), --policies LIST (rr,jsq,jlq), --modes LIST
# (request), --cores N (16), --packets N (2000000), and after -- more
# turbolb-bench options for both. Copy a build's binary elsewhere before
# rebuilding (a copy finds libturbolb-host with
# LD_LIBRARY_PATH=build/src/host): each binary is run as it is. No speed
# is judged.
set -euo pipefail

pairs=16
policies=rr,jsq,jlq
modes=request
cores=16
packets=2000000
args=()
bins=()
while [ $# -gt 0 ]; do
	case $1 in
	--pairs) pairs=$2; shift ;;
	--policies) policies=$2; shift ;;
	--modes) modes=$2; shift ;;
	--cores) cores=$2; shift ;;
	--packets) packets=$2; shift ;;
	--) shift; args=("$@"); break ;;
	-h|--help) sed -n 2,15p "$0"; exit 0 ;;
	-*) echo "ab-bench: unknown option $1" >&2; exit 2 ;;
	*) bins+=("$1") ;;
	esac
	shift
done
if [ ${#bins[@]} -ne 2 ]; then
	echo "usage: scripts/ab-bench.sh A/turbolb-bench B/turbolb-bench [options]" >&2
	exit 2
fi
for b in "${bins[@]}"; do
	[ -x "$b" ] || { echo "ab-bench: $b: not an executable" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$pairs"); do
	for v in A B; do
		b=${bins[0]}
		[ $v = B ] && b=${bins[1]}
		"$b" --cores "$cores" --dispatchers 1 --reps 1 \
			--packets "$packets" --policies "$policies" \
			--modes "$modes" --no-baselines ${args[@]+"${args[@]}"} \
			--json "$work/$r-$v.json" >/dev/null
	done
done

python3 "$(dirname "$0")/ab_bench.py" "$work" "$pairs" "${bins[0]}" "${bins[1]}"
