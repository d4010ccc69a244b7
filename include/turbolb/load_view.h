/* SPDX-License-Identifier: BSD-3-Clause
 * The load view: what the dispatcher knows about each host core. Policies
 * read it; the datapath writes it. Every field has one writer (the
 * dispatcher lcore that owns the view), so updates are plain relaxed
 * stores, never atomic read-modify-writes; readers on other threads
 * (telemetry) use relaxed loads and may see a slightly old value.
 *
 * outstanding(i)      = sent(i) - completed(i)
 * outstanding_work(i) = sent_work_ns(i) - completed_work_ns(i)
 */
#ifndef TURBOLB_LOAD_VIEW_H
#define TURBOLB_LOAD_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#define TLB_MAX_CORES  256u
#define TLB_CACHE_LINE 64

struct tlb_core_load {
	/* written by the dispatcher when it steers a request */
	uint64_t sent;
	uint64_t sent_work_ns;
	/* written by the dispatcher when a completion (credit or response)
	 * is counted */
	uint64_t completed;
	uint64_t completed_work_ns;
	/* written by the liveness check (also the dispatcher) */
	uint64_t watch_completed; /* completed count at the last progress */
	uint64_t watch_since_ns;  /* when that progress was seen */
	/* eligibility: a core is picked only if online && !stale && !capped */
	uint8_t online;  /* host side attached and not OFFLINE */
	uint8_t stale;   /* outstanding work but no progress for too long */
	uint8_t running; /* host thread reported RUNNING */
	uint8_t probing; /* written off: one request at a time until it
			    completes something */
	uint8_t capped;  /* probing with a request outstanding: not picked
			    (kept by tlb_lv_refresh()) */
	uint8_t pad[3];
	uint64_t stale_events;   /* times this core was marked stale */
	uint64_t stale_since_ns; /* when it was last marked stale */
	/* what was written off at this core: lost, as far as the view
	 * knows, and no longer outstanding */
	uint64_t written_off;
	uint64_t written_off_work_ns;
	/* written-off and stranded requests whose completion may still
	 * come: one that does is a late completion, not a duplicate */
	uint64_t late_owed;
	/* bumped by a write-off and a reset: a charge made under an older
	 * generation is no longer in the view and is never handed back */
	uint32_t gen;
} __attribute__((aligned(TLB_CACHE_LINE)));

/* A dense key: the load of an eligible core, saturated at TLB_KEY_MAX
 * (4.29 s of outstanding work; cores at or beyond it tie), or
 * TLB_KEY_NONE for a core out of rotation and for every slot from
 * n_cores on. */
#define TLB_KEY_NONE UINT32_MAX
#define TLB_KEY_MAX  (UINT32_MAX - 1)

struct tlb_load_view {
	uint32_t n_cores;
	/* Bumped by every write of a dense key (tlb_lv_refresh(),
	 * tlb_lv_on_dispatch()): a policy that keeps the keys in an order
	 * of its own (jlq) sees from it whether anything but its own
	 * dispatch changed them. */
	uint64_t key_gen;
	/* Dense copies of what the policies scan, kept by the writer with
	 * every change: outstanding requests and work of each core (see
	 * TLB_KEY_NONE). 32 bits each, 16 to a cache line, so that the
	 * argmin compares them 4 at a time (src/lib/argmin.h). Only the
	 * writer (the dispatcher, where policies run) reads them. */
	uint32_t key_req[TLB_MAX_CORES]
		__attribute__((aligned(TLB_CACHE_LINE)));
	uint32_t key_work[TLB_MAX_CORES]
		__attribute__((aligned(TLB_CACHE_LINE)));
	struct tlb_core_load core[TLB_MAX_CORES];
};

/* All cores online, not stale, not running, counters zero. */
void tlb_lv_init(struct tlb_load_view *lv, uint32_t n_cores);

