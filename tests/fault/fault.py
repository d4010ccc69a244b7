#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The helper of the fault tests (tests/fault/lib.sh runs it): telemetry
client, bounded polls on a condition, the thread stopper, the accounting
invariant, and the arithmetic of the tests' own checks.

    fault.py query CMD [--key K]     one telemetry answer, as JSON
    fault.py wait --until COND [--always COND]...
                                     polls /turbolb/stats and /turbolb/cores
    fault.py sample OUT              samples both until SIGTERM
    fault.py stop-thread TID READY [--in-object NAME]
                                     stops one thread (ptrace) until SIGTERM,
                                     with --in-object at an instruction of
                                     that shared object (x86_64)
    fault.py account --stats S --cores C [--server F]... LG_JSON...
                                     the accounting invariant
    fault.py overload-samples SAMPLES.jsonl
                                     test_overload.sh's summary of the
                                     samples taken during the overload
    fault.py link-loss-record A.json phase A of test_daemon_restart.sh
                                     after its link loss, as a load
                                     generator record of its own
    fault.py before-restart A.json DAEMON_LOG RING
                                     test_daemon_restart.sh's accounting of
                                     phase A against the old daemon

The telemetry commands need FAULT_PREFIX (the daemon's file prefix). The
parts that compute a verdict are pure functions, tested by
tests/python/test_fault.py.
"""
import argparse
import ctypes
import json
import os
import re
import signal
import socket
import sys
import time

def runtime_dir(prefix):
    d = os.environ.get('RUNTIME_DIRECTORY')
    if not d:
        d = '/var/run' if os.getuid() == 0 else \
            os.environ.get('XDG_RUNTIME_DIR', '/tmp')
    return os.path.join(d, 'dpdk', prefix)

class Tel:
    def __init__(self, prefix):
        self.path = os.path.join(runtime_dir(prefix), 'dpdk_telemetry.v2')
        self.sock = None
        self.buf = 65536
    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(10)
        s.connect(self.path)
        hello = json.loads(s.recv(self.buf).decode())
        self.buf = max(self.buf, int(hello.get('max_output_len', 16384)) + 1)
        self.sock = s
    def query(self, cmd):
        for attempt in (0, 1):
            try:
                if self.sock is None:
                    self.connect()
                self.sock.send(cmd.encode())
                data = self.sock.recv(self.buf)
                if not data:
                    raise OSError('telemetry closed the connection')
                v = json.loads(data.decode())[cmd.split(',')[0]]
                if v is None:
                    # Not registered (yet): the daemon is starting.
                    raise ValueError('no answer to ' + cmd)
                return v
            except (OSError, ValueError):
                if self.sock is not None:
                    self.sock.close()
                self.sock = None
                if attempt:
                    raise

def tel():
    return Tel(os.environ['FAULT_PREFIX'])

def cmd_query(a):
    v = tel().query(a.cmd)
    if a.key:
        v = v[a.key]
    print(json.dumps(v))

class View:
    """Names a condition may use: s (stats), c (cores, keyed by int), b_s
    and b_c (the same at the first poll), and helpers."""
    def __init__(self, s, c, b_s, b_c):
        self.s, self.c, self.b_s, self.b_c = s, c, b_s, b_c
    def env(self):
        c, b_c = self.c, self.b_c
        return dict(s=self.s, c=c, b_s=self.b_s, b_c=b_c,
            sent=lambda k: c[k]['sent'],
            b_sent=lambda k: b_c[k]['sent'],
            stale=lambda k: c[k]['stale'],
            probing=lambda k: c[k]['state'] == 'probing',
            written_off=lambda k: c[k]['written_off'],
            out=lambda k: c[k]['outstanding'],
            others_sent=lambda k: sum(v['sent'] for i, v in c.items() if i != k),
            b_others_sent=lambda k: sum(v['sent'] for i, v in b_c.items() if i != k),
            b_total_sent=sum(v['sent'] for v in b_c.values()),
            cores=sorted(c), n_stale=sum(v['stale'] for v in c.values()),
            total_out=sum(v['outstanding'] for v in c.values()),
            live_out=sum(v['outstanding'] for v in c.values() if not v['stale']),
            total_sent=sum(v['sent'] for v in c.values()),
            grown=lambda key: self.s[key] - self.b_s[key],
            all=all, any=any, sum=sum, min=min, max=max, len=len)

def snapshot(t):
    s = t.query('/turbolb/stats')
    c = {int(k): v for k, v in t.query('/turbolb/cores').items()}
    return s, c

def brief(s, c):
    keys = ('rx_uplink', 'messages', 'responses', 'drops', 'drop_tx_full',
            'drop_no_core', 'drop_fifo_full', 'host_restarts', 'stranded',
            'fifo_depth')
    return ('stats ' + ' '.join('%s=%s' % (k, s.get(k)) for k in keys) +
            '\n    cores ' + ' '.join(
                '%d:{sent=%d out=%d %s}' % (i, v['sent'], v['outstanding'],
                                            v['state'])
                for i, v in sorted(c.items())))

def cmd_wait(a):
    t = tel()
    b_s = b_c = None
    last = None
    for i in range(a.tries):
        try:
            s, c = snapshot(t)
        except (OSError, ValueError) as e:
            last = 'telemetry: %s' % e
            time.sleep(a.every)
            continue
        if b_s is None:
            b_s, b_c = s, c
        env = View(s, c, b_s, b_c).env()
        last = brief(s, c)
        for cond in a.always:
            if not eval(cond, env):
                print('    violated: %s\n    %s' % (cond, last), file=sys.stderr)
                return 1
        if eval(a.until, env):
            if a.show:
                print('    ' + last)
            return 0
        time.sleep(a.every)
    print('    gave up after %d polls waiting for: %s\n    %s' %
          (a.tries, a.until, last), file=sys.stderr)
    return 2

def cmd_sample(a):
    """Samples /turbolb/stats and /turbolb/cores until SIGTERM: one JSON
    line per answer."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    t = tel()
    fails = 0
    with open(a.out, 'w') as f:
        while not stop:
            t0 = time.monotonic()
            try:
                s = t.query('/turbolb/stats')
                c = t.query('/turbolb/cores')
                f.write(json.dumps({'t': t0, 'dt': time.monotonic() - t0,
                                    's': s, 'c': c}) + '\n')
                f.flush()
            except (OSError, ValueError):
                fails += 1
            time.sleep(a.every)
        f.write(json.dumps({'fails': fails}) + '\n')

def object_at(pid, pc):
    """The path of the file mapped at address pc in process pid, or ''."""
    with open('/proc/%d/maps' % pid) as f:
        for line in f:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split('-'))
            if lo <= pc < hi:
                return fields[5] if len(fields) > 5 else ''
    return ''

