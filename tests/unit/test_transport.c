/* SPDX-License-Identifier: BSD-3-Clause
 * The host transports behind struct tlb_transport_ops: shm (the credit
 * ring) hands the dispatcher exactly what the host side wrote, and none
 * (no host memory) reports nothing but running cores.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "turbolb/feedback.h"
#include "turbolb/transport.h"

#include "valgrind_skip.h"

static char ring_name[64];

static int
setup_name(void **state)
{
	static unsigned int seq;

	(void)state;
	snprintf(ring_name, sizeof(ring_name), "/tlb-xport-%d-%u", getpid(),
		 seq++);
	return 0;
}

static void
test_shm_round_trip(void **state)
{
	struct tlb_transport *t;
	struct tlb_cr *host;
	struct tlb_credit in[3] =
		{
			{.completions = 1, .work_ns = 100},
			{.completions = 2, .work_ns = 250},
			{.completions = 4, .work_ns = 7},
		},
			  out[8];
	char err[256];

	(void)state;
	assert_int_equal(tlb_transport_shm_create(ring_name, 4, 16, 0600,
						  (gid_t)-1, &t, err,
						  sizeof(err)),
			 0);
	assert_string_equal(t->ops->name, "shm");
	assert_int_equal(t->n_cores, 4);
	assert_true(t->has_credits);
	assert_true(tlb_transport_can_kick(t));
	assert_int_equal(tlb_transport_host_epoch(t), 0);
	assert_int_equal(tlb_transport_state(t, 2), TLB_RUN_OFFLINE);

	/* A host attaches: new epoch, its run state and credits come
	 * through, each core's on its own. */
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), 0);
	uint64_t epoch = tlb_transport_host_epoch(t);
	assert_int_not_equal(epoch, 0);
	tlb_cr_set_state(host, 2, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 3, TLB_RUN_PARKED);
	assert_int_equal(tlb_transport_state(t, 2), TLB_RUN_RUNNING);
	assert_int_equal(tlb_transport_state(t, 3), TLB_RUN_PARKED);
	assert_int_equal(tlb_cr_post(host, 2, in, 3), 3);
	assert_int_equal(tlb_transport_drain(t, 1, out, 8), 0);
	assert_int_equal(tlb_transport_drain(t, 2, out, 2), 2);
	assert_int_equal(out[0].completions, 1);
	assert_int_equal(out[1].work_ns, 250);
	assert_int_equal(tlb_transport_drain(t, 2, out, 8), 1);
	assert_int_equal(out[0].completions, 4);
	assert_int_equal(tlb_transport_drain(t, 2, out, 8), 0);

	/* The doorbell reaches the host's view of the same core only. */
	tlb_transport_doorbell(t, 3);
	tlb_transport_doorbell(t, 3);
	assert_int_equal(tlb_cr_doorbell(host, 3), 2);
	assert_int_equal(tlb_cr_doorbell(host, 2), 0);

	struct tlb_transport_core_info info;
	tlb_cr_set_tid(host, 1, 77, 1234);
	tlb_transport_core_info(t, 1, &info);
	assert_int_equal(info.tid, 1234);
	assert_false(info.off_cpu);
	assert_int_equal(info.kick.boosts, 0);

	/* Closing what it created marks the ring closed for the host and
	 * removes its name. */
	tlb_transport_close(t);
	assert_true(tlb_cr_closed(host));
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), -1);
}

/* The dispatcher's once-a-poll drain: for the cores asked, in the order
 * asked, a sum per core that had records (at most max records each),
 * nothing for the others or for a core the ring does not have. */
