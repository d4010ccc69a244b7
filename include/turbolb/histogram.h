/* SPDX-License-Identifier: BSD-3-Clause
 * Log-linear latency histogram (HdrHistogram-like). Values are unsigned
 * integers (nanoseconds by convention). Values below 2^TLB_HIST_SUB_BITS
 * are exact; above, each power of two is split into 2^TLB_HIST_SUB_BITS
 * linear sub-buckets, so the relative error of any reported value is below
 * 2^-TLB_HIST_SUB_BITS (0.78%). Covers up to 2^TLB_HIST_MAX_BITS - 1 ns
 * (about 73 minutes); larger values are clamped into the last bucket and
 * counted in `clamped`. Fixed size, no allocation, constant-time record.
 * Not thread-safe: one writer; merge per-thread histograms to combine.
 */
#ifndef TURBOLB_HISTOGRAM_H
#define TURBOLB_HISTOGRAM_H

#include <stdint.h>

#define TLB_HIST_SUB_BITS 7
#define TLB_HIST_MAX_BITS 42
#define TLB_HIST_BUCKETS                                                       \
	((TLB_HIST_MAX_BITS - TLB_HIST_SUB_BITS + 1) << TLB_HIST_SUB_BITS)

struct tlb_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t min;
	uint64_t max;
	uint64_t clamped;
	uint64_t buckets[TLB_HIST_BUCKETS];
};

void tlb_hist_init(struct tlb_hist *h);
void tlb_hist_record(struct tlb_hist *h, uint64_t v);
void tlb_hist_record_n(struct tlb_hist *h, uint64_t v, uint64_t n);
/* dst += src */
void tlb_hist_merge(struct tlb_hist *dst, const struct tlb_hist *src);
/* Value at quantile q in [0, 1] (0.99 for p99): the smallest recorded
 * bucket value v such that at least q of the samples are <= v, reported as
 * the bucket's midpoint and clamped to [min, max]. 0 if empty. */
uint64_t tlb_hist_quantile(const struct tlb_hist *h, double q);
double tlb_hist_mean(const struct tlb_hist *h);

/* Bucket mapping, exposed for tests. */
uint32_t tlb_hist_bucket(uint64_t v);
uint64_t tlb_hist_bucket_low(uint32_t b);  /* smallest value in bucket */
uint64_t tlb_hist_bucket_high(uint32_t b); /* largest value in bucket */

#endif /* TURBOLB_HISTOGRAM_H */
