/* SPDX-License-Identifier: BSD-3-Clause
 * Histogram tests: bucket mapping invariants, and quantiles checked against
 * exact order statistics of sorted reference data.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/histogram.h"
#include "turbolb/rng.h"

#define LAST_BUCKET ((uint32_t)TLB_HIST_BUCKETS - 1)
#define LIMIT       (1ull << TLB_HIST_MAX_BITS)
#define REF_N       1000000
/* What the header promises; tighter than the 1% asked of reports. */
#define MAX_REL_ERR (1.0 / (1u << TLB_HIST_SUB_BITS))
/* Reporting the midpoint rather than an edge halves it. */
#define MID_REL_ERR (MAX_REL_ERR / 2)

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact order statistic the histogram approximates: the smallest
 * sample with at least q of the samples at or below it. */
static uint64_t
exact_quantile(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static struct tlb_hist *
new_hist(void)
{
	struct tlb_hist *h = test_malloc(sizeof(*h));

	tlb_hist_init(h);
	return h;
}

static void
test_empty(void **state)
{
	struct tlb_hist *h = new_hist();

	(void)state;
	assert_int_equal(h->count, 0);
	assert_int_equal(tlb_hist_quantile(h, 0.0), 0);
	assert_int_equal(tlb_hist_quantile(h, 0.5), 0);
	assert_int_equal(tlb_hist_quantile(h, 1.0), 0);
	assert_true(tlb_hist_mean(h) == 0.0);
	assert_int_equal(h->min, 0);
	assert_int_equal(h->max, 0);
	for (uint32_t b = 0; b < TLB_HIST_BUCKETS; b++)
		assert_int_equal(h->buckets[b], 0);
	test_free(h);
}

static void
test_bucket_layout(void **state)
{
	(void)state;
	assert_int_equal(tlb_hist_bucket_low(0), 0);
	assert_int_equal(tlb_hist_bucket_high(LAST_BUCKET), LIMIT - 1);
	for (uint32_t b = 0; b < TLB_HIST_BUCKETS; b++) {
		uint64_t lo = tlb_hist_bucket_low(b);
		uint64_t hi = tlb_hist_bucket_high(b);

		assert_true(lo <= hi);
		assert_int_equal(tlb_hist_bucket(lo), b);
		assert_int_equal(tlb_hist_bucket(hi), b);
		if (b + 1 < TLB_HIST_BUCKETS)
			assert_int_equal(tlb_hist_bucket_low(b + 1), hi + 1);
		/* Width bound behind the error promise. */
		if (lo >= (1u << TLB_HIST_SUB_BITS))
			assert_true((double)(hi - lo + 1) / (double)lo <=
				    MAX_REL_ERR);
		else
			assert_int_equal(lo, hi);
	}
}

static void
check_value(uint64_t v)
{
	uint32_t b = tlb_hist_bucket(v);

	assert_true(b < TLB_HIST_BUCKETS);
	if (v >= LIMIT) {
		assert_int_equal(b, LAST_BUCKET);
		return;
	}
	assert_true(tlb_hist_bucket_low(b) <= v);
	assert_true(v <= tlb_hist_bucket_high(b));
	/* Monotonic around v. */
	if (v > 0)
		assert_true(tlb_hist_bucket(v - 1) <= b);
	if (v < UINT64_MAX)
		assert_true(tlb_hist_bucket(v + 1) >= b);
}

static void
test_bucket_contains(void **state)
{
	struct tlb_rng r;

	(void)state;
	for (uint64_t v = 0; v < 4096; v++)
		check_value(v);
	for (int k = 0; k < 64; k++) {
		uint64_t p = 1ull << k;

		check_value(p - 1);
		check_value(p);
		check_value(p + 1);
		check_value(p | (p >> 1));
		check_value(p + (p >> TLB_HIST_SUB_BITS));
		check_value(p + (p >> TLB_HIST_SUB_BITS) - 1);
	}
	check_value(UINT64_MAX);
	tlb_rng_seed(&r, 7);
	for (int i = 0; i < 200000; i++) {
		/* Log-uniform over the whole 64-bit range. */
		int bits = (int)tlb_rng_below(&r, 64);

		check_value(tlb_rng_next(&r) >> bits);
	}
}

static void
test_small_exact(void **state)
{
	struct tlb_hist *h = new_hist();
	uint64_t ref[256];

	(void)state;
	for (uint64_t v = 0; v < 256; v++) {
		tlb_hist_init(h);
		tlb_hist_record(h, v);
		assert_int_equal(tlb_hist_quantile(h, 0.0), v);
		assert_int_equal(tlb_hist_quantile(h, 0.5), v);
		assert_int_equal(tlb_hist_quantile(h, 1.0), v);
	}
	tlb_hist_init(h);
	for (uint64_t v = 0; v < 256; v++) {
		ref[v] = v;
		tlb_hist_record(h, v);
	}
	for (int i = 0; i <= 1000; i++) {
		double q = i / 1000.0;

		assert_int_equal(tlb_hist_quantile(h, q),
				 exact_quantile(ref, 256, q));
	}
	test_free(h);
}

enum ref_kind {
	REF_UNIFORM,
	REF_EXP,
	REF_LOGNORMAL,
	REF_LOGUNIFORM,
	REF_BIMODAL
};

static uint64_t
ref_sample(enum ref_kind k, struct tlb_rng *r)
{
	double u = tlb_rng_unit(r), z;

	switch (k) {
	case REF_UNIFORM: /* 0 .. 999 ns: mostly in the exact range */
		return tlb_rng_below(r, 1000);
	case REF_EXP: /* mean 50 us */
		return (uint64_t)(-50000.0 * log(u));
	case REF_LOGNORMAL: /* median 1 ms, sigma 2: ns to seconds */
		z = sqrt(-2.0 * log(u)) *
		    cos(6.283185307179586 * tlb_rng_unit(r));
		return (uint64_t)exp(log(1e6) + 2.0 * z);
	case REF_LOGUNIFORM: /* 1 ns .. 10 s */
		return (uint64_t)exp(u * log(1e10));
	case REF_BIMODAL: /* 200 ns +- 10%, or 5 ms +- 10% */
		if (u < 0.95)
			return 180 + tlb_rng_below(r, 40);
		return 4500000 + tlb_rng_below(r, 1000000);
	}
	return 0;
}

static void
check_against_reference(enum ref_kind k)
{
	static const double qs[] = {0.0,  0.25,  0.5,    0.9,
				    0.99, 0.999, 0.9999, 1.0};
	uint64_t *ref = malloc(REF_N * sizeof(*ref));
	struct tlb_hist *h = new_hist();
	struct tlb_rng r;
	long double sum = 0;

	assert_non_null(ref);
	tlb_rng_seed(&r, 1000 + (uint64_t)k);
	for (size_t i = 0; i < REF_N; i++) {
		ref[i] = ref_sample(k, &r);
		sum += ref[i];
		tlb_hist_record(h, ref[i]);
	}
	qsort(ref, REF_N, sizeof(*ref), cmp_u64);

	assert_int_equal(h->count, REF_N);
	assert_int_equal(h->min, ref[0]);
	assert_int_equal(h->max, ref[REF_N - 1]);
	assert_int_equal(h->clamped, 0);
	assert_true(fabs(tlb_hist_mean(h) - (double)(sum / REF_N)) <=
		    1e-9 * (double)(sum / REF_N));
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		uint64_t want = exact_quantile(ref, REF_N, qs[i]);
		uint64_t got = tlb_hist_quantile(h, qs[i]);
		double err;

		if (want == 0) {
			assert_int_equal(got, 0);
			continue;
		}
		err = fabs((double)got - (double)want) / (double)want;
		if (err > MID_REL_ERR)
			fail_msg("kind %d q %g: got %llu want %llu (err %g)",
				 (int)k, qs[i], (unsigned long long)got,
				 (unsigned long long)want, err);
		if (want < (2u << TLB_HIST_SUB_BITS))
			assert_int_equal(got, want);
	}
	free(ref);
	test_free(h);
}

