#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The real sd_notify protocol: turbolbd runs with NOTIFY_SOCKET pointing at
# a datagram socket this test owns (as systemd would give it, with a
# watchdog of WATCHDOG_USEC). Checks READY=1 with a STATUS line, several
# WATCHDOG=1 pings, RELOADING=1 on SIGHUP, then STOPPING=1 on SIGTERM and
# exit 0. Waits are bounded; nothing asserts a time.
#
#   test_notify.sh TURBOLBD SRCDIR
set -u
turbolbd=$1
src=$2
tmp=$(mktemp -d /tmp/tlb-notify-XXXXXX)
prefix=tlbnotify-$$
ring=/tlbnotify-$$
pass=0
fail=0
daemon=
listener=

ok() { pass=$((pass + 1)); echo "ok - $*"; }
bad() { fail=$((fail + 1)); echo "not ok - $*"; }
cleanup() {
	[ -n "$daemon" ] && kill -KILL "$daemon" 2>/dev/null
	[ -n "$listener" ] && kill "$listener" 2>/dev/null
	rm -f "/dev/shm$ring"
	rm -rf "$tmp"
}
trap cleanup EXIT

sed -e "s|^\([[:space:]]*file_prefix:[[:space:]]*\)[^[:space:]#]*|\1$prefix|" \
    -e "s|^\([[:space:]]*credit_ring:[[:space:]]*\)[^[:space:]#]*|\1$ring|" \
    -e "s|^\([[:space:]]*idle_sleep_us:[[:space:]]*\)[0-9]*|\1100|" \
    -e "s|/run/turbolb/|$tmp/|g" \
    "$src/configs/turbolbd.yaml" > "$tmp/turbolbd.yaml"

# The listener writes each datagram it gets as one line.
python3 - "$tmp/notify.sock" "$tmp/messages" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "w", buffering=1) as out:
    while True:
        msg = s.recv(4096).decode()
        out.write(msg.replace("\n", "|") + "\n")
PY
listener=$!
for _ in $(seq 100); do [ -S "$tmp/notify.sock" ] && break; sleep 0.1; done

NOTIFY_SOCKET=$tmp/notify.sock WATCHDOG_USEC=400000 RUNTIME_DIRECTORY=$tmp \
	${MESON_EXE_WRAPPER:-} "$turbolbd" -c "$tmp/turbolbd.yaml" > "$tmp/turbolbd.log" 2>&1 &
daemon=$!

wait_for() { # wait_for PATTERN [COUNT]: up to 30 s for COUNT matching lines
	local n=${2:-1}
	for _ in $(seq 300); do
		[ "$(grep -c -- "$1" "$tmp/messages" 2>/dev/null)" -ge "$n" ] && return 0
		kill -0 "$daemon" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

if wait_for '^READY=1|STATUS=policy '; then ok "READY=1 with a status line"; else bad "READY=1"; fi
if wait_for '^WATCHDOG=1' 3; then ok "watchdog pings while the loops run"; else bad "watchdog pings"; fi
kill -HUP "$daemon"
if wait_for '^RELOADING=1'; then ok "RELOADING=1 on SIGHUP"; else bad "RELOADING=1"; fi
if wait_for '^READY=1|STATUS=.*unchanged'; then ok "READY=1 after the reload"; else bad "READY=1 after reload"; fi
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
daemon=
if wait_for '^STOPPING=1'; then ok "STOPPING=1 on SIGTERM"; else bad "STOPPING=1"; fi
if [ "$rc" -eq 0 ]; then ok "exit 0"; else bad "exit $rc"; fi
if [ "$fail" -ne 0 ]; then
	echo "--- messages"; cat "$tmp/messages"
	echo "--- turbolbd log"; cat "$tmp/turbolbd.log"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
