/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the least loaded core over the load view's dense keys, with
 * no branch on the data. The keys are 32 bits, 16 to a cache line, and
 * every key from n up to TLB_MAX_CORES is TLB_KEY_NONE, so the scans read
 * whole lines of 16 keys (a "chunk") and never test for the end.
 *
 *   min:  the minimum of the chunks, 4 keys at a time (SSE4.1 pminud, NEON
 *         umin), then across the lanes;
 *   find: which keys equal it, as a bit mask (a compare, a pack and a
 *         movemask per 16 keys), the first set bit at or after the
 *         rotating start, else the first at all.
 *
 * No branch depends on the loads, and the work grows with the number of
 * 16-key chunks, not with a test per core (docs/performance.md, "The
 * argmin"). Where neither SSE4.1 nor NEON is there, or with
 * TLB_ARGMIN_PORTABLE defined (the unit test builds both), plain C loops
 * compute the same.
 */
#ifndef TURBOLB_ARGMIN_H
#define TURBOLB_ARGMIN_H

#include <stdbool.h>
#include <stdint.h>

#include "turbolb/load_view.h"

#if !defined(TLB_ARGMIN_PORTABLE) && defined(__SSE4_1__)
#include <smmintrin.h>
#define TLB_ARGMIN_IMPL "sse4.1"
#elif !defined(TLB_ARGMIN_PORTABLE) && defined(__aarch64__) &&                 \
	defined(__ARM_NEON)
#include <arm_neon.h>
#define TLB_ARGMIN_IMPL "neon"
#else
#define TLB_ARGMIN_IMPL "portable"
#endif

#define TLB_CHUNK 16u /* keys per chunk: one cache line */

_Static_assert(TLB_MAX_CORES % 64 == 0, "keys come in 64-bit masks");

/* The smallest of keys[0, 16 * chunks). */
static inline __attribute__((always_inline)) uint32_t
tlb_keys_min(const uint32_t *key, uint32_t chunks)
{
#if defined(__SSE4_1__) && !defined(TLB_ARGMIN_PORTABLE)
	const __m128i *k = (const __m128i *)key;
	__m128i m = _mm_load_si128(k);

	for (uint32_t c = 0; c < chunks; c++, k += 4)
		m = _mm_min_epu32(
			m, _mm_min_epu32(_mm_min_epu32(_mm_load_si128(k),
						       _mm_load_si128(k + 1)),
					 _mm_min_epu32(_mm_load_si128(k + 2),
						       _mm_load_si128(k + 3))));
	m = _mm_min_epu32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
	m = _mm_min_epu32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(m);
#elif defined(__aarch64__) && defined(__ARM_NEON) &&                           \
	!defined(TLB_ARGMIN_PORTABLE)
	uint32x4_t m = vld1q_u32(key);

	for (uint32_t c = 0; c < chunks; c++, key += TLB_CHUNK)
		m = vminq_u32(m, vminq_u32(vminq_u32(vld1q_u32(key),
						     vld1q_u32(key + 4)),
					   vminq_u32(vld1q_u32(key + 8),
						     vld1q_u32(key + 12))));
	return vminvq_u32(m);
#else
	uint32_t m = TLB_KEY_NONE;

	for (uint32_t i = 0; i < chunks * TLB_CHUNK; i++)
		m = key[i] < m ? key[i] : m;
	return m;
#endif
}

/* Bit j set: key[j] == v, for j < 16. */
static inline uint32_t
tlb_keys_eq16(const uint32_t *key, uint32_t v)
{
#if defined(__SSE4_1__) && !defined(TLB_ARGMIN_PORTABLE)
	const __m128i *k = (const __m128i *)key;
	__m128i vv = _mm_set1_epi32((int)v);
	/* all-ones lanes stay all-ones through the saturating packs */
	__m128i lo =
		_mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(k), vv),
				_mm_cmpeq_epi32(_mm_load_si128(k + 1), vv));
	__m128i hi =
		_mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(k + 2), vv),
				_mm_cmpeq_epi32(_mm_load_si128(k + 3), vv));

	return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(lo, hi));
