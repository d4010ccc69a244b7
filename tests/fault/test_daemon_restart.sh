#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: the daemon restarts under load. The server (turbolb-server) keeps
# running: it sees its credit ring go stale and reattaches to the new one,
# and restarts its memif port until the new daemon listens. The load
# generator that was running sees the gap (its memif client does not
# reconnect in DPDK 22.11: it stalls, gives up and reports); a second one
# started after the restart gets normal service (nothing lost).
#
# Accounting, before the restart: the old daemon logs its final counters at
# exit. Every request of the first load generator got a response, or was
# counted by the old daemon (drops), or was in flight at the host when the
# old daemon stopped (its messages - drop_tx_full - responses), or was in
# the memif ring to the old daemon when it stopped reading (tx_pkts -
# rx_uplink: at most a ring's worth), or never left the load generator
# (tx_dropped). After the restart: exact, as in the other tests, against
# the new daemon's counters.
#
# Disconnects: the server and the first load generator each see one (the
# old daemon leaving); the new daemon sees the second load generator leave
# at the end. A crash from DPDK 22.11's memif disconnect race is reported
# with its backtrace, and the scenario is run once more (lib.sh:
# fault_retry_on_memif_race).
set -u
BUILD=${1:-build}
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"
fault_retry_on_memif_race "$@"

MEMIF_RING=1024 # turbolb-server's memif rings (the client sizes them)

fault_init daemon-restart
# Liveness is not under test here: a stale timeout far above any stall of
# this (loaded) machine keeps spurious stale cores out of phase B.
topo_config cores=4 policy=jsq credits=ring stale_us=5000000
if ! fault_start_daemon || ! fault_start_server; then
	check "topology up" false
	finish
	exit
fi
SPID=$TOPO_SPID
FAULT_SRV_STATS=$FAULT_SRV_JSON

# Phase A: open-ended; the restart ends it (the sender gives up after a
# whole --timeout-ms stuck on a port that is down).
fault_lg_start A --rate 1000 --duration 3600 --dist fixed:20us --flows 32 \
	--timeout-ms 2000
LG_A=$FAULT_LG_PID
check "phase A: load reaches every core" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

old_dpid=$TOPO_DPID
topo_kill "$old_dpid"
cp "$TOPO_RUN/turbolbd.log" "$TOPO_RUN/turbolbd.1.log"
check "old daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.1.log"
check "new daemon started" fault_start_daemon
check "server survived the daemon's exit" alive "$SPID"
FAULT_LG_PID=$LG_A
check "phase A load generator ended by itself" fault_lg_wait A 900
check "server reattached: every core online at the new daemon, link up" \
	topo_wait "[ \"\$(topo_cores_online)\" = 4 ] && topo_telemetry /ethdev/link_status,1 | grep -q UP" 900
check "the new daemon counts no host restart (a first attach)" \
	eq "$(fstat host_restarts)" 0

# Phase B: a fresh load generator on the new daemon.
fault_lg_start B --rate 200 --requests 1000 --dist fixed:20us --flows 32 \
	--timeout-ms 15000
check "phase B: loadgen finished" fault_lg_wait B 1800
check "phase B: drained" fwait --until 'live_out == 0' --tries 600 --show
fault_snapshot end
extra=$(fstat completions_extra)
note "new daemon: completions_extra $extra (credits of requests the old daemon sent)"
fault_stop_all

# The gap and the recovery, as the load generators saw them.
python3 - "$TOPO_RUN/A.json" "$TOPO_RUN/B.json" > "$TOPO_RUN/phases.txt" <<'PY'
import json, sys
a, b = (json.loads(open(p).readline()) for p in sys.argv[1:3])
print('A', a['sent'] + a['warmup']['sent'], a['received'], a['lost'],
      int(a['tx_gave_up']))
