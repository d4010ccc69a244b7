# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Real servers behind turbolbd, in network namespaces: the plumbing of the
# `peers` test suite (tests/peers/) and of `scripts/demo.sh --dns`. Each
# namespace srv0..srvN-1 is one host core: one single-threaded server
# (nsd, memcached) bound to the service address. A client namespace sends
# to that address; its frames enter turbolbd's uplink, turbolbd (in a
# namespace of its own, the NIC) steers each request to one core's port,
# and the responses come back up the same way:
#
#   ns cli  10.79.0.1  c0 ==veth== u0 -[bridge bu]- dtu  (ns nic)  turbolbd
#                                                      net_tap0: uplink
#   ns srvI 10.79.0.2  s0 ==veth== tI -[bridge bI]- dtI            net_tapI+1: core I
#
# turbolbd's ports are net_tap devices (dtu, dtI) that it creates in the
# NIC namespace; a bridge there joins each to the veth of its namespace.
# Not net_af_packet: its transmit kicks the kernel with a non-blocking
# sendto() and ignores EAGAIN (DPDK 22.11), so when the socket's send
# buffer is full the frames stay in its ring, reported sent, until the next
# transmit on that queue, which a client waiting for its reply never
# causes. A tap's write() either hands the frame to the kernel or fails,
# and turbolbd counts what failed.
#
# Every server's s0 has the same IP address and the same MAC address (the
# service's): a request leaves the client addressed to that MAC and reaches
# whichever server turbolbd picked unchanged, with no rewrite of the
# destination MAC. Each bridge joins one tap to one veth, so the shared MAC
# is never seen twice by one bridge. The addresses are static on both
# sides (ARP entries), so nothing but the client's UDP crosses the daemon,
# and IPv6 is off in every namespace (no neighbour discovery or MLD).
# Transmit checksum offload is off on c0 and every s0: a veth leaves a UDP
# checksum to the receiver's kernel, but the frame reaches the peer through
# the daemon, which carries it as it is from one tap to another, so the
# receiving kernel would drop it as a bad checksum.
#
# Source scripts/lib/topology.sh first (the run folder, topo_wait,
# topo_kill, topo_stop), then this file, then:
#
#   peers_require_root             fail (exit 1) with a message unless root
#   peers_init NAME N              topo_init, names of N server namespaces,
#                                  a trap that removes everything on exit
#   peers_net                      the namespaces, veths, addresses, ARP
#   peers_config PORT PROTO [KEY=VALUE..]
#                                  turbolbd.yaml: PORT served as PROTO
#                                  (none: only port 9000 as turbolb RPCs),
#                                  policy=, k=, default=I (a default target:
#                                  server I's port, for frames not of PROTO)
#   peers_start_daemon             turbolbd in the NIC namespace, up, its
#                                  taps joined to the bridges
#   peers_start_nsd I              nsd in server I, answering for ZONE
#   peers_start_memcached I        memcached (UDP and TCP) in server I
#   peers_ctl ARGS..               turbolbctl --json ARGS against the daemon
#   peers_policy NAME              switch the daemon's policy live
#   peers_dns_queries              the query file: h0..h99 of PEERS_ZONE, A
#   peers_dnsperf DIR POLICY ARGS..
#                                  one phase: the daemon's counters, dnsperf
#                                  ARGS from the client, the counters again;
#                                  DIR/phase.json (scripts/peers_report.py)
#   peers_snapshot DIR N           DIR/statsN.json and DIR/coresN.json
#   peers_in_cli CMD..             run CMD in the client namespace
#   peers_cleanup                  stop every process, remove every namespace
#
# Every wait is a bounded poll on a condition (topo_wait), never a sleep
# that correctness depends on.

PEERS_CLI_IP=10.79.0.1
PEERS_SRV_IP=10.79.0.2
PEERS_CLI_MAC=02:79:00:00:00:01
PEERS_SRV_MAC=02:79:00:00:00:02
# The zone every nsd serves and the names the clients ask for.
PEERS_ZONE=peers.turbolb.test
TLBCTL=$TOPO_BUILD/src/tools/turbolbctl

peers_require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "FAIL: the peers suite needs root (network namespaces, servers" \
			"bound to port 53); run it as root" >&2
		exit 1
	fi
	local exe
	for exe in ip ethtool "$@"; do
		command -v "$exe" > /dev/null || {
			echo "FAIL: $exe not found: run scripts/setup.sh" >&2
			exit 1
		}
	done
}

