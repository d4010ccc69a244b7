/* SPDX-License-Identifier: BSD-3-Clause
 * The credit ring over POSIX shared memory: region setup and validation,
 * host-side post, NIC-side drain, run state, heartbeat and doorbell, and
 * the kick agent's words (thread, sched flags, kick counters).
 *
 * Ordering: every word shared between the two sides is accessed with the
 * __atomic builtins. A writer publishes with a release store and a reader
 * observes with an acquire load, so nothing here depends on the strong
 * ordering of x86; the same code is correct on aarch64.
 *
 * Trust: the two sides are separate processes and either may be buggy or
 * restart at any point. Dimensions are read from the header once, checked,
 * and cached in the handle, so a peer rewriting the header later cannot
 * make us index outside our mapping; ring positions read from the peer are
 * checked before they are used.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bsd/string.h>

#include "turbolb/credit_ring.h"

#define CR_LINE 64u
#define CR_CTL_BYTES (3u * CR_LINE)
#define CR_MIN_RING 16u
#define CR_MODE_BITS 0777u
#define CR_KICK_WORDS 4u

/* The control lines at the start of every slot. prod_head and cons_tail
 * have a line each, so that the producer's and the consumer's stores never
 * bounce the other's line; the records follow at CR_CTL_BYTES. */
struct cr_slot_ctl {
	uint32_t prod_head;	/* host core: next record it will write */
	uint8_t pad0[CR_LINE - sizeof(uint32_t)];
	uint32_t cons_tail;	/* NIC side: next record it will read */
	uint8_t pad1[CR_LINE - sizeof(uint32_t)];
	uint32_t state;		/* enum tlb_core_run_state, host writes */
	uint32_t sched;		/* TLB_CR_SCHED_*, kick agent writes */
	uint64_t heartbeat;	/* host writes */
	uint64_t doorbell;	/* NIC side writes */
	uint64_t thread;	/* pid << 32 | tid, host writes */
	uint64_t kick[CR_KICK_WORDS]; /* tlb_cr_kick_stats, agent writes */
};

static_assert(sizeof(struct tlb_cr_header) == CR_LINE,
	      "credit ring header must be exactly one cache line");
static_assert(sizeof(struct tlb_credit) == 32,
	      "credit record must be 32 bytes");
static_assert(sizeof(struct cr_slot_ctl) == CR_CTL_BYTES,
	      "slot control block must be three cache lines");
static_assert(offsetof(struct cr_slot_ctl, cons_tail) == CR_LINE,
	      "cons_tail must start the second line");
static_assert(offsetof(struct cr_slot_ctl, state) == 2 * CR_LINE,
	      "state must start the third line");
static_assert(offsetof(struct cr_slot_ctl, thread) == 2 * CR_LINE + 24,
	      "thread must be at +24 of the third line (credit_ring.h)");
static_assert(offsetof(struct cr_slot_ctl, kick) == 2 * CR_LINE + 32,
	      "kick stats must be at +32 of the third line (credit_ring.h)");
static_assert(sizeof(struct tlb_cr_kick_stats) ==
		      CR_KICK_WORDS * sizeof(uint64_t),
	      "kick stats must be nothing but the slot's kick words");
static_assert(offsetof(struct tlb_cr_header, host_epoch) % 8 == 0,
	      "host_epoch must be naturally aligned for 64-bit atomics");
static_assert((CR_MIN_RING * sizeof(struct tlb_credit)) % CR_LINE == 0,
	      "slot stride must keep every slot cache-line aligned");

enum cr_side {
	CR_SIDE_NIC,
	CR_SIDE_HOST,
	CR_SIDE_AGENT,	/* the kick agent: neither producer nor consumer */
};

struct tlb_cr {
	uint8_t *base;
	size_t len;
	enum cr_side side;
	uint32_t n_cores;
	uint32_t ring_size;
	uint32_t mask;
	size_t stride;
	/* Identity of the object we created, so that destroy does not
	 * unlink a newer region a restarted daemon put under the name. */
	dev_t dev;
	ino_t ino;
	char name[TLB_CR_NAME_MAX];
};

