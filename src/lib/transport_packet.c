/* SPDX-License-Identifier: BSD-3-Clause
 * The packet host transport: what the credit ring carries, taken from
 * feedback frames that each host core sends on its own queue
 * (feedback.h). For a NIC side that shares no memory with its host (a
 * BlueField's Arm cores): the VF a host core answers on carries its
 * feedback too.
 *
 * Threads: a core's state is written by feed() and drain_sums() from the
 * dispatcher that receives the core's queue and owns the core, and by no
 * one else; state() reads it there too. The host epoch is the newest any
 * core's frames carried, shared by every dispatcher: raised with a
 * compare-and-swap, never lowered, so that a frame of the old host still
 * in another queue cannot bring the old epoch back.
 *
 * Trust: a frame comes from whoever holds the queue. It speaks only for
 * the queue's core (another core in it: WRONG_CORE), and its totals must
 * move forward, by no more work than its completions can carry (each a
 * u32 charge): otherwise nothing is credited and the next frame counts
 * from these totals (BAD_TOTALS). What a host can claim beyond that (more
 * completions than were outstanding) the load view counts as extra, as
 * it does for the ring.
 */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/feedback.h"
#include "turbolb/transport.h"
#include "transport_impl.h"

struct pk_core {
	/* the owning dispatcher: rw; the atomics may be read elsewhere */
	uint64_t epoch; /* atomic: epoch of its last accepted frame */
	uint64_t last_completions;
	uint64_t last_work_ns;
	uint64_t pend_completions; /* accepted, not drained */
	uint64_t pend_work_ns;
	uint32_t pend_records;
	uint32_t state;     /* atomic: enum tlb_core_run_state */
	uint64_t heartbeat; /* atomic */
} __attribute__((aligned(64)));

struct packet_transport {
	struct tlb_transport t;
	uint64_t epoch; /* atomic: newest host epoch seen; 0: none */
	struct pk_core *core;
};

static_assert(offsetof(struct packet_transport, t) == 0,
	      "struct tlb_transport must come first");

static inline uint64_t
global_epoch(const struct packet_transport *p)
{
	return __atomic_load_n(&p->epoch, __ATOMIC_ACQUIRE);
}

