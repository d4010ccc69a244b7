#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job in one command: set-up if needed, build, then turbolb-server
# (4 host cores), turbolbd and turbolb-loadgen on the memif topology, a short
# load with each policy in turn (switched live through telemetry, no
# restart), one table, the daemon's telemetry summary, and everything
# stopped again.
#
#   scripts/demo.sh [RATE] [SECONDS]     defaults: 20000 requests/s, 2 s
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
rate=${1:-20000}
secs=${2:-2}
policies=(rss rr random pod jsq jlq jbsq)

if [ ! -x build/src/daemon/turbolbd ] || [ ! -x build/src/loadgen/turbolb-loadgen ]; then
	scripts/setup.sh
	[ -f build/build.ninja ] || meson setup build >/dev/null
fi
ninja -C build >/dev/null

BUILD=build
. scripts/lib/topology.sh
topo_init demo
# Exponential service times with mean 2 us; stale cores after 1 s (on two
# shared CPUs a server thread may wait a whole scheduler slice).
topo_config cores=4 policy=jsq credits=ring
echo "turbolb demo: loadgen -> turbolbd -> turbolb-server (4 host cores) on memif, --no-huge"
echo "run folder: $TOPO_RUN"
topo_start_daemon
topo_start_server

printf '\n%-8s %12s %12s %10s %10s %10s %8s\n' policy target_rps achieved_rps p50_us p99_us p999_us lost
for p in "${policies[@]}"; do
	topo_telemetry "/turbolb/policy,$p" > /dev/null
	out=$TOPO_RUN/loadgen-$p.json
	topo_loadgen "$out" --rate "$rate" --duration "$secs" --warmup 0.2 \
		--dist exp:2us --flows 64 --timeout-ms 1000 || true
	python3 - "$p" "$out" <<'PY'
import json, sys
p, path = sys.argv[1], sys.argv[2]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{p:<8} (load generator failed: {e})")
    sys.exit(0)
us = lambda k: r[k] / 1000.0
print(f"{p:<8} {r['target_rps']:12.0f} {r['achieved_rps']:12.0f} "
      f"{us('p50_ns'):10.1f} {us('p99_ns'):10.1f} {us('p999_ns'):10.1f} {r['lost']:8d}")
PY
done

echo
echo "daemon telemetry (/turbolb/stats, non-zero counters):"
topo_telemetry /turbolb/stats | python3 -c '
import json, sys
d = json.load(sys.stdin)["/turbolb/stats"]
for k, v in d.items():
    if v:
        print(f"  {k:<28} {v}")'
echo "per host core (/turbolb/cores):"
topo_telemetry /turbolb/cores | python3 -c '
import json, sys
d = json.load(sys.stdin)["/turbolb/cores"]
for k in sorted(d, key=int):
    c = d[k]
    print(f"  core {k}: sent {c[\"sent\"]:>8} completed {c[\"completed\"]:>8} outstanding {c[\"outstanding\"]:>3} {c[\"state\"]}")'
echo
echo "Note: this machine runs the load generator, the daemon and four server"
echo "threads busy-polling on $(nproc) shared CPUs: the absolute numbers say"
echo "nothing about a BlueField-2; compare policies only against each other."
