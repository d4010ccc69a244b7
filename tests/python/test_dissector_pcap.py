# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of tests/cli/dissector_pcap.py (test_dissector.sh's
capture): the checksums, the header layout and the pcap records, checked
against fixed values rather than against the module's own arithmetic."""

import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
import dissector_pcap as dp  # noqa: E402


def fold(data):
    """One's complement sum: 0xffff over data that carries its checksum."""
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


class Checksums(unittest.TestCase):
    def test_rfc1071_example(self):
        # The IPv4 header of the usual worked example: checksum 0xb861.
        h = bytes.fromhex('450000730000400040110000c0a80001c0a800c7')
        self.assertEqual(dp.csum(h), 0xb861)

    def test_odd_length(self):
        self.assertEqual(dp.csum(b'\x01'), 0xfeff)

    def test_ipv4_and_udp_verify(self):
        p = dp.ipv4(dp.C4, dp.S4, 40000, 9000, dp.rpc(1, 5, b'abc'))
        self.assertEqual(fold(p[:20]), 0xffff)
        u = p[20:]
        pseudo = dp.C4 + dp.S4 + struct.pack('!BBH', 0, 17, len(u))
        self.assertEqual(fold(pseudo + u), 0xffff)
        self.assertEqual(struct.unpack('!H', p[2:4])[0], len(p))

    def test_ipv6_udp_verifies(self):
        p = dp.ipv6(dp.C6, dp.S6, 40001, 9000, dp.rpc(1, 42, b'x'))
        u = p[40:]
        self.assertEqual(struct.unpack('!H', p[4:6])[0], len(u))
        pseudo = dp.C6 + dp.S6 + struct.pack('!IxxxB', len(u), 17)
        self.assertEqual(fold(pseudo + u), 0xffff)


class Header(unittest.TestCase):
    def test_layout(self):
        h = dp.rpc(2, 0x1122334455667788, b'pay', flags=1, svc_class=2,
                   pkt_idx=1, pkt_cnt=3, status=4, hint=5000, work=4000,
                   client_ts=123456789, core=3, service=4200)
        self.assertEqual(h[:2], b'\x54\x42')
        self.assertEqual(h[2:4], b'\x01\x02')
        self.assertEqual(h[8:16], bytes.fromhex('1122334455667788'))
        self.assertEqual(h[20:22], b'\x00\x03')  # payload_len
        self.assertEqual(h[40:42], b'\x00\x03')  # server_core
        self.assertEqual(h[44:48], struct.pack('!I', 4200))
        self.assertEqual(h[48:], b'pay')

    def test_vlan(self):
        f = dp.to_srv(b'', vlan=0x64)
        self.assertEqual(f[12:18], bytes.fromhex('810000640800'))


class Memcached(unittest.TestCase):
    def test_frame_header(self):
        m = dp.mc(7, 1, 2, b'x')
        self.assertEqual(m, bytes.fromhex('0007000100020000') + b'x')


class Capture(unittest.TestCase):
    def test_records(self):
        frs = dp.frames()
        self.assertEqual(len(frs), 15)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'x.pcap')
            dp.write_pcap(path, frs)
            with open(path, 'rb') as f:
                data = f.read()
        self.assertEqual(struct.unpack('<I', data[:4])[0], 0xa1b2c3d4)
        off, n = 24, 0
        while off < len(data):
            ts, _, cap, length = struct.unpack('<IIII', data[off:off + 16])
            self.assertEqual((ts, cap), (1700000000 + n, len(frs[n])))
            off += 16 + cap
            n += 1
        self.assertEqual(n, 15)


if __name__ == "__main__":
    unittest.main()