static void
cr_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
cr_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static bool
cr_ring_size_ok(uint32_t ring_size)
{
	return ring_size >= CR_MIN_RING && ring_size <= TLB_CR_MAX_RING &&
	       (ring_size & (ring_size - 1)) == 0;
}

static bool
cr_n_cores_ok(uint32_t n_cores)
{
	return n_cores >= 1 && n_cores <= TLB_CR_MAX_CORES;
}

static size_t
cr_stride(uint32_t ring_size)
{
	return CR_CTL_BYTES + (size_t)ring_size * sizeof(struct tlb_credit);
}

size_t
tlb_cr_region_size(uint32_t n_cores, uint32_t ring_size)
{
	/* Bounded dimensions keep the product far below 2^32 (about 512 MiB
	 * at the limits), so nothing here can overflow, even for a 32-bit
	 * size_t; anything outside the bounds has no size. */
	if (!cr_n_cores_ok(n_cores) || !cr_ring_size_ok(ring_size))
		return 0;
	return sizeof(struct tlb_cr_header) +
	       (size_t)n_cores * cr_stride(ring_size);
}

static int
cr_check_name(const char *name, char *err, size_t errlen)
{
	size_t n;

	if (name == NULL) {
		cr_err(err, errlen, "credit ring: no name given");
		return -1;
	}
	n = strnlen(name, TLB_CR_NAME_MAX);
	if (n >= TLB_CR_NAME_MAX) {
		cr_err(err, errlen,
		       "credit ring: name is too long (at most %d characters)",
		       TLB_CR_NAME_MAX - 1);
		return -1;
	}
	if (n < 2 || name[0] != '/' || strchr(name + 1, '/') != NULL) {
		cr_err(err, errlen,
		       "credit ring %s: name must be '/' followed by at least one character and no other '/'",
		       name);
		return -1;
	}
	return 0;
}

/* Checks a header and its length; `label` starts every message. Reads the
 * header through a copy: buf may be unaligned (fuzzer input) and the bytes
 * may change under us (shared memory), so each field is read once and the
 * caller gets the copy that passed. */
static int
cr_check(const void *buf, size_t len, const char *label, char *err,
	 size_t errlen, struct tlb_cr_header *out)
{
	struct tlb_cr_header h;
	size_t want;

	if (buf == NULL || len < sizeof(h)) {
		cr_err(err, errlen,
		       "%s: region is %zu bytes, smaller than its %zu byte header",
		       label, buf == NULL ? (size_t)0 : len, sizeof(h));
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != TLB_CR_MAGIC) {
		cr_err(err, errlen,
		       "%s: bad magic 0x%08" PRIx32 " (expected 0x%08" PRIx32 ")",
		       label, h.magic, (uint32_t)TLB_CR_MAGIC);
		return -1;
	}
	if (h.version != TLB_CR_VERSION) {
		cr_err(err, errlen,
		       "%s: unsupported version %" PRIu32 " (expected %" PRIu32 ")",
		       label, h.version, (uint32_t)TLB_CR_VERSION);
		return -1;
	}
	if (!cr_n_cores_ok(h.n_cores)) {
		cr_err(err, errlen,
		       "%s: n_cores %" PRIu32 " out of range 1..%u",
		       label, h.n_cores, TLB_CR_MAX_CORES);
		return -1;
	}
	if (!cr_ring_size_ok(h.ring_size)) {
		cr_err(err, errlen,
		       "%s: ring_size %" PRIu32 " must be a power of two in %u..%u",
		       label, h.ring_size, CR_MIN_RING, TLB_CR_MAX_RING);
		return -1;
	}
	want = tlb_cr_region_size(h.n_cores, h.ring_size);
	if (h.size != (uint64_t)want) {
		cr_err(err, errlen,
		       "%s: header size %" PRIu64 " does not match %" PRIu32 " cores x %" PRIu32 " records (%zu bytes)",
		       label, h.size, h.n_cores, h.ring_size, want);
		return -1;
	}
	if (h.size != (uint64_t)len) {
		cr_err(err, errlen,
		       "%s: header size %" PRIu64 " does not match the region's %zu bytes",
		       label, h.size, len);
		return -1;
	}
	if (h.flags & TLB_CR_F_CLOSED) {
		cr_err(err, errlen,
		       "%s: region was closed by the NIC side (pid %" PRIu32 ")",
		       label, h.nic_pid);
		return -1;
	}
	if (out != NULL)
		*out = h;
	return 0;
}

