/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-bench's latency mode: how long a request stays inside the
 * daemon, at a set fraction of the dispatcher's own saturation rate.
 *
 * One lcore runs, in turn: the client (open loop: requests arrive at
 * exponentially spaced times and are put on the uplink RX ring), one
 * tlb_dp_poll(), and the host (what reached a core's TX ring is taken at
 * once; in reqresp mode it is answered at once). Each request carries, in
 * an mbuf dynamic field, the TSC of its arrival and the poll it arrived
 * before; right after each poll what the datapath sent is taken off the
 * target rings (request mode) or off the uplink TX ring (reqresp mode,
 * the response's own time in the daemon added) and its residence is
 * recorded.
 *
 * The arrival time, not the time the loop got round to putting the
 * request on the ring, is the stamp: on a NIC a request arrives while
 * the dispatcher is busy with the poll before, and waits for it.
 *
 * The daemon's clock: on a NIC the client and the host are other
 * machines, and the dispatcher goes from one poll to the next. Here the
 * benchmark's client and host run on the dispatcher's lcore between
 * polls, so their time is taken out of the clock the arrivals, the stamps
 * and the residences are read on: time passes only inside tlb_dp_poll().
 *
 * This machine's preemptions: a poll longer than LAT_GAP_NS had its
 * thread off its CPU (a poll of a 64-core dispatcher is a few
 * microseconds). No requests are made for such a gap (a queue built up in
 * it would measure the scheduler, not the daemon); the requests in flight
 * across it keep the gap in their residence, are counted as preempted and
 * are kept out of the "clean" histogram.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "turbolb/rng.h"
#include "bench.h"

/* A gap this long between two iterations is the thread off its CPU: a
 * poll of a 64-core dispatcher and the benchmark's host step are a few
 * microseconds. */
#define LAT_GAP_NS 20000u
/* The uplink's RX ring: a NIC's, of the daemon's default rx_desc.
 * Saturation keeps it full, as it is when the dispatcher is the
 * bottleneck: with only two bursts waiting the same few mbufs go round
 * hot in the cache and the rate comes out higher than any open-loop
 * arrival rate the dispatcher sustains (docs/performance.md, "Saturation
 * with a full RX ring"). An open-loop arrival that finds it full is
 * dropped, counted, as a NIC drops it (rx_missed): queued behind it, a
 * backlog deeper than any NIC keeps would cycle more mbufs than the
 * cache holds and measure that. */
#define LAT_RX_RING 1024u
#define LAT_BURST   64u

struct lat_stamp {
	uint64_t tsc;    /* arrival */
	uint32_t poll;   /* the poll it arrived before (low 32 bits) */
	uint32_t waited; /* polls waited so far (reqresp: the request's) */
};

static int stamp_off = -1;

int
bench_latency_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "turbolb_bench_latency",
		.size = sizeof(struct lat_stamp),
		.align = __alignof__(struct lat_stamp),
	};

	stamp_off = rte_mbuf_dynfield_register(&desc);
	return stamp_off < 0 ? -1 : 0;
}

static inline struct lat_stamp *
stamp_of(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, stamp_off, struct lat_stamp *);
}

/* A stack of spare mbufs: only this lcore touches it. */
struct stack {
	struct rte_mbuf **m;
	unsigned int n, cap;
};

static inline struct rte_mbuf *
pop(struct stack *s)
{
	return s->n ? s->m[--s->n] : NULL;
}

static inline void
push(struct stack *s, struct rte_mbuf *m)
{
	s->m[s->n++] = m;
}

static inline void
record(struct bench_lat *L, uint64_t now, const struct lat_stamp *st,
       uint32_t waited)
{
	uint64_t ns = (now - st->tsc) * 1000000000ull / L->tsc_hz;

	L->taken++;
	if (L->skip != 0) {
		L->skip--;
		return;
	}
	tlb_hist_record(&L->all, ns);
	if (st->tsc < L->last_gap_end)
		L->preempted++;
	else
		tlb_hist_record(&L->clean, ns);
	if (waited > L->polls_waited_max)
		L->polls_waited_max = waited;
	L->samples++;
}

