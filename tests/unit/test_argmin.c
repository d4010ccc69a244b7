/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: the argmin over dense keys (src/lib/argmin.h) against a
 * plain scan, jlq's order step (src/lib/order.h) against a plain
 * insertion and its tree against a rebuild. Built twice: as the library
 * is (SSE4.1 or NEON) and with TLB_ARGMIN_PORTABLE (the plain C loops).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "turbolb/rng.h"
#include "argmin.h"
#include "order.h"

static uint32_t key[TLB_MAX_CORES] __attribute__((aligned(TLB_CACHE_LINE)));

static struct tlb_rng rng;

static uint32_t
rnd(uint32_t bound)
{
	return tlb_rng_below(&rng, bound);
}

/* The first minimum at or after start, rotating through n. */
static int
ref_argmin(uint32_t n, uint32_t start, uint32_t *min)
{
	uint32_t best = TLB_KEY_NONE;
	int best_i = -1;

	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = (start + j) % n;

		if (key[i] < best) {
			best = key[i];
			best_i = (int)i;
		}
	}
	*min = best;
	return best_i;
}

/* Values that break a signed compare, a narrower lane or a missed chunk:
 * 0, around 2^31 and 2^16, the saturated key, and out of rotation. */
static uint32_t
some_key(uint32_t kind)
{
	static const uint32_t edge[] = {0,           1,           0x7fffffffu,
					0x80000000u, 0x80000001u, 0xffffu,
					0x10000u,    TLB_KEY_MAX, TLB_KEY_NONE};

	switch (kind) {
	case 0:
		return edge[rnd(sizeof(edge) / sizeof(edge[0]))];
	case 1:
		return rnd(4); /* many ties */
	case 2:
		return TLB_KEY_NONE;
	default:
		return rnd(UINT32_MAX);
	}
}

/* the start tried first, or not */
static bool
near_of(unsigned int round)
{
	return round % 2 == 0;
}

static void
test_matches_scan(void **state)
{
	(void)state;
	for (unsigned int round = 0; round < 200000; round++) {
		uint32_t n = round < 256 ? round + 1 : 1 + rnd(TLB_MAX_CORES);
		uint32_t start = rnd(n);
		uint32_t mix = rnd(4);
		uint32_t want_min, got_min = 0;

		for (uint32_t i = 0; i < TLB_MAX_CORES; i++)
			key[i] = i < n ? some_key(rnd(4) == 0 ? rnd(4) : mix)
				       : TLB_KEY_NONE;
		int want = ref_argmin(n, start, &want_min);
		int got = tlb_keys_argmin(key, n, start, near_of(round),
					  &got_min);

		if (got != want || got_min != want_min)
			fail_msg("%s: %u keys from %u: got %d (min %u), want "
				 "%d (min %u)",
				 TLB_ARGMIN_IMPL, n, start, got, got_min, want,
				 want_min);
	}
}

/* One minimum in each position, every start: the find's masks and their
 * rotation (a bit below start must wait for the wrap). */
static void
test_every_position(void **state)
{
	static const uint32_t sizes[] = {1, 7, 16, 17, 33, 64, 65, 130, 256};

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];

		for (uint32_t at = 0; at < n; at++)
			for (uint32_t start = 0; start < n; start++) {
				uint32_t min = 0;

				for (uint32_t i = 0; i < TLB_MAX_CORES; i++)
					key[i] = i < n ? 5 : TLB_KEY_NONE;
				key[at] = 4;
				assert_int_equal(tlb_keys_argmin(key, n, start,
								 near_of(start),
								 &min),
						 (int)at);
				assert_int_equal(min, 4);
				/* a tie further on from start */
				key[(start + n - 1) % n] = 4;
				int want = (int)at;
				if (start > at && (start + n - 1) % n >= start)
					want = (int)((start + n - 1) % n);
				assert_int_equal(tlb_keys_argmin(key, n, start,
								 near_of(start),
								 &min),
						 want);
			}
	}
}

static void
test_none_eligible(void **state)
{
	uint32_t min = 0;

	(void)state;
	for (uint32_t i = 0; i < TLB_MAX_CORES; i++)
		key[i] = TLB_KEY_NONE;
	assert_int_equal(tlb_keys_argmin(key, 16, 3, true, &min), -1);
	assert_true(min == TLB_KEY_NONE);
	assert_int_equal(tlb_keys_argmin(key, TLB_MAX_CORES, 200, false, &min),
			 -1);
	key[TLB_MAX_CORES - 1] = TLB_KEY_MAX;
	assert_int_equal(tlb_keys_argmin(key, TLB_MAX_CORES, 200, false, &min),
			 TLB_MAX_CORES - 1);
}

