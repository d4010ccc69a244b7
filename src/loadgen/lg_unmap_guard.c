/* SPDX-License-Identifier: BSD-3-Clause
 * The unmap guard (lg_unmap_guard.h): munmap(2) for the whole process.
 *
 * DPDK 22.11's memif PMD tears a connection down on the EAL interrupt
 * thread (memif_disconnect): it clears the connected flag that
 * rte_eth_rx_burst/tx_burst test on entry, then unmaps the shared rings
 * (memif_free_regions), without waiting for an lcore that passed the test
 * just before and is still in the burst. A poller preempted there touches
 * unmapped memory when it resumes. The PMD offers no hook to wait for the
 * poller, but it calls munmap through the dynamic linker, so this
 * definition, exported from the executable (meson.build), is the one it
 * gets: an unmap waits until the polling lcore is outside any burst.
 *
 * Why that suffices (with the seq_cst fences here and in lg_burst_enter,
 * after its store): the PMD's store clearing the flag precedes the unmap,
 * so either the poller's later read of the flag sees it clear (the burst
 * returns without touching the rings) or the fence's load of
 * lg_unmap_in_burst sees the burst and waits for it to end.
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lg_unmap_guard.h"

uint32_t lg_unmap_in_burst;
uint64_t lg_unmap_waits;

int
munmap(void *addr, size_t len)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&lg_unmap_in_burst, __ATOMIC_ACQUIRE) != 0) {
		/* At most the rest of one burst, or until the poller is
		 * scheduled again; the poller never unmaps inside a burst,
		 * so it never waits here for itself. */
		__atomic_fetch_add(&lg_unmap_waits, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&lg_unmap_in_burst, __ATOMIC_ACQUIRE) !=
		       0)
			sched_yield();
	}
	return (int)syscall(SYS_munmap, addr, len);
}
