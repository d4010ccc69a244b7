/* SPDX-License-Identifier: BSD-3-Clause
 * jlq: join the least-loaded queue, the core with the least outstanding
 * work in ns (Turbo's work-aware variant). A request's work is its service
 * time hint, or its class's running average of observed service times
 * (tlb_policy_work_estimate), charged at dispatch and echoed back.
 *
 * jlq keeps the cores in order of outstanding work (struct tlb_order,
 * its state, src/lib/order.h): a sorted list up to TLB_ORDER_CORES cores, a
 * tournament tree over that. Its dispatch (the pick and the charge
 * together, as the datapath calls it) takes the first core, moves it where
 * the key the request gives it goes, and writes the same key into the
 * view, so the order stays exact; it is made again from the load view
 * whenever anything else wrote a key. The pick is then the head, not a
 * scan of the keys the last dispatch wrote, and consecutive picks neither
 * wait for each other nor check what the last one left
 * (docs/performance.md, "jlq's order and tree"). Ties go to the core
 * picked longest ago (each pick takes a stamp); before the first pick the
 * cores go in rotation from the cursor. With prefer_running, jlq is the
 * scan of tlb_argmin() (ties rotate).
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
	o->gen = lv->key_gen;
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
 * Then each core keeps its stamp, and so its place among equal loads, and
 * only the paths of the keys that changed are walked: after a burst of
 * responses a few cores of many. */
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
			tlb_order_set(o, i,
				      (uint64_t)lv->key_work[i] << 32 |
					      (uint32_t)leaf[i]);
	o->gen = lv->key_gen;
}

/* ---- the pick ---- */

/* The order is exact for the view as it is: made from it, and no key was
 * written since but by jlq's own dispatches. (The list or the tree: the
 * policy's n_cores says which.) */
static inline bool
order_exact(const struct tlb_order *o, const struct tlb_load_view *lv)
{
	return o->gen == lv->key_gen && o->lv == lv;
}

/* The head, core i, goes on with key x (at least its own) and a stamp
 * newer than any other: behind every core of key <= x. */
static inline __attribute__((always_inline)) void
list_move(struct tlb_order *o, uint32_t i, uint32_t x)
{
	tlb_order_take(o, x);
	o->picked[i] = o->stamp++;
}

static inline __attribute__((always_inline)) void
tree_move(struct tlb_order *o, uint32_t i, uint32_t x)
{
	tlb_order_set(o, i, tlb_order_value(x, (uint32_t)o->stamp++, i));
}

static inline int
jlq_scan(struct tlb_policy *p, const struct tlb_load_view *lv)
{
	return tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX);
}

/* The pick of pick() and of every dispatch but the common one, out of
 * line so that the common one calls nothing: the order made again if it
 * is not exact (stamps renewed in the tree), the head's key plus add
 * (saturated) as its new key; a head out of rotation (TLB_KEY_NONE) is
 * no core at all. *ordered: the pick came from the order, not the scan
 * (prefer_running, or a view of another size). */
static __attribute__((noinline)) int
jlq_pick_order(struct tlb_policy *p, const struct tlb_load_view *lv,
	       uint32_t add, bool *ordered)
{
	struct tlb_order *o = tlb_jlq_order(p);
	uint32_t n = p->n_cores, key, i;
	uint64_t x;

	*ordered = lv->n_cores == n && !p->params.prefer_running;
	if (!*ordered)
		return jlq_scan(p, lv);
	if (n <= TLB_ORDER_CORES) {
		if (!order_exact(o, lv))
			list_sort(o, lv, n, p->cursor);
		key = o->key[0];
		i = o->id[0];
	} else {
		if (!order_exact(o, lv) || o->stamp >= TLB_ORDER_STAMP_END)
			tree_sort(o, lv, n, p->cursor);
		key = tlb_order_key(o->node[1]);
		i = tlb_order_core(o->node[1]);
	}
	if (key == TLB_KEY_NONE)
		return TLB_PICK_NONE;
	x = (uint64_t)key + add;
	if (x > TLB_KEY_MAX)
		x = TLB_KEY_MAX;
	if (n <= TLB_ORDER_CORES)
		list_move(o, i, (uint32_t)x);
	else
		tree_move(o, i, (uint32_t)x);
	return (int)i;
}

/* pick() alone changes no key: the head goes behind its equals, and the
 * order stays exact. */
static int
jlq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	bool ordered;

	(void)req;
	return jlq_pick_order(p, lv, 0, &ordered);
}

/* The head's dispatch, its key x foreseen: what tlb_lv_on_dispatch()
 * would write. The order was moved with it, so it stays exact. */
static inline __attribute__((always_inline)) int
charge_head(struct tlb_order *o, struct tlb_load_view *lv, uint32_t i,
	    uint32_t work_ns, uint32_t x)
{
	tlb_lv_on_dispatch_key(lv, i, work_ns, x);
	o->gen = lv->key_gen;
	return (int)i;
}

/* Every dispatch but the common one, out of line (the fast path then
 * saves no registers): the pick, its charge, and the order exact again
 * if the pick came from it, for the view took the key the head was moved
 * with. */
static __attribute__((noinline)) int
jlq_dispatch_slow(struct tlb_policy *p, struct tlb_load_view *lv,
		  uint32_t work_ns)
{
	bool ordered;
	int c = jlq_pick_order(p, lv, work_ns, &ordered);

	if (c >= 0) {
		tlb_lv_on_dispatch(lv, (uint32_t)c, work_ns);
		if (ordered)
			tlb_jlq_order(p)->gen = lv->key_gen;
	}
	return c;
}

/* Nearly every request: the order is exact, the head takes the request
 * and goes on with its key plus work_ns (the list's step, or the tree's
 * path), and the view gets the same key, so the next pick trusts the
 * order again without looking at the keys. A key that would saturate,
 * and in the tree stamps to renew, go the long way. */
static int
jlq_dispatch(struct tlb_policy *p, struct tlb_load_view *lv,
	     const struct tlb_request_info *req, uint32_t work_ns)
{
	struct tlb_order *o = tlb_jlq_order(p);

	(void)req;
	if (__builtin_expect(order_exact(o, lv), 1)) {
		if (p->n_cores <= TLB_ORDER_CORES) {
			uint64_t x = (uint64_t)o->key[0] + work_ns;
			uint32_t i = o->id[0];

			if (__builtin_expect(x < TLB_KEY_MAX, 1)) {
				list_move(o, i, (uint32_t)x);
				return charge_head(o, lv, i, work_ns,
						   (uint32_t)x);
			}
		} else {
			uint64_t root = o->node[1];
			uint64_t x = (uint64_t)tlb_order_key(root) + work_ns;
			uint32_t i = tlb_order_core(root);

			if (__builtin_expect(
				    x < TLB_KEY_MAX &&
					    o->stamp < TLB_ORDER_STAMP_END,
				    1)) {
				tree_move(o, i, (uint32_t)x);
				return charge_head(o, lv, i, work_ns,
						   (uint32_t)x);
			}
		}
	}
	return jlq_dispatch_slow(p, lv, work_ns);
}

static const struct tlb_policy_param *const jlq_params[] = {
	&tlb_param_prefer_running,
	NULL,
};

const struct tlb_policy_ops tlb_policy_jlq = {
	.name = "jlq",
	.summary = "least outstanding work (service-time hints)",
	.params = jlq_params,
	.pick = jlq_pick,
	.dispatch = jlq_dispatch,
};
