#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of scripts/benchproc.py: the request frames are what
docs/protocol.md says a valid single-packet request is, the pcap reads
back, the configuration is what the benchmark means to run, and the rates
and ratios are computed from the samples as documented.

    test_benchproc.py [SOURCE_ROOT]
"""
import os
import struct
import sys
import tempfile
import unittest

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else \
    os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import benchproc  # noqa: E402


class Frames(unittest.TestCase):
    def test_request_layout(self):
        fr = benchproc.request_frame(5, udp_port=9001)
        self.assertEqual(len(fr), 14 + 20 + 8 + 48)
        self.assertEqual(struct.unpack('!H', fr[12:14])[0], 0x0800)
        ip = fr[14:34]
        self.assertEqual(ip[0], 0x45)
        self.assertEqual(struct.unpack('!H', ip[2:4])[0], 20 + 8 + 48)
        self.assertEqual(ip[9], 17)
        self.assertEqual(benchproc.csum(ip), 0, 'IPv4 header checksum')
        # not a fragment: only DF may be set
        self.assertEqual(struct.unpack('!H', ip[6:8])[0] & 0xBFFF, 0)
        sport, dport, ulen = struct.unpack('!HHH', fr[34:40])
        self.assertEqual((dport, ulen), (9001, 8 + 48))
        self.assertEqual(sport, 10005)
        rpc = fr[42:]
        # offsets from include/turbolb/proto.h (TLB_RPC_OFF_*)
        self.assertEqual(struct.unpack('!H', rpc[0:2])[0], 0x5442)
        self.assertEqual(rpc[2], 1)   # version
        self.assertEqual(rpc[3], 1)   # request
        self.assertEqual(struct.unpack('!Q', rpc[8:16])[0], 6)  # req_id
        self.assertEqual(struct.unpack('!HHH', rpc[16:22]), (0, 1, 0))
        self.assertEqual(struct.unpack('!I', rpc[24:28])[0], 1000)

    def test_frames_are_distinct_flows(self):
        frames = [benchproc.request_frame(i) for i in range(1000)]
        flows = {(f[26:30], f[34:36]) for f in frames}
        self.assertEqual(len(flows), 1000)

    def test_pcap_round_trip(self):
        frames = [benchproc.request_frame(i) for i in range(300)]
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'r.pcap')
            self.assertEqual(benchproc.main(['gen-pcap', p, '--count',
                                             '300']), 0)
            self.assertEqual(benchproc.read_pcap(p), frames)


class Config(unittest.TestCase):
    def test_targets_are_queues_of_net_null(self):
        y = benchproc.config_yaml(3, 'rr', '/x.pcap', 'pfx', lcores=(2, 5))
        self.assertIn('net_pcap0,rx_pcap=/x.pcap,infinite_rx=1', y)
        self.assertIn('net_null0,no-rx=1', y)
        for i in range(3):
            self.assertIn('{ core: %d, port: net_null0, queue: %d }' %
                          (i, i), y)
        self.assertNotIn('core: 3,', y)
        self.assertIn('main_lcore: 2', y)
        self.assertIn('lcores: [5]', y)
        self.assertIn('credits: inband', y)
        self.assertIn('name: rr', y)
        self.assertIn('file_prefix: pfx', y)
        self.assertIn('no_huge: true', y)

    def test_hugepages(self):
        y = benchproc.config_yaml(3, 'rr', '/x.pcap', 'p', huge=True)
        self.assertIn('no_huge: false', y)
        self.assertNotIn('no_huge: true', y)

    def test_several_null_ports(self):
        y = benchproc.config_yaml(4, 'jsq', '/x.pcap', 'p', null_ports=2)
        self.assertIn('net_null1,no-rx=1', y)
        self.assertIn('{ core: 3, port: net_null1, queue: 1 }', y)

    def test_memory_grows_with_targets(self):
        self.assertIn('memory_mb: 512',
                      benchproc.config_yaml(32, 'jsq', '/x', 'p'))
        self.assertIn('memory_mb: 768',
                      benchproc.config_yaml(64, 'jsq', '/x', 'p'))


def smp(t, cpu, steered, **kw):
    st = dict(steered=steered, rx_uplink=steered, drops=0)
    st.update(kw)
    return {'t': t, 'cpu_s': cpu, 'stats': st}


class Rates(unittest.TestCase):
    def test_wall_and_cpu(self):
        r = benchproc.rates(smp(10.0, 1.0, 1000), smp(12.0, 2.0, 40001000))
        self.assertEqual(r['packets'], 40000000)
        self.assertEqual(r['mpps'], 20.0)
        self.assertEqual(r['cpu_mpps'], 40.0)
        self.assertEqual(r['cpu_s'], 1.0)
        self.assertEqual(r['rx_uplink'], 40000000)

    def test_too_little_cpu_time_gives_no_cpu_rate(self):
        r = benchproc.rates(smp(0.0, 1.0, 0), smp(1.0, 1.1, 1500000))
        self.assertIsNone(r['cpu_mpps'])
        self.assertEqual(r['mpps'], 1.5)

    def test_no_thread_found(self):
        r = benchproc.rates(smp(0.0, None, 0), smp(1.0, None, 10))
        self.assertIsNone(r['cpu_mpps'])
        self.assertIsNone(r['cpu_s'])


class Report(unittest.TestCase):
    def test_ratios_against_median_macswap(self):
        pts = [
            {'kind': 'testpmd', 'mpps': 30.0, 'cpu_mpps': 40.0},
            {'kind': 'testpmd', 'mpps': 10.0, 'cpu_mpps': 20.0},
            {'kind': 'testpmd', 'mpps': 20.0, 'cpu_mpps': None},
            {'kind': 'turbolbd', 'targets': 16, 'policy': 'rr',
             'mpps': 10.0, 'cpu_mpps': 15.0},
            {'kind': 'turbolbd', 'targets': 8, 'policy': 'jsq',
             'mpps': 40.0, 'cpu_mpps': 60.0},
            {'kind': 'turbolbd', 'targets': 8, 'policy': 'rr',
             'error': 'turbolbd exited'},
        ]
        rows, ms = benchproc.report(pts)
        self.assertEqual(ms, {'mpps': 20.0, 'cpu_mpps': 30.0})
        self.assertEqual([(r['targets'], r['policy']) for r in rows],
                         [(8, 'jsq'), (8, 'rr'), (16, 'rr')])
        self.assertEqual(rows[0]['ratio_cpu'], 2.0)
        self.assertEqual(rows[0]['ratio_wall'], 2.0)
        self.assertIsNone(rows[1]['ratio_cpu'])
        self.assertEqual(rows[2]['ratio_cpu'], 0.5)
        self.assertEqual(rows[2]['ratio_wall'], 0.5)
        text = benchproc.format_table(rows, ms, benchproc.machine())
        self.assertIn('turbolbd exited', text)
        self.assertIn('0.500', text)
        self.assertIn('CPUs', text)
        self.assertEqual(benchproc.failed(rows), [rows[1]])

    def test_strict_report_fails_on_a_point_without_rate(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, 'p.jsonl')
            with open(p, 'w') as f:
                f.write('{"kind": "turbolbd", "targets": 8, "policy": "rr",'
                        ' "error": "turbolbd exited"}\n')
            self.assertEqual(benchproc.main(['report', p]), 0)
            self.assertEqual(benchproc.main(['report', p, '--strict']), 1)

    def test_no_testpmd(self):
        rows, ms = benchproc.report([{'kind': 'turbolbd', 'targets': 8,
                                      'policy': 'jsq', 'mpps': 1.0,
                                      'cpu_mpps': 1.0}])
        self.assertIsNone(ms['mpps'])
        self.assertIsNone(rows[0]['ratio_cpu'])
        benchproc.format_table(rows, ms)


if __name__ == '__main__':
    unittest.main()