int
tlb_cr_validate(const void *buf, size_t len, char *err, size_t errlen)
{
	return cr_check(buf, len, "credit ring", err, errlen, NULL);
}

static struct tlb_cr_header *
cr_hdr(const struct tlb_cr *cr)
{
	return (struct tlb_cr_header *)cr->base;
}

/* For loops over 0..n_cores-1 that need no bounds check. */
static struct cr_slot_ctl *
cr_slot_at(const struct tlb_cr *cr, uint32_t core)
{
	return (struct cr_slot_ctl *)(cr->base + sizeof(struct tlb_cr_header) +
				      (size_t)core * cr->stride);
}

/* NULL for a core outside the region: callers treat that as a no-op, so a
 * bad index from a caller never reaches memory outside the mapping. */
static struct cr_slot_ctl *
cr_slot(const struct tlb_cr *cr, uint32_t core)
{
	if (cr == NULL || core >= cr->n_cores)
		return NULL;
	return cr_slot_at(cr, core);
}

static struct tlb_credit *
cr_recs(struct cr_slot_ctl *ctl)
{
	return (struct tlb_credit *)((uint8_t *)ctl + CR_CTL_BYTES);
}

static void
cr_cache_dims(struct tlb_cr *cr, uint32_t n_cores, uint32_t ring_size)
{
	cr->n_cores = n_cores;
	cr->ring_size = ring_size;
	cr->mask = ring_size - 1;
	cr->stride = cr_stride(ring_size);
}

static uint64_t
cr_fresh_epoch(void)
{
	static uint64_t seq;
	struct timespec ts;
	uint64_t e;

	clock_gettime(CLOCK_REALTIME, &ts);
	e = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	e ^= (uint64_t)getpid() << 32;
	/* Two creates within one clock tick must still differ. */
	e += __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
	return e != 0 ? e : 1;
}

int
tlb_cr_create(const char *name, uint32_t n_cores, uint32_t ring_size,
	      mode_t mode, struct tlb_cr **out, char *err, size_t errlen)
{
	return tlb_cr_create_group(name, n_cores, ring_size, mode, (gid_t)-1,
				   out, err, errlen);
}

