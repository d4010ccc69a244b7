# SPDX-License-Identifier: BSD-3-Clause
"""A memcached client of the peers suite (tests/peers/test_memcached.sh):
the cases memcaslap does not make.

  mc_client.py preload HOST PORT          stores KEYS over TCP (run in each
                                          server's namespace: every server
                                          holds every key)
  mc_client.py check HOST PORT ROUNDS FLOWS
                                          over UDP, ROUNDS times: a get of
                                          each key (values of 100 B, 1400 B
                                          and 5000 B: one, two and four
                                          response datagrams), a get of a
                                          key no server holds, and
                                          multi-key gets (hits, and hits
                                          with misses), from FLOWS sockets
                                          in turn; checks every value;
                                          prints a JSON summary, exits 1 on
                                          any wrong, missing or extra
                                          datagram
  mc_client.py ping HOST PORT             one get over UDP: exits 0 when
                                          its value came back within
                                          PING_TIMEOUT_S

memcached's UDP frame header (8 bytes, big endian): request id, sequence
number, total datagrams in the message, reserved (0). A request is one
datagram (total 1). memcached 1.6 answers a get with one message per key
found, each repeating the request id and spanning one or more datagrams
(seq 0..total-1, at most 1400 bytes of reply each), the last message
ending in 'END'; a get of one key that misses is one message 'END', and a
leading miss in a multi-key get adds a header-only datagram of total 0.
"""

import json
import socket
import struct
import sys

FRAME = struct.Struct("!HHHH")
# name -> value size; the value is a pattern of the key, so that a value
# from a wrong key or a misordered datagram is seen.
KEYS = {"v100": 100, "v1400": 1400, "v5000": 5000, "m0": 10, "m1": 300,
        "m2": 2000}
ABSENT = "absent"
# One request each; the expected hits, in order.
GETS = [["v100"], ["v1400"], ["v5000"], [ABSENT], ["m0", "m1", "m2"],
        ["v100", ABSENT, "v5000"], [ABSENT, "m2"]]
# A bound on one reply, not a timing assumption: a reply later than this
# is an error of its own (and its datagrams, when they come, are counted
# as late rather than taken for the next request's).
TIMEOUT_S = 30.0
# ping: a probe that is retried, so its one reply may be given up on soon.
PING_TIMEOUT_S = 1.0


def value(key):
    pattern = ("%s:0123456789abcdefghijklmnopqrstuvwxyz;" % key).encode()
    n = KEYS[key]
    return (pattern * (n // len(pattern) + 1))[:n]


def preload(host, port):
    s = socket.create_connection((host, port), timeout=TIMEOUT_S)
    f = s.makefile("rb")
    for key in KEYS:
        v = value(key)
        s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(v), v))
        line = f.readline()
        if line != b"STORED\r\n":
            raise SystemExit("preload %s: %r" % (key, line))
    s.close()


def parse_get(reply):
    """A get's reply ('VALUE key flags bytes\\r\\ndata\\r\\n'.. 'END\\r\\n')
    as a list of (key, data); ValueError on anything else."""
    out = []
    rest = reply
    while True:
        line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            raise ValueError("no line end in %r" % reply[:60])
        if line == b"END":
            if rest:
                raise ValueError("bytes after END")
            return out
        word = line.split()
        if len(word) != 4 or word[0] != b"VALUE":
            raise ValueError("unexpected line %r" % line[:60])
        n = int(word[3])
        data, rest = rest[:n], rest[n:]
        if len(data) != n or not rest.startswith(b"\r\n"):
            raise ValueError("short value of %r" % word[1])
        rest = rest[2:]
        out.append((word[1].decode(), data))


class UdpClient:
    def __init__(self, host, port, flows):
        self.socks = []
        for _ in range(flows):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.connect((host, port))
            s.settimeout(TIMEOUT_S)
            self.socks.append(s)
        self.rid = 0
        self.requests = 0
        self.datagrams = 0
        self.late = 0
        self.timed_out = set()
        self.errors = []

    def request(self, flow, command):
        """Sends one request datagram and gathers its reply: the messages
        that come back with its request id, each every seq of 0..total-1
        once, until one ends the reply ('END\\r\\n' at the end of a
        complete message). Returns the reply's bytes and its datagrams."""
        s = self.socks[flow % len(self.socks)]
        self.rid = (self.rid + 1) & 0xFFFF
        s.send(FRAME.pack(self.rid, 0, 1, 0) + command)
        self.requests += 1
        reply = b""
        n = 0
        while True:
            parts = {}
            total = None
            while total is None or len(parts) < total:
                d = s.recv(65536)  # socket.timeout: a datagram lost
                rid, seq, tot, _ = FRAME.unpack(d[:FRAME.size])
                if rid in self.timed_out:
                    self.late += 1
                    continue
                if rid != self.rid:
                    raise ValueError("datagram of request %d, want %d" %
                                     (rid, self.rid))
                self.datagrams += 1
                n += 1
                if total is None:
                    if seq != 0:
                        raise ValueError("message starts at seq %d" % seq)
                    total = tot
                if tot != total or (seq >= total and total != 0) or \
                        seq in parts:
                    raise ValueError("datagram %d of %d, after %s of %d" %
                                     (seq, tot, sorted(parts), total))
                parts[seq] = d[FRAME.size:]
                if total == 0:  # a miss's header-only datagram
                    break
            reply += b"".join(parts[i] for i in sorted(parts))
            if reply.endswith(b"END\r\n"):
                return reply, n

    def get(self, flow, keys):
        reply, n = self.request(flow, ("get %s\r\n" %
                                       " ".join(keys)).encode())
        got = parse_get(reply)
        want = [(k, value(k)) for k in keys if k != ABSENT]
        if got != want:
            raise ValueError("get %s: %s" % (" ".join(keys),
                             [(k, len(v)) for k, v in got]))
        return n


def ping(host, port):
    c = UdpClient(host, port, 1)
    c.socks[0].settimeout(PING_TIMEOUT_S)
    try:
        c.get(0, ["v100"])
    except (OSError, ValueError):
        return 1
    return 0


def check(host, port, rounds, flows):
    c = UdpClient(host, port, flows)
    per_get = {}
    n = 0
    for _ in range(rounds):
        for keys in GETS:
            name = " ".join(keys)
            try:
                per_get[name] = c.get(n, keys)
            except socket.timeout:
                c.timed_out.add(c.rid)
                c.errors.append("%s (request %d): no reply in %.0f s" %
                                (name, c.rid, TIMEOUT_S))
            except ValueError as e:
                c.errors.append("%s (request %d): %s" % (name, c.rid, e))
            n += 1
    # A datagram that came after its request was complete (a duplicate,
    # or one beyond the total) waits in a socket.
    extra = 0
    for s in c.socks:
        s.setblocking(False)
        while True:
            try:
                s.recv(65536)
                extra += 1
            except BlockingIOError:
                break
    out = {"requests": c.requests, "datagrams": c.datagrams,
           "late_datagrams": c.late, "extra_datagrams": extra,
           "errors": c.errors,
           "datagrams_per_get": per_get}
    print(json.dumps(out))
    return 0 if not c.errors and extra == 0 else 1


def main(argv):
    if len(argv) == 4 and argv[1] == "preload":
        preload(argv[2], int(argv[3]))
        return 0
    if len(argv) == 6 and argv[1] == "check":
        return check(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    if len(argv) == 4 and argv[1] == "ping":
        return ping(argv[2], int(argv[3]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
