#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# turbolbctl against a real turbolbd with no peers connected: JSON and
# table output, socket discovery, exit codes, --watch; then SIGTERM and a
# clean exit. Everything the daemon makes lives in one mktemp directory
# (memif sockets, DPDK runtime files via RUNTIME_DIRECTORY, as under the
# systemd unit) with a unique file prefix and credit ring name, so runs
# in parallel do not meet.
#
#   test_turbolbctl.sh TURBOLBD TURBOLBCTL SRCDIR
set -u
turbolbd=$1
ctl=$2
src=$3
pass=0
fail=0
daemon=
tmp=$(mktemp -d /tmp/tlb-ctl-XXXXXX)
prefix=tlbctl-test-$$
ring=/tlbctl-test-$$

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { # check NAME COMMAND...: ok when COMMAND succeeds
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

cleanup() {
	if [ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null; then
		kill -KILL "$daemon" 2>/dev/null
		wait "$daemon" 2>/dev/null
	fi
	rm -f "/dev/shm$ring"
	rm -rf "$tmp"
}
trap cleanup EXIT

finish() {
	if [ $fail -ne 0 ] && [ -f "$tmp/turbolbd.log" ]; then
		echo "--- turbolbd log"
		cat "$tmp/turbolbd.log"
	fi
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ]
	exit
}

# The shipped emulation config, moved into $tmp. idle_sleep_us: the poll
# loop need not take a whole CPU from the other tests of a small machine.
cfg=$tmp/turbolbd.yaml
sed -e "s|^\([[:space:]]*file_prefix:[[:space:]]*\)[^[:space:]#]*|\1$prefix|" \
    -e "s|^\([[:space:]]*credit_ring:[[:space:]]*\)[^[:space:]#]*|\1$ring|" \
    -e "s|^\([[:space:]]*idle_sleep_us:[[:space:]]*\)[0-9]*|\1100|" \
    -e "s|/run/turbolb/|$tmp/|g" \
    "$src/configs/turbolbd.yaml" >"$cfg"
if grep -q "file_prefix: $prefix" "$cfg" && grep -q "credit_ring: $ring" "$cfg" &&
   ! grep -q /run/turbolb/ "$cfg" && ${MESON_EXE_WRAPPER:-} "$turbolbd" --check-config "$cfg" >/dev/null; then
	ok "test config written"
else
	bad "test config written"
	finish
fi

export RUNTIME_DIRECTORY=$tmp/rt
mkdir -p "$RUNTIME_DIRECTORY"
sock=$RUNTIME_DIRECTORY/dpdk/$prefix/dpdk_telemetry.v2

${MESON_EXE_WRAPPER:-} "$turbolbd" -c "$cfg" >"$tmp/turbolbd.log" 2>&1 &
daemon=$!

# Bounded waits, no timing asserted: first the socket (EAL init), then
# turbolbd's own commands (registered after the ports are up).
for _ in $(seq 300); do
	[ -S "$sock" ] && break
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
check "telemetry socket appears" test -S "$sock"
for _ in $(seq 300); do
	${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" stats --json >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
if ! kill -0 "$daemon" 2>/dev/null; then
	bad "turbolbd is running"
	finish
fi

json_check() { # json_check NAME PYTHON-EXPR CTL-ARGS...: data is the answer
	local name=$1 expr=$2 out
	shift 2
	if ! out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" "$@" 2>&1); then
		bad "$name (turbolbctl $*: exit $?): $out"
		return
	fi
	if python3 -c '
import json, sys
doc = json.loads(sys.argv[1])
if len(doc) != 1:
    sys.exit("not one key: %r" % list(doc))
data = list(doc.values())[0]
sys.exit(0 if eval(sys.argv[2]) else "false: " + sys.argv[2])
' "$out" "$expr"; then
		ok "$name"
	else
		bad "$name: $out"
	fi
}

json_check "stats --json has rx_uplink, steered, drops" \
	'all(isinstance(data.get(k), int) for k in ("rx_uplink", "steered", "drops"))' \
	stats --json
json_check "cores --json: 4 cores, each outstanding 0" \
	'sorted(data) == ["0", "1", "2", "3"] and all(c["outstanding"] == 0 for c in data.values())' \
	cores --json
json_check "raw /turbolb/cores,1,2: a page of cores 1 and 2, next 3" \
	'sorted(data) == ["1", "2", "next"] and data["next"] == 3' \
	--json raw /turbolb/cores,1,2
json_check "config --json: policy jsq" 'data["policy"] == "jsq"' config --json
json_check "raw /ethdev/list: 2 ports" 'data == [0, 1]' --json raw /ethdev/list

out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" config 2>&1)
check "config shows policy jsq" grep -Eq '^policy[[:space:]]+jsq$' <<<"$out"
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy 2>&1)
check "policy shows jsq" grep -q '^jsq' <<<"$out"
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" stats 2>&1)
check "stats table" grep -Eq '^  rx_uplink[[:space:]]+0$' <<<"$out"
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" cores 2>&1)
check "cores table has 4 offline cores" \
	test "$(grep -Ec '^[0-3][[:space:]]+offline[[:space:]]+0 ' <<<"$out")" -eq 4
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -s "$sock" --json stats 2>&1)
check "-s PATH" grep -q '"/turbolb/stats"' <<<"$out"

