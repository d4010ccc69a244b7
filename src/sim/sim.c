/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-sim engine. The policies, the load view and the work estimate
 * are the core library's, called exactly as the daemon calls them; only
 * time, queues and the cfcfs reference are the simulator's own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "sim.h"
#include "sim_queue.h"

/* The server the flows talk to (the daemon's default RPC port) and the
 * client hosts they come from. */
#define SERVER_IP 0x0a000001u /* 10.0.0.1 */
#define CLIENT_NET 0x0a000100u /* 10.0.1.0 */
#define CLIENT_HOSTS 8u
#define RPC_PORT 9000u
#define EPHEMERAL_LO 32768u /* Linux ip_local_port_range */
#define EPHEMERAL_N (61000u - 32768u)

struct sim_req {
	uint64_t arrival;
	uint32_t svc;  /* true service time, also the hint */
	uint32_t work; /* what the load view was charged */
	uint32_t next; /* link in whichever list holds it */
	uint16_t core;
	uint16_t flow;
	uint8_t measured;
};

/* FIFO of requests linked through sim_req.next. */
struct sim_list {
	uint32_t head;
	uint32_t tail;
	uint32_t len;
};

struct sim {
	const struct tlb_sim_params *p;
	struct tlb_sim_result *r;
	struct tlb_hist *hist;
	bool cfcfs;
	bool oom;
	uint32_t n;
	uint64_t now;
	uint64_t requests;

	/* arrivals */
	uint64_t generated;
	uint64_t next_arrival; /* UINT64_MAX: no more */
	double clock;          /* exact Poisson clock; times round it */
	double mean_gap;
	struct tlb_rng rng_arrival;
	struct tlb_rng rng_service;
	struct tlb_rng rng_flow;

	/* the NIC dispatcher: one server and the FIFO in front of it */
	uint64_t disp_done; /* UINT64_MAX: idle */
	uint32_t disp_req;
	struct sim_list disp_wait;

	struct sim_ring delivery;
	struct sim_ring feedback;
	struct sim_heap completions;

	struct sim_list *coreq; /* head is the request in service */
	uint64_t *served;
	uint32_t *idle;         /* cfcfs: idle cores, a stack */
	uint32_t n_idle;
	struct sim_list central; /* cfcfs: the one queue */
	struct sim_list held;    /* the NIC-side FIFO of held requests */

	struct tlb_load_view *lv;
	struct tlb_policy pol;
	struct tlb_flow_key *flows;

	/* request pool */
	struct sim_req *req;
	uint32_t req_cap;
	uint32_t req_used;
	uint32_t req_free;

	/* statistics */
	uint64_t sum_latency;
	uint64_t sum_service;
	uint64_t sum_wait;
	uint64_t t_first; /* arrival of the first measured request */
	uint64_t t_last;  /* last completion */
};

void
tlb_sim_params_default(struct tlb_sim_params *p)
{
	memset(p, 0, sizeof(*p));
	p->n_cores = 16;
	strlcpy(p->policy, "jsq", sizeof(p->policy));
	tlb_policy_params_default(&p->policy_params);
	(void)tlb_dist_parse("exp:1us", &p->dist, NULL, 0);
	p->load = 0.5;
	p->requests = 1000000;
	p->warmup = 100000;
	p->seed = 1;
	p->flows = TLB_SIM_DEFAULT_FLOWS;
	p->fifo_cap = TLB_SIM_DEFAULT_FIFO;
}

int
tlb_sim_set_policy(struct tlb_sim_params *p, const char *spec, char *err,
		   size_t errlen)
{
	struct tlb_policy_params pp = p->policy_params;
	char name[TLB_POLICY_NAME_MAX];
	struct tlb_policy probe;
	size_t cf = strlen(TLB_SIM_CFCFS);

	/* cfcfs is not in the core library's table: the daemon cannot run
	 * it (it needs cores that pull from one shared queue). */
	if (strncmp(spec, TLB_SIM_CFCFS, cf) == 0 &&
	    (spec[cf] == '\0' || spec[cf] == ':')) {
		if (spec[cf] == ':') {
			snprintf(err, errlen,
				 "policy 'cfcfs' takes no parameter");
			return -1;
		}
		strlcpy(p->policy, TLB_SIM_CFCFS, sizeof(p->policy));
		return 0;
	}
	if (tlb_policy_parse_spec(spec, name, &pp, err, errlen) != 0)
		return -1;
	/* Let the policy's own check judge the parameter now, not at run. */
	if (tlb_policy_init(&probe, name, &pp, 1, err, errlen) != 0)
		return -1;
	strlcpy(p->policy, name, sizeof(p->policy));
	p->policy_params = pp;
	return 0;
}

