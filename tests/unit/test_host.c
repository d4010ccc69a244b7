/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: libturbolb-host against a credit ring this process creates as
 * the NIC side would (tlb_cr_create), drained through the NIC-side API.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "turbolb/credit_ring.h"
#include "turbolb/feedback.h"
#include "turbolb/host.h"

#define SHM_NAME_TAG "host"
#include "shm_name.h"

#define ERRLEN 256

static struct tlb_host *
host_open(uint32_t batch, uint32_t check_ms)
{
	char err[ERRLEN] = "";
	struct tlb_host_opts o;
	struct tlb_host *h;

	tlb_host_opts_init(&o);
	o.batch = batch;
	o.stale_check_ms = check_ms;
	h = tlb_host_open_opts(cur_name, &o, err, sizeof(err));
	if (h == NULL)
		fail_msg("tlb_host_open_opts: %s", err);
	return h;
}

struct sums {
	uint64_t records;
	uint64_t completions;
	uint64_t work_ns;
	uint64_t service_ns;
};

/* Drains everything core holds now into s. */
static void
drain_all(struct tlb_cr *cr, uint32_t core, struct sums *s)
{
	struct tlb_credit recs[64];
	unsigned int n;

	while ((n = tlb_cr_drain(cr, core, recs, 64)) != 0) {
		for (unsigned int i = 0; i < n; i++) {
			s->records++;
			s->completions += recs[i].completions;
			s->work_ns += recs[i].work_ns;
			s->service_ns += recs[i].service_ns;
			assert_int_not_equal(recs[i].host_ts_ns, 0);
		}
	}
}

static void
test_open_missing(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_host *h;

	(void)state;
	h = tlb_host_open(cur_name, err, sizeof(err));
	assert_null(h);
	assert_non_null(strstr(err, cur_name));
	assert_non_null(strstr(err, "does not exist"));

	err[0] = '\0';
	assert_null(tlb_host_open("no-slash", err, sizeof(err)));
	assert_non_null(strstr(err, "must be '/'"));
	err[0] = '\0';
	assert_null(tlb_host_open(NULL, err, sizeof(err)));
	assert_string_not_equal(err, "");
}