print('B', b['sent'], b['received'], b['lost'], b['p99_ns'])
PY
read -r _ a_sent a_recv a_lost a_gave_up < <(sed -n 1p "$TOPO_RUN/phases.txt")
read -r _ b_sent b_recv b_lost b_p99 < <(sed -n 2p "$TOPO_RUN/phases.txt")
note "phase A: sent ${a_sent:-?} received ${a_recv:-?} lost ${a_lost:-?} gave up ${a_gave_up:-?}"
note "phase B: sent ${b_sent:-?} received ${b_recv:-?} lost ${b_lost:-?} p99 ${b_p99:-?} ns"
check "phase A saw service, then the gap" \
	[ "${a_recv:-0}" -gt 0 -a "${a_lost:-0}" -gt 0 -a "${a_gave_up:-0}" = 1 ]
check "phase B: 1000 sent, every one answered" \
	[ "${b_sent:-0}" = 1000 -a "${b_recv:-0}" = 1000 -a "${b_lost:-1}" = 0 ]

# Before the restart: the old daemon's final counters and phase A.
check "phase A: every request accounted for" python3 - "$TOPO_RUN/A.json" \
	"$TOPO_RUN/turbolbd.1.log" "$MEMIF_RING" <<'PY'
import json, re, sys
a = json.loads(open(sys.argv[1]).readline())
ring = int(sys.argv[3])
old, cores, on = {}, {}, False
for line in open(sys.argv[2]):
    if 'final counters' in line:
        on = True
        continue
    if not on:
        continue
    m = re.search(r'core (\d+): sent (\d+) completed (\d+)', line)
    if m:
        cores[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
        continue
    m = re.match(r'turbolb\.main:\s+(\w+)\s+(\d+)\s*$', line.strip())
    if m:
        old[m.group(1)] = int(m.group(2))
g = lambda k: old.get(k, 0)
issued = a['sent'] + a['warmup']['sent']
answered = sum(p['received'] + p['errors'] + p['late'] for p in (a, a['warmup']))
drops = {k: v for k, v in old.items() if k.startswith('drop')}
req_drops = sum(v for k, v in drops.items()
                if k not in ('drop_tx_full', 'drop_uplink_tx_full'))
up_residue = a['tx_pkts'] - g('rx_uplink')
host_inflight = g('messages') - g('drop_tx_full') - g('responses')
down_residue = g('responses') - g('drop_uplink_tx_full') - answered
view_out = sum(s - c for s, c in cores.values())
print('    issued %d = answered %d + lg tx_dropped %d + in the ring to the old '
      'daemon %d + old daemon drops %d %s + in flight at the host at its '
      'exit %d + forwarded, not read by the load generator %d' %
      (issued, answered, a['tx_dropped'], up_residue, sum(drops.values()),
       drops, host_inflight, down_residue))
print('    old daemon: rx_uplink %d messages %d responses %d; its view at exit: '
      '%d outstanding' % (g('rx_uplink'), g('messages'), g('responses'),
                          view_out))
ok = True
def need(cond, what):
    global ok
    if not cond:
        print('    FAILED: ' + what, file=sys.stderr)
        ok = False
need(issued == a['tx_pkts'] + a['tx_dropped'], 'issued == tx_pkts + tx_dropped')
need(g('rx_uplink') == g('messages') + req_drops,
     'every frame the old daemon read was steered or counted')
need(0 <= up_residue <= ring, 'ring residue within one memif ring')
need(host_inflight >= 0, 'in flight at the host >= 0')
need(0 <= down_residue <= ring, 'unread responses within one memif ring')
need(issued == answered + a['tx_dropped'] + up_residue + req_drops +
     g('drop_tx_full') + host_inflight + g('drop_uplink_tx_full') +
     down_residue, 'the sum')
need(a['duplicates'] == 0 and a['unknown'] == 0, 'no duplicate/unknown')
sys.exit(0 if ok else 1)
PY
check "phase B: every request accounted for (exactly)" \
	fault_account end "$TOPO_RUN/B.json"
srv=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["server"]
print(s["reattaches"], s["port_restarts"])' "$FAULT_SRV_JSON" 2>/dev/null)
note "server: reattaches, port restarts: ${srv:-?}"
check "server reattached its credit ring and restarted its port" \
	[ "${srv%% *}" -ge 1 -a "${srv##* }" -ge 1 ]
check "new daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
finish
