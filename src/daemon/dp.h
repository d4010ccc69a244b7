/* SPDX-License-Identifier: BSD-3-Clause
 * The datapath of one dispatcher lcore: request path (uplink RX -> parse
 * -> policy -> target TX), response path (target RX -> count completion
 * -> uplink TX), credit draining, liveness, the NIC-side FIFO and the
 * message affinity table. Everything in struct tlb_dp is written only by
 * its lcore; the telemetry thread reads counters with relaxed loads.
 */
#ifndef TURBOLBD_DP_H
#define TURBOLBD_DP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "turbolb/affinity.h"
#include "turbolb/config.h"
#include "turbolb/dp_counters.h"
#include "turbolb/transport.h"
#include "turbolb/load_view.h"
#include "turbolb/metrics.h"
#include "turbolb/policy.h"
#include "turbolb/proto.h"
#include "turbolb/proto_fast.h"

/* The counters: turbolb/dp_counters.h lists and describes them. (Left
 * unformatted: clang-format takes the X-macro expansion for an
 * expression.) */
/* clang-format off */
enum tlb_dp_counter {
#define X(name, ...) TLB_DP_##name,
	TLB_DP_COUNTERS(X)
#undef X
	TLB_DP_N_COUNTERS
};
/* clang-format on */

extern const char *const tlb_dp_counter_names[TLB_DP_N_COUNTERS];

struct tlb_dp_stats {
	uint64_t c[TLB_DP_N_COUNTERS];
	uint64_t drop_parse[TLB_PARSE_ERR_MAX]; /* by parse error code */
	uint64_t loops;      /* heartbeat: iterations of the poll loop */
	uint64_t busy_loops; /* iterations that moved a packet */
	/* The residence histogram (turbolb/metrics.h): packets per bucket
	 * of tlb_residence_le_ns, and the sum of their residences in TSC
	 * cycles. */
	uint64_t residence[TLB_RESIDENCE_BUCKETS];
	uint64_t residence_tsc;
} __rte_cache_aligned;

struct tlb_dp;

/* A queue of a port this lcore sends to and receives from, with its TX
 * buffer: the packets that go out in its next burst, and beside each what
 * it charged the host core, so that a packet the queue refuses is
 * uncharged. DPDK's rte_eth_dev_tx_buffer has no room for the charge but
 * the mbuf, and the request path writes none of the mbuf's lines
 * (docs/performance.md, "The charge beside the TX buffer").
 *
 * The latency bound: a buffer is sent when it holds a full burst, at the
 * end of a poll whose uplink burst was not full (the lcore keeps up), and
 * otherwise at the end of the first poll that ends at or after its
 * deadline: the start of the poll that put its oldest packet in plus
 * hold_tsc. A packet thus waits in the daemon at most hold_tsc plus one
 * poll. */
struct tlb_dp_port {
	uint16_t port_id;
	uint16_t queue;
	uint16_t length;          /* packets in the buffer */
	uint16_t size;            /* the burst: sent when it holds this many */
	int core;                 /* host core, or -1 (uplink, default) */
	enum tlb_dp_counter drop; /* counted when its TX ring is full */
	struct tlb_dp *dp;
	struct rte_mbuf **pkts; /* size entries */
	uint64_t *charge;       /* pkts[i]'s: its work + 1, 0: none */
	uint64_t hold_tsc;      /* how long a packet may wait for others */
	uint64_t deadline;      /* TSC by which the buffer goes out */
	uint64_t first_tsc;     /* start of the oldest packet's poll */
	bool listed;            /* in dp->pending (always, while length) */
};

/* A held request. A request in the fast layout keeps what the fast
 * parser read of it, so that its release does not parse it again: the
 * frame and the parse options stay as they were while it waits. */
struct tlb_fifo_slot {
	struct rte_mbuf *m;
	struct tlb_req_fast rq; /* valid when fast */
	bool fast;              /* parsed the fast way when it came in */
};

/* A NIC-side FIFO of held requests: a plain ring of slots, since only
 * this lcore ever touches it. */
