/* SPDX-License-Identifier: BSD-3-Clause
 * rr: round robin over eligible cores, blind to load.
 */
#include "policy_impl.h"

static int
rr_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	const struct tlb_request_info *req)
{
	uint32_t n = p->n_cores;
	uint32_t i = p->cursor;

	(void)req;
	for (uint32_t j = 0; j < n; j++, i = i + 1 == n ? 0 : i + 1) {
		if (tlb_lv_eligible(lv, i)) {
			p->cursor = i + 1 == n ? 0 : i + 1;
			return (int)i;
		}
	}
	return TLB_PICK_NONE;
}

const struct tlb_policy_ops tlb_policy_rr = {
	.name = "rr",
	.summary = "round robin over eligible cores",
	.pick = rr_pick,
};
