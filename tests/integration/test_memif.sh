#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Three processes on memif: turbolb-loadgen -> turbolbd -> turbolb-server and
# back. At a moderate rate every request gets exactly one response with its
# id; the daemon's counters agree with the load generator's and the
# server's; telemetry answers through dpdk-telemetry.py. Run once per
# credit mode. No assertion on time: waits are bounded polls.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"

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
eq() { [ "$1" = "$2" ] || { echo "    $1 != $2" >&2; return 1; }; }

stat() { topo_telemetry /turbolb/stats | python3 -c "import json,sys; print(json.load(sys.stdin)['/turbolb/stats']['$1'])"; }

run_mode() {
	local credits=$1 completions=$2
	topo_init "memif-$credits"
	topo_config cores=4 policy=jsq credits="$credits"
	topo_start_daemon || { fail=$((fail + 1)); return; }
	topo_start_server || { fail=$((fail + 1)); return; }

	local out=$TOPO_RUN/loadgen.json
	topo_loadgen "$out" --rate 2000 --requests 4000 --dist exp:2us \
		--flows 32 --timeout-ms 2000
	check "$credits: loadgen ran" [ -s "$out" ]
	local sent received lost dups unknown
	sent=$(topo_json "$out" sent)
	received=$(topo_json "$out" received)
	lost=$(topo_json "$out" lost)
	dups=$(topo_json "$out" duplicates)
	unknown=$(topo_json "$out" unknown)
	echo "    sent=$sent received=$received lost=$lost duplicates=$dups unknown=$unknown"
	check "$credits: 4000 requests sent" eq "$sent" 4000
	check "$credits: every request answered" eq "$received" "$sent"
	check "$credits: none lost" eq "$lost" 0
	check "$credits: no duplicate responses" eq "$dups" 0
	check "$credits: no unknown ids" eq "$unknown" 0

	# The daemon saw the same: credits may trail the responses a little.
	topo_wait "[ \"\$(stat $completions)\" = $sent ]" 30
	check "$credits: daemon steered every request" eq "$(stat messages)" "$sent"
	check "$credits: daemon forwarded every response" eq "$(stat responses)" "$received"
	check "$credits: completions counted from $completions" eq "$(stat $completions)" "$sent"
	check "$credits: no drops" eq "$(stat drops)" 0
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

	topo_stop
	local served
	served=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
print(s.get("served", sum(c.get("served", 0) for c in s.get("cores", []))))' "$TOPO_RUN/server.json" 2>/dev/null)
	check "$credits: server served every request" eq "$served" "$sent"
	check "$credits: daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
}

run_mode ring completions_credit
run_mode inband completions_inband

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
