/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: the credit ring over POSIX shared memory. Both sides run in
 * this process; the host side maps the region a second time, as a real
 * host process would.
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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bsd/string.h>

#include "turbolb/credit_ring.h"

#define SHM_NAME_TAG "cr"
#include "shm_name.h"
#include "valgrind_skip.h"

#define HDR_BYTES 64u
#define CTL_BYTES 192u
#define REC_BYTES 32u
/* Byte offsets within a slot, from the layout in credit_ring.h. */
#define OFF_PROD 0u
#define OFF_CONS 64u

static struct tlb_credit
rec_for(uint64_t seq)
{
	struct tlb_credit c;

	memset(&c, 0, sizeof(c));
	c.completions = 1;
	c.work_ns = (seq * 2654435761u) % 1000003u + 1;
	c.service_ns = seq ^ 0x5555u;
	c.host_ts_ns = seq;
	return c;
}

static struct tlb_cr *
attach_ok(const char *name)
{
	struct tlb_cr *cr = NULL;
	char err[256] = "";
	int rc;

	rc = tlb_cr_attach(name, &cr, err, sizeof(err));
	if (rc != 0)
		print_error("attach %s: %s\n", name, err);
	assert_int_equal(rc, 0);
	assert_non_null(cr);
	return cr;
}

/* A raw second mapping through which tests play a broken or hostile peer. */
static uint8_t *
raw_map(const char *name, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	fd = shm_open(name, O_RDWR, 0);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	close(fd);
	return p;
}

static void
raw_truncate(const char *name, off_t size)
{
	int fd = shm_open(name, O_RDWR, 0);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static size_t
shm_len(const char *name)
{
	struct stat st;
	int fd = shm_open(name, O_RDONLY, 0);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	return (size_t)st.st_size;
}

static uint32_t *
slot_word(uint8_t *base, uint32_t ring_size, uint32_t core, uint32_t off)
{
	size_t stride = CTL_BYTES + (size_t)ring_size * REC_BYTES;

	return (uint32_t *)(base + HDR_BYTES + core * stride + off);
}

static bool
name_exists(const char *name)
{
	int fd = shm_open(name, O_RDONLY, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void
test_region_size(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct tlb_cr_header), HDR_BYTES);
	assert_int_equal(sizeof(struct tlb_credit), REC_BYTES);
	assert_int_equal(tlb_cr_region_size(1, 16),
			 HDR_BYTES + CTL_BYTES + 16 * REC_BYTES);
	assert_int_equal(tlb_cr_region_size(3, 64),
			 HDR_BYTES + 3 * (CTL_BYTES + 64 * REC_BYTES));
	assert_int_equal(
		tlb_cr_region_size(TLB_CR_MAX_CORES, TLB_CR_MAX_RING),
		HDR_BYTES + (uint64_t)TLB_CR_MAX_CORES *
				    (CTL_BYTES +
				     (uint64_t)TLB_CR_MAX_RING * REC_BYTES));
	/* Out of range: no size, and no overflow on the way. */
	assert_int_equal(tlb_cr_region_size(0, 16), 0);
	assert_int_equal(tlb_cr_region_size(1, 24), 0);
	assert_int_equal(tlb_cr_region_size(1, 8), 0);
	assert_int_equal(tlb_cr_region_size(TLB_CR_MAX_CORES + 1, 16), 0);
	assert_int_equal(tlb_cr_region_size(1, TLB_CR_MAX_RING * 2), 0);
	assert_int_equal(tlb_cr_region_size(UINT32_MAX, UINT32_MAX), 0);
	assert_int_equal(tlb_cr_region_size(UINT32_MAX, 1u << 31), 0);
}

static void
test_create_attach_round_trip(void **state)
{
	struct tlb_credit in[3], out[8];
	struct tlb_cr *nic, *host;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(4, 64);
	assert_int_equal(tlb_cr_n_cores(nic), 4);
	assert_int_equal(tlb_cr_ring_size(nic), 64);
	assert_int_equal(tlb_cr_host_epoch(nic), 0);
	assert_false(tlb_cr_closed(nic));

	host = attach_ok(name);
	assert_int_equal(tlb_cr_n_cores(host), 4);
	assert_int_equal(tlb_cr_ring_size(host), 64);
	assert_int_not_equal(tlb_cr_host_epoch(nic), 0);
	assert_int_equal(tlb_cr_host_epoch(nic), tlb_cr_host_epoch(host));
	assert_false(tlb_cr_closed(host));
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(tlb_cr_state(nic, i), TLB_RUN_OFFLINE);

	for (unsigned int i = 0; i < 3; i++)
		in[i] = rec_for(100 + i);
	assert_int_equal(tlb_cr_post(host, 3, in, 3), 3);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(tlb_cr_drain(nic, i, out, 8), 0);
	assert_int_equal(tlb_cr_drain(nic, 3, out, 8), 3);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(tlb_cr_drain(nic, 3, out, 8), 0);

	/* Out-of-range cores are refused, not written. */
	assert_int_equal(tlb_cr_post(host, 4, in, 1), 0);
	assert_int_equal(tlb_cr_drain(nic, 4, out, 8), 0);
	assert_int_equal(tlb_cr_state(nic, 4), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_heartbeat(nic, UINT32_MAX), 0);

	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
	assert_false(name_exists(name));
}

static void
test_full_ring_and_drain_bound(void **state)
{
	struct tlb_credit in[40], out[40];
	struct tlb_cr *nic, *host;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(1, 16);
	host = attach_ok(name);
	for (unsigned int i = 0; i < 40; i++)
		in[i] = rec_for(i);

	/* Only a ring's worth fits; then post returns 0. */
	assert_int_equal(tlb_cr_post(host, 0, in, 20), 16);
	assert_int_equal(tlb_cr_post(host, 0, in + 16, 1), 0);
	assert_int_equal(tlb_cr_post(host, 0, in + 16, 4), 0);

	/* Drain honours max, and each drain frees exactly what it took. */
	memset(out, 0, sizeof(out));
	assert_int_equal(tlb_cr_drain(nic, 0, out, 3), 3);
	assert_memory_equal(out, in, 3 * sizeof(in[0]));
	assert_true(out[3].completions == 0);
	assert_int_equal(tlb_cr_post(host, 0, in + 16, 10), 3);
	assert_int_equal(tlb_cr_post(host, 0, in + 19, 1), 0);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 0), 0);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 1), 1);
	assert_memory_equal(out, &in[3], sizeof(in[0]));
	assert_int_equal(tlb_cr_drain(nic, 0, out, 40), 15);
	assert_memory_equal(out, &in[4], 15 * sizeof(in[0]));
	assert_int_equal(tlb_cr_drain(nic, 0, out, 40), 0);

	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* Posts and drains in uneven chunks so that every split of a batch across
 * the end of a 16-record ring is exercised, thousands of times over. */
