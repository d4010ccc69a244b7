/* SPDX-License-Identifier: BSD-3-Clause
 * jlq: join the least-loaded queue, the core with the least outstanding
 * work in ns (Turbo's work-aware variant). A request's work is its service
 * time hint, or its class's running average of observed service times
 * (tlb_policy_work_estimate), charged at dispatch and echoed back.
 */
#include "policy_impl.h"

static int
jlq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	bool any;
	int i = tlb_argmin(p, lv, TLB_METRIC_WORK, UINT64_MAX, &any);

	(void)req;
	return i < 0 ? TLB_PICK_NONE : i;
}

const struct tlb_policy_ops tlb_policy_jlq = {
	.name = "jlq",
	.summary = "least outstanding work (service-time hints)",
	.pick = jlq_pick,
};
