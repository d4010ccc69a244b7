#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: the host cores' TX rings fill up. The whole server stops (SIGSTOP)
# while the load goes on, with a stale timeout long enough that the daemon
# keeps steering to it until the memif rings to the server are full:
#
#   - every request refused by a full ring is counted (drop_tx_full) and
#     uncharged, the daemon keeps running and answering telemetry;
#   - a refused request is uncharged, not counted as a completion: the
#     stopped cores' `completed` does not move;
#   - once its ring is full, a stopped core is marked stale after
#     host.stale_timeout_us like any core that completes nothing (a TX-full
#     drop is not progress of the host), and new requests are dropped as
#     drop_no_core instead of being pushed at a ring that takes nothing;
#   - after SIGCONT the cores serve again and take every new request;
#   - no mbuf leaks: the daemon's pool has as many mbufs in use as before
#     the fault once traffic stops (mbufs_in_use in /turbolb/stats);
#   - every request the load generator issued is accounted for.
#
# No memif peer leaves before the end. No assertion on time.
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"

fault_init tx-full
# 10 s: at 2000 rps over 2 cores a memif ring of 1024 fills in about 1 s,
# so the rings are full well before a stopped core could be stale, even if
# this machine delivers a fraction of the rate.
# Stale, never written off: a written-off core is probed, and a probe
# pushed at a full ring is a drop_tx_full this test says no more of.
topo_config cores=2 policy=jsq credits=ring stale_us=10000000 \
	write_off_us=600000000
fault_up

have_mbufs=$(ftel /turbolb/stats | python3 -c 'import json,sys; print(int("mbufs_in_use" in json.load(sys.stdin)))')
check "/turbolb/stats reports mbufs_in_use (the pool's in-use count)" eq "$have_mbufs" 1
mbufs_idle=
if [ "$have_mbufs" = 1 ]; then
	mbufs_idle=$(fstat mbufs_in_use)
	note "idle: $mbufs_idle mbufs in use of $(fstat mbufs_total)"
fi

fault_lg_start load --rate 2000 --duration 3600 --dist fixed:5us --flows 32 \
	--timeout-ms 60000
check "load reaches both cores" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

check "server stopped (SIGSTOP)" fault_sigstop "$SPID"
check "rings full: requests refused by them counted drop_tx_full" \
	fwait --until "s['drop_tx_full'] >= 1" --tries 900 --show
check "daemon alive, telemetry answers" alive "$TOPO_DPID"
check "a refused request is not a completion: completed stays while the host is stopped" \
	fwait --until "grown('drop_tx_full') >= 200" \
	--always "all(c[k]['completed'] == b_c[k]['completed'] for k in cores)" \
	--tries 600 --show
# Nothing reaches the host any more, so nothing can complete: after the
# stale timeout the cores are out of rotation, however many requests the
# full rings refused meanwhile (a refusal is not progress of the host).
check "stopped cores with full rings marked stale" \
	fwait --until "n_stale == len(cores)" --tries 600 --show
note "drop_tx_full when they went stale: $(fstat drop_tx_full)"
check "then no more pushing at full rings: drop_no_core, not drop_tx_full" \
	fwait --until "grown('drop_no_core') >= 200" \
	--always "grown('drop_tx_full') == 0" --tries 600 --show
fault_sigcont "$SPID"
check "server resumed: no core stale, its backlog served" \
	fwait --until "n_stale == 0 and total_out <= 64" --tries 900 --show
# Requests, that is: a response may still meet a full ring to a load
# generator that this machine is slow to schedule (drop_uplink_tx_full).
check "after the fault: 500 more requests steered, none dropped" \
	fwait --until "grown('messages') >= 500" \
	--always "grown('drop_tx_full') + grown('drop_no_core') == 0" \
	--tries 1800 --show

kill -INT "$FAULT_LG_PID"
check "loadgen finished" fault_lg_wait load 1800
check "drained: nothing outstanding" \
	fwait --until 'total_out == 0 and s["fifo_depth"] == 0' --tries 600 --show
if [ "$have_mbufs" = 1 ]; then
	check "no mbuf leak: in use back to the idle $mbufs_idle" \
		fwait --until "s['mbufs_in_use'] <= $mbufs_idle" --tries 300 --show
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
print("    loadgen: sent %d received %d lost %d late %d tx_dropped %d" %
      (r["sent"], r["received"], r["lost"], r["late"], r["tx_dropped"]))' \
	"$TOPO_RUN/load.json" 2>/dev/null
nombuf=$(ftel /ethdev/stats,1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["rx_nombuf"])')
check "host port never ran out of mbufs" eq "$nombuf" 0
fault_snapshot end
fault_stop_all
check "every request accounted for" fault_account end "$TOPO_RUN/load.json"
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
finish
