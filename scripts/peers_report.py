# SPDX-License-Identifier: BSD-3-Clause
"""Reads what the real clients of the peers suite and of
`scripts/demo.sh --dns` print (dnsperf, memcaslap) and what turbolbd's
telemetry answers (turbolbctl --json stats and cores), and puts one phase
of a run into one JSON object: the client's own summary next to the
daemon's counters over the same phase (after minus before).

  peers_report.py phase POLICY DIR    DIR holds stats0.json cores0.json
                                      (before), stats1.json cores1.json
                                      (after) and the client's output,
                                      dnsperf.txt, memcaslap.txt or
                                      client.json (tests/peers/mc_client.py);
                                      prints the phase as one JSON line
  peers_report.py field FILE KEY..    the values of KEYs in a phase's JSON
                                      (a list as space-separated words),
                                      one line, in the order asked
  peers_report.py table FILE..        the phases as a table (the demo's)
"""

import json
import re
import sys


def parse_dnsperf(text):
    """dnsperf 2.x's statistics: queries sent, completed, lost, the rate
    and the latency summary (seconds). Raises ValueError when a line is
    missing (dnsperf failed before its summary)."""
    fields = {
        "sent": (r"Queries sent:\s+(\d+)", int),
        "completed": (r"Queries completed:\s+(\d+)", int),
        "lost": (r"Queries lost:\s+(\d+)", int),
        "qps": (r"Queries per second:\s+([\d.]+)", float),
        "run_s": (r"Run time \(s\):\s+([\d.]+)", float),
        "lat_avg_s": (r"Average Latency \(s\):\s+([\d.]+)", float),
        "lat_min_s": (r"Average Latency \(s\):.*\(min ([\d.]+),", float),
        "lat_max_s": (r"Average Latency \(s\):.*max ([\d.]+)\)", float),
        "lat_stddev_s": (r"Latency StdDev \(s\):\s+([\d.]+)", float),
    }
    out = {}
    for key, (pattern, conv) in fields.items():
        m = re.search(pattern, text)
        if m is None:
            raise ValueError("dnsperf output without '%s'" %
                             pattern.split(":")[0].replace("\\", ""))
        out[key] = conv(m.group(1))
    m = re.search(r"Response codes:\s+(.*)", text)
    out["rcodes"] = m.group(1).strip() if m else ""
    return out


def parse_memcaslap(text):
    """memcaslap's end-of-run counters (its lines 'name: value'). Raises
    ValueError when they are missing (it aborted or was killed)."""
    keys = ("cmd_get", "cmd_set", "get_misses", "packet_disorder",
            "packet_drop", "udp_timeout")
    out = {}
    for key in keys:
        m = re.search(r"^%s:\s+(\d+)\s*$" % key, text, re.M)
        if m is None:
            raise ValueError("memcaslap output without '%s'" % key)
        out[key] = int(m.group(1))
    return out


def stats(doc):
    return doc["/turbolb/stats"]


def cores(doc):
    """Per core id (in order) its fields, from one /turbolb/cores answer."""
    c = doc["/turbolb/cores"]
    return [c[k] for k in sorted((k for k in c if k.isdigit()), key=int)]


def phase(policy, s0, c0, s1, c1, client):
    """The phase's JSON object: the client's summary (client), the daemon's
    counters after minus before (steered, responses, drops, per-core sent
    and completed) and every core's outstanding count after."""
    d = {"policy": policy, "client": client}
    for key in ("steered", "messages", "responses", "drops",
                "completions_inband", "completions_extra",
                "late_completions", "written_off", "response_followups",
                "unanswered", "request_ids_full", "oneway", "pass_up",
                "pass_down"):
        d[key] = stats(s1).get(key, 0) - stats(s0).get(key, 0)
    b, a = cores(c0), cores(c1)
    d["core_sent"] = [x["sent"] - y["sent"] for x, y in zip(a, b)]
    d["core_completed"] = [x["completed"] - y["completed"]
                           for x, y in zip(a, b)]
    d["outstanding"] = [x["outstanding"] for x in a]
    return d


def load_phase(policy, folder):
    def js(name):
        with open("%s/%s" % (folder, name)) as f:
            return json.load(f)
    client = None
    for name, parse in (("dnsperf.txt", parse_dnsperf),
                        ("memcaslap.txt", parse_memcaslap),
                        ("client.json", json.loads)):
        try:
            with open("%s/%s" % (folder, name)) as f:
                client = parse(f.read())
            break
        except FileNotFoundError:
            continue
    if client is None:
        raise ValueError("%s: no client output" % folder)
    return phase(policy, js("stats0.json"), js("cores0.json"),
                 js("stats1.json"), js("cores1.json"), client)


def field(doc, key):
    v = doc.get(key, doc["client"].get(key))
    if isinstance(v, list):
        return " ".join(str(x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def table(phases):
    """dnsperf's summary per policy next to the daemon's per-core counts."""
    head = ("policy", "queries", "lost", "queries/s", "avg us", "min us",
            "max us", "sd us", "steered", "responses", "drops",
            "per-core sent")
    rows = []
    for p in phases:
        c = p["client"]
        us = lambda s: "%.0f" % (s * 1e6)  # noqa: E731
        rows.append((p["policy"], str(c["sent"]), str(c["lost"]),
                     "%.0f" % c["qps"], us(c["lat_avg_s"]),
                     us(c["lat_min_s"]), us(c["lat_max_s"]),
                     us(c["lat_stddev_s"]), str(p["steered"]),
                     str(p["responses"]), str(p["drops"]),
                     " ".join(str(x) for x in p["core_sent"])))
    width = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    lines = []
    for r in [head] + rows:
        lines.append("  ".join(v.rjust(w) if i not in (0, len(head) - 1)
                               else v.ljust(w)
                               for i, (v, w) in enumerate(zip(r, width)))
                     .rstrip())
    return "\n".join(lines)


def main(argv):
    if len(argv) == 4 and argv[1] == "phase":
        print(json.dumps(load_phase(argv[2], argv[3])))
        return 0
    if len(argv) >= 4 and argv[1] == "field":
        with open(argv[2]) as f:
            doc = json.load(f)
        print(" ".join(field(doc, k) for k in argv[3:]))
        return 0
    if len(argv) >= 3 and argv[1] == "table":
        phases = []
        for name in argv[2:]:
            with open(name) as f:
                phases.append(json.load(f))
        print(table(phases))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
