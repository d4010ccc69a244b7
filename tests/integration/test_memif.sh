#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Three processes on memif: turbolb-loadgen -> turbolbd -> turbolb-server and
# back. At a moderate rate every request gets exactly one response with its
# id; the daemon's counters agree with the load generator's and the
# server's; telemetry answers through dpdk-telemetry.py. Run once per
# credit mode, and with ring credits once per host transport that carries
# them (the shared-memory ring, feedback frames), and in-band credits with
# frames of run state and heartbeat beside them. No assertion on time:
# waits are bounded polls.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
# shellcheck source=tests/lib/topo_checks.sh
. "$top/tests/lib/topo_checks.sh"

run_mode() {
	local credits=$1 completions=$2 transport=${3:-shm}
	topo_init "memif-$credits-$transport"
	topo_config cores=4 policy=jsq credits="$credits" transport="$transport"
	topo_start_daemon || { fail=$((fail + 1)); return; }
	# A host that sends feedback frames says when its cores are there:
	# none is in rotation before its first frame, credits ring or inband.
	[ "$transport" != packet ] ||
		check "$credits/packet: no core in rotation before the server" \
			eq "$(topo_cores_online)" 0
	topo_start_server || { fail=$((fail + 1)); return; }

	local out=$TOPO_RUN/loadgen.json
	topo_loadgen "$out" --rate 2000 --requests 4000 --dist exp:2us \
		--flows 32 --timeout-ms 2000
	check_exactly_once "$credits" "$out" 4000
	# The daemon saw the same.
	check_daemon_agrees "$credits" "$completions"
	local sent=$LG_SENT
	local outstanding
	outstanding=$(topo_telemetry /turbolb/cores | python3 -c '
import json, sys
d = json.load(sys.stdin)["/turbolb/cores"]
print(sum(c["outstanding"] for c in d.values()))')
	check "$credits: nothing outstanding" eq "$outstanding" 0
	# jsq spread the load: every core served some of it.
	local spread
	spread=$(python3 -c '
import json, sys
pc = json.load(open(sys.argv[1]))["per_core"]
print(int(len(pc) >= 4 and min(pc[:4]) > 0))' "$out")
	check "$credits: every host core served requests" eq "$spread" 1
	local fb_daemon=0
	[ "$transport" != packet ] ||
		fb_daemon=$(topo_field /turbolb/stats feedback_frames)

	topo_stop
	local served
	served=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s.get("served", sum(c.get("served", 0) for c in s.get("cores", []))))' "$TOPO_RUN/server.json" 2>/dev/null)
	check "$credits: server served every request" eq "$served" "$sent"
	check "$credits: daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
	[ "$transport" != packet ] ||
		check_feedback "$credits/packet" "$TOPO_RUN/server.json" "$fb_daemon"
}

run_mode ring completions_credit
run_mode inband completions_inband
run_mode ring completions_credit packet
# Frames of run state and heartbeat only (turbolb-server --feedback state).
run_mode inband completions_inband packet

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
