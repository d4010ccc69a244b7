# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Shared part of the fault tests (tests/fault/test_*.sh), on the memif
# topology of scripts/lib/topology.sh. Source it with BUILD set (a build dir,
# absolute or relative to the source tree).
#
#   fault_retry_on_memif_race ARGS  run the test in a child, and once more
#                              if it failed on DPDK's memif disconnect race
#   fault_init NAME            topo_init + a run folder per process (so a
#                              core dump of each lands in its own folder),
#                              core dumps on, the helper fault.py, a trap
#                              that resumes anything stopped, stops all and
#                              reports crashes with a gdb backtrace
#   fault_start_daemon         topo_start_daemon from run/daemon
#   fault_start_server [ARGS]  topo_start_server from run/server.N
#   fault_lg_start NAME ARGS   turbolb-loadgen in the background (its pid in
#                              FAULT_LG_PID), JSON into run/NAME.json
#   fault_lg_wait NAME [TRIES] wait for it to exit (SIGINT it first to end
#                              an open-ended run: it then stops sending and
#                              waits for stragglers up to its --timeout-ms)
#   ftel CMD                   one telemetry answer, the value only (JSON)
#   fwait [opts]               bounded poll on /turbolb/stats + /turbolb/cores
#                              (see fault.py wait --help)
#   fault_thread_stop PID N    stops the thread of server core N only
#   fault_thread_cont          resumes it
#   fault_account ...          the accounting invariant (see fault.py)
#   check WHAT CMD..., eq A B, finish
#
# Every wait is a bounded poll on a condition; nothing asserts on time.

set -u
FAULT_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${BUILD:=build}"
# shellcheck source=scripts/lib/topology.sh
. "$FAULT_TOP/scripts/lib/topology.sh"

# shellcheck source=tests/lib/check.sh
. "$FAULT_TOP/tests/lib/check.sh"
FAULT_CRASHES=0
FAULT_STOPPER_PID=
FAULT_SIGSTOPPED=()
FAULT_LG_PID=
FAULT_SRV_N=0

ge() { [ "$1" -ge "$2" ] || { echo "    $1 < $2" >&2; return 1; }; }
alive() { kill -0 "$1" 2>/dev/null; }
note() { echo "    $*"; }

