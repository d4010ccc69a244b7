#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Checks scripts/turbolb.lua with tshark: writes a pcap of crafted turbolb
# frames (same layout as docs/protocol.md, built here independently of
# proto.c), decodes it and compares every header field, the info column,
# the expert items and the port preference with what was written.
#
#   tests/cli/test_dissector.sh [SOURCE_ROOT]
#
# Needs tshark (Debian package 'tshark'; scripts/setup.sh installs it).
# Without it the test fails: a dissector nobody ran is not tested.
set -uo pipefail

top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
lua=$top/scripts/turbolb.lua
passed=0
failed=0

ok() {
	passed=$((passed + 1))
	echo "ok: $*"
}

not_ok() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

finish() {
	echo "$passed passed, $failed failed"
	if [ "$failed" -ne 0 ]; then
		exit 1
	fi
	exit 0
}

if ! command -v tshark >/dev/null 2>&1; then
	echo "test_dissector: tshark is not installed; install the Debian" \
		"package 'tshark' (scripts/setup.sh does)" >&2
	not_ok "tshark available"
	finish
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "test_dissector: python3 is needed to write the capture" >&2
	not_ok "python3 available"
	finish
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private, empty configuration: a user's own preferences (a changed
# turbolb port, disabled protocols) must not change the outcome.
export WIRESHARK_CONFIG_DIR=$tmp/config
mkdir -p "$WIRESHARK_CONFIG_DIR"
pcap=$tmp/turbolb.pcap

# Frames, in order (client 40000 <-> server 9000 unless noted):
#  1 IPv4 request       req 0x1122334455667788, hint, class 2, 16 B payload
#  2 IPv4 response      to 1: core 3, service 4200 ns, work 4000 ns echoed
#  3-5 IPv4 request     req 0xabc, packets 0..2 of 3, 100 B each
#  6 IPv6 request       req 42, 8 B payload
#  7 IPv6 error         to 6: status overload
#  8 802.1Q IPv4 request req 7, reserved flag bit 0x0100 set
#  9 IPv4 request       bad magic 0x5443
# 10 IPv4 request       to port 9100 (decoded only with the preference)
# memcached over UDP, client 40010 <-> server 11211:
# 11 request            id 7, "get foo"
# 12 response           id 7, datagram 1 of 2 ("VALUE foo 0 5" ...)
# 13 response           id 7, datagram 2 of 2 (the rest of the value)
# 14 response           id 7, header only (total 0)
# 15 request            id 8, total 2: bad_pkt_count
python3 - "$pcap" <<'PY'
import struct
import sys

def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff

def rpc(mtype, req_id, payload=b'', flags=0, svc_class=0, pkt_idx=0,
        pkt_cnt=1, status=0, hint=0, work=0, client_ts=0, core=0,
        service=0, magic=0x5442, version=1):
    hdr = struct.pack('!HBBHHQHHHHIIQHHI', magic, version, mtype, flags,
                      svc_class, req_id, pkt_idx, pkt_cnt, len(payload),
                      status, hint, work, client_ts, core, 0, service)
    assert len(hdr) == 48
    return hdr + payload

def udp_v4(src, dst, sport, dport, data):
    ulen = 8 + len(data)
    pseudo = src + dst + struct.pack('!BBH', 0, 17, ulen)
    u = struct.pack('!HHHH', sport, dport, ulen, 0) + data
    c = csum(pseudo + u) or 0xffff
    return u[:6] + struct.pack('!H', c) + u[8:]

def ipv4(src, dst, sport, dport, data):
    u = udp_v4(src, dst, sport, dport, data)
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(u), 0, 0x4000, 64,
                    17, 0, src, dst)
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + u

def ipv6(src, dst, sport, dport, data):
    ulen = 8 + len(data)
    pseudo = src + dst + struct.pack('!IxxxB', ulen, 17)
    u = struct.pack('!HHHH', sport, dport, ulen, 0) + data
    c = csum(pseudo + u) or 0xffff
    u = u[:6] + struct.pack('!H', c) + u[8:]
    return struct.pack('!IHBB', 6 << 28, ulen, 17, 64) + src + dst + u

