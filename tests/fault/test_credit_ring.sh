#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fault: a host process breaks the credit ring under load (credits: ring).
# Anyone who can write the ring can do each of these; none may crash the
# daemon (credit_ring.h, docs/security.md):
#
#   1. truncate: the ring file cut to 0 bytes. The daemon's next access
#      is caught by its SIGBUS guard; the control thread repairs the
#      region (size and header) and every core falls back to in-band
#      credits (credit_fallback in /turbolb/cores): it stays in rotation
#      and its responses count its completions until a host attaches
#      again.
#   2. restore: the server restarted (SIGINT, a new one attaches): ring
#      credits again, every core serves.
#   3. impossible positions: core 1's prod_head put far ahead of the
#      consumer. Counted, set back, core 1 falls back to in-band credits
#      and keeps serving, the others stay on ring credits.
#   4. bad magic: the header rewritten. Counted, repaired, every core
#      falls back; 5. the server restarted again restores them.
#
# After each: the daemon is the same process (no signal), the fault is in
# its log with its count, and at the end the accounting invariant holds
# exactly. The server is stopped (SIGSTOP) around 1 and 3: a live server
# would take the truncation's SIGBUS itself (it is the culprit's own
# mapping), and could overwrite the bad position before the daemon reads
# it; stopped, it also holds no credit the daemon has not drained, so
# nothing the truncation destroys was owed. Every wait is a bounded poll
# on a condition. Each restart makes one memif peer leave, so the run is
# retried once on DPDK 22.11's disconnect race (lib.sh).
# shellcheck source=tests/fault/lib.sh
. "$(dirname "$0")/lib.sh"
fault_retry_on_memif_race "$@"

fault_init credit-ring
# Stale while the server is stopped, never written off: the ring's faults
# are the point here (tests/fault/test_write_off.sh writes off), and a
# core written off while its ring is being broken and repaired would
# count its late answers through whichever source it is on then.
topo_config cores=4 policy=jsq credits=ring stale_us=50000 \
	write_off_us=600000000
fault_up --batch 1
DPID=$TOPO_DPID
SRV_STATS=$FAULT_SRV_JSON
RING=/dev/shm$TOPO_RING
LOG=$TOPO_RUN/turbolbd.log
RING_BYTES=$(stat -c %s "$RING")

# log_has PATTERN: bounded poll on the daemon's log (the control thread
# checks the ring every 100 ms).
log_has() {
	local i
	for ((i = 0; i < 300; i++)); do
		grep -q -E "$1" "$LOG" && return 0
		sleep 0.1
	done
	echo "    not in $LOG: $1" >&2
	return 1
}

# ring_py CODE: python with the ring file open (f), its header's n_cores
# and ring_size, and the offset of a core's slot (slot(k)).
ring_py() {
	python3 - "$RING" "$1" <<'PY'
import struct, sys
path, code = sys.argv[1], sys.argv[2]
with open(path, 'r+b') as f:
    hdr = f.read(64)
    magic, = struct.unpack_from('<I', hdr, 0)
    n_cores, ring_size = struct.unpack_from('<II', hdr, 16)
    slot = lambda k: 64 + k * (192 + ring_size * 32)
    def u32(off, v=None):
        f.seek(off)
        if v is None:
            return struct.unpack('<I', f.read(4))[0]
        f.write(struct.pack('<I', v & 0xffffffff))
        f.flush()
    exec(code)
PY
}

# restart_server: SIGINT (it detaches), then a new one attaches.
restart_server() {
	topo_kill "$SPID"
	fault_start_server --batch 1 || return 1
	SPID=$TOPO_SPID
	SRV_STATS="$SRV_STATS $FAULT_SRV_JSON"
}

fault_lg_start load --rate 1000 --duration 3600 --dist fixed:20us --flows 32 \
	--timeout-ms 15000
check "load reaches every core" \
	fwait --until 'all(sent(k) >= 100 for k in cores)' --tries 900 --show

# --- 1. truncated ---
check "server stopped" fault_sigstop "$SPID"
check "ring truncated to 0 bytes" truncate -s 0 "$RING"
check "daemon logs the size change" log_has "credit ring .*size changes"
check "daemon logs the repair" log_has "credit ring .*repairs"
check "ring repaired to its size" eq "$(stat -c %s "$RING")" "$RING_BYTES"
check "magic repaired" eq "$(ring_py 'print(hex(magic))')" 0x544c4352
check "every core falls back to in-band credits" \
	fwait --until "all(c[k]['credit_fallback'] == 1 for k in cores)" \
	--tries 900 --show
