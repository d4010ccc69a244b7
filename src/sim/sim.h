/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-sim engine: a discrete-event model of the NIC dispatcher in front
 * of N host cores, driving the core library's own policies and load view.
 * A library function rather than a program so that the unit tests can run
 * it in-process.
 *
 * Model (times are integer nanoseconds):
 *   arrival -> NIC dispatcher (one server, dispatch_ns per request, FIFO
 *   in front of it) -> policy pick -> delivery_ns -> core FIFO, one server
 *   -> completion -> feedback_ns -> the load view counts it at the NIC.
 * jbsq's TLB_PICK_HOLD parks a request in a bounded NIC FIFO, retried in
 * arrival order whenever a completion reaches the NIC. The reference
 * "cfcfs" is one central FIFO that any idle core takes from the moment it
 * frees (no feedback delay): the M/G/k ideal. The static baseline "fixed"
 * is a client thread pinned to one queue: each flow stands for one client
 * thread (its own socket, its own 5-tuple) and flow f always goes to core
 * f mod N, with no hash and no load view.
 *
 * Several dispatchers (dispatchers > 1): the wire is split between them
 * (split), each is its own server with its own FIFO, policy instance,
 * load view and hold FIFO. With a partitioned view (the daemon's layout)
 * dispatcher d owns the cores [d N / D, (d + 1) N / D) and balances over
 * those only; a completion goes back to the owner. With a shared view
 * every dispatcher picks among all N cores: it sees its own sends and
 * completions at once and the others' only at the next view_sync_ns
 * tick (every dispatcher publishes per-core sent and completed counters
 * that the others read every view_sync_ns; 0: read at every event, one
 * global view). A completion goes back to the dispatcher that sent it.
 */
#ifndef TURBOLB_SIM_H
#define TURBOLB_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "turbolb/dist.h"
#include "turbolb/histogram.h"
#include "turbolb/policy.h"

#define TLB_SIM_SPEC_MAX        32
#define TLB_SIM_ERR_MAX         160
#define TLB_SIM_MAX_FLOWS       65535u
#define TLB_SIM_DEFAULT_FLOWS   64u
#define TLB_SIM_DEFAULT_FIFO    4096u
#define TLB_SIM_CFCFS           "cfcfs"
#define TLB_SIM_FIXED           "fixed"
#define TLB_SIM_MAX_DISPATCHERS 8u

/* How the wire is split between dispatchers. */
enum tlb_sim_split {
	TLB_SIM_SPLIT_EVEN, /* each request to a uniformly random dispatcher */
	TLB_SIM_SPLIT_RSS,  /* by the flow's RSS hash over the dispatchers'
			     * queues, as the NIC splits it: uneven with few
			     * flows */
};

/* An arrival trace: absolute arrival times (non-decreasing) and service
 * times, both in ns. */
struct tlb_sim_trace {
	const uint64_t *arrival_ns;
	const uint32_t *service_ns;
	uint64_t len;
};

struct tlb_sim_params {
	uint32_t n_cores;
	/* "cfcfs" or a core-library policy name; its parameters below. */
	char policy[TLB_POLICY_NAME_MAX];
	struct tlb_policy_params policy_params; /* seed is overridden */
	struct tlb_dist dist;
	double load;       /* rho: lambda = load * n_cores / mean service */
	uint64_t requests; /* requests generated (completed + dropped) */
	uint64_t warmup;   /* first requests left out of the statistics */
	uint64_t seed;
	uint32_t flows; /* client flows (distinct 5-tuples) */
	uint64_t dispatch_ns;
	uint64_t delivery_ns;
	uint64_t feedback_ns;
	uint32_t fifo_cap;    /* NIC-side FIFO for held requests (each) */
	uint32_t dispatchers; /* 1..TLB_SIM_MAX_DISPATCHERS */
	enum tlb_sim_split split;
	bool shared_view;      /* false: partitioned, the daemon's layout */
	uint64_t view_sync_ns; /* shared view: the others' counters' age */
	/* Optional: arrivals and service times from a trace instead of the
	 * Poisson process and dist (load is then ignored). */
	const struct tlb_sim_trace *trace;
};

struct tlb_sim_result {
	uint64_t requests;  /* generated */
	uint64_t completed; /* all completions, warm-up included */
	uint64_t dropped;   /* NIC FIFO full (or no eligible core) */
	uint64_t measured;  /* completions after the warm-up */
	double offered_mrps;
	double throughput_mrps; /* measured / measured time span */
	double mean_ns;         /* sojourn: completion - arrival */
	double mean_wait_ns;    /* sojourn - service */
	double mean_service_ns; /* of the measured requests */
	uint64_t p50_ns, p90_ns, p99_ns, p999_ns, max_ns;
	uint64_t sim_time_ns;  /* last event */
	uint32_t held_max;     /* peak occupancy of the NIC FIFO */
	double core_share_max; /* busiest core's share of requests x cores */
	char err[TLB_SIM_ERR_MAX];
};

/* Defaults: 16 cores, jsq, exp:1us, load 0.5, 1e6 requests, warm-up 1e5,
 * seed 1, 64 flows, no NIC delays, FIFO 4096, one dispatcher. */
void tlb_sim_params_default(struct tlb_sim_params *p);

/* "cfcfs", "fixed" or NAME[:PARAM] as tlb_policy_parse_spec() takes it. Returns
 * 0 or -1 with err filled; p is unchanged on error. */
int tlb_sim_set_policy(struct tlb_sim_params *p, const char *spec, char *err,
		       size_t errlen);

/* The spec back ("jbsq:1", "pod:2", "jsq"). */
void tlb_sim_policy_spec(const struct tlb_sim_params *p, char *buf, size_t len);

/* Mean service time in ns: the dist's, or the trace's. */
double tlb_sim_mean_service_ns(const struct tlb_sim_params *p);

/* Runs one simulation. Returns 0, or -1 with r->err filled (bad
 * parameters, out of memory). If hist is not NULL it receives the
 * measured latencies. Deterministic for a given params. */
int tlb_sim_run(const struct tlb_sim_params *p, struct tlb_sim_result *r,
		struct tlb_hist *hist);

/* Highest load meeting p99 <= multiple x mean service time. */
struct tlb_sim_slo {
	double multiple;
	double slo_ns;
	double max_load; /* 0: not even the lowest load tried */
	double max_throughput_mrps;
	uint64_t p99_ns; /* at max_load */
	unsigned int evaluations;
};

#define TLB_SIM_SLO_LOAD_MAX 1.2
#define TLB_SIM_SLO_STEPS    12

/* Bisection over load in (0, TLB_SIM_SLO_LOAD_MAX]: a load passes when its
 * p99 is within the SLO and nothing was dropped. TLB_SIM_SLO_STEPS halvings
 * after trying the upper end. Every run uses the same seed, so runs at
 * neighbouring loads see the same random draws (scaled), which keeps p99
 * close to monotone in load and the bisection stable. */
int tlb_sim_max_load(const struct tlb_sim_params *p, double multiple,
		     struct tlb_sim_slo *out, char *err, size_t errlen);

#endif /* TURBOLB_SIM_H */
