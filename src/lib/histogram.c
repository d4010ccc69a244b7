/* SPDX-License-Identifier: BSD-3-Clause
 * Log-linear histogram. Bucket index layout, with S = TLB_HIST_SUB_BITS:
 *   [0, 2^S)          one bucket per value 0 .. 2^S - 1
 *   then, for each msb position m in [S, MAX_BITS), 2^S buckets of width
 *   2^(m - S), indexed by the S bits below the msb.
 * The m = S group has width 1, so values below 2^(S+1) are exact too, and
 * the index is simply ((m - S + 1) << S) + sub, contiguous with the exact
 * range. Half a bucket is at most 2^(m-S-1) against a value >= 2^m, hence
 * the 2^-(S+1) worst-case error of the midpoint.
 */
#include <math.h>
#include <string.h>

#include "turbolb/histogram.h"

#define SUB_COUNT   (1u << TLB_HIST_SUB_BITS)
#define SUB_MASK    (SUB_COUNT - 1)
#define LAST_BUCKET ((uint32_t)TLB_HIST_BUCKETS - 1)
#define LIMIT       (1ull << TLB_HIST_MAX_BITS)

void
tlb_hist_init(struct tlb_hist *h)
{
	memset(h, 0, sizeof(*h));
}

uint32_t
tlb_hist_bucket(uint64_t v)
{
	uint32_t m;

	if (v < SUB_COUNT)
		return (uint32_t)v;
	if (v >= LIMIT)
		return LAST_BUCKET;
	m = 63 - (uint32_t)__builtin_clzll(v);
	/* (v >> (m - S)) keeps the msb, so it lies in [2^S, 2^(S+1)). */
	return ((m - TLB_HIST_SUB_BITS) << TLB_HIST_SUB_BITS) +
	       (uint32_t)(v >> (m - TLB_HIST_SUB_BITS));
}

uint64_t
tlb_hist_bucket_low(uint32_t b)
{
	uint32_t shift;

	if (b < SUB_COUNT)
		return b;
	shift = (b >> TLB_HIST_SUB_BITS) - 1;
	return (uint64_t)(SUB_COUNT + (b & SUB_MASK)) << shift;
}

uint64_t
tlb_hist_bucket_high(uint32_t b)
{
	uint32_t shift;

	if (b < SUB_COUNT)
		return b;
	shift = (b >> TLB_HIST_SUB_BITS) - 1;
	return tlb_hist_bucket_low(b) + (1ull << shift) - 1;
}

void
tlb_hist_record_n(struct tlb_hist *h, uint64_t v, uint64_t n)
{
	if (n == 0)
		return;
	/* min is 0 while empty (friendlier to readers than a sentinel), so
	 * the first sample must set it unconditionally. */
	if (h->count == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	if (v >= LIMIT)
		h->clamped += n;
	h->count += n;
	h->sum += v * n;
	h->buckets[tlb_hist_bucket(v)] += n;
}

void
tlb_hist_record(struct tlb_hist *h, uint64_t v)
{
	tlb_hist_record_n(h, v, 1);
}

void
tlb_hist_merge(struct tlb_hist *dst, const struct tlb_hist *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	dst->clamped += src->clamped;
	for (uint32_t b = 0; b < TLB_HIST_BUCKETS; b++)
		dst->buckets[b] += src->buckets[b];
}

uint64_t
tlb_hist_quantile(const struct tlb_hist *h, double q)
{
	uint64_t rank, cum = 0;
	uint32_t b;
	uint64_t lo, mid;

	if (h->count == 0)
		return 0;
	/* Written so that NaN lands on 0 too. */
	if (!(q > 0.0))
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;

	for (b = 0; b < LAST_BUCKET; b++) {
		cum += h->buckets[b];
		if (cum >= rank)
			break;
	}
	lo = tlb_hist_bucket_low(b);
	mid = lo + (tlb_hist_bucket_high(b) - lo) / 2;
	if (mid < h->min)
		mid = h->min;
	if (mid > h->max)
		mid = h->max;
	return mid;
}

double
tlb_hist_mean(const struct tlb_hist *h)
{
	if (h->count == 0)
		return 0.0;
	return (double)h->sum / (double)h->count;
}