void
tlb_sim_policy_spec(const struct tlb_sim_params *p, char *buf, size_t len)
{
	if (strcmp(p->policy, "pod") == 0)
		snprintf(buf, len, "pod:%u", p->policy_params.d);
	else if (strcmp(p->policy, "jbsq") == 0)
		snprintf(buf, len, "jbsq:%u", p->policy_params.k);
	else
		snprintf(buf, len, "%s", p->policy);
}

double
tlb_sim_mean_service_ns(const struct tlb_sim_params *p)
{
	double sum = 0.0;

	if (p->trace == NULL)
		return tlb_dist_mean(&p->dist);
	if (p->trace->len == 0)
		return 0.0;
	for (uint64_t i = 0; i < p->trace->len; i++)
		sum += p->trace->service_ns[i];
	return sum / (double)p->trace->len;
}

/* Request pool */

static uint32_t
req_alloc(struct sim *s)
{
	uint32_t i;

	if (s->req_free != SIM_NIL) {
		i = s->req_free;
		s->req_free = s->req[i].next;
		return i;
	}
	if (s->req_used == s->req_cap) {
		uint32_t cap = s->req_cap * 2;
		struct sim_req *a;

		if (s->req_cap >= SIM_NIL / 2) {
			s->oom = true;
			return SIM_NIL;
		}
		a = realloc(s->req, sizeof(*a) * cap);
		if (a == NULL) {
			s->oom = true;
			return SIM_NIL;
		}
		s->req = a;
		s->req_cap = cap;
	}
	return s->req_used++;
}

static void
req_free(struct sim *s, uint32_t i)
{
	s->req[i].next = s->req_free;
	s->req_free = i;
}

/* Lists */

static void
list_init(struct sim_list *l)
{
	l->head = SIM_NIL;
	l->tail = SIM_NIL;
	l->len = 0;
}

static void
list_push(struct sim *s, struct sim_list *l, uint32_t i)
{
	s->req[i].next = SIM_NIL;
	if (l->len == 0)
		l->head = i;
	else
		s->req[l->tail].next = i;
	l->tail = i;
	l->len++;
}

static void
list_push_front(struct sim *s, struct sim_list *l, uint32_t i)
{
	s->req[i].next = l->head;
	if (l->len == 0)
		l->tail = i;
	l->head = i;
	l->len++;
}

static uint32_t
list_pop(struct sim *s, struct sim_list *l)
{
	uint32_t i = l->head;

	l->head = s->req[i].next;
	if (--l->len == 0)
		l->tail = SIM_NIL;
	return i;
}

/* Hosts: per-core FIFOs, and cfcfs's central queue */

static void
core_start(struct sim *s, uint32_t c, uint32_t ri, bool replace_top)
{
	uint64_t t = s->now + s->req[ri].svc;

	if (replace_top)
		sim_heap_replace_top(&s->completions, t);
	else
		sim_heap_push(&s->completions, t, c);
}

static void
core_arrive(struct sim *s, uint32_t ri)
{
	uint32_t c = s->req[ri].core;
	struct sim_list *q = &s->coreq[c];

	list_push(s, q, ri);
	if (q->len == 1)
		core_start(s, c, ri, false);
}

static void
central_arrive(struct sim *s, uint32_t ri)
{
	uint32_t c;

	if (s->n_idle == 0) {
		list_push(s, &s->central, ri);
		return;
	}
	c = s->idle[--s->n_idle];
	s->req[ri].core = (uint16_t)c;
	list_push(s, &s->coreq[c], ri);
	core_start(s, c, ri, false);
}

static void
host_arrive(struct sim *s, uint32_t ri)
{
	if (s->cfcfs)
		central_arrive(s, ri);
	else
		core_arrive(s, ri);
}

