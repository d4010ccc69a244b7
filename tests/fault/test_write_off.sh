#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: a host core stops posting credits for longer than write_off_us
# (credits: ring), with requests in flight there.
#
#   1. One server thread stops (ptrace): its core goes stale, then what it
#      had outstanding is written off (written_off) and it is probed: one
#      request at a time, never more while the probe is unanswered (an
#      unanswered probe goes stale and is written off in turn).
#   2. The thread resumes: the written-off requests are answered after all
#      and counted late_completions; the core is back in full rotation.
#   3. Accounting: sent = responded + dropped + stranded + written off -
#      late, exactly (fault_account).
#
# No assertion on time: every wait is a bounded poll on a condition.
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"

K=2 # the core whose thread stops
fault_init write-off
topo_config cores=4 policy=jsq credits=ring stale_us=20000 write_off_us=50000
fault_up

fault_lg_start load --rate 1000 --duration 3600 --dist fixed:20us --flows 32 \
	--timeout-ms 15000
check "load reaches every core" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

check "thread of core $K stopped (the others run)" fault_thread_stop "$SPID" "$K"
check "core $K written off and probed" \
	fwait --until "written_off($K) >= 1 and probing($K)" --tries 900 --show
check "written off counted in the totals" \
	fwait --until "s['written_off'] >= written_off($K)" --tries 300
check "at most one request at a time to the probed core" \
	fwait --until "others_sent($K) - b_others_sent($K) >= 300" \
	--always "out($K) <= 1" --tries 1800 --show
fault_thread_cont
check "core $K back in full rotation" \
	fwait --until "not probing($K) and sent($K) - b_sent($K) >= 100" \
	--tries 1800 --show
check "the written-off requests answered late, counted" \
	fwait --until "s['late_completions'] >= 1" --tries 900 --show

kill -INT "$FAULT_LG_PID"
check "loadgen finished" fault_lg_wait load 1800
check "drained: nothing outstanding at live cores, FIFO empty" \
	fwait --until 'live_out == 0 and s["fifo_depth"] == 0' --tries 600 --show
fault_snapshot end
fault_stop_all
check "every request accounted for" fault_account end "$TOPO_RUN/load.json"
check "daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
finish
