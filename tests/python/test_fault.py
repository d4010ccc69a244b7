# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of tests/fault/fault.py, the verdicts of the fault tests:
the accounting invariant, the conditions fwait evaluates, the overload
samples' summary, and the daemon restart's phase A records and checks."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fault"))
import fault  # noqa: E402


def phase(sent, received, lost=0, errors=0, late=0, written_off=0):
    return {"sent": sent, "received": received, "lost": lost,
            "errors": errors, "late": late, "written_off": written_off}


def lg_run(main, warmup, tx_dropped=0, duplicates=0, unknown=0, **kw):
    return dict(main, warmup=warmup, tx_dropped=tx_dropped,
                duplicates=duplicates, unknown=unknown, **kw)


def stats(**kw):
    s = {"drops": 0, "stranded": 0, "written_off": 0, "late_completions": 0,
         "fifo_depth": 0, "drop_tx_full": 0, "drop_no_core": 0}
    s.update(kw)
    return s


def core(outstanding=0, stale=False, sent=0, state="live", written_off=0):
    return {"outstanding": outstanding, "stale": stale, "sent": sent,
            "state": state, "written_off": written_off}


def server(**kw):
    t = {"tx_drops": 0, "nonlinear_drops": 0, "response_errors": 0,
         "parse_drops": {"short": 0}, "not_request": 0}
    t.update(kw)
    return t


class Account(unittest.TestCase):
    def test_exact(self):
        # 1000 + 100 issued; 20 + 3 lost, 5 of them answered late: 18
        # unanswered. Accounted: 2 never left the load generator, 8
        # dropped by the daemon, 3 outstanding at a stale core, 7 written
        # off less 5 answered late, 1 in the FIFO, 2 dropped by the server.
        runs = [lg_run(phase(1000, 975, lost=20, errors=5, late=5),
                       phase(100, 97, lost=3), tx_dropped=2),
                {"summary": True}]
        s = stats(drops=8, drop_no_core=8, written_off=7,
                  late_completions=5, fifo_depth=1)
        cores = {0: core(3, stale=True), 1: core(0)}
        lines, problems = fault.account(s, cores, runs,
                                        [server(parse_drops={"short": 2})])
        self.assertEqual(problems, [])
        self.assertEqual(lines[0], "    issued 1100 = answered 1082 + "
                         "unanswered 18")
        self.assertIn("unanswered 18 vs accounted 18", lines[1])
        self.assertIn("{'drop_no_core': 8}", lines[1])

    def test_mismatch_and_live_outstanding(self):
        runs = [lg_run(phase(100, 90, lost=10), phase(0, 0))]
        lines, problems = fault.account(stats(drops=9), {0: core(2)}, runs,
                                        [])
        self.assertIn("    MISMATCH: +1 requests unaccounted", problems)
        self.assertIn("    2 outstanding at cores not marked stale",
                      problems)

    def test_duplicates(self):
        runs = [lg_run(phase(10, 10), phase(0, 0), duplicates=1)]
        _, problems = fault.account(stats(), {}, runs, [])
        self.assertEqual(problems, ["    duplicates 1 unknown 0"])

    def test_server_drops(self):
        self.assertEqual(fault.server_drops(server(
            tx_drops=1, nonlinear_drops=2, response_errors=3,
            parse_drops={"a": 4, "b": 5}, not_request=6)), 21)


class Conditions(unittest.TestCase):
    def test_view(self):
        b_c = {0: core(sent=10), 1: core(sent=20)}
        c = {0: core(2, sent=15), 1: core(5, stale=True, sent=40,
                                          state="probing")}
        env = fault.View({"drops": 7}, c, {"drops": 3}, b_c).env()
        self.assertTrue(eval("all(sent(k) >= 15 for k in cores)", env))
        self.assertEqual(eval("others_sent(0)", env), 40)
        self.assertEqual(eval("b_others_sent(0)", env), 20)
        self.assertEqual(eval("b_total_sent", env), 30)
        self.assertEqual(eval("(total_out, live_out, n_stale)", env),
                         (7, 2, 1))
        self.assertTrue(eval("probing(1) and not probing(0)", env))
        self.assertEqual(eval("grown('drops')", env), 4)


