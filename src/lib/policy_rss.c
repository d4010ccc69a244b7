/* SPDX-License-Identifier: BSD-3-Clause
 * rss: static spreading as a NIC does it. Toeplitz hash of the flow's
 * addresses and ports with the standard 40-byte key, low 7 bits index a
 * 128-entry indirection table filled round robin over the cores. One flow
 * always lands on one core; load is never looked at. If that core is out
 * of rotation the next eligible core in index order takes the flow, so a
 * dead core's flows move together and come back when it does.
 */
#include <string.h>

#include "policy_impl.h"

#define RSS_RETA_SIZE 128u

struct rss_state {
	uint8_t reta[RSS_RETA_SIZE]; /* indirection table over cores */
	uint8_t key[40];             /* the hash key */
	/* Toeplitz hash of key by table, one entry per input nibble
	 * position and value (36 input bytes), instead of 8 steps per byte */
	uint32_t tab[72][16];
};

TLB_POLICY_STATE_FITS(struct rss_state);

/* The 32 key bits starting at bit j (most significant first). */
static uint32_t
key_window(const uint8_t key[40], unsigned int j)
{
	uint64_t w = 0;

	for (unsigned int b = 0; b < 5; b++)
		w = w << 8 | (j / 8 + b < 40 ? key[j / 8 + b] : 0);
	return (uint32_t)(w >> (8 - j % 8));
}

static void
rss_init(struct tlb_policy *p)
{
	struct rss_state *s = TLB_POLICY_STATE(p, struct rss_state);

	memcpy(s->key, tlb_rss_default_key, sizeof(s->key));
	for (unsigned int i = 0; i < RSS_RETA_SIZE; i++)
		s->reta[i] = (uint8_t)(i % p->n_cores);
	/* Input bit j (MSB first) contributes the key window at j, so a
	 * nibble at position q contributes the XOR of the windows of its set
	 * bits. */
	for (unsigned int q = 0; q < 72; q++)
		for (unsigned int x = 0; x < 16; x++) {
			uint32_t h = 0;

			for (unsigned int b = 0; b < 4; b++)
				if (x & (8u >> b))
					h ^= key_window(s->key, 4 * q + b);
			s->tab[q][x] = h;
		}
}

/* The hash input NICs use: source address, destination address, source
 * port, destination port, each in network byte order. Returns its length. */
static size_t
rss_input(const struct tlb_flow_key *k, uint8_t in[36])
{
	size_t alen = k->ip_version == 6 ? 16 : 4;
	size_t off = 0;

	memcpy(in + off, k->src_addr, alen);
	off += alen;
	memcpy(in + off, k->dst_addr, alen);
	off += alen;
	in[off++] = (uint8_t)(k->src_port >> 8);
	in[off++] = (uint8_t)k->src_port;
	in[off++] = (uint8_t)(k->dst_port >> 8);
	in[off++] = (uint8_t)k->dst_port;
	return off;
}

/* tlb_rss_hash_flow() with the tables: same input, same hash. */
static uint32_t
rss_hash_tab(const struct rss_state *s, const struct tlb_flow_key *k)
{
	uint8_t in[36];
	size_t len = rss_input(k, in);
	uint32_t h = 0;

	for (size_t i = 0; i < len; i++)
		h ^= s->tab[2 * i][in[i] >> 4] ^
		     s->tab[2 * i + 1][in[i] & 0x0f];
	return h;
}

uint32_t
tlb_rss_hash_flow(const uint8_t key[40], const struct tlb_flow_key *k)
{
	uint8_t in[36];
	size_t len = rss_input(k, in);

	return tlb_toeplitz_hash(key, in, len);
}

static int
rss_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
	 const struct tlb_request_info *req)
{
	const struct rss_state *s = TLB_POLICY_STATE(p, struct rss_state);
	uint32_t n = p->n_cores;
	uint32_t h = req->key ? rss_hash_tab(s, req->key) : 0;
	uint32_t i = s->reta[h % RSS_RETA_SIZE];

	for (uint32_t j = 0; j < n; j++, i = i + 1 == n ? 0 : i + 1)
		if (tlb_lv_eligible(lv, i))
			return (int)i;
	return TLB_PICK_NONE;
}

const struct tlb_policy_ops tlb_policy_rss = {
	.name = "rss",
	.summary = "static Toeplitz hash of the flow (as NIC RSS)",
	.uses_flow_key = true,
	.init = rss_init,
	.pick = rss_pick,
};