def cmd_stop_thread(a):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.restype = ctypes.c_long
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p,
                            ctypes.c_void_p]
    PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
    WALL = 0x40000000
    if libc.ptrace(PTRACE_SEIZE, a.tid, None, None) != 0:
        print('PTRACE_SEIZE %d: %s' % (a.tid, os.strerror(ctypes.get_errno())),
              file=sys.stderr)
        return 1
    if libc.ptrace(PTRACE_INTERRUPT, a.tid, None, None) != 0:
        print('PTRACE_INTERRUPT: %s' % os.strerror(ctypes.get_errno()),
              file=sys.stderr)
        return 1
    os.waitpid(a.tid, WALL)
    where = 'stopped'
    if a.in_object:
        # Stop and resume until the thread stops at one of the object's
        # instructions (a bounded number of tries). PTRACE_GETREGS fills
        # x86_64's struct user_regs_struct: 27 words, rip the 17th.
        PTRACE_GETREGS, PTRACE_CONT = 12, 7
        regs = (ctypes.c_ulong * 27)()
        where = 'not in %s after %d tries' % (a.in_object, a.tries)
        for _ in range(a.tries):
            if libc.ptrace(PTRACE_GETREGS, a.tid, None,
                           ctypes.byref(regs)) != 0:
                print('PTRACE_GETREGS: %s' %
                      os.strerror(ctypes.get_errno()), file=sys.stderr)
                return 1
            if a.in_object in object_at(a.tid, regs[16]):
                where = 'in %s' % a.in_object
                break
            libc.ptrace(PTRACE_CONT, a.tid, None, None)
            libc.ptrace(PTRACE_INTERRUPT, a.tid, None, None)
            os.waitpid(a.tid, WALL)
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    signal.signal(signal.SIGINT, lambda *_: done.append(1))
    with open(a.ready, 'w') as f:
        f.write(where + '\n')
    while not done:
        # A signal for the process may be reported while it is stopped;
        # keep it stopped and remember nothing (the tests send none).
        try:
            pid, st = os.waitpid(a.tid, WALL | os.WNOHANG)
        except ChildProcessError:
            return 0
        time.sleep(0.05)
    libc.ptrace(PTRACE_DETACH, a.tid, None, None)
    return 0