peers_init() {
	topo_init "${1:-peers}"
	PEERS_N=${2:-4}
	TOPO_CORES=$PEERS_N
	PEERS_NS_CLI=tlbp-cli-$$
	PEERS_NS_NIC=tlbp-nic-$$
	PEERS_NS_SRV=()
	local i
	for ((i = 0; i < PEERS_N; i++)); do
		PEERS_NS_SRV+=("tlbp-srv$i-$$")
	done
	PEERS_SRV_PIDS=()
	trap 'peers_cleanup' EXIT
	# A signal runs the EXIT trap too: the namespaces never outlive the run.
	trap 'exit 130' INT TERM
}

peers_in() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}
peers_in_cli() { peers_in "$PEERS_NS_CLI" "$@"; }
peers_in_srv() {
	local i=$1
	shift
	peers_in "${PEERS_NS_SRV[$i]}" "$@"
}

# One namespace with loopback up and IPv6 off.
peers_ns_add() {
	ip netns add "$1" || return 1
	peers_in "$1" ip link set lo up
	peers_in "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	peers_in "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
}

peers_net() {
	local ns i
	for ns in "$PEERS_NS_CLI" "$PEERS_NS_NIC" "${PEERS_NS_SRV[@]}"; do
		peers_ns_add "$ns" || return 1
	done
	ip link add c0 netns "$PEERS_NS_CLI" address "$PEERS_CLI_MAC" \
		type veth peer name u0 netns "$PEERS_NS_NIC" || return 1
	peers_in_cli ip addr add "$PEERS_CLI_IP/24" dev c0
	peers_in_cli ip link set c0 up
	peers_in_cli ethtool -K c0 tx off > /dev/null || return 1
	peers_in_cli ip neigh replace "$PEERS_SRV_IP" lladdr "$PEERS_SRV_MAC" \
		dev c0 nud permanent || return 1
	peers_bridge bu u0 || return 1
	for ((i = 0; i < PEERS_N; i++)); do
		ip link add s0 netns "${PEERS_NS_SRV[$i]}" address "$PEERS_SRV_MAC" \
			type veth peer name "t$i" netns "$PEERS_NS_NIC" || return 1
		peers_in_srv "$i" ip addr add "$PEERS_SRV_IP/24" dev s0
		peers_in_srv "$i" ip link set s0 up
		peers_in_srv "$i" ethtool -K s0 tx off > /dev/null || return 1
		peers_in_srv "$i" ip neigh replace "$PEERS_CLI_IP" \
			lladdr "$PEERS_CLI_MAC" dev s0 nud permanent || return 1
		peers_bridge "b$i" "t$i" || return 1
	done
}

# peers_bridge BRIDGE IFACE: in the NIC namespace, BRIDGE up with IFACE
# in it; the daemon's tap joins it once the daemon made it. No STP and no
# multicast snooping: a port forwards as soon as it is up, and the bridge
# sends nothing of its own.
peers_bridge() {
	peers_in "$PEERS_NS_NIC" ip link add "$1" type bridge stp_state 0 \
		mcast_snooping 0 &&
		peers_join "$2" "$1" &&
		peers_in "$PEERS_NS_NIC" ip link set "$1" up
}

# peers_join IFACE BRIDGE: IFACE, of the NIC namespace, up in BRIDGE.
peers_join() {
	peers_in "$PEERS_NS_NIC" ip link set "$1" master "$2" &&
		peers_in "$PEERS_NS_NIC" ip link set "$1" up
}