static void
test_open_invalid(void **state)
{
	char err[ERRLEN] = "";
	uint8_t junk[4096];
	int fd;

	(void)state;
	/* A region that is no credit ring: attach must refuse it. */
	fd = shm_open(cur_name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	memset(junk, 0xab, sizeof(junk));
	assert_int_equal(write(fd, junk, sizeof(junk)), sizeof(junk));
	close(fd);
	assert_null(tlb_host_open(cur_name, err, sizeof(err)));
	assert_non_null(strstr(err, "magic"));

	err[0] = '\0';
	{
		struct tlb_host_opts o;

		tlb_host_opts_init(&o);
		o.batch = TLB_HOST_BATCH_MAX + 1;
		assert_null(tlb_host_open_opts(cur_name, &o, err, sizeof(err)));
		assert_non_null(strstr(err, "batch"));
	}
}

static void
test_batches_two_cores(void **state)
{
	struct tlb_cr *nic = nic_create(2, 64);
	struct tlb_host *h = host_open(4, 0);
	struct tlb_host_core *c0, *c1;
	struct tlb_host_core_stats st;
	struct sums s0 = {0}, s1 = {0};
	uint64_t w0 = 0, v0 = 0, w1 = 0, v1 = 0;

	(void)state;
	assert_int_equal(tlb_host_n_cores(h), 2);
	c0 = tlb_host_core(h, 0);
	c1 = tlb_host_core(h, 1);
	assert_non_null(c0);
	assert_non_null(c1);
	assert_ptr_equal(tlb_host_core(h, 0), c0);
	assert_null(tlb_host_core(h, 2));

	for (uint32_t i = 0; i < 10; i++) {
		tlb_host_complete(c0, 100 + i, 1000 + i);
		w0 += 100 + i;
		v0 += 1000 + i;
	}
	for (uint32_t i = 0; i < 3; i++) {
		tlb_host_complete(c1, 7 + i, 70 + i);
		w1 += 7 + i;
		v1 += 70 + i;
	}
	/* Two full batches of 4 on core 0, nothing yet on core 1. */
	drain_all(nic, 0, &s0);
	drain_all(nic, 1, &s1);
	assert_int_equal(s0.records, 2);
	assert_int_equal(s0.completions, 8);
	assert_int_equal(s0.work_ns, w0 - 108 - 109);
	assert_int_equal(s0.service_ns, v0 - 1008 - 1009);
	assert_int_equal(s1.records, 0);

	tlb_host_core_stats(c0, &st);
	assert_int_equal(st.completed, 10);
	assert_int_equal(st.posted, 8);
	assert_int_equal(st.pending, 2);
	assert_int_equal(st.records, 2);

	/* Flush posts the rest, one record per core. */
	assert_int_equal(tlb_host_flush(c0), 0);
	assert_int_equal(tlb_host_flush(c1), 0);
	assert_int_equal(tlb_host_flush(c1), 0); /* nothing held: no-op */
	drain_all(nic, 0, &s0);
	drain_all(nic, 1, &s1);
	assert_int_equal(s0.records, 3);
	assert_int_equal(s0.completions, 10);
	assert_int_equal(s0.work_ns, w0);
	assert_int_equal(s0.service_ns, v0);
	assert_int_equal(s1.records, 1);
	assert_int_equal(s1.completions, 3);
	assert_int_equal(s1.work_ns, w1);
	assert_int_equal(s1.service_ns, v1);

	tlb_host_core_stats(c1, &st);
	assert_int_equal(st.completed, 3);
	assert_int_equal(st.posted, 3);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.discarded, 0);

	/* Close posts what is still held. */
	tlb_host_complete(c1, 5, 50);
	tlb_host_close(h);
	drain_all(nic, 1, &s1);
	assert_int_equal(s1.completions, 4);
	assert_int_equal(s1.work_ns, w1 + 5);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	tlb_cr_destroy(nic, true);
}

static void
test_ring_full(void **state)
{
	const uint32_t ring = 16, total = 1000, batch = 4;
	struct tlb_cr *nic = nic_create(1, ring);
	struct tlb_host *h = host_open(batch, 0);
	struct tlb_host_core *c = tlb_host_core(h, 0);
	struct tlb_host_core_stats st;
	struct sums s = {0};
	uint64_t w = 0, v = 0;

	(void)state;
	for (uint32_t i = 0; i < total; i++) {
		tlb_host_complete(c, i, 3 * i + 1);
		w += i;
		v += 3 * i + 1;
	}
	/* The ring took `ring` records of `batch`; the rest is held. */
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.completed, total);
	assert_int_equal(st.records, ring);
	assert_int_equal(st.posted, ring * batch);
	assert_int_equal(st.pending, total - ring * batch);
	assert_true(st.ring_full > 0);
	assert_int_equal(tlb_host_flush(c), -EAGAIN);

	drain_all(nic, 0, &s);
	assert_int_equal(s.records, ring);
	assert_int_equal(s.completions, ring * batch);

	/* Room again: one flush posts everything held, as one record. */
	assert_int_equal(tlb_host_flush(c), 0);
	drain_all(nic, 0, &s);
	assert_int_equal(s.records, ring + 1);
	assert_int_equal(s.completions, total);
	assert_int_equal(s.work_ns, w);
	assert_int_equal(s.service_ns, v);
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.posted, total);
	assert_int_equal(st.discarded, 0);

	/* Batch 1 posts every completion, until the ring is full. */
	tlb_host_close(h);
	h = host_open(1, 0);
	c = tlb_host_core(h, 0);
	for (uint32_t i = 0; i < ring + 5; i++)
		tlb_host_complete(c, 1, 1);
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.records, ring);
	assert_int_equal(st.pending, 5);
	s = (struct sums){0};
	drain_all(nic, 0, &s);
	assert_int_equal(s.completions, ring);
	tlb_host_complete(c, 1, 1); /* posts the 6 held at once */
	drain_all(nic, 0, &s);
	assert_int_equal(s.completions, ring + 6);
	assert_int_equal(s.work_ns, ring + 6);

	tlb_host_close(h);
	tlb_cr_destroy(nic, true);
}