int
tlb_cr_create_group(const char *name, uint32_t n_cores, uint32_t ring_size,
		    mode_t mode, gid_t gid, struct tlb_cr **out, char *err,
		    size_t errlen)
{
	struct tlb_cr_header *h;
	struct tlb_cr *cr;
	struct stat st;
	size_t size;
	void *base;
	int fd;

	if (out == NULL) {
		cr_err(err, errlen, "credit ring: no handle pointer given");
		return -1;
	}
	*out = NULL;
	if (cr_check_name(name, err, errlen) < 0)
		return -1;
	if (!cr_n_cores_ok(n_cores)) {
		cr_err(err, errlen,
		       "credit ring %s: n_cores %" PRIu32 " out of range 1..%u",
		       name, n_cores, TLB_CR_MAX_CORES);
		return -1;
	}
	if (!cr_ring_size_ok(ring_size)) {
		cr_err(err, errlen,
		       "credit ring %s: ring_size %" PRIu32 " must be a power of two in %u..%u",
		       name, ring_size, CR_MIN_RING, TLB_CR_MAX_RING);
		return -1;
	}
	if ((mode & ~(mode_t)CR_MODE_BITS) != 0) {
		cr_err(err, errlen,
		       "credit ring %s: mode 0%o has bits beyond 0777",
		       name, (unsigned int)mode);
		return -1;
	}
	size = tlb_cr_region_size(n_cores, ring_size);

	cr = calloc(1, sizeof(*cr));
	if (cr == NULL) {
		cr_err(err, errlen, "credit ring %s: out of memory", name);
		return -1;
	}

	/* A region left by a daemon that died keeps its old header (and old
	 * host); start from a new object rather than reuse its bytes. */
	if (shm_unlink(name) < 0 && errno != ENOENT) {
		cr_err(err, errlen,
		       "credit ring %s: cannot remove old region: %s",
		       name, strerror(errno));
		goto fail_free;
	}
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, mode);
	if (fd < 0) {
		cr_err(err, errlen, "credit ring %s: shm_open: %s", name,
		       strerror(errno));
		goto fail_free;
	}
	/* shm_open applies the umask; the caller's mode is the contract. */
	if (fchmod(fd, mode) < 0) {
		cr_err(err, errlen, "credit ring %s: fchmod 0%o: %s", name,
		       (unsigned int)mode, strerror(errno));
		goto fail_close;
	}
	/* Before the size is set: no host can attach to it yet. */
	if (gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid) < 0) {
		cr_err(err, errlen, "credit ring %s: fchown to group %u: %s",
		       name, (unsigned int)gid, strerror(errno));
		goto fail_close;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		cr_err(err, errlen, "credit ring %s: ftruncate %zu: %s", name,
		       size, strerror(errno));
		goto fail_close;
	}
	if (fstat(fd, &st) < 0) {
		cr_err(err, errlen, "credit ring %s: fstat: %s", name,
		       strerror(errno));
		goto fail_close;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		cr_err(err, errlen, "credit ring %s: mmap %zu bytes: %s", name,
		       size, strerror(errno));
		goto fail_close;
	}
	close(fd);

	cr->base = base;
	cr->len = size;
	cr->side = CR_SIDE_NIC;
	cr->dev = st.st_dev;
	cr->ino = st.st_ino;
	strlcpy(cr->name, name, sizeof(cr->name));
	cr_cache_dims(cr, n_cores, ring_size);

	/* ftruncate zero-filled the object: positions, heartbeats and
	 * doorbells start at 0. States are written anyway so that OFFLINE
	 * stays right if its value ever changes. */
	for (uint32_t i = 0; i < n_cores; i++)
		__atomic_store_n(&cr_slot_at(cr, i)->state, TLB_RUN_OFFLINE,
				 __ATOMIC_RELAXED);
	h = cr_hdr(cr);
	h->version = TLB_CR_VERSION;
	h->size = size;
	h->n_cores = n_cores;
	h->ring_size = ring_size;
	h->nic_epoch = cr_fresh_epoch();
	h->host_epoch = 0;
	h->nic_pid = (uint32_t)getpid();
	h->flags = 0;
	/* The name is visible from shm_open on; a host that attaches before
	 * this store sees a bad magic and retries, one after it sees the
	 * whole header. */
	__atomic_store_n(&h->magic, TLB_CR_MAGIC, __ATOMIC_RELEASE);

	*out = cr;
	return 0;

fail_close:
	close(fd);
	shm_unlink(name);
fail_free:
	free(cr);
	return -1;
}

/* Maps and validates the region under name for side; shared by the host
 * and the kick agent, which differ only in what they do next. */