static void
test_wrap_around(void **state)
{
	struct tlb_credit in[16], out[16];
	uint64_t next_post = 0, next_drain = 0;
	struct tlb_cr *nic, *host;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(2, 16);
	host = attach_ok(name);

	for (unsigned int iter = 0; iter < 20000; iter++) {
		unsigned int want = iter % 16 + 1;
		unsigned int max = (iter * 7) % 11 + 1;
		unsigned int got, i;

		for (i = 0; i < want; i++)
			in[i] = rec_for(next_post + i);
		got = tlb_cr_post(host, 1, in, want);
		assert_true(got <= want);
		assert_true(next_post + got - next_drain <= 16);
		if (got < want) /* only ever short because the ring is full */
			assert_int_equal(next_post + got - next_drain, 16);
		next_post += got;

		got = tlb_cr_drain(nic, 1, out, max);
		assert_true(got <= max);
		if (got < max) /* only ever short because it ran dry */
			assert_int_equal(next_drain + got, next_post);
		for (i = 0; i < got; i++) {
			struct tlb_credit want_rec = rec_for(next_drain + i);

			assert_memory_equal(&out[i], &want_rec, sizeof(out[i]));
		}
		next_drain += got;
		/* The neighbouring slot is untouched. */
		assert_int_equal(tlb_cr_drain(nic, 0, out, 16), 0);
	}
	assert_true(next_drain > 1000 * 16);

	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* The free-running 32-bit positions wrap past 2^32 without a hiccup. The
 * positions are set before anyone maps the region, and the host handle
 * drains too: a handle's consumer position is its own copy, taken from
 * the region when it maps it (the NIC side's starts at 0 and never reads
 * the region's back). */
static void
test_counter_wrap(void **state)
{
	struct tlb_credit in[5], out[16];
	uint64_t seq_in = 0, seq_out = 0;
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len;

	(void)state;
	nic = nic_create(2, 16);
	raw = raw_map(name, &len);
	*slot_word(raw, 16, 1, OFF_PROD) = UINT32_MAX - 20;
	*slot_word(raw, 16, 1, OFF_CONS) = UINT32_MAX - 20;
	host = attach_ok(name);

	for (unsigned int iter = 0; iter < 40; iter++) {
		unsigned int got;

		for (unsigned int i = 0; i < 5; i++)
			in[i] = rec_for(seq_in + i);
		assert_int_equal(tlb_cr_post(host, 1, in, 5), 5);
		seq_in += 5;
		got = tlb_cr_drain(host, 1, out, 16);
		assert_int_equal(got, 5);
		for (unsigned int i = 0; i < got; i++)
			assert_true(out[i].host_ts_ns == seq_out + i);
		seq_out += got;
	}
	/* It really did go past the wrap. */
	assert_true(*slot_word(raw, 16, 1, OFF_CONS) < 1000);
	assert_int_equal(*slot_word(raw, 16, 1, OFF_CONS),
			 *slot_word(raw, 16, 1, OFF_PROD));

	munmap(raw, len);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* A producer position the consumer cannot trust is not drained: it is
 * counted, set back to the consumer's (so that the host can post again),
 * and the core falls back (reads OFFLINE) until a host attaches again;
 * its validated records are still drained meanwhile. */
static void
test_corrupt_positions(void **state)
{
	struct tlb_credit in = rec_for(7), out[32];
	struct tlb_cr_faults f;
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len;

	(void)state;
	nic = nic_create(2, 16);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	raw = raw_map(name, &len);
	*slot_word(raw, 16, 0, OFF_PROD) = 16 + 5;
	assert_int_equal(tlb_cr_drain(nic, 0, out, 32), 0);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.bad_index, 1);
	assert_int_equal(f.fallback_cores, 1);
	assert_true(tlb_cr_fallback(nic, 0));
	assert_false(tlb_cr_fallback(nic, 1));
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_RUNNING);
	/* Reset to the consumer's position: the host posts again, and
	 * what it posts is drained (work already charged is paid back). */
	assert_int_equal(*slot_word(raw, 16, 0, OFF_PROD), 0);
	assert_int_equal(tlb_cr_post(host, 0, &in, 1), 1);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 32), 1);
	assert_memory_equal(&out[0], &in, sizeof(in));

	/* Behind the consumer is as impossible as far ahead. */
	*slot_word(raw, 16, 0, OFF_PROD) = UINT32_MAX;
	assert_int_equal(tlb_cr_drain(nic, 0, out, 32), 0);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.bad_index, 2);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 1);
	/* Still the same host: still in fallback. */
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);
	assert_true(tlb_cr_fallback(nic, 0));

	tlb_cr_detach(host);
	host = attach_ok(name);
	assert_int_equal(*slot_word(raw, 16, 0, OFF_PROD),
			 *slot_word(raw, 16, 0, OFF_CONS));
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 1);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.restores, 1);
	assert_int_equal(f.fallback_cores, 0);
	assert_false(tlb_cr_fallback(nic, 0));
	assert_int_equal(tlb_cr_post(host, 0, &in, 1), 1);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 32), 1);
	assert_memory_equal(&out[0], &in, sizeof(in));

	munmap(raw, len);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* The consumer never reads its position back from the region: a host
 * that moves cons_tail back cannot have records credited twice. */
