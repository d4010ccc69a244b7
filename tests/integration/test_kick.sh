#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The scheduler kick end to end: turbolb-loadgen -> turbolbd -> turbolb-server
# on memif, with the server's two core threads busy-polling on one CPU (so
# one of them is always waiting for it), kick enabled in the daemon and
# turbolb-kickd watching the credit ring. Checks that the daemon rings
# doorbells (kicks_sent > 0), that the agent serves them (kicks_served > 0,
# boosts made and all of them ended), that every request is answered, and
# that once the load stops every boosted thread is back to SCHED_OTHER,
# both while the agent still runs and after it exits. Runs as root (the
# agent needs CAP_SYS_NICE, and perf events on another process's threads);
# skipped otherwise. No assertion on time: waits are bounded polls.
#
# Arguments: BUILD TURBOLBD [MODE]. MODE ring (default): the doorbells in
# the shared credit ring. MODE wire: the kick over the wire, as on a
# BlueField: host.transport packet, the daemon's default target a net_tap
# kernel interface out of which it sends kick frames, turbolb-kickd
# --listen on that interface (a raw socket: the kernel wakes it), and the
# threads named in a ring the server makes for the agent (--agent-ring).
# The daemon sees no off-CPU flag then (it reads the host's run states
# from feedback frames, which a thread off its CPU cannot send): its
# kicks are the stall kicks.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
MODE=${3:-ring}
. "$top/scripts/lib/topology.sh"
KICKD=${KICKD:-$TOPO_BUILD/src/kickd/turbolb-kickd}

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP needs root (turbolb-kickd boosts threads with SCHED_FIFO)"
	exit 77
fi
if [ "$(nproc)" -lt 2 ]; then
	echo "1..0 # SKIP needs two CPUs"
	exit 77
fi

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
gt0() { [ "${1:-0}" -gt 0 ] 2>/dev/null || { echo "    '$1' is not > 0" >&2; return 1; }; }

stat() { topo_telemetry /turbolb/stats | python3 -c "import json,sys; print(json.load(sys.stdin)['/turbolb/stats']['$1'])"; }

# Scheduling policy of a thread, from /proc/PID/task/TID/stat (field 41;
# the fields are counted after the command name, which may hold spaces).
policy_of() {
	python3 - "$1" "$2" <<'PY'
import sys
try:
    s = open(f"/proc/{sys.argv[1]}/task/{sys.argv[2]}/stat").read()
except OSError:
    print("gone")
    sys.exit(0)
print(s[s.rindex(")") + 2:].split()[38])
PY
}

# The server's core threads (EAL workers).
worker_tids() {
	local t
	for t in /proc/"$TOPO_SPID"/task/*; do
		case $(cat "$t/comm" 2>/dev/null) in
		rte-worker-* | lcore-worker-*) echo "${t##*/}" ;;
		esac
	done
}

all_fair() {
	local tid p
	for tid in $tids; do
		p=$(policy_of "$TOPO_SPID" "$tid")
		[ "$p" = 0 ] || [ "$p" = gone ] || return 1
	done
}

kjson() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"][sys.argv[2]])' \
		"$TOPO_RUN/kickd.json" "$1"
}

# The agent runs beside the daemon and the load generator, on CPU 0.
pin0=()
if command -v taskset > /dev/null; then pin0=(taskset -c 0); fi

topo_init "kick-$MODE"
# Daemon datapath on CPU 0 (its main lcore, which sleeps, on CPU 1); both
# server core threads on CPU 1, its main lcore on CPU 0.
mode_cfg=()
kick_ring=$TOPO_RING
kickd_opts=()
srv_opts=()
started=attached
if [ "$MODE" = wire ]; then
	tap=tlbk$$
	kick_ring=$TOPO_RING-agent
	mode_cfg=(transport=packet default_tap="$tap")
	kickd_opts=(--listen "$tap")
	srv_opts=(--agent-ring "$kick_ring")
	# The agent's ring comes with the server, after the agent.
	started=watching
fi
topo_config cores=2 policy=jsq credits=ring lcores=0 main_lcore=1 \
	kick=true kick_stall_us=200 housekeeping_us=20 "${mode_cfg[@]}"
export TOPO_SRV_LCORES="0@0,1@1,2@1"
topo_start_daemon || { echo "not ok - daemon started"; exit 1; }

