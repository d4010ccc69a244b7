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

/* The pick from the order, and the step that foresees its dispatch. */
static inline __attribute__((always_inline)) int
order_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	   const struct tlb_request_info *req, bool slow)
{
	struct tlb_order *o = &p->order;
	uint32_t i = o->id[0];
	/* the key tlb_lv_on_dispatch() will give it */
	uint64_t sum = (uint64_t)o->key[0] + tlb_policy_work_estimate(p, req);
	uint32_t x = (uint32_t)sum;

	/* One test for a head out of rotation (TLB_KEY_NONE: no core is
	 * eligible) and for a key that saturates, both rare. */
	if (__builtin_expect(sum >= TLB_KEY_MAX, 0)) {
		if (!slow)
			return -3; /* the caller goes the slow way */
		if (o->key[0] == TLB_KEY_NONE) {
			o->pending = false; /* nothing foreseen */
			return TLB_PICK_NONE;
		}
		x = TLB_KEY_MAX;
	}
	tlb_order_take(o, x);
	o->pending = true;
	o->last = i;
	o->last_key = x;
	o->gen = lv->key_gen + 1;
	return (int)i;
}

/* Out of line, so that the common pick calls nothing. */
static __attribute__((noinline)) int
jlq_pick_slow(struct tlb_policy *p, const struct tlb_load_view *lv,
	      const struct tlb_request_info *req)
{
	bool any;

	if (p->n_cores > TLB_ORDER_CORES || lv->n_cores != p->n_cores ||
	    p->params.prefer_running) {
		int i = tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX, &any);

		return i < 0 ? TLB_PICK_NONE : i;
	}
	if (!(p->order.pending && p->order.lv == lv &&
	      lv->key_gen == p->order.gen &&
	      lv->key_work[p->order.last] == p->order.last_key))
		order_sort(&p->order, lv, p->n_cores, p->cursor);
	return order_pick(p, lv, req, true);
}

static int
jlq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	const struct tlb_order *o = &p->order;

	/* One test: the order is in use (set only up to TLB_ORDER_CORES
	 * cores of the view's size, without prefer_running) and the view
	 * moved by exactly the foreseen dispatch. */
	if (__builtin_expect(o->pending && o->lv == lv &&
				     lv->key_gen == o->gen &&
				     lv->key_work[o->last] == o->last_key,
			     1)) {
		int i = order_pick(p, lv, req, false);

		if (__builtin_expect(i != -3, 1))
			return i;
	} else if (p->n_cores > TLB_ORDER_CORES) {
		bool any;
		int i = tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX, &any);

		return i < 0 ? TLB_PICK_NONE : i;
	}
	return jlq_pick_slow(p, lv, req);
}

const struct tlb_policy_ops tlb_policy_jlq = {
	.name = "jlq",
	.summary = "least outstanding work (service-time hints)",
	.pick = jlq_pick,
};