static void
test_consumer_position_private(void **state)
{
	struct tlb_credit in[3] = {rec_for(1), rec_for(2), rec_for(3)};
	struct tlb_credit out[16];
	struct tlb_credit_sum sum[2];
	uint32_t core = 0;
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len;

	(void)state;
	nic = nic_create(1, 16);
	host = attach_ok(name);
	raw = raw_map(name, &len);
	assert_int_equal(tlb_cr_post(host, 0, in, 3), 3);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 16), 3);
	assert_int_equal(*slot_word(raw, 16, 0, OFF_CONS), 3);
	*slot_word(raw, 16, 0, OFF_CONS) = 0;
	assert_int_equal(tlb_cr_drain(nic, 0, out, 16), 0);
	assert_int_equal(tlb_cr_drain_sums(nic, &core, 1, 16, sum), 0);
	assert_false(tlb_cr_fallback(nic, 0));

	munmap(raw, len);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* A record no host writes (more work than its completions can carry) is
 * not credited, nor is its batch; the core falls back. With in-band
 * fallback the core reads RUNNING and its records are dropped. */
static void
test_bad_record(void **state)
{
	struct tlb_credit good = rec_for(5), bad = rec_for(6), out[16];
	struct tlb_credit_sum sum[2];
	uint32_t cores[2] = {0, 1};
	struct tlb_cr_faults f;
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len;

	(void)state;
	nic = nic_create(2, 16);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	bad.completions = 2;
	bad.work_ns = 2ull * UINT32_MAX + 1;
	assert_int_equal(tlb_cr_post(host, 1, &good, 1), 1);
	assert_int_equal(tlb_cr_post(host, 1, &bad, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 2, 16, sum), 0);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.bad_record, 1);
	assert_true(tlb_cr_fallback(nic, 1));
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	/* The most a record can carry is fine. */
	bad.work_ns = 2ull * UINT32_MAX;
	assert_int_equal(tlb_cr_post(host, 1, &bad, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 2, 16, sum), 1);
	assert_int_equal(sum[0].idx, 1);
	assert_int_equal(sum[0].completions, 2);

	tlb_cr_set_inband_fallback(nic, true);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_post(host, 1, &good, 1), 1);
	assert_int_equal(tlb_cr_drain(nic, 1, out, 16), 0);
	/* ...drained all the same: the host's ring does not fill. */
	raw = raw_map(name, &len);
	assert_int_equal(*slot_word(raw, 16, 1, OFF_CONS), 4);

	munmap(raw, len);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

static unsigned int logged_warn, logged_info;
static char logged_last[512];

static void
log_collect(void *arg, bool warn, const char *msg)
{
	(void)arg;
	if (warn)
		logged_warn++;
	else
		logged_info++;
	strlcpy(logged_last, msg, sizeof(logged_last));
}

static off_t
object_size(const char *name)
{
	struct stat st;
	int fd = shm_open(name, O_RDONLY, 0);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	return st.st_size;
}

