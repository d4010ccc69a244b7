#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The telemetry peers of tests/cli/test_cores_many.sh: a client that
pages through /turbolb/cores as docs/architecture.md tells one to, and a
fake telemetry server whose pages turbolbctl must merge.

    cores_pages.py follow SOCKET N BUDGET
        the bare /turbolb/cores, then FIRST from each "next", until an
        answer has none: every core 0..N-1 once, in order, no answer
        longer than BUDGET bytes. Prints "P pages, the longest L bytes";
        an AssertionError (exit 1) says what broke.
    cores_pages.py fake-server SOCKET
        serves two connections, each with its own pages (FAKE_PAGES);
        gives up after 30 s without one.

The page walk and the fake server's answers are tested by
tests/python/test_cores_pages.py.
"""
import json
import socket
import sys

CMD = "/turbolb/cores"


def follow(ask, n, budget):
    """Walks the pages: ask(request) returns the raw answer. Returns
    (pages, longest answer in bytes)."""
    seen, req, pages, longest = [], CMD, 0, 0
    while True:
        raw = ask(req)
        longest = max(longest, len(raw))
        assert len(raw) <= budget, "%s: %d bytes" % (req, len(raw))
        page = json.loads(raw.decode())[CMD]
        pages += 1
        seen += [int(k) for k in page if k != "next"]
        if "next" not in page:
            break
        assert page["next"] == max(seen) + 1, page["next"]
        req = "%s,%d" % (CMD, page["next"])
        assert pages <= n
    assert seen == list(range(n)), seen
    return pages, longest


def fake_core():
    return {"state": "online", "outstanding": 0, "sent": 1,
            "completed": 1, "outstanding_work_ns": 0}


# The fake server's answers, one dict per connection: pages of 3, 1 and 2
# cores ending without a next, then a next that does not move on.
FAKE_PAGES = [
    {CMD: {"0": fake_core(), "1": fake_core(), "2": fake_core(),
           "next": 7},
     CMD + ",7": {"7": fake_core(), "next": 9},
     CMD + ",9": {"9": fake_core(), "10": fake_core()}},
    {CMD: {"0": fake_core(), "next": 5},
     CMD + ",5": {"5": fake_core(), "next": 5}},
]


def answer(answers, req):
    """The fake server's answer to req: as DPDK's telemetry, keyed by the
    command without its parameters, null for a request it does not know."""
    return {req.split(",")[0]: answers.get(req)}


def cmd_follow(path, n, budget):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(path)
    hello = json.loads(s.recv(65536).decode())
    assert hello["max_output_len"] == 16384, hello

    def ask(req):
        s.send(req.encode())
        return s.recv(1 << 20)
    pages, longest = follow(ask, n, budget)
    print("%d pages, the longest %d bytes" % (pages, longest))


def cmd_fake_server(path):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(30)
    for answers in FAKE_PAGES:
        c, _ = srv.accept()
        c.settimeout(30)
        c.send(json.dumps({"version": "fake", "pid": 1,
                           "max_output_len": 16384}).encode())
        while True:
            req = c.recv(1024).decode()
            if not req:
                break
            c.send(json.dumps(answer(answers, req)).encode())
        c.close()


def main(argv):
    if len(argv) == 5 and argv[1] == "follow":
        cmd_follow(argv[2], int(argv[3]), int(argv[4]))
    elif len(argv) == 3 and argv[1] == "fake-server":
        cmd_fake_server(argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
