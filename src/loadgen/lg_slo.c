/* SPDX-License-Identifier: BSD-3-Clause
 * The SLO search: the highest throughput whose p99 stays within a multiple
 * of the mean service time, with nothing lost (the Turbo paper's measure,
 * at 10x and 30x).
 *
 * Bisection on the offered rate, assuming that a rate meets the SLO when a
 * higher one does. Real measurements are noisy and need not be monotonic;
 * the search still ends after a fixed number of points and reports the
 * best point that passed, so noise costs precision, never termination.
 */
#include "lg.h"

bool
lg_slo_pass(const struct lg_slo_sample *s, double slo_ns)
{
	/* A point without a single response says nothing about latency. */
	return s->lost == 0 && s->achieved_rps > 0.0 && s->p99_ns <= slo_ns;
}

/* Measures one rate; on a pass, keeps it if it beat the best so far.
 * Returns 1 on a pass, 0 on a fail, -1 on abort. */
static int
probe(const struct lg_slo_cfg *cfg, lg_measure_fn measure, void *ctx,
      double rate, struct lg_slo_result *res)
{
	struct lg_slo_sample s = {0};

	if (measure(ctx, rate, &s) != 0) {
		res->aborted = true;
		return -1;
	}
	res->points++;
	if (!lg_slo_pass(&s, cfg->slo_ns))
		return 0;
	if (!res->found || s.achieved_rps > res->max_rps) {
		res->found = true;
		res->max_rps = s.achieved_rps;
		res->best_offered_rps = rate;
		res->best_p99_ns = s.p99_ns;
	}
	return 1;
}

int
lg_slo_search(const struct lg_slo_cfg *cfg, lg_measure_fn measure, void *ctx,
	      struct lg_slo_result *res)
{
	double good = cfg->lo, bad = cfg->hi;
	int rc;

	*res = (struct lg_slo_result){.slo_ns = cfg->slo_ns};
	rc = probe(cfg, measure, ctx, good, res);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		/* Even the lowest rate fails: nothing to bisect. */
		res->fail_rps = good;
		return 0;
	}
	res->pass_rps = good;
	if (bad <= good)
		return 0;
	rc = probe(cfg, measure, ctx, bad, res);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		res->pass_rps = bad;
		res->at_max = true;
		return 0;
	}
	for (uint32_t i = 0; i < cfg->iterations; i++) {
		double mid = good + (bad - good) / 2.0;

		/* Below a request per second apart there is nothing to
		 * learn: the achieved rates differ by more than that. */
		if (bad - good < 1.0)
			break;
		rc = probe(cfg, measure, ctx, mid, res);
		if (rc < 0)
			break;
		if (rc > 0)
			good = mid;
		else
			bad = mid;
	}
	res->pass_rps = good;
	res->fail_rps = bad;
	return rc < 0 ? -1 : 0;
}
