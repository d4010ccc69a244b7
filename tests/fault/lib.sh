# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Shared part of the fault tests (tests/fault/test_*.sh), on the memif
# topology of scripts/lib/topology.sh. A test sources it first thing:
#
#   . "$(dirname "$0")/lib.sh"
#
# with the test's arguments still in $@: the first one is the build dir
# (BUILD, default build; absolute or relative to the source tree). It
# sets -u.
#
#   fault_retry_on_memif_race ARGS  run the test in a child, and once more
#                              if it failed on DPDK's memif disconnect race
#   fault_init NAME            topo_init + a run folder per process (so a
#                              core dump of each lands in its own folder),
#                              core dumps on, a trap that resumes anything
#                              stopped, stops all and reports crashes with
#                              a gdb backtrace
#   fault_up [SERVER ARGS]     the daemon and a server started (after
#                              topo_config); when either fails, the check
#                              "topology up" fails and the test ends there.
#                              Sets SPID (the server) and FAULT_SRV_STATS
#   fault_start_daemon         topo_start_daemon from run/daemon
#   fault_start_server [ARGS]  topo_start_server from run/server.N
#   fault_lg_start NAME ARGS   turbolb-loadgen in the background (its pid in
#                              FAULT_LG_PID), JSON into run/NAME.json
#   fault_lg_wait NAME [TRIES] wait for it to exit (SIGINT it first to end
#                              an open-ended run: it then stops sending and
#                              waits for stragglers up to its --timeout-ms)
#   ftel CMD                   one telemetry answer, the value only (JSON)
#   fwait [opts]               bounded poll on /turbolb/stats + /turbolb/cores
#                              (see fault.py wait --help)
#   fault_thread_stop PID N [OBJ]
#                              stops the thread of server core N only (with
#                              OBJ: at an instruction of that shared object)
#   fault_thread_cont          resumes it
#   fault_account ...          the accounting invariant (see fault.py)
#   check WHAT CMD..., eq A B, finish
#
# The Python half (telemetry, polls, the thread stopper, the accounting
# and the tests' arithmetic) is tests/fault/fault.py, FAULT_PY.
# Every wait is a bounded poll on a condition; nothing asserts on time.

set -u
FAULT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FAULT_PY=$FAULT_TOP/tests/fault/fault.py
BUILD=${1:-build}
# shellcheck source=scripts/lib/topology.sh
. "$FAULT_TOP/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$FAULT_TOP/tests/lib/check.sh"
FAULT_CRASHES=0
FAULT_STOPPER_PID=
FAULT_SIGSTOPPED=()
FAULT_LG_PID=
FAULT_SRV_N=0

ge() { [ "$1" -ge "$2" ] || { echo "    $1 < $2" >&2; return 1; }; }
alive() { kill -0 "$1" 2>/dev/null; }
note() { echo "    $*"; }

