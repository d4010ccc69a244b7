/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: load view accounting and liveness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "turbolb/load_view.h"

static struct tlb_load_view lv;

static void
test_init(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 4);
	assert_int_equal(lv.n_cores, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_true(tlb_lv_eligible(&lv, i));
		assert_int_equal(tlb_lv_outstanding(&lv, i), 0);
	}
	assert_false(tlb_lv_eligible(&lv, 4));
	tlb_lv_init(&lv, TLB_MAX_CORES + 10);
	assert_int_equal(lv.n_cores, TLB_MAX_CORES);
}

static void
test_cache_line_aligned(void **state)
{
	(void)state;
	/* Each core's counters on their own line: no false sharing with a
	 * reader of a neighbour. */
	assert_int_equal(sizeof(struct tlb_core_load) % TLB_CACHE_LINE, 0);
	assert_int_equal(((uintptr_t)&lv.core[1]) % TLB_CACHE_LINE, 0);
}

static void
test_dispatch_complete(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 2);
	tlb_lv_on_dispatch(&lv, 0, 100);
	tlb_lv_on_dispatch(&lv, 0, 250);
	tlb_lv_on_dispatch(&lv, 1, 7);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 2);
	assert_int_equal(tlb_lv_outstanding_work(&lv, 0), 350);
	assert_int_equal(tlb_lv_outstanding(&lv, 1), 1);
	assert_int_equal(tlb_lv_on_complete(&lv, 0, 1, 100), 0);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 1);
	assert_int_equal(tlb_lv_outstanding_work(&lv, 0), 250);
	assert_int_equal(lv.core[0].sent, 2);
	assert_int_equal(lv.core[0].completed, 1);
}

static void
test_complete_clamped(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 1);
	tlb_lv_on_dispatch(&lv, 0, 10);
	/* Three completions for one outstanding request: two are extra. */
	assert_int_equal(tlb_lv_on_complete(&lv, 0, 3, 500), 2);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 0);
	assert_int_equal(tlb_lv_outstanding_work(&lv, 0), 0);
	/* And the view keeps counting correctly afterwards. */
	tlb_lv_on_dispatch(&lv, 0, 10);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 1);
}

static void
test_reset_core(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 2);
	for (int i = 0; i < 5; i++)
		tlb_lv_on_dispatch(&lv, 1, 20);
	tlb_lv_on_complete(&lv, 1, 2, 40);
	assert_int_equal(tlb_lv_reset_core(&lv, 1), 3);
	assert_int_equal(tlb_lv_outstanding(&lv, 1), 0);
	assert_int_equal(tlb_lv_outstanding_work(&lv, 1), 0);
	/* A late response for a stranded request does not go negative,
	 * and is late, not a duplicate: three of them, the fourth is. */
	assert_int_equal(tlb_lv_on_complete(&lv, 1, 1, 20), 1);
	assert_int_equal(tlb_lv_outstanding(&lv, 1), 0);
	assert_int_equal(tlb_lv_on_late(&lv, 1, 1), 1);
	assert_int_equal(tlb_lv_on_late(&lv, 1, 3), 2);
	assert_int_equal(tlb_lv_on_late(&lv, 1, 1), 0);
}

/* The liveness check with no write-off. */
static uint32_t
live(uint64_t now, uint64_t timeout)
{
	struct tlb_lv_written_off wo = {0, 0};
	uint32_t n = tlb_lv_check_liveness(&lv, now, timeout, UINT64_MAX, &wo);

	assert_int_equal(wo.requests, 0);
	return n;
}

