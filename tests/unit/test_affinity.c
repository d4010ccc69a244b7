/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: multi-packet message affinity table.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "turbolb/affinity.h"

static struct tlb_aff_key
key(uint32_t addr, uint16_t port, uint64_t id)
{
	struct tlb_aff_key k;

	memset(&k, 0, sizeof(k));
	memcpy(k.addr, &addr, sizeof(addr));
	k.port = port;
	k.req_id = id;
	k.ip_version = 4;
	return k;
}

static struct tlb_aff_msg
msg_of(uint16_t core, uint32_t work)
{
	struct tlb_aff_msg m = {.work_ns = work, .gen = 7, .core = core};

	return m;
}

/* Inserts, failing the test if it pushed anything out. */
static void
insert(struct tlb_affinity *a, const struct tlb_aff_key *k, uint16_t core,
       uint16_t remaining, uint64_t now)
{
	struct tlb_aff_msg m = msg_of(core, 100u * core), gone;

	assert_false(tlb_aff_insert(a, k, &m, remaining, now, &gone));
}

static void
test_message_lifecycle(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(64, 1000);
	struct tlb_aff_key k = key(1, 2, 3);
	struct tlb_aff_msg m;

	(void)state;
	assert_non_null(a);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), TLB_AFF_NONE);
	/* First of 4 packets went to core 7: three more to come. */
	insert(a, &k, 7, 3, 0);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), 7);
	assert_int_equal(m.work_ns, 700);
	assert_int_equal(m.gen, 7);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), 7);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), 7);
	/* All seen: the entry is gone. */
	assert_int_equal(tlb_aff_lookup(a, &k, &m), TLB_AFF_NONE);
	assert_int_equal(tlb_aff_stats(a)->completed, 1);
	assert_int_equal(tlb_aff_stats(a)->hits, 3);
	tlb_aff_free(a);
}

static void
test_keys_distinct(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(1024, 1000);
	struct tlb_aff_msg m;

	(void)state;
	/* Same id from another client or port is another message. */
	struct tlb_aff_key k1 = key(1, 2, 3), k2 = key(9, 2, 3),
			   k3 = key(1, 5, 3), k4 = key(1, 2, 4);
	insert(a, &k1, 1, 5, 0);
	insert(a, &k2, 2, 5, 0);
	insert(a, &k3, 3, 5, 0);
	insert(a, &k4, 4, 5, 0);
	assert_int_equal(tlb_aff_lookup(a, &k1, &m), 1);
	assert_int_equal(tlb_aff_lookup(a, &k2, &m), 2);
	assert_int_equal(tlb_aff_lookup(a, &k3, &m), 3);
	assert_int_equal(tlb_aff_lookup(a, &k4, &m), 4);
	tlb_aff_free(a);
}

/* A message whose rest never comes is swept once past its time, and what
 * it charged comes back; one that completed, or is not yet due, is not. */
static void
test_sweep_hands_back_incomplete(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(16, 100);
	struct tlb_aff_key k = key(1, 1, 1), done = key(1, 1, 2),
			   young = key(1, 1, 3);
	struct tlb_aff_msg m, out[16];

	(void)state;
	insert(a, &k, 3, 2, 1000);
	insert(a, &done, 4, 1, 1000);
	insert(a, &young, 5, 1, 1150);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), 3);
	assert_int_equal(tlb_aff_lookup(a, &done, &m), 4);
	/* Not due yet: nothing. */
	assert_int_equal(tlb_aff_sweep(a, 1100, 16, out, 16), 0);
	/* k is past its time (one packet never came); young is not. */
	assert_int_equal(tlb_aff_sweep(a, 1201, 16, out, 16), 1);
	assert_int_equal(out[0].core, 3);
	assert_int_equal(out[0].work_ns, 300);
	assert_int_equal(tlb_aff_stats(a)->expired, 1);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), TLB_AFF_NONE);
	assert_int_equal(tlb_aff_lookup(a, &young, &m), 5);
	tlb_aff_free(a);
}

/* The sweep goes round the table a budget at a time and stops when its
 * output is full, the rest left for the next call. */
static void
test_sweep_budget(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(64, 10);
	struct tlb_aff_msg out[64];
	uint32_t total = 0, n;

	(void)state;
	for (uint64_t id = 0; id < 20; id++) {
		struct tlb_aff_key k = key(2, 2, id);
		struct tlb_aff_msg m = msg_of(1, 1), gone;

		tlb_aff_insert(a, &k, &m, 1, 0, &gone);
	}
	n = tlb_aff_sweep(a, 100, 8, out, 64);
	assert_true(n <= 8);
	total += n;
	n = tlb_aff_sweep(a, 100, 1000, out, 3);
	assert_int_equal(n, 3);
	total += n;
	while ((n = tlb_aff_sweep(a, 100, 64, out, 64)) != 0)
		total += n;
	/* Every message the table kept came back, once. */
	assert_int_equal(total, 20 - tlb_aff_stats(a)->evicted);
	tlb_aff_free(a);
}

/* A message whose core left rotation: its later packets look up dead,
 * and a dead message is never handed back (its charge already was). */
static void
test_kill(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(16, 100);
	struct tlb_aff_key k = key(3, 3, 3);
	struct tlb_aff_msg m, out[4];

	(void)state;
	insert(a, &k, 2, 3, 0);
	tlb_aff_kill(a, &k);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), TLB_AFF_DEAD);
	assert_int_equal(tlb_aff_sweep(a, 1000, 16, out, 4), 0);
	assert_int_equal(tlb_aff_lookup(a, &k, &m), TLB_AFF_NONE);
	assert_int_equal(tlb_aff_stats(a)->killed, 1);
	tlb_aff_free(a);
}

static void
test_bounded(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(16, 1000000);
	uint32_t cap = tlb_aff_capacity(a);
	unsigned int found = 0, pushed = 0;
	struct tlb_aff_msg m, gone;

	(void)state;
	assert_int_equal(cap, 16);
	/* Far more live messages than entries: never grows, pushes out,
	 * and hands back what each one pushed out charged. */
	for (uint64_t id = 0; id < 1000; id++) {
		struct tlb_aff_key k = key(1, 1, id);

		m = msg_of((uint16_t)(id % 8), (uint32_t)id);
		if (tlb_aff_insert(a, &k, &m, 3, id, &gone)) {
			assert_true(gone.work_ns < id);
			pushed++;
		}
	}
	assert_int_equal(pushed, tlb_aff_stats(a)->evicted);
	assert_true(pushed >= 1000 - cap);
	for (uint64_t id = 0; id < 1000; id++) {
		struct tlb_aff_key k = key(1, 1, id);
		int c = tlb_aff_lookup(a, &k, &m);

		if (c >= 0) {
			assert_int_equal(c, id % 8);
			found++;
		}
	}
	assert_int_equal(found, 1000 - pushed);
	assert_true(found > 0);
	tlb_aff_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_lifecycle),
		cmocka_unit_test(test_keys_distinct),
		cmocka_unit_test(test_sweep_hands_back_incomplete),
		cmocka_unit_test(test_sweep_budget),
		cmocka_unit_test(test_kill),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests_name("affinity", tests, NULL, NULL);
}