"${pin0[@]}" "$KICKD" --credit-ring "$kick_ring" --stats "$TOPO_RUN/kickd.json" \
	"${kickd_opts[@]}" > /dev/null 2> "$TOPO_RUN/kickd.log" &
KPID=$!
TOPO_PIDS+=("$KPID")
check "kickd started" topo_wait "kill -0 $KPID 2>/dev/null && grep -q $started '$TOPO_RUN/kickd.log'" 100
# Busy polling: the threads never sleep, so only the agent can tell the
# daemon which one is off its CPU.
topo_start_server --idle-sleep-us 0 "${srv_opts[@]}" || {
	echo "not ok - server started"
	cat "$TOPO_RUN/kickd.log" >&2
	exit 1
}
tids=$(worker_tids)
check "two server core threads" eq "$(echo $tids | wc -w)" 2
check "kickd learned both threads" \
	topo_wait "[ \$(grep -c 'core [01]: thread [0-9]* of process' '$TOPO_RUN/kickd.log') -ge 2 ]" 100
# Without perf events (a seccomp profile may forbid them) the agent cannot
# see preemption: the daemon then only sends stall kicks.
watched=1
if [ "$MODE" = wire ]; then
	watched=0
elif [ "$(grep -c 'watching its context switches' "$TOPO_RUN/kickd.log")" -lt 2 ]; then
	watched=0
	echo "    # kickd cannot watch context switches here: $(grep -m1 perf_event_open "$TOPO_RUN/kickd.log")"
fi

out=$TOPO_RUN/loadgen.json
topo_loadgen "$out" --rate 2000 --requests 4000 --dist fixed:5us \
	--flows 32 --timeout-ms 2000
check "loadgen ran" [ -s "$out" ]
sent=$(topo_json "$out" sent)
received=$(topo_json "$out" received)
lost=$(topo_json "$out" lost)
echo "    sent=$sent received=$received lost=$lost p99_ns=$(topo_json "$out" p99_ns)"
check "4000 requests sent" eq "$sent" 4000
check "every request answered" eq "$received" "$sent"
check "none lost" eq "$lost" 0

kicks_sent=$(stat kicks_sent)
kicks_stall=$(stat kicks_stall)
echo "    daemon: kicks_sent=$kicks_sent kicks_stall=$kicks_stall"
if [ "$watched" = 1 ]; then
	check "daemon sent kicks (steering to threads off their CPU)" gt0 "$kicks_sent"
else
	check "daemon sent kicks (stall kicks only: $MODE)" gt0 "$((kicks_sent + kicks_stall))"
fi
if [ "$MODE" = wire ]; then
	kick_frames=$(stat kick_frames)
	echo "    daemon: kick_frames=$kick_frames"
	check "every kick left as a kick frame" eq "$kick_frames" "$((kicks_sent + kicks_stall))"
fi

# The load has stopped: no more rings, so every boost ends (drain, or the
# time bound) while the agent keeps running.
check "boosted threads back to SCHED_OTHER (agent running)" topo_wait all_fair 50
for tid in $tids; do
	echo "    thread $tid: policy $(policy_of "$TOPO_SPID" "$tid")"
done

topo_kill "$KPID"
check "kickd wrote its counters" [ -s "$TOPO_RUN/kickd.json" ]
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print("    kickd:", ", ".join(f"{k}={v}" for k, v in t.items() if not isinstance(v, dict)))' \
	"$TOPO_RUN/kickd.json" 2>/dev/null
served=$(kjson kicks_served)
boosts=$(kjson boosts)
check "kickd served kicks" gt0 "$served"
check "kickd boosted threads" gt0 "$boosts"
ended=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(t["reverted_drain"] + t["reverted_bound"] + t["reverted_yield"])' \
	"$TOPO_RUN/kickd.json" 2>/dev/null)
check "every boost ended" eq "$boosts" "$ended"
check "no boost failed" eq "$(kjson boost_failures)" 0
if [ "$MODE" = wire ]; then
	wire=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["listen"]["kick_frames"])' "$TOPO_RUN/kickd.json")
	echo "    kickd: kick frames received on $tap: $wire"
	check "kick frames reached kickd through the kernel interface" gt0 "$wire"
	check "kickd took every ring the daemon sent" eq "$(kjson rings)" "$kick_frames"
fi
[ "$watched" = 0 ] || check "kickd saw context switches" gt0 "$(kjson switches)"
check "threads SCHED_OTHER after kickd exited" all_fair

topo_stop
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
