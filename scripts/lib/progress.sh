# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The progress line of the long scripts (scripts/progress.py): which step
# of how many is running, the time elapsed and an estimate of what is
# left, on one updating line.
#
#   progress_start TOTAL QUIET  when QUIET is not 1 and both stdout and
#                               stderr are a terminal: the script's output
#                               (both streams) from here on goes through
#                               progress.py relay, which keeps the line
#                               under it; otherwise nothing changes
#   progress_step LABEL         the next step begins (nothing when off)
#   progress_end                output back to the terminal, the line
#                               cleared; call it from the EXIT trap too
#
# Off the terminal (a log, a pipe, CI) and with --quiet the script's
# output is exactly what it is without this file.

PROGRESS_PID=

progress_start() {
	local total=$1 quiet=${2:-0}
	[ "$quiet" != 1 ] && [ -t 1 ] && [ -t 2 ] || return 0
	exec {PROGRESS_OUT}>&1 {PROGRESS_ERR}>&2
	exec > >(exec python3 "$(dirname "${BASH_SOURCE[0]}")/../progress.py" \
		relay --total "$total") 2>&1
	PROGRESS_PID=$!
}

progress_step() {
	[ -n "$PROGRESS_PID" ] || return 0
	printf '\036progress %s\n' "$*"
}

progress_end() {
	local pid=$PROGRESS_PID i
	[ -n "$pid" ] || return 0
	PROGRESS_PID=
	exec 1>&"$PROGRESS_OUT" 2>&"$PROGRESS_ERR"
	exec {PROGRESS_OUT}>&- {PROGRESS_ERR}>&-
	# The relay ends when every writer has closed the pipe; a background
	# process that kept it open must not hold the script.
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