static void
test_shm_drain_sums(void **state)
{
	struct tlb_transport *t;
	struct tlb_cr *host;
	struct tlb_credit rec[5];
	struct tlb_credit_sum sum[6];
	const uint32_t cores[6] = {5, 3, 0, 9, 1, 4};
	char err[256];

	(void)state;
	assert_int_equal(tlb_transport_shm_create(ring_name, 6, 16, 0600,
						  (gid_t)-1, &t, err,
						  sizeof(err)),
			 0);
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), 0);
	assert_int_equal(tlb_transport_drain_sums(t, cores, 6, 8, sum), 0);
	for (unsigned int j = 0; j < 5; j++)
		rec[j] = (struct tlb_credit){.completions = j + 1,
					     .work_ns = 100 * (j + 1)};
	assert_int_equal(tlb_cr_post(host, 0, rec, 2), 2); /* 3 done, 300 */
	assert_int_equal(tlb_cr_post(host, 4, rec, 5), 5); /* 15, 1500 */
	assert_int_equal(tlb_cr_post(host, 2, rec, 1), 1); /* not asked */

	/* At most 3 records of each core now. */
	assert_int_equal(tlb_transport_drain_sums(t, cores, 6, 3, sum), 2);
	assert_int_equal(sum[0].idx, 2); /* core 0, third in the list */
	assert_int_equal(sum[0].records, 2);
	assert_int_equal(sum[0].completions, 3);
	assert_int_equal(sum[0].work_ns, 300);
	assert_int_equal(sum[1].idx, 5); /* core 4 */
	assert_int_equal(sum[1].records, 3);
	assert_int_equal(sum[1].completions, 1 + 2 + 3);
	assert_int_equal(sum[1].work_ns, 600);
	/* The rest of core 4 next time; core 2's records stay for whoever
	 * asks for core 2. */
	assert_int_equal(tlb_transport_drain_sums(t, cores, 6, 8, sum), 1);
	assert_int_equal(sum[0].idx, 5);
	assert_int_equal(sum[0].records, 2);
	assert_int_equal(sum[0].completions, 4 + 5);
	assert_int_equal(sum[0].work_ns, 900);
	assert_int_equal(tlb_transport_drain_sums(t, cores, 6, 8, sum), 0);
	assert_int_equal(tlb_transport_drain(t, 2, rec, 5), 1);
	tlb_cr_detach(host);
	tlb_transport_close(t);
}

static unsigned int n_logged;

static void
count_log(void *arg, bool warn, const char *msg)
{
	(void)arg;
	(void)msg;
	n_logged += warn;
}

/* A host that truncates the ring and writes impossible positions: the
 * transport's operations do not fault, the faults are counted and
 * logged through check, the cores fall back (OFFLINE: nothing new is
 * charged to them; RUNNING with in-band fallback) and come back when a
 * host attaches again. */
static void
test_shm_faults(void **state)
{
	const uint32_t cores[3] = {0, 1, 2};
	struct tlb_credit rec = {.completions = 2, .work_ns = 10};
	struct tlb_credit_sum sum[3];
	struct tlb_transport *t;
	struct tlb_cr_faults f;
	struct tlb_cr *host;
	uint32_t *prod;
	char err[256];
	uint64_t epoch;
	int fd;

	(void)state;
	skip_under_valgrind();
	assert_int_equal(tlb_transport_shm_create(ring_name, 3, 16, 0600,
						  (gid_t)-1, &t, err,
						  sizeof(err)),
			 0);
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), 0);
	for (uint32_t c = 0; c < 3; c++)
		tlb_cr_set_state(host, c, TLB_RUN_RUNNING);
	assert_int_equal(tlb_transport_check(t, count_log, NULL), 0);
	epoch = tlb_transport_host_epoch(t);

	/* An impossible position on core 1 (its prod_head, from the layout
	 * in credit_ring.h). */
	fd = shm_open(ring_name, O_RDWR, 0);
	assert_true(fd >= 0);
	prod = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(prod != MAP_FAILED);
	prod[(64 + 192 + 16 * 32 + 0) / 4] = 1000;
	assert_int_equal(tlb_cr_post(host, 0, &rec, 1), 1);
	assert_int_equal(tlb_transport_drain_sums(t, cores, 3, 8, sum), 1);
	assert_int_equal(sum[0].idx, 0);
	assert_true(tlb_transport_fallback(t, 1));
	assert_false(tlb_transport_fallback(t, 0));
	assert_int_equal(tlb_transport_state(t, 1), TLB_RUN_OFFLINE);
	tlb_transport_set_inband_fallback(t, true);
	assert_int_equal(tlb_transport_state(t, 1), TLB_RUN_RUNNING);
	tlb_transport_set_inband_fallback(t, false);
	n_logged = 0;
	assert_int_equal(tlb_transport_check(t, count_log, NULL), 1);
	assert_int_equal(n_logged, 1);

	/* Truncated: every core falls back, no signal. */
	munmap(prod, 4096);
	assert_int_equal(ftruncate(fd, 0), 0);
	close(fd);
	assert_int_equal(tlb_transport_drain_sums(t, cores, 3, 8, sum), 0);
	assert_int_equal(tlb_transport_host_epoch(t), epoch);
	for (uint32_t c = 0; c < 3; c++) {
		assert_true(tlb_transport_fallback(t, c));
		assert_int_equal(tlb_transport_state(t, c), TLB_RUN_OFFLINE);
	}
	assert_true(tlb_transport_check(t, count_log, NULL) >= 2);
	tlb_transport_faults(t, &f);
	assert_int_equal(f.bad_index, 1);
	assert_true(f.sigbus >= 1);
	assert_int_equal(f.size_changes, 1);
	assert_int_equal(f.repairs, 1);
	assert_int_equal(f.fallback_cores, 3);

	/* A host attaches to the repaired ring: ring credits again. */
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), 0);
	assert_int_equal(tlb_transport_check(t, count_log, NULL), 1);
	tlb_transport_faults(t, &f);
	assert_int_equal(f.fallback_cores, 0);
	assert_int_equal(f.restores, 3);
	(void)tlb_transport_drain_sums(t, cores, 3, 8, sum); /* resync */
	tlb_cr_set_state(host, 2, TLB_RUN_RUNNING);
	assert_int_equal(tlb_transport_state(t, 2), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_post(host, 2, &rec, 1), 1);
	assert_int_equal(tlb_transport_drain_sums(t, cores, 3, 8, sum), 1);
	assert_int_equal(sum[0].idx, 2);
	assert_int_equal(sum[0].completions, 2);
	tlb_cr_detach(host);
	tlb_transport_close(t);
}

