/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the policy descriptors, one per src/lib/policy_<name>.c, and
 * what several of them share.
 */
#ifndef TURBOLB_POLICY_IMPL_H
#define TURBOLB_POLICY_IMPL_H

#include "turbolb/policy.h"

extern const struct tlb_policy_ops tlb_policy_rss;
extern const struct tlb_policy_ops tlb_policy_rr;
extern const struct tlb_policy_ops tlb_policy_random;
extern const struct tlb_policy_ops tlb_policy_pod;
extern const struct tlb_policy_ops tlb_policy_jsq;
extern const struct tlb_policy_ops tlb_policy_jlq;
extern const struct tlb_policy_ops tlb_policy_jbsq;

/* A uniformly random eligible core, or -1 if none: a blind draw first
 * (usually eligible), then the k-th eligible core, which keeps the choice
 * uniform over eligible cores. */
int tlb_policy_random_eligible(struct tlb_policy *p,
			       const struct tlb_load_view *lv);

/* ---- the argmin of jsq, jlq and jbsq (tlb_argmin() below) ----
 * Inline here so that each policy's pick gets a copy with its metric and
 * bound folded in, and no call. */

enum tlb_metric { TLB_METRIC_REQUESTS, TLB_METRIC_WORK };

void tlb_min_tree_build(struct tlb_min_tree *t, const struct tlb_load_view *lv,
			const uint64_t *key, uint32_t n);
int tlb_argmin_general(const struct tlb_load_view *lv, uint32_t n,
		       uint32_t start, enum tlb_metric metric, uint64_t limit,
		       bool prefer_running, bool *any_eligible);

/* The common case (no prefer_running, and a bound only on the metric
 * scanned) works on the view's dense keys, where ineligible cores are
 * UINT64_MAX: the minimum, then the first core at or after the rotating
 * start that has it. Up to TREE_MIN_CORES cores a plain scan does both
 * (about three instructions a core: four independent chains). Above, the
 * tree of struct tlb_min_tree keeps the minimum at hand: between two
 * picks usually one key changed (the core picked last), a path of log2 n
 * nodes; and it finds the core in log2 n steps when it is not among the
 * first few from the start. Measured with callgrind in docs/performance.md:
 * below about 12 cores the scan is cheaper. */
#define TREE_MIN_CORES 12u
#define FIND_NEAR 2u /* cores tried from the start before the tree */