/* tlb_order_take(): the head goes behind every key <= x, the rest keep
 * their order, on random ascending keys with many ties, TLB_KEY_NONE
 * tails and x anywhere from the head's key to TLB_KEY_MAX. */
static void
test_order_take(void **state)
{
	static struct tlb_order o;

	(void)state;
	for (unsigned int round = 0; round < 200000; round++) {
		uint32_t want_key[TLB_ORDER_CORES];
		uint8_t want_id[TLB_ORDER_CORES];
		uint32_t spread = round % 3 == 0   ? 4
				  : round % 3 == 1 ? 1000
						   : UINT32_MAX;
		uint32_t none_from = rnd(TLB_ORDER_CORES + 1);
		uint32_t v = rnd(2) ? 0 : TLB_KEY_MAX - rnd(8);
		uint32_t x, j, at;

		for (j = 0; j < TLB_ORDER_CORES; j++) {
			uint32_t step = rnd(spread);

			v = v > TLB_KEY_MAX - step ? TLB_KEY_MAX : v + step;
			o.key[j] = j >= none_from ? TLB_KEY_NONE : v;
			o.id[j] = (uint8_t)((j * 7 + round) % TLB_ORDER_CORES);
		}
		if (o.key[0] == TLB_KEY_NONE)
			continue;
		x = o.key[0] + rnd(TLB_KEY_MAX - o.key[0] + 1);
		if (rnd(4) == 0) /* equal to a key in rotation (key[0] is) */
			x = o.key[rnd(none_from)];
		/* the plain insertion */
		for (at = 1; at < TLB_ORDER_CORES && o.key[at] <= x; at++) {
			want_key[at - 1] = o.key[at];
			want_id[at - 1] = o.id[at];
		}
		want_key[at - 1] = x;
		want_id[at - 1] = o.id[0];
		for (; at < TLB_ORDER_CORES; at++) {
			want_key[at] = o.key[at];
			want_id[at] = o.id[at];
		}
		tlb_order_take(&o, x);
		for (j = 0; j < TLB_ORDER_CORES; j++)
			if (o.key[j] != want_key[j] || o.id[j] != want_id[j])
				fail_msg("round %u, lane %u: key %u id %u, "
					 "want %u %u",
					 round, j, o.key[j], o.id[j],
					 want_key[j], want_id[j]);
	}
}

/* The tree: after any change of a leaf (tlb_order_set()), each node is
 * the least of its children, as tlb_order_build() makes them, and the
 * root the least leaf; values with many ties in the key, at sizes around
 * the powers of 2. */
static void
test_order_tree(void **state)
{
	static const uint32_t sizes[] = {1,  2,  3,   16,
					 17, 64, 100, TLB_MAX_CORES};
	static struct tlb_order o, ref;

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];

		o.leaves = 1;
		o.depth = 0;
		while (o.leaves < n) {
			o.leaves *= 2;
			o.depth++;
		}
		for (uint32_t i = 0; i < o.leaves; i++)
			o.node[o.leaves + i] =
				i < n ? tlb_order_value(rnd(4), rnd(1000), i)
				      : UINT64_MAX;
		tlb_order_build(&o);
		for (unsigned int step = 0; step < 3000; step++) {
			uint32_t i = rnd(n);
			uint64_t least = UINT64_MAX;

			tlb_order_set(&o, i,
				      tlb_order_value(rnd(2) ? rnd(4)
							     : rnd(UINT32_MAX),
						      rnd(1u << 24), i));
			for (uint32_t k = 0; k < n; k++)
				if (o.node[o.leaves + k] < least)
					least = o.node[o.leaves + k];
			assert_true(o.node[1] == least);
			ref = o;
			tlb_order_build(&ref);
			assert_memory_equal(ref.node, o.node,
					    2 * o.leaves * sizeof(o.node[0]));
		}
	}
}

/* Where SIMD is at hand the library uses it: this build must not be the
 * plain loops in disguise. */
static void
test_impl(void **state)
{
	(void)state;
#if defined(TLB_ARGMIN_PORTABLE)
	assert_string_equal(TLB_ARGMIN_IMPL, "portable");
#elif defined(__x86_64__)
	assert_string_equal(TLB_ARGMIN_IMPL, "sse4.1");
#elif defined(__aarch64__)
	assert_string_equal(TLB_ARGMIN_IMPL, "neon");
#endif
}

int
main(void)
{
	tlb_rng_seed(&rng, 987654321);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impl),
		cmocka_unit_test(test_matches_scan),
		cmocka_unit_test(test_every_position),
		cmocka_unit_test(test_none_eligible),
		cmocka_unit_test(test_order_take),
		cmocka_unit_test(test_order_tree),
	};

	return cmocka_run_group_tests_name("argmin (" TLB_ARGMIN_IMPL ")",
					   tests, NULL, NULL);
}
