/* SPDX-License-Identifier: BSD-3-Clause
 * The simulator's event structures. Only core completions happen out of
 * order, so only they need a priority queue: a binary heap with at most one
 * entry per core. Every other delay (delivery, feedback) is a constant
 * added to the current time, and the current time never goes back, so
 * those events are produced in time order and a FIFO ring holds them. That
 * keeps the heap small (log2(cores) levels) and most events O(1).
 */
#ifndef TURBOLB_SIM_QUEUE_H
#define TURBOLB_SIM_QUEUE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SIM_NIL UINT32_MAX

/* A completion: core finishes its request in service at t. */
struct sim_ev {
	uint64_t t;
	uint32_t core;
};

/* Earlier first; equal times by core index, so the order of simultaneous
 * completions never depends on the heap's history. */
static inline bool
sim_ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->core < b->core);
}

struct sim_heap {
	struct sim_ev *a;
	uint32_t len;
};

static inline void
sim_heap_push(struct sim_heap *h, uint64_t t, uint32_t core)
{
	struct sim_ev ev = {.t = t, .core = core};
	uint32_t i = h->len++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!sim_ev_before(&ev, &h->a[parent]))
			break;
		h->a[i] = h->a[parent];
		i = parent;
	}
	h->a[i] = ev;
}

/* Puts ev at the root and sifts it down. */
static inline void
sim_heap_sift_root(struct sim_heap *h, struct sim_ev ev)
{
	uint32_t n = h->len;
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && sim_ev_before(&h->a[c + 1], &h->a[c]))
			c++;
		if (!sim_ev_before(&h->a[c], &ev))
			break;
		h->a[i] = h->a[c];
		i = c;
	}
	h->a[i] = ev;
}

/* The core at the root starts its next request: one sift instead of a pop
 * and a push. */
static inline void
sim_heap_replace_top(struct sim_heap *h, uint64_t t)
{
	struct sim_ev ev = {.t = t, .core = h->a[0].core};

	sim_heap_sift_root(h, ev);
}

static inline void
sim_heap_pop(struct sim_heap *h)
{
	if (--h->len > 0)
		sim_heap_sift_root(h, h->a[h->len]);
}

/* A request that becomes due at t (delivery to a core, or its completion
 * reaching the NIC). */
struct sim_timed {
	uint64_t t;
	uint32_t req;
};

struct sim_ring {
	struct sim_timed *a;
	uint32_t mask; /* capacity - 1, capacity a power of two */
	uint32_t head;
	uint32_t len;
};

static inline int
sim_ring_init(struct sim_ring *r, uint32_t cap)
{
	r->a = malloc(sizeof(*r->a) * cap);
	r->mask = cap - 1;
	r->head = 0;
	r->len = 0;
	return r->a == NULL ? -1 : 0;
}

/* Doubles the ring, unwrapping it so the oldest entry is at 0. */
static inline int
sim_ring_grow(struct sim_ring *r)
{
	uint32_t cap = r->mask + 1;
	struct sim_timed *a;

	if (cap > UINT32_MAX / 2)
		return -1;
	a = malloc(sizeof(*a) * cap * 2);
	if (a == NULL)
		return -1;
	for (uint32_t i = 0; i < r->len; i++)
		a[i] = r->a[(r->head + i) & r->mask];
	free(r->a);
	r->a = a;
	r->mask = cap * 2 - 1;
	r->head = 0;
	return 0;
}

static inline int
sim_ring_push(struct sim_ring *r, uint64_t t, uint32_t req)
{
	if (r->len > r->mask && sim_ring_grow(r) != 0)
		return -1;

	struct sim_timed *e = &r->a[(r->head + r->len) & r->mask];

	e->t = t;
	e->req = req;
	r->len++;
	return 0;
}

static inline uint64_t
sim_ring_head_time(const struct sim_ring *r)
{
	return r->len ? r->a[r->head].t : UINT64_MAX;
}

static inline uint32_t
sim_ring_pop(struct sim_ring *r)
{
	uint32_t req = r->a[r->head].req;

	r->head = (r->head + 1) & r->mask;
	r->len--;
	return req;
}

#endif /* TURBOLB_SIM_QUEUE_H */