static int
cr_map(const char *name, enum cr_side side, struct tlb_cr **out, char *err,
       size_t errlen)
{
	char label[TLB_CR_NAME_MAX + 16];
	struct tlb_cr_header hv;
	struct tlb_cr_header *h;
	struct tlb_cr *cr;
	struct stat st;
	size_t max_len;
	size_t len;
	void *base;
	int fd;

	if (out == NULL) {
		cr_err(err, errlen, "credit ring: no handle pointer given");
		return -1;
	}
	*out = NULL;
	if (cr_check_name(name, err, errlen) < 0)
		return -1;
	snprintf(label, sizeof(label), "credit ring %s", name);

	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0) {
		cr_err(err, errlen, "%s: shm_open: %s", label, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		cr_err(err, errlen, "%s: fstat: %s", label, strerror(errno));
		goto fail_close;
	}
	/* Sizes that no valid region has are refused before mapping: an
	 * empty object cannot be mapped, and a huge one need not be. */
	max_len = tlb_cr_region_size(TLB_CR_MAX_CORES, TLB_CR_MAX_RING);
	if (st.st_size < (off_t)sizeof(struct tlb_cr_header) ||
	    (uintmax_t)st.st_size > (uintmax_t)max_len) {
		cr_err(err, errlen,
		       "%s: region is %jd bytes, not within %zu..%zu",
		       label, (intmax_t)st.st_size,
		       tlb_cr_region_size(1, CR_MIN_RING), max_len);
		goto fail_close;
	}
	len = (size_t)st.st_size;
	/* Read-only until validated: nothing can write a region we reject. */
	base = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		cr_err(err, errlen, "%s: mmap %zu bytes: %s", label, len,
		       strerror(errno));
		goto fail_close;
	}
	close(fd);

	h = base;
	/* Pairs with the release store of the magic in create: once we see
	 * it, the rest of the header is complete. */
	(void)__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE);
	if (cr_check(base, len, label, err, errlen, &hv) < 0)
		goto fail_unmap;
	if (mprotect(base, len, PROT_READ | PROT_WRITE) < 0) {
		cr_err(err, errlen, "%s: mprotect: %s", label, strerror(errno));
		goto fail_unmap;
	}

	cr = calloc(1, sizeof(*cr));
	if (cr == NULL) {
		cr_err(err, errlen, "%s: out of memory", label);
		goto fail_unmap;
	}
	cr->base = base;
	cr->len = len;
	cr->side = side;
	cr->dev = st.st_dev;
	cr->ino = st.st_ino;
	strlcpy(cr->name, name, sizeof(cr->name));
	/* The checked copy, not the live header: reading it again would let
	 * a concurrent writer slip in unchecked dimensions. */
	cr_cache_dims(cr, hv.n_cores, hv.ring_size);
	*out = cr;
	return 0;

fail_unmap:
	munmap(base, len);
	return -1;
fail_close:
	close(fd);
	return -1;
}