# peers_config PORT PROTO [policy=NAME] [k=K] [default=I]
# The uplink is net_tap0 (tap dtu, bridged to u0), core I's port
# net_tapI+1 (tap dtI, bridged to tI).
# Completions come from the responses (credits inband, transport none: the
# servers know nothing of turbolb). A core is taken out of rotation only
# after 10 s without progress: a server descheduled on a busy machine
# stays in, so the per-core counts follow the policy alone.
peers_config() {
	local port=$1 proto=$2 policy=jsq k=2 default= kv i dt=
	shift 2
	for kv in "$@"; do
		case $kv in
		policy=*) policy=${kv#*=} ;;
		k=*) k=${kv#*=} ;;
		default=*) default=${kv#*=} ;;
		*) topo_log "peers_config: unknown $kv"; return 2 ;;
		esac
	done
	[ -z "$default" ] ||
		dt="  default_target: { port: net_tap$((default + 1)) }"
	{
		cat <<YAML
# generated by scripts/lib/peers.sh for run $TOPO_NAME
eal:
  memory_mb: 256
  no_huge: true
  no_pci: true
  file_prefix: $TOPO_DPREFIX
  vdevs:
    - net_tap0,iface=dtu
YAML
		for ((i = 0; i < PEERS_N; i++)); do
			echo "    - net_tap$((i + 1)),iface=dt$i"
		done
		cat <<YAML
datapath:
  lcores: [1]
  idle_sleep_us: 20
ports:
  uplink: { port: net_tap0 }
${dt:+$dt
}  targets:
YAML
		for ((i = 0; i < PEERS_N; i++)); do
			echo "    - { core: $i, port: net_tap$((i + 1)) }"
		done
		cat <<YAML
YAML
		if [ "$proto" = none ]; then
			echo "rpc: { udp_ports: [9000] }"
		else
			echo "rpc: { ports: [ { port: $port, protocol: $proto } ] }"
		fi
		cat <<YAML
policy:
  name: $policy
  k: $k
host:
  credits: inband
  transport: none
  stale_timeout_us: 10000000
  write_off_us: 20000000
YAML
	} > "$TOPO_RUN/turbolbd.yaml"
}

peers_start_daemon() {
	local i
	# ip netns exec execs the program: $! is the daemon's own id (not
	# that of a subshell, as a function run in the background would be).
	ip netns exec "$PEERS_NS_NIC" "$TLBD" -c "$TOPO_RUN/turbolbd.yaml" \
		> "$TOPO_RUN/turbolbd.log" 2>&1 &
	TOPO_DPID=$!
	TOPO_PIDS+=("$TOPO_DPID")
	topo_wait "! kill -0 $TOPO_DPID 2>/dev/null || \
		peers_ctl config 2>/dev/null | grep -q policy" 120 &&
		kill -0 "$TOPO_DPID" 2>/dev/null || {
		cat "$TOPO_RUN/turbolbd.log" >&2
		return 1
	}
	# The taps exist from the daemon's start (EAL made them): each joins
	# its bridge, and only then can a frame cross.
	peers_join dtu bu || return 1
	for ((i = 0; i < PEERS_N; i++)); do
		peers_join "dt$i" "b$i" || return 1
	done
}


# Up to three tries: on a loaded machine the telemetry thread may not
# answer within turbolbctl's 5 s. The commands used are reads, or a switch
# to a policy, which may be repeated.
peers_ctl() {
	local try
	for try in 1 2 3; do
		timeout 20 "$TLBCTL" -f "$TOPO_DPREFIX" --json "$@" && return 0
	done
	return 1
}

peers_policy() {
	peers_ctl policy "$1" > "$TOPO_RUN/policy.log"
}

# nsd, one server process (server-count 1) on PEERS_SRV_IP:53, for
# PEERS_ZONE: www (A), and h0..h99 (A). Response rate limiting off: it
# would refuse the one client address after some thousand queries.
peers_start_nsd() {
	local i=$1 d=$TOPO_RUN/nsd$1 n
	mkdir -p "$d"
	{
		printf '$ORIGIN %s.\n$TTL 300\n' "$PEERS_ZONE"
		printf '@ IN SOA ns admin 1 3600 600 86400 300\n'
		printf '@ IN NS ns\nns IN A %s\nwww IN A %s\n' \
			"$PEERS_SRV_IP" "$PEERS_SRV_IP"
		for ((n = 0; n < 100; n++)); do
			printf 'h%d IN A 10.80.%d.%d\n' "$n" "$i" "$n"
		done
	} > "$d/zone"
	cat > "$d/nsd.conf" <<CONF
server:
  ip-address: $PEERS_SRV_IP
  port: 53
  do-ip6: no
  server-count: 1
  tcp-count: 10
  username: ""
  chroot: ""
  zonesdir: "$d"
  database: ""
  zonelistfile: "$d/zone.list"
  xfrdfile: "$d/xfrd.state"
  pidfile: "$d/nsd.pid"
  logfile: "$d/nsd.log"
  verbosity: 1
  rrl-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: $PEERS_ZONE
  zonefile: "$d/zone"
CONF
	ip netns exec "${PEERS_NS_SRV[$i]}" nsd -d -c "$d/nsd.conf" \
		> "$d/stdout.log" 2>&1 &
	PEERS_SRV_PIDS+=($!)
	topo_wait "peers_in_srv $i ss -Hlun 'sport = :53' | grep -q ." 60 || {
		cat "$d/stdout.log" "$d/nsd.log" >&2
		return 1
	}
}

