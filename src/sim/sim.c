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
#define SERVER_IP    0x0a000001u /* 10.0.0.1 */
#define CLIENT_NET   0x0a000100u /* 10.0.1.0 */
#define CLIENT_HOSTS 8u
#define RPC_PORT     9000u
#define EPHEMERAL_LO 32768u /* Linux ip_local_port_range */
#define EPHEMERAL_N  (61000u - 32768u)

struct sim_req {
	uint64_t arrival;
	uint32_t svc;  /* true service time, also the hint */
	uint32_t work; /* what the load view was charged */
	uint32_t next; /* link in whichever list holds it */
	uint16_t core;
	uint16_t flow;
	uint8_t measured;
	uint8_t disp; /* the dispatcher that took it off the wire */
};

/* FIFO of requests linked through sim_req.next. */
struct sim_list {
	uint32_t head;
	uint32_t tail;
	uint32_t len;
};

/* Per-core counters a dispatcher publishes to the others (shared view). */
enum sim_pub {
	PUB_SENT,
	PUB_SENT_WORK,
	PUB_DONE,
	PUB_DONE_WORK,
	PUB_N,
};

/* One dispatcher: a server with the FIFO in front of it, its policy, its
 * load view and its hold FIFO. */
struct sim_disp {
	struct tlb_load_view *lv;
	struct tlb_policy pol;
	uint32_t base; /* its first core: the view's core i is core base + i */
	uint32_t n;    /* cores in its view */
	uint64_t done; /* end of the dispatch in progress; UINT64_MAX: idle */
	uint32_t req;
	struct sim_list wait;
	struct sim_list held;
	/* shared view with a sync period: what it did since the last tick,
	 * [core * PUB_N + enum sim_pub], and the cores it did it to (a tick
	 * costs what changed, not the number of cores) */
	uint64_t *pub;
	uint32_t *dirty;
	uint32_t n_dirty;
};

struct sim {
	const struct tlb_sim_params *p;
	struct tlb_sim_result *r;
	struct tlb_hist *hist;
	bool cfcfs;
	bool fixed;
	bool shared; /* shared view over more than one dispatcher */
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

	/* the NIC dispatchers */
	struct sim_disp *disp;
	uint32_t n_disp;
	uint8_t *flow_disp; /* split rss: each flow's dispatcher */
	struct tlb_rng rng_split;
	uint64_t next_sync; /* shared view's next tick; UINT64_MAX: none */

	struct sim_ring delivery;
	struct sim_ring feedback;
	struct sim_heap completions;