static void
test_ref_uniform(void **state)
{
	(void)state;
	check_against_reference(REF_UNIFORM);
}

static void
test_ref_exp(void **state)
{
	(void)state;
	check_against_reference(REF_EXP);
}

static void
test_ref_lognormal(void **state)
{
	(void)state;
	check_against_reference(REF_LOGNORMAL);
}

static void
test_ref_loguniform(void **state)
{
	(void)state;
	check_against_reference(REF_LOGUNIFORM);
}

static void
test_ref_bimodal(void **state)
{
	(void)state;
	check_against_reference(REF_BIMODAL);
}

static void
assert_hist_equal(const struct tlb_hist *a, const struct tlb_hist *b)
{
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->sum, b->sum);
	assert_int_equal(a->min, b->min);
	assert_int_equal(a->max, b->max);
	assert_int_equal(a->clamped, b->clamped);
	assert_memory_equal(a->buckets, b->buckets, sizeof(a->buckets));
}

static void
test_merge(void **state)
{
	struct tlb_hist *whole = new_hist(), *lo = new_hist(), *hi = new_hist(),
			*empty = new_hist();
	struct tlb_rng r;

	(void)state;
	tlb_rng_seed(&r, 42);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = tlb_rng_next(&r) >> (16 + tlb_rng_below(&r, 48));

		tlb_hist_record(whole, v);
		tlb_hist_record(i < 100000 ? lo : hi, v);
	}
	/* A few clamped values on one side only. */
	tlb_hist_record(whole, LIMIT + 5);
	tlb_hist_record(hi, LIMIT + 5);

	tlb_hist_merge(lo, hi);
	assert_hist_equal(lo, whole);

	/* Merging into an empty histogram copies, min included. */
	tlb_hist_merge(empty, whole);
	assert_hist_equal(empty, whole);

	/* Merging an empty one changes nothing (min stays, not 0). */
	tlb_hist_init(hi);
	tlb_hist_merge(lo, hi);
	assert_hist_equal(lo, whole);

	test_free(whole);
	test_free(lo);
	test_free(hi);
	test_free(empty);
}

