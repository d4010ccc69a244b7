/* SPDX-License-Identifier: BSD-3-Clause
 * The server's unmap guard: each worker lcore brackets every rx/tx burst
 * with srv_burst_enter/srv_burst_exit on a slot of its own, and any
 * munmap(2) in the process waits until every lcore that was inside a
 * burst has left it (unmap_guard.c says why). No DPDK: the unit test
 * links it alone.
 */
#ifndef TURBOLB_SERVER_UNMAP_GUARD_H
#define TURBOLB_SERVER_UNMAP_GUARD_H

#include <stdint.h>

/* Slots, one per worker lcore: at least TLB_CR_MAX_CORES (main.c checks
 * it). */
#define SRV_BURST_SLOTS 256u

/* A worker lcore's slot: seq is odd while the lcore is inside a burst.
 * Writer: its lcore only; readers: any thread that unmaps. A cache line
 * each, so that lcores do not share one. */
struct srv_burst_slot {
	uint32_t seq;
} __attribute__((aligned(64)));

extern struct srv_burst_slot srv_burst_slots[SRV_BURST_SLOTS];
/* Bursts an unmap waited for (the log says how many at exit). */
extern uint64_t srv_unmap_waits;

static inline void
srv_burst_enter(struct srv_burst_slot *s)
{
	/* One writer: a plain increment. The fence orders the store before
	 * the PMD's (plain) read of its connected flag inside the burst. */
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void
srv_burst_exit(struct srv_burst_slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

#endif /* TURBOLB_SERVER_UNMAP_GUARD_H */