static void
object_truncate(const char *name, off_t size)
{
	int fd = shm_open(name, O_RDWR, 0);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* A host truncates the region under the NIC side: the NIC side's next
 * access does not kill it (the SIGBUS guard), every core falls back, the
 * host epoch does not move, and the check repairs the region; the old
 * host's records flow again once the consumer resynced, and a host that
 * attaches again restores ring credits. */
static void
test_truncate_caught(void **state)
{
	struct tlb_credit in = rec_for(9), out[16];
	struct tlb_credit_sum sum[4];
	uint32_t cores[4] = {0, 1, 2, 3};
	struct tlb_cr_faults f;
	struct tlb_cr *nic, *host, *host2;
	const char *name = cur_name;
	char err[256];
	uint64_t epoch;
	size_t len;

	(void)state;
	skip_under_valgrind();
	nic = nic_create(4, 16);
	len = tlb_cr_region_size(4, 16);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);
	epoch = tlb_cr_host_epoch(nic);
	assert_int_equal(tlb_cr_post(host, 2, &in, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 4, 16, sum), 1);

	object_truncate(name, 0);
	/* Each of these touches the region: none may fault. */
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 4, 16, sum), 0);
	assert_int_equal(tlb_cr_drain(nic, 3, out, 16), 0);
	tlb_cr_ring_doorbell(nic, 1);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_host_epoch(nic), epoch);
	tlb_cr_faults(nic, &f);
	assert_true(f.sigbus >= 1);
	assert_int_equal(f.bad_index, 0);
	assert_int_equal(f.fallback_cores, 4);

	logged_warn = logged_info = 0;
	assert_true(tlb_cr_check(nic, log_collect, NULL) >= 2);
	assert_true(logged_warn >= 2);
	assert_non_null(strstr(logged_last, name));
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.size_changes, 1);
	assert_int_equal(f.repairs, 1);
	assert_int_equal(object_size(name), (off_t)len);
	assert_int_equal(tlb_cr_host_epoch(nic), epoch);
	/* The old host's mapping is valid again; after the consumer's
	 * resync its records come through (not restored: still fallback). */
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 4, 16, sum), 0);
	assert_int_equal(tlb_cr_post(host, 2, &in, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 4, 16, sum), 1);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);
	assert_true(tlb_cr_fallback(nic, 0));

	/* A good header again: a host can attach, and that restores. */
	assert_int_equal(tlb_cr_attach(name, &host2, err, sizeof(err)), 0);
	assert_int_not_equal(tlb_cr_host_epoch(nic), epoch);
	logged_info = 0;
	assert_int_equal(tlb_cr_check(nic, log_collect, NULL), 1);
	assert_int_equal(logged_info, 1);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.restores, 4);
	assert_int_equal(f.fallback_cores, 0);
	tlb_cr_set_state(host2, 1, TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_post(host2, 1, &in, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 4, 16, sum), 1);

	tlb_cr_detach(host2);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* A region grown, or its header rewritten: found by the check, counted,
 * repaired; every core falls back until a host attaches again. */
static void
test_resize_and_header(void **state)
{
	struct tlb_credit in = rec_for(3);
	struct tlb_credit_sum sum[2];
	uint32_t cores[2] = {0, 1};
	struct tlb_cr_faults f;
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len, rlen;
	uint32_t magic;

	(void)state;
	skip_under_valgrind();
	nic = nic_create(2, 16);
	len = tlb_cr_region_size(2, 16);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 0);

	object_truncate(name, (off_t)len + 4096);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 2);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.size_changes, 1);
	assert_int_equal(f.sigbus, 0);
	assert_int_equal(f.fallback_cores, 2);
	assert_int_equal(object_size(name), (off_t)len);
	/* The consumer sets the positions back to its own (a resized
	 * region's contents are not trusted). */
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 2, 16, sum), 0);

	tlb_cr_detach(host);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 1);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.fallback_cores, 0);

	raw = raw_map(name, &rlen);
	memcpy(&magic, raw, sizeof(magic));
	*(uint32_t *)raw = 0xdeadbeefu;
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 2);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.bad_header, 1);
	assert_int_equal(f.fallback_cores, 2);
	assert_memory_equal(raw, &magic, sizeof(magic));
	/* The positions were not lost: records still drain. */
	assert_int_equal(tlb_cr_post(host, 1, &in, 1), 1);
	assert_int_equal(tlb_cr_drain_sums(nic, cores, 2, 16, sum), 1);
	/* Impossible dimensions, the closed flag: rewrites too. */
	((struct tlb_cr_header *)raw)->ring_size = 1u << 20;
	assert_true(tlb_cr_check(nic, NULL, NULL) >= 1);
	((struct tlb_cr_header *)raw)->flags = TLB_CR_F_CLOSED;
	assert_true(tlb_cr_check(nic, NULL, NULL) >= 1);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.bad_header, 3);
	assert_int_equal(tlb_cr_validate(raw, rlen, NULL, 0), 0);

	tlb_cr_detach(host);
	host = attach_ok(name);
	assert_int_equal(tlb_cr_check(nic, NULL, NULL), 1);
	tlb_cr_faults(nic, &f);
	assert_int_equal(f.fallback_cores, 0);
	munmap(raw, rlen);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* The guard takes only its own faults: a SIGBUS anywhere else still
 * kills the process as it would have. In a child whose SIGBUS is the
 * default again (cmocka has its own handler in the test process). */
