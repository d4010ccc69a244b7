/* SPDX-License-Identifier: BSD-3-Clause
 * Emulated FIFO cores for turbolb-server --mode emulate. No DPDK.
 *
 * Each logical host core is a single FIFO server in TSC time: a request
 * admitted at time `arrival` with service time `svc` starts when the core
 * is free, at max(arrival, the core's previous completion), and completes
 * svc later. Its response may leave once the clock has passed that
 * completion. Because the arithmetic runs on timestamps, not on a thread
 * that spends the service time, one polling thread can carry any number
 * of emulated cores, and a request's queueing delay is set by the requests
 * ahead of it on its core, not by how the OS schedules threads.
 *
 * An emu_core holds its admitted requests in a ring of fixed depth, in
 * admission order; completions within a core are therefore in order and
 * non-decreasing. One thread owns an emu_core (no locks).
 */
#ifndef TLB_HOST_EMU_H
#define TLB_HOST_EMU_H

#include <stdint.h>

/* One admitted request: what the caller needs when it completes. */
struct emu_req {
	uint64_t done;    /* TSC time its service ends */
	void *item;       /* the caller's (the response frame) */
	uint32_t work_ns; /* the request's work hint, for its credit */
	uint32_t svc_ns;  /* its service time, for its credit */
};

struct emu_core {
	uint64_t next_free; /* completion of the last admitted request */
	uint64_t busy;      /* sum of the service times admitted */
	uint64_t admitted;
	uint32_t head;  /* oldest request */
	uint32_t count; /* requests admitted, not yet taken */
	uint32_t mask;  /* depth - 1 */
	struct emu_req *ring;
};

/* Sets up an idle core whose ring holds up to `depth` requests (a power
 * of two, 1..2^24). Returns 0, or -1 if depth is invalid or memory is
 * short. */
int emu_core_init(struct emu_core *c, uint32_t depth);

/* Frees the ring; the items still held are the caller's to release first
 * (emu_take with now = UINT64_MAX). */
void emu_core_free(struct emu_core *c);

/* Requests the ring can still take. */
static inline uint32_t
emu_room(const struct emu_core *c)
{
	return c->mask + 1 - c->count;
}

/* Admits a request that arrived at TSC time `arrival` and needs `svc`
 * cycles: it completes at max(arrival, the core's previous completion) +
 * svc. Returns that completion time. The caller checks emu_room() first;
 * a full ring admits nothing and returns UINT64_MAX. */
uint64_t emu_admit(struct emu_core *c, uint64_t arrival, uint64_t svc,
		   const struct emu_req *req);

/* Completion time of the oldest request still held; UINT64_MAX if none. */
uint64_t emu_next_done(const struct emu_core *c);

/* Moves up to `max` requests whose completion time is <= now into out[],
 * oldest first, and returns how many. A request not yet complete stops the
 * walk: the ones behind it complete later. now = UINT64_MAX takes the held
 * requests whatever their time (to release them). */
uint32_t emu_take(struct emu_core *c, uint64_t now, struct emu_req *out,
		  uint32_t max);

#endif
