/* SPDX-License-Identifier: BSD-3-Clause
 * Emulated FIFO cores (src/server/emu.c, turbolb-server --mode emulate):
 * completion = max(arrival, previous completion) + service, responses
 * taken in admission order once due, the ring's bound, and a long random
 * run against the FIFO recursion computed independently.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "emu.h"

static struct emu_req
req_of(uintptr_t id, uint32_t work_ns, uint32_t svc_ns)
{
	struct emu_req r = {
		.item = (void *)id,
		.work_ns = work_ns,
		.svc_ns = svc_ns,
	};

	return r;
}

static void
admit_ok(struct emu_core *c, uint64_t arrival, uint64_t svc, uintptr_t id,
	 uint64_t want_done)
{
	struct emu_req r = req_of(id, (uint32_t)id * 10, (uint32_t)svc);

	assert_int_equal(emu_admit(c, arrival, svc, &r), want_done);
}

static void
test_init_rejects_bad_depth(void **state)
{
	struct emu_core c;

	(void)state;
	assert_int_equal(emu_core_init(&c, 0), -1);
	assert_int_equal(emu_core_init(&c, 3), -1);
	assert_int_equal(emu_core_init(&c, 1000), -1);
	assert_int_equal(emu_core_init(&c, (1u << 24) + 1), -1);
	assert_int_equal(emu_core_init(&c, 1u << 25), -1);
	assert_int_equal(emu_core_init(&c, 1), 0);
	assert_int_equal(emu_room(&c), 1);
	emu_core_free(&c);
	assert_int_equal(emu_core_init(&c, 1024), 0);
	assert_int_equal(emu_room(&c), 1024);
	assert_int_equal(emu_next_done(&c), UINT64_MAX);
	emu_core_free(&c);
}

/* An idle core starts a request when it arrives. */
static void
test_idle_core_serves_at_arrival(void **state)
{
	struct emu_core c;

	(void)state;
	assert_int_equal(emu_core_init(&c, 8), 0);
	admit_ok(&c, 1000, 250, 1, 1250);
	assert_int_equal(emu_next_done(&c), 1250);
	emu_core_free(&c);
}

/* A request that arrives while the core is busy waits for the ones ahead;
 * a request after an idle gap does not inherit the earlier completion. */
static void
test_busy_core_queues_fifo(void **state)
{
	struct emu_core c;

	(void)state;
	assert_int_equal(emu_core_init(&c, 8), 0);
	admit_ok(&c, 0, 100, 1, 100);
	admit_ok(&c, 10, 30, 2, 130);
	admit_ok(&c, 20, 1, 3, 131);
	/* The core is idle from 131 to 500. */
	admit_ok(&c, 500, 5, 4, 505);
	/* Arriving exactly when the core frees up: no wait, no gap. */
	admit_ok(&c, 505, 7, 5, 512);
	/* Zero service time completes when the core is free. */
	admit_ok(&c, 510, 0, 6, 512);
	assert_int_equal(c.busy, 100 + 30 + 1 + 5 + 7 + 0);
	assert_int_equal(c.admitted, 6);
	emu_core_free(&c);
}

/* Responses leave once due, oldest first, with the caller's data. */
static void
test_take_only_due_in_order(void **state)
{
	struct emu_core c;
	struct emu_req out[8];

	(void)state;
	assert_int_equal(emu_core_init(&c, 8), 0);
	admit_ok(&c, 0, 100, 1, 100);
	admit_ok(&c, 10, 30, 2, 130);
	admit_ok(&c, 20, 20, 3, 150);

	assert_int_equal(emu_take(&c, 99, out, 8), 0);
	assert_int_equal(c.count, 3);
	assert_int_equal(emu_take(&c, 100, out, 8), 1);
	assert_ptr_equal(out[0].item, (void *)1);
	assert_int_equal(out[0].done, 100);
	assert_int_equal(out[0].work_ns, 10);
	assert_int_equal(out[0].svc_ns, 100);
	assert_int_equal(emu_next_done(&c), 130);
	assert_int_equal(emu_take(&c, 129, out, 8), 0);
	/* Both due: both leave, in admission order. */
	assert_int_equal(emu_take(&c, 1000, out, 8), 2);
	assert_ptr_equal(out[0].item, (void *)2);
	assert_int_equal(out[0].done, 130);
	assert_ptr_equal(out[1].item, (void *)3);
	assert_int_equal(out[1].done, 150);
	assert_int_equal(emu_next_done(&c), UINT64_MAX);
	assert_int_equal(emu_take(&c, UINT64_MAX, out, 8), 0);
	emu_core_free(&c);
}