static void
test_state_heartbeat(void **state)
{
	struct tlb_cr *nic = nic_create(2, 16);
	struct tlb_host *h = host_open(0, 0);
	struct tlb_host_core *c = tlb_host_core(h, 1);
	uint64_t hb;

	(void)state;
	/* Getting a handle writes nothing; its first use marks RUNNING. */
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	tlb_host_beat(c);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	hb = tlb_cr_heartbeat(nic, 1);
	assert_true(hb > 0);
	tlb_host_beat(c);
	tlb_host_beat(c);
	assert_int_equal(tlb_cr_heartbeat(nic, 1), hb + 2);
	assert_int_equal(tlb_cr_heartbeat(nic, 0), 0);

	tlb_host_set_running(c, false);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_PARKED);
	tlb_host_set_running(c, true);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_RUNNING);

	/* A NULL handle is harmless. */
	tlb_host_beat(NULL);
	tlb_host_set_running(NULL, true);
	tlb_host_complete(NULL, 1, 1);
	assert_int_equal(tlb_host_flush(NULL), -EINVAL);

	tlb_host_close(h);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	tlb_cr_destroy(nic, true);
}

/* The daemon exits cleanly (CLOSED), then starts again. */
static void
test_stale_closed_reattach(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_cr *nic = nic_create(2, 16);
	struct tlb_host *h = host_open(16, 0);
	struct tlb_host_core *c = tlb_host_core(h, 0);
	struct tlb_host_core_stats st;
	struct sums s = {0};

	(void)state;
	assert_int_equal(tlb_cr_host_epoch(nic), 1);
	assert_int_equal(tlb_host_epoch(h), 1);
	assert_false(tlb_host_stale_now(h));
	assert_false(tlb_host_stale(h));

	tlb_host_set_running(c, true);
	for (int i = 0; i < 3; i++)
		tlb_host_complete(c, 10, 20); /* held: batch 16 */

	tlb_cr_destroy(nic, true);
	assert_true(tlb_host_stale_now(h));
	assert_true(tlb_host_stale(h));

	/* Not back yet: reattach fails, keeps the old attachment. */
	assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "does not exist"));
	assert_true(tlb_host_stale(h));
	tlb_host_beat(c); /* still safe: posts into the old mapping */

	nic = nic_create(2, 16);
	assert_int_equal(tlb_cr_host_epoch(nic), 0);
	assert_true(tlb_host_stale(h)); /* sticky until reattach */
	assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), 0);
	assert_false(tlb_host_stale(h));
	assert_false(tlb_host_stale_now(h));
	assert_int_equal(tlb_cr_host_epoch(nic), 1);
	assert_int_equal(tlb_host_epoch(h), tlb_cr_host_epoch(nic));

	/* The core republishes its state at its next call; the 3 it held
	 * belonged to the old daemon. */
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	tlb_host_complete(c, 5, 6);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_RUNNING);
	assert_int_equal(tlb_host_flush(c), 0);
	drain_all(nic, 0, &s);
	assert_int_equal(s.records, 1);
	assert_int_equal(s.completions, 1);
	assert_int_equal(s.work_ns, 5);
	assert_int_equal(s.service_ns, 6);
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.discarded, 3);
	assert_int_equal(st.switches, 1);
	assert_int_equal(st.completed, 4);
	assert_int_equal(st.posted, 1);

	tlb_host_close(h);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	tlb_cr_destroy(nic, true);
}

/* The daemon dies without closing and a new one replaces the name: only
 * the identity of the object tells. */
