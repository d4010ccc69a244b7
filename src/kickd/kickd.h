/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-kickd's shared state: its configuration and its memory of each
 * core. One thread: the agent's loop (main.c).
 */
#ifndef TURBOLB_KICKD_H
#define TURBOLB_KICKD_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kick.h"

#define KD_HIST 7 /* < 50, 100, 200, 500, 1000, 2000 us, more */

struct kd_conf {
	const char *ring;
	uint32_t poll_us;
	uint32_t quiet_us;
	uint32_t max_boost_us;
	int priority;
	int self_priority;
	bool sched_watch;
	bool boost;
	const char *stats_file;
	/* --listen: doorbells from kick frames received on this interface
	 * (turbolbd's host.transport: packet), not from the ring's words */
	const char *listen;
};

/* One core, as the agent runs it. */
struct kd_core {
	struct kick_core k;
	uint32_t pid; /* its thread, as the slot names it */
	uint32_t tid;
	bool thread_ok; /* that thread exists */
	/* what to restore after the boost */
	int orig_policy;
	struct sched_param orig_param;
	/* context switches of the thread */
	int perf_fd;
	uint8_t *perf_map;
	size_t perf_len;
	uint64_t perf_tail;
	struct kick_perf perf;
	uint64_t rt_skips; /* rings for a thread already real-time */
	uint64_t threads;  /* threads seen serving this core */
	uint32_t last_pid; /* the last of them, for the report */
	uint32_t last_tid;
	/* how the boosts went: how long they lasted, and how long a thread
	 * that was off its CPU took to get on it (at poll granularity) */
	bool wait_cpu; /* boosted while off its CPU, not on yet */
	uint64_t len_hist[KD_HIST];
	uint64_t oncpu_hist[KD_HIST];
	uint64_t never_on_cpu; /* boosts that ended with it still off */
	/* --listen: the newest doorbell count a kick frame carried */
	uint64_t wire_doorbell;
	/* last published to the slot */
	uint32_t sched_pub;
	struct tlb_cr_kick_stats ks_pub;
};

extern struct kd_conf conf; /* options.c */

/* A line on stderr, prefixed with the program's name. */
void kd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* options.c: fills conf; -1 on a usage error (said on stderr), exits 0
 * after --help. */
int parse_args(int argc, char **argv);

/* perf.c: a thread's context switches, read in place from a perf ring.
 * perf_open starts watching c's thread (unless --no-sched-watch; a
 * failure is said once and leaves the thread unwatched), perf_poll
 * consumes what its ring holds into c->perf, perf_close stops (c->perf
 * then says UNKNOWN). */
void perf_open(struct kd_core *c, uint32_t core);
void perf_poll(struct kd_core *c);
void perf_close(struct kd_core *c);

#endif /* TURBOLB_KICKD_H */