static void
test_foreign_sigbus_kills(void **state)
{
	const char *name = cur_name;
	pid_t pid;
	int st;

	(void)state;
	skip_under_valgrind();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char other[80], err[256];
		volatile uint8_t *p;
		struct tlb_cr *nic;
		int fd;

		signal(SIGBUS, SIG_DFL);
		/* A guard that took this fault would run it again forever. */
		alarm(10);
		if (tlb_cr_create(name, 1, 16, 0600, &nic, err, sizeof(err)) !=
		    0)
			_exit(2);
		shm_unlink(name);
		snprintf(other, sizeof(other), "%s-other", name);
		fd = shm_open(other, O_CREAT | O_RDWR, 0600);
		shm_unlink(other);
		if (fd < 0 || ftruncate(fd, 4096) != 0)
			_exit(2);
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED || ftruncate(fd, 0) != 0)
			_exit(2);
		(void)p[0];
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGBUS);
}

#define PC_RING        1024u
#define PC_POST_BATCH  32u
#define PC_DRAIN_BATCH 256u

struct pc_arg {
	struct tlb_cr *cr;
	uint32_t core;
	uint64_t count;
	int stop; /* set by the consumer if it gives up */
};

static void *
pc_producer(void *p)
{
	struct pc_arg *a = p;
	struct tlb_credit batch[PC_POST_BATCH];
	uint64_t seq = 0;

	while (seq < a->count) {
		unsigned int n = PC_POST_BATCH, done = 0;

		if (a->count - seq < n)
			n = (unsigned int)(a->count - seq);
		for (unsigned int i = 0; i < n; i++)
			batch[i] = rec_for(seq + i);
		while (done < n) {
			unsigned int k = tlb_cr_post(a->cr, a->core,
						     batch + done, n - done);

			if (k == 0) {
				if (__atomic_load_n(&a->stop, __ATOMIC_RELAXED))
					return NULL;
				sched_yield();
			}
			done += k;
		}
		seq += n;
	}
	return NULL;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t
env_count(const char *var, uint64_t dflt)
{
	const char *s = getenv(var);

	return s != NULL && *s != '\0' ? strtoull(s, NULL, 0) : dflt;
}

/* One producer thread, one consumer (this thread). Asserts only after the
 * producer is joined, so a failure cannot leave it spinning on the ring. */
static void
run_pc(struct tlb_cr *prod_cr, struct tlb_cr *cons_cr, uint32_t core,
       uint64_t count, const char *what)
{
	static struct tlb_credit out[PC_DRAIN_BATCH];
	struct pc_arg a = {.cr = prod_cr, .core = core, .count = count};
	uint64_t got = 0, completions = 0, work = 0, want_work = 0;
	uint64_t bad_seq = UINT64_MAX;
	pthread_t th;
	double t0, dt;

	for (uint64_t s = 0; s < count; s++)
		want_work += rec_for(s).work_ns;

	t0 = now_s();
	assert_int_equal(pthread_create(&th, NULL, pc_producer, &a), 0);
	while (got < count) {
		unsigned int n =
			tlb_cr_drain(cons_cr, core, out, PC_DRAIN_BATCH);

		if (n == 0) {
			sched_yield();
			continue;
		}
		for (unsigned int i = 0; i < n; i++) {
			struct tlb_credit want = rec_for(got + i);

			completions += out[i].completions;
			work += out[i].work_ns;
			if (bad_seq == UINT64_MAX &&
			    memcmp(&out[i], &want, sizeof(want)) != 0)
				bad_seq = got + i;
		}
		got += n;
		if (bad_seq != UINT64_MAX)
			break;
	}
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELAXED);
	assert_int_equal(pthread_join(th, NULL), 0);
	dt = now_s() - t0;
	print_message("      %s: %llu credits in %.2f s (%.1f M/s)\n", what,
		      (unsigned long long)got, dt, (double)got / dt / 1e6);

	if (bad_seq != UINT64_MAX)
		print_error("record %llu out of order or corrupt\n",
			    (unsigned long long)bad_seq);
	assert_true(bad_seq == UINT64_MAX);
	assert_true(got == count);
	assert_true(completions == count);
	assert_true(work == want_work);
	/* Nothing extra behind the last record. */
	assert_int_equal(tlb_cr_drain(cons_cr, core, out, PC_DRAIN_BATCH), 0);
}