static void
test_stale_replaced(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_cr *old = nic_create(1, 16);
	struct tlb_host *h = host_open(2, 60000);
	struct tlb_host_core *c = tlb_host_core(h, 0);
	struct tlb_cr *nic;
	struct sums s = {0};

	(void)state;
	tlb_host_complete(c, 1, 1);
	tlb_host_complete(c, 1, 1);
	drain_all(old, 0, &s);
	assert_int_equal(s.completions, 2);

	nic = nic_create(1, 32); /* unlinks the old name, new object */
	assert_false(tlb_cr_closed(old));
	/* The rate-limited check has not looked yet; a forced one does. */
	assert_false(tlb_host_stale(h));
	assert_true(tlb_host_stale_now(h));
	assert_true(tlb_host_stale(h));

	assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), 0);
	assert_int_equal(tlb_cr_host_epoch(nic), 1);
	assert_false(tlb_host_stale_now(h));
	tlb_host_complete(c, 9, 9);
	tlb_host_complete(c, 9, 9);
	s = (struct sums){0};
	drain_all(nic, 0, &s);
	assert_int_equal(s.completions, 2);
	assert_int_equal(s.work_ns, 18);
	/* The old region got nothing more, and was detached. */
	drain_all(old, 0, &s);
	assert_int_equal(s.completions, 2);
	assert_int_equal(tlb_cr_state(old, 0), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_RUNNING);

	tlb_host_close(h);
	tlb_cr_destroy(old, false);
	tlb_cr_destroy(nic, true);
}

/* A reattach with no restart: same region, a new epoch, states kept. */
static void
test_reattach_same_region(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_cr *nic = nic_create(2, 16);
	struct tlb_host *h = host_open(1, 0);
	struct tlb_host_core *c0 = tlb_host_core(h, 0);
	struct tlb_host_core *c1 = tlb_host_core(h, 1);
	struct sums s = {0};

	(void)state;
	tlb_host_set_running(c0, true);
	tlb_host_set_running(c1, false);
	assert_int_equal(tlb_cr_host_epoch(nic), 1);
	assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), 0);
	assert_int_equal(tlb_cr_host_epoch(nic), 2);
	assert_int_equal(tlb_host_epoch(h), 2);
	tlb_host_complete(c0, 4, 4);
	tlb_host_beat(c1);
	/* Both cores have left the old mapping; unmapping it must not
	 * have marked them OFFLINE. */
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_PARKED);
	drain_all(nic, 0, &s);
	assert_int_equal(s.completions, 1);

	tlb_host_close(h);
	tlb_cr_destroy(nic, true);
}

/* A region with fewer cores after a restart: the missing core's
 * completions are discarded, never posted out of bounds. */
static void
test_reattach_fewer_cores(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_cr *nic = nic_create(2, 16);
	struct tlb_host *h = host_open(1, 0);
	struct tlb_host_core *c1 = tlb_host_core(h, 1);
	struct tlb_host_core_stats st;

	(void)state;
	tlb_host_complete(c1, 1, 1);
	tlb_cr_destroy(nic, true);
	nic = nic_create(1, 16);
	assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), 0);
	assert_int_equal(tlb_host_n_cores(h), 1);
	assert_null(tlb_host_core(h, 1)); /* no new handles past the end */
	tlb_host_complete(c1, 1, 1);
	assert_int_equal(tlb_host_flush(c1), 0);
	tlb_host_core_stats(c1, &st);
	assert_int_equal(st.posted, 1);
	assert_int_equal(st.discarded, 1);
	tlb_host_close(h);
	tlb_cr_destroy(nic, true);
}

/* Reattaches while a core thread completes at full speed: nothing is
 * counted twice or lost without being counted, and no mapping is pulled
 * from under the thread. */
struct worker_arg {
	struct tlb_host_core *c;
	uint64_t n;
	int stop;
};

static void *
worker(void *p)
{
	struct worker_arg *a = p;

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		tlb_host_complete(a->c, 2, 3);
		if ((++a->n & 63) == 0) {
			tlb_host_flush(a->c);
			tlb_host_beat(a->c);
		}
	}
	return NULL;
}