/* Raises the shared epoch to e; false when a newer one is already there. */
static bool
epoch_raise(struct packet_transport *p, uint64_t e)
{
	uint64_t cur = global_epoch(p);

	while (cur < e)
		if (__atomic_compare_exchange_n(&p->epoch, &cur, e, false,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			return true;
	return cur == e;
}

static enum tlb_feed_result
packet_feed(void *ctx, uint32_t core, const void *frame, size_t len)
{
	struct packet_transport *p = ctx;
	struct tlb_fb_msg m;
	struct pk_core *c;
	uint64_t dc, dw;

	if (tlb_fb_parse(frame, len, &m) != TLB_FB_OK)
		return TLB_FEED_MALFORMED;
	if (core >= p->t.n_cores || m.core != core)
		return TLB_FEED_WRONG_CORE;
	if (!epoch_raise(p, m.host_epoch))
		return TLB_FEED_STALE;
	c = &p->core[core];
	if (c->epoch != m.host_epoch) {
		/* The core's first frame in this epoch: its totals are the
		 * base; what it held of an older epoch is not ours. */
		c->last_completions = m.completions;
		c->last_work_ns = m.work_ns;
		c->pend_completions = 0;
		c->pend_work_ns = 0;
		c->pend_records = 0;
		__atomic_store_n(&c->epoch, m.host_epoch, __ATOMIC_RELEASE);
		goto accept;
	}
	dc = m.completions - c->last_completions;
	dw = m.work_ns - c->last_work_ns;
	if (m.completions < c->last_completions ||
	    m.work_ns < c->last_work_ns || dc > UINT32_MAX ||
	    dw > dc * UINT32_MAX) {
		c->last_completions = m.completions;
		c->last_work_ns = m.work_ns;
		return TLB_FEED_BAD_TOTALS;
	}
	c->last_completions = m.completions;
	c->last_work_ns = m.work_ns;
	if (dc != 0) {
		c->pend_completions += dc;
		c->pend_work_ns += dw;
		c->pend_records++;
	}
accept:
	__atomic_store_n(&c->state, (uint32_t)m.state, __ATOMIC_RELAXED);
	__atomic_store_n(&c->heartbeat, m.heartbeat, __ATOMIC_RELAXED);
	return TLB_FEED_OK;
}

/* Whether c's accepted frames belong to the newest host. */
static inline bool
core_current(const struct packet_transport *p, const struct pk_core *c)
{
	uint64_t e = __atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE);

	return e != 0 && e == global_epoch(p);
}

static uint32_t
packet_drain_sums(void *ctx, const uint32_t *core, uint32_t n, unsigned int max,
		  struct tlb_credit_sum *out)
{
	struct packet_transport *p = ctx;
	uint32_t k = 0;

	(void)max; /* frames are summed as they come: one sum a core */
	for (uint32_t j = 0; j < n; j++) {
		struct pk_core *c;

		if (core[j] >= p->t.n_cores)
			continue;
		c = &p->core[core[j]];
		if (c->pend_records == 0)
			continue;
		/* A newer host came on another queue: these are the old
		 * one's, whose requests the epoch change strands. */
		if (core_current(p, c)) {
			out[k].idx = j;
			out[k].records = c->pend_records;
			out[k].completions = c->pend_completions;
			out[k].work_ns = c->pend_work_ns;
			k++;
		}
		c->pend_records = 0;
		c->pend_completions = 0;
		c->pend_work_ns = 0;
	}
	return k;
}

static unsigned int
packet_drain(void *ctx, uint32_t core, struct tlb_credit *out, unsigned int max)
{
	struct tlb_credit_sum s;

	if (max == 0 || packet_drain_sums(ctx, &core, 1, 1, &s) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	out->completions = s.completions > UINT32_MAX ? UINT32_MAX
						      : (uint32_t)s.completions;
	out->work_ns = s.work_ns;
	return 1;
}

/* OFFLINE until the core's first frame of the newest host. */
static enum tlb_core_run_state
packet_state(const void *ctx, uint32_t core)
{
	const struct packet_transport *p = ctx;
	const struct pk_core *c;

	if (core >= p->t.n_cores)
		return TLB_RUN_OFFLINE;
	c = &p->core[core];
	if (!core_current(p, c))
		return TLB_RUN_OFFLINE;
	return (enum tlb_core_run_state)__atomic_load_n(&c->state,
							__ATOMIC_RELAXED);
}

static uint64_t
packet_host_epoch(const void *ctx)
{
	return global_epoch(ctx);
}

/* The host's threads and its kick agent are not visible from here. */
static void
packet_core_info(const void *ctx, uint32_t core,
		 struct tlb_transport_core_info *out)
{
	(void)ctx;
	(void)core;
	memset(out, 0, sizeof(*out));
}

/* No host memory to break: the frames a host gets wrong are counted by
 * the daemon, per reason (enum tlb_feed_result). */
static void
packet_faults(const void *ctx, struct tlb_cr_faults *out)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
}

static bool
packet_fallback(const void *ctx, uint32_t core)
{
	(void)ctx;
	(void)core;
	return false;
}

static void
packet_close(struct tlb_transport *t)
{
	struct packet_transport *p = (struct packet_transport *)t;

	free(p->core);
	free(p);
}

static const struct tlb_transport_ops packet_ops = {
	.name = "packet",
	.drain = packet_drain,
	.drain_sums = packet_drain_sums,
	.state = packet_state,
	.host_epoch = packet_host_epoch,
	.doorbell = NULL,
	.core_info = packet_core_info,
	.check = NULL,
	.faults = packet_faults,
	.fallback = packet_fallback,
	.set_inband_fallback = NULL,
	.feed = packet_feed,
	.close = packet_close,
};

int
tlb_transport_packet_create(uint32_t n_cores, struct tlb_transport **out,
			    char *err, size_t errlen)
{
	struct packet_transport *p;

	if (n_cores == 0 || n_cores > TLB_CR_MAX_CORES) {
		snprintf(err, errlen,
			 "packet transport: %u cores is not in 1..%u", n_cores,
			 TLB_CR_MAX_CORES);
		return -1;
	}
	p = (struct packet_transport *)tlb_transport_alloc(
		sizeof(*p), &packet_ops, NULL, n_cores, true, err, errlen);
	if (p == NULL)
		return -1;
	p->t.ctx = p;
	p->core = aligned_alloc(64, sizeof(*p->core) * n_cores);
	if (p->core == NULL) {
		snprintf(err, errlen, "packet transport: out of memory");
		free(p);
		return -1;
	}
	memset(p->core, 0, sizeof(*p->core) * n_cores);
	*out = &p->t;
	return 0;
}