static void
test_threads_two_mappings(void **state)
{
	struct tlb_cr *nic, *host;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(2, PC_RING);
	host = attach_ok(name);
	run_pc(host, nic, 1,
	       env_count("TLB_CR_TEST_CREDITS", 10u * 1000 * 1000),
	       "two mappings");
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* Both ends through one mapping, so that a race detector sees producer
 * and consumer touch the same addresses (it cannot relate two mappings). */
static void
test_threads_one_mapping(void **state)
{
	struct tlb_cr *nic;

	(void)state;
	nic = nic_create(1, 64);
	run_pc(nic, nic, 0,
	       env_count("TLB_CR_TEST_CREDITS_ONE", 2u * 1000 * 1000),
	       "one mapping");
	tlb_cr_destroy(nic, true);
}

static void
test_host_restart(void **state)
{
	struct tlb_credit in[3], out[8];
	uint64_t e1, e2, e3;
	struct tlb_cr *nic, *host;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(2, 16);
	assert_int_equal(tlb_cr_host_epoch(nic), 0);

	host = attach_ok(name);
	e1 = tlb_cr_host_epoch(nic);
	assert_int_not_equal(e1, 0);
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 1, TLB_RUN_PARKED);
	for (unsigned int i = 0; i < 3; i++)
		in[i] = rec_for(i);
	assert_int_equal(tlb_cr_post(host, 0, in, 3), 3);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 1), 1);
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_host_epoch(nic), e1);

	host = attach_ok(name);
	e2 = tlb_cr_host_epoch(nic);
	assert_int_not_equal(e2, 0);
	assert_int_not_equal(e2, e1);
	/* What the first host posted and the NIC had not drained is kept. */
	assert_int_equal(tlb_cr_drain(nic, 0, out, 8), 2);
	assert_memory_equal(out, &in[1], 2 * sizeof(in[0]));
	assert_int_equal(tlb_cr_post(host, 0, in, 1), 1);
	assert_int_equal(tlb_cr_drain(nic, 0, out, 8), 1);
	assert_memory_equal(out, &in[0], sizeof(in[0]));
	tlb_cr_detach(host);

	host = attach_ok(name);
	e3 = tlb_cr_host_epoch(nic);
	assert_int_not_equal(e3, e2);
	assert_int_not_equal(e3, e1);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

/* Attach must fail with a message naming the problem and must leave every
 * byte of the region as it was. */
static void
expect_attach_fails(const char *name, const char *needle)
{
	struct tlb_cr *host = (struct tlb_cr *)&host;
	uint8_t *raw, *copy = NULL;
	char err[256] = "";
	size_t len = 0;

	if (name_exists(name) && shm_len(name) > 0) {
		raw = raw_map(name, &len);
		copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, raw, len);
		munmap(raw, len);
	}
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), -1);
	assert_null(host);
	if (strstr(err, needle) == NULL || strstr(err, name) == NULL)
		print_error("err \"%s\" lacks \"%s\" or the name\n", err,
			    needle);
	assert_non_null(strstr(err, needle));
	assert_non_null(strstr(err, name));
	if (copy != NULL) {
		size_t len2;

		raw = raw_map(name, &len2);
		assert_int_equal(len2, len);
		assert_memory_equal(raw, copy, len);
		munmap(raw, len);
		free(copy);
	}
}

static void
test_attach_bad_regions(void **state)
{
	struct tlb_cr_header *h;
	struct tlb_cr *nic;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len, size;

	(void)state;
	nic = nic_create(2, 32);
	size = tlb_cr_region_size(2, 32);
	raw = raw_map(name, &len);
	h = (struct tlb_cr_header *)raw;

	h->magic = 0xdeadbeef;
	expect_attach_fails(name, "bad magic 0xdeadbeef (expected 0x544c4352)");
	h->magic = TLB_CR_MAGIC;

	h->version = 2;
	expect_attach_fails(name, "version 2");
	h->version = TLB_CR_VERSION;

	h->ring_size = 48;
	expect_attach_fails(name, "ring_size 48");
	h->ring_size = 8;
	expect_attach_fails(name, "ring_size 8");
	h->ring_size = 0;
	expect_attach_fails(name, "ring_size 0");
	h->ring_size = 32;

	h->n_cores = 0;
	expect_attach_fails(name, "n_cores 0");
	h->n_cores = TLB_CR_MAX_CORES + 1;
	expect_attach_fails(name, "n_cores 257");
	h->n_cores = 1; /* consistent but not what the size says */
	expect_attach_fails(name, "size");
	h->n_cores = 2;

	h->size = size + 64;
	expect_attach_fails(name, "size");
	h->size = size;

	/* Nothing above left a trace: a good attach still works. */
	tlb_cr_detach(attach_ok(name));
	munmap(raw, len);

	/* The file itself shorter or longer than the header says. */
	raw_truncate(name, (off_t)size - 32);
	expect_attach_fails(name, "size");
	raw_truncate(name, (off_t)size + 4096);
	expect_attach_fails(name, "size");
	raw_truncate(name, 10);
	expect_attach_fails(name, "10 bytes");
	raw_truncate(name, 0);
	expect_attach_fails(name, "0 bytes");

	/* Give the object its length back so that destroy's store to the
	 * header lands inside it. */
	raw_truncate(name, (off_t)size);
	tlb_cr_destroy(nic, true);
}

static void
test_attach_closed(void **state)
{
	struct tlb_cr *nic;
	const char *name = cur_name;

	(void)state;
	nic = nic_create(1, 16);
	tlb_cr_destroy(nic, false);
	assert_true(name_exists(name));
	expect_attach_fails(name, "closed");
	assert_int_equal(shm_unlink(name), 0);
}

static void
test_attach_nonexistent(void **state)
{
	const char *name = cur_name;

	(void)state;
	expect_attach_fails(name, strerror(ENOENT));
	expect_attach_fails("/tlbtest/sub", "name");
	expect_attach_fails("nolead", "name");
}