	struct sim_list *coreq; /* head is the request in service */
	uint64_t *served;
	uint32_t *idle; /* cfcfs: idle cores, a stack */
	uint32_t n_idle;
	struct sim_list central; /* cfcfs: the one queue */

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
	p->dispatchers = 1;
	p->split = TLB_SIM_SPLIT_EVEN;
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
	size_t fx = strlen(TLB_SIM_FIXED);

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
	/* fixed is the client's choice, not the NIC's: no policy table. */
	if (strncmp(spec, TLB_SIM_FIXED, fx) == 0 &&
	    (spec[fx] == '\0' || spec[fx] == ':')) {
		if (spec[fx] == ':') {
			snprintf(err, errlen,
				 "policy 'fixed' takes no parameter");
			return -1;
		}
		strlcpy(p->policy, TLB_SIM_FIXED, sizeof(p->policy));
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
	else if (sim_ring_push(&s->delivery, s->now + s->p->delivery_ns, ri) !=
		 0)
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
hold(struct sim *s, struct sim_disp *d, uint32_t ri)
{
	if (d->held.len >= s->p->fifo_cap) {
		drop(s, ri);
		return;
	}
	list_push(s, &d->held, ri);
	if (d->held.len > s->r->held_max)
		s->r->held_max = d->held.len;
}

/* Shared view: dispatcher d's change to core c reaches the other
 * dispatchers' views at once (no sync period) or at the next tick. */
static void
publish(struct sim *s, uint32_t d, uint32_t c, enum sim_pub what, uint32_t work)
{
	if (s->p->view_sync_ns > 0) {
		struct sim_disp *e = &s->disp[d];
		uint64_t *pub = &e->pub[c * PUB_N];

		if (pub[PUB_SENT] == 0 && pub[PUB_DONE] == 0)
			e->dirty[e->n_dirty++] = c;
		/* The others read at the next multiple of the period; a
		 * tick with nothing to read is not simulated. */
		if (s->next_sync == UINT64_MAX)
			s->next_sync = (s->now / s->p->view_sync_ns + 1) *
				       s->p->view_sync_ns;
		pub[what]++;
		pub[what + 1] += work;
		return;
	}
	for (uint32_t e = 0; e < s->n_disp; e++) {
		struct tlb_load_view *lv = s->disp[e].lv;

		if (e == d)
			continue;
		if (what == PUB_SENT) {
			lv->core[c].sent++;
			lv->core[c].sent_work_ns += work;
			tlb_lv_refresh(lv, c);
		} else {
			tlb_lv_on_complete(lv, c, 1, work);
		}
	}
}

/* Asks the policy; on a core, charges the load view as the daemon does
 * and sends the request on. Returns the pick (a core of the whole host). */
static int
pick_and_send(struct sim *s, uint32_t ri)
{
	struct sim_req *q = &s->req[ri];
	struct sim_disp *d = &s->disp[q->disp];
	struct tlb_request_info info = {
		.key = &s->flows[q->flow],
		.svc_hint_ns = q->svc,
		.svc_class = 0,
	};
	uint32_t work;
	int c;

	if (s->fixed) {
		q->core = (uint16_t)(q->flow % s->n);
		send_to_host(s, ri);
		return q->core;
	}
	work = tlb_policy_work_estimate(&d->pol, &info);
	c = tlb_policy_dispatch(&d->pol, d->lv, &info, work);
	if (c < 0)
		return c;
	q->core = (uint16_t)(d->base + (uint32_t)c);
	q->work = work;
	if (s->shared)
		publish(s, q->disp, q->core, PUB_SENT, work);
	send_to_host(s, ri);
	return q->core;
}

static void
route(struct sim *s, uint32_t ri)
{
	struct sim_disp *d = &s->disp[s->req[ri].disp];
	int c;

	if (s->cfcfs) {
		send_to_host(s, ri);
		return;
	}
	/* Held requests go first: a newcomer must not overtake them. */
	if (d->held.len > 0) {
		hold(s, d, ri);
		return;
	}
	c = pick_and_send(s, ri);
	if (c == TLB_PICK_HOLD)
		hold(s, d, ri);
	else if (c < 0)
		drop(s, ri);
}

static void
drain_held(struct sim *s, struct sim_disp *d)
{
	while (d->held.len > 0) {
		uint32_t ri = list_pop(s, &d->held);
		int c = pick_and_send(s, ri);

		if (c == TLB_PICK_HOLD) {
			list_push_front(s, &d->held, ri);
			return;
		}
		if (c < 0)
			drop(s, ri);
	}
}

/* A completion reaches the NIC (after feedback_ns): the load view of the
 * dispatcher that sent the request counts it. */
static void
nic_complete(struct sim *s, uint32_t ri)
{
	struct sim_req *q = &s->req[ri];
	struct sim_disp *d = &s->disp[q->disp];

	if (!s->fixed) {
		tlb_lv_on_complete(d->lv, q->core - d->base, 1, q->work);
		tlb_policy_observe(&d->pol, 0, q->svc);
		if (s->shared)
			publish(s, q->disp, q->core, PUB_DONE, q->work);
	}
	req_free(s, ri);
	drain_held(s, d);
	if (s->shared && s->p->view_sync_ns == 0)
		for (uint32_t e = 0; e < s->n_disp; e++)
			drain_held(s, &s->disp[e]);
}

/* Shared view tick (a multiple of view_sync_ns): every dispatcher reads
 * what the others published since the last tick. */
static void
view_sync(struct sim *s)
{
	for (uint32_t e = 0; e < s->n_disp; e++) {
		struct sim_disp *src = &s->disp[e];

		for (uint32_t i = 0; i < src->n_dirty; i++) {
			uint32_t c = src->dirty[i];
			uint64_t *pub = &src->pub[c * PUB_N];

			for (uint32_t d = 0; d < s->n_disp; d++) {
				struct tlb_core_load *k =
					&s->disp[d].lv->core[c];

				if (d == e)
					continue;
				k->sent += pub[PUB_SENT];
				k->sent_work_ns += pub[PUB_SENT_WORK];
				tlb_lv_refresh(s->disp[d].lv, c);
				tlb_lv_on_complete(s->disp[d].lv, c,
						   pub[PUB_DONE],
						   pub[PUB_DONE_WORK]);
			}
			memset(pub, 0, PUB_N * sizeof(*pub));
		}
		src->n_dirty = 0;
	}
	s->next_sync = UINT64_MAX;
	for (uint32_t d = 0; d < s->n_disp; d++)
		drain_held(s, &s->disp[d]);
}

static void
dispatch_start(struct sim *s, struct sim_disp *d, uint32_t ri)
{
	d->req = ri;
	d->done = s->now + s->p->dispatch_ns;
}

static void
dispatch_done(struct sim *s, struct sim_disp *d)
{
	uint32_t ri = d->req;

	if (d->wait.len > 0)
		dispatch_start(s, d, list_pop(s, &d->wait));
	else
		d->done = UINT64_MAX;
	route(s, ri);
}

/* The dispatcher that takes a request off the wire. */
static uint32_t
split(struct sim *s, const struct sim_req *q)
{
	if (s->n_disp == 1)
		return 0;
	if (s->p->split == TLB_SIM_SPLIT_RSS)
		return s->flow_disp[q->flow];
	return tlb_rng_below(&s->rng_split, s->n_disp);
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
	struct sim_disp *d;
	struct sim_req *q;

	if (ri == SIM_NIL)
		return;
	q = &s->req[ri];
	q->arrival = s->now;
	q->svc = sample_service(s);
	q->work = 0;
	q->core = 0;
	q->flow = s->p->flows > 1
			  ? (uint16_t)tlb_rng_below(&s->rng_flow, s->p->flows)
			  : 0;
	q->measured = s->generated >= s->p->warmup;
	q->disp = (uint8_t)split(s, q);
	if (q->measured && s->generated == s->p->warmup)
		s->t_first = s->now;
	s->generated++;
	schedule_arrival(s);

	d = &s->disp[q->disp];
	if (s->p->dispatch_ns == 0)
		route(s, ri);
	else if (d->done == UINT64_MAX)
		dispatch_start(s, d, ri);
	else
		list_push(s, &d->wait, ri);
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
	else if (sim_ring_push(&s->feedback, s->now + s->p->feedback_ns, ri) !=
		 0)
		s->oom = true;
}

enum sim_source {
	SRC_NONE,
	SRC_COMPLETION,
	SRC_FEEDBACK,
	SRC_SYNC,
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
		struct sim_disp *disp = NULL;
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
		for (uint32_t d = 0; d < s->n_disp; d++) {
			if (s->disp[d].done < t) {
				t = s->disp[d].done;
				src = SRC_DISPATCH;
				disp = &s->disp[d];
			}
		}
		if (s->next_arrival < t) {
			t = s->next_arrival;
			src = SRC_ARRIVAL;
		}
		/* Ticks only while something else is still to happen. */
		if (src == SRC_NONE)
			return;
		if (s->next_sync < t || (s->next_sync == t && src > SRC_SYNC)) {
			t = s->next_sync;
			src = SRC_SYNC;
		}
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
		case SRC_SYNC:
			view_sync(s);
			break;
		case SRC_DISPATCH:
			dispatch_done(s, disp);
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
		 p->feedback_ns > UINT32_MAX || p->view_sync_ns > UINT32_MAX)
		why = "NIC delays must be below 2^32 ns";
	else if (p->dispatchers == 0 ||
		 p->dispatchers > TLB_SIM_MAX_DISPATCHERS)
		snprintf(r->err, sizeof(r->err),
			 "dispatchers: %u (must be 1..%u)", p->dispatchers,
			 TLB_SIM_MAX_DISPATCHERS);
	else if (p->dispatchers > p->n_cores && !p->shared_view)
		why = "a partitioned view needs a core for every dispatcher";
	else if (p->dispatchers > 1 && (strcmp(p->policy, TLB_SIM_CFCFS) == 0 ||
					strcmp(p->policy, TLB_SIM_FIXED) == 0))
		why = "cfcfs and fixed have no dispatcher to split";
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

/* The dispatchers and their views: partitioned, dispatcher d owns the
 * cores [d n / D, (d + 1) n / D); shared, every one sees all n. */
static int
sim_disp_init(struct sim *s)
{
	const struct tlb_sim_params *p = s->p;
	uint32_t n = s->n, nd = p->dispatchers;

	s->n_disp = nd;
	s->shared = nd > 1 && p->shared_view;
	s->next_sync = UINT64_MAX;
	s->disp = calloc(nd, sizeof(*s->disp));
	if (s->disp == NULL)
		return -1;
	for (uint32_t d = 0; d < nd; d++) {
		struct sim_disp *e = &s->disp[d];

		e->base = s->shared ? 0 : d * n / nd;
		e->n = s->shared ? n : (d + 1) * n / nd - e->base;
		e->done = UINT64_MAX;
		list_init(&e->wait);
		list_init(&e->held);
		/* its key arrays are read a cache line at a time */
		e->lv = aligned_alloc(_Alignof(struct tlb_load_view),
				      sizeof(*e->lv));
		if (e->lv == NULL)
			return -1;
		tlb_lv_init(e->lv, e->n);
		if (s->shared && p->view_sync_ns > 0) {
			e->pub = calloc((size_t)n * PUB_N, sizeof(*e->pub));
			e->dirty = calloc(n, sizeof(*e->dirty));
			if (e->pub == NULL || e->dirty == NULL)
				return -1;
		}
	}
	return 0;
}

/* Split rss: each flow's dispatcher is its RSS queue among the
 * dispatchers' queues, by the same hash and table as policy rss. */
static int
split_by_rss(struct sim *s, const struct tlb_policy_params *pp)
{
	uint32_t nd = s->n_disp;
	struct tlb_load_view *lv;
	struct tlb_policy rss;

	s->flow_disp = calloc(s->p->flows, sizeof(*s->flow_disp));
	lv = aligned_alloc(_Alignof(struct tlb_load_view), sizeof(*lv));
	if (s->flow_disp == NULL || lv == NULL ||
	    tlb_policy_init(&rss, "rss", pp, nd, s->r->err,
			    sizeof(s->r->err)) != 0) {
		if (s->r->err[0] == '\0')
			snprintf(s->r->err, sizeof(s->r->err), "out of memory");
		free(lv);
		return -1;
	}
	tlb_lv_init(lv, nd);
	for (uint32_t f = 0; f < s->p->flows; f++) {
		struct tlb_request_info info = {.key = &s->flows[f]};

		s->flow_disp[f] = (uint8_t)tlb_policy_pick(&rss, lv, &info);
	}
	free(lv);
	return 0;
}

static void
sim_free(struct sim *s)
{
	for (uint32_t d = 0; s->disp != NULL && d < s->n_disp; d++) {
		free(s->disp[d].lv);
		free(s->disp[d].pub);
		free(s->disp[d].dirty);
	}
	free(s->disp);
	free(s->flow_disp);
	free(s->completions.a);
	free(s->delivery.a);
	free(s->feedback.a);
	free(s->coreq);
	free(s->served);
	free(s->idle);
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
	s->fixed = strcmp(p->policy, TLB_SIM_FIXED) == 0;
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
	s->req_cap = 4096;
	s->req = malloc(sizeof(*s->req) * s->req_cap);
	if (s->completions.a == NULL || s->coreq == NULL || s->served == NULL ||
	    s->idle == NULL || sim_disp_init(s) != 0 || s->req == NULL ||
	    sim_ring_init(&s->delivery, 1024) != 0 ||
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
	/* Drawn after the other streams so that one dispatcher's runs stay
	 * what they were before several could be simulated. */
	tlb_rng_seed(&s->rng_split, tlb_splitmix64(&x));
	for (uint32_t d = 0; d < s->n_disp; d++) {
		struct sim_disp *e = &s->disp[d];

		/* one seed per dispatcher: their random draws differ */
		pp.seed ^= d * 0x9e3779b97f4a7c15ull;
		if (!s->cfcfs && !s->fixed &&
		    tlb_policy_init(&e->pol, p->policy, &pp, e->n, r->err,
				    sizeof(r->err)) != 0)
			return -1;
	}
	if (s->n_disp > 1 && p->split == TLB_SIM_SPLIT_RSS &&
	    split_by_rss(s, &pp) != 0)
		return -1;

	if (p->trace == NULL) {
		s->mean_gap = tlb_dist_mean(&p->dist) / (p->load * n);
		r->offered_mrps = 1e3 / s->mean_gap;
	} else {
		for (uint64_t i = 1; i < s->requests; i++) {
			if (p->trace->arrival_ns[i] <
			    p->trace->arrival_ns[i - 1]) {
				snprintf(
					r->err, sizeof(r->err),
					"trace: arrival %llu goes back in time",
					(unsigned long long)i + 1);
				return -1;
			}
		}
		uint64_t span = p->trace->arrival_ns[s->requests - 1] -
				p->trace->arrival_ns[0];
		r->offered_mrps =
			span ? 1e3 * (double)(s->requests - 1) / (double)span
			     : 0.0;
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
	for (uint32_t d = 0; d < s->n_disp; d++)
		r->dropped += s->disp[d].held.len;
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