int
tlb_cr_attach(const char *name, struct tlb_cr **out, char *err,
	      size_t errlen)
{
	struct tlb_cr_header *h;
	struct tlb_cr *cr;

	if (cr_map(name, CR_SIDE_HOST, out, err, errlen) < 0)
		return -1;
	cr = *out;
	h = cr_hdr(cr);

	/* Records an earlier host posted but the NIC side has not drained
	 * are real completions, so they are kept: the new host continues
	 * from the current prod_head. Only a position the consumer could not
	 * trust (more than a ring ahead, or behind cons_tail) is repaired,
	 * by discarding that slot's contents. */
	for (uint32_t i = 0; i < cr->n_cores; i++) {
		struct cr_slot_ctl *ctl = cr_slot_at(cr, i);
		uint32_t cons = __atomic_load_n(&ctl->cons_tail,
						__ATOMIC_ACQUIRE);
		uint32_t prod = __atomic_load_n(&ctl->prod_head,
						__ATOMIC_ACQUIRE);

		if (prod - cons > cr->ring_size)
			__atomic_store_n(&ctl->prod_head, cons,
					 __ATOMIC_RELEASE);
	}
	/* Last, and release: a NIC side that sees the new epoch also sees
	 * the repaired positions. 0 means "no host", so skip it on wrap. */
	if (__atomic_add_fetch(&h->host_epoch, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_add_fetch(&h->host_epoch, 1, __ATOMIC_ACQ_REL);
	return 0;
}

int
tlb_cr_attach_agent(const char *name, struct tlb_cr **out, char *err,
		    size_t errlen)
{
	/* Nothing to repair and no epoch to bump: the agent is not a host,
	 * and an epoch change would make the NIC side reset its view of
	 * the real one. */
	return cr_map(name, CR_SIDE_AGENT, out, err, errlen);
}

/* post and drain do not look at the handle's side: the ring's contract is
 * one producer thread and one consumer thread per core, whatever mappings
 * they use, and tests and tools may drive both ends through one handle. */
unsigned int
tlb_cr_drain(struct tlb_cr *cr, uint32_t core, struct tlb_credit *out,
	     unsigned int max)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	struct tlb_credit *recs;
	uint32_t cons, prod, avail, idx, first;

	if (ctl == NULL || out == NULL || max == 0)
		return 0;
	cons = __atomic_load_n(&ctl->cons_tail, __ATOMIC_RELAXED);
	prod = __atomic_load_n(&ctl->prod_head, __ATOMIC_ACQUIRE);
	avail = prod - cons;
	/* A producer more than a ring ahead is broken; reading would hand
	 * out stale records as credits. Leave it until the host reattaches
	 * (attach repairs the position). */
	if (avail == 0 || avail > cr->ring_size)
		return 0;
	if (avail > max)
		avail = max;
	recs = cr_recs(ctl);
	idx = cons & cr->mask;
	first = cr->ring_size - idx;
	if (first > avail)
		first = avail;
	memcpy(out, &recs[idx], (size_t)first * sizeof(*out));
	memcpy(out + first, &recs[0], (size_t)(avail - first) * sizeof(*out));
	/* Release: our reads of the records are done before the producer
	 * can see the space and overwrite them. */
	__atomic_store_n(&ctl->cons_tail, cons + avail, __ATOMIC_RELEASE);
	return avail;
}

uint32_t
tlb_cr_drain_sums(struct tlb_cr *cr, const uint32_t *core, uint32_t n,
		  unsigned int max, struct tlb_credit_sum *out)
{
	struct tlb_credit rec[TLB_CR_SUMS_MAX];
	uint32_t n_out = 0;

	if (cr == NULL || core == NULL || out == NULL || max == 0)
		return 0;
	if (max > TLB_CR_SUMS_MAX)
		max = TLB_CR_SUMS_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct cr_slot_ctl *ctl;
		unsigned int k;

		if (core[i] >= cr->n_cores)
			continue;
		ctl = cr_slot_at(cr, core[i]);
		if (__atomic_load_n(&ctl->prod_head, __ATOMIC_RELAXED) ==
		    __atomic_load_n(&ctl->cons_tail, __ATOMIC_RELAXED))
			continue;
		k = tlb_cr_drain(cr, core[i], rec, max);
		if (k == 0)
			continue;
		struct tlb_credit_sum *s = &out[n_out++];

		s->idx = i;
		s->records = k;
		s->completions = 0;
		s->work_ns = 0;
		for (unsigned int j = 0; j < k; j++) {
			s->completions += rec[j].completions;
			s->work_ns += rec[j].work_ns;
		}
	}
	return n_out;
}

unsigned int
tlb_cr_post(struct tlb_cr *cr, uint32_t core, const struct tlb_credit *recs,
	    unsigned int n)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	struct tlb_credit *ring;
	uint32_t prod, cons, used, room, idx, first;

	if (ctl == NULL || recs == NULL || n == 0)
		return 0;
	prod = __atomic_load_n(&ctl->prod_head, __ATOMIC_RELAXED);
	/* Acquire: the consumer has finished reading what it released. */
	cons = __atomic_load_n(&ctl->cons_tail, __ATOMIC_ACQUIRE);
	used = prod - cons;
	if (used >= cr->ring_size)
		return 0;	/* full, or positions corrupt: write nothing */
	room = cr->ring_size - used;
	if (room > n)
		room = n;
	ring = cr_recs(ctl);
	idx = prod & cr->mask;
	first = cr->ring_size - idx;
	if (first > room)
		first = room;
	memcpy(&ring[idx], recs, (size_t)first * sizeof(*recs));
	memcpy(&ring[0], recs + first, (size_t)(room - first) * sizeof(*recs));
	/* Release: the records are in place before the consumer sees them. */
	__atomic_store_n(&ctl->prod_head, prod + room, __ATOMIC_RELEASE);
	return room;
}