static inline uint64_t
min2(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t
scan_min(const uint64_t *key, uint32_t n)
{
	uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX;
	uint64_t m2 = UINT64_MAX, m3 = UINT64_MAX;
	size_t i = 0;

	/* size_t: no zero-extension of the index on every load */
	for (; i + 4 <= n; i += 4) {
		m0 = min2(key[i], m0);
		m1 = min2(key[i + 1], m1);
		m2 = min2(key[i + 2], m2);
		m3 = min2(key[i + 3], m3);
	}
	for (; i < n; i++)
		m0 = min2(key[i], m0);
	return min2(min2(m0, m1), min2(m2, m3));
}

static inline int
scan_find(const uint64_t *key, uint32_t start, uint32_t n, uint64_t v)
{
	for (size_t i = start; i < n; i++)
		if (key[i] == v)
			return (int)i;
	for (size_t i = 0; i < start; i++)
		if (key[i] == v)
			return (int)i;
	return -1;
}

static inline void
tree_update(struct tlb_min_tree *t, uint32_t i)
{
	size_t j = t->size + i;
	uint64_t v = t->key[i];

	if (t->node[j] == v)
		return;
	t->node[j] = v;
	/* Up to the root, or to the first node whose minimum stays. */
	for (j >>= 1; j >= 1; j >>= 1) {
		v = min2(t->node[2 * j], t->node[2 * j + 1]);
		if (t->node[j] == v)
			break;
		t->node[j] = v;
	}
}

static inline uint64_t
tree_min(struct tlb_min_tree *t, const struct tlb_load_view *lv,
	 const uint64_t *key, uint32_t n)
{
	uint64_t gen = lv->keys_gen;

	/* key points into lv: the same keys are the same view and metric */
	if (__builtin_expect(t->key != key || t->lv_id != lv->id ||
			     t->n != n ||
			     gen - t->gen > TLB_LV_LOG, 0)) {
		tlb_min_tree_build(t, lv, key, n);
	} else {
		for (uint64_t g = t->gen; g != gen; g++) {
			uint32_t i = lv->keys_log[g % TLB_LV_LOG];

			if (i < n)
				tree_update(t, i);
		}
		t->gen = gen;
	}
	return t->node[1];
}

/* The first leaf at or after start holding v, the minimum (node[1]), or
 * else the first leaf holding it at all. Where it lies depends on the
 * data (with jlq's mostly unique minima, anywhere), so the climb is one
 * loop of fixed length (log2 n levels) rather than a walk that stops
 * where the data says: of the subtrees just right of the path from the
 * start leaf up (the leaf itself first), the lowest holding v is kept;
 * none: the root. Then down its leftmost path holding v. By callgrind's
 * branch simulation (--branch-sim=yes) a jlq request at 16 cores had 5.5
 * mispredicted branches with the walk and 3.2 with this (jsq: 1.2);
 * forcing the choice into masks cut that to 1.9 but ran no faster. */
static inline int
tree_find_from(const struct tlb_min_tree *t, uint32_t start, uint64_t v)
{
	size_t j = t->size + start;
	size_t at = t->node[j] == v ? j : 0;

	for (; j > 1; j >>= 1) {
		/* j | 1: the right sibling of a left child (a right child
		 * reads itself, and is not taken) */
		bool take = (at == 0) & !(j & 1) & (t->node[j | 1] == v);

		at = take ? j | 1 : at;
	}
	if (at == 0)
		at = 1;
	while (at < t->size)
		at = 2 * at + (t->node[2 * at] != v);
	return (int)(at - t->size);
}

static inline int
tree_find(const struct tlb_min_tree *t, const uint64_t *key, uint32_t start,
	  uint32_t n, uint64_t v)
{
	for (uint32_t j = 0, k = start; j < FIND_NEAR; j++) {
		if (key[k] == v)
			return (int)k;
		k = k + 1 == n ? 0 : k + 1;
	}
	return tree_find_from(t, start, v);
}

/* Index of the eligible core with the smallest metric (outstanding
 * requests, or outstanding work), bounded by limit (exclusive; UINT64_MAX
 * for none); ties are broken by rotating the start of the scan. With
 * prefer_running, a running core wins among cores with the minimal metric.
 * Returns -1 if no eligible core is under limit; *any_eligible tells
 * whether any eligible core existed at all. */
static inline __attribute__((always_inline)) int
tlb_argmin(struct tlb_policy *p, const struct tlb_load_view *lv,
	   enum tlb_metric metric, uint64_t limit, bool *any_eligible)
{
	uint32_t n = p->n_cores < lv->n_cores ? p->n_cores : lv->n_cores;
	uint32_t start = p->cursor;
	const uint64_t *key;
	uint64_t best;
	int best_i = -1;

	if (n == 0) {
		*any_eligible = false;
		return -1;
	}
	/* Rotating the scan's start makes ties go round the cores instead of
	 * always to the lowest index. */
	p->cursor = start + 1 >= n ? 0 : start + 1;
	if (start >= n)
		start = 0;
	if (__builtin_expect(p->params.prefer_running ||
				     (metric != TLB_METRIC_REQUESTS &&
				      limit != UINT64_MAX), 0))
		return tlb_argmin_general(lv, n, start, metric, limit,
					  p->params.prefer_running,
					  any_eligible);
	key = metric == TLB_METRIC_WORK ? lv->key_work : lv->key_req;
	if (n <= TREE_MIN_CORES) {
		best = scan_min(key, n);
		if (best != UINT64_MAX)
			best_i = scan_find(key, start, n, best);
	} else {
		best = tree_min(&p->tree, lv, key, n);
		if (best != UINT64_MAX)
			best_i = tree_find(&p->tree, key, start, n, best);
	}
	/* Only ineligible cores are UINT64_MAX. */
	*any_eligible = best_i >= 0;
	/* The bound is on the metric: if the least loaded core is at it,
	 * every core is. */
	return best < limit ? best_i : -1;
}

#endif /* TURBOLB_POLICY_IMPL_H */