static void
send_to_host(struct sim *s, uint32_t ri)
{
	if (s->p->delivery_ns == 0)
		host_arrive(s, ri);
	else if (sim_ring_push(&s->delivery, s->now + s->p->delivery_ns,
			       ri) != 0)
		s->oom = true;
}

/* The NIC: dispatch, hold, drop */

static void
drop(struct sim *s, uint32_t ri)
{
	s->r->dropped++;
	req_free(s, ri);
}

static void
hold(struct sim *s, uint32_t ri)
{
	if (s->held.len >= s->p->fifo_cap) {
		drop(s, ri);
		return;
	}
	list_push(s, &s->held, ri);
	if (s->held.len > s->r->held_max)
		s->r->held_max = s->held.len;
}

/* Asks the policy; on a core, charges the load view as the daemon does
 * and sends the request on. Returns the pick. */
static int
pick_and_send(struct sim *s, uint32_t ri)
{
	struct sim_req *q = &s->req[ri];
	struct tlb_request_info info = {
		.key = &s->flows[q->flow],
		.svc_hint_ns = q->svc,
		.svc_class = 0,
	};
	uint32_t work = tlb_policy_work_estimate(&s->pol, &info);
	int c = tlb_policy_dispatch(&s->pol, s->lv, &info, work);

	if (c < 0)
		return c;
	q->core = (uint16_t)c;
	q->work = work;
	send_to_host(s, ri);
	return c;
}

static void
route(struct sim *s, uint32_t ri)
{
	int c;

	if (s->cfcfs) {
		send_to_host(s, ri);
		return;
	}
	/* Held requests go first: a newcomer must not overtake them. */
	if (s->held.len > 0) {
		hold(s, ri);
		return;
	}
	c = pick_and_send(s, ri);
	if (c == TLB_PICK_HOLD)
		hold(s, ri);
	else if (c < 0)
		drop(s, ri);
}

static void
drain_held(struct sim *s)
{
	while (s->held.len > 0) {
		uint32_t ri = list_pop(s, &s->held);
		int c = pick_and_send(s, ri);

		if (c == TLB_PICK_HOLD) {
			list_push_front(s, &s->held, ri);
			return;
		}
		if (c < 0)
			drop(s, ri);
	}
}

/* A completion reaches the NIC's load view (after feedback_ns). */
static void
nic_complete(struct sim *s, uint32_t ri)
{
	struct sim_req *q = &s->req[ri];

	tlb_lv_on_complete(s->lv, q->core, 1, q->work);
	tlb_policy_observe(&s->pol, 0, q->svc);
	req_free(s, ri);
	drain_held(s);
}

static void
dispatch_start(struct sim *s, uint32_t ri)
{
	s->disp_req = ri;
	s->disp_done = s->now + s->p->dispatch_ns;
}

static void
dispatch_done(struct sim *s)
{
	uint32_t ri = s->disp_req;

	if (s->disp_wait.len > 0)
		dispatch_start(s, list_pop(s, &s->disp_wait));
	else
		s->disp_done = UINT64_MAX;
	route(s, ri);
}

/* Events */

static void
schedule_arrival(struct sim *s)
{
	if (s->generated >= s->requests) {
		s->next_arrival = UINT64_MAX;
		return;
	}
	if (s->p->trace != NULL) {
		s->next_arrival = s->p->trace->arrival_ns[s->generated];
		return;
	}
	s->clock += tlb_exp_sample(&s->rng_arrival, s->mean_gap);
	s->next_arrival = (uint64_t)(s->clock + 0.5);
}

