/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server --mode kv: GET/PUT/DEL on an in-memory table shared by
 * every core (wire format: docs/host-integration.md). The table is sets
 * of KV_WAYS entries, each set behind its own reader-writer lock.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_jhash.h>
#include <rte_rwlock.h>

#include "server.h"

/* kv: see docs/host-integration.md */
#define KV_OP_GET  1
#define KV_OP_PUT  2
#define KV_OP_DEL  3
#define KV_HDR_LEN 3 /* op (1) + key length (2, big endian) */
#define KV_KEY_MAX 64
#define KV_VAL_MAX 1024
#define KV_SEED    0x746c626bu

struct kv_entry {
	uint16_t klen; /* 0: free */
	uint16_t vlen;
	uint8_t key[KV_KEY_MAX];
	uint8_t val[KV_VAL_MAX];
};

/* A set of KV_WAYS entries behind one lock: lookups of different sets
 * never contend, and a lookup reads at most one set. */
struct kv_set {
	rte_rwlock_t lock;
	struct kv_entry e[KV_WAYS];
} __rte_cache_aligned;

struct kv_table {
	uint32_t n_sets; /* power of two */
	uint32_t mask;
	struct kv_set *sets;
};

static struct kv_table kv;

int
kv_init(uint32_t capacity)
{
	uint32_t sets = rte_align32pow2((capacity + KV_WAYS - 1) / KV_WAYS);

	/* calloc, not rte_malloc: the table is plain process memory, and
	 * untouched sets cost no pages (--no-huge keeps the DPDK heap
	 * small). */
	kv.sets = calloc(sets, sizeof(*kv.sets));
	if (kv.sets == NULL)
		return -1;
	kv.n_sets = sets;
	kv.mask = sets - 1;
	for (uint32_t i = 0; i < sets; i++)
		rte_rwlock_init(&kv.sets[i].lock);
	return 0;
}

static struct kv_set *
kv_set_of(const uint8_t *key, uint16_t klen)
{
	uint32_t kbuf[KV_KEY_MAX / sizeof(uint32_t)];

	/* rte_jhash loads 32-bit words; the key sits at an odd offset in
	 * the frame. */
	memcpy(kbuf, key, klen);
	return &kv.sets[rte_jhash(kbuf, klen, KV_SEED) & kv.mask];
}

static struct kv_entry *
kv_find(struct kv_set *s, const uint8_t *key, uint16_t klen)
{
	for (unsigned int i = 0; i < KV_WAYS; i++) {
		struct kv_entry *e = &s->e[i];

		if (e->klen == klen && memcmp(e->key, key, klen) == 0)
			return e;
	}
	return NULL;
}

static inline uint16_t
rd_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

/* Executes the kv op in the request's payload and writes the value of a
 * GET into the frame. Returns the response's RPC status and sets *type and
 * *resp_len (payload bytes). */
uint16_t
kv_exec(struct core_stats *cs, struct rte_mbuf *m, const struct tlb_parsed *p,
	enum tlb_msg_type *type, uint16_t *resp_len)
{
	uint8_t *pl = rte_pktmbuf_mtod_offset(m, uint8_t *, p->payload_off);
	uint16_t len = p->hdr.payload_len;
	const uint8_t *key, *val;
	struct kv_entry *e;
	struct kv_set *s;
	uint16_t klen, vlen;
	uint8_t op;

	*type = TLB_MSG_RESPONSE;
	*resp_len = 0;
	if (unlikely(len < KV_HDR_LEN))
		goto bad;
	op = pl[0];
	klen = rd_be16(pl + 1);
	if (unlikely(klen == 0 || klen > KV_KEY_MAX || klen > len - KV_HDR_LEN))
		goto bad;
	key = pl + KV_HDR_LEN;
	val = key + klen;
	vlen = (uint16_t)(len - KV_HDR_LEN - klen);
	s = kv_set_of(key, klen);

	switch (op) {
	case KV_OP_GET: {
		uint16_t room;
		uint16_t st;

		cs->kv_get++;
		rte_rwlock_read_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e == NULL) {
			rte_rwlock_read_unlock(&s->lock);
			cs->kv_miss++;
			return TLB_RPC_ST_NOT_FOUND;
		}
		/* The value replaces the request in the frame; grow it if the
		 * value is longer than the request was. */
		room = (uint16_t)(rte_pktmbuf_data_len(m) - p->payload_off);
		if (e->vlen > room &&
		    rte_pktmbuf_append(m, (uint16_t)(e->vlen - room)) == NULL) {
			st = TLB_RPC_ST_BAD_REQUEST;
			*type = TLB_MSG_ERROR;
		} else {
			/* The key is read from the frame: copy the value only
			 * once the comparison is done (they overlap). */
			memcpy(pl, e->val, e->vlen);
			*resp_len = e->vlen;
			st = TLB_RPC_ST_OK;
		}
		rte_rwlock_read_unlock(&s->lock);
		if (st == TLB_RPC_ST_OK)
			cs->kv_hit++;
		else
			cs->kv_bad++;
		return st;
	}
	case KV_OP_PUT: {
		struct kv_entry *free_e = NULL;

		cs->kv_put++;
		if (unlikely(vlen > KV_VAL_MAX))
			goto bad;
		rte_rwlock_write_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e == NULL) {
			for (unsigned int i = 0; i < KV_WAYS; i++) {
				if (s->e[i].klen == 0) {
					free_e = &s->e[i];
					break;
				}
			}
			e = free_e;
			if (e == NULL) {
				rte_rwlock_write_unlock(&s->lock);
				cs->kv_full++;
				*type = TLB_MSG_ERROR;
				return TLB_RPC_ST_OVERLOAD;
			}
			memcpy(e->key, key, klen);
			e->klen = klen;
		}
		memcpy(e->val, val, vlen);
		e->vlen = vlen;
		rte_rwlock_write_unlock(&s->lock);
		return TLB_RPC_ST_OK;
	}
	case KV_OP_DEL:
		cs->kv_del++;
		rte_rwlock_write_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e != NULL)
			e->klen = 0;
		rte_rwlock_write_unlock(&s->lock);
		if (e == NULL) {
			cs->kv_miss++;
			return TLB_RPC_ST_NOT_FOUND;
		}
		cs->kv_hit++;
		return TLB_RPC_ST_OK;
	default:
		break;
	}
bad:
	cs->kv_bad++;
	*type = TLB_MSG_ERROR;
	return TLB_RPC_ST_BAD_REQUEST;
}

void
kv_free(void)
{
	free(kv.sets);
	kv.sets = NULL;
}
