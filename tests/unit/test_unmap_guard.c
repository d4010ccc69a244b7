/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-loadgen's unmap guard (src/loadgen/lg_unmap_guard.c): an unmap
 * from another thread waits while the poller is inside a burst, and goes
 * through once it left; outside a burst it does not wait. No timing: the
 * waiting thread is observed through the guard's own counter.
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

#include "lg_unmap_guard.h"

struct unmapper {
	void *addr;
	size_t len;
	int rc;
	int done;
};

static void *
unmap_thread(void *arg)
{
	struct unmapper *u = arg;

	u->rc = munmap(u->addr, u->len);
	__atomic_store_n(&u->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *
map_page(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/* mincore fails with ENOMEM on a range that is not mapped. */
static bool
mapped(void *p, size_t len)
{
	unsigned char vec[1];

	return mincore(p, len, vec) == 0;
}

static void
test_waits_for_burst(void **state)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	struct unmapper u = {.addr = map_page(len), .len = len};
	uint64_t waits = lg_unmap_waits;
	pthread_t th;

	(void)state;
	lg_burst_enter();
	*(volatile char *)u.addr = 1; /* the "ring", touched in the burst */
	assert_int_equal(pthread_create(&th, NULL, unmap_thread, &u), 0);
	while (__atomic_load_n(&lg_unmap_waits, __ATOMIC_ACQUIRE) == waits)
		sched_yield();
	/* The unmapper is waiting: the memory is still there. */
	assert_int_equal(__atomic_load_n(&u.done, __ATOMIC_ACQUIRE), 0);
	assert_true(mapped(u.addr, len));
	*(volatile char *)u.addr = 2;
	lg_burst_exit();
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(u.done, 1);
	assert_int_equal(u.rc, 0);
	assert_false(mapped(u.addr, len));
}

static void
test_no_wait_outside_burst(void **state)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	struct unmapper u = {.addr = map_page(len), .len = len};
	uint64_t waits = lg_unmap_waits;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, unmap_thread, &u), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(u.rc, 0);
	assert_int_equal(lg_unmap_waits, waits);
	assert_false(mapped(u.addr, len));
	/* The error path is the system call's own. */
	errno = 0;
	assert_int_equal(munmap((void *)1, len), -1);
	assert_int_equal(errno, EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_for_burst),
		cmocka_unit_test(test_no_wait_outside_burst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
