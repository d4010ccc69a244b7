/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-bench: the dispatch-cost benchmark. It runs turbolbd's real
 * datapath (tlb_dp_poll from the turbolb-dp library) on net_ring ports
 * inside one process, fed with valid RPC request frames that are recycled
 * so that the source never runs dry and nothing is allocated while
 * measuring.
 *
 * A "world" is one topology: n host cores, D dispatcher lcores, the rings
 * and ports between them and the turbolbd config that names them.
 *
 *   direct (request path only)       copy (benchmark in the loop)
 *
 *   up_rx[d] --> dispatcher d         up_rx[d] --> dispatcher d
 *      ^             |                   ^             |
 *      |  target i TX ring IS up_rx[d]   |         t_tx[i] (own ring)
 *      +-------------+                   +-- host step <-+
 *                                              | reqresp: a response
 *                                              v per request into t_rx[i]
 *
 * In direct worlds a target's TX ring is its dispatcher's uplink RX ring,
 * so requests come back as new requests with no work at all in between;
 * only the datapath runs. Copy worlds give each target its own TX ring,
 * emptied by the benchmark's host step, which checks every frame (smoke)
 * and, in reqresp mode, answers each request with a prebuilt response.
 */
#ifndef TURBOLB_BENCH_H
#define TURBOLB_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "turbolb/config.h"
#include "turbolb/histogram.h"
#include "turbolb/host.h"
#include "turbolb/load_view.h"
#include "turbolb/transport.h"
#include "dp.h"

#define BENCH_MAX_DPS  8u
#define BENCH_RPC_PORT 9000u
#define BENCH_PAYLOAD  32u
/* Work charged per request in reqresp mode, echoed by every response. */
#define BENCH_RESP_WORK_NS    1000u
#define BENCH_RESP_SERVICE_NS 800u /* service time every response reports */

/* Where the dispatcher's completions come from (host.credits). */
enum bench_credits {
	BENCH_CREDITS_INBAND, /* counted from the responses */
	BENCH_CREDITS_RING,   /* a credit ring (shm transport) */
	BENCH_CREDITS_PACKET, /* feedback frames (packet transport) */
};

enum bench_mode {
	BENCH_REQUEST, /* requests only, credits inband, no responses */
	BENCH_REQRESP, /* every request answered by the benchmark host */
};

struct bench_world {
	/* shape */
	unsigned int gen; /* makes ring and port names unique */
	unsigned int n_cores;
	unsigned int n_dps;
	unsigned int queues_per_port;
	unsigned int n_tports; /* target ports */
	unsigned int preload;  /* requests in flight per dispatcher */
	unsigned int burst;
	unsigned int flows;
	bool copy; /* targets have their own TX rings */
	/* host.credits ring: the daemon drains a credit ring (the shm
	 * transport) that the host step posts to through libturbolb-host,
	 * one completion per response; packet: the same completions go in
	 * feedback frames (the packet transport, batch 16, no hold) that
	 * the host step puts on the cores' target RX rings; inband: the
	 * daemon counts them from the responses. */
	enum bench_credits credits;
	char ring_name[64];
	struct tlb_transport *xport;
	struct tlb_host *host;
	struct tlb_host_core *hc[TLB_MAX_CORES];
	struct rte_mempool *fb_pool; /* packet: the feedback frames' mbufs */

	/* rings: ours, the ports only point at them */
	struct rte_ring *up_rx[BENCH_MAX_DPS];
	struct rte_ring *up_tx[BENCH_MAX_DPS];
	struct rte_ring *stash[BENCH_MAX_DPS]; /* spare responses */
	struct rte_ring *t_rx[TLB_MAX_CORES];
	struct rte_ring *t_tx[TLB_MAX_CORES]; /* == up_rx[d] when direct */

	uint16_t up_port;
	uint16_t t_port[TLB_MAX_CORES];
	uint16_t t_queue[TLB_MAX_CORES];

	struct tlb_config cfg;
	struct rte_mempool *dp_pool; /* tlb_ports_setup's, never used */
	struct tlb_dp dp[BENCH_MAX_DPS];
	bool dp_live[BENCH_MAX_DPS];
};

/* What one measured run saw; filled by the worker lcores and the checks. */
struct bench_run {
	struct bench_world *w;
	enum bench_mode mode;
	bool verify;    /* check every frame in the host step */
	bool callgrind; /* zero and dump callgrind costs around it */
	const char *label;
	int fwd;         /* 0: turbolbd; 1: io; 2: macswap forwarding */
	uint64_t warmup; /* packets per dispatcher before measuring */
	uint64_t quota;  /* packets per dispatcher measured */
	const char *policy;