static void
test_liveness(void **state)
{
	const uint64_t timeout = 1000;
	uint64_t now = 5000;

	(void)state;
	tlb_lv_init(&lv, 3);
	assert_int_equal(live(now, timeout), 0);

	/* Core 0 has work and never completes; core 1 has work and does;
	 * core 2 is idle. */
	tlb_lv_on_dispatch(&lv, 0, 1);
	tlb_lv_on_dispatch(&lv, 1, 1);
	tlb_lv_on_dispatch(&lv, 1, 1);
	now += 600;
	assert_int_equal(live(now, timeout), 0);
	tlb_lv_on_complete(&lv, 1, 1, 1);
	now += 600; /* 1200 since core 0 last moved */
	assert_int_equal(live(now, timeout), 1);
	assert_true(lv.core[0].stale);
	assert_false(tlb_lv_eligible(&lv, 0));
	assert_false(lv.core[1].stale);
	assert_false(lv.core[2].stale);
	assert_int_equal(lv.core[0].stale_events, 1);

	/* Still stuck: stays stale, no new change; core 1 drained. */
	tlb_lv_on_complete(&lv, 1, 1, 1);
	now += 5000;
	assert_int_equal(live(now, timeout), 0);
	assert_true(lv.core[0].stale);
	/* Progress brings it back. */
	tlb_lv_on_complete(&lv, 0, 1, 1);
	assert_int_equal(live(now + 1, timeout), 1);
	assert_true(tlb_lv_eligible(&lv, 0));
}

static void
test_idle_core_never_stale(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 1);
	/* Idle for a long time, then one request: not stale at once. */
	assert_int_equal(live(0, 10), 0);
	assert_int_equal(live(1000000, 10), 0);
	tlb_lv_on_dispatch(&lv, 0, 1);
	assert_int_equal(live(1000005, 10), 0);
	assert_false(lv.core[0].stale);
	assert_int_equal(live(1000011, 10), 1);
	assert_true(lv.core[0].stale);
}

static void
test_first_check_starts_the_watch(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 1);
	/* Requests were sent before the first check ever ran, at a clock
	 * reading far from zero: not stale until a whole timeout passed. */
	tlb_lv_on_dispatch(&lv, 0, 1);
	assert_int_equal(live(1000000000, 10), 0);
	assert_false(lv.core[0].stale);
	assert_int_equal(live(1000000005, 10), 0);
	assert_int_equal(live(1000000011, 10), 1);
	assert_true(lv.core[0].stale);
}

static void
test_online_running(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 2);
	tlb_lv_set_online(&lv, 1, false);
	assert_false(tlb_lv_eligible(&lv, 1));
	tlb_lv_set_online(&lv, 1, true);
	assert_true(tlb_lv_eligible(&lv, 1));
	tlb_lv_set_running(&lv, 0, true);
	assert_true(lv.core[0].running);
}

/* A core stale for write_off_ns loses what it had outstanding (written
 * off, counted) and is probed: one request at a time until a check sees
 * it complete one, then full rotation. A late answer to a written-off
 * request is counted late, never below zero outstanding. */
static void
test_write_off_and_probe(void **state)
{
	struct tlb_lv_written_off wo = {0, 0};
	const uint64_t t = 1000, w = 5000;

	(void)state;
	tlb_lv_init(&lv, 2);
	tlb_lv_check_liveness(&lv, 1, t, w, &wo);
	tlb_lv_on_dispatch(&lv, 0, 300);
	tlb_lv_on_dispatch(&lv, 0, 200);
	/* stale after t, not yet written off */
	assert_int_equal(tlb_lv_check_liveness(&lv, 1 + t + 1, t, w, &wo), 1);
	assert_true(lv.core[0].stale);
	assert_int_equal(tlb_lv_check_liveness(&lv, 1 + t + w, t, w, &wo), 0);
	assert_int_equal(wo.requests, 0);
	/* stale for longer than w: written off, probing, eligible */
	assert_int_equal(tlb_lv_check_liveness(&lv, 2 + t + w + 1, t, w, &wo),
			 1);
	assert_int_equal(wo.requests, 2);
	assert_int_equal(wo.work_ns, 500);
	assert_int_equal(lv.core[0].written_off, 2);
	assert_int_equal(lv.core[0].written_off_work_ns, 500);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 0);
	assert_false(lv.core[0].stale);
	assert_true(lv.core[0].probing);
	assert_true(tlb_lv_eligible(&lv, 0));
	assert_int_equal(lv.key_req[0], 0);
	/* the probe: one request, then not picked until it answers */
	tlb_lv_on_dispatch(&lv, 0, 100);
	tlb_lv_refresh(&lv, 0);
	assert_false(tlb_lv_eligible(&lv, 0));
	assert_int_equal(lv.key_req[0], TLB_KEY_NONE);
	/* a late answer to a written-off request: it takes the probe's
	 * place (the core is alive), and the probe's own answer is late */
	assert_int_equal(tlb_lv_on_complete(&lv, 0, 1, 300), 0);
	assert_true(tlb_lv_eligible(&lv, 0));
	assert_int_equal(tlb_lv_on_complete(&lv, 0, 1, 100), 1);
	assert_int_equal(tlb_lv_on_late(&lv, 0, 1), 1);
	assert_int_equal(tlb_lv_outstanding(&lv, 0), 0);
	/* one of the two written off is still owed; beyond it, duplicates */
	assert_int_equal(tlb_lv_on_late(&lv, 0, 3), 1);
	assert_int_equal(tlb_lv_on_late(&lv, 0, 1), 0);
	/* the next check saw the completions: full rotation */
	assert_int_equal(tlb_lv_check_liveness(&lv, 3 + t + w, t, w, &wo), 1);
	assert_false(lv.core[0].probing);
	tlb_lv_on_dispatch(&lv, 0, 100);
	tlb_lv_on_dispatch(&lv, 0, 100);
	tlb_lv_refresh(&lv, 0);
	assert_true(tlb_lv_eligible(&lv, 0));
	assert_int_equal(lv.key_req[0], 2);
	/* core 1 never had work: never stale, never written off */
	assert_int_equal(lv.core[1].written_off, 0);
}

