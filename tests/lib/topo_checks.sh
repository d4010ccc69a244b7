# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Checks shared by the three-process tests on scripts/lib/topology.sh.
# Source it after topology.sh and tests/lib/check.sh, then:
#
#   topo_field CMD KEY             one field of a telemetry answer
#   check_exactly_once WHAT OUT N  the loadgen result in OUT: N requests
#                                  sent, every one answered once, no stray
#                                  responses; sets LG_SENT and LG_RECEIVED
#   check_daemon_agrees WHAT COMPLETIONS
#                                  the daemon steered LG_SENT requests,
#                                  forwarded LG_RECEIVED responses, counted
#                                  LG_SENT completions in the counter
#                                  COMPLETIONS (credits may trail the
#                                  responses: a bounded wait) and dropped
#                                  nothing
#   check_feedback WHAT SERVER_JSON N
#                                  host.transport: packet: the daemon took
#                                  N > 0 feedback frames (read before the
#                                  stop) and the server sent at least as
#                                  many (its last ones, after the daemon
#                                  stopped, find no peer); says how many
#                                  per response

topo_field() {
	topo_telemetry "$1" | python3 -c "import json,sys; print(json.load(sys.stdin)['$1']['$2'])"
}

check_exactly_once() {
	local what=$1 out=$2 n=$3 lost dups unknown
	check "$what: loadgen ran" [ -s "$out" ]
	LG_SENT=$(topo_json "$out" sent)
	LG_RECEIVED=$(topo_json "$out" received)
	lost=$(topo_json "$out" lost)
	dups=$(topo_json "$out" duplicates)
	unknown=$(topo_json "$out" unknown)
	echo "    sent=$LG_SENT received=$LG_RECEIVED lost=$lost duplicates=$dups unknown=$unknown"
	check "$what: $n requests sent" eq "$LG_SENT" "$n"
	check "$what: every request answered" eq "$LG_RECEIVED" "$LG_SENT"
	check "$what: none lost" eq "$lost" 0
	check "$what: no duplicate responses" eq "$dups" 0
	check "$what: no unknown ids" eq "$unknown" 0
}

check_daemon_agrees() {
	local what=$1 completions=$2
	topo_wait "[ \"\$(topo_field /turbolb/stats $completions)\" = $LG_SENT ]" 30
	check "$what: daemon steered every request" \
		eq "$(topo_field /turbolb/stats messages)" "$LG_SENT"
	check "$what: daemon forwarded every response" \
		eq "$(topo_field /turbolb/stats responses)" "$LG_RECEIVED"
	check "$what: completions counted from $completions" \
		eq "$(topo_field /turbolb/stats "$completions")" "$LG_SENT"
	check "$what: no drops" eq "$(topo_field /turbolb/stats drops)" 0
}

check_feedback() {
	local what=$1 json=$2 taken=$3 sent
	sent=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["feedback"]["frames"])' "$json")
	echo "    feedback frames: daemon took $taken, server sent $sent, $LG_RECEIVED responses"
	check "$what: the daemon took feedback frames" [ "$taken" -gt 0 ]
	check "$what: the server sent every frame the daemon took" [ "$sent" -ge "$taken" ]
}
