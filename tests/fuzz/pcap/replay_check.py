#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The checks of tests/fuzz/pcap/test_pcap_replay.sh: a telemetry client
with bounded polls, the per-reason accounting of the replayed frames, and
the frame counts of the output pcaps.

    replay_check.py wait-rx PREFIX N
        polls /turbolb/stats (at most 60 s) until rx_uplink reaches N,
        then once more after 0.5 s; prints the settled rx_uplink (exit 0)
        or the last seen (exit 1)
    replay_check.py stats PREFIX
        /turbolb/stats as JSON
    replay_check.py counters EXPECTED.json STATS.json
        every frame counted exactly once, under the reason
        gen_malformed.py expects; exit 1 otherwise
    replay_check.py outputs STATS.json HOST.pcap SLOWPATH.pcap
        the frames steered and passed up are in their pcaps

The verdicts are tested by tests/python/test_replay_check.py.
"""
import json
import os
import socket
import struct
import sys
import time


def telemetry_path(prefix):
    d = ('/var/run' if os.getuid() == 0
         else os.environ.get('XDG_RUNTIME_DIR', '/tmp'))
    return os.path.join(d, 'dpdk', prefix, 'dpdk_telemetry.v2')


def query(path, cmd):
    """One command on its own telemetry connection."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    s.recv(65536)
    s.send(cmd.encode())
    v = json.loads(s.recv(1 << 20).decode())[cmd]
    s.close()
    return v


def counters(exp, s):
    """(ok, report lines for stdout, lines for stderr): every counter a
    frame can land in (the expected ones, every drop_* reason, steered and
    pass_up) holds what the generator expects, they add up to the frames
    sent and received, and every steered request is a message or an
    affinity hit."""
    want = exp['counters']
    ok, out, err = True, [], []
    keys = (set(want)
            | {k for k in s if k.startswith('drop_') and k != 'drops'}
            | {'steered', 'pass_up'})
    total = 0
    for k in sorted(keys):
        w, g = want.get(k, 0), s.get(k)
        total += g or 0
        if g != w:
            err.append('    %-28s expected %d, daemon %s' % (k, w, g))
            ok = False
        elif w:
            out.append('    %-28s %d' % (k, g))
    if total != exp['frames'] or s['rx_uplink'] != exp['frames']:
        err.append('    %d frames, %d received, %d counted' %
                   (exp['frames'], s['rx_uplink'], total))
        ok = False
    if s['messages'] + s['affinity_hits'] != s['steered']:
        err.append('    messages %d + affinity_hits %d != steered %d' %
                   (s['messages'], s['affinity_hits'], s['steered']))
        ok = False
    return ok, out, err


def pcap_frames(f):
    """The number of records of a classic pcap read from f."""
    n = 0
    f.read(24)
    while True:
        h = f.read(16)
        if len(h) < 16:
            return n
        f.seek(struct.unpack('<IIII', h)[2], 1)
        n += 1


def outputs(s, host, slow):
    """(ok, report line): host.pcap holds the steered frames, the slow
    path's pcap those passed up."""
    line = ('    host.pcap %d frames (steered %d), slowpath.pcap %d '
            '(pass_up %d)' % (host, s['steered'], slow, s['pass_up']))
    return host == s['steered'] and slow == s['pass_up'], line


def cmd_wait_rx(prefix, n):
    path, last = telemetry_path(prefix), None
    for _ in range(600):
        try:
            last = query(path, '/turbolb/stats')['rx_uplink']
            if last >= n:
                # Settled: the next poll sees the same (nothing more
                # comes).
                time.sleep(0.5)
                print(query(path, '/turbolb/stats')['rx_uplink'])
                return 0
        except (OSError, ValueError, KeyError, TypeError):
            pass
        time.sleep(0.1)
    print(last)
    return 1


def load(path):
    with open(path) as f:
        return json.load(f)


def main(argv):
    if len(argv) == 4 and argv[1] == 'wait-rx':
        return cmd_wait_rx(argv[2], int(argv[3]))
    if len(argv) == 3 and argv[1] == 'stats':
        print(json.dumps(query(telemetry_path(argv[2]), '/turbolb/stats')))
        return 0
    if len(argv) == 4 and argv[1] == 'counters':
        ok, out, err = counters(load(argv[2]), load(argv[3]))
        for line in out:
            print(line)
        for line in err:
            print(line, file=sys.stderr)
        return 0 if ok else 1
    if len(argv) == 5 and argv[1] == 'outputs':
        with open(argv[3], 'rb') as h, open(argv[4], 'rb') as sl:
            ok, line = outputs(load(argv[2]), pcap_frames(h),
                               pcap_frames(sl))
        print(line)
        return 0 if ok else 1
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