struct tlb_fifo {
	struct tlb_fifo_slot *slot;
	uint32_t capacity; /* power of two >= the configured capacity */
	uint32_t limit;    /* the configured capacity */
	uint32_t head, tail;
};

/* What a reload or a policy switch may change, handed to the lcore and
 * applied at a loop boundary (the lcore's quiescent point), so no packet
 * ever sees half of it. Filled by the control thread. */
struct tlb_dp_update {
	struct tlb_policy policy;        /* a ready instance */
	struct tlb_fifo_slot *fifo_slot; /* new FIFO storage, NULL: keep */
	uint32_t fifo_capacity;          /* its size, a power of two */
	uint32_t fifo_limit;
	uint64_t stale_timeout_ns;
	uint64_t write_off_ns;
	struct tlb_fifo_slot *old_fifo_slot; /* set by the lcore: free it */
};

struct tlb_dp {
	unsigned int lcore_id;
	unsigned int index; /* dispatcher number, 0 .. n-1 */
	const struct tlb_config *cfg;
	struct tlb_parse_opts parse_opts;
	uint32_t n_cores; /* host cores in this dispatcher's share */
	uint32_t core_id[TLB_MAX_CORES]; /* local index -> host core id */
	enum tlb_credit_mode credits;
	/* A core is in rotation only while its host says it is not
	 * offline: with ring credits, and with feedback frames whatever the
	 * credits (a host that sends frames says when its cores go). With
	 * in-band credits over shm or none the host may be one that never
	 * writes a state, and every core is in rotation. */
	bool online_by_state;
	uint64_t tsc_hz;
	uint64_t ns_per_tsc_q32; /* 1e9 / tsc_hz, 32.32 fixed point */
	/* Hot per-packet counts, plain adds, moved into stats once per poll
	 * (stats are relaxed atomics, dearer than a plain add). */
	uint64_t pend_messages, pend_affinity; /* steered: their sum */
	/* Target queues that had something when last polled, a bit each:
	 * while requests come in only these are polled, and all of them
	 * every TLB_DP_TARGET_ROUND iterations (target_round counts down),
	 * so idle response queues cost nothing, not an RX call each */
	uint64_t target_busy[TLB_MAX_CORES / 64];
	/* Under a policy with a bound (jbsq), the cores that owe answers, a
	 * bit each: polled every iteration, since each answer is what lets
	 * the next request go */
	uint64_t target_owed[TLB_MAX_CORES / 64];
	uint8_t target_round;
	/* credits: ring, cores whose ring the transport found broken
	 * (tlb_transport_fallback()), a bit each, read every housekeeping:
	 * their responses count their completions until a host attaches
	 * again */
	uint64_t credit_fallback[TLB_MAX_CORES / 64];
	/* credits: ring, per core out of fallback: the responses that
	 * passed since the core's completed count was credit_synced (the
	 * completions its credits carried since are the difference), so
	 * that a core entering fallback completes the responses whose
	 * credits the broken ring lost. Synced when the core enters or
	 * leaves fallback and when its view is reset or written off
	 * (credit_gen: the view's gen it counts under). */
	uint64_t credit_responses[TLB_MAX_CORES];
	uint64_t credit_synced[TLB_MAX_CORES];
	uint32_t credit_gen[TLB_MAX_CORES];
	uint64_t poll_tsc;         /* TSC at the start of the current poll */
	uint64_t poll_ns;          /* the same in ns: the time of the poll */
	bool behind;               /* since a full uplink burst, until one
				      less than half full */
	uint64_t housekeeping_tsc; /* housekeeping period in TSC cycles */
	/* tlb_residence_le_ns in TSC cycles */
	uint64_t residence_le_tsc[TLB_RESIDENCE_BUCKETS - 1];
	uint64_t stale_timeout_ns;
	uint64_t write_off_ns;

	struct tlb_dp_port uplink;
	struct tlb_dp_port target[TLB_MAX_CORES];
	bool has_default_target;
	struct tlb_dp_port default_target;
	/* The ports whose buffers hold packets, each once: the end of a
	 * poll looks at these, not at every port. */
	struct tlb_dp_port *pending[TLB_MAX_CORES + 2];
	uint32_t n_pending;

