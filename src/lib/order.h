/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: jlq's order of the cores by outstanding work (struct tlb_order,
 * jlq's state), kept from one pick to the next so that a pick
 * reads the least loaded core at the head instead of scanning the keys
 * the previous dispatch has just written.
 *
 * Up to TLB_ORDER_CORES cores, a sorted list. tlb_order_take() is one
 * step: the head (key[0], id[0]) leaves, and comes back with key x behind
 * every key <= x. With the keys ascending, the new key[j] is the median of
 * key[j], x and key[j + 1], that is min(max(key[j], x), key[j + 1]), and
 * the ids move the same way: lane j takes id[j + 1] where key[j + 1] <= x,
 * id[0] where only key[j] <= x, and keeps id[j] elsewhere; key[j + 1] <= x
 * is the test of lane j + 1, so one mask shifted by a lane says both. Four
 * vectors of keys and one of ids, no branch, no loop (SSE4.1 or NEON;
 * plain C elsewhere, or with TLB_ARGMIN_PORTABLE defined, as the unit
 * test builds it).
 *
 * Over that, a tournament tree (tlb_order_set()): changing a core's value
 * walks its path to the root, a compare and a conditional move a level,
 * one level more each time the cores double. Up to 16 cores the list is
 * used: its step is one wide operation, the tree's a chain of dependent
 * levels (docs/performance.md, "jlq's order and tree").
 */
#ifndef TURBOLB_ORDER_H
#define TURBOLB_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "turbolb/policy.h"
#include "policy_impl.h"

#if !defined(TLB_ARGMIN_PORTABLE) && defined(__SSE4_1__)
#include <smmintrin.h>
#define TLB_ORDER_SSE 1
#elif !defined(TLB_ARGMIN_PORTABLE) && defined(__aarch64__) &&                 \
	defined(__ARM_NEON)
#include <arm_neon.h>
#define TLB_ORDER_NEON 1
#endif

/* The cores in order of outstanding work, kept from one pick to the
 * next, the least loaded first and, among equal loads, the core picked
 * longest ago (before any pick: in rotation from the cursor). A pick takes
 * the first and puts it back where its key goes: the key the dispatch
 * gives it, or its own key for a pick not charged (behind its equals). The
 * order is exact for the view lv at key_gen == gen, and made again from
 * the view whenever anything else wrote a key.
 *
 * Up to TLB_ORDER_CORES cores, a sorted list: key[j] is the view's work
 * key of core id[j], ascending; lanes from n_cores on hold TLB_KEY_NONE;
 * picked[i] is the stamp of core i's last pick. Over that, a tournament
 * tree: leaf i, at node[leaves + i], is core i's work key in the high 32
 * bits, then the stamp of its last pick (24 bits, renewed before
 * TLB_ORDER_STAMP_END), then i (8 bits); each node is the least of its
 * two children, so node[1] is the first core. */
#define TLB_ORDER_CORES     16u
#define TLB_ORDER_STAMP_END (1u << 24)

struct tlb_order {
	uint32_t key[TLB_ORDER_CORES] __attribute__((aligned(16)));
	uint8_t id[TLB_ORDER_CORES] __attribute__((aligned(16)));
	const struct tlb_load_view *lv; /* the view it was made from */
	uint64_t gen;                   /* lv->key_gen for which it is exact */
	uint64_t stamp;                 /* the next pick's */
	uint64_t picked[TLB_ORDER_CORES];
	uint32_t leaves; /* tree: a power of 2 >= n_cores */
	uint32_t depth;  /* log2(leaves) */
	uint64_t node[2 * TLB_MAX_CORES];
};

_Static_assert(TLB_ORDER_CORES == 16, "four vectors of keys, one of ids");
TLB_POLICY_STATE_FITS(struct tlb_order);

/* jlq's state: its order. */
static inline struct tlb_order *
tlb_jlq_order(struct tlb_policy *p)
{
	return TLB_POLICY_STATE(p, struct tlb_order);
}

/* The head leaves and comes back with key x (x >= key[0]), behind
 * every key <= x. */