# memcached with one worker thread, UDP and TCP on PEERS_SRV_IP:11211
# (memcaslap wants both on the same port), as nobody.
peers_start_memcached() {
	local i=$1
	ip netns exec "${PEERS_NS_SRV[$i]}" memcached -u nobody -t 1 -m 64 -l "$PEERS_SRV_IP" \
		-p 11211 -U 11211 > "$TOPO_RUN/memcached$i.log" 2>&1 &
	PEERS_SRV_PIDS+=($!)
	topo_wait "peers_in_srv $i ss -Hlun 'sport = :11211' | grep -q . && \
		peers_in_srv $i ss -Hltn 'sport = :11211' | grep -q ." 60 || {
		cat "$TOPO_RUN/memcached$i.log" >&2
		return 1
	}
}

peers_dns_queries() {
	local n
	for ((n = 0; n < 100; n++)); do
		echo "h$n.$PEERS_ZONE A"
	done > "$TOPO_RUN/queries"
}

# peers_wait_path CMD..: runs CMD (one request through turbolbd that
# succeeds when its answer came, under a timeout of its own) until it
# succeeds, at most 30 times. A test's first phase starts only after the
# path has carried a request: in about one run in ten the first 60-100 ms
# of queries sent right after start-up never reached turbolbd (its
# rx_uplink counter stayed below what the client sent, no drop counted).
# Where the kernel lost them was not caught; each phase keeps the NIC
# namespace's counters (kernel0.txt, kernel1.txt) for the next time.
peers_wait_path() {
	local try
	for ((try = 0; try < 30; try++)); do
		"$@" > /dev/null 2>&1 && return 0
	done
	return 1
}

# One query through turbolbd answered, for peers_wait_path.
peers_dns_probe() {
	echo "www.$PEERS_ZONE A" > "$TOPO_RUN/probe-query"
	peers_in_cli timeout -k 2 10 dnsperf -s "$PEERS_SRV_IP" \
		-d "$TOPO_RUN/probe-query" -n 1 -t 1 |
		grep -q 'Queries completed: *1 '
}

peers_snapshot() {
	peers_ctl stats > "$1/stats$2.json" && peers_ctl cores > "$1/cores$2.json" &&
		peers_kernel_counters > "$1/kernel$2.txt"
}

# The NIC namespace's link and qdisc counters: where a frame that never
# reached turbolbd was dropped (a phase's kernel0.txt and kernel1.txt).
peers_kernel_counters() {
	peers_in "$PEERS_NS_NIC" ip -s -s link
	peers_in "$PEERS_NS_NIC" tc -s qdisc
	peers_in "$PEERS_NS_NIC" bridge link
}

# dnsperf under a bound (a hung client fails the phase, it does not hang the
# run); its exit status is the function's.
peers_dnsperf() {
	local dir=$1 policy=$2 rc
	shift 2
	mkdir -p "$dir"
	peers_snapshot "$dir" 0 || return 1
	peers_in_cli timeout -k 5 300 dnsperf -s "$PEERS_SRV_IP" \
		-d "$TOPO_RUN/queries" "$@" > "$dir/dnsperf.txt" 2>&1
	rc=$?
	peers_snapshot "$dir" 1 || return 1
	python3 "$TOPO_TOP/scripts/peers_report.py" phase "$policy" "$dir" \
		> "$dir/phase.json" || return 1
	return $rc
}

# peers_field DIR KEY..: values from DIR/phase.json.
peers_field() {
	local dir=$1
	shift
	python3 "$TOPO_TOP/scripts/peers_report.py" field "$dir/phase.json" "$@"
}

peers_cleanup() {
	local pid ns
	set +e
	topo_stop
	for pid in "${PEERS_SRV_PIDS[@]}"; do
		topo_kill "$pid"
	done
	PEERS_SRV_PIDS=()
	# What a server forked and left (nsd's xfrd): only processes in these
	# namespaces, all of them this run's.
	for ns in "$PEERS_NS_CLI" "$PEERS_NS_NIC" "${PEERS_NS_SRV[@]}"; do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$pid" 2>/dev/null
		done
		ip netns del "$ns" 2>/dev/null
	done
	return 0
}