static uint32_t
sample_service(struct sim *s)
{
	double v;

	if (s->p->trace != NULL)
		return s->p->trace->service_ns[s->generated];
	v = tlb_dist_sample(&s->p->dist, &s->rng_service) + 0.5;
	return v >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void
on_arrival(struct sim *s)
{
	uint32_t ri = req_alloc(s);
	struct sim_req *q;

	if (ri == SIM_NIL)
		return;
	q = &s->req[ri];
	q->arrival = s->now;
	q->svc = sample_service(s);
	q->work = 0;
	q->core = 0;
	q->flow = s->p->flows > 1 ?
			  (uint16_t)tlb_rng_below(&s->rng_flow, s->p->flows) :
			  0;
	q->measured = s->generated >= s->p->warmup;
	if (q->measured && s->generated == s->p->warmup)
		s->t_first = s->now;
	s->generated++;
	schedule_arrival(s);

	if (s->p->dispatch_ns == 0)
		route(s, ri);
	else if (s->disp_done == UINT64_MAX)
		dispatch_start(s, ri);
	else
		list_push(s, &s->disp_wait, ri);
}

static void
record(struct sim *s, uint32_t ri)
{
	const struct sim_req *q = &s->req[ri];
	uint64_t latency = s->now - q->arrival;

	s->r->completed++;
	s->t_last = s->now;
	if (!q->measured)
		return;
	s->r->measured++;
	s->sum_latency += latency;
	s->sum_service += q->svc;
	s->sum_wait += latency - q->svc;
	tlb_hist_record(s->hist, latency);
}

/* The core at the top of the heap finishes its request. */
static void
on_completion(struct sim *s)
{
	uint32_t c = s->completions.a[0].core;
	struct sim_list *q = &s->coreq[c];
	uint32_t ri = list_pop(s, q);

	record(s, ri);
	s->served[c]++;
	if (s->cfcfs) {
		if (s->central.len > 0) {
			uint32_t next = list_pop(s, &s->central);

			s->req[next].core = (uint16_t)c;
			list_push(s, q, next);
			core_start(s, c, next, true);
		} else {
			sim_heap_pop(&s->completions);
			s->idle[s->n_idle++] = c;
		}
		req_free(s, ri);
		return;
	}
	if (q->len > 0)
		core_start(s, c, q->head, true);
	else
		sim_heap_pop(&s->completions);
	if (s->p->feedback_ns == 0)
		nic_complete(s, ri);
	else if (sim_ring_push(&s->feedback, s->now + s->p->feedback_ns,
			       ri) != 0)
		s->oom = true;
}

enum sim_source {
	SRC_NONE,
	SRC_COMPLETION,
	SRC_FEEDBACK,
	SRC_DELIVERY,
	SRC_DISPATCH,
	SRC_ARRIVAL,
};

/* Simultaneous events run in the order of enum sim_source: what frees a
 * core or a credit first, new work last. */
static void
run_loop(struct sim *s)
{
	while (!s->oom) {
		enum sim_source src = SRC_NONE;
		uint64_t t = UINT64_MAX;
		uint64_t x;

		if (s->completions.len > 0) {
			t = s->completions.a[0].t;
			src = SRC_COMPLETION;
		}
		x = sim_ring_head_time(&s->feedback);
		if (x < t) {
			t = x;
			src = SRC_FEEDBACK;
		}
		x = sim_ring_head_time(&s->delivery);
		if (x < t) {
			t = x;
			src = SRC_DELIVERY;
		}
		if (s->disp_done < t) {
			t = s->disp_done;
			src = SRC_DISPATCH;
		}
		if (s->next_arrival < t) {
			t = s->next_arrival;
			src = SRC_ARRIVAL;
		}
		if (src == SRC_NONE)
			return;
		s->now = t;
		switch (src) {
		case SRC_NONE:
			return;
		case SRC_COMPLETION:
			on_completion(s);
			break;
		case SRC_FEEDBACK:
			nic_complete(s, sim_ring_pop(&s->feedback));
			break;
		case SRC_DELIVERY:
			host_arrive(s, sim_ring_pop(&s->delivery));
			break;
		case SRC_DISPATCH:
			dispatch_done(s);
			break;
		case SRC_ARRIVAL:
			on_arrival(s);
			break;
		}
	}
}

/* Setup */

static int
check_params(const struct tlb_sim_params *p, uint64_t requests,
	     struct tlb_sim_result *r)
{
	const char *why = NULL;

	if (p->n_cores == 0 || p->n_cores > TLB_MAX_CORES)
		snprintf(r->err, sizeof(r->err), "cores: %u (must be 1..%u)",
			 p->n_cores, TLB_MAX_CORES);
	else if (p->flows == 0 || p->flows > TLB_SIM_MAX_FLOWS)
		snprintf(r->err, sizeof(r->err), "flows: %u (must be 1..%u)",
			 p->flows, TLB_SIM_MAX_FLOWS);
	else if (requests == 0)
		why = "no requests to simulate";
	else if (p->warmup >= requests)
		why = "warm-up must be below the number of requests";
	else if (p->trace == NULL && !(p->load > 0.0 && isfinite(p->load)))
		why = "load must be > 0";
	else if (p->trace == NULL && !(tlb_dist_mean(&p->dist) > 0.0))
		why = "mean service time must be > 0";
	else if (p->dispatch_ns > UINT32_MAX || p->delivery_ns > UINT32_MAX ||
		 p->feedback_ns > UINT32_MAX)
		why = "NIC delays must be below 2^32 ns";
	else
		return 0;
	if (why != NULL)
		snprintf(r->err, sizeof(r->err), "%s", why);
	return -1;
}

/* Distinct 5-tuples from a few client hosts with ephemeral source ports,
 * drawn from the seed, as real clients would pick them. The RSS hash of
 * these is what decides rss's imbalance. */
static int
make_flows(struct sim *s, struct tlb_rng *rng)
{
	uint32_t n = s->p->flows;
	size_t words = (CLIENT_HOSTS * EPHEMERAL_N + 63) / 64;
	uint64_t *used = calloc(words, sizeof(*used));

	s->flows = calloc(n, sizeof(*s->flows));
	if (used == NULL || s->flows == NULL) {
		free(used);
		return -1;
	}
	for (uint32_t f = 0; f < n; f++) {
		struct tlb_flow_key *k = &s->flows[f];
		uint32_t host = f % CLIENT_HOSTS;
		uint32_t src = CLIENT_NET + 1 + host;
		uint32_t port, bit;

		do {
			port = tlb_rng_below(rng, EPHEMERAL_N);
			bit = host * EPHEMERAL_N + port;
		} while (used[bit / 64] & (1ull << (bit % 64)));
		used[bit / 64] |= 1ull << (bit % 64);

		k->ip_version = 4;
		k->proto = 17;
		for (int b = 0; b < 4; b++) {
			k->src_addr[b] = (uint8_t)(src >> (24 - 8 * b));
			k->dst_addr[b] = (uint8_t)(SERVER_IP >> (24 - 8 * b));
		}
		k->src_port = (uint16_t)(EPHEMERAL_LO + port);
		k->dst_port = RPC_PORT;
	}
	free(used);
	return 0;
}

static void
sim_free(struct sim *s)
{
	free(s->completions.a);
	free(s->delivery.a);
	free(s->feedback.a);
	free(s->coreq);
	free(s->served);
	free(s->idle);
	free(s->lv);
	free(s->flows);
	free(s->req);
}

static int
sim_init(struct sim *s, const struct tlb_sim_params *p,
	 struct tlb_sim_result *r, struct tlb_hist *hist)
{
	uint64_t x = p->seed;
	struct tlb_rng rng_flows;
	struct tlb_policy_params pp;
	uint32_t n = p->n_cores;

	s->p = p;
	s->r = r;
	s->hist = hist;
	s->n = n;
	s->cfcfs = strcmp(p->policy, TLB_SIM_CFCFS) == 0;
	s->requests = p->requests;
	if (p->trace != NULL &&
	    (s->requests == 0 || s->requests > p->trace->len))
		s->requests = p->trace->len;
	if (check_params(p, s->requests, r) != 0)
		return -1;

	/* One stream per source of randomness, so that changing the load
	 * rescales the same arrival draws and leaves service times, flows
	 * and the policy's own draws as they were. */
	tlb_rng_seed(&s->rng_arrival, tlb_splitmix64(&x));
	tlb_rng_seed(&s->rng_service, tlb_splitmix64(&x));
	tlb_rng_seed(&s->rng_flow, tlb_splitmix64(&x));
	tlb_rng_seed(&rng_flows, tlb_splitmix64(&x));
	pp = p->policy_params;
	pp.seed = tlb_splitmix64(&x);

	s->completions.a = calloc(n, sizeof(*s->completions.a));
	s->coreq = calloc(n, sizeof(*s->coreq));
	s->served = calloc(n, sizeof(*s->served));
	s->idle = calloc(n, sizeof(*s->idle));
	/* its key arrays are read a cache line at a time */
	s->lv = aligned_alloc(_Alignof(struct tlb_load_view), sizeof(*s->lv));
	s->req_cap = 4096;
	s->req = malloc(sizeof(*s->req) * s->req_cap);
	if (s->completions.a == NULL || s->coreq == NULL ||
	    s->served == NULL || s->idle == NULL || s->lv == NULL ||
	    s->req == NULL || sim_ring_init(&s->delivery, 1024) != 0 ||
	    sim_ring_init(&s->feedback, 1024) != 0 ||
	    make_flows(s, &rng_flows) != 0) {
		snprintf(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	s->req_free = SIM_NIL;
	for (uint32_t c = 0; c < n; c++) {
		list_init(&s->coreq[c]);
		s->idle[c] = n - 1 - c; /* core 0 on top */
	}
	s->n_idle = n;
	list_init(&s->central);
	list_init(&s->held);
	list_init(&s->disp_wait);
	s->disp_done = UINT64_MAX;

	tlb_lv_init(s->lv, n);
	if (!s->cfcfs && tlb_policy_init(&s->pol, p->policy, &pp, n, r->err,
					 sizeof(r->err)) != 0)
		return -1;

	if (p->trace == NULL) {
		s->mean_gap = tlb_dist_mean(&p->dist) / (p->load * n);
		r->offered_mrps = 1e3 / s->mean_gap;
	} else {
		for (uint64_t i = 1; i < s->requests; i++) {
			if (p->trace->arrival_ns[i] <
			    p->trace->arrival_ns[i - 1]) {
				snprintf(r->err, sizeof(r->err),
					 "trace: arrival %llu goes back in time",
					 (unsigned long long)i + 1);
				return -1;
			}
		}
		uint64_t span = p->trace->arrival_ns[s->requests - 1] -
				p->trace->arrival_ns[0];
		r->offered_mrps = span ? 1e3 * (double)(s->requests - 1) /
						 (double)span :
					 0.0;
	}
	schedule_arrival(s);
	return 0;
}

static void
finish(struct sim *s)
{
	struct tlb_sim_result *r = s->r;
	uint64_t busiest = 0;

	/* Held requests can only remain if no core could ever take them;
	 * count them rather than lose them silently. */
	r->dropped += s->held.len;
	r->requests = s->generated;
	r->sim_time_ns = s->now;
	if (r->measured > 0) {
		double m = (double)r->measured;

		r->mean_ns = (double)s->sum_latency / m;
		r->mean_service_ns = (double)s->sum_service / m;
		r->mean_wait_ns = (double)s->sum_wait / m;
		if (s->t_last > s->t_first)
			r->throughput_mrps =
				1e3 * m / (double)(s->t_last - s->t_first);
		r->p50_ns = tlb_hist_quantile(s->hist, 0.50);
		r->p90_ns = tlb_hist_quantile(s->hist, 0.90);
		r->p99_ns = tlb_hist_quantile(s->hist, 0.99);
		r->p999_ns = tlb_hist_quantile(s->hist, 0.999);
		r->max_ns = s->hist->max;
	}
	for (uint32_t c = 0; c < s->n; c++)
		if (s->served[c] > busiest)
			busiest = s->served[c];
	if (r->completed > 0)
		r->core_share_max =
			(double)busiest * s->n / (double)r->completed;
}

int
tlb_sim_run(const struct tlb_sim_params *p, struct tlb_sim_result *r,
	    struct tlb_hist *hist)
{
	struct tlb_hist *own = NULL;
	struct sim s;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	if (hist == NULL) {
		own = malloc(sizeof(*own));
		if (own == NULL) {
			snprintf(r->err, sizeof(r->err), "out of memory");
			return -1;
		}
		hist = own;
	}
	tlb_hist_init(hist);
	if (sim_init(&s, p, r, hist) == 0) {
		run_loop(&s);
		if (s.oom) {
			snprintf(r->err, sizeof(r->err), "out of memory");
		} else {
			finish(&s);
			rc = 0;
		}
	}
	sim_free(&s);
	free(own);
	return rc;
}