static void
test_shm_wrap_leaves_ring(void **state)
{
	struct tlb_transport *t;
	struct tlb_cr *nic, *host;
	char err[256];

	(void)state;
	assert_int_equal(
		tlb_cr_create(ring_name, 2, 16, 0600, &nic, err, sizeof(err)),
		0);
	assert_int_equal(tlb_transport_shm_wrap(nic, &t, err, sizeof(err)), 0);
	assert_int_equal(t->n_cores, 2);
	tlb_transport_close(t);
	/* Still there and open: the caller owns it. */
	assert_int_equal(tlb_cr_attach(ring_name, &host, err, sizeof(err)), 0);
	assert_false(tlb_cr_closed(host));
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

static void
test_shm_create_error(void **state)
{
	struct tlb_transport *t = NULL;
	char err[256] = "";

	(void)state;
	/* ring_size must be a power of two */
	assert_int_equal(tlb_transport_shm_create(ring_name, 2, 100, 0600,
						  (gid_t)-1, &t, err,
						  sizeof(err)),
			 -1);
	assert_null(t);
	assert_true(err[0] != '\0');
}

static void
test_none(void **state)
{
	struct tlb_transport *t = NULL;
	struct tlb_transport_core_info info;
	struct tlb_credit out[4];
	char err[256];

	(void)state;
	assert_int_equal(tlb_transport_none_create(0, &t, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "0 cores"));
	assert_int_equal(tlb_transport_none_create(8, &t, err, sizeof(err)), 0);
	assert_string_equal(t->ops->name, "none");
	assert_false(t->has_credits);
	assert_false(tlb_transport_can_kick(t));
	assert_int_equal(tlb_transport_host_epoch(t), 0);
	for (uint32_t c = 0; c < 8; c++) {
		assert_int_equal(tlb_transport_state(t, c), TLB_RUN_RUNNING);
		assert_int_equal(tlb_transport_drain(t, c, out, 4), 0);
	}
	const uint32_t cores[3] = {0, 4, 7};
	struct tlb_credit_sum sum[3];
	assert_int_equal(tlb_transport_drain_sums(t, cores, 3, 4, sum), 0);
	memset(&info, 0xff, sizeof(info));
	tlb_transport_core_info(t, 5, &info);
	assert_int_equal(info.tid, 0);
	assert_false(info.off_cpu);
	assert_int_equal(info.kick.kicks_served, 0);
	/* Nothing a host can break. */
	struct tlb_cr_faults f;
	memset(&f, 0xff, sizeof(f));
	tlb_transport_faults(t, &f);
	assert_int_equal(f.sigbus + f.bad_index + f.fallback_cores, 0);
	assert_false(tlb_transport_fallback(t, 3));
	assert_int_equal(tlb_transport_check(t, NULL, NULL), 0);
	tlb_transport_set_inband_fallback(t, true);
	tlb_transport_close(t);
	tlb_transport_close(NULL);
}

/* ---- the packet transport and its frames ---- */

static size_t
fb_frame(uint8_t *buf, uint16_t core, enum tlb_core_run_state st,
	 uint64_t epoch, uint64_t compl, uint64_t work)
{
	struct tlb_fb_msg m = {
		.core = core,
		.state = st,
		.host_epoch = epoch,
		.heartbeat = 7,
		.completions = compl,
		.work_ns = work,
		.service_ns = compl *3,
	};

	return tlb_fb_build(buf, TLB_FB_FRAME_LEN, NULL, &m);
}

static void
test_fb_frames(void **state)
{
	uint8_t buf[TLB_FB_FRAME_LEN + 4];
	struct tlb_fb_msg m;
	uint64_t bell;
	uint16_t core;

	(void)state;
	assert_int_equal(fb_frame(buf, 3, TLB_RUN_PARKED, 9, 100, 5000),
			 TLB_FB_FRAME_LEN);
	assert_true(tlb_fb_is_feedback(buf, sizeof(buf)));
	assert_int_equal(buf[12], 0x88);
	assert_int_equal(buf[13], 0xb5);
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m), TLB_FB_OK);
	assert_int_equal(m.core, 3);
	assert_int_equal(m.state, TLB_RUN_PARKED);
	assert_int_equal(m.host_epoch, 9);
	assert_int_equal(m.heartbeat, 7);
	assert_int_equal(m.completions, 100);
	assert_int_equal(m.work_ns, 5000);
	assert_int_equal(m.service_ns, 300);
	/* trailing padding is fine, a short frame is not */
	assert_int_equal(tlb_fb_parse(buf, sizeof(buf), &m), TLB_FB_OK);
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN - 1, &m),
			 TLB_FB_SHORT);
	assert_int_equal(tlb_fb_build(buf, TLB_FB_FRAME_LEN - 1, NULL, &m), 0);
	buf[15] ^= 1;
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m),
			 TLB_FB_BAD_MAGIC);
	buf[15] ^= 1;
	buf[18] = 2;
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m),
			 TLB_FB_BAD_VERSION);
	buf[18] = TLB_FB_VERSION;
	buf[19] = 3;
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m),
			 TLB_FB_BAD_STATE);
	fb_frame(buf, 3, TLB_RUN_RUNNING, 0, 0, 0);
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m),
			 TLB_FB_ZERO_EPOCH);
	buf[13] = 0xb6;
	assert_false(tlb_fb_is_feedback(buf, TLB_FB_FRAME_LEN));
	assert_int_equal(tlb_fb_parse(buf, TLB_FB_FRAME_LEN, &m),
			 TLB_FB_BAD_TYPE);

	assert_int_equal(tlb_kick_build(buf, sizeof(buf), NULL, 5, 42),
			 TLB_KICK_FRAME_LEN);
	assert_int_equal(buf[0], 0xff);
	assert_int_equal(tlb_kick_parse(buf, TLB_KICK_FRAME_LEN, &core, &bell),
			 0);
	assert_int_equal(core, 5);
	assert_int_equal(bell, 42);
	assert_int_equal(
		tlb_kick_parse(buf, TLB_KICK_FRAME_LEN - 1, &core, &bell), -1);
	assert_false(tlb_fb_is_feedback(buf, TLB_KICK_FRAME_LEN));
	assert_string_equal(tlb_fb_err_str(TLB_FB_BAD_MAGIC), "bad_magic");
}