CLI_MAC = bytes.fromhex('020000000001')
SRV_MAC = bytes.fromhex('020000000002')
C4, S4 = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
C6 = bytes.fromhex('20010db8000000000000000000000001')
S6 = bytes.fromhex('20010db8000000000000000000000002')

def eth(dst, src, etype, l3, vlan=None):
    if vlan is not None:
        return dst + src + struct.pack('!HHH', 0x8100, vlan, etype) + l3
    return dst + src + struct.pack('!H', etype) + l3

def to_srv(l3, v6=False, vlan=None):
    return eth(SRV_MAC, CLI_MAC, 0x86dd if v6 else 0x0800, l3, vlan)

def to_cli(l3, v6=False):
    return eth(CLI_MAC, SRV_MAC, 0x86dd if v6 else 0x0800, l3)

frames = []
pl16 = bytes(range(16))
frames.append(to_srv(ipv4(C4, S4, 40000, 9000,
    rpc(1, 0x1122334455667788, pl16, flags=1, svc_class=2, hint=5000,
        client_ts=123456789))))
frames.append(to_cli(ipv4(S4, C4, 9000, 40000,
    rpc(2, 0x1122334455667788, b'resp', flags=1, svc_class=2, hint=5000,
        work=4000, client_ts=123456789, core=3, service=4200))))
for i in range(3):
    frames.append(to_srv(ipv4(C4, S4, 40000, 9000,
        rpc(1, 0xabc, bytes([i]) * 100, pkt_idx=i, pkt_cnt=3,
            client_ts=1000 + i))))
frames.append(to_srv(ipv6(C6, S6, 40001, 9000,
    rpc(1, 42, b'ipv6-req', svc_class=1, client_ts=77)), v6=True))
frames.append(to_cli(ipv6(S6, C6, 9000, 40001,
    rpc(3, 42, status=3, svc_class=1, client_ts=77, core=1)), v6=True))
frames.append(to_srv(ipv4(C4, S4, 40002, 9000,
    rpc(1, 7, b'vlan', flags=0x0100)), vlan=0x0064))
frames.append(to_srv(ipv4(C4, S4, 40003, 9000,
    rpc(1, 9, magic=0x5443))))
frames.append(to_srv(ipv4(C4, S4, 40004, 9100, rpc(1, 10, b'p'))))

def mc(req_id, seq, total, text):
    return struct.pack('!HHHH', req_id, seq, total, 0) + text

frames.append(to_srv(ipv4(C4, S4, 40010, 11211, mc(7, 0, 1, b'get foo\r\n'))))
frames.append(to_cli(ipv4(S4, C4, 11211, 40010,
    mc(7, 0, 2, b'VALUE foo 0 5\r\nab'))))
frames.append(to_cli(ipv4(S4, C4, 11211, 40010,
    mc(7, 1, 2, b'cde\r\nEND\r\n'))))
frames.append(to_cli(ipv4(S4, C4, 11211, 40010, mc(7, 0, 0, b''))))
frames.append(to_srv(ipv4(C4, S4, 40010, 11211, mc(8, 0, 2, b'get a\r\n'))))

with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)))
        f.write(fr)
PY
if [ ! -s "$pcap" ]; then
	not_ok "writing the capture"
	finish
fi

ts() {
	tshark -n -X "lua_script:$lua" -r "$pcap" "$@" 2>"$tmp/stderr"
}