finish() {
	fault_cleanup
	trap - EXIT
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

fault_init() {
	topo_init "$1"
	mkdir -p "$TOPO_RUN/daemon"
	ulimit -c unlimited 2>/dev/null || true
	FAULT_PY=$TOPO_RUN/fault.py
	fault_write_py > "$FAULT_PY"
	export FAULT_PREFIX=$TOPO_DPREFIX
	trap 'fault_cleanup; echo "$pass passed, $fail failed (interrupted)"' EXIT
	echo "# run folder $TOPO_RUN"
}

fault_start_daemon() {
	local rc
	cd "$TOPO_RUN/daemon" || return 1
	topo_start_daemon "$@"
	rc=$?
	cd - > /dev/null || true
	return $rc
}

fault_start_server() {
	local rc
	FAULT_SRV_N=$((FAULT_SRV_N + 1))
	mkdir -p "$TOPO_RUN/server.$FAULT_SRV_N"
	cd "$TOPO_RUN/server.$FAULT_SRV_N" || return 1
	# Each server's stats apart (a later --stats wins).
	FAULT_SRV_JSON=$TOPO_RUN/server.$FAULT_SRV_N.json
	topo_start_server "$@" --stats "$FAULT_SRV_JSON"
	rc=$?
	cd - > /dev/null || true
	cp "$TOPO_RUN/server.log" "$TOPO_RUN/server.$FAULT_SRV_N.log" 2>/dev/null
	return $rc
}

# fault_lg_start NAME [loadgen options]: in the background, as topo_loadgen
# runs it; exec so that FAULT_LG_PID is the load generator itself.
fault_lg_start() {
	local name=$1
	shift
	mkdir -p "$TOPO_RUN/lg.$name"
	(
		cd "$TOPO_RUN/lg.$name" || exit 1
		exec "$TLBLG" --no-huge -m 128 --file-prefix "lg-$TOPO_NAME-$name" -l 0 \
			--vdev="net_memif0,role=client,socket=$TOPO_RUN/uplink.sock,socket-abstract=no,id=0" \
			--log-level=lib.*:warning \
			-- --json "$@" > "$TOPO_RUN/$name.json" 2> "$TOPO_RUN/$name.log"
	) &
	FAULT_LG_PID=$!
	TOPO_PIDS+=("$FAULT_LG_PID")
}

# fault_lg_wait NAME [TRIES]: 0.1 s polls; returns the loadgen's status.
fault_lg_wait() {
	local name=$1 tries=${2:-1200} i rc
	for ((i = 0; i < tries; i++)); do
		alive "$FAULT_LG_PID" || break
		sleep 0.1
	done
	if alive "$FAULT_LG_PID"; then
		echo "    loadgen $name still running after $tries polls" >&2
		return 124
	fi
	wait "$FAULT_LG_PID"
	rc=$?
	if [ "$rc" -ge 128 ]; then
		echo "    loadgen $name died of signal $((rc - 128))" >&2
		cat "$TOPO_RUN/$name.log" >&2
	fi
	return $rc
}

# The value of one telemetry command, as JSON, through one socket (faster
# than dpdk-telemetry.py, and it works while the machine is loaded).
ftel() { python3 "$FAULT_PY" query "$@"; }
fwait() { python3 "$FAULT_PY" wait "$@"; }
fstat() { python3 "$FAULT_PY" query /turbolb/stats --key "$1"; }

# Stops one thread of a running process without stopping the others.
# SIGSTOP cannot do that (a stop signal stops the whole thread group, even
# when sent with tgkill), so this uses ptrace: PTRACE_SEIZE +
# PTRACE_INTERRUPT stop only the tracee thread. The tracer stays in the
# background; fault_thread_cont (or its death) resumes the thread.
# Server core N runs on the N-th worker lcore, lcore N + 1 with the
# topology's --lcores map, a thread DPDK 22.11 names lcore-worker-<lcore>
# (rte-worker-<lcore> in the later 22.11 LTS releases Debian ships).
fault_thread_tid() {
	local pid=$1 lcore=$2 t comm
	for t in /proc/"$pid"/task/*; do
		comm=$(cat "$t/comm" 2>/dev/null)
		if [ "$comm" = "lcore-worker-$lcore" ] ||
		   [ "$comm" = "rte-worker-$lcore" ]; then
			basename "$t"
			return 0
		fi
	done
	return 1
}

fault_thread_stop() {
	local pid=$1 core=$2 tid
	tid=$(fault_thread_tid "$pid" "$((core + 1))") || {
		echo "    no thread for lcore $((core + 1)) in $pid:" >&2
		cat /proc/"$pid"/task/*/comm >&2
		return 1
	}
	rm -f "$TOPO_RUN/stopper.ready"
	python3 "$FAULT_PY" stop-thread "$tid" "$TOPO_RUN/stopper.ready" \
		2> "$TOPO_RUN/stopper.log" &
	FAULT_STOPPER_PID=$!
	topo_wait "[ -e '$TOPO_RUN/stopper.ready' ] || ! kill -0 $FAULT_STOPPER_PID 2>/dev/null" 300
	if [ ! -e "$TOPO_RUN/stopper.ready" ]; then
		cat "$TOPO_RUN/stopper.log" >&2
		return 1
	fi
	note "stopped thread $tid ($(cat /proc/"$pid"/task/"$tid"/comm), state $(awk '{print $3}' /proc/"$pid"/task/"$tid"/stat))"
}

fault_thread_cont() {
	[ -n "$FAULT_STOPPER_PID" ] || return 0
	kill -TERM "$FAULT_STOPPER_PID" 2>/dev/null
	wait "$FAULT_STOPPER_PID" 2>/dev/null
	FAULT_STOPPER_PID=
}

fault_sigstop() { kill -STOP "$1" && FAULT_SIGSTOPPED+=("$1"); }
fault_sigcont() {
	local p keep=()
	kill -CONT "$1"
	for p in "${FAULT_SIGSTOPPED[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	FAULT_SIGSTOPPED=("${keep[@]}")
}

