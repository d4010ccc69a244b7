#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes a pcap of malformed (and some well-formed) frames for turbolbd's
uplink, and the counters the daemon must end with after reading it.

    gen_malformed.py OUT.pcap OUT.json [--udp-port 9000]

Every frame is classified twice: by the intent of the case that built it,
and by an independent model of the parser written from docs/protocol.md
(classify() below). The two must agree, or this script fails: a case that
does not test what it says is a bug here. The expected counters are the
model's, per frame:

    drop_parse_<reason>   a parse error (one per frame, the first check
                          that fails, in the documented order)
    steered               a request, sent to a host core
    pass_up               not an RPC for us, sent to the default target
    drop_bad_direction    a response arriving from the wire
    drop_multi_segment    a frame the daemon's mbufs cannot hold in one
                          segment (above MBUF_DATA bytes)

Frames: every truncation of valid IPv4, IPv4+VLAN and IPv6 requests (raw
cuts, whose IP length then lies, and consistent cuts with the IP and UDP
lengths rewritten to match); wrong IP/UDP/RPC lengths; bad IP versions and
IHLs; bad magic, version, type, direction; zero, maximal and too large
packet counts and indexes; VLAN tags without payload and stacked tags;
IPv6 extension header chains (valid, too long, hop-by-hop out of place,
running past the end, two fragment headers); IPv4 and IPv6 fragments,
first and later, ours and others'; pass-through traffic (ARP, ICMP,
ICMPv6, TCP, other UDP ports, LLDP); a response from the wire; frames
larger than one mbuf.
"""
import argparse
import json
import struct
import sys

MBUF_DATA = 2048  # RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM

ETH_IPV4, ETH_IPV6, ETH_VLAN, ETH_ARP = 0x0800, 0x86DD, 0x8100, 0x0806
ETH_QINQ, ETH_LLDP = 0x88A8, 0x88CC
UDP, TCP, ICMP, ICMP6 = 17, 6, 1, 58
HOPOPTS, ROUTING, FRAGMENT, DSTOPTS = 0, 43, 44, 60
MAGIC, VERSION = 0x5442, 1
REQUEST, RESPONSE, ERROR = 1, 2, 3
RPC_LEN = 48

CLIENT_MAC = bytes.fromhex('020000000001')
SERVER_MAC = bytes.fromhex('020000000002')
CLIENT_IP4, SERVER_IP4 = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
CLIENT_IP6 = bytes.fromhex('fd000000000000000000000000000001')
SERVER_IP6 = bytes.fromhex('fd000000000000000000000000000002')


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def rpc_hdr(magic=MAGIC, version=VERSION, type_=REQUEST, flags=1,
            svc_class=0, req_id=1, pkt_idx=0, pkt_cnt=1, payload_len=None,
            status=0, hint=1000, work=0, ts=0, core=0, service=0,
            payload=b''):
    if payload_len is None:
        payload_len = len(payload)
    return struct.pack('!HBBHHQHHHHIIQHHI', magic, version, type_, flags,
                       svc_class, req_id, pkt_idx, pkt_cnt, payload_len,
                       status, hint, work, ts, core, 0, service) + payload


def udp(sport, dport, data, length=None):
    if length is None:
        length = 8 + len(data)
    return struct.pack('!HHHH', sport, dport, length & 0xFFFF, 0) + data


def ipv4(proto, payload, src=CLIENT_IP4, dst=SERVER_IP4, options=b'',
         tot_len=None, ihl=None, version=4, frag=0x4000):
    if ihl is None:
        ihl = 5 + len(options) // 4
    if tot_len is None:
        tot_len = 20 + len(options) + len(payload)
    h = struct.pack('!BBHHHBBH4s4s', (version << 4) | (ihl & 0xF), 0,
                    tot_len & 0xFFFF, 0, frag, 64, proto, 0, src, dst)
    h += options
    h = h[:10] + struct.pack('!H', csum(h)) + h[12:]
    return h + payload


def ipv6(nh, payload, src=CLIENT_IP6, dst=SERVER_IP6, plen=None,
         version=6):
    if plen is None:
        plen = len(payload)
    return struct.pack('!IHBB16s16s', version << 28, plen & 0xFFFF, nh, 64,
                       src, dst) + payload


def ext(nh, length_units=0, body=None):
    """An IPv6 extension header (not fragment): 8 * (length_units + 1)."""
    n = 8 * (length_units + 1)
    if body is None:
        body = bytes(n - 2)
    return bytes([nh, length_units]) + body


def frag6(nh, offset=0, more=False, ident=7):
    return struct.pack('!BBHI', nh, 0, (offset << 3) | int(more), ident)


def eth(etype, payload, vlan=None, dst=SERVER_MAC, src=CLIENT_MAC):
    h = dst + src
    if vlan is not None:
        h += struct.pack('!HH', ETH_VLAN, vlan)
    return h + struct.pack('!H', etype) + payload


def req4(**kw):
    """A valid IPv4 request to port 9000 (options in kw go to rpc_hdr)."""
    vlan = kw.pop('vlan', None)
    sport = kw.pop('sport', 10000)
    dport = kw.pop('dport', 9000)
    return eth(ETH_IPV4, ipv4(UDP, udp(sport, dport, rpc_hdr(**kw))),
               vlan=vlan)


def req6(exts=b'', first_nh=UDP, **kw):
    sport = kw.pop('sport', 10000)
    dport = kw.pop('dport', 9000)
    return eth(ETH_IPV6, ipv6(first_nh, exts + udp(sport, dport,
                                                    rpc_hdr(**kw))))


# ---- the model of the parser (docs/protocol.md, "Classification" and
# ---- "Parse errors"), independent of the C code ----

def be16(b, o):
    return struct.unpack_from('!H', b, o)[0]


def classify(f, ports):
    """Returns ('error', reason) or ('ok', 'request'|'response'|'pass')."""
    if len(f) < 14:
        return 'trunc_eth'
    off = 14
    et = be16(f, 12)
    if et == ETH_VLAN:
        if len(f) < 18:
            return 'trunc_vlan'
        et = be16(f, 16)
        off = 18
    if et == ETH_IPV4:
        return classify_ipv4(f, off, ports)
    if et == ETH_IPV6:
        return classify_ipv6(f, off, ports)
    return 'pass'


def classify_ipv4(f, off, ports):
    avail = len(f) - off
    if avail < 20:
        return 'trunc_ip'
    if f[off] >> 4 != 4:
        return 'bad_ip_version'
    ihl = (f[off] & 0xF) * 4
    if ihl < 20 or ihl > avail:
        return 'bad_ihl'
    tot = be16(f, off + 2)
    if tot < ihl or tot > avail:
        return 'bad_ip_len'
    fr = be16(f, off + 6)
    is_frag = (fr & 0x3FFF) != 0
    first = (fr & 0x1FFF) == 0
    return classify_l4(f, off + ihl, off + tot, f[off + 9], is_frag, first,
                       ports)


def classify_ipv6(f, off, ports):
    avail = len(f) - off
    if avail < 40:
        return 'trunc_ip'
    if f[off] >> 4 != 6:
        return 'bad_ip_version'
    plen = be16(f, off + 4)
    if plen > avail - 40:
        return 'bad_ip_len'
    end = off + 40 + plen
    nh = f[off + 6]
    pos = off + 40
    n_ext = 0
    is_frag, first = False, True
    while nh in (HOPOPTS, ROUTING, FRAGMENT, DSTOPTS):
        n_ext += 1
        if n_ext > 8:
            return 'bad_ip_ext'
        if end - pos < 8:
            return 'bad_ip_ext'
        if nh == FRAGMENT:
            if is_frag:
                return 'bad_ip_ext'
            is_frag = True
            first = (be16(f, pos + 2) >> 3) == 0
            nh = f[pos]
            pos += 8
            if not first:
                if nh in (HOPOPTS, ROUTING, FRAGMENT, DSTOPTS):
                    return 'ip_fragment'
                break
            continue
        if nh == HOPOPTS and n_ext != 1:
            return 'bad_ip_ext'
        hlen = (f[pos + 1] + 1) * 8
        if hlen > end - pos:
            return 'bad_ip_ext'
        nh = f[pos]
        pos += hlen
    return classify_l4(f, pos, end, nh, is_frag, first, ports)


def classify_l4(f, off, end, proto, is_frag, first, ports):
    if proto != UDP:
        return 'pass'
    if is_frag:
        if not first or end - off < 8:
            return 'ip_fragment'
        if be16(f, off) in ports or be16(f, off + 2) in ports:
            return 'ip_fragment'
        return 'pass'
    if end - off < 8:
        return 'trunc_udp'
    sport, dport, ulen = be16(f, off), be16(f, off + 2), be16(f, off + 4)
    if ulen < 8 or ulen > end - off:
        return 'bad_udp_len'
    if dport in ports:
        want = 'request'
    elif sport in ports:
        want = 'response'
    else:
        return 'pass'
    r, rend = off + 8, off + ulen
    if rend - r < RPC_LEN:
        return 'trunc_rpc'
    magic, version, type_ = be16(f, r), f[r + 2], f[r + 3]
    pkt_idx, pkt_cnt, plen = be16(f, r + 16), be16(f, r + 18), be16(f, r + 20)
    if magic != MAGIC:
        return 'bad_magic'
    if version != VERSION:
        return 'bad_version'
    if type_ not in (REQUEST, RESPONSE, ERROR):
        return 'bad_type'
    if want == 'request' and type_ != REQUEST:
        return 'bad_type'
    if want == 'response' and type_ == REQUEST:
        return 'bad_type'
    if pkt_cnt == 0 or pkt_cnt > 64:
        return 'bad_pkt_count'
    if pkt_idx >= pkt_cnt:
        return 'bad_pkt_index'
    if plen > rend - r - RPC_LEN:
        return 'bad_payload_len'
    return want


OUTCOME = {'request': 'steered', 'pass': 'pass_up',
           'response': 'drop_bad_direction'}


def outcome(f, ports):
    """The daemon counter this frame must land in."""
    if len(f) > MBUF_DATA:
        # Read into a chain of mbufs; the daemon cannot linearize it.
        return 'drop_multi_segment'
    c = classify(f, ports)
    return OUTCOME.get(c, 'drop_parse_' + c)


# ---- the cases ----

def cases():
    """(name, intended outcome or None: whatever the model says, frame)."""
    out = []

    def add(name, want, frame):
        out.append((name, want, frame))

    # Valid requests: the baseline.
    add('valid v4', 'steered', req4())
    add('valid v4 payload', 'steered', req4(payload=bytes(100)))
    add('valid v4 padded frame', 'steered', req4() + bytes(10))
    add('valid v4 options', 'steered',
        eth(ETH_IPV4, ipv4(UDP, udp(10000, 9000, rpc_hdr()),
                           options=bytes([1]) * 40)))
    add('valid v4 vlan', 'steered', req4(vlan=100))
    add('valid v6', 'steered', req6())
    add('valid v6 hbh+dst+routing', 'steered',
        req6(exts=ext(DSTOPTS) + ext(ROUTING, 1) + ext(UDP), first_nh=HOPOPTS))
    add('valid v6 8 ext headers', 'steered',
        req6(exts=ext(DSTOPTS) * 7 + ext(UDP), first_nh=HOPOPTS))
    add('pkt_cnt 64 first packet', 'steered', req4(req_id=2, pkt_cnt=64))
    add('pkt_cnt 64 last packet', 'steered',
        req4(req_id=3, pkt_cnt=64, pkt_idx=63, sport=10001))
    add('no hint flag', 'steered', req4(flags=0, hint=0xFFFFFFFF))
    add('hint maximal', 'steered', req4(hint=0xFFFFFFFF))

    # Not RPCs: passed through to the default target.
    arp = struct.pack('!HHBBH6s4s6s4s', 1, ETH_IPV4, 6, 4, 1, CLIENT_MAC,
                      CLIENT_IP4, bytes(6), SERVER_IP4)
    add('arp', 'pass_up', eth(ETH_ARP, arp, dst=b'\xff' * 6))
    add('icmp echo', 'pass_up', eth(ETH_IPV4, ipv4(ICMP, bytes(
        [8, 0, 0, 0, 0, 1, 0, 1]) + bytes(56))))
    add('icmpv6 ns', 'pass_up',
        eth(ETH_IPV6, ipv6(ICMP6, bytes([135, 0]) + bytes(22))))
    add('udp dns', 'pass_up', eth(ETH_IPV4, ipv4(UDP, udp(10000, 53, bytes(20)))))
    add('udp short to other port', 'pass_up',
        eth(ETH_IPV4, ipv4(UDP, udp(10000, 53, b''))))
    add('tcp to 9000', 'pass_up', eth(ETH_IPV4, ipv4(TCP, struct.pack(
        '!HHIIHHHH', 10000, 9000, 0, 0, 0x5002, 0, 0, 0))))
    add('lldp', 'pass_up', eth(ETH_LLDP, bytes(40)))
    add('qinq inner 8100', 'pass_up',
        eth(ETH_VLAN, req4()[12:], vlan=5))
    add('s-tag 88a8', 'pass_up', eth(ETH_QINQ, struct.pack('!H', 5) +
                                      req4()[12:]))
    add('vlan + arp, nothing after', 'pass_up',
        eth(ETH_ARP, b'', vlan=7))
    add('unknown ethertype, empty', 'pass_up', eth(0x1234, b''))
    add('v4 fragment of icmp', 'pass_up',
        eth(ETH_IPV4, ipv4(ICMP, bytes(16), frag=0x2000)))
    add('v4 first fragment, other ports', 'pass_up',
        eth(ETH_IPV4, ipv4(UDP, udp(10000, 53, bytes(40)), frag=0x2000)))
    add('v6 first fragment, other ports', 'pass_up',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(UDP, 0, True) +
                           udp(10000, 53, bytes(40)))))
    add('v6 fragment of icmpv6', 'pass_up',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(ICMP6, 10) + bytes(16))))

    # A response coming from the wire.
    add('response from the wire', 'drop_bad_direction',
        eth(ETH_IPV4, ipv4(UDP, udp(9000, 10000, rpc_hdr(type_=RESPONSE)))))
    add('error from the wire', 'drop_bad_direction',
        eth(ETH_IPV4, ipv4(UDP, udp(9000, 10000, rpc_hdr(type_=ERROR)))))

    # Every raw truncation: the lengths inside now lie.
    for name, full in (('v4', req4()), ('v4 vlan', req4(vlan=9)),
                       ('v6', req6()),
                       ('v6 ext', req6(exts=ext(UDP), first_nh=DSTOPTS))):
        for n in range(len(full)):
            add('truncated %s at %d' % (name, n), None, full[:n])

    # Every consistent truncation: IP and UDP lengths rewritten to the cut.
    for k in range(8 + RPC_LEN):
        dgram = udp(10000, 9000, rpc_hdr())[:k]
        if k >= 6:
            dgram = dgram[:4] + struct.pack('!H', k) + dgram[6:]
        add('v4 datagram of %d bytes' % k,
            'drop_parse_trunc_udp' if k < 8 else 'drop_parse_trunc_rpc',
            eth(ETH_IPV4, ipv4(UDP, dgram)))
        add('v6 datagram of %d bytes' % k,
            'drop_parse_trunc_udp' if k < 8 else 'drop_parse_trunc_rpc',
            eth(ETH_IPV6, ipv6(UDP, dgram)))

    # Wrong lengths.
    body = udp(10000, 9000, rpc_hdr())
    for tot in (0, 19, 20, 21, 20 + len(body) + 1, 0xFFFF):
        add('v4 total length %d' % tot,
            'drop_parse_bad_ip_len' if tot < 20 or tot > 20 + len(body)
            else None, eth(ETH_IPV4, ipv4(UDP, body, tot_len=tot)))
    for plen in (len(body) + 1, 0xFFFF):
        add('v6 payload length %d' % plen, 'drop_parse_bad_ip_len',
            eth(ETH_IPV6, ipv6(UDP, body, plen=plen)))
    add('v6 payload length 0', 'drop_parse_trunc_udp',
        eth(ETH_IPV6, ipv6(UDP, body, plen=0)))
    for ulen in (0, 1, 7, len(body) + 1, 0xFFFF):
        add('udp length %d' % ulen, 'drop_parse_bad_udp_len',
            eth(ETH_IPV4, ipv4(UDP, udp(10000, 9000, rpc_hdr(), ulen))))
        add('v6 udp length %d' % ulen, 'drop_parse_bad_udp_len',
            eth(ETH_IPV6, ipv6(UDP, udp(10000, 9000, rpc_hdr(), ulen))))
    add('udp length shorter than the rpc', 'drop_parse_trunc_rpc',
        eth(ETH_IPV4, ipv4(UDP, udp(10000, 9000, rpc_hdr(), 8 + 47))))
    for pl in (1, 100, 0xFFFF):
        add('payload_len %d, none there' % pl, 'drop_parse_bad_payload_len',
            req4(payload_len=pl))
    add('payload_len one past', 'drop_parse_bad_payload_len',
        req4(payload=bytes(10), payload_len=11))
    add('payload_len short of the datagram (trailing bytes)', 'steered',
        req4(payload=bytes(10), payload_len=9))

    # IP versions and header lengths.
    for v in (0, 5, 6, 15):
        add('ethertype v4, version %d' % v, 'drop_parse_bad_ip_version',
            eth(ETH_IPV4, ipv4(UDP, body, version=v)))
    for v in (0, 4, 7):
        add('ethertype v6, version %d' % v, 'drop_parse_bad_ip_version',
            eth(ETH_IPV6, ipv6(UDP, body, version=v)))
    for ihl in range(5):
        add('ihl %d' % ihl, 'drop_parse_bad_ihl',
            eth(ETH_IPV4, ipv4(UDP, body, ihl=ihl)))
    add('ihl 15 past a short frame', 'drop_parse_bad_ihl',
        eth(ETH_IPV4, ipv4(UDP, b'', ihl=15, tot_len=60)))
    add('ihl 15, options eat the datagram', None,
        eth(ETH_IPV4, ipv4(UDP, bytes(40) + body, ihl=15)))

    # RPC header fields.
    for m in (0, 0x4254, 0xFFFF):
        add('magic %#x' % m, 'drop_parse_bad_magic', req4(magic=m))
    add('bad magic and version: magic first', 'drop_parse_bad_magic',
        req4(magic=0, version=0))
    for v in (0, 2, 255):
        add('version %d' % v, 'drop_parse_bad_version', req4(version=v))
    for t in (0, 4, 255):
        add('type %d' % t, 'drop_parse_bad_type', req4(type_=t))
    add('response to our port', 'drop_parse_bad_type', req4(type_=RESPONSE))
    add('error to our port', 'drop_parse_bad_type', req4(type_=ERROR))
    add('request from our port', 'drop_parse_bad_type',
        eth(ETH_IPV4, ipv4(UDP, udp(9000, 10000, rpc_hdr()))))
    add('server to server: dst decides', 'steered',
        eth(ETH_IPV4, ipv4(UDP, udp(9000, 9000, rpc_hdr()))))
    for cnt in (0, 65, 0xFFFF):
        add('pkt_cnt %d' % cnt, 'drop_parse_bad_pkt_count',
            req4(pkt_cnt=cnt))
    add('pkt_cnt 0 with a bad index: count first', 'drop_parse_bad_pkt_count',
        req4(pkt_cnt=0, pkt_idx=5))
    for cnt, idx in ((1, 1), (64, 64), (5, 0xFFFF)):
        add('pkt_idx %d of %d' % (idx, cnt), 'drop_parse_bad_pkt_index',
            req4(pkt_cnt=cnt, pkt_idx=idx))
    add('bad index and payload_len: index first', 'drop_parse_bad_pkt_index',
        req4(pkt_cnt=1, pkt_idx=1, payload_len=500))

    # VLAN tags without (enough) payload.
    for n in (14, 15, 16, 17):
        add('vlan tag cut at %d' % n, 'drop_parse_trunc_vlan',
            eth(ETH_IPV4, b'', vlan=3)[:n])
    add('vlan, v4 ethertype, no payload', 'drop_parse_trunc_ip',
        eth(ETH_IPV4, b'', vlan=3))
    add('vlan, v6 ethertype, no payload', 'drop_parse_trunc_ip',
        eth(ETH_IPV6, b'', vlan=3))

    # IPv6 extension header chains.
    udpb = udp(10000, 9000, rpc_hdr())
    add('v6 9 ext headers', 'drop_parse_bad_ip_ext',
        req6(exts=ext(DSTOPTS) * 8 + ext(UDP), first_nh=HOPOPTS))
    add('v6 hop-by-hop second', 'drop_parse_bad_ip_ext',
        req6(exts=ext(HOPOPTS) + ext(UDP), first_nh=DSTOPTS))
    add('v6 ext length past the end', 'drop_parse_bad_ip_ext',
        eth(ETH_IPV6, ipv6(DSTOPTS, ext(UDP, 200, bytes(6)) + udpb)))
    add('v6 ext header with 7 bytes left', 'drop_parse_bad_ip_ext',
        eth(ETH_IPV6, ipv6(DSTOPTS, bytes(7))))
    add('v6 two fragment headers', 'drop_parse_bad_ip_ext',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(FRAGMENT) + frag6(UDP) + udpb)))
    add('v6 ext chain running into udp', None,
        eth(ETH_IPV6, ipv6(DSTOPTS, ext(UDP, 0, bytes(6)) + udpb[:4])))

    # Fragments.
    add('v4 first fragment (MF) to 9000', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, body, frag=0x2000)))
    add('v4 later fragment, would-be 9000', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, body, frag=0x0010)))
    add('v4 later fragment, would-be 53', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, udp(10000, 53, bytes(40)), frag=0x0010)))
    add('v4 first fragment too short for ports', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, bytes(4), frag=0x2000)))
    add('v4 first fragment from 9000', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, udp(9000, 10000, bytes(40)), frag=0x2000)))
    add('v4 last fragment (MF 0, offset)', 'drop_parse_ip_fragment',
        eth(ETH_IPV4, ipv4(UDP, bytes(30), frag=0x0004)))
    add('v6 atomic fragment to 9000', 'drop_parse_ip_fragment',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(UDP) + udpb)))
    add('v6 first fragment to 9000', 'drop_parse_ip_fragment',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(UDP, 0, True) + udpb)))
    add('v6 later fragment', 'drop_parse_ip_fragment',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(UDP, 100) + bytes(40))))
    add('v6 later fragment naming an ext header', 'drop_parse_ip_fragment',
        eth(ETH_IPV6, ipv6(FRAGMENT, frag6(DSTOPTS, 100) + bytes(40))))
    add('v6 fragment after dstopts', 'drop_parse_ip_fragment',
        eth(ETH_IPV6, ipv6(DSTOPTS, ext(FRAGMENT) + frag6(UDP) + udpb)))

    # Larger than one mbuf (the daemon's RX takes a chain of segments).
    big = bytes(4000)
    add('4 KB request', 'drop_multi_segment', req4(payload=big))
    add('9 KB jumbo', 'drop_multi_segment', req4(payload=bytes(8900)))
    return out


def write_pcap(path, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1 + i // 1000, i % 1000 * 1000,
                                len(fr), len(fr)))
            f.write(fr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('pcap')
    ap.add_argument('expected')
    ap.add_argument('--udp-port', type=int, action='append')
    ap.add_argument('--list', action='store_true',
                    help='print each frame: number, outcome, case')
    a = ap.parse_args()
    ports = a.udp_port or [9000]
    expected = {}
    frames = []
    bad = 0
    for name, want, fr in cases():
        got = outcome(fr, ports)
        if want is not None and got != want:
            print('case "%s": meant %s, the model says %s' % (name, want, got),
                  file=sys.stderr)
            bad += 1
        expected[got] = expected.get(got, 0) + 1
        if a.list:
            print('%4d %-28s %s (%d bytes)' % (len(frames), got, name,
                                                len(fr)))
        frames.append(fr)
    if bad:
        return 1
    write_pcap(a.pcap, frames)
    with open(a.expected, 'w') as f:
        json.dump({'frames': len(frames), 'counters': expected}, f, indent=1,
                  sort_keys=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