static inline __attribute__((always_inline)) void
tlb_order_take(struct tlb_order *o, uint32_t x)
{
#if defined(TLB_ORDER_SSE)
	__m128i *k = (__m128i *)o->key;
	__m128i s0 = _mm_loadu_si128(k), s1 = _mm_loadu_si128(k + 1);
	__m128i s2 = _mm_loadu_si128(k + 2), s3 = _mm_loadu_si128(k + 3);
	__m128i id = _mm_loadu_si128((const __m128i *)o->id);
	__m128i vx = _mm_set1_epi32((int)x);
	/* max(key[j], x) is x exactly where key[j] <= x */
	__m128i m0 = _mm_max_epu32(s0, vx), m1 = _mm_max_epu32(s1, vx);
	__m128i m2 = _mm_max_epu32(s2, vx), m3 = _mm_max_epu32(s3, vx);
	/* all-ones lanes stay all-ones through the saturating packs */
	__m128i here =
		_mm_packs_epi16(_mm_packs_epi32(_mm_cmpeq_epi32(m0, vx),
						_mm_cmpeq_epi32(m1, vx)),
				_mm_packs_epi32(_mm_cmpeq_epi32(m2, vx),
						_mm_cmpeq_epi32(m3, vx)));
	/* key[j + 1] <= x is the next lane's; past the end, never */
	__m128i next = _mm_srli_si128(here, 1);
	__m128i head = _mm_shuffle_epi8(id, _mm_setzero_si128());

	id = _mm_blendv_epi8(_mm_blendv_epi8(id, head, here),
			     _mm_srli_si128(id, 1), next);
	/* key[j + 1]; past the end TLB_KEY_NONE */
	_mm_storeu_si128(k, _mm_min_epu32(m0, _mm_alignr_epi8(s1, s0, 4)));
	_mm_storeu_si128(k + 1, _mm_min_epu32(m1, _mm_alignr_epi8(s2, s1, 4)));
	_mm_storeu_si128(k + 2, _mm_min_epu32(m2, _mm_alignr_epi8(s3, s2, 4)));
	_mm_storeu_si128(
		k + 3,
		_mm_min_epu32(m3, _mm_alignr_epi8(_mm_set1_epi32(-1), s3, 4)));
	_mm_storeu_si128((__m128i *)o->id, id);
#elif defined(TLB_ORDER_NEON)
	uint32x4_t s0 = vld1q_u32(o->key), s1 = vld1q_u32(o->key + 4);
	uint32x4_t s2 = vld1q_u32(o->key + 8), s3 = vld1q_u32(o->key + 12);
	uint8x16_t id = vld1q_u8(o->id);
	uint32x4_t vx = vdupq_n_u32(x);
	uint8x16_t here = vcombine_u8(
		vmovn_u16(vcombine_u16(vmovn_u32(vcleq_u32(s0, vx)),
				       vmovn_u32(vcleq_u32(s1, vx)))),
		vmovn_u16(vcombine_u16(vmovn_u32(vcleq_u32(s2, vx)),
				       vmovn_u32(vcleq_u32(s3, vx)))));
	uint8x16_t next = vextq_u8(here, vdupq_n_u8(0), 1);

	id = vbslq_u8(next, vextq_u8(id, vdupq_n_u8(0), 1),
		      vbslq_u8(here, vdupq_laneq_u8(id, 0), id));
	vst1q_u32(o->key, vminq_u32(vmaxq_u32(s0, vx), vextq_u32(s0, s1, 1)));
	vst1q_u32(o->key + 4,
		  vminq_u32(vmaxq_u32(s1, vx), vextq_u32(s1, s2, 1)));
	vst1q_u32(o->key + 8,
		  vminq_u32(vmaxq_u32(s2, vx), vextq_u32(s2, s3, 1)));
	vst1q_u32(o->key + 12,
		  vminq_u32(vmaxq_u32(s3, vx),
			    vextq_u32(s3, vdupq_n_u32(UINT32_MAX), 1)));
	vst1q_u8(o->id, id);
#else
	uint8_t head = o->id[0];
	uint32_t j = 0;

	for (; j + 1 < TLB_ORDER_CORES && o->key[j + 1] <= x; j++) {
		o->key[j] = o->key[j + 1];
		o->id[j] = o->id[j + 1];
	}
	o->key[j] = x;
	o->id[j] = head;
#endif
}

/* ---- the tree, over TLB_ORDER_CORES cores ---- */

_Static_assert(TLB_MAX_CORES <= 256, "a core's index fills 8 bits");

/* A leaf: key, then stamp, then core, so that the least value is the
 * least key, among equal keys the oldest stamp. */
static inline uint64_t
tlb_order_value(uint32_t key, uint32_t stamp, uint32_t core)
{
	return (uint64_t)key << 32 | (uint64_t)stamp << 8 | core;
}

static inline uint32_t
tlb_order_key(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

static inline uint32_t
tlb_order_core(uint64_t v)
{
	return (uint32_t)v & 0xffu;
}

/* Core i's leaf becomes v, and each node on its path to the root the
 * least of its children again: o->depth levels, unrolled (a jump into the
 * sequence, the same target pick after pick). */
#define TLB_ORDER_LEVEL(node, j, v)                                            \
	do {                                                                   \
		uint64_t s_ = (node)[(j) ^ 1];                                 \
		(v) = s_ < (v) ? s_ : (v);                                     \
		(j) >>= 1;                                                     \
		(node)[j] = (v);                                               \
	} while (0)

static inline __attribute__((always_inline)) void
tlb_order_set(struct tlb_order *o, uint32_t i, uint64_t v)
{
	uint64_t *node = o->node;
	size_t j = (size_t)o->leaves + i;

	node[j] = v;
	switch (o->depth) {
	case 8:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 7:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 6:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 5:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 4:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 3:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 2:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	case 1:
		TLB_ORDER_LEVEL(node, j, v); /* fall through */
	default:
		break;
	}
}

/* Every node from the leaves. */
static inline void
tlb_order_build(struct tlb_order *o)
{
	for (uint32_t j = o->leaves - 1; j >= 1; j--) {
		uint64_t l = o->node[2 * j], r = o->node[2 * j + 1];

		o->node[j] = l < r ? l : r;
	}
}

#endif /* TURBOLB_ORDER_H */
