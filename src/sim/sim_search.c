/* SPDX-License-Identifier: BSD-3-Clause
 * The SLO search: the highest load whose p99 stays within a multiple of the
 * mean service time.
 */
#include <stdio.h>

#include "sim.h"

/* A load passes when its p99 meets the SLO and nothing was dropped: a
 * policy must not look better by shedding what it cannot serve. */
static int
evaluate(const struct tlb_sim_params *base, double load, double slo_ns,
	 struct tlb_sim_result *r, bool *pass, char *err, size_t errlen)
{
	struct tlb_sim_params p = *base;

	p.load = load;
	if (tlb_sim_run(&p, r, NULL) != 0) {
		snprintf(err, errlen, "%s", r->err);
		return -1;
	}
	*pass = r->dropped == 0 && r->measured > 0 &&
		(double)r->p99_ns <= slo_ns;
	return 0;
}

int
tlb_sim_max_load(const struct tlb_sim_params *p, double multiple,
		 struct tlb_sim_slo *out, char *err, size_t errlen)
{
	struct tlb_sim_result r;
	double lo = 0.0, hi = TLB_SIM_SLO_LOAD_MAX;
	bool pass;

	out->multiple = multiple;
	out->slo_ns = multiple * tlb_sim_mean_service_ns(p);
	out->max_load = 0.0;
	out->max_throughput_mrps = 0.0;
	out->p99_ns = 0;
	out->evaluations = 0;
	if (p->trace != NULL) {
		snprintf(err, errlen,
			 "the SLO search varies the load; a trace fixes it");
		return -1;
	}
	if (!(multiple > 0.0)) {
		snprintf(err, errlen, "SLO multiple must be > 0");
		return -1;
	}

	out->evaluations++;
	if (evaluate(p, hi, out->slo_ns, &r, &pass, err, errlen) != 0)
		return -1;
	if (pass) {
		out->max_load = hi;
		out->max_throughput_mrps = r.throughput_mrps;
		out->p99_ns = r.p99_ns;
		return 0;
	}
	for (unsigned int i = 0; i < TLB_SIM_SLO_STEPS; i++) {
		double mid = (lo + hi) / 2.0;

		out->evaluations++;
		if (evaluate(p, mid, out->slo_ns, &r, &pass, err, errlen) != 0)
			return -1;
		if (pass) {
			lo = mid;
			out->max_load = mid;
			out->max_throughput_mrps = r.throughput_mrps;
			out->p99_ns = r.p99_ns;
		} else {
			hi = mid;
		}
	}
	return 0;
}
