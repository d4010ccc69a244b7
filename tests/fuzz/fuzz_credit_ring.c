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
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/credit_ring.h"

#define HDR_BYTES 64u
#define SLOT_CTL_BYTES 192u
#define REC_BYTES 32u
#define MIN_RING 16u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) \
	do { \
		if (!(cond)) \
			check_failed(__LINE__, #cond); \
	} while (0)

static void check_failed(int line, const char *what)
	__attribute__((noreturn));

static void
check_failed(int line, const char *what)
{
	fprintf(stderr, "fuzz_credit_ring.c:%d: contract violated: %s\n",
		line, what);
	abort();
}

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
	return 0;
}
