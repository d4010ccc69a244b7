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
 * make us index outside our mapping; the consumer's position lives in the
 * handle (the region's copy is written for the producer, never read back
 * by the consumer), and the producer's is checked against it before it is
 * used. On the NIC side a truncated object is caught by a SIGBUS guard and
 * a rewritten one by tlb_cr_check (credit_ring.h says what each does).
 *
 * Why a SIGBUS guard and not a sealed memfd: a memfd sealed against
 * F_SEAL_SHRINK | F_SEAL_GROW cannot be truncated at all, but it has no
 * name, so every host library, kick agent and tool would have to get it
 * over a unix socket from the daemon (SCM_RIGHTS, a new protocol, a socket
 * to secure, and a daemon thread serving it), and the region's contents
 * would still need every check below. Re-validating with fstat alone
 * leaves the window between the check and the next access. The guard
 * costs nothing on the hot path (no sigsetjmp per poll: the handler
 * replaces the mapping, so the faulting load completes and returns
 * zeros), keeps the name hosts attach by, and is what turns the one fault
 * the checks cannot prevent, a page gone under a load, into a counted
 * event.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bsd/string.h>

#include "turbolb/credit_ring.h"

#define CR_LINE       64u
#define CR_CTL_BYTES  (3u * CR_LINE)
#define CR_MIN_RING   16u
#define CR_MODE_BITS  0777u
#define CR_KICK_WORDS 4u

/* The control lines at the start of every slot. prod_head and cons_tail
 * have a line each, so that the producer's and the consumer's stores never
 * bounce the other's line; the records follow at CR_CTL_BYTES. */
struct cr_slot_ctl {
	uint32_t prod_head; /* host core: next record it will write */
	uint8_t pad0[CR_LINE - sizeof(uint32_t)];
	uint32_t cons_tail; /* NIC side: next record it will read */
	uint8_t pad1[CR_LINE - sizeof(uint32_t)];
	uint32_t state;               /* enum tlb_core_run_state, host writes */
	uint32_t sched;               /* TLB_CR_SCHED_*, kick agent writes */
	uint64_t heartbeat;           /* host writes */
	uint64_t doorbell;            /* NIC side writes */
	uint64_t thread;              /* pid << 32 | tid, host writes */
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
	CR_SIDE_AGENT, /* the kick agent: neither producer nor consumer */
};

/* Per-core flags of a consumer handle. */
#define CR_CF_FALLBACK 0x1u /* ring credits not trusted until a re-attach */
#define CR_CF_HOLD     0x2u /* the mapping is not the object's: skip */
#define CR_CF_RESYNC   0x4u /* the consumer sets both positions to its own */

/* What the consumer keeps of one core in private memory, a cache line
 * each: the consumer of each core is one dispatcher, and cores of
 * different dispatchers sit side by side. cons is the consumer's own
 * position (single writer: the core's consumer); flags are or-ed and
 * and-ed atomically by the consumer, the control thread (tlb_cr_check)
 * and the SIGBUS guard. */
struct cr_core {
	union {
		struct {
			uint32_t cons;
			uint8_t flags;
			uint8_t pad0[3]; /* always 0 */
		};
		/* cons and flags in one load: equal to a producer position
		 * (zero-extended) only when flags are 0 and the position is
		 * the consumer's, the idle core's test of drain_sums. */
		uint64_t idle_word;
	};
	uint64_t fb_epoch; /* host_epoch when the fallback began */
	uint8_t pad1[CR_LINE - 16];
};

static_assert(sizeof(struct cr_core) == CR_LINE,
	      "a core's consumer state must be one cache line");
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	      "idle_word puts cons in its low half");

enum cr_fault_kind {
	CR_F_SIGBUS,
	CR_F_SIZE,
	CR_F_HEADER,
	CR_F_INDEX,
	CR_F_RECORD,
	CR_F_REPAIR,
	CR_F_RESTORE,
	CR_F_N,
};

