/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's unmap guard (src/server/unmap_guard.c): an unmap from
 * another thread waits for each lcore slot that is inside a burst to leave
 * that burst, and goes through once they all did; a slot that left and
 * entered its next burst does not hold it (that burst began after the
 * unmap started); outside a burst nothing waits. No timing: the waiting
 * thread is observed through the guard's own counter.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "unmap_guard.h"

struct unmapper {
	void *addr;
	size_t len;
	int rc;
	int done;
	pthread_t th;
};

static void *
unmap_thread(void *arg)
{
	struct unmapper *u = arg;

	u->rc = munmap(u->addr, u->len);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
unmapper_start(struct unmapper *u)
{
	u->len = (size_t)sysconf(_SC_PAGESIZE);
	u->addr = mmap(NULL, u->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(u->addr != MAP_FAILED);
	*(volatile char *)u->addr = 1;
	assert_int_equal(pthread_create(&u->th, NULL, unmap_thread, u), 0);
}

/* mincore fails with ENOMEM on a range that is not mapped. */
static bool
mapped(void *p, size_t len)
{
	unsigned char vec[1];

	return mincore(p, len, vec) == 0;
}

static void
wait_waits(uint64_t n)
{
	while (__atomic_load_n(&srv_unmap_waits, __ATOMIC_ACQUIRE) < n)
		sched_yield();
}

static void
unmapper_join(struct unmapper *u)
{
	assert_int_equal(pthread_join(u->th, NULL), 0);
	assert_int_equal(u->done, 1);
	assert_int_equal(u->rc, 0);
	assert_false(mapped(u->addr, u->len));
}

/* Two slots inside a burst: the unmap waits for the first, then for the
 * second, and the memory stays mapped until both left. */
static void
test_waits_for_each_slot(void **state)
{
	struct srv_burst_slot *a = &srv_burst_slots[3];
	struct srv_burst_slot *b = &srv_burst_slots[SRV_BURST_SLOTS - 1];
	uint64_t waits = srv_unmap_waits;
	struct unmapper u = {0};

	(void)state;
	srv_burst_enter(a);
	srv_burst_enter(b);
	unmapper_start(&u);
	wait_waits(waits + 1);
	assert_int_equal(__atomic_load_n(&u.done, __ATOMIC_ACQUIRE), 0);
	assert_true(mapped(u.addr, u.len));
	srv_burst_exit(a);
	/* Now waiting for b: the "ring" is still there for it. */
	wait_waits(waits + 2);
	assert_int_equal(__atomic_load_n(&u.done, __ATOMIC_ACQUIRE), 0);
	assert_true(mapped(u.addr, u.len));
	*(volatile char *)u.addr = 2;
	srv_burst_exit(b);
	unmapper_join(&u);
	assert_int_equal(srv_unmap_waits, waits + 2);
}

/* A slot that keeps polling does not starve the unmap: leaving the burst
 * the unmap saw is enough, even if the next one has begun. */
static void
test_next_burst_does_not_hold(void **state)
{
	struct srv_burst_slot *a = &srv_burst_slots[0];
	uint64_t waits = srv_unmap_waits;
	struct unmapper u = {0};

	(void)state;
	srv_burst_enter(a);
	unmapper_start(&u);
	wait_waits(waits + 1);
	srv_burst_exit(a);
	srv_burst_enter(a);
	unmapper_join(&u);
	srv_burst_exit(a);
	assert_int_equal(srv_unmap_waits, waits + 1);
}

static void
test_no_wait_outside_burst(void **state)
{
	struct srv_burst_slot *a = &srv_burst_slots[1];
	uint64_t waits = srv_unmap_waits;
	struct unmapper u = {0};

	(void)state;
	srv_burst_enter(a);
	srv_burst_exit(a);
	unmapper_start(&u);
	unmapper_join(&u);
	assert_int_equal(srv_unmap_waits, waits);
	/* The error path is the system call's own. */
	errno = 0;
	assert_int_equal(munmap((void *)1, u.len), -1);
	assert_int_equal(errno, EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_for_each_slot),
		cmocka_unit_test(test_next_burst_does_not_hold),
		cmocka_unit_test(test_no_wait_outside_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
