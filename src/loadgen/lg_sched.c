/* SPDX-License-Identifier: BSD-3-Clause
 * Arrival schedule of the open-loop sender.
 *
 * Offsets are doubles in ticks: 2^53 ticks of a 3 GHz TSC are five weeks,
 * so rounding never matters, and fractional gaps (rates above a tick's
 * worth) add up correctly instead of being truncated one by one.
 */
#include "lg.h"

void
lg_sched_init(struct lg_sched *s, enum lg_arrival arrival, double rate,
	      double hz, uint64_t seed)
{
	s->arrival = arrival;
	s->gap = hz / rate;
	s->next = 0.0;
	s->index = 0;
	tlb_rng_seed(&s->rng, seed);
}

double
lg_sched_pop(struct lg_sched *s)
{
	double t = s->next;

	s->index++;
	if (s->arrival == LG_ARRIVAL_FIXED)
		/* From the index, not by adding gaps: no drift at all. */
		s->next = (double)s->index * s->gap;
	else
		s->next = t + tlb_exp_sample(&s->rng, s->gap);
	return t;
}
