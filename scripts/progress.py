#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One updating progress line for the long scripts (compare-policies.sh,
sim-report.sh, bench-dispatch.sh): which step of how many is running, the
time elapsed and an estimate of what is left.

The line is drawn only on a terminal, and never with --quiet, so that
logs and CI output stay free of it. In Python, Progress draws it
directly (scripts/simreport.py). A shell script sources
scripts/lib/progress.sh, which runs

    progress.py relay --total N

with the script's output piped through it: every line passes through
unchanged, the progress line is cleared before it and drawn again after
it, and a line that starts with the control character RS (0x1e) followed
by "progress " is no output but the start of the next step, its label
the rest of the line. The relay redraws once a second, so the elapsed
time moves while a step runs.

Standard library only; the estimate and the line's format are tested by
tests/python/test_progress.py.
"""
import argparse
import os
import select
import signal
import sys
import time

CONTROL = "\x1eprogress "
CLEAR = "\r\033[K"


def duration(seconds):
    """A short human duration: 42s, 3m05s, 1h02m."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60)


def estimate_left(done, total, elapsed):
    """Seconds left if the rest of the work goes at the rate of the part
    done: elapsed / done per unit. None before any unit is done (no rate
    yet). done and total are work units (steps, or a cost per step)."""
    if done <= 0 or total <= 0:
        return None
    return max(0.0, elapsed * (total - done) / done)


def line(step, steps, label, elapsed, left, width=None):
    """The progress line: "[3/12] label  1m05s elapsed, about 2m10s left".
    step counts from 1 (the one running). Cut to width characters when
    given, so that it never wraps (a wrapped line cannot be redrawn)."""
    text = "[%d/%d] %s  %s elapsed, %s" % (
        step, steps, label, duration(elapsed),
        "about %s left" % duration(left) if left is not None
        else "time left not known yet")
    if width is not None and len(text) > width:
        text = text[:max(0, width - 1)]
    return text


def enabled(stream, quiet=False):
    """Whether to draw: not quiet, and stream is a terminal."""
    if quiet:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """steps steps, each worth some units of work (1 by default; the
    estimate weighs a step by its units). start(label, units) begins the
    next step; done(units) may count work finer than steps (the
    simulation report counts each finished job by its cost)."""

    def __init__(self, steps, stream=sys.stderr, on=True, units=None,
                 clock=time.monotonic):
        self.steps = steps
        self.units = float(units if units is not None else steps)
        self.stream = stream
        self.on = on
        self.clock = clock
        self.t0 = clock()
        self.step = 0
        self.label = ""
        self.units_done = 0.0
        self.pending = 0.0
        self.shown = False

    def start(self, label, units=1.0):
        """The next step begins: the one before it is done."""
        self.units_done += self.pending
        self.pending = units
        self.step = min(self.step + 1, self.steps)
        self.label = label
        self.draw()

    def done(self, units, label=None, step=None):
        """units more of the work are done (within or across steps); step,
        when given, is the step now running (steps that run side by side
        count as one running after the last one done)."""
        self.units_done += units
        if label is not None:
            self.label = label
        if step is not None:
            self.step = min(max(step, 1), self.steps)
        self.draw()

    def text(self, width=None):
        elapsed = self.clock() - self.t0
        return line(max(self.step, 1), self.steps, self.label, elapsed,
                    estimate_left(self.units_done, self.units, elapsed),
                    width)

    def draw(self):
        if not self.on:
            return
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            cols = 0
        # A terminal of unknown width (0) gets a line of 79.
        width = cols - 1 if cols > 1 else 79
        self.stream.write(CLEAR + self.text(width))
        self.stream.flush()
        self.shown = True

    def clear(self):
        if self.on and self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False

    def write(self, text):
        """Output that is no progress: the line is cleared before it and
        drawn again after it."""
        self.clear()
        self.stream.write(text)
        self.stream.flush()
        if self.step:
            self.draw()


def relay(total, src, dst, tick=1.0):
    """Copies src (bytes, line by line) to dst (a text terminal), turning
    the control lines into steps of a Progress drawn on dst."""
    p = Progress(total, stream=dst, on=True)
    fd = src.fileno()
    buf = b""
    while True:
        r, _, _ = select.select([fd], [], [], tick)
        if not r:
            if p.step:
                p.draw()
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for raw in lines:
            s = raw.decode(errors="replace")
            if s.startswith(CONTROL):
                p.start(s[len(CONTROL):])
            else:
                p.write(s + "\n")
    if buf:
        p.write(buf.decode(errors="replace"))
    p.clear()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("relay", help="copy stdin to stdout with the "
                       "progress line under it")
    r.add_argument("--total", type=int, required=True,
                   help="how many steps the script runs")
    a = ap.parse_args(argv)
    if a.cmd == "relay":
        # Ctrl-C is the script's to handle; the relay copies what the
        # script still writes and ends when its output closes.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        relay(a.total, sys.stdin.buffer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