static void
test_merge_min(void **state)
{
	struct tlb_hist *a = new_hist(), *b = new_hist();

	(void)state;
	tlb_hist_record(a, 500);
	tlb_hist_record(b, 100);
	tlb_hist_record(b, 900);
	tlb_hist_merge(a, b);
	assert_int_equal(a->min, 100);
	assert_int_equal(a->max, 900);
	assert_int_equal(a->count, 3);
	assert_int_equal(a->sum, 1500);
	test_free(a);
	test_free(b);
}

static void
test_clamp(void **state)
{
	struct tlb_hist *h = new_hist();
	uint64_t q;

	(void)state;
	assert_int_equal(tlb_hist_bucket(LIMIT - 1), LAST_BUCKET);
	assert_int_equal(tlb_hist_bucket(LIMIT), LAST_BUCKET);
	assert_int_equal(tlb_hist_bucket(UINT64_MAX), LAST_BUCKET);

	tlb_hist_record(h, LIMIT - 1); /* in range: not clamped */
	assert_int_equal(h->clamped, 0);
	tlb_hist_record(h, LIMIT);
	tlb_hist_record_n(h, 1ull << 50, 3);
	assert_int_equal(h->clamped, 4);
	assert_int_equal(h->count, 5);
	assert_int_equal(h->buckets[LAST_BUCKET], 5);
	assert_int_equal(h->max, 1ull << 50);
	assert_int_equal(h->min, LIMIT - 1);
	/* True max kept even though the bucket cannot tell. */
	tlb_hist_record(h, UINT64_MAX);
	assert_int_equal(h->max, UINT64_MAX);
	assert_int_equal(h->clamped, 5);
	q = tlb_hist_quantile(h, 1.0);
	assert_true(q >= tlb_hist_bucket_low(LAST_BUCKET));
	assert_true(q <= tlb_hist_bucket_high(LAST_BUCKET));
	test_free(h);
}

