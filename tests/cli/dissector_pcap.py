#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The capture of tests/cli/test_dissector.sh: crafted turbolb frames in
the layout of docs/protocol.md, built here independently of proto.c, so
that the dissector (scripts/turbolb.lua) is checked against a second
reading of the protocol.

    dissector_pcap.py OUT.pcap

The frames, in order (client 40000 <-> server 9000 unless noted), are
listed in test_dissector.sh, which checks what tshark decodes of each.
The checksums and the header layout are tested by
tests/python/test_dissector_pcap.py.
"""
import struct
import sys


def csum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def rpc(mtype, req_id, payload=b'', flags=0, svc_class=0, pkt_idx=0,
        pkt_cnt=1, status=0, hint=0, work=0, client_ts=0, core=0,
        service=0, magic=0x5442, version=1):
    """The 48-byte turbolb header (docs/protocol.md) and the payload."""
    hdr = struct.pack('!HBBHHQHHHHIIQHHI', magic, version, mtype, flags,
                      svc_class, req_id, pkt_idx, pkt_cnt, len(payload),
                      status, hint, work, client_ts, core, 0, service)
    assert len(hdr) == 48
    return hdr + payload


def udp_v4(src, dst, sport, dport, data):
    """A UDP datagram with its checksum over the IPv4 pseudo-header."""
    ulen = 8 + len(data)
    pseudo = src + dst + struct.pack('!BBH', 0, 17, ulen)
    u = struct.pack('!HHHH', sport, dport, ulen, 0) + data
    c = csum(pseudo + u) or 0xffff
    return u[:6] + struct.pack('!H', c) + u[8:]


def ipv4(src, dst, sport, dport, data):
    """An IPv4 packet (DF, TTL 64) carrying a UDP datagram."""
    u = udp_v4(src, dst, sport, dport, data)
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(u), 0, 0x4000, 64,
                    17, 0, src, dst)
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + u


def ipv6(src, dst, sport, dport, data):
    """An IPv6 packet (hop limit 64) carrying a UDP datagram."""
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
    """An Ethernet frame, with an 802.1Q tag when vlan is given."""
    if vlan is not None:
        return dst + src + struct.pack('!HHH', 0x8100, vlan, etype) + l3
    return dst + src + struct.pack('!H', etype) + l3


def to_srv(l3, v6=False, vlan=None):
    return eth(SRV_MAC, CLI_MAC, 0x86dd if v6 else 0x0800, l3, vlan)


def to_cli(l3, v6=False):
    return eth(CLI_MAC, SRV_MAC, 0x86dd if v6 else 0x0800, l3)


def mc(req_id, seq, total, text):
    """memcached's 8-byte UDP frame header, then the text."""
    return struct.pack('!HHHH', req_id, seq, total, 0) + text


def frames():
    """The frames of the capture, in order."""
    out = []
    pl16 = bytes(range(16))
    out.append(to_srv(ipv4(C4, S4, 40000, 9000,
        rpc(1, 0x1122334455667788, pl16, flags=1, svc_class=2, hint=5000,
            client_ts=123456789))))
    out.append(to_cli(ipv4(S4, C4, 9000, 40000,
        rpc(2, 0x1122334455667788, b'resp', flags=1, svc_class=2, hint=5000,
            work=4000, client_ts=123456789, core=3, service=4200))))
    for i in range(3):
        out.append(to_srv(ipv4(C4, S4, 40000, 9000,
            rpc(1, 0xabc, bytes([i]) * 100, pkt_idx=i, pkt_cnt=3,
                client_ts=1000 + i))))
    out.append(to_srv(ipv6(C6, S6, 40001, 9000,
        rpc(1, 42, b'ipv6-req', svc_class=1, client_ts=77)), v6=True))
    out.append(to_cli(ipv6(S6, C6, 9000, 40001,
        rpc(3, 42, status=3, svc_class=1, client_ts=77, core=1)), v6=True))
    out.append(to_srv(ipv4(C4, S4, 40002, 9000,
        rpc(1, 7, b'vlan', flags=0x0100)), vlan=0x0064))
    out.append(to_srv(ipv4(C4, S4, 40003, 9000,
        rpc(1, 9, magic=0x5443))))
    out.append(to_srv(ipv4(C4, S4, 40004, 9100, rpc(1, 10, b'p'))))
    # memcached over UDP, client 40010 <-> server 11211
    out.append(to_srv(ipv4(C4, S4, 40010, 11211, mc(7, 0, 1, b'get foo\r\n'))))
    out.append(to_cli(ipv4(S4, C4, 11211, 40010,
        mc(7, 0, 2, b'VALUE foo 0 5\r\nab'))))
    out.append(to_cli(ipv4(S4, C4, 11211, 40010,
        mc(7, 1, 2, b'cde\r\nEND\r\n'))))
    out.append(to_cli(ipv4(S4, C4, 11211, 40010, mc(7, 0, 0, b''))))
    out.append(to_srv(ipv4(C4, S4, 40010, 11211, mc(8, 0, 2, b'get a\r\n'))))
    return out


def write_pcap(path, frs):
    """A classic pcap (microseconds, Ethernet), one second apart."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frs):
            f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    write_pcap(argv[1], frames())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