static void
test_reattach_concurrent(void **state)
{
	enum { N_NIC = 6, STEP = 20000 };
	char err[ERRLEN] = "";
	struct tlb_cr *nics[N_NIC];
	struct tlb_host *h;
	struct tlb_host_core_stats st;
	struct worker_arg a;
	struct sums s = {0};
	uint64_t mark = 0;
	pthread_t t;
	int n_nic = 0;

	(void)state;
	nics[n_nic++] = nic_create(1, 1024);
	h = host_open(8, 0);
	a.c = tlb_host_core(h, 0);
	a.n = 0;
	a.stop = 0;
	assert_int_equal(pthread_create(&t, NULL, worker, &a), 0);
	/* Credits reach the newest region only once the worker moved to
	 * it, so waiting for STEP more there makes each reattach land
	 * while the worker runs, and the worker see every one. */
	for (;;) {
		drain_all(nics[n_nic - 1], 0, &s);
		if (s.completions - mark < STEP)
			continue;
		if (n_nic == N_NIC)
			break;
		nics[n_nic++] = nic_create(1, 1024);
		assert_int_equal(tlb_host_reattach(h, err, sizeof(err)), 0);
		mark = s.completions;
	}
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	/* The worker is gone: this thread may now use its handle. */
	while (tlb_host_flush(a.c) != 0)
		drain_all(nics[n_nic - 1], 0, &s);
	for (int i = 0; i < n_nic; i++)
		drain_all(nics[i], 0, &s);
	tlb_host_core_stats(a.c, &st);
	assert_int_equal(st.completed, a.n);
	assert_int_equal(st.pending, 0);
	assert_int_equal(st.posted + st.discarded, a.n);
	assert_int_equal(s.completions, st.posted);
	assert_int_equal(s.work_ns, 2 * st.posted);
	assert_int_equal(s.service_ns, 3 * st.posted);
	assert_int_equal(st.switches, N_NIC - 1);

	tlb_host_close(h);
	for (int i = 0; i < n_nic; i++)
		tlb_cr_destroy(nics[i], i == n_nic - 1);
}

/* The packet transport: when tlb_host_feedback writes a frame, read
 * against a clock the test moves (no wall time). */
static uint64_t fake_ns;

static uint64_t
fake_clock(void *arg)
{
	assert_ptr_equal(arg, &fake_ns);
	return fake_ns;
}

static struct tlb_host *
packet_open_opts(uint32_t batch, uint32_t hold_us, bool state_only)
{
	char err[ERRLEN] = "";
	struct tlb_host_opts o;
	struct tlb_host *h;

	tlb_host_opts_init(&o);
	o.batch = batch;
	o.feedback_hold_us = hold_us;
	o.feedback_state_only = state_only;
	o.clock_ns = fake_clock;
	o.clock_arg = &fake_ns;
	/* Far from 0, so that nothing depends on the clock's origin. */
	fake_ns = 1000000000000ull;
	h = tlb_host_open_packet(2, &o, err, sizeof(err));
	if (h == NULL)
		fail_msg("tlb_host_open_packet: %s", err);
	return h;
}

static struct tlb_host *
packet_open(uint32_t batch, uint32_t hold_us)
{
	return packet_open_opts(batch, hold_us, false);
}

/* The frame the core has to send now, parsed into m; false when none. */
static bool
fb_take(struct tlb_host_core *c, struct tlb_fb_msg *m)
{
	uint8_t buf[TLB_HOST_FEEDBACK_LEN];
	size_t n = tlb_host_feedback(c, buf, sizeof(buf));

	if (n == 0)
		return false;
	assert_int_equal(n, TLB_FB_FRAME_LEN);
	assert_int_equal(tlb_fb_parse(buf, n, m), TLB_FB_OK);
	return true;
}

/* The first call of a core always reports (its base and state). */
static struct tlb_host_core *
packet_core(struct tlb_host *h, uint32_t core)
{
	struct tlb_host_core *c = tlb_host_core(h, core);
	struct tlb_fb_msg m;

	assert_non_null(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.core, core);
	assert_int_equal(m.state, TLB_RUN_RUNNING);
	assert_int_equal(m.completions, 0);
	assert_false(fb_take(c, &m));
	return c;
}

