#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Prometheus metrics of a running turbolbd, on the emulated topology
# (scripts/lib/topology.sh: loadgen -> turbolbd -> server on memif):
# after some traffic has stopped, the text of the daemon's endpoint (on a
# unix socket, then on a TCP port of 127.0.0.1) and of `turbolbctl
# metrics` parse with the Prometheus parser and carry the values of
# /turbolb/stats and /turbolb/cores (tests/cli/check_metrics.py); every
# metric the Grafana dashboard (configs/grafana-turbolb.json) queries is
# in it. No wait on time for correctness: bounded polls on conditions.
#
#   test_metrics.sh BUILD_DIR
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-build}
. "$top/scripts/lib/topology.sh"
# shellcheck source=tests/lib/check.sh
. "$top/tests/lib/check.sh"
ctl=$TOPO_BUILD/src/tools/turbolbctl
checker=$top/tests/cli/check_metrics.py
dashboard=$top/configs/grafana-turbolb.json

# Debian's python3-prometheus-client is in the system Python, which a
# python3 earlier in PATH (a virtualenv, pyenv) may not see.
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import prometheus_client' 2>/dev/null; then
		py=$p
		break
	fi
done
if [ -z "$py" ]; then
	echo "not ok - python3-prometheus-client is not installed (scripts/setup.sh)"
	exit 1
fi

ctl() { ${MESON_EXE_WRAPPER:-} "$ctl" -f "$TOPO_DPREFIX" "$@"; }

# topo_init, remembering the run folder: removed when every check passed,
# kept with its logs otherwise.
runs=()
init() {
	topo_init "$1"
	runs+=("$TOPO_RUN")
}

# A port of 127.0.0.1 nobody listens on now. Another process may take it
# before turbolbd does: then turbolbd fails to start and says why, and the
# test fails with its log (no retry loop around a race it cannot win).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run LISTEN NAME FETCH...: a daemon whose metrics.listen is LISTEN (@RUN@:
# its run folder); traffic; then the text FETCH prints is checked.
run() {
	local listen=$1 name=$2
	shift 2
	init "metrics-$name"
	topo_config cores=4 policy=jsq credits=ring
	listen=${listen//@RUN@/$TOPO_RUN}
	printf 'metrics:\n  listen: "%s"\n' "$listen" >>"$TOPO_RUN/turbolbd.yaml"
	topo_start_daemon || { fail=$((fail + 1)); return; }
	topo_start_server || { fail=$((fail + 1)); return; }
	topo_loadgen "$TOPO_RUN/loadgen.json" --rate 2000 --requests 2000 \
		--dist exp:2us --flows 32 --timeout-ms 2000
	# Bounded poll: every request answered and completed, so nothing
	# moves but the loop heartbeat.
	topo_wait "ctl --json cores | python3 -c 'import json, sys
d = json.load(sys.stdin)[\"/turbolb/cores\"]
sys.exit(sum(c[\"outstanding\"] for k, c in d.items() if k.isdigit()) != 0)'" 60 ||
		fail=$((fail + 1))

	ctl --json stats >"$TOPO_RUN/stats0.json"
	ctl --json cores >"$TOPO_RUN/cores.json"
	"$@" >"$TOPO_RUN/metrics.txt" 2>"$TOPO_RUN/fetch.err"
	local rc=$?
	ctl --json stats >"$TOPO_RUN/stats1.json"
	check "$name: fetched (exit $rc)" eq "$rc" 0
	[ "$rc" -eq 0 ] || cat "$TOPO_RUN/fetch.err"
	echo "# $name: $(wc -l <"$TOPO_RUN/metrics.txt") lines"
	if "$py" "$checker" "$TOPO_RUN/stats0.json" "$TOPO_RUN/stats1.json" \
		"$TOPO_RUN/cores.json" "$TOPO_RUN/metrics.txt" "$dashboard" \
		>"$TOPO_RUN/check.out" 2>&1; then
		check "$name: $(grep -c '^ok' "$TOPO_RUN/check.out") checks" true
	else
		grep -v '^ok' "$TOPO_RUN/check.out"
		check "$name: metrics agree with the telemetry" false
	fi
	if [ "$name" = endpoint-unix ]; then
		local code
		code=$(curl -s -o /dev/null -w '%{http_code}' \
			--unix-socket "$TOPO_RUN/metrics.sock" http://x/other)
		check "$name: another path is 404" eq "$code" 404
		code=$(curl -s -o /dev/null -w '%{content_type}' \
			--unix-socket "$TOPO_RUN/metrics.sock" http://x/metrics)
		check "$name: Content-Type $code" eq "$code" \
			"text/plain; version=0.0.4; charset=utf-8"
	fi
	topo_stop
	check "$name: daemon exited cleanly" grep -q "final counters" "$TOPO_RUN/turbolbd.log"
	if [ "$name" = endpoint-unix ]; then
		check "$name: socket removed at exit" test ! -e "$TOPO_RUN/metrics.sock"
	fi
}

sock_fetch() { curl -sf --unix-socket "$TOPO_RUN/metrics.sock" http://localhost/metrics; }
run "unix:@RUN@/metrics.sock" endpoint-unix sock_fetch
port=$(free_port)
run "127.0.0.1:$port" endpoint-tcp curl -sf "http://127.0.0.1:$port/metrics"
run "" turbolbctl ctl metrics

# The daemon and turbolbctl print the same text for the same counters:
# compare both on one idle daemon, except the two values that move.
init metrics-same
topo_config cores=4
printf 'metrics:\n  listen: "unix:%s/metrics.sock"\n' "$TOPO_RUN" >>"$TOPO_RUN/turbolbd.yaml"
if topo_start_daemon; then
	a=$(sock_fetch | grep -Ev '^turbolb_(poll_loops_total|mbufs_in_use) ')
	b=$(ctl metrics | grep -Ev '^turbolb_(poll_loops_total|mbufs_in_use) ')
	check "endpoint and turbolbctl print the same text" eq "$a" "$b"
else
	fail=$((fail + 1))
fi
topo_stop

# An address it cannot listen on fails the start-up, with the reason: here
# a regular file where the socket would go, which turbolbd never removes.
init metrics-refused
topo_config cores=4
echo keep >"$TOPO_RUN/file"
printf 'metrics:\n  listen: "unix:%s/file"\n' "$TOPO_RUN" >>"$TOPO_RUN/turbolbd.yaml"
${MESON_EXE_WRAPPER:-} "$TLBD" -c "$TOPO_RUN/turbolbd.yaml" >"$TOPO_RUN/turbolbd.log" 2>&1 &
pid=$!
TOPO_PIDS+=("$pid")
topo_wait "! kill -0 $pid 2>/dev/null" 60
wait "$pid"
rc=$?
check "a file at the socket's path: turbolbd exits 1 (got $rc)" eq "$rc" 1
check "... saying why" grep -q "exists and is not a socket" "$TOPO_RUN/turbolbd.log"
check "... and leaves the file" eq "$(cat "$TOPO_RUN/file")" keep
topo_stop

echo "$pass passed, $fail failed"
if [ "$fail" -ne 0 ]; then
	echo "# logs: ${runs[*]}"
	exit 1
fi
rm -rf "${runs[@]}"
