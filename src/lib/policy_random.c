/* SPDX-License-Identifier: BSD-3-Clause
 * random: a uniformly random eligible core, blind to load.
 */
#include "policy_impl.h"

const struct tlb_policy_param tlb_param_seed = TLB_POLICY_PARAM_UINT(
	"seed", seed, 0, UINT64_MAX, 1, "seed of `random` and `pod`");

static const struct tlb_policy_param *const random_params[] = {
	&tlb_param_seed,
	NULL,
};

int
tlb_policy_random_eligible(struct tlb_policy *p, const struct tlb_load_view *lv)
{
	uint32_t n = p->n_cores;
	uint32_t i = tlb_rng_below(&p->rng, n);
	uint32_t eligible = 0;

	if (tlb_lv_eligible(lv, i))
		return (int)i;
	for (i = 0; i < n; i++)
		eligible += tlb_lv_eligible(lv, i);
	if (eligible == 0)
		return -1;
	uint32_t k = tlb_rng_below(&p->rng, eligible);
	for (i = 0; i < n; i++)
		if (tlb_lv_eligible(lv, i) && k-- == 0)
			break;
	return (int)i;
}

static int
random_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	    const struct tlb_request_info *req)
{
	int i = tlb_policy_random_eligible(p, lv);

	(void)req;
	return i < 0 ? TLB_PICK_NONE : i;
}

const struct tlb_policy_ops tlb_policy_random = {
	.name = "random",
	.summary = "uniformly random eligible core",
	.params = random_params,
	.pick = random_pick,
};