def load(p):
    with open(p) as f:
        return json.load(f)

def load_runs(paths):
    """The load generators' records: one JSON object per line, one per
    rate point."""
    runs = []
    for p in paths:
        with open(p) as f:
            runs += [json.loads(line) for line in f if line.strip()]
    return runs


def server_drops(total):
    """What a turbolb-server's stats total counts as never answered."""
    return total['tx_drops'] + total['nonlinear_drops'] + \
        total['response_errors'] + sum(total['parse_drops'].values()) + \
        total['not_request']


def account(s, cores, runs, servers):
    """Every request the load generators issued is accounted for:

      unanswered = issued - answered             (load generator side)
      answered   = received + errors + late      (both phases)
      accounted  = tx_dropped (never left the load generator)
                 + drops (the daemon, every reason)
                 + stranded (in flight at a host that restarted)
                 + outstanding at cores marked stale (in flight there)
                 + written off (lost at a core stale for write_off_us)
                   - late completions (written off or stranded, then
                     answered all the same: the old host's responses
                     already on their way)
                 + fifo_depth (still held by the daemon)
                 + tx_drops + parse/other drops of the server(s)
      unanswered == accounted, exactly.

    s and cores: the daemon's /turbolb/stats and /turbolb/cores; runs:
    the load generators' records; servers: the servers' stats totals.
    Returns (report lines, problems): it holds when problems is empty.
    """
    issued = answered = tx_dropped = unanswered = 0
    dups = unknown = 0
    for r in runs:
        if 'sent' not in r:
            continue
        for ph in (r, r['warmup']):
            issued += ph['sent']
            answered += ph['received'] + ph['errors'] + ph['late']
            unanswered += ph['lost'] - ph['late']
        tx_dropped += r['tx_dropped']
        dups += r['duplicates']
        unknown += r['unknown']
    stale_out = sum(v['outstanding'] for v in cores.values() if v['stale'])
    live_out = sum(v['outstanding'] for v in cores.values()
                   if not v['stale'])
    srv = sum(server_drops(t) for t in servers)
    drop_keys = {k: v for k, v in s.items()
                 if k.startswith('drop') and k != 'drops' and v}
    accounted = tx_dropped + s['drops'] + s['stranded'] + stale_out + \
        s['written_off'] - s['late_completions'] + s['fifo_depth'] + srv
    lines = [
        '    issued %d = answered %d + unanswered %d' %
        (issued, answered, unanswered),
        '    unanswered %d vs accounted %d = lg tx_dropped %d + daemon drops '
        '%d %s + stranded %d + outstanding at stale cores %d + written off '
        '%d - late %d + fifo %d + server drops %d' % (
            unanswered, accounted, tx_dropped, s['drops'], drop_keys,
            s['stranded'], stale_out, s['written_off'],
            s['late_completions'], s['fifo_depth'], srv)]
    problems = []
    if issued != answered + unanswered:
        problems.append('    load generator inconsistent')
    if unanswered != accounted:
        problems.append('    MISMATCH: %+d requests unaccounted' %
                        (unanswered - accounted))
    if live_out != 0:
        problems.append('    %d outstanding at cores not marked stale' %
                        live_out)
    if dups or unknown:
        problems.append('    duplicates %d unknown %d' % (dups, unknown))
    return lines, problems


def cmd_account(a):
    """The accounting invariant (account) over the files given."""
    servers = [load(p)['total'] for p in a.server or []]
    lines, problems = account(load(a.stats), load(a.cores), load_runs(a.lg),
                              servers)
    print('\n'.join(lines))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


# ---- test_overload.sh

