/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: tlb_cr_validate() on arbitrary bytes. A host process
 * validates whatever region it finds under the ring's name, which another
 * (possibly buggy, possibly hostile) process may have written, before it
 * indexes into it. Checked, with a violation aborting:
 *
 * - no crash, no read outside buf[0..len), at any alignment;
 * - the result is 0 or -1, and -1 comes with a NUL-terminated message
 *   that fits errlen, whatever errlen (0 and NULL included);
 * - the result does not depend on err/errlen;
 * - an accepted region's dimensions are in range and every slot it
 *   implies, records included, lies inside the buffer.
 *
 * Then the NIC side's view of a live region the input is written into
 * (a ring this process created, through a second mapping, as a hostile
 * host would): whatever the positions, records and header say,
 *
 * - a drain returns at most what was asked, and only records a host can
 *   have written (work_ns <= completions x UINT32_MAX);
 * - after tlb_cr_check the header is the one the NIC side wrote (the
 *   region validates again), and the fault counters never go back.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "turbolb/credit_ring.h"

#include "fuzz_check.h"

#define HDR_BYTES      64u
#define SLOT_CTL_BYTES 192u
#define REC_BYTES      32u
#define MIN_RING       16u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs validate with an errlen-byte message buffer followed by canaries,
 * and checks the message stays inside it. */
static int
validate_into(const void *buf, size_t len, size_t errlen)
{
	char err[256 + 8];
	size_t i;
	int r;

	memset(err, 0x5a, sizeof(err));
	r = tlb_cr_validate(buf, len, err, errlen);
	CHECK(r == 0 || r == -1);
	for (i = errlen; i < sizeof(err); i++)
		CHECK(err[i] == 0x5a);
	if (r != 0 && errlen > 0) {
		CHECK(memchr(err, '\0', errlen) != NULL);
		/* A message too long for the buffer is cut short, but a
		 * buffer with room gets a real one. */
		if (errlen > 1)
			CHECK(err[0] != '\0');
	}
	return r;
}

static void
touch(const uint8_t *p)
{
	volatile uint8_t v = *p;

	(void)v;
}

static void
check_accepted(const uint8_t *buf, size_t len)
{
	struct tlb_cr_header h;
	size_t stride, want, i, end;

	/* The ring reads the header through a copy as well: the input may
	 * be unaligned. */
	memcpy(&h, buf, sizeof(h));
	CHECK(h.magic == TLB_CR_MAGIC && h.version == TLB_CR_VERSION);
	CHECK(h.n_cores >= 1 && h.n_cores <= TLB_CR_MAX_CORES);
	CHECK(h.ring_size >= MIN_RING && h.ring_size <= TLB_CR_MAX_RING);
	CHECK((h.ring_size & (h.ring_size - 1)) == 0);
	CHECK((h.flags & TLB_CR_F_CLOSED) == 0);

	/* The layout in credit_ring.h, computed here on its own rather
	 * than with the library's helper. */
	stride = SLOT_CTL_BYTES + (size_t)h.ring_size * REC_BYTES;
	want = HDR_BYTES + (size_t)h.n_cores * stride;
	CHECK(tlb_cr_region_size(h.n_cores, h.ring_size) == want);
	CHECK(h.size == (uint64_t)len && want == len);
	for (i = 0; i < h.n_cores; i++) {
		end = HDR_BYTES + (i + 1) * stride;
		CHECK(end <= len);
	}
	/* Touch the first and last byte of what the region implies, so
	 * ASan would see a size check that let a short buffer through. */
	touch(buf);
	touch(buf + want - 1);
}

#define LIVE_CORES 2u
#define LIVE_RING  16u

/* The live ring, created once: the NIC handle and a raw mapping. */
static struct tlb_cr *live;
static uint8_t *live_raw;
static size_t live_len;

