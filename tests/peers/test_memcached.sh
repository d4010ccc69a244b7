#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# memcached over UDP through turbolbd with real software at both ends:
# four memcached servers, one per emulated host core (scripts/lib/peers.sh
# draws the topology), port 11211 served by the `memcached` protocol.
#
#   - memcaslap (libmemcached-tools) over UDP, single-key gets of 100-byte
#     values. It stores its own keys first (its warm-up sets, through
#     turbolbd too) with random names of its own, so no server can hold
#     them beforehand. Under rss each of its sockets stays on one core, the
#     one that stored the socket's keys: every get hits. Under jsq a get may
#     reach a server without the key: a miss, answered by one datagram
#     ('END') like a hit. Either way: memcaslap ends by itself with no
#     datagram dropped, out of order or timed out, and the daemon agrees
#     with it (gets + sets = steered = responses, no drops, every core's
#     outstanding count back to 0).
#   - tests/peers/mc_client.py, after storing its keys in every server
#     (over TCP, inside each server's namespace): values of 100 B, 1400 B
#     and 5000 B (one, two and four response datagrams), a miss, and
#     multi-key gets (one message per key found, a header-only datagram for
#     a leading miss), every value checked; the daemon steered every
#     request, forwarded every datagram, counted each request as exactly
#     one completion (none extra, none late) and every core's outstanding
#     count is back to 0.
# memcaslap aborts on a duplicated or late datagram and waits for ever for
# a lost one: it runs under timeout. Correctness only: no rate or latency
# is judged. Needs root.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
# shellcheck source=scripts/lib/topology.sh
. "$top/scripts/lib/topology.sh"
# shellcheck source=scripts/lib/peers.sh
. "$top/scripts/lib/peers.sh"
# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"

peers_require_root memcached memcaslap
peers_init peers-mc 4
echo "# run folder $TOPO_RUN"
MC=$top/tests/peers/mc_client.py
REPORT=$top/scripts/peers_report.py

check "namespaces, veths, static ARP" peers_net
for ((i = 0; i < PEERS_N; i++)); do
	check "memcached in server namespace $i" peers_start_memcached "$i"
	check "server $i preloaded" peers_in_srv "$i" python3 "$MC" preload "$PEERS_SRV_IP" 11211
done
peers_config 11211 memcached policy=rss
if ! check "turbolbd started, port 11211 as memcached" peers_start_daemon; then
	echo "$pass passed, $fail failed"
	exit 1
fi
check "a get crossed turbolbd" peers_wait_path \
	peers_in_cli python3 "$MC" ping "$PEERS_SRV_IP" 11211

all_zero() {
	local w
	for w in "$@"; do [ "$w" = 0 ] || { echo "    '$*' not all 0" >&2; return 1; }; done
}

# memcaslap: keys of 64 bytes, values of 100, gets only after its warm-up
# of 4 x 1024 sets (concurrency x window).
cat > "$TOPO_RUN/memcaslap.cfg" <<CFG
key
64 64 1
value
100 100 1
cmd
0 0.0
1 1.0
CFG
run_memcaslap() {
	peers_in_cli timeout -k 5 300 memcaslap -s "$PEERS_SRV_IP:11211" -U \
		-T 1 -c 4 -w 1k -x 2000 -F "$TOPO_RUN/memcaslap.cfg" \
		> "$1/memcaslap.txt" 2>&1
}
for policy in rss jsq; do
	check "$policy: switched live" peers_policy "$policy"
	dir=$TOPO_RUN/memcaslap-$policy
	mkdir -p "$dir"
	peers_snapshot "$dir" 0
	check "$policy: memcaslap ended by itself" run_memcaslap "$dir"
	peers_snapshot "$dir" 1
	if ! python3 "$REPORT" phase "$policy" "$dir" > "$dir/phase.json"; then
		check "$policy: memcaslap's summary" false
		tail -n 20 "$dir/memcaslap.txt" | sed 's/^/    /'
		continue
	fi
	read -r gets sets misses disorder dropped timeouts steered responses drops <<< \
		"$(peers_field "$dir" cmd_get cmd_set get_misses packet_disorder packet_drop \
			udp_timeout steered responses drops)"
	read -ra outstanding <<< "$(peers_field "$dir" outstanding)"
	echo "    $policy: memcaslap gets $gets, sets $sets, misses $misses," \
		"disorder $disorder, dropped $dropped, timeouts $timeouts;" \
		"daemon steered $steered, responses $responses, drops $drops;" \
		"per core $(peers_field "$dir" core_sent)"
	check "$policy: memcaslap made its 2000 gets" eq "$gets" 2000
	check "$policy: no datagram lost, out of order or timed out" \
		all_zero "$disorder" "$dropped" "$timeouts"
	check "$policy: daemon steered every get and set" eq "$steered" $((gets + sets))
	check "$policy: one response datagram each" eq "$responses" $((gets + sets))
	check "$policy: no drops" eq "$drops" 0
	check "$policy: one completion per get and set, none unanswered" \
		[ "$(peers_field "$dir" completions_inband)" = $((gets + sets)) -a \
		"$(peers_field "$dir" unanswered)" = 0 ]
	check "$policy: every core's outstanding count back to 0" all_zero "${outstanding[@]}"
	[ "$policy" != rss ] ||
		check "rss: a socket's gets reach the core that stored its keys: no misses" \
			eq "$misses" 0
done

# Our own client: every size, misses and multi-key gets, from 4 sockets.
ROUNDS=20
run_client() {
	peers_in_cli timeout -k 5 300 python3 "$MC" check "$PEERS_SRV_IP" 11211 \
		"$ROUNDS" 4 > "$1/client.json"
}
for policy in jsq rr; do
	check "$policy: switched live" peers_policy "$policy"
	dir=$TOPO_RUN/client-$policy
	mkdir -p "$dir"
	peers_snapshot "$dir" 0
	check "$policy: mc_client.py: every reply complete and right" run_client "$dir"
	peers_snapshot "$dir" 1
	python3 "$REPORT" phase "$policy" "$dir" > "$dir/phase.json"
	read -r requests datagrams steered responses drops completions extra late \
		followups unanswered idsfull <<< \
		"$(peers_field "$dir" requests datagrams steered responses drops \
			completions_inband completions_extra late_completions \
			response_followups unanswered request_ids_full)"
	read -ra outstanding <<< "$(peers_field "$dir" outstanding)"
	echo "    $policy: client requests $requests, datagrams $datagrams;" \
		"daemon steered $steered, responses $responses, completions $completions," \
		"extra $extra, late $late, drops $drops; per core $(peers_field "$dir" core_sent)"
	echo "    datagrams per get: $(peers_field "$dir" datagrams_per_get)"
	check "$policy: client made all its requests" eq "$requests" $((ROUNDS * 7))
	check "$policy: daemon steered every request" eq "$steered" "$requests"
	check "$policy: daemon forwarded every response datagram" eq "$responses" "$datagrams"
	check "$policy: one completion per request" eq "$completions" "$requests"
	check "$policy: no extra or late completions" all_zero "$extra" "$late"
	check "$policy: every datagram after a request's first a follow-up" \
		eq "$followups" $((datagrams - requests))
	check "$policy: no unanswered or evicted ids" all_zero "$unanswered" "$idsfull"
	check "$policy: no drops" eq "$drops" 0
	check "$policy: every core's outstanding count back to 0" all_zero "${outstanding[@]}"
done

topo_stop
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
