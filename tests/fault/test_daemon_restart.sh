#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: the daemon restarts under load. The server (turbolb-server) keeps
# running: it sees its credit ring go stale and reattaches to the new one,
# and restarts its memif port until the new daemon listens. So does the
# load generator that was running (phase A): it sees its link go down,
# writes off the requests in flight, restarts its memif port until the new
# daemon listens and resumes its schedule there; it is stopped once the new
# daemon has served it. A second load generator started after the restart
# (phase B) gets normal service (nothing lost).
#
# Accounting, before the restart: the old daemon logs its final counters at
# exit; phase A reports its counters as they stood when its link went down
# (first_link_down). Every request it had issued by then got a response, or
# was counted by the old daemon (drops), or was in flight at the host when
# the old daemon stopped (its messages - drop_tx_full - responses), or was
# in the memif ring to the old daemon when it stopped reading (tx_pkts -
# rx_uplink: at most a ring's worth), or never left the load generator
# (tx_dropped). After the restart: exact, as in the other tests, against
# the new daemon's counters, over phase A's requests after its link loss
# and phase B's.
#
# Disconnects: the server and phase A each see one (the old daemon
# leaving); the new daemon sees both load generators leave at the end. A crash from DPDK 22.11's memif disconnect race is reported
# with its backtrace, and the scenario is run once more (lib.sh:
# fault_retry_on_memif_race).
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"
fault_retry_on_memif_race "$@"

MEMIF_RING=1024 # turbolb-server's memif rings (the client sizes them)

fault_init daemon-restart
# Liveness is not under test here: a stale timeout far above any stall of
# this (loaded) machine keeps spurious stale cores out of phase B.
topo_config cores=4 policy=jsq credits=ring stale_us=5000000
fault_up

# Phase A: open-ended, across the restart. It waits for the new daemon as
# long as this test waits for anything (--link-wait); its timeout is long
# enough that no request the new daemon answers times out on this loaded
# machine, so its requests after the link loss are either answered or
# counted by the new daemon.
fault_lg_start A --rate 1000 --duration 3600 --dist fixed:20us --flows 32 \
	--timeout-ms 15000 --link-wait 600
LG_A=$FAULT_LG_PID
check "phase A: load reaches every core" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

old_dpid=$TOPO_DPID
topo_kill "$old_dpid"
cp "$TOPO_RUN/turbolbd.log" "$TOPO_RUN/turbolbd.1.log"
check "old daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.1.log"
check "new daemon started" fault_start_daemon
check "server survived the daemon's exit" alive "$SPID"
check "phase A load generator survived the daemon's exit" alive "$LG_A"
check "server reattached: every core online at the new daemon, link up" \
	topo_wait "[ \"\$(topo_cores_online)\" = 4 ] && topo_telemetry /ethdev/link_status,1 | grep -q UP" 900
check "phase A resumed: its load reaches every core of the new daemon" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show
kill -INT "$LG_A" 2>/dev/null
FAULT_LG_PID=$LG_A
check "phase A load generator stopped on SIGINT" fault_lg_wait A 1800
check "the new daemon counts no host restart (a first attach)" \
	eq "$(fstat host_restarts)" 0

# Phase B: a fresh load generator on the new daemon.
fault_lg_start B --rate 200 --requests 1000 --dist fixed:20us --flows 32 \
	--timeout-ms 15000
check "phase B: loadgen finished" fault_lg_wait B 1800
check "phase B: drained" fwait --until 'live_out == 0' --tries 600 --show
fault_snapshot end
# Phase A after its link loss, as a load generator record of its own for
# fault_account: what it issued since, and what of that it lost. Its
# responses after the loss that answered requests written off at the loss
# (late) are left out: those requests belong to the old daemon's side.
python3 "$FAULT_PY" link-loss-record "$TOPO_RUN/A.json" > "$TOPO_RUN/A.after.json"
extra=$(fstat completions_extra)
note "new daemon: completions_extra $extra (credits of requests the old daemon sent)"
fault_stop_all

# The gap and the recovery, as the load generators saw them.
python3 - "$TOPO_RUN/A.json" "$TOPO_RUN/B.json" > "$TOPO_RUN/phases.txt" <<'PY'
import json, sys
a, b = (json.loads(open(p).readline()) for p in sys.argv[1:3])
fd = a['first_link_down'] or {}
print('A', a['sent'] + a['warmup']['sent'], a['received'], a['lost'],
      int(a['tx_gave_up']), a['link_downs'], a['port_restarts'],
      fd.get('written_off', -1), a['link_skipped'])
print('B', b['sent'], b['received'], b['lost'], b['p99_ns'])
PY
read -r _ a_sent a_recv a_lost a_gave_up a_downs a_restarts a_woff a_skipped \
	< <(sed -n 1p "$TOPO_RUN/phases.txt")
read -r _ b_sent b_recv b_lost b_p99 < <(sed -n 2p "$TOPO_RUN/phases.txt")
note "phase A: sent ${a_sent:-?} received ${a_recv:-?} lost ${a_lost:-?} gave up ${a_gave_up:-?}"
note "phase A: link downs ${a_downs:-?} port restarts ${a_restarts:-?} written off ${a_woff:-?} skipped while down ${a_skipped:-?}"
note "phase B: sent ${b_sent:-?} received ${b_recv:-?} lost ${b_lost:-?} p99 ${b_p99:-?} ns"
check "phase A saw service, lost its link once, restarted its port and did not give up" \
	[ "${a_recv:-0}" -gt 0 -a "${a_downs:-0}" = 1 -a "${a_restarts:-0}" -ge 1 \
	  -a "${a_woff:--1}" -ge 0 -a "${a_gave_up:-1}" = 0 ]
check "phase B: 1000 sent, every one answered" \
	[ "${b_sent:-0}" = 1000 -a "${b_recv:-0}" = 1000 -a "${b_lost:-1}" = 0 ]

# Before the restart: the old daemon's final counters and phase A.
check "phase A: every request accounted for" python3 "$FAULT_PY" before-restart \
	"$TOPO_RUN/A.json" "$TOPO_RUN/turbolbd.1.log" "$MEMIF_RING"
check "phase A after its link loss and phase B: every request accounted for (exactly)" \
	fault_account end "$TOPO_RUN/A.after.json" "$TOPO_RUN/B.json"
srv=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["server"]
print(s["reattaches"], s["port_restarts"])' "$FAULT_SRV_JSON" 2>/dev/null)
note "server: reattaches, port restarts: ${srv:-?}"
check "server reattached its credit ring and restarted its port" \
	[ "${srv%% *}" -ge 1 -a "${srv##* }" -ge 1 ]
check "new daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
finish