	/* per dispatcher */
	uint64_t t0[BENCH_MAX_DPS], t1[BENCH_MAX_DPS];
	uint64_t cpu_ns[BENCH_MAX_DPS]; /* thread CPU time measuring */
	/* TSC spent in the host step while measuring: on a NIC the host is
	 * another machine, so it is taken out of both clocks */
	uint64_t host_tsc[BENCH_MAX_DPS];
	uint64_t pkts[BENCH_MAX_DPS]; /* measured uplink packets */
	uint64_t polls[BENCH_MAX_DPS];
	uint64_t fwd_rx[BENCH_MAX_DPS]; /* forwarding baseline counter */
	unsigned int fwd_next[BENCH_MAX_DPS];

	/* per host core, counted by the host step (copy worlds) */
	uint64_t seen[TLB_MAX_CORES];
	/* per dispatcher: feedback frames the host step put on its cores'
	 * target RX rings (packet credits) */
	uint64_t fb_sent[BENCH_MAX_DPS];
	int16_t flow_core[65536]; /* rss: where each flow went */
	char error[256];          /* first failure, "" if none */
	volatile bool failed;

	/* a spin barrier for the D worker lcores */
	volatile uint32_t bar_count;
	volatile uint32_t bar_gen;
};

/* The turbolbd settings a world's config gets from the options. */
struct bench_dp_cfg {
	unsigned int tx_hold_ns;
	unsigned int housekeeping_us;
	unsigned int fifo_cap;
};

/* One run of the latency mode (bench_latency.c) on dispatcher 0 of a copy
 * world: set the inputs, launch bench_latency_run() on its lcore. */
struct bench_lat {
	/* in */
	struct bench_world *w;
	struct rte_mempool *pool;
	enum bench_mode mode;
	double rate_mpps;      /* mean arrival rate; 0: saturate */
	uint64_t packets;      /* samples recorded */
	uint64_t warmup;       /* samples not recorded, first */
	unsigned int inflight; /* requests (and responses) made up front */
	uint64_t tsc_hz;
	uint64_t seed;
	/* out */
	struct tlb_hist all;   /* residence, ns */
	struct tlb_hist clean; /* less the samples in flight across a gap */
	uint64_t samples, preempted;
	uint32_t polls_waited_max;
	uint64_t polls, made, measured_made, seen;
	uint64_t measured_polls; /* polls in the measured window */
	uint64_t taken;          /* requests (reqresp: responses) taken */
	uint64_t gaps, gap_tsc;  /* in the measured window */
	uint64_t backlogged;     /* arrivals late: every spare mbuf in flight */
	/* arrivals that found LAT_RX_RING requests waiting on the uplink,
	 * a NIC's full RX ring, and were dropped there (measured window) */
	uint64_t nic_dropped;
	uint64_t t0, t1; /* the measured window, daemon's clock */
	uint64_t skip, last_gap_end;
	bool failed;
	char error[128];
};

int bench_latency_register(void);
int bench_latency_run(void *arg);

/* bench_world.c */
int bench_world_create(struct bench_world *w, unsigned int gen,
		       unsigned int n_cores, unsigned int n_dps,
		       unsigned int qpp, unsigned int preload,
		       unsigned int burst, unsigned int flows, bool copy,
		       enum bench_credits credits,
		       const struct bench_dp_cfg *dpc, char *err,
		       size_t errlen);
void bench_world_destroy(struct bench_world *w);
/* Empties every ring (frees what was there), then loads each dispatcher's
 * uplink RX ring with w->preload fresh requests and, in reqresp mode, its
 * stash with responses. */
int bench_world_load(struct bench_world *w, struct rte_mempool *pool,
		     enum bench_mode mode, char *err, size_t errlen);
unsigned int bench_world_drain(struct bench_world *w);
/* A request of flow `flow` as the client sends it; a response as the
 * host sends it back (work and service time of BENCH_RESP_*). NULL when
 * the pool is empty. */
struct rte_mbuf *bench_request_mbuf(struct rte_mempool *pool, unsigned int flow,
				    uint64_t id, enum bench_mode mode);
struct rte_mbuf *bench_response_mbuf(struct rte_mempool *pool,
				     unsigned int flow, uint64_t id);
/* Request template of a flow; what the datapath must have stamped. */
uint32_t bench_flow_hint(unsigned int flow, enum bench_mode mode);
uint16_t bench_flow_sport(unsigned int flow);
/* The host step of dispatcher d (copy worlds): requests back to the
 * uplink, a response for each in reqresp mode, responses to the stash. */
void bench_host_step(struct bench_run *r, unsigned int d);
/* After a run: counters add up, nothing lost, nothing misrouted. */
int bench_check(struct bench_run *r, unsigned int fifo_depth_total);
void bench_fail(struct bench_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* TURBOLB_BENCH_H */