enum tlb_core_run_state
tlb_cr_host_state(const struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	uint32_t st;

	if (ctl == NULL)
		return TLB_RUN_OFFLINE;
	st = __atomic_load_n(&ctl->state, __ATOMIC_ACQUIRE);
	switch (st) {
	case TLB_RUN_RUNNING:
		return TLB_RUN_RUNNING;
	case TLB_RUN_PARKED:
		return TLB_RUN_PARKED;
	default:
		/* A value the host should never write: not a live core. */
		return TLB_RUN_OFFLINE;
	}
}

enum tlb_core_run_state
tlb_cr_state(const struct tlb_cr *cr, uint32_t core)
{
	enum tlb_core_run_state st = tlb_cr_host_state(cr, core);

	/* A busy-polling thread says RUNNING even while the kernel has it
	 * waiting on a run queue; only the kick agent, which watches the
	 * scheduler, can tell. For the NIC side that core is not running:
	 * a request steered there waits, so it is kicked (or avoided). */
	if (st == TLB_RUN_RUNNING &&
	    (tlb_cr_sched(cr, core) & TLB_CR_SCHED_OFF_CPU) != 0)
		return TLB_RUN_PARKED;
	return st;
}

void
tlb_cr_set_state(struct tlb_cr *cr, uint32_t core, enum tlb_core_run_state st)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return;
	__atomic_store_n(&ctl->state, (uint32_t)st, __ATOMIC_RELEASE);
}

uint64_t
tlb_cr_heartbeat(const struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return 0;
	return __atomic_load_n(&ctl->heartbeat, __ATOMIC_ACQUIRE);
}

void
tlb_cr_beat(struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	uint64_t hb;

	if (ctl == NULL)
		return;
	/* Single writer (the core's thread): no read-modify-write needed. */
	hb = __atomic_load_n(&ctl->heartbeat, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->heartbeat, hb + 1, __ATOMIC_RELEASE);
}

void
tlb_cr_ring_doorbell(struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	uint64_t db;

	if (ctl == NULL)
		return;
	/* Single writer (the NIC side's dispatcher). */
	db = __atomic_load_n(&ctl->doorbell, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->doorbell, db + 1, __ATOMIC_RELEASE);
}

uint64_t
tlb_cr_doorbell(const struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return 0;
	return __atomic_load_n(&ctl->doorbell, __ATOMIC_ACQUIRE);
}

void
tlb_cr_set_tid(struct tlb_cr *cr, uint32_t core, uint32_t pid, uint32_t tid)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return;
	/* One word, so that a reader never pairs one thread's tid with
	 * another process's pid. */
	__atomic_store_n(&ctl->thread, (uint64_t)pid << 32 | tid,
			 __ATOMIC_RELEASE);
}

uint32_t
tlb_cr_tid(const struct tlb_cr *cr, uint32_t core, uint32_t *pid)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);
	uint64_t t = 0;

	if (ctl != NULL)
		t = __atomic_load_n(&ctl->thread, __ATOMIC_ACQUIRE);
	if (pid != NULL)
		*pid = (uint32_t)(t >> 32);
	return (uint32_t)t;
}

uint32_t
tlb_cr_records_posted(const struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return 0;
	return __atomic_load_n(&ctl->prod_head, __ATOMIC_ACQUIRE);
}

void
tlb_cr_set_sched(struct tlb_cr *cr, uint32_t core, uint32_t flags)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return;
	__atomic_store_n(&ctl->sched, flags, __ATOMIC_RELEASE);
}

uint32_t
tlb_cr_sched(const struct tlb_cr *cr, uint32_t core)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL)
		return 0;
	return __atomic_load_n(&ctl->sched, __ATOMIC_ACQUIRE);
}

