#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Live reload under load: while turbolb-loadgen runs, the daemon's YAML file
# switches policy (jsq -> jbsq, k=3) and FIFO capacity and turbolbd gets
# SIGHUP; then a bad file is sent the same way. No request may be lost,
# the new policy must be in effect, and the bad file must leave it so.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
cfg_get() { topo_telemetry /turbolb/config | python3 -c "import json,sys; print(json.load(sys.stdin)['/turbolb/config']['$1'])"; }

topo_init reload
topo_config cores=4 policy=jsq credits=ring fifo=4096
topo_start_daemon || exit 1
topo_start_server || exit 1

out=$TOPO_RUN/loadgen.json
topo_loadgen "$out" --rate 2000 --requests 8000 --dist exp:2us --timeout-ms 2000 &
lg=$!
# Reload once the load is on (the daemon has steered something).
topo_wait "[ \"\$(topo_telemetry /turbolb/stats | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"/turbolb/stats\"][\"messages\"])')\" -gt 1000 ]" 60
sed -i 's/^  name: jsq$/  name: jbsq/; s/^  k: 2$/  k: 3/; s/^  capacity: 4096$/  capacity: 8192/' \
	"$TOPO_RUN/turbolbd.yaml"
kill -HUP "$TOPO_DPID"
topo_wait "grep -q 'SIGHUP: .*reloaded' '$TOPO_RUN/turbolbd.log'" 30
check "reload logged what changed" grep -q "reload: policy jsq .* -> jbsq" "$TOPO_RUN/turbolbd.log"
check "new policy in effect" eq "$(cfg_get policy)" jbsq
check "new k in effect" eq "$(cfg_get k)" 3
check "new FIFO capacity in effect" eq "$(cfg_get fifo_capacity)" 8192

# A broken file: rejected with its position, the running config stays.
cp "$TOPO_RUN/turbolbd.yaml" "$TOPO_RUN/good.yaml"
echo "policy: { name: nosuch }" >> "$TOPO_RUN/turbolbd.yaml"
kill -HUP "$TOPO_DPID"
topo_wait "grep -q 'SIGHUP: .*old configuration stays' '$TOPO_RUN/turbolbd.log'" 30
check "bad file reported as FILE:LINE:COL" grep -q "turbolbd.yaml:[0-9]*:[0-9]*: " "$TOPO_RUN/turbolbd.log"
check "bad file left the policy alone" eq "$(cfg_get policy)" jbsq

wait "$lg"
sent=$(topo_json "$out" sent)
received=$(topo_json "$out" received)
lost=$(topo_json "$out" lost)
echo "    sent=$sent received=$received lost=$lost"
check "8000 requests sent across the reloads" eq "$sent" 8000
check "none lost" eq "$lost" 0
check "every request answered" eq "$received" "$sent"
drops=$(topo_telemetry /turbolb/stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["/turbolb/stats"]["drops"])')
check "no drops in the daemon" eq "$drops" 0
topo_stop
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