	struct tlb_policy policy;
	bool flow_key;            /* policy.ops->uses_flow_key, at hand */
	bool own_dispatch;        /* policy.ops->dispatch != NULL, too */
	struct tlb_load_view *lv; /* this dispatcher's view */
	struct tlb_affinity *aff;
	uint32_t aff_sweep; /* entries looked at per housekeeping */
	/* The outstanding requests of the protocols that complete by id
	 * (TLB_COMPLETE_BY_ID): what each charged, until its first response
	 * datagram or host.write_off_us (NULL: no such port) */
	struct tlb_affinity *ids;
	uint32_t ids_sweep; /* entries looked at per housekeeping */
	/* Per core, for the protocols without a service time: when its
	 * last completion left it busy (0: it left it idle), the start of
	 * the next service time seen at the NIC (tlb_spacing_sample()) */
	uint64_t busy_since_ns[TLB_MAX_CORES];
	struct tlb_fifo fifo;
	struct tlb_transport *host; /* NULL: none (tests, bench) */
	uint64_t host_epoch;
	bool kick; /* ring doorbells (host can) */
	uint64_t kick_interval_ns;
	uint64_t kick_stall_ns; /* 0: no stall kicks */
	uint64_t last_kick_ns[TLB_MAX_CORES];
	/* The kick over the wire (host.transport: packet): kick frames out
	 * of the default target, from this pool, each with its core's
	 * doorbell count. NULL: the transport's doorbell. */
	struct rte_mempool *kick_pool;
	uint8_t kick_src_mac[6];
	uint64_t kick_count[TLB_MAX_CORES];

	/* control: wo, dp: ro */
	struct tlb_dp_update *update;
	uint64_t update_gen;
	/* dp: wo, control: ro */
	uint64_t applied_gen;

	uint64_t last_housekeeping_tsc;
	struct tlb_dp_stats stats;
};

/* Sets up dispatcher `index` (of the config's datapath lcores) on
 * lcore_id over already configured ports (see port.h), reading the host
 * through transport host (shared by every dispatcher; may be NULL).
 *
 * With several dispatchers the host cores are partitioned: dispatcher d
 * owns cores d, d + n, d + 2n, ... and is the only one to send to them,
 * receive their responses and drain their credits, so every counter of
 * the load view still has one writer and no cache line is shared. It
 * polls uplink queue (uplink.queue + d) and sends on the default target's
 * queue (default_target.queue + d); dispatcher 0 alone receives from the
 * default target. Returns 0, or -1 with err filled. */
int tlb_dp_init(struct tlb_dp *dp, const struct tlb_config *cfg,
		unsigned int lcore_id, unsigned int index,
		struct tlb_transport *host, char *err, size_t errlen);

/* Control side: hands u to dp; returns the generation to wait for with
 * tlb_dp_update_done(). u must stay valid until then. One control thread
 * at a time (the caller serializes). */
uint64_t tlb_dp_post_update(struct tlb_dp *dp, struct tlb_dp_update *u);
bool tlb_dp_update_done(const struct tlb_dp *dp, uint64_t gen);

/* Allocates FIFO storage for capacity requests (rounded up to a power of
 * two, stored in *cap); NULL on ENOMEM. */
struct tlb_fifo_slot *tlb_dp_fifo_alloc(uint32_t capacity, uint32_t *cap,
					int socket);

/* One iteration of the poll loop; returns the number of packets moved. */
unsigned int tlb_dp_poll(struct tlb_dp *dp);

/* Sends everything buffered now, whatever its deadline. */
void tlb_dp_flush(struct tlb_dp *dp);

/* Frees what the FIFO still holds (counted drop_shutdown) and the state. */
void tlb_dp_fini(struct tlb_dp *dp);

/* The lcore loop: polls until *quit. */
int tlb_dp_main(void *arg);

/* Set by the signal handler. */
extern volatile bool tlb_force_quit;

/* Every dispatcher, for telemetry (NULL-terminated up to RTE_MAX_LCORE). */
extern struct tlb_dp *tlb_dps[RTE_MAX_LCORE];
extern unsigned int tlb_n_dps;

#endif /* TURBOLBD_DP_H */