def overload_summary(records):
    """The samples of /turbolb/stats and /turbolb/cores taken during
    test_overload.sh (fault.py sample), summed up: the overload window
    runs from the sample before the first drop_fifo_full to the one where
    drops last grew. Returns a dict of: samples, in_overload (samples in
    the window), loops_grow (1: the dispatcher's loops grew over the
    window and never went back), flat_intervals (window intervals where
    loops did not move), max_fifo, max_out (the most outstanding at one
    core, any sample), max_answer_ms (the slowest telemetry answer in the
    window), failed_queries (-1: the sampler left no count)."""
    fails = [r['fails'] for r in records if 'fails' in r]
    rows = [r for r in records if 's' in r]
    drop = [r['s']['drop_fifo_full'] for r in rows]
    grow = [i for i in range(1, len(rows)) if drop[i] > drop[i - 1]]
    lo, hi = (grow[0] - 1, grow[-1]) if grow else (0, -1)
    win = rows[lo:hi + 1]
    loops = [r['s']['loops'] for r in win]
    loops_ok = len(loops) > 1 and loops[-1] > loops[0] and \
        all(b >= a for a, b in zip(loops, loops[1:]))
    flat = sum(1 for a, b in zip(loops, loops[1:]) if b == a)
    max_out = max((v['outstanding'] for r in rows
                   for v in r.get('c', {}).values()), default=-1)
    return {'samples': len(rows), 'in_overload': len(win),
            'loops_grow': int(loops_ok), 'flat_intervals': flat,
            'max_fifo': max(r['s']['fifo_depth'] for r in rows)
            if rows else -1,
            'max_out': max_out,
            'max_answer_ms': int(1000 * max((r['dt'] for r in win),
                                            default=0)),
            'failed_queries': fails[0] if fails else -1}


OVERLOAD_KEYS = ('samples', 'in_overload', 'loops_grow', 'flat_intervals',
                 'max_fifo', 'max_out', 'max_answer_ms', 'failed_queries')


def cmd_overload_samples(a):
    """One line: each key of overload_summary, then its value."""
    v = overload_summary(load_runs([a.samples]))
    print(' '.join('%s %s' % (k, v[k]) for k in OVERLOAD_KEYS))


# ---- test_daemon_restart.sh

def link_loss_record(a):
    """Phase A after its link loss, as a load generator record of its own
    for fault_account: what it issued since, and what of that it lost.
    Its responses after the loss that answered requests written off at
    the loss (late) are left out: those requests belong to the old
    daemon's side."""
    fd = a['first_link_down'] or {}
    sent = a['sent'] + a['warmup']['sent'] - fd.get('sent', 0)
    lost = a['lost'] + a['warmup']['lost'] - fd.get('lost', 0)
    ph = {'sent': sent, 'received': sent - lost, 'errors': 0, 'lost': lost,
          'late': 0}
    return dict(ph, warmup=dict(ph, sent=0, received=0, lost=0),
                tx_dropped=a['tx_dropped'] - fd.get('tx_dropped', 0),
                duplicates=a['duplicates'], unknown=a['unknown'])


def cmd_link_loss_record(a):
    print(json.dumps(link_loss_record(load_runs([a.lg])[0])))