# Switching and reloading: where turbolbd has the commands they must
# work (0) and a bad policy be refused (3); where it has not, turbolbctl
# must say so (3, "does not support").
out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy jbsq:4 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
	out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy 2>&1)
	check "policy jbsq:4 switches" grep -q '^jbsq (k=4' <<<"$out"
	out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy nosuch 2>&1)
	rc=$?
	if [ $rc -eq 3 ] && grep -q "refused" <<<"$out"; then
		ok "unknown policy refused: exit 3"
	else
		bad "unknown policy (rc=$rc): $out"
	fi
	out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" reload 2>&1)
	rc=$?
	check "reload: exit 0 (got $rc: $out)" test $rc -eq 0
	out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy 2>&1)
	check "reload restores the file's policy jsq" grep -q '^jsq' <<<"$out"
elif [ $rc -eq 3 ] && grep -q "does not support" <<<"$out"; then
	ok "policy jbsq:4: not supported by this turbolbd, said so"
	out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" reload 2>&1)
	rc=$?
	if [ $rc -eq 3 ] && grep -q "does not support" <<<"$out"; then
		ok "reload: not supported by this turbolbd, said so"
	else
		bad "reload (rc=$rc): $out"
	fi
else
	bad "policy jbsq:4 (rc=$rc): $out"
fi

# --watch: JSON lines until SIGINT, then exit 0.
out=$(timeout --preserve-status -s INT 3 ${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" --watch -n 0.2 --json stats 2>&1)
rc=$?
lines=$(grep -c '^{"/turbolb/stats":' <<<"$out")
if [ $rc -eq 0 ] && [ "$lines" -ge 2 ]; then
	ok "--watch --json: $lines samples, exit 0 on SIGINT"
else
	bad "--watch --json (rc=$rc, $lines samples): $out"
fi

# The same answer dpdk-telemetry.py gets, where it is installed.
if command -v dpdk-telemetry.py >/dev/null; then
	a=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" config --json)
	b=$(echo /turbolb/config | dpdk-telemetry.py -f "$prefix" 2>&1)
	if python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1]) != json.loads(sys.argv[2]))' "$a" "$b" 2>/dev/null; then
		ok "config agrees with dpdk-telemetry.py"
	else
		bad "config differs from dpdk-telemetry.py: $a vs $b"
	fi
else
	echo "ok - dpdk-telemetry.py not installed # SKIP"
fi

out=$(${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix-nobody" stats 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "$RUNTIME_DIRECTORY/dpdk/$prefix-nobody/dpdk_telemetry.v2" <<<"$out"; then
	ok "unreachable prefix: exit 1, names the socket"
else
	bad "unreachable prefix (rc=$rc): $out"
fi
${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" bogus >/dev/null 2>&1
check "unknown command exits 2" test $? -eq 2
${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" policy 'bad,name' >/dev/null 2>&1
check "bad policy argument exits 2" test $? -eq 2

kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
check "SIGTERM: turbolbd exits 0 (got $rc)" test $rc -eq 0
${MESON_EXE_WRAPPER:-} "$ctl" -f "$prefix" stats >/dev/null 2>&1
check "after exit: unreachable, exit 1" test $? -eq 1

finish
