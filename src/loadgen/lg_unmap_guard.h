/* SPDX-License-Identifier: BSD-3-Clause
 * The unmap guard: turbolb-loadgen's one polling lcore brackets every
 * rx/tx burst with lg_burst_enter/lg_burst_exit, and any munmap(2) in the
 * process waits while a burst runs (lg_unmap_guard.c says why). One
 * polling thread only.
 */
#ifndef TURBOLB_LOADGEN_LG_UNMAP_GUARD_H
#define TURBOLB_LOADGEN_LG_UNMAP_GUARD_H

#include <stdint.h>

/* Non-zero while the poller is inside a burst. */
extern uint32_t lg_unmap_in_burst;
/* Unmaps that had to wait for a burst (for the curious: the log). */
extern uint64_t lg_unmap_waits;

static inline void
lg_burst_enter(void)
{
	/* The fence orders the store before the PMD's (plain) read of its
	 * connected flag inside the burst. */
	__atomic_store_n(&lg_unmap_in_burst, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void
lg_burst_exit(void)
{
	__atomic_store_n(&lg_unmap_in_burst, 0, __ATOMIC_RELEASE);
}

#endif /* TURBOLB_LOADGEN_LG_UNMAP_GUARD_H */