finish() {
	fault_cleanup
	trap - EXIT
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

fault_init() {
	topo_init "$1"
	mkdir -p "$TOPO_RUN/daemon"
	ulimit -c unlimited 2>/dev/null || true
	export FAULT_PREFIX=$TOPO_DPREFIX
	trap 'fault_cleanup; echo "$pass passed, $fail failed (interrupted)"' EXIT
	echo "# run folder $TOPO_RUN"
}

fault_up() {
	if ! fault_start_daemon || ! fault_start_server "$@"; then
		check "topology up" false
		finish
		exit
	fi
	SPID=$TOPO_SPID
	FAULT_SRV_STATS=$FAULT_SRV_JSON
}

fault_start_daemon() {
	local rc
	cd "$TOPO_RUN/daemon" || return 1
	topo_start_daemon "$@"
	rc=$?
	cd - > /dev/null || true
	return $rc
}

fault_start_server() {
	local rc
	FAULT_SRV_N=$((FAULT_SRV_N + 1))
	mkdir -p "$TOPO_RUN/server.$FAULT_SRV_N"
	cd "$TOPO_RUN/server.$FAULT_SRV_N" || return 1
	# Each server's stats apart (a later --stats wins).
	FAULT_SRV_JSON=$TOPO_RUN/server.$FAULT_SRV_N.json
	topo_start_server "$@" --stats "$FAULT_SRV_JSON"
	rc=$?
	cd - > /dev/null || true
	cp "$TOPO_RUN/server.log" "$TOPO_RUN/server.$FAULT_SRV_N.log" 2>/dev/null
	return $rc
}

# fault_lg_start NAME [loadgen options]: in the background, as topo_loadgen
# runs it; exec so that FAULT_LG_PID is the load generator itself.
fault_lg_start() {
	local name=$1
	shift
	mkdir -p "$TOPO_RUN/lg.$name"
	(
		cd "$TOPO_RUN/lg.$name" || exit 1
		exec "$TLBLG" --no-huge -m 128 --file-prefix "lg-$TOPO_NAME-$name" -l 0 \
			--vdev="net_memif0,role=client,socket=$TOPO_RUN/uplink.sock,socket-abstract=no,id=0" \
			--log-level=lib.*:warning \
			-- --json "$@" > "$TOPO_RUN/$name.json" 2> "$TOPO_RUN/$name.log"
	) &
	FAULT_LG_PID=$!
	TOPO_PIDS+=("$FAULT_LG_PID")
}

# fault_lg_wait NAME [TRIES]: 0.1 s polls; returns the loadgen's status.
fault_lg_wait() {
	local name=$1 tries=${2:-1200} i rc
	for ((i = 0; i < tries; i++)); do
		alive "$FAULT_LG_PID" || break
		sleep 0.1
	done
	if alive "$FAULT_LG_PID"; then
		echo "    loadgen $name still running after $tries polls" >&2
		return 124
	fi
	wait "$FAULT_LG_PID"
	rc=$?
	if [ "$rc" -ge 128 ]; then
		echo "    loadgen $name died of signal $((rc - 128))" >&2
		cat "$TOPO_RUN/$name.log" >&2
	fi
	return $rc
}

# The value of one telemetry command, as JSON, through one socket (faster
# than dpdk-telemetry.py, and it works while the machine is loaded).
ftel() { python3 "$FAULT_PY" query "$@"; }
fwait() { python3 "$FAULT_PY" wait "$@"; }
fstat() { python3 "$FAULT_PY" query /turbolb/stats --key "$1"; }

# Stops one thread of a running process without stopping the others.
# SIGSTOP cannot do that (a stop signal stops the whole thread group, even
# when sent with tgkill), so this uses ptrace: PTRACE_SEIZE +
# PTRACE_INTERRUPT stop only the tracee thread. The tracer stays in the
# background; fault_thread_cont (or its death) resumes the thread.
# Server core N runs on the N-th worker lcore, lcore N + 1 with the
# topology's --lcores map, a thread DPDK 22.11 names lcore-worker-<lcore>
# (rte-worker-<lcore> in the later 22.11 LTS releases Debian ships).
fault_thread_tid() {
	local pid=$1 lcore=$2 t comm
	for t in /proc/"$pid"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null)
		if [ "$comm" = "lcore-worker-$lcore" ] ||
		   [ "$comm" = "rte-worker-$lcore" ]; then
			basename "$t"
			return 0
		fi
	done
	return 1
}

