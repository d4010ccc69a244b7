# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The checks of the shell tests, TAP-like. Source it, then:
#
#   check WHAT CMD...   runs CMD: prints "ok - WHAT" or "not ok - WHAT"
#                       and counts it in pass or fail
#   eq A B              true when A = B, else shows both (for check)
#
# A test ends with: echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]

pass=0
fail=0

check() {
	local what=$1
	shift
	if "$@"; then
		pass=$((pass + 1))
		echo "ok - $what"
	else
		fail=$((fail + 1))
		echo "not ok - $what"
	fi
}

eq() { [ "$1" = "$2" ] || { echo "    '$1' != '$2'" >&2; return 1; }; }