def sample(t, drop_fifo_full, loops, fifo=0, outs=(0,), dt=0.01):
    return {"t": t, "dt": dt,
            "s": {"drop_fifo_full": drop_fifo_full, "loops": loops,
                  "fifo_depth": fifo},
            "c": {str(i): {"outstanding": o} for i, o in enumerate(outs)}}


class Overload(unittest.TestCase):
    def test_window_from_the_sample_before_the_first_drop(self):
        recs = [sample(0, 0, 100), sample(1, 0, 200, outs=(1, 2)),
                sample(2, 5, 300, fifo=32, dt=0.2), sample(3, 9, 300),
                sample(4, 12, 450), sample(5, 12, 500, outs=(3, 0)),
                {"fails": 2}]
        v = fault.overload_summary(recs)
        self.assertEqual(v, {"samples": 6, "in_overload": 4, "loops_grow": 1,
                             "flat_intervals": 1, "max_fifo": 32,
                             "max_out": 3, "max_answer_ms": 200,
                             "failed_queries": 2})

    def test_loops_going_back(self):
        recs = [sample(0, 0, 100), sample(1, 1, 200), sample(2, 2, 150)]
        self.assertEqual(fault.overload_summary(recs)["loops_grow"], 0)

    def test_no_drops_no_window(self):
        v = fault.overload_summary([sample(0, 0, 1), sample(1, 0, 2)])
        self.assertEqual((v["in_overload"], v["loops_grow"],
                          v["failed_queries"]), (0, 0, -1))


def phase_a(fd):
    return lg_run(phase(900, 700, lost=200, written_off=30),
                  phase(100, 100), tx_dropped=6, first_link_down=fd)


LOG = """turbolb.main: something before
turbolb.main: final counters
turbolb.main:   rx_uplink        590
turbolb.main:   messages         580
turbolb.main:   responses        560
turbolb.main:   drop_no_core     10
turbolb.main:   drop_tx_full     5
turbolb.main:   core 0: sent 300 completed 290
turbolb.main:   core 1: sent 275 completed 275
"""


class DaemonRestart(unittest.TestCase):
    FD = {"sent": 600, "lost": 40, "tx_dropped": 2, "answered": 550,
          "tx_pkts": 598, "written_off": 30}

    def test_link_loss_record(self):
        r = fault.link_loss_record(phase_a(self.FD))
        # since the loss: 1000 - 600 issued, 200 - 40 of them lost
        self.assertEqual((r["sent"], r["received"], r["lost"], r["late"]),
                         (400, 240, 160, 0))
        self.assertEqual(r["warmup"]["sent"], 0)
        self.assertEqual(r["tx_dropped"], 4)

    def test_final_counters(self):
        old, cores = fault.final_counters(LOG.splitlines())
        self.assertEqual(old, {"rx_uplink": 590, "messages": 580,
                               "responses": 560, "drop_no_core": 10,
                               "drop_tx_full": 5})
        self.assertEqual(cores, {0: (300, 290), 1: (275, 275)})

    def test_before_restart_adds_up(self):
        old, cores = fault.final_counters(LOG.splitlines())
        # 600 issued = 550 answered + 2 tx_dropped + 8 in the ring to the
        # old daemon + 10 dropped + 5 refused towards the host + 15 in
        # flight at the host + 10 forwarded, not read
        lines, failed = fault.before_restart(phase_a(self.FD), old, cores,
                                             1024)
        self.assertEqual(failed, [])
        self.assertIn("in the ring to the old daemon 8", lines[0])
        self.assertIn("its view at exit: 10 outstanding", lines[1])
        # a ring smaller than the residue
        _, failed = fault.before_restart(phase_a(self.FD), old, cores, 5)
        self.assertEqual(failed, ["ring residue within one memif ring",
                                  "unread responses within one memif ring"])

    def test_before_restart_one_missing(self):
        old, cores = fault.final_counters(LOG.splitlines())
        fd = dict(self.FD, sent=601)
        _, failed = fault.before_restart(phase_a(fd), old, cores, 1024)
        self.assertEqual(failed, ["issued == tx_pkts + tx_dropped",
                                  "the sum"])

    def test_never_down(self):
        _, failed = fault.before_restart(phase_a(None), {}, {}, 1024)
        self.assertEqual(failed, ["phase A never saw its link go down"])


if __name__ == "__main__":
    unittest.main()
