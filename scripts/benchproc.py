#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The real-process part of scripts/bench-dispatch.sh: turbolbd itself as a
process (net_pcap uplink replaying requests with infinite_rx, net_null
targets), measured from its own telemetry, next to dpdk-testpmd macswap on
the same device types.

    benchproc.py gen-pcap OUT.pcap [--count N] [--udp-port P]
        a pcap of N valid single-packet turbolb requests (IPv4/UDP, one
        flow and request id each), the uplink's input
    benchproc.py config OUT.yaml --targets N --policy P --pcap F --prefix X
        a turbolbd configuration for that topology
    benchproc.py measure --prefix X --pid PID --lcore L --seconds S
        waits until the daemon steers, then samples /turbolb/stats and the
        forwarding thread's CPU time S seconds apart; one JSON line out
    benchproc.py report RESULTS.jsonl
        the table: each point's rate and its ratio to macswap

Every rate is computed here, from two samples of counters, so that the
arithmetic has a unittest (tests/scripts/test_benchproc.py) and the shell
script only starts and stops processes.
"""
import argparse
import json
import os
import socket
import statistics
import struct
import sys
import time

RPC_MAGIC, RPC_VERSION, RPC_REQUEST, RPC_F_HINT = 0x5442, 1, 1, 0x0001
RPC_HDR_LEN = 48
ETH_IPV4, IPPROTO_UDP = 0x0800, 17


def csum(data):
    """The Internet checksum (RFC 1071) of data."""
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def rpc_request(req_id, hint_ns=1000, payload=b''):
    """A single-packet request header (docs/protocol.md, proto.h): every
    field big endian, 48 bytes, then the payload."""
    return struct.pack('!HBBHHQHHHHIIQHHI', RPC_MAGIC, RPC_VERSION,
                       RPC_REQUEST, RPC_F_HINT, 0, req_id, 0, 1,
                       len(payload), 0, hint_ns, 0, 0, 0, 0, 0) + payload


def request_frame(i, udp_port=9000, hint_ns=1000):
    """Frame i of the replay: Ethernet/IPv4/UDP to udp_port, a request.
    The client's address and source port vary with i, so that the frames
    are distinct flows (rss spreads them; the others do not care)."""
    rpc = rpc_request(i + 1, hint_ns)
    sport = 10000 + i % 50000
    udp = struct.pack('!HHHH', sport, udp_port, 8 + len(rpc), 0) + rpc
    src = bytes([10, 1 + (i >> 16) % 250, (i >> 8) & 0xFF, i & 0xFF])
    dst = bytes([10, 0, 0, 2])
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0x4000,
                     64, IPPROTO_UDP, 0, src, dst)
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return (bytes.fromhex('020000000002') + bytes.fromhex('020000000001') +
            struct.pack('!H', ETH_IPV4) + ip + udp)


def write_pcap(path, frames):
    """Classic pcap, Ethernet link type, microsecond stamps."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1 + i // 1000000, i % 1000000,
                                len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """The frames of a classic little-endian pcap."""
    out = []
    with open(path, 'rb') as f:
        if struct.unpack('<I', f.read(24)[:4])[0] != 0xA1B2C3D4:
            raise ValueError('%s: not a little-endian pcap' % path)
        while True:
            h = f.read(16)
            if len(h) < 16:
                return out
            out.append(f.read(struct.unpack('<IIII', h)[2]))


