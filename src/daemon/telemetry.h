/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TURBOLBD_TELEMETRY_H
#define TURBOLBD_TELEMETRY_H

#include <stdint.h>

#include "turbolb/metrics.h"
#include "turbolb/telemetry_cores.h"

/* Hands every key of /turbolb/stats and its value to s, in the order the
 * command lists them: the counters summed over the dispatchers, read
 * with relaxed loads (any thread; the dispatchers must exist). */
void tlb_telemetry_stats(const struct tlb_tel_sink *s);

/* Host core i of dispatcher n (tlb_dps[n]), as it is now. */
void tlb_telemetry_read_core(unsigned int n, uint32_t i,
			     struct tlb_tel_core *row);

/* The residence histogram summed over the dispatchers (relaxed loads). */
void tlb_telemetry_residence(struct tlb_metric_hist *h);

/* Registers the /turbolb/... commands. Returns 0 or -1. */
int tlb_telemetry_register(void);

#endif /* TURBOLBD_TELEMETRY_H */