/* Every writer keeps the dense keys the policies scan equal to the
 * fields: a request handed back unsent (TX ring full) must lower the key
 * too, or the core looks busier forever and is never chosen again. */
static void
test_keys_follow_every_writer(void **state)
{
	(void)state;
	tlb_lv_init(&lv, 2);
	for (int k = 0; k < 5; k++)
		tlb_lv_on_dispatch(&lv, 0, 10);
	assert_int_equal(lv.key_req[0], 5);
	assert_int_equal(lv.key_work[0], 50);
	tlb_lv_on_unsent(&lv, 0, 3, 30);
	assert_int_equal(lv.key_req[0], tlb_lv_outstanding(&lv, 0));
	assert_int_equal(lv.key_req[0], 2);
	assert_int_equal(lv.key_work[0], 20);
	tlb_lv_on_complete(&lv, 0, 2, 20);
	assert_int_equal(lv.key_req[0], 0);
	tlb_lv_set_online(&lv, 1, false);
	assert_true(lv.key_req[1] == TLB_KEY_NONE);
	assert_true(lv.key_work[1] == TLB_KEY_NONE);
	/* past n_cores: never a candidate */
	assert_true(lv.key_req[2] == TLB_KEY_NONE);
	assert_true(lv.key_req[TLB_MAX_CORES - 1] == TLB_KEY_NONE);
	tlb_lv_set_online(&lv, 1, true);
	assert_int_equal(lv.key_req[1], 0);
	/* work keys saturate one below TLB_KEY_NONE */
	tlb_lv_on_dispatch(&lv, 1, UINT32_MAX);
	tlb_lv_on_dispatch(&lv, 1, 5);
	assert_true(lv.key_work[1] == TLB_KEY_MAX);
	assert_int_equal(lv.key_req[1], 2);
	tlb_lv_on_complete(&lv, 1, 1, UINT32_MAX);
	assert_int_equal(lv.key_work[1], 5);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_cache_line_aligned),
		cmocka_unit_test(test_dispatch_complete),
		cmocka_unit_test(test_complete_clamped),
		cmocka_unit_test(test_reset_core),
		cmocka_unit_test(test_liveness),
		cmocka_unit_test(test_write_off_and_probe),
		cmocka_unit_test(test_idle_core_never_stale),
		cmocka_unit_test(test_first_check_starts_the_watch),
		cmocka_unit_test(test_online_running),
		cmocka_unit_test(test_keys_follow_every_writer),
	};

	return cmocka_run_group_tests_name("load_view", tests, NULL, NULL);
}