def config_yaml(targets, policy, pcap, prefix, lcores=(0, 1),
                memory_mb=None, burst=32, fifo=4096, null_ports=1,
                huge=False):
    """turbolbd's configuration: uplink net_pcap0 replaying pcap forever;
    target i is queue i / null_ports of net_null(i % null_ports), with no
    RX (nothing answers: credits inband, no responses, no host memory:
    transport none).
    A stale core is one that completes nothing: here none ever does, so
    the timeout is the longest the loader takes, far past a run.
    memory_mb left out: enough for the pool the daemon sizes by default,
    whose descriptors (1024 RX + 1024 TX per target queue, about 2.4 KB
    each) dominate: 512 MiB, and 8 MiB more per target past 32.
    huge: the memory from hugepages (mounted, and enough of them free)
    instead of anonymous 4 KiB pages."""
    if memory_mb is None:
        memory_mb = 512 + 8 * max(0, targets - 32)
    vdevs = ['net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap]
    vdevs += ['net_null%d,no-rx=1' % p for p in range(null_ports)]
    lines = [
        '# written by scripts/benchproc.py config',
        'eal:',
        '  main_lcore: %d' % lcores[0],
        '  memory_mb: %d' % memory_mb,
        '  no_huge: %s' % ('false' if huge else 'true'),
        '  no_pci: true',
        '  file_prefix: %s' % prefix,
        '  vdevs:',
    ] + ['    - %s' % v for v in vdevs] + [
        '  args: [ --log-level=lib.*:error ]',
        'datapath:',
        '  lcores: [%d]' % lcores[1],
        '  burst: %d' % burst,
        'ports:',
        '  uplink: { port: net_pcap0 }',
        '  targets:',
    ] + ['    - { core: %d, port: net_null%d, queue: %d }' %
         (i, i % null_ports, i // null_ports) for i in range(targets)] + [
        'policy:',
        '  name: %s' % policy,
        'fifo:',
        '  capacity: %d' % fifo,
        'host:',
        '  credits: inband',
        '  transport: none',
        '  stale_timeout_us: 60000000',
        'telemetry:',
        '  enabled: true',
        'log:',
        '  level: info',
    ]
    return '\n'.join(lines) + '\n'


def telemetry_path(prefix):
    """Where DPDK 22.11 puts a process's telemetry socket."""
    d = '/var/run' if os.getuid() == 0 else \
        os.environ.get('XDG_RUNTIME_DIR', '/tmp')
    return os.path.join(d, 'dpdk', prefix, 'dpdk_telemetry.v2')


def telemetry(prefix, cmd, timeout=5.0):
    """One telemetry command's value (a dict for /turbolb/stats)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(telemetry_path(prefix))
        s.recv(65536)
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 20).decode())[cmd]
    finally:
        s.close()


def thread_cpu_s(pid, comm):
    """CPU seconds (user + system) of the thread of pid named comm, or
    None: the forwarding lcore's own time, whatever else runs here."""
    base = '/proc/%d/task' % pid
    for tid in os.listdir(base):
        try:
            with open(os.path.join(base, tid, 'comm')) as f:
                if f.read().strip() != comm:
                    continue
            with open(os.path.join(base, tid, 'stat')) as f:
                st = f.read()
        except OSError:
            continue
        # fields after the parenthesised name: utime, stime are 14, 15
        fields = st[st.rindex(')') + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    return None


def rates(s0, s1, key='steered'):
    """The rate between two samples {t, cpu_s, stats}: Mpps by the wall
    clock, and per second of the forwarding thread's CPU time (cpu_mpps;
    None when the CPU time did not advance enough to mean anything: less
    than 0.2 s, 20 clock ticks)."""
    dt = s1['t'] - s0['t']
    n = s1['stats'][key] - s0['stats'][key]
    out = {'packets': n, 'wall_s': round(dt, 3),
           'mpps': round(n / dt / 1e6, 3) if dt > 0 else None,
           'cpu_s': None, 'cpu_mpps': None}
    if s0.get('cpu_s') is not None and s1.get('cpu_s') is not None:
        c = s1['cpu_s'] - s0['cpu_s']
        out['cpu_s'] = round(c, 3)
        if c >= 0.2:
            out['cpu_mpps'] = round(n / c / 1e6, 3)
    for k in ('rx_uplink', 'drops', 'drop_fifo_full', 'drop_tx_full'):
        if k in s1['stats'] and k in s0['stats']:
            out[k] = s1['stats'][k] - s0['stats'][k]
    return out


def sample(prefix, pid, comm):
    st = telemetry(prefix, '/turbolb/stats')
    return {'t': time.monotonic(), 'cpu_s': thread_cpu_s(pid, comm),
            'stats': st}


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def measure(prefix, pid, comm, seconds, warmup=1.0, wait=30.0):
    """Waits (at most wait s, and only while pid lives) for the daemon to
    steer, lets it run warmup s, then takes the rates over seconds s."""
    end = time.monotonic() + wait
    while True:
        if not alive(pid):
            return {'error': 'turbolbd exited'}
        try:
            if (telemetry(prefix, '/turbolb/stats') or {}).get('steered', 0) > 0:
                break
        except (OSError, ValueError, KeyError):
            pass
        if time.monotonic() > end:
            return {'error': 'no steered requests in %.0f s' % wait}
        time.sleep(0.1)
    time.sleep(warmup)
    s0 = sample(prefix, pid, comm)
    time.sleep(seconds)
    s1 = sample(prefix, pid, comm)
    r = rates(s0, s1)
    r['mbufs_in_use'] = s1['stats'].get('mbufs_in_use')
    r['mbufs_total'] = s1['stats'].get('mbufs_total')
    with open('/proc/loadavg') as f:
        r['loadavg'] = f.read().split()[0]
    return r


def report(points):
    """Rows of the table from the JSON lines: each daemon point with the
    median macswap of the same run (kind 'testpmd') and the ratios, by
    CPU time (the figure to quote on a shared machine) and by wall clock.
    Rows are sorted by targets, then policy."""
    tp = [p for p in points if p.get('kind') == 'testpmd']
    ms = {k: statistics.median(v) if v else None for k, v in (
        (k, [p[k] for p in tp if p.get(k)]) for k in ('mpps', 'cpu_mpps'))}
    rows = []
    for p in points:
        if p.get('kind') != 'turbolbd':
            continue
        r = dict(p)
        for k, tk in (('ratio_cpu', 'cpu_mpps'), ('ratio_wall', 'mpps')):
            r[k] = round(p[tk] / ms[tk], 3) \
                if p.get(tk) and ms.get(tk) else None
        r['testpmd_macswap_mpps'] = ms['mpps']
        r['testpmd_macswap_cpu_mpps'] = ms['cpu_mpps']
        rows.append(r)
    rows.sort(key=lambda r: (r['targets'], r['policy']))
    return rows, ms


def machine():
    """What the figures were measured on: CPUs, their model, the load."""
    model = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
        with open('/proc/loadavg') as f:
            load = ' '.join(f.read().split()[:3])
    except OSError:
        load = '?'
    return {'cpus': os.cpu_count(), 'cpu_model': model, 'loadavg': load}


def failed(rows):
    """The rows that have no rate (the daemon did not start, or steered
    nothing)."""
    return [r for r in rows if not r.get('mpps')]


def format_table(rows, ms, mach=None):
    def f(v, fmt='%8.2f'):
        return fmt % v if v is not None else '%8s' % '-'
    out = ['turbolbd process: net_pcap (infinite_rx) uplink -> net_null '
           'targets, 1 forwarding lcore, credits inband']
    if mach:
        out.append('machine: %s CPUs (%s), load average %s; load: the '
                   '1-minute load average at each point' %
                   (mach['cpus'], mach['cpu_model'], mach['loadavg']))
    out += [
           'dpdk-testpmd macswap on net_pcap -> net_null: %s Mpps, %s Mpps/CPU'
           % (f(ms.get('mpps')).strip(), f(ms.get('cpu_mpps')).strip()),
           '%-8s %-7s %8s %8s %8s %8s %6s %8s' % (
               'targets', 'policy', 'Mpps', 'Mpps/CPU', 'x ms/CPU', 'x ms',
               'load', 'mbufs')]
    for r in rows:
        out.append('%-8d %-7s %s %s %s %s %6s %8s' % (
            r['targets'], r['policy'], f(r.get('mpps')), f(r.get('cpu_mpps')),
            f(r.get('ratio_cpu'), '%8.3f'), f(r.get('ratio_wall'), '%8.3f'),
            r.get('loadavg', '-'),
            r.get('mbufs_in_use') if r.get('mbufs_in_use') is not None
            else r.get('error', '-')))
    out.append('x ms/CPU: Mpps per second of the forwarding thread\'s CPU '
               'time over testpmd\'s (the figure to quote on a shared '
               'machine); x ms: wall clock')
    return '\n'.join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    g = sub.add_parser('gen-pcap')
    g.add_argument('out')
    g.add_argument('--count', type=int, default=256)
    g.add_argument('--udp-port', type=int, default=9000)
    c = sub.add_parser('config')
    c.add_argument('out')
    c.add_argument('--targets', type=int, required=True)
    c.add_argument('--policy', required=True)
    c.add_argument('--pcap', required=True)
    c.add_argument('--prefix', required=True)
    c.add_argument('--lcores', default='0,1')
    c.add_argument('--null-ports', type=int, default=1)
    c.add_argument('--huge', action='store_true',
                   help='hugepages, not no_huge')
    m = sub.add_parser('measure')
    m.add_argument('--prefix', required=True)
    m.add_argument('--pid', type=int, required=True)
    m.add_argument('--comm', required=True,
                   help="the forwarding thread's name (lcore-worker-1)")
    m.add_argument('--seconds', type=float, default=2.0)
    m.add_argument('--warmup', type=float, default=1.0)
    m.add_argument('--label', default='{}',
                   help='JSON object merged into the output line')
    r = sub.add_parser('report')
    r.add_argument('jsonl')
    r.add_argument('--json', help='write the rows here')
    r.add_argument('--strict', action='store_true',
                   help='exit 1 if a point has no rate')
    a = ap.parse_args(argv)
    if a.cmd == 'gen-pcap':
        write_pcap(a.out, [request_frame(i, a.udp_port)
                           for i in range(a.count)])
    elif a.cmd == 'config':
        lc = tuple(int(x) for x in a.lcores.split(','))
        with open(a.out, 'w') as f:
            f.write(config_yaml(a.targets, a.policy, a.pcap, a.prefix,
                                lcores=lc, null_ports=a.null_ports,
                                huge=a.huge))
    elif a.cmd == 'measure':
        res = json.loads(a.label)
        res.update(measure(a.prefix, a.pid, a.comm, a.seconds, a.warmup))
        print(json.dumps(res))
    elif a.cmd == 'report':
        with open(a.jsonl) as f:
            pts = [json.loads(x) for x in f if x.strip()]
        rows, ms = report(pts)
        mach = machine()
        print(format_table(rows, ms, mach))
        if a.json:
            with open(a.json, 'w') as f:
                json.dump({'machine': mach, 'rows': rows,
                           'testpmd_macswap': ms}, f, indent=1)
        if a.strict and failed(rows):
            print('benchproc: %d point(s) without a rate' % len(failed(rows)),
                  file=sys.stderr)
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
