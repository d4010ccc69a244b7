#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One port per host core, the BlueField shape (a VF per core, one
# representor per VF on the DPU): turbolbd has a memif port per host core
# and turbolb-server --port-per-core polls queue 0 of port i on core i.
# Run three times: with the shared-memory credit ring; with transport none +
# in-band credits (the server has no --credit-ring at all); and with ring
# credits over transport packet, what runs on hardware (the server sends
# feedback frames on each core's port, turbolbd takes them off the
# target RX path). Each run: every request answered
# once, the daemon's counters agree with the load generator's and the
# server's, every core served requests on its own port. Then the server's
# refusals of port lists that do not fit. No assertion on time: waits are
# bounded polls.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
# shellcheck source=tests/lib/topo_checks.sh
. "$top/tests/lib/topo_checks.sh"

N=4

run_mode() {
	local transport=$1 credits=$2 completions=$3 name="$1/$2"
	topo_init "ppc-$transport"
	topo_config cores=$N policy=jsq credits="$credits" transport="$transport" \
		port_per_core=true
	topo_start_daemon || { fail=$((fail + 1)); return; }
	check "$name: daemon runs on transport $transport" \
		eq "$(topo_field /turbolb/config transport)" "$transport"
	topo_start_server || { fail=$((fail + 1)); return; }

	local out=$TOPO_RUN/loadgen.json
	topo_loadgen "$out" --rate 2000 --requests 4000 --dist exp:2us \
		--flows 32 --timeout-ms 2000
	check_exactly_once "$name" "$out" 4000
	check_daemon_agrees "$name" "$completions"
	local sent=$LG_SENT
	# Each host port carried its own core's requests only: port p+1 is
	# target p; its TX packets are what the daemon sent to core p.
	local per_port
	per_port=$(for ((p = 1; p <= N; p++)); do
		topo_telemetry "/ethdev/stats,$p" | python3 -c '
import json, sys
print(next(iter(json.load(sys.stdin).values()))["opackets"])'
	done | paste -sd,)
	local sent_per_core
	sent_per_core=$(topo_telemetry /turbolb/cores | python3 -c "
import json, sys
d = json.load(sys.stdin)['/turbolb/cores']
print(','.join(str(d[str(i)]['sent']) for i in range($N)))")
	echo "    packets out per host port: $per_port; sent per core: $sent_per_core"
	check "$name: port i+1 carried exactly core i's requests" \
		eq "$per_port" "$sent_per_core"
	local fb_daemon=0
	[ "$transport" != packet ] ||
		fb_daemon=$(topo_field /turbolb/stats feedback_frames)

	topo_stop
	local layout served_ok
	layout=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s["server"]["port_per_core"], len(s["server"]["ports"]),
      len(set(c["port"] for c in s["cores"])),
      all(c["queue"] == 0 for c in s["cores"]),
      s["server"]["credit_ring"])' "$TOPO_RUN/server.json" 2>/dev/null)
	local want_ring=$TOPO_RING
	[ "$transport" = shm ] || want_ring=None
	check "$name: server used a port per core, queue 0 each" \
		eq "$layout" "True $N $N True $want_ring"
	# jsq spread the load over the four ports' cores; each core's served
	# count is what the daemon sent it.
	served_ok=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
want = [int(x) for x in sys.argv[2].split(",")]
got = [c["served"] for c in s["cores"]]
print(int(got == want and min(got) > 0 and s["total"]["served"] == int(sys.argv[3])))' \
		"$TOPO_RUN/server.json" "$sent_per_core" "$sent" 2>/dev/null)
	check "$name: every core served on its own port what the daemon sent it" \
		eq "$served_ok" 1
	check "$name: daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
	[ "$transport" != packet ] ||
		check_feedback "$name" "$TOPO_RUN/server.json" "$fb_daemon"
}

run_mode shm ring completions_credit
run_mode none inband completions_inband
run_mode packet ring completions_credit

# The server refuses port lists that do not fit the cores, before serving.
srv_refuses() {
	local want=$1 log
	shift
	log=$(mktemp)
	${MESON_EXE_WRAPPER:-} "$TLBSRV" --no-huge -m 64 --no-shconf --lcores='0@0,(1-2)@0' \
		--log-level=lib.*:warning "$@" > "$log" 2>&1
	local rc=$?
	if [ "$rc" -ne 0 ] && grep -q -- "$want" "$log"; then
		rm -f "$log"
		return 0
	fi
	echo "    rc=$rc, output:" >&2
	sed 's/^/    /' "$log" >&2
	rm -f "$log"
	return 1
}
check "server: --port-per-core with fewer ports than cores is refused" \
	srv_refuses "needs 2 ports, the EAL has 1" --vdev=net_null0 \
	-- --cores 2 --port-per-core
check "server: --port twice without --port-per-core is refused" \
	srv_refuses "one port serves every core unless --port-per-core" \
	--vdev=net_null0 --vdev=net_null1 -- --cores 2 --port net_null0 --port net_null1
check "server: --port-per-core naming one port twice is refused" \
	srv_refuses "net_null0 named twice" --vdev=net_null0 --vdev=net_null1 \
	-- --cores 2 --port-per-core --port net_null0 --port net_null0
check "server: --port-per-core with a port count unlike --cores is refused" \
	srv_refuses "given 1 times for --cores 2" --vdev=net_null0 --vdev=net_null1 \
	-- --cores 2 --port-per-core --port net_null0

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
