/* SPDX-License-Identifier: BSD-3-Clause
 * Service-time distributions, shared by the load generator and the
 * simulator. Spec syntax (times take ns, us, ms or s; a bare number is ns):
 *   fixed:T  exp:MEAN  uniform:A:B  normal:MEAN:SD (truncated at 0)
 *   bimodal:P:A:B (A with probability P, else B)  lognormal:MEAN:SD
 */
#ifndef TURBOLB_DIST_H
#define TURBOLB_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "turbolb/rng.h"

enum tlb_dist_kind {
	TLB_DIST_FIXED,
	TLB_DIST_EXP,
	TLB_DIST_UNIFORM,
	TLB_DIST_NORMAL,
	TLB_DIST_BIMODAL,
	TLB_DIST_LOGNORMAL,
};

struct tlb_dist {
	enum tlb_dist_kind kind;
	double a, b, p;   /* parameters in ns (p: bimodal probability) */
	double mu, sigma; /* lognormal: parameters of the underlying normal */
};

/* Parses spec; returns 0 or -1 with err filled ("exp:1us" -> mean 1000). */
int tlb_dist_parse(const char *spec, struct tlb_dist *d, char *err,
		   size_t errlen);

/* Parses a time with unit ("250ns", "1.5us", "2ms", "1s", "100") into ns;
 * returns 0 or -1. */
int tlb_parse_time_ns(const char *s, double *ns);

/* One sample in ns (>= 0). */
double tlb_dist_sample(const struct tlb_dist *d, struct tlb_rng *r);

/* Analytic mean and variance (ns, ns^2); for the truncated normal, those of
 * the truncated distribution. */
double tlb_dist_mean(const struct tlb_dist *d);
double tlb_dist_variance(const struct tlb_dist *d);

/* One exponential sample with the given mean (inter-arrival times). */
double tlb_exp_sample(struct tlb_rng *r, double mean);

/* Writes the canonical spec into buf ("exp:1000ns"). */
void tlb_dist_format(const struct tlb_dist *d, char *buf, size_t len);

#endif /* TURBOLB_DIST_H */
