/* SPDX-License-Identifier: BSD-3-Clause
 * Loading arrival traces for turbolb-sim --trace.
 */
#ifndef TURBOLB_SIM_TRACE_H
#define TURBOLB_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

/* A loaded trace and the memory behind it. */
struct tlb_sim_trace_buf {
	struct tlb_sim_trace trace;
	uint64_t *arrival_ns;
	uint32_t *service_ns;
};

/* Reads "ARRIVAL SERVICE" lines. Returns 0, or -1 with err filled
 * (FILE:LINE for syntax errors). */
int tlb_sim_trace_load(const char *path, struct tlb_sim_trace_buf *t, char *err,
		       size_t errlen);

void tlb_sim_trace_free(struct tlb_sim_trace_buf *t);

#endif /* TURBOLB_SIM_TRACE_H */
