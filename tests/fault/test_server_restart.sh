#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: the server is killed (SIGKILL) under load and started again. The
# daemon keeps running: requests for the dead server are counted
# (drop_tx_full: its memif port is down), the new server's credit ring
# attach changes the host epoch (host_restarts), the daemon resets its view
# of the host and counts what was in flight there (stranded), and then
# balances over the new server's cores, without a restart of its own.
#
# Accounting is exact with credits: inband, where a completion is the
# response itself. With credits: ring it cannot be: a killed server takes
# with it the credits it still held (up to --batch - 1 per core) and may die
# between posting a credit and sending its response, so the stranded count
# is off by those; the ring run checks the bound instead (see below).
#
# To be sure something is in flight when the server dies, it is first
# stopped (SIGSTOP: a hung server), then killed once the daemon shows
# requests outstanding at it: a hung server killed by its supervisor.
#
# The daemon sees exactly one peer disconnect here (the killed server's).
# DPDK 22.11's memif PMD may crash the process that stays on a disconnect
# (rings unmapped under an lcore inside rx_burst); such a crash is
# reported with its backtrace and the scenario run once more, see lib.sh
# (fault_retry_on_memif_race).
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"
fault_retry_on_memif_race "$@"

BATCH=4

# run_mode CREDITS [TRANSPORT]: TRANSPORT shm (default) or packet.
run_mode() {
	local transport=${2:-shm}
	local credits=$1 stranded rc
	fault_init "srv-restart-$credits-$transport"
	# Never written off: what was in flight at the dead server is to be
	# counted stranded when the new one attaches.
	topo_config cores=4 policy=jsq credits="$credits" stale_us=50000 \
		write_off_us=600000000 transport="$transport"
	if ! fault_start_daemon || ! fault_start_server --batch "$BATCH"; then
		check "$credits: topology up" false
		fault_stop_all
		return
	fi
	local srv1=$TOPO_SPID
	fault_lg_start load --rate 1000 --duration 3600 --dist fixed:20us \
		--flows 32 --timeout-ms 15000
	check "$credits: load reaches every core" \
		fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900
	check "$credits: no host restart yet" eq "$(fstat host_restarts)" 0

	fault_sigstop "$srv1"
	check "$credits: requests in flight at the hung server" \
		fwait --until 'total_out >= 4' --tries 900 --show
	kill -KILL "$srv1"
	wait "$srv1" 2>/dev/null
	fault_sigcont "$srv1" 2>/dev/null
	check "$credits: requests meanwhile counted (drop_tx_full, drop_no_core)" \
		fwait --until "grown('drop_tx_full') + grown('drop_no_core') >= 200" \
		--tries 900 --show
	check "$credits: daemon survives its host's death" alive "$TOPO_DPID"

	check "$credits: new server up" fault_start_server --batch "$BATCH"
	FAULT_SRV_STATS=$FAULT_SRV_JSON
	check "$credits: host restart seen (host_restarts 1)" \
		fwait --until "s['host_restarts'] == 1" --tries 300 --show
	stranded=$(fstat stranded)
	note "stranded: $stranded"
	check "$credits: what was in flight at the dead server counted stranded" \
		ge "$stranded" 1
	check "$credits: the new server's cores all serve" \
		fwait --until 'all(sent(k) - b_sent(k) >= 100 for k in cores) and n_stale == 0' \
		--tries 1800 --show
	check "$credits: daemon did not restart (same process)" alive "$TOPO_DPID"

	kill -INT "$FAULT_LG_PID"
	check "$credits: loadgen finished" fault_lg_wait load 1800
	check "$credits: drained" fwait --until 'live_out == 0' --tries 600 --show
	fault_snapshot end
	fault_stop_all
	if [ "$credits" = inband ]; then
		check "$credits: every request accounted for (exactly)" \
			fault_account end "$TOPO_RUN/load.json"
	else
		# Credit ring: a killed server's held credits (< batch per core)
		# make stranded count answered requests; a kill between a posted
		# credit and its response (< one RX burst of 32 per core) makes
		# an unanswered request look completed. So
		#   -cores*(batch-1) <= unanswered - accounted <= cores*32.
		fault_account end "$TOPO_RUN/load.json" > "$TOPO_RUN/acct.txt" 2>&1
		cat "$TOPO_RUN/acct.txt"
		local diff
		diff=$(sed -n 's/.*MISMATCH: \([-+0-9]*\) requests.*/\1/p' "$TOPO_RUN/acct.txt")
		diff=${diff:-0}
		note "unanswered - accounted = $diff (bound -$((4 * (BATCH - 1)))..$((4 * 32)))"
		check "$credits: every request accounted for (within the credit batching bound)" \
			[ "$diff" -ge $((-4 * (BATCH - 1))) -a "$diff" -le $((4 * 32)) ]
		check "$credits: no duplicate or unknown response" \
			bash -c "! grep -q duplicates '$TOPO_RUN/acct.txt'"
	fi
	check "$credits: daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
}

run_mode inband
run_mode ring
run_mode ring packet
finish
