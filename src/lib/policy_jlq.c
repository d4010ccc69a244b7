/* SPDX-License-Identifier: BSD-3-Clause
 * jlq: join the least-loaded queue, the core with the least outstanding
 * work in ns (Turbo's work-aware variant). A request's work is its service
 * time hint, or its class's running average of observed service times
 * (tlb_policy_work_estimate), charged at dispatch and echoed back.
 *
 * jlq keeps the cores in order of outstanding work (struct tlb_order,
 * src/lib/order.h): a sorted list up to TLB_ORDER_CORES cores, a
 * tournament tree over that. A pick is the first core, and the order is
 * changed at once as its dispatch will change the view; it is made again
 * from the load view whenever anything but that dispatch changed the view.
 * The pick is then the head, not a scan of the keys the last dispatch
 * wrote, so consecutive picks do not wait for each other
 * (docs/performance.md). Ties go to the core picked longest ago (each
 * pick takes a stamp); before the first pick the cores go in rotation
 * from the cursor. With prefer_running, jlq is the scan of tlb_argmin()
 * (ties rotate).
 */
#include "order.h"
#include "policy_impl.h"

/* ---- up to TLB_ORDER_CORES cores: the list ---- */

/* Sorts the list again from the view, by key, then by the stamp of the
 * last pick. A new view (or the first pick): stamps in rotation from the
 * cursor. */
static __attribute__((noinline)) void
list_sort(struct tlb_order *o, const struct tlb_load_view *lv, uint32_t n,
	  uint32_t cursor)
{
	if (o->lv != lv) {
		for (uint32_t j = 0; j < TLB_ORDER_CORES; j++) {
			o->id[j] = (uint8_t)(j < n ? (cursor + j) % n : j);
			o->picked[o->id[j]] = j;
		}
		o->stamp = TLB_ORDER_CORES;
		o->lv = lv;
	}
	for (uint32_t j = 0; j < TLB_ORDER_CORES; j++) {
		uint8_t id = o->id[j];
		uint32_t key = lv->key_work[id];
		uint32_t at = j;

		for (; at > 0 && (o->key[at - 1] > key ||
				  (o->key[at - 1] == key &&
				   o->picked[o->id[at - 1]] > o->picked[id]));
		     at--) {
			o->key[at] = o->key[at - 1];
			o->id[at] = o->id[at - 1];
		}
		o->key[at] = key;
		o->id[at] = id;
	}
	o->pending = 0;
}

/* ---- over TLB_ORDER_CORES cores: the tree ---- */

/* Stamps 0..n-1 again, in the order they were; the next is n. O(n^2),
 * once in 2^24 picks. */
static void
tree_restamp(struct tlb_order *o, uint32_t n)
{
	uint64_t *leaf = o->node + o->leaves;
	uint32_t rank[TLB_MAX_CORES];

	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = (uint32_t)leaf[i] >> 8, r = 0;

		for (uint32_t k = 0; k < n; k++)
			r += ((uint32_t)leaf[k] >> 8) < s;
		rank[i] = r;
	}
	for (uint32_t i = 0; i < n; i++)
		leaf[i] = tlb_order_value(tlb_order_key(leaf[i]), rank[i], i);
	o->stamp = n;
}

/* The tree again from the view. A new view: stamps in rotation from the
 * cursor, every node built; stamps run out: renewed, every node built.
 * Then each core keeps its stamp, and so its place among equal loads (a
 * pick whose dispatch did not come as foreseen keeps the stamp it was
 * given, as if it had), and only the paths of the keys that changed are
 * walked: after a burst of responses a few cores of many. */
static __attribute__((noinline)) void
tree_sort(struct tlb_order *o, const struct tlb_load_view *lv, uint32_t n,
	  uint32_t cursor)
{
	uint64_t *leaf;

	if (o->lv != lv) {
		o->leaves = 1;
		o->depth = 0;
		while (o->leaves < n) {
			o->leaves *= 2;
			o->depth++;
		}
		leaf = o->node + o->leaves;
		for (uint32_t j = 0; j < n; j++) {
			uint32_t i = (cursor + j) % n;

			leaf[i] = tlb_order_value(0, j, i);
		}
		for (uint32_t i = n; i < o->leaves; i++)
			leaf[i] = UINT64_MAX;
		o->stamp = n;
		o->lv = lv;
		tlb_order_build(o);
	} else if (o->stamp >= TLB_ORDER_STAMP_END) {
		tree_restamp(o, n);
		tlb_order_build(o);
	}
	leaf = o->node + o->leaves;
	for (uint32_t i = 0; i < n; i++)
		if (tlb_order_key(leaf[i]) != lv->key_work[i])
			tlb_order_set(o, i, (uint64_t)lv->key_work[i] << 32 |
						    (uint32_t)leaf[i]);
	o->pending = 0;
}

/* ---- the pick ---- */

/* The view moved by exactly the dispatch the last pick, of the list or
 * the tree (kind), foresaw: one key write, and the key foreseen. Sound
 * because that dispatch changes the key (a work estimate is never 0),
 * except at saturation, which jlq_pick_slow() does not foresee. */