# Lua can be off: a tshark built without it, enable_lua = false, or (older
# releases, and the default of some packagers) run_user_scripts_when_superuser
# = false in init.lua while we run as root, as CI does.
if ! tshark -G protocols -X "lua_script:$lua" 2>"$tmp/stderr" |
	grep -q "	turbolb\$"; then
	echo "test_dissector: tshark did not load $lua" >&2
	if [ "$(id -u)" -eq 0 ]; then
		echo "  running as root: check that init.lua (see" \
			"'tshark -G folders', Global configuration) has" \
			"enable_lua = true and" \
			"run_user_scripts_when_superuser = true" >&2
	fi
	sed 's/^/  tshark: /' "$tmp/stderr" >&2
	not_ok "the dissector loads"
	finish
fi
ok "the dissector loads"
ts -c 1 >/dev/null
if grep -qi 'lua.*error\|error.*lua' "$tmp/stderr"; then
	sed 's/^/  tshark: /' "$tmp/stderr" >&2
	not_ok "no Lua errors"
else
	ok "no Lua errors"
fi

# Header fields, one line per frame. The last frame is on another port
# and must not be decoded with the default preference.
fields="turbolb.type turbolb.req_id turbolb.flags turbolb.flags.hint
	turbolb.svc_class turbolb.pkt_idx turbolb.pkt_cnt turbolb.payload_len
	turbolb.status turbolb.svc_hint_ns turbolb.work_ns turbolb.client_ts
	turbolb.server_core turbolb.service_ns turbolb.magic turbolb.version"
args=()
for fld in $fields; do args+=(-e "$fld"); done
ts -T fields -E separator='|' "${args[@]}" >"$tmp/fields"
cat >"$tmp/want" <<'EOF'
1|0x1122334455667788|0x0001|1|2|0|1|16|0|5000|0|123456789|0|0|0x5442|1
2|0x1122334455667788|0x0001|1|2|0|1|4|0|5000|4000|123456789|3|4200|0x5442|1
1|0x0000000000000abc|0x0000|0|0|0|3|100|0|0|0|1000|0|0|0x5442|1
1|0x0000000000000abc|0x0000|0|0|1|3|100|0|0|0|1001|0|0|0x5442|1
1|0x0000000000000abc|0x0000|0|0|2|3|100|0|0|0|1002|0|0|0x5442|1
1|0x000000000000002a|0x0000|0|1|0|1|8|0|0|0|77|0|0|0x5442|1
3|0x000000000000002a|0x0000|0|1|0|1|0|3|0|0|77|1|0|0x5442|1
1|0x0000000000000007|0x0100|0|0|0|1|4|0|0|0|0|0|0|0x5442|1
1|0x0000000000000009|0x0000|0|0|0|1|0|0|0|0|0|0|0|0x5443|1
|||||||||||||||
|||||||||||||||
|||||||||||||||
|||||||||||||||
|||||||||||||||
|||||||||||||||
EOF
n=0
while IFS= read -r want <&3 && IFS= read -r got <&4; do
	n=$((n + 1))
	if [ "$got" = "$want" ]; then
		ok "frame $n fields"
	else
		not_ok "frame $n fields: got '$got', want '$want'"
	fi
done 3<"$tmp/want" 4<"$tmp/fields"
got=$(wc -l <"$tmp/fields")
want=$(wc -l <"$tmp/want")
if [ "$got" -ne "$want" ]; then
	not_ok "frame count: got $got, want $want"
fi

# Value strings and the info column.
ts -T fields -E separator='|' -e frame.number -e _ws.col.Protocol \
	-e _ws.col.Info -Y turbolb >"$tmp/info"
check_info() {
	local frame=$1 text=$2

	if grep -q "^$frame|TURBOLB|.*$text" "$tmp/info"; then
		ok "frame $frame info has '$text'"
	else
		not_ok "frame $frame info has '$text':" \
			"$(grep "^$frame|" "$tmp/info")"
	fi
}
check_info 1 "Request req_id=0x1122334455667788"
check_info 2 "Response req_id=0x1122334455667788 status=OK"
check_info 4 "pkt 2/3"
check_info 6 "Request req_id=0x000000000000002a"
check_info 7 "Error .*status=Overload"
ts -V -Y 'frame.number == 7' >"$tmp/verbose7"
if grep -q "Status: Overload (3)" "$tmp/verbose7" &&
   grep -q "Message type: Error (3)" "$tmp/verbose7"; then
	ok "value strings in the tree"