static uint32_t
drain_one(struct tlb_transport *t, uint32_t core, uint64_t * compl,
	  uint64_t *work)
{
	struct tlb_credit_sum s[1];

	*compl = *work = 0;
	if (tlb_transport_drain_sums(t, &core, 1, 32, s) == 0)
		return 0;
	*compl = s[0].completions;
	*work = s[0].work_ns;
	return s[0].records;
}

static void
test_packet(void **state)
{
	struct tlb_transport *t;
	uint8_t f[TLB_FB_FRAME_LEN];
	uint64_t c, w;
	char err[128];

	(void)state;
	assert_int_equal(tlb_transport_packet_create(2, &t, err, sizeof(err)),
			 0);
	assert_string_equal(t->ops->name, "packet");
	assert_true(t->has_credits);
	assert_false(tlb_transport_can_kick(t));
	assert_int_equal(tlb_transport_host_epoch(t), 0);
	assert_int_equal(tlb_transport_state(t, 0), TLB_RUN_OFFLINE);

	/* The first frame is the base: 50 completions from before count
	 * nothing, the core comes online. */
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 50, 500);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(tlb_transport_host_epoch(t), 100);
	assert_int_equal(tlb_transport_state(t, 0), TLB_RUN_RUNNING);
	assert_int_equal(tlb_transport_state(t, 1), TLB_RUN_OFFLINE);
	assert_int_equal(drain_one(t, 0, &c, &w), 0);
	/* Totals: two frames sum to what moved since the base. */
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 60, 600);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	fb_frame(f, 0, TLB_RUN_PARKED, 100, 66, 700);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(tlb_transport_state(t, 0), TLB_RUN_PARKED);
	assert_int_equal(drain_one(t, 0, &c, &w), 2);
	assert_int_equal(c, 16);
	assert_int_equal(w, 200);
	assert_int_equal(drain_one(t, 0, &c, &w), 0);
	/* A lost frame loses nothing: the next carries the totals. */
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 80, 900);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(drain_one(t, 0, &c, &w), 1);
	assert_int_equal(c, 14);
	assert_int_equal(w, 200);

	/* Queue 1 speaks only for core 1. */
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 90, 900);
	assert_int_equal(tlb_transport_feed(t, 1, f, sizeof(f)),
			 TLB_FEED_WRONG_CORE);
	assert_int_equal(drain_one(t, 0, &c, &w), 0);
	assert_int_equal(tlb_transport_feed(t, 7, f, sizeof(f)),
			 TLB_FEED_WRONG_CORE);
	/* Garbage is malformed and changes nothing. */
	f[20] = 0xff;
	f[14] = 0;
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)),
			 TLB_FEED_MALFORMED);
	assert_int_equal(tlb_transport_feed(t, 0, f, 10), TLB_FEED_MALFORMED);
	/* Totals that go back, or more work than the completions can
	 * carry: nothing credited, the next frame counts from them. */
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 70, 900);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)),
			 TLB_FEED_BAD_TOTALS);
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 71,
		 900 + 2 * (uint64_t)UINT32_MAX);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)),
			 TLB_FEED_BAD_TOTALS);
	assert_int_equal(drain_one(t, 0, &c, &w), 0);
	fb_frame(f, 0, TLB_RUN_RUNNING, 100, 73,
		 900 + 2 * (uint64_t)UINT32_MAX + 30);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(drain_one(t, 0, &c, &w), 1);
	assert_int_equal(c, 2);
	assert_int_equal(w, 30);

	/* Core 1 posts, then a newer host comes on core 0: core 1's credits
	 * of the old host are not drained, it is offline until its own
	 * first frame, and the old epoch cannot come back. */
	fb_frame(f, 1, TLB_RUN_RUNNING, 100, 0, 0);
	assert_int_equal(tlb_transport_feed(t, 1, f, sizeof(f)), TLB_FEED_OK);
	fb_frame(f, 1, TLB_RUN_RUNNING, 100, 5, 50);
	assert_int_equal(tlb_transport_feed(t, 1, f, sizeof(f)), TLB_FEED_OK);
	fb_frame(f, 0, TLB_RUN_RUNNING, 200, 0, 0);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(tlb_transport_host_epoch(t), 200);
	assert_int_equal(tlb_transport_state(t, 1), TLB_RUN_OFFLINE);
	assert_int_equal(drain_one(t, 1, &c, &w), 0);
	fb_frame(f, 1, TLB_RUN_RUNNING, 100, 9, 90);
	assert_int_equal(tlb_transport_feed(t, 1, f, sizeof(f)),
			 TLB_FEED_STALE);
	assert_int_equal(tlb_transport_host_epoch(t), 200);
	fb_frame(f, 1, TLB_RUN_RUNNING, 200, 3, 30);
	assert_int_equal(tlb_transport_feed(t, 1, f, sizeof(f)), TLB_FEED_OK);
	assert_int_equal(tlb_transport_state(t, 1), TLB_RUN_RUNNING);
	assert_int_equal(drain_one(t, 1, &c, &w), 0);

	/* Nothing a host sends is a fault of host memory. */
	struct tlb_cr_faults fl;
	struct tlb_transport_core_info ci;

	tlb_transport_faults(t, &fl);
	assert_int_equal(fl.bad_record, 0);
	assert_false(tlb_transport_fallback(t, 0));
	tlb_transport_core_info(t, 0, &ci);
	assert_int_equal(ci.tid, 0);
	tlb_transport_close(t);

	assert_int_equal(tlb_transport_packet_create(0, &t, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "packet transport"));
	/* The other transports take no frames. */
	assert_int_equal(tlb_transport_none_create(1, &t, err, sizeof(err)), 0);
	assert_int_equal(tlb_transport_feed(t, 0, f, sizeof(f)),
			 TLB_FEED_UNEXPECTED);
	tlb_transport_close(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_shm_round_trip, setup_name),
		cmocka_unit_test_setup(test_shm_drain_sums, setup_name),
		cmocka_unit_test_setup(test_shm_faults, setup_name),
		cmocka_unit_test_setup(test_shm_wrap_leaves_ring, setup_name),
		cmocka_unit_test_setup(test_shm_create_error, setup_name),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_fb_frames),
		cmocka_unit_test(test_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