static inline bool
order_valid(const struct tlb_order *o, const struct tlb_load_view *lv,
	    uint8_t kind)
{
	return o->pending == kind && o->lv == lv && lv->key_gen == o->gen &&
	       lv->key_work[o->last] == o->last_key;
}

/* Core i is picked; its dispatch will give it key x. (o->pending is
 * already the right kind on the fast path, which order_valid() let
 * through; the slow path sets it.) */
static inline __attribute__((always_inline)) int
foresee(struct tlb_order *o, const struct tlb_load_view *lv, uint32_t i,
	uint32_t x)
{
	o->last = i;
	o->last_key = x;
	o->gen = lv->key_gen + 1;
	return (int)i;
}

static inline __attribute__((always_inline)) int
list_pick(struct tlb_order *o, const struct tlb_load_view *lv, uint32_t x)
{
	uint32_t i = o->id[0];

	tlb_order_take(o, x);
	o->picked[i] = o->stamp++;
	return foresee(o, lv, i, x);
}

static inline __attribute__((always_inline)) int
tree_pick(struct tlb_order *o, const struct tlb_load_view *lv, uint32_t i,
	  uint32_t x)
{
	tlb_order_set(o, i, tlb_order_value(x, (uint32_t)o->stamp++, i));
	return foresee(o, lv, i, x);
}

static inline int
jlq_scan(struct tlb_policy *p, const struct tlb_load_view *lv)
{
	bool any;
	int i = tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX, &any);

	return i < 0 ? TLB_PICK_NONE : i;
}

/* Everything but the common pick, out of line so that it calls nothing:
 * the scan's cases, an order to make again, stamps to renew, a head out
 * of rotation (TLB_KEY_NONE: no core is eligible) and a key that
 * saturates. */
static __attribute__((noinline)) int
jlq_pick_slow(struct tlb_policy *p, const struct tlb_load_view *lv,
	      const struct tlb_request_info *req)
{
	struct tlb_order *o = &p->order;
	uint32_t n = p->n_cores, key, i;
	uint8_t kind = n <= TLB_ORDER_CORES ? TLB_ORDER_LIST : TLB_ORDER_TREE;
	uint64_t sum;

	if (lv->n_cores != n || p->params.prefer_running)
		return jlq_scan(p, lv);
	if (kind == TLB_ORDER_LIST) {
		if (!order_valid(o, lv, kind))
			list_sort(o, lv, n, p->cursor);
		key = o->key[0];
		i = o->id[0];
	} else {
		if (!order_valid(o, lv, kind) ||
		    o->stamp >= TLB_ORDER_STAMP_END)
			tree_sort(o, lv, n, p->cursor);
		key = tlb_order_key(o->node[1]);
		i = tlb_order_core(o->node[1]);
	}
	if (key == TLB_KEY_NONE) {
		o->pending = 0; /* nothing foreseen */
		return TLB_PICK_NONE;
	}
	sum = (uint64_t)key + tlb_policy_work_estimate(p, req);
	if (sum > TLB_KEY_MAX)
		sum = TLB_KEY_MAX;
	int c = kind == TLB_ORDER_LIST ? list_pick(o, lv, (uint32_t)sum) :
					 tree_pick(o, lv, i, (uint32_t)sum);

	/* A key already saturated stays as it is: its dispatch could not be
	 * told from another write, so the next pick makes the order again
	 * (the picked core has gone behind its equals all the same). */
	o->pending = key == TLB_KEY_MAX ? 0 : kind;
	return c;
}

static int
jlq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	struct tlb_order *o = &p->order;

	/* pending is set by jlq_pick_slow() alone, and only for a view of
	 * the policy's size without prefer_running, the list up to
	 * TLB_ORDER_CORES cores and the tree over. One test for a head
	 * out of rotation and a saturating key (and in the tree, one for the
	 * stamps). */
	if (__builtin_expect(order_valid(o, lv, TLB_ORDER_LIST), 1)) {
		uint64_t sum = (uint64_t)o->key[0] +
			       tlb_policy_work_estimate(p, req);

		if (__builtin_expect(sum < TLB_KEY_MAX, 1))
			return list_pick(o, lv, (uint32_t)sum);
	} else if (__builtin_expect(order_valid(o, lv, TLB_ORDER_TREE), 1)) {
		uint64_t root = o->node[1];
		uint64_t sum = (uint64_t)tlb_order_key(root) +
			       tlb_policy_work_estimate(p, req);

		if (__builtin_expect(sum < TLB_KEY_MAX &&
					     o->stamp < TLB_ORDER_STAMP_END,
				     1))
			return tree_pick(o, lv, tlb_order_core(root),
					 (uint32_t)sum);
	}
	return jlq_pick_slow(p, lv, req);
}

const struct tlb_policy_ops tlb_policy_jlq = {
	.name = "jlq",
	.summary = "least outstanding work (service-time hints)",
	.pick = jlq_pick,
};
