#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DNS through turbolbd with real software at both ends: dnsperf in the
# client namespace, four nsd servers, one per emulated host core
# (scripts/lib/peers.sh draws the topology), port 53 served by the `dns`
# protocol. For each policy, dnsperf sends a fixed number of queries at a
# fixed rate over several flows, and the test checks that:
#   - every query was answered (dnsperf: completed = sent, 0 lost, all
#     NOERROR);
#   - the daemon agrees: queries sent = steered = requests (messages) =
#     completions = responses, no drops, no follow-up, unanswered or
#     evicted ids, the per-core counts add up to the steered count, and
#     every core's outstanding count is back to 0;
#   - the per-core counts follow the policy: rss keeps a flow on one core
#     (one flow at a time: all its queries on one core); rr deals the
#     queries out evenly (per core within one of each other); jsq, jlq and
#     jbsq, with eight flows, give every core some.
# Correctness only: no rate or latency is judged. Needs root.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
# shellcheck source=scripts/lib/topology.sh
. "$top/scripts/lib/topology.sh"
# shellcheck source=scripts/lib/peers.sh
. "$top/scripts/lib/peers.sh"
# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"

peers_require_root nsd dnsperf
peers_init peers-dns 4
echo "# run folder $TOPO_RUN"

# 400 queries per policy (the 100 names, 4 times) at 1000/s over 8
# flows (dnsperf clients, each its own source port); a query unanswered
# for 10 s is lost. The rate is low enough for the 2-CPU machines the
# suite runs on.
RUNS=4 RATE=1000 FLOWS=8
N=$((100 * RUNS))
DNSPERF=(-n "$RUNS" -Q "$RATE" -c "$FLOWS" -t 10)

check "namespaces, veths, static ARP" peers_net
for ((i = 0; i < PEERS_N; i++)); do
	check "nsd in server namespace $i" peers_start_nsd "$i"
done
peers_config 53 dns policy=rss
if ! check "turbolbd started, port 53 as dns" peers_start_daemon; then
	echo "$pass passed, $fail failed"
	exit 1
fi
check "a query crossed turbolbd" peers_wait_path peers_dns_probe
peers_dns_queries

# all_equal VALUE WORDS..: every word is VALUE.
all_equal() {
	local v=$1 w
	shift
	for w in "$@"; do [ "$w" = "$v" ] || { echo "    '$*' not all $v" >&2; return 1; }; done
}
# all_positive WORDS..: every word is above 0.
all_positive() {
	local w
	for w in "$@"; do [ "$w" -gt 0 ] || { echo "    '$*': a core got none" >&2; return 1; }; done
}
# within_one WORDS..: the largest is at most one above the smallest.
within_one() {
	local lo=$1 hi=$1 w
	for w in "$@"; do
		[ "$w" -lt "$lo" ] && lo=$w
		[ "$w" -gt "$hi" ] && hi=$w
	done
	[ $((hi - lo)) -le 1 ] || { echo "    '$*': spread $((hi - lo))" >&2; return 1; }
}
# one_core TOTAL WORDS..: one word is TOTAL, the others 0.
one_core() {
	local total=$1 w hit=0
	shift
	for w in "$@"; do
		if [ "$w" = "$total" ]; then
			hit=$((hit + 1))
		elif [ "$w" != 0 ]; then
			echo "    '$*': not all on one core" >&2
			return 1
		fi
	done
	[ "$hit" = 1 ] || { echo "    '$*': not all on one core" >&2; return 1; }
}
sum() {
	local s=0 w
	for w in "$@"; do s=$((s + w)); done
	echo "$s"
}

# phase_checks DIR TOTAL: what every phase must show.
phase_checks() {
	local dir=$1 total=$2 what=$3
	local sent completed lost steered responses drops
	local messages completions followups unanswered idsfull
	read -r sent completed lost steered responses drops messages completions \
		followups unanswered idsfull <<< \
		"$(peers_field "$dir" sent completed lost steered responses drops \
			messages completions_inband response_followups unanswered \
			request_ids_full)"
	local -a per_core outstanding
	read -ra per_core <<< "$(peers_field "$dir" core_sent)"
	read -ra outstanding <<< "$(peers_field "$dir" outstanding)"
	echo "    $what: dnsperf sent $sent, completed $completed, lost $lost;" \
		"daemon steered $steered, responses $responses, drops $drops;" \
		"per core ${per_core[*]}"
	check "$what: dnsperf sent all $total queries" eq "$sent" "$total"
	check "$what: every query answered, none lost" \
		[ "$completed" = "$total" -a "$lost" = 0 ]
	check "$what: every answer NOERROR" \
		grep -q "NOERROR $total (100.00%)" "$dir/dnsperf.txt"
	check "$what: daemon steered every query" eq "$steered" "$total"
	check "$what: daemon forwarded every response" eq "$responses" "$total"
	check "$what: no drops" eq "$drops" 0
	check "$what: each query one request, one completion (messages, completions)" \
		[ "$messages" = "$total" -a "$completions" = "$total" ]
	check "$what: no follow-up, unanswered or evicted ids" \
		all_equal 0 "$followups" "$unanswered" "$idsfull"
	check "$what: per-core counts add up" eq "$(sum "${per_core[@]}")" "$steered"
	check "$what: every core's outstanding count back to 0" \
		all_equal 0 "${outstanding[@]}"
}

for policy in rss rr jsq jlq jbsq; do
	check "$policy: switched live" peers_policy "$policy"
	dir=$TOPO_RUN/$policy
	check "$policy: dnsperf ran to its end" peers_dnsperf "$dir" "$policy" "${DNSPERF[@]}"
	[ -s "$dir/phase.json" ] || { sed 's/^/    /' "$dir/dnsperf.txt" | tail -n 20; continue; }
	phase_checks "$dir" "$N" "$policy"
	read -ra per_core <<< "$(peers_field "$dir" core_sent)"
	case $policy in
	rss)
		# One flow at a time: each lands on one core, whole.
		for port in 40001 40002 40003; do
			d=$TOPO_RUN/rss-flow$port
			check "rss: one flow (source port $port) ran" \
				peers_dnsperf "$d" rss -n 1 -Q "$RATE" -c 1 -x "$port" -t 10
			[ -s "$d/phase.json" ] || continue
			phase_checks "$d" 100 "rss, flow $port"
			read -ra flow_core <<< "$(peers_field "$d" core_sent)"
			check "rss: flow $port on one core" one_core 100 "${flow_core[@]}"
		done
		;;
	rr) check "rr: every core within one of the others" within_one "${per_core[@]}" ;;
	*) check "$policy: every core got queries ($FLOWS flows)" all_positive "${per_core[@]}" ;;
	esac
done

python3 "$top/scripts/peers_report.py" table "$TOPO_RUN"/{rss,rr,jsq,jlq,jbsq}/phase.json 2>/dev/null |
	sed 's/^/    /'
topo_stop
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