static void
test_feedback_batch(void **state)
{
	struct tlb_host *h = packet_open(4, 1000);
	struct tlb_host_core *c = packet_core(h, 1);
	struct tlb_fb_msg m;

	(void)state;
	for (int round = 1; round <= 2; round++) {
		for (int i = 0; i < 3; i++) {
			tlb_host_complete(c, 10, 3);
			assert_false(fb_take(c, &m));
		}
		/* The fourth fills the batch, long before the hold. */
		tlb_host_complete(c, 10, 3);
		assert_true(fb_take(c, &m));
		assert_int_equal(m.completions, 4 * round);
		assert_int_equal(m.work_ns, 40 * round);
		assert_int_equal(m.service_ns, 12 * round);
		assert_false(fb_take(c, &m));
	}
	tlb_host_close(h);
}

static void
test_feedback_hold(void **state)
{
	struct tlb_host *h = packet_open(16, 50);
	struct tlb_host_core *c = packet_core(h, 0);
	struct tlb_host_core_stats st;
	struct tlb_fb_msg m;

	(void)state;
	/* Idle polls flush: with a hold that sends nothing sooner. */
	tlb_host_complete(c, 7, 1);
	assert_int_equal(tlb_host_flush(c), 0);
	assert_false(fb_take(c, &m));
	fake_ns += 30000;
	/* A later completion goes with the first; the hold runs from the
	 * oldest one held. */
	tlb_host_complete(c, 7, 1);
	assert_int_equal(tlb_host_flush(c), 0);
	fake_ns += 19999;
	assert_false(fb_take(c, &m));
	fake_ns += 1;
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 2);
	assert_int_equal(m.work_ns, 14);
	assert_false(fb_take(c, &m));
	/* Nothing held: time alone makes no frame. */
	fake_ns += 90000000;
	assert_false(fb_take(c, &m));
	/* The next completion starts a new hold. */
	tlb_host_complete(c, 7, 1);
	fake_ns += 49999;
	assert_false(fb_take(c, &m));
	fake_ns += 1;
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 3);
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.posted, 3);
	assert_int_equal(st.records, 2);
	assert_int_equal(st.pending, 0);
	tlb_host_close(h);
}

/* A hold of 0: a frame at each flush that finds completions held, as a
 * credit record would be posted, and none without one. */
static void
test_feedback_no_hold(void **state)
{
	struct tlb_host *h = packet_open(16, 0);
	struct tlb_host_core *c = packet_core(h, 0);
	struct tlb_fb_msg m;

	(void)state;
	tlb_host_complete(c, 5, 1);
	fake_ns += 1000000;
	assert_false(fb_take(c, &m));
	assert_int_equal(tlb_host_flush(c), 0);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 1);
	assert_int_equal(tlb_host_flush(c), 0);
	assert_false(fb_take(c, &m));
	tlb_host_close(h);
}

static void
test_feedback_state(void **state)
{
	struct tlb_host *h = packet_open(16, 50);
	struct tlb_host_core *c = packet_core(h, 0);
	struct tlb_fb_msg m;

	(void)state;
	/* A park undone before the next call (an idle sleep) says nothing. */
	tlb_host_set_running(c, false);
	tlb_host_set_running(c, true);
	assert_false(fb_take(c, &m));
	/* One that lasts goes at once, with what is held, hold or not. */
	tlb_host_complete(c, 5, 1);
	tlb_host_set_running(c, false);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.state, TLB_RUN_PARKED);
	assert_int_equal(m.completions, 1);
	assert_false(fb_take(c, &m));
	tlb_host_set_running(c, true);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.state, TLB_RUN_RUNNING);
	tlb_host_set_offline(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.state, TLB_RUN_OFFLINE);
	/* Offline is for good. */
	tlb_host_set_running(c, true);
	assert_false(fb_take(c, &m));
	tlb_host_close(h);
}