# fault_snapshot LABEL: the daemon's /turbolb/stats and /turbolb/cores now,
# kept for fault_account (take it before stopping the daemon).
fault_snapshot() {
	ftel /turbolb/stats > "$TOPO_RUN/acct-$1.stats.json" &&
		ftel /turbolb/cores > "$TOPO_RUN/acct-$1.cores.json"
}

# fault_account LABEL LG_JSON...: the accounting invariant over the snapshot
# LABEL (taken now if there is none) and the server stats files in
# FAULT_SRV_STATS (space separated; the servers must have exited). See
# cmd_account in fault.py.
fault_account() {
	local label=$1 f args=()
	shift
	[ -s "$TOPO_RUN/acct-$label.cores.json" ] || fault_snapshot "$label" ||
		return 1
	for f in ${FAULT_SRV_STATS:-}; do args+=(--server "$f"); done
	python3 "$FAULT_PY" account --stats "$TOPO_RUN/acct-$label.stats.json" \
		--cores "$TOPO_RUN/acct-$label.cores.json" "${args[@]}" "$@"
}

# Backtraces of any process that dumped core, then a note on whether this
# is the known memif disconnect race of DPDK 22.11.
fault_crash_report() {
	local core dir bin name
	for core in "$TOPO_RUN"/*/core; do
		[ -e "$core" ] || continue
		dir=$(basename "$(dirname "$core")")
		case $dir in
		daemon) bin=$TLBD ;;
		server.*) bin=$TLBSRV ;;
		lg.*) bin=$TLBLG ;;
		*) continue ;;
		esac
		FAULT_CRASHES=$((FAULT_CRASHES + 1))
		name=$TOPO_RUN/$dir.backtrace
		gdb -batch -ex 'echo ==crash==\n' -ex 'bt 30' \
			-ex 'echo ==threads==\n' -ex 'info threads' \
			-ex 'thread apply all bt 12' "$bin" "$core" > "$name" 2>&1
		# The thread that got the signal is gdb's current one.
		sed -n '/^==crash==/,/^==threads==/p' "$name" | grep '^#' > "$name.crash"
		echo "# CRASH: $dir ($bin) dumped core: $(grep -m1 'Program terminated' "$name")"
		echo "#        the crashing thread (all threads in $name):"
		head -20 "$name.crash" | sed 's/^/#   /'
		if grep -q -E 'memif' "$name.crash"; then
			echo "# CRASH: $dir: it crashed inside the memif PMD: the known DPDK 22.11"
			echo "#        race (rings unmapped on a peer disconnect while an lcore is"
			echo "#        inside rx/tx_burst), not a turbolb bug"
		fi
		# Keep the backtrace, drop the (large) core.
		rm -f "$core"
	done
}

# DPDK 22.11's memif PMD can crash the process that stays when its peer
# leaves: memif_disconnect() (drivers/net/memif/memif_socket.c, on the
# interrupt thread) unmaps the rings right after clearing the connected
# flag, with no hook for the application to wait until its lcore is out of
# rx/tx_burst. A test whose scenario makes a peer leave on purpose calls
# this before fault_init, with its own arguments: the scenario runs in a
# child; if that run failed and one of its crashes was inside the memif
# PMD, the scenario runs once more from scratch and the second run
# decides (a second failure of any kind fails the test). Both outputs are
# shown; the retry is announced.
fault_retry_on_memif_race() {
	local out rc
	[ -z "${FAULT_ATTEMPT:-}" ] || return 0
	out=$(mktemp)
	FAULT_ATTEMPT=1 bash "$0" "$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && grep -q "crashed inside the memif PMD" "$out"; then
		echo "# RETRY: the run above hit the known DPDK 22.11 memif disconnect"
		echo "#        race; the scenario runs once more and that run decides"
		FAULT_ATTEMPT=2 bash "$0" "$@"
		rc=$?
	fi
	rm -f "$out"
	exit "$rc"
}

# Stops everything (daemon first), reports crashes; finish does it too.
fault_stop_all() { fault_cleanup; }

fault_cleanup() {
	local p
	fault_thread_cont
	for p in "${FAULT_SIGSTOPPED[@]}"; do kill -CONT "$p" 2>/dev/null; done
	FAULT_SIGSTOPPED=()
	topo_stop
	fault_crash_report
	if [ "$FAULT_CRASHES" -ne 0 ]; then
		fail=$((fail + FAULT_CRASHES))
		echo "not ok - $FAULT_CRASHES process(es) crashed (see above)"
		FAULT_CRASHES=0
	fi
}

fault_write_py() {
	cat <<'PY'
# SPDX-License-Identifier: BSD-3-Clause
# Helper of tests/fault: telemetry client, bounded polls, thread stopper,
# the accounting invariant. Written out by tests/fault/lib.sh.
import argparse, ctypes, json, os, signal, socket, sys, time

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
    done = []
    signal.signal(signal.SIGTERM, lambda *_: done.append(1))
    signal.signal(signal.SIGINT, lambda *_: done.append(1))
    open(a.ready, 'w').close()
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

def cmd_account(a):
    """Every request the load generators issued is accounted for:

      unanswered = issued - answered             (load generator side)
      answered   = received + errors + late      (both phases)
      accounted  = tx_dropped (never left the load generator)
                 + drops (the daemon, every reason)
                 + stranded (in flight at a host that restarted)
                 + outstanding at cores marked stale (in flight there)
                 + written off (lost at a core stale for write_off_us)
                   - late completions (written off, then answered)
                 + fifo_depth (still held by the daemon)
                 + tx_drops + parse/other drops of the server(s)
      unanswered == accounted, exactly.
    """
    s, cores = load(a.stats), load(a.cores)
    issued = answered = tx_dropped = unanswered = 0
    dups = unknown = 0
    runs = []
    for p in a.lg:
        with open(p) as f:
            # One JSON object per line: one per rate point.
            runs += [json.loads(l) for l in f if l.strip()]
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
    live_out = sum(v['outstanding'] for v in cores.values() if not v['stale'])
    srv = 0
    for p in a.server or []:
        t = load(p)['total']
        srv += t['tx_drops'] + t['nonlinear_drops'] + t['response_errors'] + \
            sum(t['parse_drops'].values()) + t['not_request']
    drop_keys = {k: v for k, v in s.items()
                 if k.startswith('drop') and k != 'drops' and v}
    written_off = s['written_off'] - s['late_completions']
    accounted = tx_dropped + s['drops'] + s['stranded'] + stale_out + \
        written_off + s['fifo_depth'] + srv
    print('    issued %d = answered %d + unanswered %d' %
          (issued, answered, unanswered))
    print('    unanswered %d vs accounted %d = lg tx_dropped %d + daemon drops '
          '%d %s + stranded %d + outstanding at stale cores %d + written off '
          '(less late) %d + fifo %d + server drops %d' % (
              unanswered, accounted, tx_dropped, s['drops'], drop_keys,
              s['stranded'], stale_out, written_off, s['fifo_depth'], srv))
    ok = True
    if issued != answered + unanswered:
        print('    load generator inconsistent', file=sys.stderr)
        ok = False
    if unanswered != accounted:
        print('    MISMATCH: %+d requests unaccounted' %
              (unanswered - accounted), file=sys.stderr)
        ok = False
    if live_out != 0:
        print('    %d outstanding at cores not marked stale' % live_out,
              file=sys.stderr)
        ok = False
    if dups or unknown:
        print('    duplicates %d unknown %d' % (dups, unknown), file=sys.stderr)
        ok = False
    return 0 if ok else 1

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
    st.set_defaults(fn=cmd_stop_thread)
    ac = sub.add_parser('account')
    ac.add_argument('--stats', required=True)
    ac.add_argument('--cores', required=True)
    ac.add_argument('--server', action='append')
    ac.add_argument('lg', nargs='+')
    ac.set_defaults(fn=cmd_account)
    a = ap.parse_args()
    sys.exit(a.fn(a) or 0)

main()
PY
}
