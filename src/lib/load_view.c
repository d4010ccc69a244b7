/* SPDX-License-Identifier: BSD-3-Clause
 * Load view: per host core occupancy as the dispatcher sees it.
 */
#include <string.h>

#include "turbolb/load_view.h"

void
tlb_lv_init(struct tlb_load_view *lv, uint32_t n_cores)
{
	memset(lv, 0, sizeof(*lv));
	lv->n_cores = n_cores > TLB_MAX_CORES ? TLB_MAX_CORES : n_cores;
	for (uint32_t i = 0; i < TLB_MAX_CORES; i++) {
		lv->core[i].online = i < lv->n_cores;
		tlb_lv_refresh(lv, i);
	}
}

void
tlb_lv_on_unsent(struct tlb_load_view *lv, uint32_t i, uint64_t n,
		 uint64_t work_ns)
{
	struct tlb_core_load *c = &lv->core[i];
	uint64_t out = c->sent - c->completed;
	uint64_t out_work = c->sent_work_ns - c->completed_work_ns;

	if (n > out)
		n = out;
	if (work_ns > out_work)
		work_ns = out_work;
	tlb_lv_store_u64(&c->sent, c->sent - n);
	tlb_lv_store_u64(&c->sent_work_ns, c->sent_work_ns - work_ns);
	tlb_lv_refresh(lv, i);
}

void
tlb_lv_set_online(struct tlb_load_view *lv, uint32_t i, bool online)
{
	__atomic_store_n(&lv->core[i].online, online, __ATOMIC_RELAXED);
	tlb_lv_refresh(lv, i);
}

void
tlb_lv_set_running(struct tlb_load_view *lv, uint32_t i, bool running)
{
	__atomic_store_n(&lv->core[i].running, running, __ATOMIC_RELAXED);
}

uint64_t
tlb_lv_reset_core(struct tlb_load_view *lv, uint32_t i)
{
	struct tlb_core_load *c = &lv->core[i];
	uint64_t stranded = c->sent - c->completed;

	tlb_lv_store_u64(&c->completed, c->sent);
	tlb_lv_store_u64(&c->completed_work_ns, c->sent_work_ns);
	c->watch_completed = c->completed;
	/* the old host's answers already on their way are late, not
	 * duplicates */
	c->late_owed += stranded;
	__atomic_store_n(&c->stale, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->probing, 0, __ATOMIC_RELAXED);
	c->gen++;
	tlb_lv_refresh(lv, i);
	return stranded;
}

/* Core i's outstanding requests and work are lost, as far as the view
 * can tell: written off, and the core probed. */
static void
write_off(struct tlb_core_load *c, struct tlb_lv_written_off *wo)
{
	uint64_t n = c->sent - c->completed;
	uint64_t w = c->sent_work_ns - c->completed_work_ns;

	tlb_lv_store_u64(&c->completed, c->sent);
	tlb_lv_store_u64(&c->completed_work_ns, c->sent_work_ns);
	tlb_lv_store_u64(&c->written_off, c->written_off + n);
	tlb_lv_store_u64(&c->written_off_work_ns, c->written_off_work_ns + w);
	c->late_owed += n;
	c->gen++;
	c->watch_completed = c->completed;
	__atomic_store_n(&c->stale, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->probing, 1, __ATOMIC_RELAXED);
	wo->requests += n;
	wo->work_ns += w;
}

uint64_t
tlb_lv_on_late(struct tlb_load_view *lv, uint32_t i, uint64_t n)
{
	struct tlb_core_load *c = &lv->core[i];
	uint64_t late = n < c->late_owed ? n : c->late_owed;

	c->late_owed -= late;
	return late;
}

uint32_t
tlb_lv_check_liveness(struct tlb_load_view *lv, uint64_t now_ns,
		      uint64_t timeout_ns, uint64_t write_off_ns,
		      struct tlb_lv_written_off *wo)
{
	uint32_t changed = 0;

	for (uint32_t i = 0; i < lv->n_cores; i++) {
		struct tlb_core_load *c = &lv->core[i];
		/* The first check only starts the watch: the view does not
		 * know how long the requests already sent have waited. */
		bool done = c->completed != c->watch_completed;
		bool progress = done || c->sent == c->completed ||
				c->watch_since_ns == 0;
		uint8_t stale = c->stale;

		if (progress) {
			c->watch_completed = c->completed;
			c->watch_since_ns = now_ns;
			stale = 0;
			/* A probed core that answered is in full
			 * rotation again. */
			if (done && c->probing) {
				__atomic_store_n(&c->probing, 0,
						 __ATOMIC_RELAXED);
				tlb_lv_refresh(lv, i);
				changed++;
			}
		} else if (c->stale &&
			   now_ns - c->stale_since_ns > write_off_ns) {
			write_off(c, wo);
			c->watch_since_ns = now_ns;
			tlb_lv_refresh(lv, i);
			changed++;
			continue;
		} else if (now_ns - c->watch_since_ns > timeout_ns) {
			stale = 1;
		}
		if (stale != c->stale) {
			if (stale) {
				tlb_lv_store_u64(&c->stale_events,
						 c->stale_events + 1);
				c->stale_since_ns = now_ns;
			}
			__atomic_store_n(&c->stale, stale, __ATOMIC_RELAXED);
			tlb_lv_refresh(lv, i);
			changed++;
		}
	}
	return changed;
}
