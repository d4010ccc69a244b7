/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TURBOLBD_EAL_H
#define TURBOLBD_EAL_H

#include "turbolb/config.h"

/* Builds the EAL argument list from cfg followed by the command line's
 * overrides, logs it to stderr, keeps this thread (and so DPDK's control
 * threads) off the datapath lcores, and calls rte_eal_init. Returns 0 or
 * -1. */
int tlb_eal_init(const struct tlb_config *cfg, const char *prog, int n_over,
		 char **over);

#endif /* TURBOLBD_EAL_H */