check "daemon alive, same process" alive "$DPID"
fault_sigcont "$SPID"
check "server alive (its mapping is good again)" alive "$SPID"
check "requests meanwhile steered and completed by their responses" \
	fwait --until "grown('completions_inband') >= 200" --tries 1800 --show

# --- 2. a good ring again ---
check "server restarted" restart_server
check "daemon logs the restore" log_has "credit ring .*cores back on ring credits"
check "ring credits again: every core serves" \
	fwait --until 'all(sent(k) - b_sent(k) >= 50 for k in cores) and n_stale == 0' \
	--tries 1800 --show

# --- 3. impossible positions on core 1 ---
check "server stopped" fault_sigstop "$SPID"
check "core 1's prod_head a million records ahead" \
	ring_py 'u32(slot(1), u32(slot(1) + 64) + 1000000)'
check "daemon logs the bad position" log_has "credit ring .*impossible producer positions"
check "core 1 falls back to in-band credits, not the others" \
	fwait --until "c[1]['credit_fallback'] == 1 and all(c[k]['credit_fallback'] == 0 for k in cores if k != 1)" \
	--tries 900 --show
check "position set back to the consumer's" \
	eq "$(ring_py 'print(u32(slot(1)) == u32(slot(1) + 64))')" True
fault_sigcont "$SPID"
check "every core serves, core 1 on in-band credits" \
	fwait --until "all(sent(k) - b_sent(k) >= 50 for k in cores) and grown('completions_inband') >= 50" \
	--always "c[1]['credit_fallback'] == 1" --tries 1800 --show
check "daemon alive, same process" alive "$DPID"

# --- 4. bad magic ---
check "magic rewritten" ring_py 'u32(0, 0xdeadbeef)'
check "daemon logs the header rewrite" log_has "credit ring .*header rewrites"
check "magic repaired" eq "$(ring_py 'print(hex(magic))')" 0x544c4352
check "every core falls back to in-band credits" \
	fwait --until "all(c[k]['credit_fallback'] == 1 for k in cores)" \
	--tries 900 --show
check "daemon alive, same process" alive "$DPID"

# --- 5. restored again ---
n_restored=$(grep -c "cores back on ring credits" "$LOG")
check "server restarted" restart_server
check "daemon logs a second restore" bash -c "
	for i in \$(seq 300); do
		[ \$(grep -c 'cores back on ring credits' '$LOG') -gt $n_restored ] && exit 0
		sleep 0.1
	done; exit 1"
check "ring credits again: every core serves" \
	fwait --until 'all(sent(k) - b_sent(k) >= 50 for k in cores) and n_stale == 0' \
	--tries 1800 --show

# --- the end: every request accounted for ---
kill -INT "$FAULT_LG_PID"
check "loadgen finished" fault_lg_wait load 1800
check "drained: nothing outstanding at live cores, FIFO empty" \
	fwait --until 'live_out == 0 and s["fifo_depth"] == 0' --tries 600 --show
fault_snapshot end
check "daemon alive, same process, to the end" alive "$DPID"
fault_stop_all
FAULT_SRV_STATS=$SRV_STATS
check "every request accounted for" fault_account end "$TOPO_RUN/load.json"
check "daemon exited cleanly" grep -q "final counters" "$LOG"
faults=$(grep -o "host transport faults: .*" "$LOG")
note "$faults"
check "the faults counted" python3 - "$faults" <<'PY'
import sys
kv = dict(zip(*[iter(sys.argv[1].split(':', 1)[1].split())] * 2))
kv = {k: int(v) for k, v in kv.items()}
ok = (kv['size_changes'] >= 1 and kv['bad_header'] >= 1 and
      kv['bad_index'] >= 1 and kv['repairs'] >= 2 and
      kv['restores'] >= 4 and kv['fallback_cores'] == 0)
sys.exit(0 if ok else 1)
PY
check "no signal in the daemon's log" bash -c "! grep -q -i -E 'bus error|signal [0-9]' '$LOG'"
finish