static void
test_feedback_heartbeat_unsent(void **state)
{
	struct tlb_host *h = packet_open(16, 50);
	struct tlb_host_core *c = packet_core(h, 0);
	struct tlb_fb_msg m;

	(void)state;
	/* Beats alone send nothing until 100 ms after the last frame. */
	for (int i = 0; i < 9; i++) {
		fake_ns += 11000000;
		tlb_host_beat(c);
		assert_false(fb_take(c, &m));
	}
	fake_ns += 999999; /* 99.999999 ms since the frame */
	tlb_host_beat(c);
	assert_false(fb_take(c, &m));
	fake_ns += 1;
	tlb_host_beat(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.heartbeat, 11);
	assert_int_equal(m.completions, 0);
	/* A frame that did not get out is written again, with the same
	 * totals or newer. */
	tlb_host_complete(c, 5, 1);
	fake_ns += 50000;
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 1);
	assert_false(fb_take(c, &m));
	tlb_host_feedback_unsent(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 1);
	assert_false(fb_take(c, &m));
	tlb_host_close(h);
}

/* State only: completions, however many and however old, make no frame;
 * a state change, an unsent frame and the heartbeat do, each with the
 * completions' totals so far. */
static void
test_feedback_state_only(void **state)
{
	struct tlb_host *h = packet_open_opts(4, 50, true);
	struct tlb_host_core *c = packet_core(h, 1);
	struct tlb_host_core_stats st;
	struct tlb_fb_msg m;

	(void)state;
	for (int i = 0; i < 9; i++) {
		tlb_host_complete(c, 10, 3);
		assert_int_equal(tlb_host_flush(c), 0);
		fake_ns += 1000000;
		assert_false(fb_take(c, &m));
	}
	tlb_host_set_running(c, false);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.state, TLB_RUN_PARKED);
	assert_int_equal(m.completions, 9);
	assert_int_equal(m.work_ns, 90);
	assert_false(fb_take(c, &m));
	tlb_host_set_running(c, true);
	assert_true(fb_take(c, &m));
	tlb_host_complete(c, 10, 3);
	tlb_host_feedback_unsent(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 10);
	/* The heartbeat: 100 ms after the last frame, completions or not. */
	tlb_host_complete(c, 10, 3);
	fake_ns += 99999999;
	tlb_host_beat(c);
	assert_false(fb_take(c, &m));
	fake_ns += 1;
	tlb_host_beat(c);
	assert_true(fb_take(c, &m));
	assert_int_equal(m.completions, 11);
	tlb_host_core_stats(c, &st);
	assert_int_equal(st.completed, 11);
	assert_int_equal(st.pending, 0);
	tlb_host_close(h);
}

static void
test_feedback_hold_range(void **state)
{
	char err[ERRLEN] = "";
	struct tlb_host_opts o;

	(void)state;
	tlb_host_opts_init(&o);
	assert_int_equal(o.feedback_hold_us, TLB_HOST_FEEDBACK_HOLD_US_DEFAULT);
	o.feedback_hold_us = TLB_HOST_FEEDBACK_HOLD_US_MAX + 1;
	assert_null(tlb_host_open_packet(1, &o, err, sizeof(err)));
	assert_non_null(strstr(err, "hold"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_missing, setup_name,
						unlink_name),
		cmocka_unit_test_setup_teardown(test_open_invalid, setup_name,
						unlink_name),
		cmocka_unit_test_setup_teardown(test_batches_two_cores,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_ring_full, setup_name,
						unlink_name),
		cmocka_unit_test_setup_teardown(test_state_heartbeat,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_stale_closed_reattach,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_stale_replaced, setup_name,
						unlink_name),
		cmocka_unit_test_setup_teardown(test_reattach_same_region,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_reattach_fewer_cores,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_reattach_concurrent,
						setup_name, unlink_name),
		cmocka_unit_test(test_feedback_batch),
		cmocka_unit_test(test_feedback_hold),
		cmocka_unit_test(test_feedback_no_hold),
		cmocka_unit_test(test_feedback_state),
		cmocka_unit_test(test_feedback_heartbeat_unsent),
		cmocka_unit_test(test_feedback_state_only),
		cmocka_unit_test(test_feedback_hold_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