static void
test_mean_exact(void **state)
{
	struct tlb_hist *h = new_hist();

	(void)state;
	for (uint64_t v = 1; v <= 1000; v++)
		tlb_hist_record(h, v * 1000003);
	/* 1000003 * 500.5: the buckets are coarse, the mean is not. */
	assert_true(tlb_hist_mean(h) == 500501501.5);
	assert_int_equal(h->sum, 1000003ull * 500500);

	tlb_hist_init(h);
	tlb_hist_record_n(h, 7, 3);
	tlb_hist_record(h, 1000000007);
	assert_true(tlb_hist_mean(h) == (21.0 + 1000000007.0) / 4.0);
	test_free(h);
}

static void
test_record_n(void **state)
{
	struct tlb_hist *a = new_hist(), *b = new_hist();

	(void)state;
	tlb_hist_record_n(a, 12345, 0);
	assert_int_equal(a->count, 0);
	assert_int_equal(a->min, 0);
	for (int i = 0; i < 5; i++)
		tlb_hist_record(a, 12345);
	tlb_hist_record(a, 3);
	tlb_hist_record_n(b, 12345, 5);
	tlb_hist_record_n(b, 3, 1);
	assert_hist_equal(a, b);
	test_free(a);
	test_free(b);
}

static void
test_quantile_edges(void **state)
{
	struct tlb_hist *h = new_hist();

	(void)state;
	tlb_hist_record(h, 1000);
	tlb_hist_record(h, 5000);
	/* Out-of-range and NaN quantiles clamp instead of misbehaving. */
	assert_int_equal(tlb_hist_quantile(h, -1.0), tlb_hist_quantile(h, 0.0));
	assert_int_equal(tlb_hist_quantile(h, NAN), tlb_hist_quantile(h, 0.0));
	assert_int_equal(tlb_hist_quantile(h, 2.0), tlb_hist_quantile(h, 1.0));
	assert_int_equal(tlb_hist_bucket(tlb_hist_quantile(h, 0.0)),
			 tlb_hist_bucket(1000));
	assert_int_equal(tlb_hist_bucket(tlb_hist_quantile(h, 0.5)),
			 tlb_hist_bucket(1000));
	assert_int_equal(tlb_hist_bucket(tlb_hist_quantile(h, 0.51)),
			 tlb_hist_bucket(5000));
	/* Reported values never leave [min, max]. */
	assert_true(tlb_hist_quantile(h, 0.0) >= 1000);
	assert_true(tlb_hist_quantile(h, 1.0) <= 5000);

	/* Reported as the bucket midpoint: 1024 .. 1031 gives 1027. */
	tlb_hist_init(h);
	assert_int_equal(tlb_hist_bucket_low(tlb_hist_bucket(1024)), 1024);
	assert_int_equal(tlb_hist_bucket_high(tlb_hist_bucket(1024)), 1031);
	tlb_hist_record(h, 1024);
	tlb_hist_record(h, 2000);
	assert_int_equal(tlb_hist_quantile(h, 0.5), 1027);
	/* ... but clamped to the true extremes: 2000 is in 2000 .. 2007. */
	assert_int_equal(tlb_hist_quantile(h, 1.0), 2000);
	tlb_hist_init(h);
	tlb_hist_record(h, 1030);
	tlb_hist_record(h, 2001);
	assert_int_equal(tlb_hist_quantile(h, 0.0), 1030);
	assert_int_equal(tlb_hist_quantile(h, 1.0), 2001);
	tlb_hist_record(h, 2007);
	assert_int_equal(tlb_hist_quantile(h, 1.0), 2003);

	/* A single sample anywhere is reported as itself. */
	tlb_hist_init(h);
	tlb_hist_record(h, 123456789);
	assert_int_equal(tlb_hist_quantile(h, 0.5), 123456789);
	test_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_bucket_layout),
		cmocka_unit_test(test_bucket_contains),
		cmocka_unit_test(test_small_exact),
		cmocka_unit_test(test_ref_uniform),
		cmocka_unit_test(test_ref_exp),
		cmocka_unit_test(test_ref_lognormal),
		cmocka_unit_test(test_ref_loguniform),
		cmocka_unit_test(test_ref_bimodal),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_min),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_mean_exact),
		cmocka_unit_test(test_record_n),
		cmocka_unit_test(test_quantile_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
