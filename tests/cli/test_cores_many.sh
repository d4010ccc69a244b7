#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# /turbolb/cores of a turbolbd with the most host cores it supports
# (TLB_MAX_CORES, 256: include/turbolb/load_view.h) on net_null queues:
# every core comes back, through turbolbctl (which follows the pages),
# through a plain telemetry client following "next", and through
# dpdk-telemetry.py; no answer passes the budget of
# include/turbolb/telemetry_cores.h (12288 of DPDK's 16384 bytes). One
# answer for every core, as before the pages, lost the cores past about
# the 67th without a word. Nothing flows: the values are not the point.
# 1024 cores, past what one daemon takes, are tests/integration/
# test_telemetry_1024.c and tests/unit/test_telemetry_cores.c.
#
# Everything the daemon makes lives in one mktemp directory (DPDK runtime
# files via RUNTIME_DIRECTORY) under a unique file prefix. Last, turbolbctl
# against a fake telemetry server: pages of other sizes, a bad next.
#
#   test_cores_many.sh TURBOLBD TURBOLBCTL
set -u
turbolbd=$1
ctl=$2
pass=0
fail=0
daemon=
fake_pid=
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/tlb-cores-XXXXXX)
prefix=tlbcores-test-$$
n_cores=256
null_ports=4   # 64 queues each
budget=12288   # TLB_TEL_ANSWER_BUDGET

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { # check NAME COMMAND...: ok when COMMAND succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
ctl() { ${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" "$@"; }

cleanup() {
	if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
		kill -KILL "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	if [ -n "$fake_pid" ] && kill -0 "$fake_pid" 2>/dev/null; then
		kill "$fake_pid" 2>/dev/null
		wait "$fake_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

finish() {
	if [ $fail -ne 0 ] && [ -f "$tmp/turbolbd.log" ]; then
		echo "--- turbolbd log (its start)"
		head -n 30 "$tmp/turbolbd.log"
	fi
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ]
	exit
}

# Targets on queues of net_null ports that receive nothing (no-rx=1);
# credits in band, no host memory (transport none: every core running).
# Small descriptor rings and idle_sleep_us keep memory and CPU low.
cfg=$tmp/turbolbd.yaml
{
	cat <<EOF
eal:
  main_lcore: 0
  memory_mb: 256
  no_huge: true
  no_pci: true
  file_prefix: $prefix
  vdevs:
    - net_null_up,no-rx=1
EOF
	for p in $(seq 0 $((null_ports - 1))); do
		echo "    - net_null$p,no-rx=1"
	done
	cat <<EOF
  args: [ --log-level=lib.*:error ]
datapath:
  lcores: [1]
  idle_sleep_us: 1000
  rx_desc: 64
  tx_desc: 64
ports:
  uplink: { port: net_null_up }
  targets:
EOF
	for c in $(seq 0 $((n_cores - 1))); do
		echo "    - { core: $c, port: net_null$((c % null_ports)), queue: $((c / null_ports)) }"
	done
	cat <<EOF
policy:
  name: jsq
host:
  credits: inband
  transport: none
telemetry:
  enabled: true
EOF
} >"$cfg"
if out=$(${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$cfg" 2>&1) &&
   grep -q "$n_cores targets" <<<"$out"; then
	ok "config with $n_cores targets"
else
	bad "config with $n_cores targets: $out"
	finish
fi

export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
sock=$RUNTIME_DIRECTORY/dpdk/$prefix/dpdk_telemetry.v2

${MESON_EXE_WRAPPER:-} "$turbolbd" -c "$cfg" >"$tmp/turbolbd.log" 2>&1 &
daemon=$!

# Bounded waits, no timing asserted: turbolbd's commands are registered
# once its ports are up.
for _ in $(seq 600); do
	ctl stats --json >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
if ! kill -0 "$daemon" 2>/dev/null || ! ctl stats --json >/dev/null 2>&1; then
	bad "turbolbd is running and answers"
	finish
fi
ok "turbolbd is running and answers"

# turbolbctl cores --json: one answer of the bare command's shape.
if out=$(ctl cores --json 2>&1) && python3 -c '
import json, sys
doc = json.loads(sys.stdin.read())
n = int(sys.argv[1])
assert list(doc) == ["/turbolb/cores"], list(doc)
data = doc["/turbolb/cores"]
assert sorted(data, key=int) == [str(i) for i in range(n)], \
    "%d cores: %s" % (len(data), sorted(data, key=int)[-3:])
assert all(c["state"] == "running" and c["outstanding"] == 0 and
           c["dispatcher"] == 0 for c in data.values())
' "$n_cores" <<<"$out"; then
	ok "turbolbctl cores --json: all $n_cores cores"
else
	bad "turbolbctl cores --json: $(head -c 600 <<<"$out")"
fi

# The table: a row per core, in order, and the total.
out=$(ctl cores 2>&1)
rows=$(grep -Ec '^[0-9]+[[:space:]]+running[[:space:]]+0 ' <<<"$out")
if [ "$rows" -eq "$n_cores" ] &&
   [ "$(grep -E '^[0-9]+ ' <<<"$out" | awk '{print $1}' | tr '\n' ' ')" = "$(seq -s ' ' 0 $((n_cores - 1))) " ] &&
   grep -Eq '^all[[:space:]]+0 ' <<<"$out"; then
	ok "turbolbctl cores: $rows rows in core order and the total"
else
	bad "turbolbctl cores: $rows rows: $(tail -3 <<<"$out")"
fi

# A client of its own, as the docs tell one to page: the bare command,
# then FIRST from each "next". Each answer within the budget.
if out=$(python3 "$here/cores_pages.py" follow "$sock" "$n_cores" "$budget" 2>&1); then
	ok "telemetry client following next: every core once ($out)"
else
	bad "telemetry client following next: $out"
fi

# FIRST,COUNT, and parameters refused (a null answer: turbolbctl exit 3).
if out=$(ctl --json raw /turbolb/cores,100,5 2>&1) && python3 -c '
import json, sys
d = json.loads(sys.argv[1])["/turbolb/cores"]
assert sorted(d) == ["100", "101", "102", "103", "104", "next"], sorted(d)
assert d["next"] == 105
' "$out"; then
	ok "/turbolb/cores,100,5: cores 100 to 104, next 105"
else
	bad "/turbolb/cores,100,5: $out"
fi
ctl --json raw /turbolb/cores,abc >/dev/null 2>&1
check "/turbolb/cores,abc: refused, exit 3" test $? -eq 3

if command -v dpdk-telemetry.py >/dev/null; then
	out=$(echo /turbolb/cores,250 | dpdk-telemetry.py -f "$prefix" 2>&1)
	if python3 -c '
import json, sys
d = json.loads(sys.argv[1])["/turbolb/cores"]
assert sorted(d, key=int) == [str(i) for i in range(250, 256)], sorted(d)
' "$out" 2>/dev/null; then
		ok "dpdk-telemetry.py /turbolb/cores,250: the last 6 cores, no next"
	else
		bad "dpdk-telemetry.py /turbolb/cores,250: $(head -c 600 <<<"$out")"
	fi
else
	echo "ok - dpdk-telemetry.py not installed # SKIP"
fi

# --watch follows the pages on every refresh.
out=$(timeout --preserve-status -s INT 5 ${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" --watch -n 0.2 --json cores 2>&1)
rc=$?
# (on stdin: the samples are more than one argument may hold)
if [ $rc -eq 0 ] && python3 -c '
import json, sys
lines = [l for l in sys.stdin.read().splitlines() if l.startswith("{")]
assert len(lines) >= 2, len(lines)
for l in lines:
    d = json.loads(l)["/turbolb/cores"]
    assert sorted(d, key=int) == [str(i) for i in range(int(sys.argv[1]))]
' "$n_cores" <<<"$out"; then
	ok "cores --watch --json: every sample has every core"
else
	bad "cores --watch --json (rc=$rc): $(head -c 600 <<<"$out")"
fi

kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
check "SIGTERM: turbolbd exits 0 (got $rc)" test $rc -eq 0

# turbolbctl against a telemetry server of this test's own: pages of any
# size are merged in order; a next that does not move on ends it (exit
# 1, said) rather than looping. The server takes two connections, each
# with its own pages, and gives up after 30 s without one.
fake=$tmp/fake.sock
python3 "$here/cores_pages.py" fake-server "$fake" &
fake_pid=$!
for _ in $(seq 100); do
	[ -S "$fake" ] && break
	sleep 0.1
done
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -s "$fake" --json cores 2>&1)
if python3 -c '
import json, sys
d = json.loads(sys.argv[1])["/turbolb/cores"]
assert list(d) == ["0", "1", "2", "7", "9", "10"], list(d)
' "$out" 2>/dev/null; then
	ok "pages of 3, 1 and 2 cores merged in order, no next"
else
	bad "pages merged: $out"
fi
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -s "$fake" cores 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q 'does not move on' <<<"$out"; then
	ok "a next that does not move on: exit 1, said"
else
	bad "a next that does not move on (rc=$rc): $out"
fi
wait "$fake_pid"
rc=$?
fake_pid=
check "the fake server saw both connections through" test $rc -eq 0

finish