/* What the datapath sent after poll `poll`, taken at tsc now. */
static void
take(struct bench_lat *L, struct stack *req, struct stack *resp, uint32_t poll,
     uint64_t now)
{
	struct bench_world *w = L->w;
	struct rte_mbuf *pkts[LAT_BURST];
	unsigned int n;

	for (unsigned int i = 0; i < w->n_cores; i++) {
		while ((n = rte_ring_dequeue_burst(w->t_tx[i], (void **)pkts,
						   LAT_BURST, NULL)) != 0) {
			for (unsigned int j = 0; j < n; j++) {
				struct lat_stamp *st = stamp_of(pkts[j]);
				uint32_t waited = poll - st->poll;
				struct rte_mbuf *r;

				if (L->mode == BENCH_REQUEST) {
					record(L, now, st, waited);
					push(req, pkts[j]);
					continue;
				}
				/* Answered at once: the response goes back
				 * with the request's stamp. */
				r = pop(resp);
				if (unlikely(r == NULL)) {
					L->failed = true;
					snprintf(L->error, sizeof(L->error),
						 "no spare response");
					return;
				}
				*stamp_of(r) = *st;
				stamp_of(r)->poll = poll + 1;
				stamp_of(r)->waited = waited;
				push(req, pkts[j]);
				if (rte_ring_enqueue(w->t_rx[i], r) != 0) {
					L->failed = true;
					snprintf(L->error, sizeof(L->error),
						 "core %u: response ring full",
						 i);
					return;
				}
			}
			L->seen += n;
		}
	}
	if (L->mode != BENCH_REQRESP)
		return;
	while ((n = rte_ring_dequeue_burst(w->up_tx[0], (void **)pkts,
					   LAT_BURST, NULL)) != 0)
		for (unsigned int j = 0; j < n; j++) {
			struct lat_stamp *st = stamp_of(pkts[j]);

			record(L, now, st, st->waited + (poll - st->poll));
			push(resp, pkts[j]);
		}
}

/* Puts request m on the uplink, arrived at tsc, before poll `poll`;
 * false when the uplink ring is full (m stays the caller's). */
static inline bool
arrive(struct bench_lat *L, struct rte_mbuf *m, uint64_t tsc, uint32_t poll)
{
	struct lat_stamp *st = stamp_of(m);

	st->tsc = tsc;
	st->poll = poll;
	st->waited = 0;
	if (unlikely(rte_ring_enqueue(L->w->up_rx[0], m) != 0))
		return false;
	L->made++;
	return true;
}

/* A spare request arrives at tsc, before poll `poll`: false when every
 * spare is in flight or the uplink ring refused it (it stays spare). */
static inline bool
arrive_spare(struct bench_lat *L, struct stack *req, uint64_t tsc,
	     uint32_t poll)
{
	struct rte_mbuf *m = pop(req);

	if (m == NULL)
		return false;
	if (!arrive(L, m, tsc, poll)) {
		push(req, m);
		return false;
	}
	return true;
}

static int
alloc_stacks(struct bench_lat *L, struct stack *req, struct stack *resp)
{
	unsigned int flows = L->w->flows;

	req->cap = resp->cap = L->inflight;
	req->n = resp->n = 0;
	req->m = calloc(req->cap, sizeof(*req->m));
	resp->m = calloc(resp->cap, sizeof(*resp->m));
	if (req->m == NULL || resp->m == NULL)
		return -1;
	for (unsigned int j = 0; j < req->cap; j++) {
		struct rte_mbuf *m =
			bench_request_mbuf(L->pool, j % flows, j + 1, L->mode);

		if (m == NULL)
			return -1;
		push(req, m);
		if (L->mode != BENCH_REQRESP)
			continue;
		m = bench_response_mbuf(L->pool, j % flows, j + 1);
		if (m == NULL)
			return -1;
		push(resp, m);
	}
	return 0;
}