fault_thread_stop() {
	local pid=$1 core=$2 obj=${3:-} tid
	local -a opt=()
	[ -z "$obj" ] || opt=(--in-object "$obj")
	tid=$(fault_thread_tid "$pid" "$((core + 1))") || {
		echo "    no thread for lcore $((core + 1)) in $pid:" >&2
		cat /proc/"$pid"/task/*/comm >&2
		return 1
	}
	rm -f "$TOPO_RUN/stopper.ready"
	python3 "$FAULT_PY" stop-thread "$tid" "$TOPO_RUN/stopper.ready" \
		"${opt[@]}" 2> "$TOPO_RUN/stopper.log" &
	FAULT_STOPPER_PID=$!
	topo_wait "[ -e '$TOPO_RUN/stopper.ready' ] || ! kill -0 $FAULT_STOPPER_PID 2>/dev/null" 300
	if [ ! -e "$TOPO_RUN/stopper.ready" ]; then
		cat "$TOPO_RUN/stopper.log" >&2
		return 1
	fi
	note "stopped thread $tid ($(cat /proc/"$pid"/task/"$tid"/comm), state $(awk '{print $3}' /proc/"$pid"/task/"$tid"/stat), $(cat "$TOPO_RUN/stopper.ready"))"
}

fault_thread_cont() {
	[ -n "$FAULT_STOPPER_PID" ] || return 0
	kill -TERM "$FAULT_STOPPER_PID" 2>/dev/null
	wait "$FAULT_STOPPER_PID" 2>/dev/null
	FAULT_STOPPER_PID=
}

fault_sigstop() { kill -STOP "$1" && FAULT_SIGSTOPPED+=("$1"); }
fault_sigcont() {
	local p keep=()
	kill -CONT "$1"
	for p in "${FAULT_SIGSTOPPED[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	FAULT_SIGSTOPPED=("${keep[@]}")
}

# fault_snapshot LABEL: the daemon's /turbolb/stats and /turbolb/cores now,
# kept for fault_account (take it before stopping the daemon).
fault_snapshot() {
	ftel /turbolb/stats > "$TOPO_RUN/acct-$1.stats.json" &&
		ftel /turbolb/cores > "$TOPO_RUN/acct-$1.cores.json"
}

# fault_account LABEL LG_JSON...: the accounting invariant over the snapshot
# LABEL (taken now if there is none) and the server stats files in
# FAULT_SRV_STATS (space separated; the servers must have exited). See
# account() in fault.py.
fault_account() {
	local label=$1 f args=()
	shift
	[ -s "$TOPO_RUN/acct-$label.cores.json" ] || fault_snapshot "$label" ||
		return 1
	for f in ${FAULT_SRV_STATS:-}; do args+=(--server "$f"); done
	python3 "$FAULT_PY" account --stats "$TOPO_RUN/acct-$label.stats.json" \
		--cores "$TOPO_RUN/acct-$label.cores.json" "${args[@]}" "$@"
}

# Backtraces of any process that dumped core, then a note on whether this
# is the known memif disconnect race of DPDK 22.11.
fault_crash_report() {
	local core dir bin name
	for core in "$TOPO_RUN"/*/core; do
		[ -e "$core" ] || continue
		dir=$(basename "$(dirname "$core")")
		case $dir in
		daemon) bin=$TLBD ;;
		server.*) bin=$TLBSRV ;;
		lg.*) bin=$TLBLG ;;
		*) continue ;;
		esac
		FAULT_CRASHES=$((FAULT_CRASHES + 1))
		name=$TOPO_RUN/$dir.backtrace
		gdb -batch -ex 'echo ==crash==\n' -ex 'bt 30' \
			-ex 'echo ==threads==\n' -ex 'info threads' \
			-ex 'thread apply all bt 12' "$bin" "$core" > "$name" 2>&1
		# The thread that got the signal is gdb's current one.
		sed -n '/^==crash==/,/^==threads==/p' "$name" | grep '^#' > "$name.crash"
		echo "# CRASH: $dir ($bin) dumped core: $(grep -m1 'Program terminated' "$name")"
		echo "#        the crashing thread (all threads in $name):"
		head -20 "$name.crash" | sed 's/^/#   /'
		if grep -q -E 'memif' "$name.crash"; then
			echo "# CRASH: $dir: it crashed inside the memif PMD: the known DPDK 22.11"
			echo "#        race (rings unmapped on a peer disconnect while an lcore is"
			echo "#        inside rx/tx_burst), not a turbolb bug"
		fi
		# Keep the backtrace, drop the (large) core.
		rm -f "$core"
	done
}

# DPDK 22.11's memif PMD can crash the process that stays when its peer
# leaves: memif_disconnect() (drivers/net/memif/memif_socket.c, on the
# interrupt thread) unmaps the rings right after clearing the connected
# flag, with no hook for the application to wait until its lcore is out of
# rx/tx_burst. A test whose scenario makes a peer leave on purpose calls
# this before fault_init, with its own arguments: the scenario runs in a
# child; if that run failed and one of its crashes was inside the memif
# PMD, the scenario runs once more from scratch and the second run
# decides (a second failure of any kind fails the test). Both outputs are
# shown; the retry is announced.
fault_retry_on_memif_race() {
	local out rc
	[ -z "${FAULT_ATTEMPT:-}" ] || return 0
	out=$(mktemp)
	FAULT_ATTEMPT=1 bash "$0" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && grep -q "crashed inside the memif PMD" "$out"; then
		echo "# RETRY: the run above hit the known DPDK 22.11 memif disconnect"
		echo "#        race; the scenario runs once more and that run decides"
		FAULT_ATTEMPT=2 bash "$0" "$@"
		rc=$?
	fi
	rm -f "$out"
	exit "$rc"
}

# Stops everything (daemon first), reports crashes; finish does it too.
fault_stop_all() { fault_cleanup; }

fault_cleanup() {
	local p
	fault_thread_cont
	for p in "${FAULT_SIGSTOPPED[@]}"; do kill -CONT "$p" 2>/dev/null; done
	FAULT_SIGSTOPPED=()
	topo_stop
	fault_crash_report
	if [ "$FAULT_CRASHES" -ne 0 ]; then
		fail=$((fail + FAULT_CRASHES))
		echo "not ok - $FAULT_CRASHES process(es) crashed (see above)"
		FAULT_CRASHES=0
	fi
}
