#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DNS through turbolbd, real software at both ends: dnsperf in a client
# namespace, N nsd servers, one per emulated host core, each in a network
# namespace of its own (scripts/lib/peers.sh draws it), port 53 served by
# the `dns` protocol. For each policy, switched live, dnsperf runs at a
# fixed rate over several flows; the demo prints dnsperf's own statistics
# (rate, lost, latency) next to the daemon's per-core counts over the same
# run, then one table of all policies, and removes everything it made.
# Needs root. `scripts/demo.sh --dns [OPTIONS]` runs it.
#
#   scripts/demo-dns.sh [--rate QPS] [--duration S] [--flows N]
#                       [--cores N] [--policies LIST] [--no-build]
#
#   --rate QPS      dnsperf's fixed rate, -Q (default 2000)
#   --duration S    seconds per policy, dnsperf -l (default 3)
#   --flows N       dnsperf clients, each its own source port (default 8)
#   --cores N       nsd namespaces, host cores (default 4)
#   --policies L    comma-separated (default rss,rr,jsq,jlq,jbsq)
#   --no-build      use the build as it is (BUILD, default build/)
#
# On a machine with few CPUs the servers, dnsperf and turbolbd share them:
# the latencies include that scheduling, and the policies differ in how
# they work around a server that is descheduled (docs/balancing-dns-memcached.md).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

usage() {
	awk 'NR < 3 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
	exit "${1:-2}"
}
rate=2000 secs=3 flows=8 cores=4 policies=rss,rr,jsq,jlq,jbsq build=1
need() {
	[ $# -ge 2 ] || { echo "demo-dns: $1 needs a value" >&2; usage; }
}
while [ $# -gt 0 ]; do
	case $1 in
	--rate) need "$@"; rate=$2; shift 2 ;;
	--duration) need "$@"; secs=$2; shift 2 ;;
	--flows) need "$@"; flows=$2; shift 2 ;;
	--cores) need "$@"; cores=$2; shift 2 ;;
	--policies) need "$@"; policies=$2; shift 2 ;;
	--no-build) build=; shift ;;
	-h | --help) usage 0 ;;
	*) echo "demo-dns: unknown argument '$1'" >&2; usage ;;
	esac
done
for v in rate secs flows cores; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
		{ echo "demo-dns: '${!v}': want a whole number >= 1" >&2; exit 2; }
done

BUILD=${BUILD:-build}
if [ -n "$build" ]; then
	if [ ! -x "$BUILD/src/daemon/turbolbd" ] || ! command -v dnsperf > /dev/null ||
		! command -v nsd > /dev/null; then
		scripts/setup.sh
		[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" > /dev/null
	fi
	ninja -C "$BUILD" > /dev/null
fi
. scripts/lib/topology.sh
. scripts/lib/peers.sh
peers_require_root nsd dnsperf
peers_init demo-dns "$cores"
# peers_init's EXIT trap removes the namespaces; a failure says where.
trap 'echo "demo-dns: failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR

echo "turbolb DNS demo: dnsperf -> turbolbd -> $cores nsd (one per host core), net_tap ports bridged into network namespaces"
echo "run folder: $TOPO_RUN; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
peers_net
for ((i = 0; i < cores; i++)); do peers_start_nsd "$i"; done
peers_config 53 dns policy=rss
peers_start_daemon
peers_dns_queries

phases=()
for policy in ${policies//,/ }; do
	peers_policy "$policy"
	dir=$TOPO_RUN/$policy
	peers_dnsperf "$dir" "$policy" -l "$secs" -Q "$rate" -c "$flows" -t 5 || {
		echo "demo-dns: dnsperf failed under $policy:" >&2
		tail -n 20 "$dir/dnsperf.txt" >&2
		exit 1
	}
	echo
	echo "== $policy: dnsperf -Q $rate -c $flows -l $secs"
	sed -n '/^Statistics:/,$p' "$dir/dnsperf.txt" | sed '/^$/d; s/^/  /'
	echo "  turbolbd per core (sent): $(peers_field "$dir" core_sent);" \
		"steered $(peers_field "$dir" steered), responses" \
		"$(peers_field "$dir" responses), drops $(peers_field "$dir" drops)"
	phases+=("$dir/phase.json")
done
echo
echo "== all policies (latency: dnsperf's, in microseconds; per-core: turbolbd's)"
python3 scripts/peers_report.py table "${phases[@]}"
