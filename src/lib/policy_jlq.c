/* SPDX-License-Identifier: BSD-3-Clause
 * jlq: join the least-loaded queue, the core with the least outstanding
 * work in ns (Turbo's work-aware variant). A request's work is its service
 * time hint, or its class's running average of observed service times
 * (tlb_policy_work_estimate), charged at dispatch and echoed back.
 *
 * Up to TLB_ORDER_CORES cores, jlq keeps the cores in order of
 * outstanding work (struct tlb_order, src/lib/order.h): a pick is the
 * head of that order, and a step that puts it back where its dispatch
 * will take it; the order is sorted again from the load view whenever
 * anything but that dispatch changed the view. The pick is then the
 * head, not a scan of the keys the last dispatch wrote, so consecutive
 * picks do not wait for each other (docs/performance.md). Ties go to the
 * core ahead in the order: a picked core goes behind the others of its
 * load, and a sort keeps the order of equal loads; the first order is the
 * rotation from the cursor. Over TLB_ORDER_CORES cores, and with
 * prefer_running, jlq is the scan of tlb_argmin() (ties rotate).
 */
#include "order.h"
#include "policy_impl.h"

/* Sorts the order again from the view, stably. A pick whose dispatch did
 * not come as foreseen first goes to the back, as if it had (it was
 * picked; its key is whatever the view says now). */
static __attribute__((noinline)) void
order_sort(struct tlb_order *o, const struct tlb_load_view *lv,
	   uint32_t n, uint32_t cursor)
{
	if (o->lv != lv) {
		for (uint32_t j = 0; j < TLB_ORDER_CORES; j++)
			o->id[j] = (uint8_t)(j < n ? (cursor + j) % n : j);
		o->lv = lv;
	} else if (o->pending) {
		uint32_t j = 0;

		while (o->id[j] != o->last)
			j++;
		for (; j + 1 < TLB_ORDER_CORES; j++)
			o->id[j] = o->id[j + 1];
		o->id[TLB_ORDER_CORES - 1] = (uint8_t)o->last;
	}
	for (uint32_t j = 0; j < TLB_ORDER_CORES; j++) {
		uint8_t id = o->id[j];
		uint32_t key = lv->key_work[id];
		uint32_t at = j;

		for (; at > 0 && o->key[at - 1] > key; at--) {
			o->key[at] = o->key[at - 1];
			o->id[at] = o->id[at - 1];
		}
		o->key[at] = key;
		o->id[at] = id;
	}
	o->pending = false;
}

/* The view moved by exactly the dispatch the last pick foresaw. */
static inline bool
order_valid(const struct tlb_order *o, const struct tlb_load_view *lv)
{
	return o->pending && o->lv == lv && lv->key_gen == o->gen &&
	       lv->key_work[o->last] == o->last_key;
}

/* The head's key plus the request's work: what its dispatch will make
 * it, before tlb_lv_on_dispatch() saturates it. */
static inline uint64_t
order_sum(const struct tlb_policy *p, const struct tlb_request_info *req)
{
	return (uint64_t)p->order.key[0] + tlb_policy_work_estimate(p, req);
}

/* Picks the head, and foresees its dispatch giving it key x. */
static inline __attribute__((always_inline)) int
order_pick(struct tlb_policy *p, const struct tlb_load_view *lv, uint32_t x)
{
	struct tlb_order *o = &p->order;
	uint32_t i = o->id[0];

	tlb_order_take(o, x);
	o->pending = true;
	o->last = i;
	o->last_key = x;
	o->gen = lv->key_gen + 1;
	return (int)i;
}

static inline int
jlq_scan(struct tlb_policy *p, const struct tlb_load_view *lv)
{
	bool any;
	int i = tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX, &any);

	return i < 0 ? TLB_PICK_NONE : i;
}

/* Everything but the common pick, out of line so that it calls nothing:
 * the scan's cases, an order to sort again, a head out of rotation
 * (TLB_KEY_NONE: no core is eligible) and a key that saturates. */
static __attribute__((noinline)) int
jlq_pick_slow(struct tlb_policy *p, const struct tlb_load_view *lv,
	      const struct tlb_request_info *req)
{
	struct tlb_order *o = &p->order;
	uint64_t sum;

	if (p->n_cores > TLB_ORDER_CORES || lv->n_cores != p->n_cores ||
	    p->params.prefer_running)
		return jlq_scan(p, lv);
	if (!order_valid(o, lv))
		order_sort(o, lv, p->n_cores, p->cursor);
	if (o->key[0] == TLB_KEY_NONE) {
		o->pending = false; /* nothing foreseen */
		return TLB_PICK_NONE;
	}
	sum = order_sum(p, req);
	return order_pick(p, lv, sum < TLB_KEY_MAX ? (uint32_t)sum : TLB_KEY_MAX);
}

static int
jlq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	/* The order is in use only up to TLB_ORDER_CORES cores of the
	 * view's size, without prefer_running: set by order_pick() alone.
	 * One test for a head out of rotation and a saturating key. */
	if (__builtin_expect(order_valid(&p->order, lv), 1)) {
		uint64_t sum = order_sum(p, req);

		if (__builtin_expect(sum < TLB_KEY_MAX, 1))
			return order_pick(p, lv, (uint32_t)sum);
	} else if (p->n_cores > TLB_ORDER_CORES) {
		return jlq_scan(p, lv);
	}
	return jlq_pick_slow(p, lv, req);
}

const struct tlb_policy_ops tlb_policy_jlq = {
	.name = "jlq",
	.summary = "least outstanding work (service-time hints)",
	.pick = jlq_pick,
};
