/* SPDX-License-Identifier: BSD-3-Clause
 * jsq: join the shortest queue, the core with the fewest outstanding
 * requests (Turbo's dynamic balancing). Ties rotate over the cores.
 */
#include "policy_impl.h"

static int
jsq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	(void)req;
	return tlb_argmin(p, lv, TLB_METRIC_REQUESTS, UINT64_MAX);
}

static const struct tlb_policy_param *const jsq_params[] = {
	&tlb_param_prefer_running,
	NULL,
};

const struct tlb_policy_ops tlb_policy_jsq = {
	.name = "jsq",
	.summary = "fewest outstanding requests",
	.params = jsq_params,
	.pick = jsq_pick,
};
