# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of tests/integration/kernel_client.py (test_kernel_peer.sh's
client): /proc/net/snmp's layout, the request it sends, the response it
accepts, and the ICMP echo's checksum."""

import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
import kernel_client as kc  # noqa: E402

SNMP = """Ip: Forwarding DefaultTTL InHdrErrors InAddrErrors
Ip: 1 64 3 4
Udp: InDatagrams NoPorts InErrors InCsumErrors
Udp: 200 0 1 2
""".splitlines(True)


def csum(data):
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def response(req, **kw):
    """The server's answer to req: type and the fields in kw changed."""
    h = list(struct.unpack(kc.HDR, req))
    h[2] = kc.RESPONSE
    for i, v in kw.items():
        h[int(i[1:])] = v
    return tuple(h)


class Snmp(unittest.TestCase):
    def test_groups(self):
        got = kc.parse_snmp(SNMP)
        self.assertEqual(got["IpInHdrErrors"], 3)
        self.assertEqual(got["IpInAddrErrors"], 4)
        self.assertEqual(got["UdpInDatagrams"], 200)
        self.assertEqual(got["UdpInCsumErrors"], 2)
        self.assertNotIn("Ip:Forwarding", got)


class Rpc(unittest.TestCase):
    def test_request(self):
        req = kc.request(7, 123456)
        h = struct.unpack(kc.HDR, req)
        self.assertEqual((h[0], h[1], h[2], h[3]),
                         (0x5442, 1, kc.REQUEST, 1))
        self.assertEqual((h[5], h[6], h[7], h[10], h[12]),
                         (7, 0, 1, kc.HINT_NS, 123456))

    def test_response_ok(self):
        req = kc.request(7, 123456)
        self.assertTrue(kc.response_ok(response(req, h13=1), 48, 123456))
        # status, client_ts, hint, length and type each matter
        self.assertFalse(kc.response_ok(response(req, h9=3), 48, 123456))
        self.assertFalse(kc.response_ok(response(req), 48, 123457))
        self.assertFalse(kc.response_ok(response(req, h10=0), 48, 123456))
        self.assertFalse(kc.response_ok(response(req), 56, 123456))
        self.assertFalse(kc.response_ok(struct.unpack(kc.HDR, req), 48,
                                        123456))


class Icmp(unittest.TestCase):
    def test_checksum(self):
        for ident, seq in ((1, 1), (0xFFFF, 3), (1234, 0)):
            body = kc.echo_request(ident, seq)
            # A correct checksum makes the one's complement sum 0xFFFF.
            self.assertEqual(csum(body), 0xFFFF)
            self.assertEqual(body[0], 8)

    def test_reply(self):
        ip = bytes([0x45]) + bytes(19)
        reply = ip + struct.pack('!BBHHH', 0, 0, 0, 42, 2)
        self.assertTrue(kc.is_echo_reply(reply, 42, 2))
        self.assertFalse(kc.is_echo_reply(reply, 42, 3))
        self.assertFalse(kc.is_echo_reply(reply, 43, 2))
        request = ip + struct.pack('!BBHHH', 8, 0, 0, 42, 2)
        self.assertFalse(kc.is_echo_reply(request, 42, 2))
        # An IP header with options: the ICMP header starts later.
        ip6 = bytes([0x46]) + bytes(23)
        self.assertTrue(kc.is_echo_reply(
            ip6 + struct.pack('!BBHHH', 0, 0, 0, 42, 2), 42, 2))


if __name__ == "__main__":
    unittest.main()
