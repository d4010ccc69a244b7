#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: a host core stops under load, then the whole server does.
#
#   1. One server thread stops (ptrace, see lib.sh: SIGSTOP would stop the
#      whole process): the daemon marks its core stale (host.stale_timeout_us
#      50 ms), steers nothing new to it while the other cores absorb the load,
#      and takes it back when it resumes (stale 0, its `sent` grows again).
#   2. The whole server stops (SIGSTOP): every core goes stale, new requests
#      are dropped and counted (drop_no_core), nothing is steered; on SIGCONT
#      every core comes back.
#   3. Accounting: every request the load generator issued got a response or
#      is counted by the daemon or the server.
#
# Nothing is disconnected before the end (no memif peer leaves), so the
# known DPDK 22.11 memif disconnect race cannot hit. No assertion on time:
# every wait is a bounded poll on a condition.
#
# Arguments: BUILD [TRANSPORT]: the host transport that carries the ring
# credits, shm (default) or packet (feedback frames).
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"

K=1 # the core whose thread stops
TRANSPORT=${2:-shm}
fault_init "host-stall-$TRANSPORT"
# Stale, never written off: what a stale core does is the point here
# (tests/fault/test_write_off.sh writes off).
topo_config cores=4 policy=jsq credits=ring stale_us=50000 \
	write_off_us=600000000 transport="$TRANSPORT"
fault_up

# Open-ended load; SIGINT ends it. The timeout is far above any stop below,
# so a request held by a stopped core is answered in time, not late.
fault_lg_start load --rate 1000 --duration 3600 --dist fixed:20us --flows 32 \
	--timeout-ms 15000
check "load reaches every core" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

# --- one thread ---
check "thread of core $K stopped (the others run)" fault_thread_stop "$SPID" "$K"
check "core $K marked stale" fwait --until "stale($K) == 1" --tries 900 --show
check "nothing new to core $K while the others absorb 1000 requests" \
	fwait --until "others_sent($K) - b_others_sent($K) >= 1000" \
	--always "sent($K) == b_sent($K)" --always "stale($K) == 1" \
	--tries 1800 --show
# Not asserted: on a loaded machine the other cores may go stale too (a
# descheduled thread completes nothing for 50 ms), and then drop_no_core.
note "drop_no_core so far: $(fstat drop_no_core)"
fault_thread_cont
check "core $K back: stale 0" fwait --until "stale($K) == 0" --tries 900
check "core $K back: its sent grows again" \
	fwait --until "sent($K) - b_sent($K) >= 100" --tries 1800 --show

# --- the whole server ---
check "server stopped (SIGSTOP)" fault_sigstop "$SPID"
check "every core marked stale" fwait --until "n_stale == len(cores)" \
	--tries 900 --show
check "nothing steered, new requests counted drop_no_core" \
	fwait --until "grown('drop_no_core') >= 300" \
	--always "total_sent == b_total_sent" --always "n_stale == len(cores)" \
	--tries 1800 --show
check "daemon alive and answering while the host is stopped" alive "$TOPO_DPID"
fault_sigcont "$SPID"
check "every core back: none stale" fwait --until "n_stale == 0" --tries 900
check "every core back: each one's sent grows" \
	fwait --until "all(sent(k) - b_sent(k) >= 50 for k in cores)" \
	--tries 1800 --show

# --- the end: stop the load, let it drain, account for every request ---
kill -INT "$FAULT_LG_PID"
check "loadgen finished" fault_lg_wait load 1800
check "drained: nothing outstanding at live cores, FIFO empty" \
	fwait --until 'live_out == 0 and s["fifo_depth"] == 0' --tries 600 --show
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
print("    loadgen: sent %d received %d lost %d late %d tx_dropped %d p99 %.0f us" %
      (r["sent"], r["received"], r["lost"], r["late"], r["tx_dropped"], r["p99_ns"]/1e3))' \
	"$TOPO_RUN/load.json" 2>/dev/null
fault_snapshot end
stale_events=$(ftel /turbolb/cores | python3 -c 'import json,sys
print(" ".join("%s:%d" % (k, v["stale_events"]) for k, v in sorted(json.load(sys.stdin).items())))')
note "stale events per core: $stale_events"
fault_stop_all
check "every request accounted for" fault_account end "$TOPO_RUN/load.json"
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
finish