static inline uint64_t
tlb_lv_load_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
tlb_lv_store_u64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t
tlb_lv_outstanding(const struct tlb_load_view *lv, uint32_t i)
{
	const struct tlb_core_load *c = &lv->core[i];

	return tlb_lv_load_u64(&c->sent) - tlb_lv_load_u64(&c->completed);
}

static inline uint64_t
tlb_lv_outstanding_work(const struct tlb_load_view *lv, uint32_t i)
{
	const struct tlb_core_load *c = &lv->core[i];

	return tlb_lv_load_u64(&c->sent_work_ns) -
	       tlb_lv_load_u64(&c->completed_work_ns);
}

/* In rotation: online and not stale. A probing core at its cap is, for
 * the packets of a message it already has, but is not picked for new
 * ones (tlb_lv_eligible()). */
static inline bool
tlb_lv_in_rotation(const struct tlb_load_view *lv, uint32_t i)
{
	return lv->core[i].online && !lv->core[i].stale;
}

static inline bool
tlb_lv_eligible(const struct tlb_load_view *lv, uint32_t i)
{
	const struct tlb_core_load *c = &lv->core[i];

	return c->online && !c->stale && !c->capped;
}

/* Writer side (the owning dispatcher only). */

/* The core's line in a register: without it GCC computes the address
 * once for the loads and again for the relaxed atomic stores, on every
 * request. Changes nothing else. */
#define TLB_LV_ONE_ADDRESS(c) __asm__("" : "+r"(c))

/* A load as a dense key: saturated, then all ones when mask is (the core
 * is out of rotation). */
static inline uint32_t
tlb_lv_key(uint64_t load, uint32_t mask)
{
	return (load < TLB_KEY_MAX ? (uint32_t)load : TLB_KEY_MAX) | mask;
}

/* Recomputes core i's dense keys and its cap from its fields; every
 * writer below calls it, and so must code that changes a core's fields
 * directly (tests) and a dispatcher that has just charged a probing core
 * (tlb_lv_on_dispatch() keeps the keys alone). */
static inline void
tlb_lv_refresh(struct tlb_load_view *lv, uint32_t i)
{
	struct tlb_core_load *c = &lv->core[i];
	bool capped = c->probing && c->sent != c->completed;

	/* Eligibility from the cap just computed, not read back: a load of
	 * the flags that spans the byte just stored waits for the store to
	 * reach the cache (no store-to-load forwarding), on every
	 * completion. */
	__atomic_store_n(&c->capped, capped, __ATOMIC_RELAXED);
	uint32_t mask = (uint32_t)(c->online && !c->stale && !capped) - 1;

	lv->key_gen++;
	lv->key_req[i] = tlb_lv_key(c->sent - c->completed, mask);
	lv->key_work[i] =
		tlb_lv_key(c->sent_work_ns - c->completed_work_ns, mask);
}

/* tlb_lv_on_dispatch() for a caller that knows the work key the
 * dispatch gives core i: key_work is what tlb_lv_on_dispatch() computes
 * (jlq keeps its order of the keys exact with it). */
static inline void
tlb_lv_on_dispatch_key(struct tlb_load_view *lv, uint32_t i, uint32_t work_ns,
		       uint32_t key_work)
{
	struct tlb_core_load *c = &lv->core[i];
	uint32_t kr = lv->key_req[i];

	TLB_LV_ONE_ADDRESS(c);
	tlb_lv_store_u64(&c->sent, c->sent + 1);
	tlb_lv_store_u64(&c->sent_work_ns, c->sent_work_ns + work_ns);
	lv->key_gen++;
	lv->key_req[i] = kr + (kr < TLB_KEY_MAX);
	lv->key_work[i] = key_work;
}

/* One more request of work_ns at core i. The keys go up in place,
 * saturating, and TLB_KEY_NONE stays: the same keys tlb_lv_refresh()
 * would compute, without reading the fields back. */
