#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# systemd-analyze verify on configs/turbolbd.service.in, filled in with the
# build directory's turbolbd (verify wants ExecStart's binary to exist),
# and a ceiling on its "systemd-analyze security" exposure so that
# hardening is not dropped unnoticed. Exit 77 (skip) without systemd.
#
#   test_service_unit.sh UNIT.IN TURBOLBD SRCDIR
set -u
unit_in=$1
turbolbd=$2
src=$3
pass=0
fail=0
max_exposure=4.0

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }

if ! command -v systemd-analyze >/dev/null; then
	echo "systemd-analyze not found (Debian package: systemd) # SKIP"
	exit 77
fi
tmp=$(mktemp -d /tmp/tlb-unit-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

unit=$tmp/turbolbd.service
sed -e "s|@BINDIR@|$(dirname "$turbolbd")|g" -e "s|@SYSCONFDIR@|$src/configs/..|g" \
	"$unit_in" >"$unit"
if grep -Eq '@[A-Z_]+@' "$unit"; then
	bad "every @VAR@ filled in: $(grep -E '@[A-Z_]+@' "$unit")"
else
	ok "every @VAR@ filled in"
fi

# verify prints its complaints and still exits 0 for some of them.
out=$(cd "$tmp" && systemd-analyze verify "$unit" 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ -z "$out" ]; then
	ok "systemd-analyze verify"
else
	bad "systemd-analyze verify (rc=$rc): $out"
fi

# One RuntimeDirectory: DPDK uses $RUNTIME_DIRECTORY verbatim.
n=$(grep -c '^RuntimeDirectory=' "$unit")
words=$(sed -n 's/^RuntimeDirectory=//p' "$unit" | wc -w)
if [ "$n" -eq 1 ] && [ "$words" -eq 1 ]; then
	ok "exactly one RuntimeDirectory"
else
	bad "RuntimeDirectory: $n lines, $words entries"
fi

out=$(systemd-analyze security --offline=true "$unit" 2>&1)
score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
if [ -n "$score" ] && awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s <= m) }'; then
	ok "security exposure $score <= $max_exposure"
elif [ -z "$score" ]; then
	echo "ok - systemd-analyze security --offline unsupported # SKIP"
else
	bad "security exposure $score > $max_exposure"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
