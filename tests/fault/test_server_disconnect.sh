#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: turbolbd, the server's memif peer, leaves while a server core is
# inside the memif PMD, and the server outlives it and later stops cleanly.
#
# DPDK 22.11's memif PMD tears the connection down on the EAL interrupt
# thread and unmaps the shared rings without waiting for an lcore inside
# rte_eth_rx_burst/tx_burst (src/server/unmap_guard.c). The test makes that
# window wide: it stops core 0's thread (ptrace) at an instruction of the
# memif PMD, stops the daemon (SIGINT or SIGKILL, alternating), waits for
# the server's rings to be unmapped (a bounded poll; with the unmap guard
# the unmap waits for the stopped core instead, so the poll runs out), and
# resumes the core. A server without the guard crashes there in most
# rounds; with it, every round, it survives, reconnects to a new daemon,
# and at the end exits 0 on a signal (SIGTERM, and SIGINT) with its stats
# written, in spin mode (a worker lcore per core) and in emulate mode (one
# worker lcore for every core). A crash is a failure here: no retry.
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDS=${ROUNDS:-4}

# The server's memif regions still mapped (memfd regions of the PMD).
regions_mapped() { grep -q 'memif_region' "/proc/$1/maps" 2>/dev/null; }
# Running, not dead or a zombie not yet waited for.
running() {
	local st
	st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Both cores online at the daemon and the server's link up.
serving() { [ "$(topo_cores_online)" = 2 ] && topo_host_links_up; }

# run_mode MODE SIGNAL: ROUNDS peer departures, then the server stopped
# with SIGNAL, its exit status checked.
run_mode() {
	local mode=$1 sig=$2 r dsig spid rc i
	fault_init "srv-disconnect-$mode"
	topo_config cores=2 policy=jsq credits=ring stale_us=5000000
	# Busy polling: the core is in a burst most of the time.
	fault_up --mode "$mode" --idle-sleep-us 0
	spid=$SPID
	for ((r = 1; r <= ROUNDS; r++)); do
		dsig=INT
		[ $((r % 2)) -eq 1 ] || dsig=KILL
		if ! fault_thread_stop "$spid" 0 librte_net_memif; then
			check "$mode round $r: core 0 stopped" false
			break
		fi
		regions_mapped "$spid" || note "round $r: no memif region mapped?"
		kill -"$dsig" "$TOPO_DPID"
		wait "$TOPO_DPID" 2>/dev/null
		# Bounded: the unmap happens here only without the guard.
		for ((i = 0; i < 50; i++)); do
			regions_mapped "$spid" || break
			sleep 0.05
		done
		regions_mapped "$spid" || note "round $r: rings unmapped under the stopped core"
		fault_thread_cont
		topo_wait "! regions_mapped $spid || ! running $spid" 300
		check "$mode round $r: server alive after its peer left (SIG$dsig)" \
			running "$spid"
		running "$spid" || break
		# A killed daemon leaves its sockets behind.
		rm -f "$TOPO_RUN"/*.sock
		check "$mode round $r: new daemon up" fault_start_daemon
		topo_wait "! running $spid || serving" 900
		check "$mode round $r: server back at the new daemon" serving
		running "$spid" || break
	done
	check "$mode: server alive after $ROUNDS peer departures" running "$spid"
	kill -"$sig" "$spid" 2>/dev/null
	for ((i = 0; i < 600; i++)); do
		running "$spid" || break
		sleep 0.1
	done
	wait "$spid"
	rc=$?
	check "$mode: server exited 0 on SIG$sig" eq "$rc" 0
	check "$mode: server stats written" test -s "$FAULT_SRV_JSON"
	fault_stop_all
}

run_mode spin TERM
run_mode emulate INT
finish