static void
test_take_respects_max(void **state)
{
	struct emu_core c;
	struct emu_req out[2];

	(void)state;
	assert_int_equal(emu_core_init(&c, 8), 0);
	for (uintptr_t i = 1; i <= 5; i++)
		admit_ok(&c, 0, 1, i, i);
	assert_int_equal(emu_take(&c, 1000, out, 2), 2);
	assert_ptr_equal(out[1].item, (void *)2);
	assert_int_equal(emu_take(&c, 1000, out, 2), 2);
	assert_ptr_equal(out[0].item, (void *)3);
	assert_int_equal(emu_take(&c, 1000, out, 2), 1);
	assert_ptr_equal(out[0].item, (void *)5);
	assert_int_equal(emu_take(&c, 1000, out, 0), 0);
	emu_core_free(&c);
}

/* A full ring admits nothing and leaves the core's timeline alone; taking
 * one makes room again. */
static void
test_full_ring_refuses(void **state)
{
	struct emu_core c;
	struct emu_req out[4];
	struct emu_req r = req_of(9, 0, 0);

	(void)state;
	assert_int_equal(emu_core_init(&c, 4), 0);
	for (uintptr_t i = 1; i <= 4; i++)
		admit_ok(&c, 0, 10, i, 10 * i);
	assert_int_equal(emu_room(&c), 0);
	assert_int_equal(emu_admit(&c, 0, 10, &r), UINT64_MAX);
	assert_int_equal(c.next_free, 40);
	assert_int_equal(c.admitted, 4);
	assert_int_equal(emu_take(&c, 10, out, 4), 1);
	assert_int_equal(emu_room(&c), 1);
	admit_ok(&c, 15, 10, 5, 50);
	/* Releasing everything, whatever its time. */
	assert_int_equal(emu_take(&c, UINT64_MAX, out, 4), 4);
	assert_ptr_equal(out[3].item, (void *)5);
	emu_core_free(&c);
}

/* Two cores have separate timelines: one's backlog delays nothing on the
 * other. */
static void
test_cores_independent(void **state)
{
	struct emu_core a, b;

	(void)state;
	assert_int_equal(emu_core_init(&a, 8), 0);
	assert_int_equal(emu_core_init(&b, 8), 0);
	admit_ok(&a, 0, 1000, 1, 1000);
	admit_ok(&a, 0, 1000, 2, 2000);
	admit_ok(&b, 5, 10, 3, 15);
	emu_core_free(&a);
	emu_core_free(&b);
}

/* A long run through a small ring (wrapping many times) against the FIFO
 * recursion done independently: each request's completion, the order in
 * which they leave, and that none leaves before its time. */
static void
test_random_run_matches_fifo_recursion(void **state)
{
	enum { N = 20000, DEPTH = 16 };
	uint64_t *want = calloc(N, sizeof(*want));
	struct emu_req out[DEPTH];
	struct emu_core c;
	uint64_t now = 0, free_at = 0, busy = 0;
	uint32_t admitted = 0, taken = 0;

	(void)state;
	assert_non_null(want);
	assert_int_equal(emu_core_init(&c, DEPTH), 0);
	srand(25);
	while (taken < N) {
		now += (uint64_t)(rand() % 300);
		/* Admit a few if there is room. */
		for (int k = rand() % 4;
		     k > 0 && admitted < N && emu_room(&c) > 0; k--) {
			uint64_t svc = (uint64_t)(rand() % 500);
			uint64_t start = now > free_at ? now : free_at;
			struct emu_req r =
				req_of(admitted + 1, 0, (uint32_t)svc);

			free_at = start + svc;
			busy += svc;
			want[admitted] = free_at;
			assert_int_equal(emu_admit(&c, now, svc, &r), free_at);
			admitted++;
		}
		uint32_t n = emu_take(&c, now, out, DEPTH);

		for (uint32_t i = 0; i < n; i++) {
			assert_ptr_equal(out[i].item,
					 (void *)(uintptr_t)(taken + 1));
			assert_int_equal(out[i].done, want[taken]);
			assert_true(out[i].done <= now);
			taken++;
		}
		/* What stays has not completed yet. */
		assert_true(emu_next_done(&c) > now);
		if (admitted == N)
			now = emu_next_done(&c) == UINT64_MAX
				      ? now
				      : emu_next_done(&c);
	}
	assert_int_equal(c.busy, busy);
	assert_int_equal(c.admitted, N);
	emu_core_free(&c);
	free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_rejects_bad_depth),
		cmocka_unit_test(test_idle_core_serves_at_arrival),
		cmocka_unit_test(test_busy_core_queues_fifo),
		cmocka_unit_test(test_take_only_due_in_order),
		cmocka_unit_test(test_take_respects_max),
		cmocka_unit_test(test_full_ring_refuses),
		cmocka_unit_test(test_cores_independent),
		cmocka_unit_test(test_random_run_matches_fifo_recursion),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