static inline void
tlb_lv_on_dispatch(struct tlb_load_view *lv, uint32_t i, uint32_t work_ns)
{
	uint32_t kw = lv->key_work[i];
	uint64_t sum = (uint64_t)kw + work_ns;

	/* TLB_KEY_NONE plus anything saturates, and the | makes it
	 * TLB_KEY_NONE again. tlb_lv_key(sum, 0u - (kw == TLB_KEY_NONE))
	 * says the same with a mask built on every dispatch; this form
	 * needs none. */
	tlb_lv_on_dispatch_key(
		lv, i, work_ns,
		sum < TLB_KEY_MAX
			? (uint32_t)sum
			: TLB_KEY_MAX | (uint32_t)(kw == TLB_KEY_NONE));
}

/* Counts n completions carrying work_ns of charged work in all. A
 * completion that would make outstanding negative (a duplicate, or a
 * response from before a reset) is clamped: it returns the number of
 * completions that were not counted. Inline: the response path calls it
 * for every response. */
static inline uint64_t
tlb_lv_on_complete(struct tlb_load_view *lv, uint32_t i, uint64_t n,
		   uint64_t work_ns)
{
	struct tlb_core_load *c = &lv->core[i];
	uint64_t out = c->sent - c->completed;
	uint64_t out_work = c->sent_work_ns - c->completed_work_ns;
	uint64_t extra = 0;

	/* Never let outstanding go negative: a response for a request sent
	 * before a reset of this core must not make it look idler than it
	 * is. */
	if (n > out) {
		extra = n - out;
		n = out;
	}
	if (work_ns > out_work)
		work_ns = out_work;
	tlb_lv_store_u64(&c->completed, c->completed + n);
	tlb_lv_store_u64(&c->completed_work_ns, c->completed_work_ns + work_ns);
	tlb_lv_refresh(lv, i);
	return extra;
}

/* Takes back n dispatches carrying work_ns of charged work that never
 * reached core i (its TX ring was full): sent and sent_work_ns go down,
 * clamped like completions. Unlike tlb_lv_on_complete this is no progress
 * of the host, so the liveness check does not see it as such. */
void tlb_lv_on_unsent(struct tlb_load_view *lv, uint32_t i, uint64_t n,
		      uint64_t work_ns);

void tlb_lv_set_online(struct tlb_load_view *lv, uint32_t i, bool online);
void tlb_lv_set_running(struct tlb_load_view *lv, uint32_t i, bool running);

/* Forgets what is in flight at core i (its host side restarted): the
 * outstanding count and work drop to zero, and an answer of the old host
 * to one of them that still comes is late (tlb_lv_on_late()). Returns the
 * number of requests that were outstanding (stranded). */
uint64_t tlb_lv_reset_core(struct tlb_load_view *lv, uint32_t i);

/* What one liveness check wrote off, summed over the cores. */
struct tlb_lv_written_off {
	uint64_t requests;
	uint64_t work_ns;
};

/* Liveness, called periodically with a monotonic clock: a core with
 * outstanding requests whose completed count has not moved for longer than
 * timeout_ns is marked stale; a stale core that completes anything (or has
 * nothing outstanding) is unmarked. A core stale for longer than
 * write_off_ns has what is outstanding there written off (added to *wo and
 * to its own written_off counts) and is probed: it is eligible again, for
 * one request at a time, until a later check sees it complete something,
 * which puts it back in full rotation. Progress is observed at call
 * granularity, so the dispatch path needs no clock. Returns the number of
 * cores whose state changed. */
uint32_t tlb_lv_check_liveness(struct tlb_load_view *lv, uint64_t now_ns,
			       uint64_t timeout_ns, uint64_t write_off_ns,
			       struct tlb_lv_written_off *wo);

/* Of n completions at core i beyond what was outstanding (what
 * tlb_lv_on_complete() returned), those that answer written-off or
 * stranded requests: counted off late_owed and returned; the rest are
 * duplicates. */
uint64_t tlb_lv_on_late(struct tlb_load_view *lv, uint32_t i, uint64_t n);

#endif /* TURBOLB_LOAD_VIEW_H */
