#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Stress, not in the test suite: one turbolb-loadgen under load across N
# restarts of turbolbd, to measure how often a memif disconnect crashes
# the load generator (DPDK 22.11's unmap race, src/loadgen/lg_unmap_guard.c)
# and that it reconnects every time.
#
#   tests/fault/stress_memif_restart.sh [BUILD [N [LOADGEN [RATE]]]]
#
# LOADGEN: another turbolb-loadgen binary to try (default: BUILD's). Prints
# one line per restart and a summary; exits non-zero when the load
# generator crashed or did not come back. Its timeout is long: a peer that
# stalls right after a restart on a loaded machine must not end the run
# (a port refusing everything for a whole timeout does).
set -u
N=${2:-20}
LG=${3:-}
RATE=${4:-20000}
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"
[ -z "$LG" ] || TLBLG=$LG

fault_init memif-stress
topo_config cores=4 policy=jsq credits=ring stale_us=5000000
fault_up
fault_lg_start S --rate "$RATE" --duration 3600 --dist fixed:1us --flows 32 \
	--timeout-ms 30000 --link-wait 600
LG_S=$FAULT_LG_PID
done_n=0
for ((i = 1; i <= N; i++)); do
	if ! fwait --until 'all(sent(k) >= 200 for k in cores)' --tries 900 \
		> /dev/null; then
		note "restart $i: the load generator's load did not reach the daemon"
		break
	fi
	topo_kill "$TOPO_DPID"
	if ! alive "$LG_S"; then
		note "restart $i: the load generator is gone (a crash is reported below; else see S.log)"
		break
	fi
	if ! fault_start_daemon; then
		note "restart $i: the daemon did not start"
		break
	fi
	done_n=$i
	note "restart $i: load generator alive"
done
check "the load generator outlived $N daemon restarts" eq "$done_n" "$N"
kill -INT "$LG_S" 2>/dev/null
FAULT_LG_PID=$LG_S
check "the load generator stopped on SIGINT" fault_lg_wait S 1800
python3 -c 'import json,sys; a=json.loads(open(sys.argv[1]).readline())
print("    link_downs", a["link_downs"], "port_restarts", a["port_restarts"],
      "sent", a["sent"], "lost", a["lost"], "written_off", a["written_off"])' \
	"$TOPO_RUN/S.json" 2>/dev/null
grep -h "unmaps waited" "$TOPO_RUN/S.log" | sed 's/^/    /'
finish
