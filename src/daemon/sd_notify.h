/* SPDX-License-Identifier: BSD-3-Clause
 * The sd_notify(3) protocol without libsystemd: one datagram of
 * "KEY=VALUE" lines to the unix socket named by $NOTIFY_SOCKET. Plain C,
 * no DPDK, so it can be unit tested and linked anywhere.
 */
#ifndef TURBOLBD_SD_NOTIFY_H
#define TURBOLBD_SD_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Sends msg (e.g. "READY=1", "STATUS=...\nWATCHDOG=1") to the service
 * manager. Returns 0 when sent, 0 when $NOTIFY_SOCKET is unset or empty
 * (not started by systemd: nothing to do), or -errno. A path starting
 * with '@' is in the abstract namespace. systemd reads at most 4096 bytes
 * (PIPE_BUF) of one message: keep STATUS= lines short. */
int tlb_sd_notify(const char *msg);

/* tlb_sd_notify() of a printf-formatted message. */
int tlb_sd_notifyf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether the service manager expects "WATCHDOG=1" keep-alives from this
 * process: $WATCHDOG_USEC is a positive integer and $WATCHDOG_PID, when
 * set, is our pid. Stores the timeout in *usec (may be NULL); send
 * keep-alives at about half of it. */
bool tlb_sd_watchdog_enabled(uint64_t *usec);

#endif /* TURBOLBD_SD_NOTIFY_H */
