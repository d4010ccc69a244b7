/* SPDX-License-Identifier: BSD-3-Clause
 * Message affinity table: 4-way set associative, no allocation after
 * create; expiry by a periodic sweep, so that an incomplete message's
 * charge comes back in bounded time even if nothing else hits its set.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/affinity.h"

#define WAYS 4u

struct aff_entry {
	struct tlb_aff_key key;
	uint64_t expire_ns;
	struct tlb_aff_msg msg;
	uint16_t remaining;
	uint8_t used;
	uint8_t dead;
};

struct tlb_affinity {
	uint32_t set_mask;
	uint32_t cursor; /* the sweep's next entry */
	uint64_t timeout_ns;
	struct tlb_aff_stats stats;
	struct aff_entry e[];
};

struct tlb_affinity *
tlb_aff_create(uint32_t entries, uint64_t timeout_ns)
{
	uint32_t sets = 4;
	struct tlb_affinity *a;

	while (sets * WAYS < entries && sets < (1u << 28))
		sets <<= 1;
	a = calloc(1, sizeof(*a) + sizeof(a->e[0]) * sets * WAYS);
	if (a == NULL)
		return NULL;
	a->set_mask = sets - 1;
	a->timeout_ns = timeout_ns;
	return a;
}

void
tlb_aff_free(struct tlb_affinity *a)
{
	free(a);
}

void
tlb_aff_key_of(struct tlb_aff_key *k, const struct tlb_parsed *p)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->addr, p->key.src_addr, sizeof(k->addr));
	k->req_id = p->hdr.req_id;
	k->port = p->key.src_port;
	k->ip_version = p->key.ip_version;
}

static uint32_t
key_hash(const struct tlb_aff_key *k)
{
	uint64_t h = k->req_id * 0x9e3779b97f4a7c15ull;
	uint64_t a0, a1;

	memcpy(&a0, k->addr, 8);
	memcpy(&a1, k->addr + 8, 8);
	h ^= (a0 ^ (a1 * 0xc2b2ae3d27d4eb4full) ^ k->port) *
	     0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static bool
key_eq(const struct tlb_aff_key *x, const struct tlb_aff_key *y)
{
	return x->req_id == y->req_id && x->port == y->port &&
	       x->ip_version == y->ip_version &&
	       memcmp(x->addr, y->addr, sizeof(x->addr)) == 0;
}

static struct aff_entry *
set_of(struct tlb_affinity *a, const struct tlb_aff_key *k)
{
	return &a->e[(key_hash(k) & a->set_mask) * WAYS];
}

static struct aff_entry *
find(struct tlb_affinity *a, const struct tlb_aff_key *k)
{
	struct aff_entry *set = set_of(a, k);

	for (unsigned int w = 0; w < WAYS; w++)
		if (set[w].used && key_eq(&set[w].key, k))
			return &set[w];
	return NULL;
}

int
tlb_aff_lookup(struct tlb_affinity *a, const struct tlb_aff_key *k,
	       struct tlb_aff_msg *msg)
{
	struct aff_entry *e = find(a, k);
	int core;

	if (e == NULL)
		return TLB_AFF_NONE;
	a->stats.hits++;
	*msg = e->msg;
	core = e->dead ? TLB_AFF_DEAD : e->msg.core;
	if (--e->remaining == 0) {
		e->used = 0;
		a->stats.completed++;
	}
	return core;
}

bool
tlb_aff_insert(struct tlb_affinity *a, const struct tlb_aff_key *k,
	       const struct tlb_aff_msg *msg, uint16_t remaining,
	       uint64_t now_ns, struct tlb_aff_msg *evicted)
{
	struct aff_entry *set = set_of(a, k);
	struct aff_entry *victim = NULL;
	bool lost = false;

	if (remaining == 0)
		return false;
	for (unsigned int w = 0; w < WAYS; w++) {
		struct aff_entry *e = &set[w];

		if (!e->used) {
			victim = e;
			break;
		}
		if (victim == NULL || e->expire_ns < victim->expire_ns)
			victim = e;
	}
	if (victim->used && !victim->dead) {
		/* Whether or not it was past its time, its message is
		 * incomplete. */
		*evicted = victim->msg;
		lost = true;
		if (now_ns > victim->expire_ns)
			a->stats.expired++;
		else
			a->stats.evicted++;
	}
	victim->key = *k;
	victim->msg = *msg;
	victim->remaining = remaining;
	victim->expire_ns = now_ns + a->timeout_ns;
	victim->used = 1;
	victim->dead = 0;
	a->stats.inserted++;
	return lost;
}

void
tlb_aff_kill(struct tlb_affinity *a, const struct tlb_aff_key *k)
{
	struct aff_entry *e = find(a, k);

	if (e != NULL && !e->dead) {
		e->dead = 1;
		a->stats.killed++;
	}
}

uint32_t
tlb_aff_sweep(struct tlb_affinity *a, uint64_t now_ns, uint32_t budget,
	      struct tlb_aff_msg *out, uint32_t max)
{
	uint32_t n_entries = (a->set_mask + 1) * WAYS, n = 0;

	for (uint32_t i = 0; i < budget && n < max; i++) {
		struct aff_entry *e = &a->e[a->cursor];

		a->cursor = a->cursor + 1 == n_entries ? 0 : a->cursor + 1;
		if (!e->used || now_ns <= e->expire_ns)
			continue;
		e->used = 0;
		if (e->dead)
			continue;
		a->stats.expired++;
		out[n++] = e->msg;
	}
	return n;
}

const struct tlb_aff_stats *
tlb_aff_stats(const struct tlb_affinity *a)
{
	return &a->stats;
}

uint32_t
tlb_aff_capacity(const struct tlb_affinity *a)
{
	return (a->set_mask + 1) * WAYS;
}