struct tlb_cr {
	uint8_t *base;
	size_t len;
	enum cr_side side;
	uint32_t n_cores;
	uint32_t ring_size;
	uint32_t mask;
	size_t stride;
	struct cr_core *core; /* n_cores, cache-line aligned */
	/* Identity of the object we created, so that destroy does not
	 * unlink a newer region a restarted daemon put under the name. */
	dev_t dev;
	ino_t ino;
	char name[TLB_CR_NAME_MAX];
	/* NIC side only: the object kept open for fstat and repair, the
	 * header as written, the fault state (credit_ring.h). */
	int fd;
	bool inband_fallback;
	uint32_t hold;       /* region on hold: the guard or check set it */
	uint64_t good_epoch; /* last host_epoch seen in a valid header */
	struct tlb_cr_header hdr;
	uint64_t fault[CR_F_N];
	uint64_t logged[CR_F_N]; /* what tlb_cr_check reported */
	int guard_slot;          /* index in cr_guard[], -1: not guarded */
	bool repair_pending;     /* tlb_cr_check: the last repair failed */
};

static void cr_err(char *err, size_t errlen, const char *fmt, ...)
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
		       "credit ring %s: name must be '/' followed by at least "
		       "one character and no other '/'",
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
		       "%s: region is %zu bytes, smaller than its %zu byte "
		       "header",
		       label, buf == NULL ? (size_t)0 : len, sizeof(h));
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (h.magic != TLB_CR_MAGIC) {
		cr_err(err, errlen,
		       "%s: bad magic 0x%08" PRIx32 " (expected 0x%08" PRIx32
		       ")",
		       label, h.magic, (uint32_t)TLB_CR_MAGIC);
		return -1;
	}
	if (h.version != TLB_CR_VERSION) {
		cr_err(err, errlen,
		       "%s: unsupported version %" PRIu32 " (expected %" PRIu32
		       ")",
		       label, h.version, (uint32_t)TLB_CR_VERSION);
		return -1;
	}
	if (!cr_n_cores_ok(h.n_cores)) {
		cr_err(err, errlen,
		       "%s: n_cores %" PRIu32 " out of range 1..%u", label,
		       h.n_cores, TLB_CR_MAX_CORES);
		return -1;
	}
	if (!cr_ring_size_ok(h.ring_size)) {
		cr_err(err, errlen,
		       "%s: ring_size %" PRIu32
		       " must be a power of two in %u..%u",
		       label, h.ring_size, CR_MIN_RING, TLB_CR_MAX_RING);
		return -1;
	}
	want = tlb_cr_region_size(h.n_cores, h.ring_size);
	if (h.size != (uint64_t)want) {
		cr_err(err, errlen,
		       "%s: header size %" PRIu64 " does not match %" PRIu32
		       " cores x %" PRIu32 " records (%zu bytes)",
		       label, h.size, h.n_cores, h.ring_size, want);
		return -1;
	}
	if (h.size != (uint64_t)len) {
		cr_err(err, errlen,
		       "%s: header size %" PRIu64
		       " does not match the region's %zu bytes",
		       label, h.size, len);
		return -1;
	}
	if (h.flags & TLB_CR_F_CLOSED) {
		cr_err(err, errlen,
		       "%s: region was closed by the NIC side (pid %" PRIu32
		       ")",
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

/* A handle with its per-core consumer state for n_cores; NULL: no memory. */
static struct tlb_cr *
cr_alloc(uint32_t n_cores)
{
	struct tlb_cr *cr = calloc(1, sizeof(*cr));
	void *core = NULL;

	if (cr == NULL)
		return NULL;
	if (posix_memalign(&core, CR_LINE,
			   (size_t)n_cores * sizeof(struct cr_core)) != 0) {
		free(cr);
		return NULL;
	}
	memset(core, 0, (size_t)n_cores * sizeof(struct cr_core));
	cr->core = core;
	cr->fd = -1;
	cr->guard_slot = -1;
	return cr;
}

static void
cr_free(struct tlb_cr *cr)
{
	if (cr->fd >= 0)
		close(cr->fd);
	free(cr->core);
	free(cr);
}

static void
cr_count(struct tlb_cr *cr, enum cr_fault_kind k)
{
	__atomic_add_fetch(&cr->fault[k], 1, __ATOMIC_RELAXED);
}

/* Puts core in fallback, with the other flags given (CR_CF_*). A core
 * not yet in fallback first notes the host epoch it falls back under: a
 * different one (a host attached again) ends it. Async-signal-safe. */
static void
cr_core_fault(struct tlb_cr *cr, uint32_t core, uint8_t flags, uint64_t epoch)
{
	struct cr_core *c = &cr->core[core];

	if ((__atomic_load_n(&c->flags, __ATOMIC_ACQUIRE) & CR_CF_FALLBACK) ==
	    0)
		__atomic_store_n(&c->fb_epoch, epoch, __ATOMIC_RELEASE);
	__atomic_fetch_or(&c->flags, flags | CR_CF_FALLBACK, __ATOMIC_ACQ_REL);
}

/* Every core in fallback, and on hold when hold: the region itself is in
 * doubt. Async-signal-safe. */
static void
cr_fault_all(struct tlb_cr *cr, bool hold)
{
	uint64_t epoch = __atomic_load_n(&cr->good_epoch, __ATOMIC_ACQUIRE);

	if (hold)
		__atomic_store_n(&cr->hold, 1, __ATOMIC_RELEASE);
	for (uint32_t i = 0; i < cr->n_cores; i++)
		cr_core_fault(cr, i, hold ? CR_CF_HOLD : 0, epoch);
}

/* ---- the SIGBUS guard (see the top of this file) ---- */

#define CR_GUARD_MAX 16

static struct tlb_cr *cr_guard[CR_GUARD_MAX];
static struct sigaction cr_old_bus;
static int cr_guard_lock;

static void
cr_on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	for (unsigned int i = 0; i < CR_GUARD_MAX; i++) {
		struct tlb_cr *cr =
			__atomic_load_n(&cr_guard[i], __ATOMIC_ACQUIRE);

		if (cr == NULL || a < (uintptr_t)cr->base ||
		    a - (uintptr_t)cr->base >= cr->len)
			continue;
		/* Hold first: a dispatcher that reads the zeros below
		 * must find its cores on hold, not count them as bad. */
		cr_fault_all(cr, true);
		cr_count(cr, CR_F_SIGBUS);
		/* The whole mapping, not just the page: the object shrank
		 * and anything past its new end faults next. MAP_FIXED
		 * replaces the pages at once; no thread sees a hole. */
		if (mmap(cr->base, cr->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			break; /* cannot recover: the default action */
		errno = saved;
		return;
	}
	errno = saved;
	/* Not ours: whoever was there before decides. With no handler the
	 * default action is restored and the faulting access, run again,
	 * gets it (a core dump where there would have been one). */
	if ((cr_old_bus.sa_flags & SA_SIGINFO) &&
	    cr_old_bus.sa_sigaction != NULL) {
		cr_old_bus.sa_sigaction(sig, si, uc);
		return;
	}
	if (cr_old_bus.sa_handler != SIG_DFL &&
	    cr_old_bus.sa_handler != SIG_IGN) {
		cr_old_bus.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
}

/* Guards cr's mapping, with the handler installed first if it is not
 * (again: a test framework, or anything else, may have put its own in
 * since; that one becomes the handler chained to). Returns -1 when all
 * slots are taken (the region is then unguarded). */
static int
cr_guard_add(struct tlb_cr *cr)
{
	struct sigaction cur;
	int expect = 0;

	/* One installer at a time; creates are rare. */
	while (!__atomic_compare_exchange_n(&cr_guard_lock, &expect, 1, false,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		expect = 0;
	if (sigaction(SIGBUS, NULL, &cur) == 0 &&
	    (!(cur.sa_flags & SA_SIGINFO) ||
	     cur.sa_sigaction != cr_on_sigbus)) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = cr_on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		cr_old_bus = cur;
		sigaction(SIGBUS, &sa, NULL);
	}
	__atomic_store_n(&cr_guard_lock, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < CR_GUARD_MAX; i++) {
		struct tlb_cr *none = NULL;

		if (__atomic_compare_exchange_n(&cr_guard[i], &none, cr, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			cr->guard_slot = i;
			return 0;
		}
	}
	return -1;
}

static void
cr_guard_remove(struct tlb_cr *cr)
{
	if (cr->guard_slot >= 0)
		__atomic_store_n(&cr_guard[cr->guard_slot], NULL,
				 __ATOMIC_RELEASE);
	cr->guard_slot = -1;
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
		       "credit ring %s: ring_size %" PRIu32
		       " must be a power of two in %u..%u",
		       name, ring_size, CR_MIN_RING, TLB_CR_MAX_RING);
		return -1;
	}
	if ((mode & ~(mode_t)CR_MODE_BITS) != 0) {
		cr_err(err, errlen,
		       "credit ring %s: mode 0%o has bits beyond 0777", name,
		       (unsigned int)mode);
		return -1;
	}
	size = tlb_cr_region_size(n_cores, ring_size);

	cr = cr_alloc(n_cores);
	if (cr == NULL) {
		cr_err(err, errlen, "credit ring %s: out of memory", name);
		return -1;
	}

	/* A region left by a daemon that died keeps its old header (and old
	 * host); start from a new object rather than reuse its bytes. */
	if (shm_unlink(name) < 0 && errno != ENOENT) {
		cr_err(err, errlen,
		       "credit ring %s: cannot remove old region: %s", name,
		       strerror(errno));
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
	/* Kept: tlb_cr_check compares its size and repairs through it. */
	cr->fd = fd;

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
	memcpy(&cr->hdr, h, sizeof(cr->hdr));
	cr->hdr.magic = TLB_CR_MAGIC;
	/* Before any host can attach (the magic below). */
	if (cr_guard_add(cr) != 0) {
		cr_err(err, errlen,
		       "credit ring %s: more than %d rings in one process",
		       name, CR_GUARD_MAX);
		munmap(base, size);
		cr->fd = -1;
		goto fail_close;
	}
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
	cr_free(cr);
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
		       "%s: region is %jd bytes, not within %zu..%zu", label,
		       (intmax_t)st.st_size, tlb_cr_region_size(1, CR_MIN_RING),
		       max_len);
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

	cr = cr_alloc(hv.n_cores);
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
	/* A tool or test that drains through this handle continues from
	 * where the consumer is. */
	for (uint32_t i = 0; i < cr->n_cores; i++)
		cr->core[i].cons = __atomic_load_n(
			&cr_slot_at(cr, i)->cons_tail, __ATOMIC_ACQUIRE);
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
tlb_cr_attach(const char *name, struct tlb_cr **out, char *err, size_t errlen)
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
		uint32_t cons =
			__atomic_load_n(&ctl->cons_tail, __ATOMIC_ACQUIRE);
		uint32_t prod =
			__atomic_load_n(&ctl->prod_head, __ATOMIC_ACQUIRE);

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

#define CR_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The host epoch a core's fallback begins under, read by its consumer. */
static uint64_t
cr_live_epoch(const struct tlb_cr *cr)
{
	return __atomic_load_n(&cr_hdr(cr)->host_epoch, __ATOMIC_ACQUIRE);
}

/* A record no host can have written: more work than its completions can
 * carry (each request's charge is a u32 of nanoseconds). */
static bool
cr_record_bad(const struct tlb_credit *r)
{
	return r->work_ns > (uint64_t)r->completions * UINT32_MAX;
}

/* Moves at most max records of core into out, validated. The consumer's
 * position is its own copy (struct cr_core), never the region's. */
static unsigned int
cr_take(struct tlb_cr *cr, uint32_t core, struct tlb_credit *out,
	unsigned int max)
{
	struct cr_slot_ctl *ctl = cr_slot_at(cr, core);
	struct cr_core *c = &cr->core[core];
	uint8_t f = __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE);
	struct tlb_credit *recs;
	uint32_t cons, prod, avail, idx, first;
	bool bad = false;

	if (CR_UNLIKELY(f != 0)) {
		/* On hold the mapping may be zeros, not the object. */
		if (f & CR_CF_HOLD)
			return 0;
		/* A repaired region: its positions were lost with it. */
		if (f & CR_CF_RESYNC) {
			__atomic_store_n(&ctl->cons_tail, c->cons,
					 __ATOMIC_RELEASE);
			__atomic_store_n(&ctl->prod_head, c->cons,
					 __ATOMIC_RELEASE);
			__atomic_fetch_and(&c->flags, (uint8_t)~CR_CF_RESYNC,
					   __ATOMIC_ACQ_REL);
			return 0;
		}
	}
	cons = c->cons;
	prod = __atomic_load_n(&ctl->prod_head, __ATOMIC_ACQUIRE);
	avail = prod - cons;
	if (avail == 0)
		return 0;
	if (CR_UNLIKELY(avail > cr->ring_size)) {
		/* Zeros read after the guard replaced the mapping are not
		 * the host's doing. */
		if (__atomic_load_n(&c->flags, __ATOMIC_ACQUIRE) & CR_CF_HOLD)
			return 0;
		/* A producer more than a ring ahead: what it points at is
		 * stale or never written. Nothing is credited; the position
		 * is set back to ours, so that the host (which checks it
		 * before each post) can post again, and the core falls back
		 * until a host attaches again. */
		cr_count(cr, CR_F_INDEX);
		cr_core_fault(cr, core, 0, cr_live_epoch(cr));
		__atomic_store_n(&ctl->prod_head, cons, __ATOMIC_RELEASE);
		return 0;
	}
	if (avail > max)
		avail = max;
	recs = cr_recs(ctl);
	idx = cons & cr->mask;
	first = cr->ring_size - idx;
	if (first > avail)
		first = avail;
	memcpy(out, &recs[idx], (size_t)first * sizeof(*out));
	memcpy(out + first, &recs[0], (size_t)(avail - first) * sizeof(*out));
	c->cons = cons + avail;
	/* Release: our reads of the records are done before the producer
	 * can see the space and overwrite them. */
	__atomic_store_n(&ctl->cons_tail, cons + avail, __ATOMIC_RELEASE);
	for (unsigned int j = 0; j < avail; j++)
		bad |= cr_record_bad(&out[j]);
	if (CR_UNLIKELY(bad)) {
		if (__atomic_load_n(&c->flags, __ATOMIC_ACQUIRE) & CR_CF_HOLD)
			return 0;
		/* The batch is not credited: one bad record says the slot
		 * is written by something that is not a host. */
		cr_count(cr, CR_F_RECORD);
		cr_core_fault(cr, core, 0, cr_live_epoch(cr));
		return 0;
	}
	/* Counted in-band by the consumer: drained, so the host can go on
	 * posting, and dropped. */
	if (CR_UNLIKELY(f & CR_CF_FALLBACK) && cr->inband_fallback)
		return 0;
	return avail;
}

/* post and drain do not look at the handle's side: the ring's contract is
 * one producer thread and one consumer thread per core, whatever mappings
 * they use, and tests and tools may drive both ends through one handle. */
unsigned int
tlb_cr_drain(struct tlb_cr *cr, uint32_t core, struct tlb_credit *out,
	     unsigned int max)
{
	if (cr == NULL || core >= cr->n_cores || out == NULL || max == 0)
		return 0;
	return cr_take(cr, core, out, max);
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
		const struct cr_core *c;
		unsigned int k;

		if (core[i] >= cr->n_cores)
			continue;
		/* The idle core's test, two loads and a compare as with no
		 * fault handling: our own word (position and flags) and the
		 * producer's position. */
		c = &cr->core[core[i]];
		if (__atomic_load_n(&c->idle_word, __ATOMIC_RELAXED) ==
		    (uint64_t)__atomic_load_n(
			    &cr_slot_at(cr, core[i])->prod_head,
			    __ATOMIC_RELAXED))
			continue;
		k = cr_take(cr, core[i], rec, max);
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
		return 0; /* full, or positions corrupt: write nothing */
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
	enum tlb_core_run_state st;

	/* In fallback the host's word is not trusted either. */
	if (cr != NULL && core < cr->n_cores &&
	    CR_UNLIKELY(__atomic_load_n(&cr->core[core].flags,
					__ATOMIC_ACQUIRE) != 0) &&
	    tlb_cr_fallback(cr, core))
		return cr->inband_fallback ? TLB_RUN_RUNNING : TLB_RUN_OFFLINE;
	st = tlb_cr_host_state(cr, core);

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
	out->reverted_drain = __atomic_load_n(&ctl->kick[2], __ATOMIC_RELAXED);
	out->reverted_bound = __atomic_load_n(&ctl->kick[3], __ATOMIC_RELAXED);
}

uint64_t
tlb_cr_host_epoch(const struct tlb_cr *cr)
{
	if (cr == NULL)
		return 0;
	/* Zeros or a rewritten header are no host restart. */
	if (CR_UNLIKELY(__atomic_load_n(&cr->hold, __ATOMIC_ACQUIRE) != 0))
		return __atomic_load_n(&cr->good_epoch, __ATOMIC_ACQUIRE);
	return cr_live_epoch(cr);
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
	if (fstat(fd, &st) == 0 && st.st_dev == cr->dev && st.st_ino == cr->ino)
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
		/* Still guarded: a truncated region takes the store. */
		__atomic_fetch_or(&cr_hdr(cr)->flags, TLB_CR_F_CLOSED,
				  __ATOMIC_RELEASE);
		if (unlink)
			cr_unlink_own(cr);
	}
	cr_guard_remove(cr);
	munmap(cr->base, cr->len);
	cr_free(cr);
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
	cr_free(cr);
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

/* ---- NIC side: faults, repair and restore (credit_ring.h) ---- */

bool
tlb_cr_fallback(const struct tlb_cr *cr, uint32_t core)
{
	if (cr == NULL || core >= cr->n_cores)
		return false;
	return (__atomic_load_n(&cr->core[core].flags, __ATOMIC_ACQUIRE) &
		CR_CF_FALLBACK) != 0;
}

void
tlb_cr_set_inband_fallback(struct tlb_cr *cr, bool on)
{
	if (cr != NULL)
		cr->inband_fallback = on;
}

void
tlb_cr_faults(const struct tlb_cr *cr, struct tlb_cr_faults *out)
{
	if (out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	if (cr == NULL)
		return;
	out->sigbus =
		__atomic_load_n(&cr->fault[CR_F_SIGBUS], __ATOMIC_RELAXED);
	out->size_changes =
		__atomic_load_n(&cr->fault[CR_F_SIZE], __ATOMIC_RELAXED);
	out->bad_header =
		__atomic_load_n(&cr->fault[CR_F_HEADER], __ATOMIC_RELAXED);
	out->bad_index =
		__atomic_load_n(&cr->fault[CR_F_INDEX], __ATOMIC_RELAXED);
	out->bad_record =
		__atomic_load_n(&cr->fault[CR_F_RECORD], __ATOMIC_RELAXED);
	out->repairs =
		__atomic_load_n(&cr->fault[CR_F_REPAIR], __ATOMIC_RELAXED);
	out->restores =
		__atomic_load_n(&cr->fault[CR_F_RESTORE], __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < cr->n_cores; i++)
		out->fallback_cores += tlb_cr_fallback(cr, i);
}

/* What differs between the live header and the one the NIC side wrote;
 * "" when nothing does. host_epoch is the host's and may change. */
static void
cr_header_diff(const struct tlb_cr *cr, char *why, size_t len)
{
	const struct tlb_cr_header *w = &cr->hdr;
	struct tlb_cr_header h;

	memcpy(&h, cr->base, sizeof(h));
	why[0] = '\0';
	if (h.magic != w->magic)
		snprintf(why, len, "magic 0x%08" PRIx32, h.magic);
	else if (h.version != w->version)
		snprintf(why, len, "version %" PRIu32, h.version);
	else if (h.size != w->size || h.n_cores != w->n_cores ||
		 h.ring_size != w->ring_size)
		snprintf(why, len,
			 "dimensions %" PRIu32 " x %" PRIu32 ", %" PRIu64
			 " bytes",
			 h.n_cores, h.ring_size, h.size);
	else if (h.nic_epoch != w->nic_epoch || h.nic_pid != w->nic_pid)
		snprintf(why, len, "NIC epoch %#" PRIx64 ", pid %" PRIu32,
			 h.nic_epoch, h.nic_pid);
	else if (h.flags != w->flags)
		snprintf(why, len, "flags %#" PRIx32, h.flags);
}

/* Rewrites the region: its size when resized (the object zero-filled
 * from there: every slot's positions are set back to the consumer's by
 * its consumer, CR_CF_RESYNC), the mapping bound to the object again, the
 * header as the NIC side wrote it. Returns 0, or -1 to try again at the
 * next check (a new SIGBUS meanwhile, or a call failed). */
static int
cr_repair(struct tlb_cr *cr, bool resized)
{
	uint64_t sigbus =
		__atomic_load_n(&cr->fault[CR_F_SIGBUS], __ATOMIC_ACQUIRE);
	struct tlb_cr_header *h = cr_hdr(cr);
	struct stat st;

	if (resized) {
		if (fstat(cr->fd, &st) < 0)
			return -1;
		if (st.st_size != (off_t)cr->len &&
		    ftruncate(cr->fd, (off_t)cr->len) < 0)
			return -1;
		/* At once: a failed MAP_FIXED may leave a hole; then the
		 * zeros again, and another try next time. */
		if (mmap(cr->base, cr->len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, cr->fd, 0) == MAP_FAILED) {
			mmap(cr->base, cr->len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			return -1;
		}
		/* The zeros are no new host. */
		__atomic_store_n(
			&h->host_epoch,
			__atomic_load_n(&cr->good_epoch, __ATOMIC_ACQUIRE),
			__ATOMIC_RELEASE);
	}
	h->version = cr->hdr.version;
	h->size = cr->hdr.size;
	h->n_cores = cr->hdr.n_cores;
	h->ring_size = cr->hdr.ring_size;
	h->nic_epoch = cr->hdr.nic_epoch;
	h->nic_pid = cr->hdr.nic_pid;
	__atomic_store_n(&h->flags, cr->hdr.flags, __ATOMIC_RELEASE);
	__atomic_store_n(&h->magic, cr->hdr.magic, __ATOMIC_RELEASE);
	if (!resized)
		return 0;
	if (__atomic_load_n(&cr->fault[CR_F_SIGBUS], __ATOMIC_ACQUIRE) !=
	    sigbus)
		return -1;
	for (uint32_t i = 0; i < cr->n_cores; i++) {
		__atomic_fetch_or(&cr->core[i].flags, CR_CF_RESYNC,
				  __ATOMIC_ACQ_REL);
		__atomic_fetch_and(&cr->core[i].flags, (uint8_t)~CR_CF_HOLD,
				   __ATOMIC_ACQ_REL);
	}
	__atomic_store_n(&cr->hold, 0, __ATOMIC_RELEASE);
	return 0;
}

/* Cores in fallback that a host attached for since, back on the ring. */
static uint32_t
cr_restore(struct tlb_cr *cr, uint64_t epoch)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < cr->n_cores; i++) {
		struct cr_core *c = &cr->core[i];
		uint8_t f = __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE);

		if ((f & CR_CF_FALLBACK) == 0 || (f & CR_CF_HOLD) != 0 ||
		    __atomic_load_n(&c->fb_epoch, __ATOMIC_ACQUIRE) == epoch)
			continue;
		__atomic_fetch_and(&c->flags, (uint8_t)~CR_CF_FALLBACK,
				   __ATOMIC_ACQ_REL);
		n++;
	}
	return n;
}

static void cr_log(tlb_cr_log_fn *log, void *arg, bool warn, const char *fmt,
		   ...) __attribute__((format(printf, 4, 5)));

static void
cr_log(tlb_cr_log_fn *log, void *arg, bool warn, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	if (log == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log(arg, warn, msg);
}

unsigned int
tlb_cr_check(struct tlb_cr *cr, tlb_cr_log_fn *log, void *arg)
{
	static const char *const what[CR_F_N] = {
		[CR_F_SIGBUS] = "accesses past its end caught (SIGBUS)",
		[CR_F_SIZE] = "size changes",
		[CR_F_HEADER] = "header rewrites",
		[CR_F_INDEX] = "impossible producer positions (reset)",
		[CR_F_RECORD] = "credit batches out of range (not credited)",
		[CR_F_REPAIR] = "repairs",
		[CR_F_RESTORE] = "cores back on ring credits",
	};
	char why[128] = "";
	unsigned int events = 0;
	bool resized = false, header = false;
	struct tlb_cr_faults f;
	struct stat st;
	uint32_t restored;

	if (cr == NULL || cr->side != CR_SIDE_NIC || cr->fd < 0)
		return 0;
	if (__atomic_load_n(&cr->hold, __ATOMIC_ACQUIRE) != 0) {
		resized = true;
		snprintf(why, sizeof(why), "truncated under an access");
	} else if (fstat(cr->fd, &st) == 0 && st.st_size != (off_t)cr->len) {
		resized = true;
		snprintf(why, sizeof(why), "%jd bytes instead of %zu",
			 (intmax_t)st.st_size, cr->len);
	} else {
		cr_header_diff(cr, why, sizeof(why));
		header = why[0] != '\0';
		/* Truncated while we read it: zeros, not a rewrite. */
		if (__atomic_load_n(&cr->hold, __ATOMIC_ACQUIRE) != 0) {
			header = false;
			resized = true;
			snprintf(why, sizeof(why), "truncated under an access");
		}
	}
	if (resized || header) {
		/* Counted once per fault found, not per retry of its
		 * repair. */
		if (!cr->repair_pending)
			cr_count(cr, resized ? CR_F_SIZE : CR_F_HEADER);
		cr_fault_all(cr, resized);
		cr->repair_pending = cr_repair(cr, resized) != 0;
		if (!cr->repair_pending)
			cr_count(cr, CR_F_REPAIR);
	} else {
		uint64_t epoch = cr_live_epoch(cr);

		__atomic_store_n(&cr->good_epoch, epoch, __ATOMIC_RELEASE);
		restored = cr_restore(cr, epoch);
		if (restored != 0)
			__atomic_add_fetch(&cr->fault[CR_F_RESTORE], restored,
					   __ATOMIC_RELAXED);
	}

	tlb_cr_faults(cr, &f);
	for (int k = 0; k < CR_F_N; k++) {
		uint64_t now = __atomic_load_n(&cr->fault[k], __ATOMIC_ACQUIRE);
		/* What this check found, on the line of its kind. */
		const char *detail = (k == CR_F_SIZE &&
				      resized) || (k == CR_F_HEADER && header)
					     ? why
					     : "";

		if (now == cr->logged[k])
			continue;
		events++;
		if (k == CR_F_RESTORE)
			cr_log(log, arg, false,
			       "credit ring %s: %" PRIu64
			       " %s (a host attached, epoch %#" PRIx64
			       "); %" PRIu32 " cores still in fallback",
			       cr->name, now - cr->logged[k], what[k],
			       cr->good_epoch, f.fallback_cores);
		else
			cr_log(log, arg, k != CR_F_REPAIR,
			       "credit ring %s: %" PRIu64 " %s%s%s%s; %" PRIu32
			       " cores in fallback (%s) until a host attaches "
			       "again; totals: sigbus %" PRIu64 " size %" PRIu64
			       " header %" PRIu64 " index %" PRIu64
			       " record %" PRIu64 " repairs %" PRIu64,
			       cr->name, now - cr->logged[k], what[k],
			       detail[0] != '\0' ? " (" : "", detail,
			       detail[0] != '\0' ? ")" : "", f.fallback_cores,
			       cr->inband_fallback ? "credits in-band"
						   : "out of rotation",
			       f.sigbus, f.size_changes, f.bad_header,
			       f.bad_index, f.bad_record, f.repairs);
		cr->logged[k] = now;
	}
	return events;
}
