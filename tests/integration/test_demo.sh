#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's run command in its quick mode: scripts/demo.sh --quick runs
# to the end with exit status 0, and its table has both path rows, a row
# with numbers for every policy and a verdict line for every policy.
# Nothing here asserts latency or which policy wins: this machine's CPUs
# are shared.
#
#   tests/integration/test_demo.sh BUILD_DIR (absolute)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"

policies="rss rr random pod jsq jlq jbsq"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

BUILD=$build "$top/scripts/demo.sh" --quick --no-build > "$out" 2>&1
rc=$?
cat "$out"
echo
check "demo.sh --quick exits 0" eq "$rc" 0

# A row: the name, then rate, achieved, p50 and p99 as numbers.
has_row() { grep -Eq "^$1 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ " "$out"; }
for r in direct via-lb $policies; do
	check "a row with numbers for $r" has_row "$r"
done
for p in $policies; do
	check "a verdict for $p" grep -Eq "^  $p: (better|worse|no clear difference|the reference|no comparison|no result)" "$out"
done
# Either the estimate or, when this machine's noise made the direct path
# the slower one, that it has none: which one is up to the machine.
check "it says how much turbolbd adds, or that noise hid it" \
	grep -Eq "^(turbolbd adds [0-9]+ us at p50|no estimate of what turbolbd adds: )" "$out"
check "it says which numbers are noise" grep -q "^Machine noise:" "$out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