static void
expect_create_fails(const char *name, uint32_t n_cores, uint32_t ring_size,
		    mode_t mode, const char *needle)
{
	struct tlb_cr *cr = (struct tlb_cr *)&cr;
	char err[256] = "";

	assert_int_equal(tlb_cr_create(name, n_cores, ring_size, mode, &cr, err,
				       sizeof(err)),
			 -1);
	assert_null(cr);
	if (strstr(err, needle) == NULL)
		print_error("err \"%s\" lacks \"%s\"\n", err, needle);
	assert_non_null(strstr(err, needle));
	if (name != NULL && name[0] == '/' && strchr(name + 1, '/') == NULL)
		assert_false(name_exists(name));
}

static void
test_create_bad_args(void **state)
{
	const char *name = cur_name;
	char longname[TLB_CR_NAME_MAX + 8];
	char err[256] = "";

	(void)state;
	expect_create_fails(name, 0, 16, 0600, "n_cores 0");
	expect_create_fails(name, TLB_CR_MAX_CORES + 1, 16, 0600,
			    "n_cores 257");
	expect_create_fails(name, 1, 0, 0600, "ring_size 0");
	expect_create_fails(name, 1, 8, 0600, "ring_size 8");
	expect_create_fails(name, 1, 15, 0600, "ring_size 15");
	expect_create_fails(name, 1, 17, 0600, "ring_size 17");
	expect_create_fails(name, 1, TLB_CR_MAX_RING * 2, 0600,
			    "ring_size 131072");
	expect_create_fails(name, 1, 16, 04600, "mode");
	expect_create_fails(NULL, 1, 16, 0600, "name");
	expect_create_fails("noslash", 1, 16, 0600, "name");
	expect_create_fails("/a/b", 1, 16, 0600, "name");
	expect_create_fails("/", 1, 16, 0600, "name");
	expect_create_fails("", 1, 16, 0600, "name");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	expect_create_fails(longname, 1, 16, 0600, "too long");
	/* TLB_CR_NAME_MAX characters: still one too many for the NUL. */
	longname[TLB_CR_NAME_MAX] = '\0';
	expect_create_fails(longname, 1, 16, 0600, "too long");
	assert_int_equal(
		tlb_cr_create(name, 1, 16, 0600, NULL, err, sizeof(err)), -1);
	/* A null or empty error buffer is fine. */
	assert_int_equal(tlb_cr_create(name, 0, 16, 0600, NULL, NULL, 0), -1);
}

static mode_t
shm_mode(const char *name)
{
	struct stat st;
	int fd = shm_open(name, O_RDONLY, 0);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	return st.st_mode & 07777;
}

static void
test_file_mode(void **state)
{
	struct tlb_cr *nic;
	mode_t old;
	const char *name = cur_name;

	(void)state;
	old = umask(0);
	nic = nic_create(1, 16);
	assert_int_equal(shm_mode(name), 0600);
	tlb_cr_destroy(nic, true);

	/* A restrictive umask must not narrow an explicit grant either. */
	umask(077);
	assert_int_equal(tlb_cr_create(name, 1, 16, 0640, &nic, NULL, 0), 0);
	assert_int_equal(shm_mode(name), 0640);
	tlb_cr_destroy(nic, true);

	/* Replacing an old region with looser bits gives the new mode. */
	umask(0);
	assert_int_equal(tlb_cr_create(name, 1, 16, 0666, &nic, NULL, 0), 0);
	tlb_cr_destroy(nic, false);
	nic = nic_create(1, 16);
	assert_int_equal(shm_mode(name), 0600);
	tlb_cr_destroy(nic, true);
	umask(old);
}

