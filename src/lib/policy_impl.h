/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the policy descriptors, one per src/lib/policy_<name>.c.
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

#endif /* TURBOLB_POLICY_IMPL_H */
