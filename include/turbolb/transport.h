/* SPDX-License-Identifier: BSD-3-Clause
 * The host transport: what the NIC side learns from the host and tells it,
 * behind one small interface. No DPDK.
 *
 * The dispatcher needs four things from the host: completion credits of
 * each core, each core's run state, the host epoch (a new epoch means the
 * host side restarted: forget what was outstanding) and, for the scheduler
 * kick, a doorbell per core. Where those live depends on the machine:
 *
 *   shm   the credit ring (credit_ring.h) in POSIX shared memory: NIC side
 *         and host share one memory, as in the emulated topology here.
 *   none  no host memory at all: occupancy comes only from counting the
 *         responses that pass back (host.credits: inband); every core is
 *         taken as running, there is no host epoch and no doorbell.
 *   packet no shared memory either: each host core sends what the ring
 *         would carry as feedback frames on its own queue (feedback.h),
 *         which the dispatcher receiving that queue hands to feed(). The
 *         doorbell is a kick frame the dispatcher sends itself (out of
 *         the default target), so the transport has none.
 *
 * On a BlueField the Arm cores do not share memory with the host: a
 * production transport maps the same operations onto DOCA DMA reads of
 * host memory exported with doca_mmap_export, or onto RDMA writes from the
 * host into Arm memory (docs/deployment-bluefield.md). It is one more
 * struct tlb_transport_ops.
 *
 * Threads: drain(core) and drain_sums(cores) are called only by the
 * dispatcher that owns the cores
 * (one consumer per core); state, host_epoch and doorbell by dispatchers;
 * core_info, check and faults by the control thread. An implementation
 * keeps its words single-writer as the credit ring does.
 *
 * Host memory is written by processes the daemon does not trust. Whatever
 * they do to it (truncate, resize, rewrite the header, write impossible
 * positions or records), no operation here may fault or hand the
 * dispatcher a credit the host did not post: the implementation finds it,
 * counts it (faults), repairs what it owns, and puts the cores it touches
 * in fallback until a host attaches again (fallback; struct tlb_cr_faults
 * and credit_ring.h say how the shm transport does it). A core in
 * fallback reads OFFLINE, so that nothing new is charged to it, and its
 * validated credits are still drained, so that what was charged is paid
 * back; a consumer that counts such a core's completions from its
 * responses instead says so once with set_inband_fallback(true): the core
 * then reads RUNNING and its ring credits are dropped, never returned.
 */
#ifndef TURBOLB_TRANSPORT_H
#define TURBOLB_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "turbolb/credit_ring.h"

/* What feed() made of a frame: accepted, or why not (the daemon counts
 * each reason, include/turbolb/dp_counters.h). */
enum tlb_feed_result {
	TLB_FEED_OK = 0,     /* credited, or the base of a new epoch */
	TLB_FEED_MALFORMED,  /* not a well-formed feedback frame */
	TLB_FEED_WRONG_CORE, /* speaks for a core not the queue's */
	TLB_FEED_STALE,      /* an older host epoch than the newest seen */
	TLB_FEED_BAD_TOTALS, /* totals that went back, or more work than
			      * the completions can carry: not credited */
	TLB_FEED_UNEXPECTED, /* this transport takes no frames */
};

/* What the control thread shows of one host core (telemetry). */
struct tlb_transport_core_info {
	uint32_t tid; /* thread serving the core; 0: not published */
	bool off_cpu; /* the kick agent saw that thread off its CPU */
	struct tlb_cr_kick_stats kick;
};

struct tlb_transport;

struct tlb_transport_ops {
	const char *name;
	/* Moves at most max credit records of core into out; returns the
	 * count. */
	unsigned int (*drain)(void *ctx, uint32_t core, struct tlb_credit *out,
			      unsigned int max);
	/* The same for the n cores core[0..n) at once, summed per core:
	 * see tlb_cr_drain_sums. The dispatcher's once-a-poll call. */
	uint32_t (*drain_sums)(void *ctx, const uint32_t *core, uint32_t n,
			       unsigned int max, struct tlb_credit_sum *out);
	enum tlb_core_run_state (*state)(const void *ctx, uint32_t core);
	/* 0: no host attached yet. */
	uint64_t (*host_epoch)(const void *ctx);
	/* NULL: this transport cannot kick. */
	void (*doorbell)(void *ctx, uint32_t core);
	void (*core_info)(const void *ctx, uint32_t core,
			  struct tlb_transport_core_info *out);
	/* The control thread's periodic check (the daemon: every 100 ms):
	 * finds and repairs what a host broke, restores cores a host
	 * attached for again, one message per kind of event through log.
	 * Returns the number of events. NULL: nothing to check. */
	unsigned int (*check)(void *ctx, tlb_cr_log_fn *log, void *arg);
	/* Fault counters (zeros for a transport without host memory). */
	void (*faults)(const void *ctx, struct tlb_cr_faults *out);
	/* True while core's credits from the host are not trusted. */
	bool (*fallback)(const void *ctx, uint32_t core);
	/* NULL: no host credits, nothing to fall back from. */
	void (*set_inband_fallback)(void *ctx, bool on);
	/* Takes a feedback frame received on core's queue (the dispatcher
	 * that owns core). NULL: this transport takes no frames. */
	enum tlb_feed_result (*feed)(void *ctx, uint32_t core,
				     const void *frame, size_t len);
	/* Releases what the transport holds, t itself included. */
	void (*close)(struct tlb_transport *t);
};