static void
free_stack(struct stack *s)
{
	if (s->m == NULL)
		return;
	rte_pktmbuf_free_bulk(s->m, s->n);
	free(s->m);
	s->m = NULL;
}

int
bench_latency_run(void *arg)
{
	struct bench_lat *L = arg;
	struct bench_world *w = L->w;
	struct tlb_dp *dp = &w->dp[0];
	struct stack req = {0}, resp = {0};
	uint64_t gap_tsc = L->tsc_hz / (1000000000u / LAT_GAP_NS);
	double mean_tsc =
		L->rate_mpps > 0 ? (double)L->tsc_hz / (L->rate_mpps * 1e6) : 0;
	/* cycles not the daemon's: the client's and the host's */
	uint64_t excl = 0;
	uint64_t now, next, t0 = 0, m0 = 0, p0 = 0;
	uint32_t poll = 0;
	struct tlb_rng rng;

	tlb_hist_init(&L->all);
	tlb_hist_init(&L->clean);
	L->skip = L->warmup;
	if (alloc_stacks(L, &req, &resp) != 0) {
		L->failed = true;
		snprintf(L->error, sizeof(L->error),
			 "no mbufs for %u in flight", L->inflight);
		goto out;
	}
	tlb_rng_seed(&rng, L->seed);
	now = next = rte_rdtsc();
	while (L->samples < L->packets && !L->failed) {
		uint64_t ta = rte_rdtsc(), tb, tc;

		now = ta - excl;
		if (L->skip == 0 && t0 == 0) {
			t0 = now;
			m0 = L->made;
			p0 = L->polls;
			L->gap_tsc = 0;
			L->gaps = 0;
			L->nic_dropped = 0;
		}
		if (mean_tsc == 0) {
			/* Saturation: the uplink never runs dry. */
			unsigned int have = rte_ring_count(w->up_rx[0]);

			for (; have < LAT_RX_RING; have++)
				if (!arrive_spare(L, &req, now, poll))
					break;
		} else {
			while (next <= now) {
				if (rte_ring_count(w->up_rx[0]) >=
				    LAT_RX_RING) {
					L->nic_dropped++;
				} else if (!arrive_spare(L, &req, next, poll)) {
					/* Every spare in flight: it arrives
					 * later. */
					L->backlogged++;
					break;
				}
				next += (uint64_t)(-log(tlb_rng_unit(&rng)) *
						   mean_tsc);
			}
		}
		tb = rte_rdtsc();
		excl += tb - ta;
		tlb_dp_poll(dp);
		tc = rte_rdtsc();
		if (unlikely(tc - tb > gap_tsc)) {
			L->gaps++;
			L->gap_tsc += tc - tb;
			L->last_gap_end = tc - excl;
			if (next < tc - excl)
				next = tc - excl; /* no arrivals in the gap */
		}
		take(L, &req, &resp, poll, tc - excl);
		excl += rte_rdtsc() - tc;
		poll++;
		L->polls++;
	}
	L->t1 = rte_rdtsc() - excl;
	L->t0 = t0;
	L->measured_made = L->made - m0;
	L->measured_polls = L->polls - p0;
	/* No more arrivals: every request made comes out, none is lost (a
	 * bound on a broken run, not a timing assumption). */
	for (uint32_t i = 0; i < (1u << 20) && L->taken < L->made && !L->failed;
	     i++) {
		tlb_dp_poll(dp);
		take(L, &req, &resp, poll, rte_rdtsc() - excl);
		poll++;
	}
	if (L->taken != L->made && !L->failed) {
		L->failed = true;
		snprintf(L->error, sizeof(L->error),
			 "%" PRIu64 " requests "
			 "made, %" PRIu64 " came out",
			 L->made, L->taken);
	}
out:
	/* What is still in the daemon or the rings is freed by the
	 * world's drain and the dispatcher's fini. */
	free_stack(&req);
	free_stack(&resp);
	return 0;
}
