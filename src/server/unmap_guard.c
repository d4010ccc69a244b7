/* SPDX-License-Identifier: BSD-3-Clause
 * The unmap guard (unmap_guard.h): munmap(2) for the whole process.
 *
 * DPDK 22.11's memif PMD tears a connection down on the EAL interrupt
 * thread when the peer leaves (memif_disconnect): it clears the connected
 * flag that rte_eth_rx_burst/tx_burst test on entry, then unmaps the
 * shared rings (memif_free_regions), without waiting for an lcore that
 * passed the test just before and is still in the burst. A worker
 * preempted there touches unmapped memory when it resumes and the process
 * dies of SIGSEGV. The PMD offers no hook to wait for the workers, but it
 * calls munmap through the dynamic linker, so this definition, exported
 * from the executable (meson.build), is the one it gets: an unmap waits
 * until each lcore that was inside a burst has left that burst.
 *
 * Why that suffices (with the seq_cst fences here and in srv_burst_enter,
 * after its store): the PMD's store clearing the flag precedes the unmap,
 * so for each lcore either its later read of the flag sees it clear (the
 * burst returns without touching the rings) or the fence's load of its
 * slot sees the burst, and the unmap waits for that burst to end. A slot
 * whose sequence moved on has left the burst seen, even if it is inside
 * the next one already: that next one saw the flag clear. So an unmap
 * waits for at most one burst per lcore and cannot be starved by lcores
 * that keep polling. The workers never unmap inside a burst, so none
 * waits for itself.
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unmap_guard.h"

struct srv_burst_slot srv_burst_slots[SRV_BURST_SLOTS];
uint64_t srv_unmap_waits;

int
munmap(void *addr, size_t len)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < SRV_BURST_SLOTS; i++) {
		uint32_t seq = __atomic_load_n(&srv_burst_slots[i].seq,
					       __ATOMIC_ACQUIRE);

		if ((seq & 1u) == 0)
			continue;
		/* The rest of one burst, or until the lcore is scheduled
		 * again. */
		__atomic_fetch_add(&srv_unmap_waits, 1, __ATOMIC_RELAXED);
		while (__atomic_load_n(&srv_burst_slots[i].seq,
				       __ATOMIC_ACQUIRE) == seq)
			sched_yield();
	}
	return (int)syscall(SYS_munmap, addr, len);
}