static void
live_open(void)
{
	char name[64], err[256];
	int fd;

	snprintf(name, sizeof(name), "/tlb-fuzz-cr-%d", (int)getpid());
	if (tlb_cr_create(name, LIVE_CORES, LIVE_RING, 0600, &live, err,
			  sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_credit_ring: %s\n", err);
		abort();
	}
	live_len = tlb_cr_region_size(LIVE_CORES, LIVE_RING);
	fd = shm_open(name, O_RDWR, 0);
	CHECK(fd >= 0);
	live_raw =
		mmap(NULL, live_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(live_raw != MAP_FAILED);
	close(fd);
	/* Gone from /dev/shm at once; both mappings stay. */
	shm_unlink(name);
}

static void
live_fuzz(const uint8_t *data, size_t size)
{
	struct tlb_cr_faults f0, f1;
	struct tlb_credit out[LIVE_RING];
	struct tlb_credit_sum sum[LIVE_CORES];
	const uint32_t cores[LIVE_CORES] = {0, 1};
	size_t off, n;

	if (live == NULL)
		live_open();
	if (size == 0)
		return;
	/* The first byte: write the header too, or only the slots. */
	off = (data[0] & 1) ? 0 : HDR_BYTES;
	n = size - 1 < live_len - off ? size - 1 : live_len - off;
	memcpy(live_raw + off, data + 1, n);
	tlb_cr_faults(live, &f0);
	for (unsigned int round = 0; round < 2; round++) {
		uint32_t k = tlb_cr_drain_sums(live, cores, LIVE_CORES,
					       1 + data[0] % LIVE_RING, sum);

		CHECK(k <= LIVE_CORES);
		for (uint32_t j = 0; j < k; j++) {
			CHECK(sum[j].idx < LIVE_CORES);
			CHECK(sum[j].records >= 1 &&
			      sum[j].records <= 1u + data[0] % LIVE_RING);
		}
		for (uint32_t c = 0; c < LIVE_CORES; c++) {
			unsigned int got =
				tlb_cr_drain(live, c, out, LIVE_RING);

			CHECK(got <= LIVE_RING);
			for (unsigned int j = 0; j < got; j++)
				CHECK(out[j].work_ns <=
				      (uint64_t)out[j].completions *
					      UINT32_MAX);
		}
		(void)tlb_cr_state(live, round);
		(void)tlb_cr_host_epoch(live);
	}
	(void)tlb_cr_check(live, NULL, NULL);
	CHECK(tlb_cr_validate(live_raw, live_len, NULL, 0) == 0);
	tlb_cr_faults(live, &f1);
	CHECK(f1.bad_index >= f0.bad_index && f1.bad_record >= f0.bad_record &&
	      f1.bad_header >= f0.bad_header && f1.repairs >= f0.repairs &&
	      f1.restores >= f0.restores);
	CHECK(f1.fallback_cores <= LIVE_CORES);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *shifted;
	int r, r2;

	r = validate_into(data, size, 256);
	CHECK(validate_into(data, size, 0) == r);
	CHECK(validate_into(data, size, 1) == r);
	CHECK(validate_into(data, size, 7) == r);
	CHECK(tlb_cr_validate(data, size, NULL, 0) == r);
	CHECK(tlb_cr_validate(data, size, NULL, 64) == r);
	CHECK(tlb_cr_validate(NULL, size, NULL, 0) == -1);

	/* Same bytes at an odd address: shared memory is page aligned, but
	 * the validator promises any alignment (UBSan checks the loads). */
	shifted = malloc(size + 1);
	if (shifted == NULL)
		abort();
	memcpy(shifted + 1, data, size);
	r2 = tlb_cr_validate(shifted + 1, size, NULL, 0);
	CHECK(r2 == r);
	if (r == 0)
		check_accepted(shifted + 1, size);
	free(shifted);

	if (r == 0)
		check_accepted(data, size);
	live_fuzz(data, size);
	return 0;
}
