/* SPDX-License-Identifier: BSD-3-Clause
 * The host transport without host memory: nothing to read, nothing to
 * write. Occupancy comes from the responses the dispatcher counts
 * (host.credits: inband); every core is taken as running (no run state to
 * say otherwise), no host epoch is ever seen (a host restart shows only as
 * responses that stop: liveness marks the core stale) and there is no
 * doorbell. This is the fallback on hardware whose host memory the NIC
 * cannot reach.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/transport.h"
#include "transport_impl.h"

static unsigned int
none_drain(void *ctx, uint32_t core, struct tlb_credit *out, unsigned int max)
{
	(void)ctx;
	(void)core;
	(void)out;
	(void)max;
	return 0;
}

static uint32_t
none_drain_sums(void *ctx, const uint32_t *core, uint32_t n, unsigned int max,
		struct tlb_credit_sum *out)
{
	(void)ctx;
	(void)core;
	(void)n;
	(void)max;
	(void)out;
	return 0;
}

static enum tlb_core_run_state
none_state(const void *ctx, uint32_t core)
{
	(void)ctx;
	(void)core;
	return TLB_RUN_RUNNING;
}

static uint64_t
none_host_epoch(const void *ctx)
{
	(void)ctx;
	return 0;
}

static void
none_core_info(const void *ctx, uint32_t core,
	       struct tlb_transport_core_info *out)
{
	(void)ctx;
	(void)core;
	memset(out, 0, sizeof(*out));
}

/* No host memory: nothing a host can break. */
static void
none_faults(const void *ctx, struct tlb_cr_faults *out)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
}

static bool
none_fallback(const void *ctx, uint32_t core)
{
	(void)ctx;
	(void)core;
	return false;
}

static void
none_close(struct tlb_transport *t)
{
	free(t);
}

static const struct tlb_transport_ops none_ops = {
	.name = "none",
	.drain = none_drain,
	.drain_sums = none_drain_sums,
	.state = none_state,
	.host_epoch = none_host_epoch,
	.doorbell = NULL,
	.core_info = none_core_info,
	.check = NULL,
	.faults = none_faults,
	.fallback = none_fallback,
	.set_inband_fallback = NULL,
	.close = none_close,
};

int
tlb_transport_none_create(uint32_t n_cores, struct tlb_transport **out,
			  char *err, size_t errlen)
{
	struct tlb_transport *t;

	if (n_cores == 0 || n_cores > TLB_CR_MAX_CORES) {
		snprintf(err, errlen,
			 "none transport: %u cores is not in "
			 "1..%u",
			 n_cores, TLB_CR_MAX_CORES);
		return -1;
	}
	t = tlb_transport_alloc(sizeof(*t), &none_ops, NULL, n_cores, false,
				err, errlen);
	if (t == NULL)
		return -1;
	*out = t;
	return 0;
}