#elif defined(__aarch64__) && defined(__ARM_NEON) &&                           \
	!defined(TLB_ARGMIN_PORTABLE)
	static const uint8_t weight[16] = {1, 2, 4, 8, 16, 32, 64, 128,
					   1, 2, 4, 8, 16, 32, 64, 128};
	uint32x4_t vv = vdupq_n_u32(v);
	uint16x8_t lo =
		vcombine_u16(vmovn_u32(vceqq_u32(vld1q_u32(key), vv)),
			     vmovn_u32(vceqq_u32(vld1q_u32(key + 4), vv)));
	uint16x8_t hi =
		vcombine_u16(vmovn_u32(vceqq_u32(vld1q_u32(key + 8), vv)),
			     vmovn_u32(vceqq_u32(vld1q_u32(key + 12), vv)));
	uint8x16_t bits = vandq_u8(vcombine_u8(vmovn_u16(lo), vmovn_u16(hi)),
				   vld1q_u8(weight));

	return vaddv_u8(vget_low_u8(bits)) |
	       (uint32_t)vaddv_u8(vget_high_u8(bits)) << 8;
#else
	uint32_t mask = 0;

	for (uint32_t j = 0; j < TLB_CHUNK; j++)
		mask |= (uint32_t)(key[j] == v) << j;
	return mask;
#endif
}

/* Bit j set: key[j] == v, for j < 64: four lines whole, however many
 * hold cores (the rest are TLB_KEY_NONE), with no loop. */
static inline uint64_t
tlb_keys_eq64(const uint32_t *key, uint32_t v)
{
	return (uint64_t)tlb_keys_eq16(key, v) |
	       (uint64_t)tlb_keys_eq16(key + 16, v) << 16 |
	       (uint64_t)tlb_keys_eq16(key + 32, v) << 32 |
	       (uint64_t)tlb_keys_eq16(key + 48, v) << 48;
}

/* The first core at or after start (rotating through n) whose key is the
 * minimum, -1 when every key is TLB_KEY_NONE; *min_out is the minimum.
 * key must be one of the view's arrays (TLB_MAX_CORES keys, cache line
 * aligned, TLB_KEY_NONE from n on); start < n <= TLB_MAX_CORES.
 *
 * near: try the start itself before the masks. Where ties are the rule
 * the start is the answer most of the time, and the branch that says so
 * lets the pick go on before the masks are made; where they are not, the
 * branch mispredicts. tlb_argmin() uses it for outstanding requests,
 * where ties are the rule. */
static inline __attribute__((always_inline)) int
tlb_keys_argmin(const uint32_t *key, uint32_t n, uint32_t start, bool near,
		uint32_t *min_out)
{
	bool one = __builtin_expect(n <= TLB_CHUNK, 1);
	uint32_t chunks = (n + TLB_CHUNK - 1) / TLB_CHUNK;
	/* up to 16 cores, one line: no loop at all */
	uint32_t v = one ? tlb_keys_min(key, 1) : tlb_keys_min(key, chunks);
	uint64_t full, bits;

	*min_out = v;
	if (v == TLB_KEY_NONE)
		return -1;
	if (near && key[start] == v)
		return (int)start;
	if (one) {
		full = tlb_keys_eq16(key, v);
		bits = full & (UINT64_MAX << start);
		return __builtin_ctzll(bits != 0 ? bits : full);
	}

	uint32_t words = (n + 63) / 64;
	uint32_t w = start / 64;

	full = tlb_keys_eq64(key + 64 * w, v);
	bits = full & (UINT64_MAX << (start % 64));
	if (words == 1)
		return __builtin_ctzll(bits != 0 ? bits : full);
	/* Over 64 cores: the start's word from the start, the words after
	 * it, round to the start's word again, whole. */
	while (bits == 0) {
		w = w + 1 == words ? 0 : w + 1;
		bits = tlb_keys_eq64(key + 64 * w, v);
	}
	return (int)(64 * w + (uint32_t)__builtin_ctzll(bits));
}

#endif /* TURBOLB_ARGMIN_H */