else
	not_ok "value strings in the tree"
fi

# No malformed packets and no error-level expert items in the valid
# frames (checksums included: a wrong one is an error item too); the
# bad-magic frame gets exactly its expert item.
bad=$(ts -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE \
	-T fields -e frame.number \
	-Y '_ws.malformed || _ws.expert.severity >= 0x00800000' | tr '\n' ' ')
if [ "$bad" = "9 15 " ]; then
	ok "only frames 9 and 15 are flagged malformed or in error"
else
	not_ok "only frames 9 and 15 are flagged malformed or in error:" \
		"got '$bad'"
fi
got=$(ts -T fields -e frame.number -Y turbolb.bad_magic | tr '\n' ' ')
if [ "$got" = "9 " ]; then
	ok "bad magic expert item on frame 9"
else
	not_ok "bad magic expert item on frame 9: got '$got'"
fi
got=$(ts -T fields -e frame.number -Y turbolb.reserved_flags | tr '\n' ' ')
if [ "$got" = "8 " ]; then
	ok "reserved flags note on frame 8"
else
	not_ok "reserved flags note on frame 8: got '$got'"
fi

# memcached's UDP frame header, and the text after it handed to
# Wireshark's memcache dissector.
ts -T fields -E separator='|' -e frame.number -e mcudp.req_id -e mcudp.seq \
	-e mcudp.total -e mcudp.reserved -Y mcudp >"$tmp/mcudp"
cat >"$tmp/want_mc" <<'EOF'
11|0x0007|0|1|0x0000
12|0x0007|0|2|0x0000
13|0x0007|1|2|0x0000
14|0x0007|0|0|0x0000
15|0x0008|0|2|0x0000
EOF
if diff "$tmp/want_mc" "$tmp/mcudp" >"$tmp/diff_mc"; then
	ok "memcached UDP frame header fields"
else
	not_ok "memcached UDP frame header fields: $(tr '\n' ' ' <"$tmp/diff_mc")"
fi
got=$(ts -T fields -E separator='|' -e frame.number -e memcache.command \
	-e memcache.key -Y 'mcudp && memcache.command' | tr '\n' ' ')
if [ "$got" = "11|get|foo 15|get|a " ]; then
	ok "memcache decodes the text after the frame header"
else
	not_ok "memcache decodes the text after the frame header: got '$got'"
fi
ts -T fields -E separator='|' -e frame.number -e _ws.col.Protocol \
	-e _ws.col.Info -Y mcudp >"$tmp/info_mc"
check_mc_info() {
	local frame=$1 text=$2

	if grep -q "^$frame|MCUDP|.*$text" "$tmp/info_mc"; then
		ok "frame $frame info has '$text'"
	else
		not_ok "frame $frame info has '$text':" \
			"$(grep "^$frame|" "$tmp/info_mc")"
	fi
}
check_mc_info 11 "Request id=0x0007 datagram 1/1"
check_mc_info 13 "Response id=0x0007 datagram 2/2"
check_mc_info 14 "Response id=0x0007 header only"
got=$(ts -T fields -e frame.number -Y mcudp.bad_pkt_count | tr '\n' ' ')
if [ "$got" = "15 " ]; then
	ok "bad_pkt_count expert item on frame 15"
else
	not_ok "bad_pkt_count expert item on frame 15: got '$got'"
fi

# The port preference moves the registration.
got=$(ts -o turbolb.udp_port:9100 -T fields -e frame.number -e turbolb.req_id \
	-Y turbolb | tr '\n' ' ')
if [ "$got" = "10	0x000000000000000a " ]; then
	ok "udp_port preference"
else
	not_ok "udp_port preference: got '$got'"
fi

finish
