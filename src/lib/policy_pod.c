/* SPDX-License-Identifier: BSD-3-Clause
 * pod: power of d choices. Sample d eligible cores at random and take the
 * one with the fewest outstanding requests (first sampled on a tie).
 */
#include "policy_impl.h"

static const struct tlb_policy_param pod_d = TLB_POLICY_PARAM_UINT(
	"d", d, 2, 16, 2, "`pod`: cores sampled per request");

static const struct tlb_policy_param *const pod_params[] = {
	&pod_d,
	&tlb_param_seed,
	NULL,
};

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
	.params = pod_params,
	.spec_param = &pod_d,
	.pick = pod_pick,
};
