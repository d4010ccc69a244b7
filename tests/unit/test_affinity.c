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

static void
test_message_lifecycle(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(64, 1000);
	struct tlb_aff_key k = key(1, 2, 3);

	(void)state;
	assert_non_null(a);
	assert_int_equal(tlb_aff_lookup(a, &k, 0), -1);
	/* First of 4 packets went to core 7: three more to come. */
	tlb_aff_insert(a, &k, 7, 3, 0);
	assert_int_equal(tlb_aff_lookup(a, &k, 10), 7);
	assert_int_equal(tlb_aff_lookup(a, &k, 20), 7);
	assert_int_equal(tlb_aff_lookup(a, &k, 30), 7);
	/* All seen: the entry is gone. */
	assert_int_equal(tlb_aff_lookup(a, &k, 40), -1);
	assert_int_equal(tlb_aff_stats(a)->completed, 1);
	assert_int_equal(tlb_aff_stats(a)->hits, 3);
	tlb_aff_free(a);
}

static void
test_keys_distinct(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(1024, 1000);

	(void)state;
	/* Same id from another client or port is another message. */
	struct tlb_aff_key k1 = key(1, 2, 3), k2 = key(9, 2, 3),
			   k3 = key(1, 5, 3), k4 = key(1, 2, 4);
	tlb_aff_insert(a, &k1, 1, 5, 0);
	tlb_aff_insert(a, &k2, 2, 5, 0);
	tlb_aff_insert(a, &k3, 3, 5, 0);
	tlb_aff_insert(a, &k4, 4, 5, 0);
	assert_int_equal(tlb_aff_lookup(a, &k1, 1), 1);
	assert_int_equal(tlb_aff_lookup(a, &k2, 1), 2);
	assert_int_equal(tlb_aff_lookup(a, &k3, 1), 3);
	assert_int_equal(tlb_aff_lookup(a, &k4, 1), 4);
	tlb_aff_free(a);
}

static void
test_timeout(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(16, 100);
	struct tlb_aff_key k = key(1, 1, 1);

	(void)state;
	tlb_aff_insert(a, &k, 3, 2, 1000);
	assert_int_equal(tlb_aff_lookup(a, &k, 1100), 3);
	/* The rest of the message never came in time. */
	assert_int_equal(tlb_aff_lookup(a, &k, 1201), -1);
	assert_int_equal(tlb_aff_stats(a)->expired, 1);
	tlb_aff_free(a);
}

static void
test_bounded(void **state)
{
	struct tlb_affinity *a = tlb_aff_create(16, 1000000);
	uint32_t cap = tlb_aff_capacity(a);
	unsigned int found = 0;

	(void)state;
	assert_int_equal(cap, 16);
	/* Far more live messages than entries: never grows, evicts. */
	for (uint64_t id = 0; id < 1000; id++) {
		struct tlb_aff_key k = key(1, 1, id);
		tlb_aff_insert(a, &k, (uint16_t)(id % 8), 3, id);
	}
	assert_true(tlb_aff_stats(a)->evicted >= 1000 - cap);
	for (uint64_t id = 0; id < 1000; id++) {
		struct tlb_aff_key k = key(1, 1, id);
		int c = tlb_aff_lookup(a, &k, 1000);

		if (c >= 0) {
			assert_int_equal(c, id % 8);
			found++;
		}
	}
	assert_true(found <= cap);
	assert_true(found > 0);
	tlb_aff_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_message_lifecycle),
		cmocka_unit_test(test_keys_distinct),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests_name("affinity", tests, NULL, NULL);
}
