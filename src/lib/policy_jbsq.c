/* SPDX-License-Identifier: BSD-3-Clause
 * jbsq: join the shortest queue, bounded at k outstanding per core. When
 * every eligible core holds k, the request is held (TLB_PICK_HOLD): the
 * caller keeps it in its NIC-side FIFO and asks again as credits return,
 * so queueing happens centrally, close to the cFCFS ideal.
 */
#include "policy_impl.h"

static const struct tlb_policy_param jbsq_k = TLB_POLICY_PARAM_UINT(
	"k", k, 1, UINT16_MAX, 2,
	"`jbsq`: bound on requests outstanding per core; beyond it requests "
	"wait in the FIFO");

static const struct tlb_policy_param *const jbsq_params[] = {
	&jbsq_k,
	&tlb_param_prefer_running,
	NULL,
};

static void
jbsq_init(struct tlb_policy *p)
{
	p->bound = p->params.k;
}

static int
jbsq_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	  const struct tlb_request_info *req)
{
	(void)req;
	return tlb_argmin(p, lv, TLB_METRIC_REQUESTS, p->params.k);
}

const struct tlb_policy_ops tlb_policy_jbsq = {
	.name = "jbsq",
	.summary = "shortest queue bounded at k, else hold (jbsq:K)",
	.params = jbsq_params,
	.spec_param = &jbsq_k,
	.init = jbsq_init,
	.pick = jbsq_pick,
};
