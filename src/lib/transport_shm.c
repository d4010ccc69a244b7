/* SPDX-License-Identifier: BSD-3-Clause
 * The shared-memory host transport: the credit ring, where the NIC side
 * and the host share one memory (the emulated topology; a host-side NIC
 * deployment). Each operation is the credit ring's own, the fault
 * handling included (credit_ring.h: a SIGBUS guard, validation in the
 * drain, tlb_cr_check for the control thread).
 */
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "turbolb/transport.h"
#include "transport_impl.h"

struct shm_transport {
	struct tlb_transport t;
	struct tlb_cr *cr;
	bool owned; /* created here: destroyed (and unlinked) on close */
};

/* The transport and its implementation are one block, one pointer. */
static_assert(offsetof(struct shm_transport, t) == 0,
	      "struct tlb_transport must come first");

static unsigned int
shm_drain(void *ctx, uint32_t core, struct tlb_credit *out, unsigned int max)
{
	return tlb_cr_drain(ctx, core, out, max);
}

static uint32_t
shm_drain_sums(void *ctx, const uint32_t *core, uint32_t n, unsigned int max,
	       struct tlb_credit_sum *out)
{
	return tlb_cr_drain_sums(ctx, core, n, max, out);
}

static enum tlb_core_run_state
shm_state(const void *ctx, uint32_t core)
{
	return tlb_cr_state(ctx, core);
}

static uint64_t
shm_host_epoch(const void *ctx)
{
	return tlb_cr_host_epoch(ctx);
}

static void
shm_doorbell(void *ctx, uint32_t core)
{
	tlb_cr_ring_doorbell(ctx, core);
}

static void
shm_core_info(const void *ctx, uint32_t core,
	      struct tlb_transport_core_info *out)
{
	out->tid = tlb_cr_tid(ctx, core, NULL);
	out->off_cpu = (tlb_cr_sched(ctx, core) & TLB_CR_SCHED_OFF_CPU) != 0;
	tlb_cr_kick_stats(ctx, core, &out->kick);
}

static unsigned int
shm_check(void *ctx, tlb_cr_log_fn *log, void *arg)
{
	return tlb_cr_check(ctx, log, arg);
}

static void
shm_faults(const void *ctx, struct tlb_cr_faults *out)
{
	tlb_cr_faults(ctx, out);
}

static bool
shm_fallback(const void *ctx, uint32_t core)
{
	return tlb_cr_fallback(ctx, core);
}

static void
shm_set_inband_fallback(void *ctx, bool on)
{
	tlb_cr_set_inband_fallback(ctx, on);
}

/* What it created, it destroys. */
static void
shm_close(struct tlb_transport *t)
{
	struct shm_transport *s = (struct shm_transport *)t;

	if (s->owned)
		tlb_cr_destroy(s->cr, true);
	free(s);
}

static const struct tlb_transport_ops shm_ops = {
	.name = "shm",
	.drain = shm_drain,
	.drain_sums = shm_drain_sums,
	.state = shm_state,
	.host_epoch = shm_host_epoch,
	.doorbell = shm_doorbell,
	.core_info = shm_core_info,
	.check = shm_check,
	.faults = shm_faults,
	.fallback = shm_fallback,
	.set_inband_fallback = shm_set_inband_fallback,
	.close = shm_close,
};

static int
shm_new(struct tlb_cr *cr, bool owned, struct tlb_transport **out, char *err,
	size_t errlen)
{
	struct shm_transport *s;

	s = (struct shm_transport *)tlb_transport_alloc(sizeof(*s), &shm_ops,
							cr, tlb_cr_n_cores(cr),
							true, err, errlen);
	if (s == NULL)
		return -1;
	s->cr = cr;
	s->owned = owned;
	*out = &s->t;
	return 0;
}

int
tlb_transport_shm_create(const char *name, uint32_t n_cores, uint32_t ring_size,
			 mode_t mode, gid_t gid, struct tlb_transport **out,
			 char *err, size_t errlen)
{
	struct tlb_cr *cr;

	if (tlb_cr_create_group(name, n_cores, ring_size, mode, gid, &cr, err,
				errlen) != 0)
		return -1;
	if (shm_new(cr, true, out, err, errlen) != 0) {
		tlb_cr_destroy(cr, true);
		return -1;
	}
	return 0;
}

int
tlb_transport_shm_wrap(struct tlb_cr *cr, struct tlb_transport **out, char *err,
		       size_t errlen)
{
	return shm_new(cr, false, out, err, errlen);
}