def final_counters(lines):
    """The counters turbolbd logs at exit: ({name: value}, {core: (sent,
    completed)}), from the lines after "final counters"."""
    old, cores, on = {}, {}, False
    for line in lines:
        if 'final counters' in line:
            on = True
            continue
        if not on:
            continue
        m = re.search(r'core (\d+): sent (\d+) completed (\d+)', line)
        if m:
            cores[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
            continue
        m = re.match(r'turbolb\.main:\s+(\w+)\s+(\d+)\s*$', line.strip())
        if m:
            old[m.group(1)] = int(m.group(2))
    return old, cores


def before_restart(a, old, cores, ring):
    """Phase A as it stood when its link went down (a: its record, with
    first_link_down), against the old daemon's final counters (old, cores:
    final_counters) and ring, the memif ring size. Every request issued by
    then got a response, or never left the load generator, or was in the
    ring to the old daemon when it stopped reading, or was counted by it,
    or was in flight at the host at its exit, or was forwarded back and
    not read. Returns (report lines, failures)."""
    fd = a['first_link_down']
    if fd is None:
        return [], ['phase A never saw its link go down']

    def g(k):
        return old.get(k, 0)
    issued = fd['sent']
    answered = fd['answered']
    lg_tx_pkts, lg_tx_dropped = fd['tx_pkts'], fd['tx_dropped']
    drops = {k: v for k, v in old.items() if k.startswith('drop')}
    req_drops = sum(v for k, v in drops.items()
                    if k not in ('drop_tx_full', 'drop_uplink_tx_full'))
    up_residue = lg_tx_pkts - g('rx_uplink')
    host_inflight = g('messages') - g('drop_tx_full') - g('responses')
    down_residue = g('responses') - g('drop_uplink_tx_full') - answered
    view_out = sum(s - c for s, c in cores.values())
    lines = [
        '    issued %d = answered %d + lg tx_dropped %d + in the ring to the '
        'old daemon %d + old daemon drops %d %s + in flight at the host at '
        'its exit %d + forwarded, not read by the load generator %d' %
        (issued, answered, lg_tx_dropped, up_residue, sum(drops.values()),
         drops, host_inflight, down_residue),
        '    old daemon: rx_uplink %d messages %d responses %d; its view at '
        'exit: %d outstanding' % (g('rx_uplink'), g('messages'),
                                  g('responses'), view_out)]
    failed = []

    def need(cond, what):
        if not cond:
            failed.append(what)
    need(issued == lg_tx_pkts + lg_tx_dropped,
         'issued == tx_pkts + tx_dropped')
    need(g('rx_uplink') == g('messages') + req_drops,
         'every frame the old daemon read was steered or counted')
    need(0 <= up_residue <= ring, 'ring residue within one memif ring')
    need(host_inflight >= 0, 'in flight at the host >= 0')
    need(0 <= down_residue <= ring, 'unread responses within one memif ring')
    need(issued == answered + lg_tx_dropped + up_residue + req_drops +
         g('drop_tx_full') + host_inflight + g('drop_uplink_tx_full') +
         down_residue, 'the sum')
    need(a['duplicates'] == 0 and a['unknown'] == 0, 'no duplicate/unknown')
    for p in (a, a['warmup']):
        need(p['sent'] == p['received'] + p['errors'] + p['lost'],
             'sent == received + errors + lost')
        need(p['written_off'] <= p['lost'], 'written_off within lost')
    need(fd['written_off'] == sum(p['written_off'] for p in (a, a['warmup'])),
         'everything written off was written off at the link loss')
    return lines, failed


def cmd_before_restart(a):
    with open(a.log) as f:
        old, cores = final_counters(f)
    lines, failed = before_restart(load_runs([a.lg])[0], old, cores, a.ring)
    print('\n'.join(lines))
    for w in failed:
        print('    FAILED: ' + w, file=sys.stderr)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd_name', required=True)
    q = sub.add_parser('query')
    q.add_argument('cmd')
    q.add_argument('--key')
    q.set_defaults(fn=cmd_query)
    w = sub.add_parser('wait', help='poll until --until holds; --always must '
                       'hold at every poll (1: violated, 2: gave up)')
    w.add_argument('--until', required=True)
    w.add_argument('--always', action='append', default=[])
    w.add_argument('--tries', type=int, default=600)
    w.add_argument('--every', type=float, default=0.1)
    w.add_argument('--show', action='store_true')
    w.set_defaults(fn=cmd_wait)
    sm = sub.add_parser('sample')
    sm.add_argument('out')
    sm.add_argument('--every', type=float, default=0.05)
    sm.set_defaults(fn=cmd_sample)
    st = sub.add_parser('stop-thread')
    st.add_argument('tid', type=int)
    st.add_argument('ready')
    st.add_argument('--in-object', default='')
    st.add_argument('--tries', type=int, default=5000)
    st.set_defaults(fn=cmd_stop_thread)
    ac = sub.add_parser('account')
    ac.add_argument('--stats', required=True)
    ac.add_argument('--cores', required=True)
    ac.add_argument('--server', action='append')
    ac.add_argument('lg', nargs='+')
    ac.set_defaults(fn=cmd_account)
    ov = sub.add_parser('overload-samples')
    ov.add_argument('samples')
    ov.set_defaults(fn=cmd_overload_samples)
    ll = sub.add_parser('link-loss-record')
    ll.add_argument('lg')
    ll.set_defaults(fn=cmd_link_loss_record)
    br = sub.add_parser('before-restart')
    br.add_argument('lg')
    br.add_argument('log')
    br.add_argument('ring', type=int)
    br.set_defaults(fn=cmd_before_restart)
    a = ap.parse_args()
    sys.exit(a.fn(a) or 0)


if __name__ == '__main__':
    main()