void
tlb_cr_set_kick_stats(struct tlb_cr *cr, uint32_t core,
		      const struct tlb_cr_kick_stats *ks)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (ctl == NULL || ks == NULL)
		return;
	/* Single writer (the agent); each counter is a word of its own, so
	 * a reader may see them a moment apart but never torn. */
	__atomic_store_n(&ctl->kick[0], ks->kicks_served, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->kick[1], ks->boosts, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->kick[2], ks->reverted_drain, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->kick[3], ks->reverted_bound, __ATOMIC_RELAXED);
}

void
tlb_cr_kick_stats(const struct tlb_cr *cr, uint32_t core,
		  struct tlb_cr_kick_stats *out)
{
	struct cr_slot_ctl *ctl = cr_slot(cr, core);

	if (out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	if (ctl == NULL)
		return;
	out->kicks_served = __atomic_load_n(&ctl->kick[0], __ATOMIC_RELAXED);
	out->boosts = __atomic_load_n(&ctl->kick[1], __ATOMIC_RELAXED);
	out->reverted_drain = __atomic_load_n(&ctl->kick[2],
					      __ATOMIC_RELAXED);
	out->reverted_bound = __atomic_load_n(&ctl->kick[3],
					      __ATOMIC_RELAXED);
}

uint64_t
tlb_cr_host_epoch(const struct tlb_cr *cr)
{
	if (cr == NULL)
		return 0;
	return __atomic_load_n(&cr_hdr(cr)->host_epoch, __ATOMIC_ACQUIRE);
}

bool
tlb_cr_closed(const struct tlb_cr *cr)
{
	if (cr == NULL)
		return true;
	return (__atomic_load_n(&cr_hdr(cr)->flags, __ATOMIC_ACQUIRE) &
		TLB_CR_F_CLOSED) != 0;
}

/* Unlinks the name only if it still names the object we created: a new
 * daemon may already have replaced it (create unlinks the old one). */
static void
cr_unlink_own(const struct tlb_cr *cr)
{
	struct stat st;
	int fd;

	fd = shm_open(cr->name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_dev == cr->dev &&
	    st.st_ino == cr->ino)
		shm_unlink(cr->name);
	close(fd);
}

void
tlb_cr_destroy(struct tlb_cr *cr, bool unlink)
{
	if (cr == NULL)
		return;
	/* Only the creator closes the region; a host handle passed here is
	 * just unmapped. */
	if (cr->side == CR_SIDE_NIC) {
		__atomic_fetch_or(&cr_hdr(cr)->flags, TLB_CR_F_CLOSED,
				  __ATOMIC_RELEASE);
		if (unlink)
			cr_unlink_own(cr);
	}
	munmap(cr->base, cr->len);
	free(cr);
}

void
tlb_cr_detach(struct tlb_cr *cr)
{
	if (cr == NULL)
		return;
	if (cr->side == CR_SIDE_HOST) {
		for (uint32_t i = 0; i < cr->n_cores; i++) {
			struct cr_slot_ctl *ctl = cr_slot_at(cr, i);

			__atomic_store_n(&ctl->state, TLB_RUN_OFFLINE,
					 __ATOMIC_RELEASE);
			/* The threads are no longer ours to speak for. */
			__atomic_store_n(&ctl->thread, 0, __ATOMIC_RELEASE);
		}
	} else if (cr->side == CR_SIDE_AGENT) {
		/* Nobody watches the scheduler any more: an OFF_CPU left
		 * behind would keep a core looking parked for good. */
		for (uint32_t i = 0; i < cr->n_cores; i++)
			__atomic_store_n(&cr_slot_at(cr, i)->sched, 0,
					 __ATOMIC_RELEASE);
	}
	munmap(cr->base, cr->len);
	free(cr);
}

uint32_t
tlb_cr_n_cores(const struct tlb_cr *cr)
{
	return cr != NULL ? cr->n_cores : 0;
}

uint32_t
tlb_cr_ring_size(const struct tlb_cr *cr)
{
	return cr != NULL ? cr->ring_size : 0;
}
