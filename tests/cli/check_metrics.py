#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks turbolbd's Prometheus text against its telemetry, with the
Prometheus project's own parser (python3-prometheus-client).

  check_metrics.py STATS_BEFORE STATS_AFTER CORES TEXT [DASHBOARD]

STATS_* are `turbolbctl --json stats` answers taken before and after TEXT
(the metrics), CORES a `turbolbctl --json cores` answer. The traffic has
stopped, so every counter but the loop heartbeat must be the same in all
of them. DASHBOARD: a Grafana dashboard whose every turbolb_ metric must
be in TEXT. Prints TAP lines; exits 1 when one fails.
"""
import json
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

failed = 0


def check(name, cond, detail=""):
    global failed
    if cond:
        print("ok - " + name)
    else:
        failed += 1
        print("not ok - %s%s" % (name, ": " + detail if detail else ""))


def answer(path):
    with open(path) as f:
        return list(json.load(f).values())[0]


before = answer(sys.argv[1])
after = answer(sys.argv[2])
cores = {k: v for k, v in answer(sys.argv[3]).items() if k.isdigit()}
with open(sys.argv[4]) as f:
    text = f.read()

families = list(text_string_to_metric_families(text))
check("the Prometheus parser reads %d families" % len(families),
      len(families) > 0)
undocumented = [f.name for f in families if not f.documentation.strip()]
check("every family has HELP", not undocumented, repr(undocumented))
check("every family has a TYPE",
      all(f.type in ("counter", "gauge", "histogram") for f in families),
      repr([(f.name, f.type) for f in families
            if f.type not in ("counter", "gauge", "histogram")]))
check("every counter's samples end in _total",
      all(s.name.endswith("_total")
          for f in families if f.type == "counter" for s in f.samples))
check("every name starts with turbolb_ and none says ns",
      all(s.name.startswith("turbolb_") and "_ns" not in s.name
          for f in families for s in f.samples))

samples = {}
for f in families:
    for s in f.samples:
        key = (s.name, tuple(sorted(s.labels.items())))
        check("one sample %r" % (key,), key not in samples)
        samples[key] = s.value


def value(name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))))


moving = {"loops", "mbufs_in_use"}
check("traffic stopped: /turbolb/stats the same before and after",
      {k: v for k, v in before.items() if k not in moving} ==
      {k: v for k, v in after.items() if k not in moving})

# Every key of /turbolb/stats is a sample (the derived total "drops" is
# sum(turbolb_drops_total)), and the values are the same numbers: the
# counters of the text, as a multiset, are those of the stats (the
# nanoseconds as seconds), and the ones named here are where they belong.
stats_samples = [(k, v) for k, v in samples.items()
                 if not k[0].startswith(("turbolb_core_",
                                         "turbolb_residence_"))]
check("one sample per key of /turbolb/stats but drops",
      len(stats_samples) == len(before) - 1,
      "%d samples, %d keys" % (len(stats_samples), len(before)))
want = sorted(float(v) / (1e9 if k.endswith("_ns") else 1)
              for k, v in before.items()
              if k not in ("drops",) and k not in moving)
got = sorted(v for k, v in stats_samples
             if k[0] not in ("turbolb_poll_loops_total",
                             "turbolb_mbufs_in_use"))
check("the values are those of /turbolb/stats", want == got,
      "%r vs %r" % (want, got))
named = {
    "rx_uplink": "turbolb_uplink_rx_frames_total",
    "steered": "turbolb_steered_packets_total",
    "messages": "turbolb_requests_total",
    "responses": "turbolb_responses_total",
    "completions_credit": "turbolb_completions_credit_total",
    "completions_inband": "turbolb_completions_inband_total",
    "written_off": "turbolb_written_off_requests_total",
    "late_completions": "turbolb_late_completions_total",
    "incomplete_messages": "turbolb_incomplete_messages_total",
    "resp_core_mismatch": "turbolb_response_core_mismatch_total",
    "fifo_depth": "turbolb_fifo_depth_requests",
}
for key, name in named.items():
    check("%s = %s (%s)" % (name, key, before.get(key)),
          value(name) == before[key], "got %r" % value(name))
check("turbolb_written_off_work_seconds_total = written_off_work_ns / 1e9",
      value("turbolb_written_off_work_seconds_total") ==
      before["written_off_work_ns"] / 1e9)
check("the loop heartbeat between its two readings",
      before["loops"] <= value("turbolb_poll_loops_total") <= after["loops"])
drops = {k: v for k, v in before.items() if k.startswith("drop_")}
for key, v in drops.items():
    check("turbolb_drops_total{reason=%s} = %s" % (key[5:], key),
          value("turbolb_drops_total", reason=key[5:]) == v)
    check("reason %s has its description" % key[5:],
          re.search(r'^# reason="%s\*?": \S' %
                    re.escape(key[5:] if not key.startswith("drop_parse_")
                              else "parse_"), text, re.M) is not None)
check("sum(turbolb_drops_total) = drops",
      sum(v for k, v in samples.items() if k[0] == "turbolb_drops_total") ==
      before["drops"])
check("traffic flowed", before["messages"] > 0)

# The residence histogram: cumulative buckets, +Inf = _count, and every
# packet handed to a TX queue counted once.
res = [f for f in families if f.name == "turbolb_residence_seconds"]
check("turbolb_residence_seconds is a histogram",
      len(res) == 1 and res[0].type == "histogram")
if res:
    buckets = sorted((float(s.labels["le"]), s.value) for s in res[0].samples
                     if s.name.endswith("_bucket"))
    count = value("turbolb_residence_seconds_count")
    check("residence buckets cumulative, +Inf = _count",
          all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])) and
          buckets[-1] == (float("inf"), count), repr(buckets))
    sent = sum(before[k] for k in ("steered", "responses", "pass_up",
                                   "pass_down"))
    check("residence _count %r = packets sent %r" % (count, sent),
          count == sent)
    check("residence _sum > 0", value("turbolb_residence_seconds_sum") > 0)

fields = {
    "sent": "turbolb_core_requests_sent_total",
    "completed": "turbolb_core_requests_completed_total",
    "outstanding": "turbolb_core_outstanding_requests",
    "written_off": "turbolb_core_written_off_requests_total",
    "stale_events": "turbolb_core_stale_events_total",
}
for cid, c in sorted(cores.items(), key=lambda kv: int(kv[0])):
    lab = {"core": cid, "dispatcher": str(c["dispatcher"])}
    for field, name in fields.items():
        check("core %s: %s = %s" % (cid, name, field),
              value(name, **lab) == c[field],
              "%r vs %r" % (value(name, **lab), c[field]))
    check("core %s: outstanding work in seconds" % cid,
          value("turbolb_core_outstanding_work_seconds", **lab) ==
          c["outstanding_work_ns"] / 1e9)
    states = {s: value("turbolb_core_state", state=s, **lab)
              for s in ("offline", "stale", "probing", "running", "online")}
    check("core %s: turbolb_core_state is 1 for %s only" % (cid, c["state"]),
          states == {s: float(s == c["state"]) for s in states},
          repr(states))
check("every core's sent is in the text",
      len([k for k in samples
           if k[0] == "turbolb_core_requests_sent_total"]) == len(cores))

if len(sys.argv) > 5:
    with open(sys.argv[5]) as f:
        dash = json.load(f)
    exprs = []

    def walk(node):
        if isinstance(node, dict):
            # the panels' queries, and the variables' (definition)
            for key in ("expr", "definition"):
                if isinstance(node.get(key), str):
                    exprs.append(node[key])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(dash)
    names = {s[0] for s in samples}
    used = set()
    for e in exprs:
        used |= set(re.findall(r"\bturbolb_[a-z0-9_]+", e))
    check("the dashboard has queries (%d, %d metrics)" %
          (len(exprs), len(used)), len(exprs) > 0 and len(used) > 0)
    for name in sorted(used):
        check("dashboard metric %s is in the text" % name, name in names)

sys.exit(1 if failed else 0)
