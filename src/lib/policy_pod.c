/* SPDX-License-Identifier: BSD-3-Clause
 * pod: power of d choices. Sample d eligible cores at random and take the
 * one with the fewest outstanding requests (first sampled on a tie).
 */
#include <stdio.h>

#include "policy_impl.h"

#define POD_MAX_D 16u

static int
pod_check(const struct tlb_policy_params *params, char *err, size_t errlen)
{
	if (params->d < 2 || params->d > POD_MAX_D) {
		snprintf(err, errlen, "pod: d=%u (must be 2..%u)", params->d,
			 POD_MAX_D);
		return -1;
	}
	return 0;
}

static int
pod_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	int best = -1;
	uint64_t best_out = UINT64_MAX;

	(void)req;
	for (uint32_t j = 0; j < p->params.d; j++) {
		int i = tlb_policy_random_eligible(p, lv);

		if (i < 0)
			return TLB_PICK_NONE;
		uint64_t out = tlb_lv_outstanding(lv, (uint32_t)i);
		if (out < best_out) {
			best_out = out;
			best = i;
		}
	}
	return best;
}

const struct tlb_policy_ops tlb_policy_pod = {
	.name = "pod",
	.summary = "power of d choices on outstanding requests (pod:D)",
	.check = pod_check,
	.pick = pod_pick,
};
