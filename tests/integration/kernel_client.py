#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The client of tests/integration/test_kernel_peer.sh: kernel sockets
only, run in the client's network namespace. N RPCs (header v1,
docs/protocol.md) to DST:9000 from SRC, each tried up to 5 times (the
first waits for ARP, across the daemon), then 3 ICMP echoes to DST, and
what the kernel's counters (/proc/net/snmp) say of the answers.

    kernel_client.py SRC DST N

Prints one line: "OK BAD CORES PINGS UdpInCsumErrors UdpInErrors
IpInHdrErrors IpInAddrErrors UdpInDatagrams" (the counters as the
difference over the run). The packet layouts and the checks are tested
by tests/python/test_kernel_client.py.
"""
import os
import socket
import struct
import sys
import time

HDR = '!HBBHHQHHHHIIQHHI'  # 48 bytes, big endian
MAGIC, VERSION, REQUEST, RESPONSE = 0x5442, 1, 1, 2
HINT_NS = 2000


def parse_snmp(lines):
    """/proc/net/snmp: a line of names, then a line of values, per group;
    {"UdpInErrors": n, ...}."""
    rows = [line.split() for line in lines]
    out = {}
    for names, values in zip(rows[0::2], rows[1::2]):
        group = names[0].rstrip(':')
        out.update({group + k: int(v)
                    for k, v in zip(names[1:], values[1:])})
    return out


def snmp():
    with open('/proc/net/snmp') as f:
        return parse_snmp(f)


def request(req_id, ts):
    """A single-packet request with a service-time hint and client_ts."""
    req = struct.pack(HDR, MAGIC, VERSION, REQUEST, 1, 0, req_id, 0, 1, 0,
                      0, HINT_NS, 0, ts, 0, 0, 0)
    assert len(req) == 48
    return req


def response_ok(h, length, ts):
    """Whether an unpacked response header h (of a datagram of length
    bytes) answers the request sent at ts: a response, status 0, the hint
    and client_ts echoed, no payload."""
    magic, ver, typ, status, hint, cts = h[0], h[1], h[2], h[9], h[10], h[12]
    return ((magic, ver, typ, status, cts, hint, length) ==
            (MAGIC, VERSION, RESPONSE, 0, ts, HINT_NS, 48))


def rpc(src, dst, n):
    """(answered, failed, cores that served) over n requests."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.connect((dst, 9000))
    s.settimeout(2.0)
    ok = bad = 0
    cores = set()
    for i in range(1, n + 1):
        ts = time.monotonic_ns()
        req = request(i, ts)
        for attempt in range(5):  # the first one waits for ARP, across
            s.send(req)           # the daemon
            try:
                while True:
                    r = s.recv(2048)
                    h = struct.unpack(HDR, r[:48])
                    if h[5] == i:
                        break
            except socket.timeout:
                continue
            break
        else:
            bad += 1
            continue
        if response_ok(h, len(r), ts):
            ok += 1
            cores.add(h[13])
        else:
            print('bad response', h, len(r), file=sys.stderr)
            bad += 1
    return ok, bad, len(cores)


def echo_request(ident, seq):
    """An ICMP echo request with its checksum."""
    body = struct.pack('!BBHHH', 8, 0, 0, ident, seq) + b'turbolb-ping' * 4
    c = sum(struct.unpack('!%dH' % (len(body) // 2), body))
    c = (c & 0xFFFF) + (c >> 16)
    c = ~((c & 0xFFFF) + (c >> 16)) & 0xFFFF
    return body[:2] + struct.pack('!H', c) + body[4:]


def is_echo_reply(pkt, ident, seq):
    """Whether an IPv4 packet (as a raw socket reads it) is the echo reply
    of (ident, seq)."""
    ihl = (pkt[0] & 0xF) * 4
    t, _, _, pid, sq = struct.unpack('!BBHHH', pkt[ihl:ihl + 8])
    return t == 0 and pid == ident and sq == seq


def ping(dst, n):
    """Echo replies from dst, of n requests."""
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    s.settimeout(2.0)
    ident = os.getpid() & 0xFFFF
    got = 0
    for seq in range(1, n + 1):
        s.sendto(echo_request(ident, seq), (dst, 0))
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                pkt, addr = s.recvfrom(2048)
            except socket.timeout:
                break
            if addr[0] == dst and is_echo_reply(pkt, ident, seq):
                got += 1
                break
    return got


def main(argv):
    before = snmp()
    ok, bad, n_cores = rpc(argv[1], argv[2], int(argv[3]))
    pings = ping(argv[2], 3)
    after = snmp()

    def d(k):
        return after.get(k, 0) - before.get(k, 0)
    print(ok, bad, n_cores, pings, d('UdpInCsumErrors'), d('UdpInErrors'),
          d('IpInHdrErrors'), d('IpInAddrErrors'), d('UdpInDatagrams'))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
