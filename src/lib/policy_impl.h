/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the policy descriptors, one per src/lib/policy_<name>.c, and
 * what several of them share.
 */
#ifndef TURBOLB_POLICY_IMPL_H
#define TURBOLB_POLICY_IMPL_H

#include "turbolb/policy.h"
#include "argmin.h"

extern const struct tlb_policy_ops tlb_policy_rss;
extern const struct tlb_policy_ops tlb_policy_rr;
extern const struct tlb_policy_ops tlb_policy_random;
extern const struct tlb_policy_ops tlb_policy_pod;
extern const struct tlb_policy_ops tlb_policy_jsq;
extern const struct tlb_policy_ops tlb_policy_jlq;
extern const struct tlb_policy_ops tlb_policy_jbsq;

/* A policy's own state: p->state as the policy file's struct type. Only
 * that file (and its internal header) reads it. */
#define TLB_POLICY_STATE(p, type) ((type *)(void *)(p)->state)
/* At file scope in the policy's file: its state fits in p->state. */
#define TLB_POLICY_STATE_FITS(type)                                            \
	_Static_assert(sizeof(type) <= TLB_POLICY_STATE_SIZE &&                \
			       _Alignof(type) <= 64,                           \
		       #type " fits in struct tlb_policy's state")

/* Parameters several policies read, described once. */
extern const struct tlb_policy_param tlb_param_seed;           /* random.c */
extern const struct tlb_policy_param tlb_param_prefer_running; /* policy.c */

/* A uniformly random eligible core, or -1 if none: a blind draw first
 * (usually eligible), then the k-th eligible core, which keeps the choice
 * uniform over eligible cores. */
int tlb_policy_random_eligible(struct tlb_policy *p,
			       const struct tlb_load_view *lv);

/* ---- the argmin of jsq, jlq and jbsq (tlb_argmin() below) ----
 * Inline here so that each policy's pick gets a copy with its metric and
 * bound folded in, and no call. */

enum tlb_metric { TLB_METRIC_REQUESTS, TLB_METRIC_WORK };

/* tlb_argmin() for everything but its common case, out of line. */
int tlb_argmin_slow(struct tlb_policy *p, const struct tlb_load_view *lv,
		    enum tlb_metric metric, uint64_t limit);

/* Index of the eligible core with the smallest metric (outstanding
 * requests, or outstanding work), bounded by limit (exclusive; UINT64_MAX
 * for none); ties are broken by rotating the start of the scan. With
 * prefer_running, a running core wins among cores with the minimal metric.
 * Returns TLB_PICK_NONE if no core is eligible, TLB_PICK_HOLD if none of
 * the eligible ones is under limit (never without a limit). */
static inline __attribute__((always_inline)) int
tlb_argmin(struct tlb_policy *p, const struct tlb_load_view *lv,
	   enum tlb_metric metric, uint64_t limit)
{
	uint32_t n = p->n_cores;
	uint32_t start = p->cursor; /* < n: only this and rr move it */
	uint32_t best;
	int best_i;

	/* The common case: outstanding requests (jsq, jbsq; jlq keeps its
	 * own order and scans only with prefer_running), no
	 * prefer_running, and a view of the policy's own size (the keys are
	 * scanned a line at a time, so a larger view's cores would be
	 * seen). */
	if (__builtin_expect(p->params.prefer_running ||
				     metric != TLB_METRIC_REQUESTS ||
				     lv->n_cores != n,
			     0))
		return tlb_argmin_slow(p, lv, metric, limit);
	/* Rotating the scan's start makes ties go round the cores instead of
	 * always to the lowest index. */
	p->cursor = start + 1 == n ? 0 : start + 1;
	/* On the view's dense keys, where a core out of rotation is
	 * TLB_KEY_NONE: src/lib/argmin.h. jsq's loads tie as a rule, so
	 * the start is tried first. */
	best_i = tlb_keys_argmin(lv->key_req, n, start, true, &best);
	if (best_i < 0)
		return TLB_PICK_NONE;
	/* The bound is on the metric: if the least loaded core is at it,
	 * every core is. */
	return best < limit ? best_i : TLB_PICK_HOLD;
}

#endif /* TURBOLB_POLICY_IMPL_H */