struct tlb_transport {
	const struct tlb_transport_ops *ops;
	void *ctx;
	uint32_t n_cores;
	bool has_credits; /* drain can return records */
};

/* Creates the shared-memory transport: the credit ring `name` for n_cores
 * cores of ring_size records, with the given mode and group (see
 * tlb_cr_create_group). Returns 0, or -1 with err filled. */
int tlb_transport_shm_create(const char *name, uint32_t n_cores,
			     uint32_t ring_size, mode_t mode, gid_t gid,
			     struct tlb_transport **out, char *err,
			     size_t errlen);

/* Wraps a credit ring the caller created and keeps (tests, tools):
 * closing the transport leaves the ring alone. */
int tlb_transport_shm_wrap(struct tlb_cr *cr, struct tlb_transport **out,
			   char *err, size_t errlen);

/* Creates the transport without host memory (in-band occupancy only). */
int tlb_transport_none_create(uint32_t n_cores, struct tlb_transport **out,
			      char *err, size_t errlen);

/* Creates the packet transport for n_cores cores: feedback frames in,
 * no doorbell (feedback.h). */
int tlb_transport_packet_create(uint32_t n_cores, struct tlb_transport **out,
				char *err, size_t errlen);

/* Closes what the implementation opened (the shm transport marks its
 * ring closed for the host and unlinks it) and frees t. NULL: no-op. */
static inline void
tlb_transport_close(struct tlb_transport *t)
{
	if (t != NULL)
		t->ops->close(t);
}

static inline unsigned int
tlb_transport_drain(struct tlb_transport *t, uint32_t core,
		    struct tlb_credit *out, unsigned int max)
{
	return t->ops->drain(t->ctx, core, out, max);
}

static inline uint32_t
tlb_transport_drain_sums(struct tlb_transport *t, const uint32_t *core,
			 uint32_t n, unsigned int max,
			 struct tlb_credit_sum *out)
{
	return t->ops->drain_sums(t->ctx, core, n, max, out);
}

/* Hands the transport a feedback frame received on core's queue. */
static inline enum tlb_feed_result
tlb_transport_feed(struct tlb_transport *t, uint32_t core, const void *frame,
		   size_t len)
{
	if (t->ops->feed == NULL)
		return TLB_FEED_UNEXPECTED;
	return t->ops->feed(t->ctx, core, frame, len);
}

static inline enum tlb_core_run_state
tlb_transport_state(const struct tlb_transport *t, uint32_t core)
{
	return t->ops->state(t->ctx, core);
}

static inline uint64_t
tlb_transport_host_epoch(const struct tlb_transport *t)
{
	return t->ops->host_epoch(t->ctx);
}

static inline bool
tlb_transport_can_kick(const struct tlb_transport *t)
{
	return t->ops->doorbell != NULL;
}

static inline void
tlb_transport_doorbell(struct tlb_transport *t, uint32_t core)
{
	t->ops->doorbell(t->ctx, core);
}

static inline void
tlb_transport_core_info(const struct tlb_transport *t, uint32_t core,
			struct tlb_transport_core_info *out)
{
	t->ops->core_info(t->ctx, core, out);
}

static inline unsigned int
tlb_transport_check(struct tlb_transport *t, tlb_cr_log_fn *log, void *arg)
{
	return t->ops->check != NULL ? t->ops->check(t->ctx, log, arg) : 0;
}

static inline void
tlb_transport_faults(const struct tlb_transport *t, struct tlb_cr_faults *out)
{
	t->ops->faults(t->ctx, out);
}

static inline bool
tlb_transport_fallback(const struct tlb_transport *t, uint32_t core)
{
	return t->ops->fallback(t->ctx, core);
}

static inline void
tlb_transport_set_inband_fallback(struct tlb_transport *t, bool on)
{
	if (t->ops->set_inband_fallback != NULL)
		t->ops->set_inband_fallback(t->ctx, on);
}

#endif /* TURBOLB_TRANSPORT_H */