static void
test_state_heartbeat_doorbell(void **state)
{
	struct tlb_cr *nic, *host;
	uint8_t *raw;
	const char *name = cur_name;
	size_t len;

	(void)state;
	nic = nic_create(3, 16);
	host = attach_ok(name);

	tlb_cr_set_state(host, 2, TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_state(nic, 2), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	tlb_cr_set_state(host, 2, TLB_RUN_PARKED);
	assert_int_equal(tlb_cr_state(nic, 2), TLB_RUN_PARKED);

	assert_int_equal(tlb_cr_heartbeat(nic, 0), 0);
	for (int i = 0; i < 5; i++)
		tlb_cr_beat(host, 0);
	tlb_cr_beat(host, 1);
	assert_int_equal(tlb_cr_heartbeat(nic, 0), 5);
	assert_int_equal(tlb_cr_heartbeat(nic, 1), 1);
	assert_int_equal(tlb_cr_heartbeat(nic, 2), 0);

	assert_int_equal(tlb_cr_doorbell(host, 1), 0);
	tlb_cr_ring_doorbell(nic, 1);
	tlb_cr_ring_doorbell(nic, 1);
	tlb_cr_ring_doorbell(nic, 2);
	assert_int_equal(tlb_cr_doorbell(host, 1), 2);
	assert_int_equal(tlb_cr_doorbell(host, 2), 1);
	assert_int_equal(tlb_cr_doorbell(host, 0), 0);

	/* A state word the host should never write reads as not live. */
	raw = raw_map(name, &len);
	*(uint32_t *)(raw + HDR_BYTES + 2 * (CTL_BYTES + 16 * REC_BYTES) +
		      128) = 77;
	assert_int_equal(tlb_cr_state(nic, 2), TLB_RUN_OFFLINE);
	munmap(raw, len);

	/* The host learns of the NIC side going away. */
	assert_false(tlb_cr_closed(host));
	tlb_cr_destroy(nic, true);
	assert_true(tlb_cr_closed(host));
	tlb_cr_detach(host);
}

/* destroy(unlink) must not remove a region a newer daemon created under
 * the same name. */
static void
test_destroy_keeps_newer_region(void **state)
{
	struct tlb_cr *old_nic, *new_nic, *host;
	const char *name = cur_name;

	(void)state;
	old_nic = nic_create(1, 16);
	new_nic = nic_create(1, 16);
	tlb_cr_destroy(old_nic, true);
	assert_true(name_exists(name));
	host = attach_ok(name);
	assert_false(tlb_cr_closed(host));
	tlb_cr_detach(host);
	tlb_cr_destroy(new_nic, true);
	assert_false(name_exists(name));
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void
test_validate_garbage(void **state)
{
	size_t good_len = tlb_cr_region_size(2, 16);
	uint8_t *buf = malloc(good_len + 64);
	struct tlb_cr_header h;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	char err[256];

	(void)state;
	assert_non_null(buf);
	assert_int_equal(tlb_cr_validate(NULL, 0, err, sizeof(err)), -1);
	assert_int_equal(tlb_cr_validate(NULL, 4096, err, sizeof(err)), -1);
	assert_int_equal(tlb_cr_validate(buf, 0, NULL, 0), -1);

	/* Pure noise of every length up to past a small region. */
	for (unsigned int iter = 0; iter < 20000; iter++) {
		size_t len = xorshift(&s) % (good_len + 64);

		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)xorshift(&s);
		assert_int_equal(tlb_cr_validate(buf, len, err, sizeof(err)),
				 -1);
		assert_true(strlen(err) > 0);
	}

	/* A valid region is accepted, also at an unaligned address. */
	memset(&h, 0, sizeof(h));
	h.magic = TLB_CR_MAGIC;
	h.version = TLB_CR_VERSION;
	h.size = good_len;
	h.n_cores = 2;
	h.ring_size = 16;
	memset(buf, 0, good_len + 64);
	memcpy(buf, &h, sizeof(h));
	assert_int_equal(tlb_cr_validate(buf, good_len, err, sizeof(err)), 0);
	memmove(buf + 1, buf, good_len);
	assert_int_equal(tlb_cr_validate(buf + 1, good_len, err, sizeof(err)),
			 0);
	memcpy(buf, &h, sizeof(h));

	/* Near misses: a valid header with random words overwritten; when
	 * one is accepted it must truly describe the buffer. */
	for (unsigned int iter = 0; iter < 200000; iter++) {
		struct tlb_cr_header m = h, chk;
		size_t len = good_len;
		uint64_t r = xorshift(&s);
		int rc;

		switch (r % 8) {
		case 0:
			m.n_cores = (uint32_t)xorshift(&s);
			break;
		case 1:
			m.ring_size = (uint32_t)xorshift(&s);
			break;
		case 2:
			m.size = xorshift(&s);
			break;
		case 3:
			m.ring_size = 1u << (xorshift(&s) % 32);
			break;
		case 4:
			m.n_cores = (uint32_t)(xorshift(&s) % 300);
			break;
		case 5:
			len = xorshift(&s) % (good_len + 64);
			break;
		case 6:
			m.flags = (uint32_t)xorshift(&s);
			break;
		default:
			m.size = xorshift(&s) % (good_len + 64);
			break;
		}
		memcpy(buf, &m, sizeof(m));
		rc = tlb_cr_validate(buf, len, err, sizeof(err));
		memcpy(&chk, buf, sizeof(chk));
		/* validate never writes */
		assert_memory_equal(&chk, &m, sizeof(m));
		if (rc == 0) {
			assert_true(len >= sizeof(m));
			assert_true(m.size == len);
			assert_true(tlb_cr_region_size(m.n_cores,
						       m.ring_size) == len);
			assert_false(m.flags & TLB_CR_F_CLOSED);
		}
	}
	free(buf);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup_name, unlink_name)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		TEST(test_region_size),
		TEST(test_create_attach_round_trip),
		TEST(test_full_ring_and_drain_bound),
		TEST(test_wrap_around),
		TEST(test_counter_wrap),
		TEST(test_corrupt_positions),
		TEST(test_consumer_position_private),
		TEST(test_bad_record),
		TEST(test_truncate_caught),
		TEST(test_resize_and_header),
		TEST(test_foreign_sigbus_kills),
		TEST(test_threads_two_mappings),
		TEST(test_threads_one_mapping),
		TEST(test_host_restart),
		TEST(test_attach_bad_regions),
		TEST(test_attach_closed),
		TEST(test_attach_nonexistent),
		TEST(test_create_bad_args),
		TEST(test_file_mode),
		TEST(test_state_heartbeat_doorbell),
		TEST(test_destroy_keeps_newer_region),
		TEST(test_validate_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
