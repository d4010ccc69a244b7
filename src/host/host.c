/* SPDX-License-Identifier: BSD-3-Clause
 * libturbolb-host: batched credit posting, run state and heartbeat for the
 * host cores of an RPC server, and reattach across daemon restarts.
 *
 * Attachments and reattach: the region a server is attached to is held in
 * an attachment (struct host_att). A reattach makes a new one current and
 * bumps a generation number; each core handle compares the generation on
 * every call (one load of a read-mostly line) and, when it moved, takes the
 * lock once to switch to the current attachment. An old attachment is
 * unmapped when the last core that used it has switched, so a reattach
 * never pulls a mapping from under a core that is writing to it, and the
 * core threads never wait on a lock except at that switch.
 *
 * Threads: each core publishes the pid and tid of the thread using its
 * handle in its slot, at its first call, at every switch to a new region
 * and whenever tlb_host_set_running finds another thread calling (a
 * handle may change threads between uses). The scheduler kick agent boosts
 * that thread; the tid is cached per thread, so checking costs no system
 * call.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "turbolb/credit_ring.h"
#include "turbolb/feedback.h"
#include "turbolb/host.h"

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#define HOST_LINE 64
/* Attach, then check the name still names what we mapped; a daemon
 * starting at that very moment makes us try again, a few times. */
#define HOST_ATTACH_TRIES 4

/* A core of the packet transport that sent nothing for this long sends a
 * frame at its next heartbeat: proof of life, and the totals again should
 * a frame have been lost on the way. */
#define HOST_FB_IDLE_NS 100000000u

/* One attached region, or with the packet transport the one attachment
 * there is (cr NULL). Fields after `cr` are set before the attachment is
 * published and read-only after; refs, retired and next change under the
 * host's lock. */
struct host_att {
	struct tlb_cr *cr; /* NULL: packet transport */
	uint64_t gen;
	dev_t dev;
	ino_t ino;
	uint64_t host_epoch;
	uint32_t n_cores;
	uint32_t refs;         /* core handles switched to it */
	bool retired;          /* no longer current */
	struct host_att *next; /* retired list */
};

struct tlb_host_core {
	/* core thread: rw; other threads: never (except close) */
	struct tlb_host *host;
	struct host_att *att; /* NULL until the first call */
	uint64_t gen;         /* generation att belongs to */
	uint32_t core;
	uint32_t batch;
	bool slot_ok;                  /* att's region has a slot for core */
	enum tlb_core_run_state state; /* what the thread last asked for */
	uint32_t tid; /* thread published in the slot (0: none) */
	uint64_t pend_work;
	uint64_t pend_svc;
	/* packet transport: what the next feedback frame says */
	bool fb_due;     /* a frame is to be sent */
	uint64_t due_ns; /* with completions held and a hold: when the
			  * oldest of them makes a frame due */
	/* the state the last frame said: a change makes a frame due, one
	 * undone before the next frame (a short idle sleep) none */
	enum tlb_core_run_state fb_state;
	bool offline;             /* tlb_host_set_offline: for good */
	uint64_t beats;           /* heartbeat counter */
	uint64_t fb_ns;           /* when the last frame was built */
	uint64_t tot_completions; /* totals as of the last frame */
	uint64_t tot_work;
	uint64_t tot_svc;
	/* core thread: wo (relaxed stores); any thread: ro */
	struct tlb_host_core_stats st;
} __attribute__((aligned(HOST_LINE)));

struct tlb_host {
	/* read on every core call; written only by reattach */
	uint64_t gen;
	uint8_t pad0[HOST_LINE - sizeof(uint64_t)];
	/* everything below: under lock, or atomics named so */
	pthread_mutex_t lock __attribute__((aligned(HOST_LINE)));
	struct host_att *cur;
	struct host_att *retired;
	bool stale;             /* atomic: sticky until reattach */
	uint64_t next_check_ns; /* atomic: next look at the name */
	uint64_t check_ns;
	uint32_t batch;
	bool packet;      /* feedback frames, no credit ring */
	bool state_only;  /* packet: completions make no frame due */
	uint64_t hold_ns; /* packet transport: feedback_hold_us (0 when
			   * state_only) */
	uint64_t (*clock_ns)(void *arg);
	void *clock_arg;
	char name[TLB_CR_NAME_MAX];
	struct tlb_host_core *cores[TLB_CR_MAX_CORES];
};

static void host_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
host_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* gettid() is a system call; the id of a thread never changes, except
 * in the child of a fork, whose one thread inherits the cache of the
 * thread that forked: the child handler forgets it. */
static __thread uint32_t host_tid;
static pthread_once_t host_atfork_once = PTHREAD_ONCE_INIT;

static void
forget_tid(void)
{
	host_tid = 0;
}

static void
host_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

static uint32_t
self_tid(void)
{
	if (unlikely(host_tid == 0))
		host_tid = (uint32_t)gettid();
	return host_tid;
}

/* Publishes the calling thread as the one serving c (core thread). */
static void
publish_thread(struct tlb_host_core *c)
{
	c->tid = self_tid();
	tlb_cr_set_tid(c->att->cr, c->core, (uint32_t)getpid(), c->tid);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
mono_clock(void *arg)
{
	(void)arg;
	return mono_ns();
}

/* The clock of the packet transport's hold and heartbeat. */
static inline uint64_t
host_now(const struct tlb_host *h)
{
	return h->clock_ns(h->clock_arg);
}

/* Single writer (the core thread): plain read, relaxed store, so readers
 * on other threads never see a torn value and no atomic RMW is paid. */
static inline void
stat_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, *p + v, __ATOMIC_RELAXED);
}

static inline void
stat_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Which object the name refers to now: 0, or -errno. */
static int
name_identity(const char *name, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int fd, e;

	fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static int
identity_err(const char *name, int rc, char *err, size_t errlen)
{
	switch (rc) {
	case -ENOENT:
		host_err(err, errlen,
			 "credit ring %s does not exist (is turbolbd running, "
			 "with this credit ring name?)",
			 name);
		break;
	case -EACCES:
		host_err(err, errlen,
			 "credit ring %s: permission denied (turbolbd creates "
			 "it mode 0600 unless its config grants a group: run "
			 "the server as that user or group)",
			 name);
		break;
	default:
		host_err(err, errlen, "credit ring %s: %s", name,
			 strerror(-rc));
		break;
	}
	return -1;
}

/* Attaches to the region under name and records which object it is. */
static struct host_att *
att_open(const char *name, char *err, size_t errlen)
{
	struct host_att *a;
	struct tlb_cr *cr;
	/* Set by name_identity() when it returns 0, and read only then;
	 * zeroed so that an optimizing build can see it. */
	dev_t dev = 0, dev2 = 0;
	ino_t ino = 0, ino2 = 0;
	int rc;

	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		host_err(err, errlen, "credit ring %s: out of memory", name);
		return NULL;
	}
	for (int tries = 0; tries < HOST_ATTACH_TRIES; tries++) {
		rc = name_identity(name, &dev, &ino);
		if (rc < 0) {
			identity_err(name, rc, err, errlen);
			goto fail;
		}
		if (tlb_cr_attach(name, &cr, err, errlen) < 0)
			goto fail;
		/* The same object before and after: attach mapped it (an
		 * unlinked object never comes back under a name). */
		rc = name_identity(name, &dev2, &ino2);
		if (rc == 0 && dev2 == dev && ino2 == ino) {
			a->cr = cr;
			a->dev = dev;
			a->ino = ino;
			a->host_epoch = tlb_cr_host_epoch(cr);
			a->n_cores = tlb_cr_n_cores(cr);
			return a;
		}
		tlb_cr_detach(cr);
	}
	host_err(err, errlen,
		 "credit ring %s: replaced while attaching, %d times in a row",
		 name, HOST_ATTACH_TRIES);
fail:
	free(a);
	return NULL;
}

/* Releases an attachment nobody uses any more (lock held). */
static void
att_free(struct tlb_host *h, struct host_att *a)
{
	/* Still the object we are attached to (an explicit reattach with no
	 * daemon restart): only unmap, which is all tlb_cr_destroy does to a
	 * host-side handle, so the cores' states stay as they are. Another
	 * object: detach, which marks its cores OFFLINE. */
	if (h->cur != NULL && h->cur != a && h->cur->dev == a->dev &&
	    h->cur->ino == a->ino)
		tlb_cr_destroy(a->cr, false);
	else
		tlb_cr_detach(a->cr);
	free(a);
}

static void
retired_remove(struct tlb_host *h, struct host_att *a)
{
	struct host_att **pp;

	for (pp = &h->retired; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			return;
		}
	}
}

static void
discard_pending(struct tlb_host_core *c)
{
	stat_add(&c->st.discarded, c->st.pending);
	stat_set(&c->st.pending, 0);
	c->pend_work = 0;
	c->pend_svc = 0;
}

/* Moves the core to the current attachment. Slow path: once per
 * reattach per core, and at the core's first call. */
static void
core_switch(struct tlb_host_core *c)
{
	struct tlb_host *h = c->host;
	struct host_att *old, *cur;

	pthread_mutex_lock(&h->lock);
	old = c->att;
	cur = h->cur;
	c->gen = cur->gen;
	if (old != cur) {
		cur->refs++;
		c->att = cur;
		c->slot_ok = c->core < cur->n_cores;
		if (old != NULL) {
			/* What is held was charged by the old daemon. */
			discard_pending(c);
			stat_add(&c->st.switches, 1);
			if (--old->refs == 0 && old->retired) {
				retired_remove(h, old);
				att_free(h, old);
			}
		}
		if (c->slot_ok && cur->cr != NULL) {
			publish_thread(c);
			tlb_cr_set_state(cur->cr, c->core, c->state);
			tlb_cr_beat(cur->cr, c->core);
		} else if (c->slot_ok) {
			c->fb_due = true;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

static inline bool
core_sync(struct tlb_host_core *c)
{
	if (unlikely(__atomic_load_n(&c->host->gen, __ATOMIC_ACQUIRE) !=
		     c->gen))
		core_switch(c);
	return c->slot_ok;
}

/* One try at posting all that is held, as one record. */
static void
core_post(struct tlb_host_core *c)
{
	struct tlb_credit rec;
	uint64_t n = c->st.pending;

	if (unlikely(!c->slot_ok)) {
		discard_pending(c);
		return;
	}
	/* Packet transport: the core's next feedback frame carries them;
	 * state only, that frame comes when something else makes it due. */
	if (c->host->packet) {
		if (!c->host->state_only)
			c->fb_due = true;
		return;
	}
	/* Only a ring full for billions of completions gets here with more
	 * than a record holds; the rest waits for the next post. */
	rec.completions = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	rec.reserved = 0;
	rec.work_ns = c->pend_work;
	rec.service_ns = c->pend_svc;
	rec.host_ts_ns = mono_ns();
	if (unlikely(tlb_cr_post(c->att->cr, c->core, &rec, 1) != 1)) {
		stat_add(&c->st.ring_full, 1);
		return;
	}
	c->pend_work = 0;
	c->pend_svc = 0;
	stat_set(&c->st.pending, n - rec.completions);
	stat_add(&c->st.posted, rec.completions);
	stat_add(&c->st.records, 1);
}

void
tlb_host_opts_init(struct tlb_host_opts *o)
{
	if (o == NULL)
		return;
	memset(o, 0, sizeof(*o));
	o->batch = TLB_HOST_BATCH_DEFAULT;
	o->stale_check_ms = TLB_HOST_CHECK_MS_DEFAULT;
	o->feedback_hold_us = TLB_HOST_FEEDBACK_HOLD_US_DEFAULT;
}

struct tlb_host *
tlb_host_open(const char *ring_name, char *err, size_t errlen)
{
	return tlb_host_open_opts(ring_name, NULL, err, errlen);
}

struct tlb_host *
tlb_host_open_opts(const char *ring_name, const struct tlb_host_opts *opts,
		   char *err, size_t errlen)
{
	struct tlb_host_opts o;
	struct tlb_host *h;
	void *mem;
	size_t n;

	pthread_once(&host_atfork_once, host_atfork);
	tlb_host_opts_init(&o);
	if (opts != NULL) {
		if (opts->batch != 0)
			o.batch = opts->batch;
		if (opts->stale_check_ms != 0)
			o.stale_check_ms = opts->stale_check_ms;
	}
	if (o.batch > TLB_HOST_BATCH_MAX) {
		host_err(err, errlen,
			 "credit ring: batch %u out of range 1..%u", o.batch,
			 TLB_HOST_BATCH_MAX);
		return NULL;
	}
	if (ring_name == NULL) {
		host_err(err, errlen, "credit ring: no name given");
		return NULL;
	}
	n = strnlen(ring_name, TLB_CR_NAME_MAX);
	if (n >= TLB_CR_NAME_MAX || n < 2 || ring_name[0] != '/') {
		host_err(err, errlen,
			 "credit ring '%.*s': the name must be '/' and 1 to %d "
			 "more characters",
			 TLB_CR_NAME_MAX, ring_name, TLB_CR_NAME_MAX - 2);
		return NULL;
	}

	if (posix_memalign(&mem, HOST_LINE, sizeof(*h)) != 0) {
		host_err(err, errlen, "credit ring %s: out of memory",
			 ring_name);
		return NULL;
	}
	h = mem;
	memset(h, 0, sizeof(*h));
	memcpy(h->name, ring_name, n + 1);
	h->batch = o.batch;
	h->check_ns = (uint64_t)o.stale_check_ms * 1000000u;
	h->clock_ns = mono_clock;
	h->cur = att_open(h->name, err, errlen);
	if (h->cur == NULL) {
		free(h);
		return NULL;
	}
	/* Core handles start at generation 0, so their first call switches
	 * to (and publishes state into) this attachment. */
	h->cur->gen = 1;
	h->gen = 1;
	h->next_check_ns = mono_ns() + h->check_ns;
	if (pthread_mutex_init(&h->lock, NULL) != 0) {
		host_err(err, errlen, "credit ring %s: mutex init failed",
			 ring_name);
		tlb_cr_detach(h->cur->cr);
		free(h->cur);
		free(h);
		return NULL;
	}
	return h;
}

struct tlb_host *
tlb_host_open_packet(uint32_t n_cores, const struct tlb_host_opts *opts,
		     char *err, size_t errlen)
{
	struct tlb_host_opts o;
	struct timespec ts;
	struct tlb_host *h;
	void *mem;

	pthread_once(&host_atfork_once, host_atfork);
	tlb_host_opts_init(&o);
	if (opts != NULL) {
		if (opts->batch != 0)
			o.batch = opts->batch;
		o.feedback_hold_us = opts->feedback_hold_us;
		o.clock_ns = opts->clock_ns;
		o.clock_arg = opts->clock_arg;
		o.feedback_state_only = opts->feedback_state_only;
	}
	if (o.batch > TLB_HOST_BATCH_MAX) {
		host_err(err, errlen, "feedback: batch %u out of range 1..%u",
			 o.batch, TLB_HOST_BATCH_MAX);
		return NULL;
	}
	if (o.feedback_hold_us > TLB_HOST_FEEDBACK_HOLD_US_MAX) {
		host_err(err, errlen, "feedback: hold %u us out of range 0..%u",
			 o.feedback_hold_us, TLB_HOST_FEEDBACK_HOLD_US_MAX);
		return NULL;
	}
	if (n_cores == 0 || n_cores > TLB_CR_MAX_CORES) {
		host_err(err, errlen, "feedback: %u cores is not in 1..%u",
			 n_cores, TLB_CR_MAX_CORES);
		return NULL;
	}
	if (posix_memalign(&mem, HOST_LINE, sizeof(*h)) != 0) {
		host_err(err, errlen, "feedback: out of memory");
		return NULL;
	}
	h = mem;
	memset(h, 0, sizeof(*h));
	h->packet = true;
	h->state_only = o.feedback_state_only;
	h->batch = o.batch;
	h->hold_ns = h->state_only ? 0 : (uint64_t)o.feedback_hold_us * 1000u;
	h->clock_ns = o.clock_ns != NULL ? o.clock_ns : mono_clock;
	h->clock_arg = o.clock_arg;
	h->cur = calloc(1, sizeof(*h->cur));
	if (h->cur == NULL || pthread_mutex_init(&h->lock, NULL) != 0) {
		host_err(err, errlen, "feedback: out of memory");
		free(h->cur);
		free(h);
		return NULL;
	}
	/* Larger at every open, so that the daemon can tell the newest host
	 * from frames of an older one still on their way. */
	clock_gettime(CLOCK_REALTIME, &ts);
	h->cur->host_epoch =
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (h->cur->host_epoch == 0)
		h->cur->host_epoch = 1;
	h->cur->n_cores = n_cores;
	h->cur->gen = 1;
	h->gen = 1;
	return h;
}

int
tlb_host_agent_ring(struct tlb_host *h, const char *name, char *err,
		    size_t errlen)
{
	struct tlb_cr *cr;
	int rc = -1;

	if (h == NULL || !h->packet) {
		host_err(err, errlen,
			 "agent ring: only for a host opened with "
			 "tlb_host_open_packet");
		return -1;
	}
	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < TLB_CR_MAX_CORES; i++) {
		if (h->cores[i] != NULL && h->cores[i]->att != NULL) {
			host_err(err, errlen,
				 "agent ring %s: core %u already reports; "
				 "create the ring before the cores' first call",
				 name, i);
			goto out;
		}
	}
	if (h->cur->cr != NULL) {
		host_err(err, errlen, "agent ring %s: there is one already",
			 name);
		goto out;
	}
	if (tlb_cr_create(name, h->cur->n_cores, 16, 0600, &cr, err, errlen) !=
	    0)
		goto out;
	h->cur->cr = cr;
	rc = 0;
out:
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void
tlb_host_close(struct tlb_host *h)
{
	struct host_att *a, *next;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->lock);
	/* The core threads are done (the contract), so posting on their
	 * behalf keeps the single writer. */
	for (uint32_t i = 0; i < TLB_CR_MAX_CORES; i++) {
		struct tlb_host_core *c = h->cores[i];

		if (c == NULL)
			continue;
		if (c->att == h->cur && c->st.pending != 0)
			core_post(c);
		free(c);
	}
	for (a = h->retired; a != NULL; a = next) {
		next = a->next;
		att_free(h, a);
	}
	/* The kick agent's region is ours: closed and unlinked. */
	if (h->packet && h->cur->cr != NULL)
		tlb_cr_destroy(h->cur->cr, true);
	else if (h->cur->cr != NULL)
		tlb_cr_detach(h->cur->cr);
	free(h->cur);
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

uint32_t
tlb_host_n_cores(struct tlb_host *h)
{
	uint32_t n;

	if (h == NULL)
		return 0;
	pthread_mutex_lock(&h->lock);
	n = h->cur->n_cores;
	pthread_mutex_unlock(&h->lock);
	return n;
}

uint64_t
tlb_host_epoch(struct tlb_host *h)
{
	uint64_t e;

	if (h == NULL)
		return 0;
	pthread_mutex_lock(&h->lock);
	e = h->cur->host_epoch;
	pthread_mutex_unlock(&h->lock);
	return e;
}

struct tlb_host_core *
tlb_host_core(struct tlb_host *h, uint32_t core)
{
	struct tlb_host_core *c = NULL;
	void *mem;

	if (h == NULL || core >= TLB_CR_MAX_CORES)
		return NULL;
	pthread_mutex_lock(&h->lock);
	if (core >= h->cur->n_cores)
		goto out;
	c = h->cores[core];
	if (c != NULL)
		goto out;
	if (posix_memalign(&mem, HOST_LINE, sizeof(*c)) != 0)
		goto out;
	c = mem;
	memset(c, 0, sizeof(*c));
	c->host = h;
	c->core = core;
	c->batch = h->batch;
	/* A thread that uses the handle runs, until it says otherwise. */
	c->state = TLB_RUN_RUNNING;
	h->cores[core] = c;
out:
	pthread_mutex_unlock(&h->lock);
	return c;
}

void
tlb_host_complete(struct tlb_host_core *c, uint32_t work_ns,
		  uint32_t service_ns)
{
	if (unlikely(c == NULL))
		return;
	/* Before counting: a completion after the switch is the new
	 * daemon's and must not be discarded with the old ones. */
	core_sync(c);
	/* The first completion held starts the hold. */
	if (c->st.pending == 0 && c->host->hold_ns != 0)
		c->due_ns = host_now(c->host) + c->host->hold_ns;
	c->pend_work += work_ns;
	c->pend_svc += service_ns;
	stat_set(&c->st.pending, c->st.pending + 1);
	stat_add(&c->st.completed, 1);
	if (unlikely(c->st.pending >= c->batch))
		core_post(c);
}

int
tlb_host_flush(struct tlb_host_core *c)
{
	if (unlikely(c == NULL))
		return -EINVAL;
	core_sync(c);
	if (c->st.pending == 0)
		return 0;
	/* Packet transport with a hold: the hold says when. */
	if (c->host->packet && c->host->hold_ns != 0)
		return 0;
	core_post(c);
	if (c->host->packet)
		return 0;
	return c->st.pending == 0 ? 0 : -EAGAIN;
}

void
tlb_host_set_running(struct tlb_host_core *c, bool running)
{
	if (unlikely(c == NULL))
		return;
	enum tlb_core_run_state st = running ? TLB_RUN_RUNNING : TLB_RUN_PARKED;

	if (c->offline)
		return;
	if (c->host->packet) {
		c->state = st;
		/* The kick agent's region, if any, hears it at once. */
		if (core_sync(c) && c->att->cr != NULL) {
			if (unlikely(c->tid != self_tid()))
				publish_thread(c);
			tlb_cr_set_state(c->att->cr, c->core, st);
		}
		return;
	}
	c->state = st;
	if (core_sync(c)) {
		if (unlikely(c->tid != self_tid()))
			publish_thread(c);
		tlb_cr_set_state(c->att->cr, c->core, c->state);
	}
}

void
tlb_host_beat(struct tlb_host_core *c)
{
	if (unlikely(c == NULL))
		return;
	if (!core_sync(c))
		return;
	if (c->host->packet) {
		c->beats++;
		if (!c->fb_due &&
		    host_now(c->host) - c->fb_ns >= HOST_FB_IDLE_NS)
			c->fb_due = true;
		if (c->att->cr == NULL)
			return;
	}
	tlb_cr_beat(c->att->cr, c->core);
}

void
tlb_host_set_offline(struct tlb_host_core *c)
{
	if (unlikely(c == NULL))
		return;
	c->state = TLB_RUN_OFFLINE;
	c->offline = true;
	if (!core_sync(c))
		return;
	if (c->host->packet)
		c->fb_due = true;
	if (c->att->cr != NULL)
		tlb_cr_set_state(c->att->cr, c->core, TLB_RUN_OFFLINE);
}

void
tlb_host_feedback_unsent(struct tlb_host_core *c)
{
	if (likely(c != NULL))
		c->fb_due = true;
}

/* Whether the core's frame is due now (see "Packet transport" in
 * host.h). The clock is read only while completions are held under a
 * hold and nothing else made the frame due. */
static inline bool
feedback_due(struct tlb_host_core *c)
{
	if (c->fb_due || c->state != c->fb_state)
		return true;
	return c->st.pending != 0 && c->host->hold_ns != 0 &&
	       (int64_t)(host_now(c->host) - c->due_ns) >= 0;
}

size_t
tlb_host_feedback(struct tlb_host_core *c, void *buf, size_t len)
{
	struct tlb_fb_msg m;
	uint64_t n;

	if (unlikely(c == NULL) || !c->host->packet || !core_sync(c) ||
	    len < TLB_HOST_FEEDBACK_LEN || likely(!feedback_due(c)))
		return 0;
	n = c->st.pending;
	c->tot_completions += n;
	c->tot_work += c->pend_work;
	c->tot_svc += c->pend_svc;
	c->pend_work = 0;
	c->pend_svc = 0;
	stat_set(&c->st.pending, 0);
	if (n != 0) {
		stat_add(&c->st.posted, n);
		stat_add(&c->st.records, 1);
	}
	m.core = (uint16_t)c->core;
	m.state = c->state;
	m.host_epoch = c->att->host_epoch;
	m.heartbeat = c->beats;
	m.completions = c->tot_completions;
	m.work_ns = c->tot_work;
	m.service_ns = c->tot_svc;
	c->fb_due = false;
	c->fb_state = c->state;
	c->fb_ns = host_now(c->host);
	return tlb_fb_build(buf, len, NULL, &m);
}

void
tlb_host_core_stats(const struct tlb_host_core *c,
		    struct tlb_host_core_stats *out)
{
	if (out == NULL)
		return;
	memset(out, 0, sizeof(*out));
	if (c == NULL)
		return;
	out->completed = __atomic_load_n(&c->st.completed, __ATOMIC_RELAXED);
	out->posted = __atomic_load_n(&c->st.posted, __ATOMIC_RELAXED);
	out->records = __atomic_load_n(&c->st.records, __ATOMIC_RELAXED);
	out->ring_full = __atomic_load_n(&c->st.ring_full, __ATOMIC_RELAXED);
	out->pending = __atomic_load_n(&c->st.pending, __ATOMIC_RELAXED);
	out->discarded = __atomic_load_n(&c->st.discarded, __ATOMIC_RELAXED);
	out->switches = __atomic_load_n(&c->st.switches, __ATOMIC_RELAXED);
}

bool
tlb_host_stale_now(struct tlb_host *h)
{
	struct host_att *a;
	dev_t dev = 0; /* set by name_identity() when it returns 0 */
	ino_t ino = 0;
	bool stale;
	int rc;

	if (h == NULL)
		return true;
	/* No region to go away: a daemon that restarts takes the next
	 * frames of each core as the base of its view. */
	if (h->packet)
		return false;
	pthread_mutex_lock(&h->lock);
	a = h->cur;
	stale = tlb_cr_closed(a->cr);
	if (!stale) {
		rc = name_identity(h->name, &dev, &ino);
		/* Gone, or another object: the daemon that made ours is
		 * not the one serving the name. Other errors (out of file
		 * descriptors, say) prove nothing. */
		if (rc == -ENOENT ||
		    (rc == 0 && (dev != a->dev || ino != a->ino)))
			stale = true;
	}
	if (stale)
		__atomic_store_n(&h->stale, true, __ATOMIC_RELEASE);
	__atomic_store_n(&h->next_check_ns, mono_ns() + h->check_ns,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->lock);
	return stale;
}

bool
tlb_host_stale(struct tlb_host *h)
{
	uint64_t now, next;

	if (h == NULL)
		return true;
	if (h->packet)
		return false;
	if (__atomic_load_n(&h->stale, __ATOMIC_ACQUIRE))
		return true;
	now = mono_ns();
	next = __atomic_load_n(&h->next_check_ns, __ATOMIC_RELAXED);
	if (now < next)
		return false;
	/* Many threads may call this; one of them looks. */
	if (!__atomic_compare_exchange_n(&h->next_check_ns, &next,
					 now + h->check_ns, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return __atomic_load_n(&h->stale, __ATOMIC_ACQUIRE);
	return tlb_host_stale_now(h);
}

int
tlb_host_reattach(struct tlb_host *h, char *err, size_t errlen)
{
	struct host_att *a, *old;

	if (h == NULL) {
		host_err(err, errlen, "credit ring: no host handle");
		return -1;
	}
	if (h->packet)
		return 0;
	pthread_mutex_lock(&h->lock);
	a = att_open(h->name, err, errlen);
	if (a == NULL) {
		pthread_mutex_unlock(&h->lock);
		return -1;
	}
	old = h->cur;
	a->gen = old->gen + 1;
	h->cur = a;
	/* Release: a core that sees the new generation finds h->cur set
	 * (it reads it under the lock anyway). */
	__atomic_store_n(&h->gen, a->gen, __ATOMIC_RELEASE);
	old->retired = true;
	if (old->refs == 0) {
		att_free(h, old);
	} else {
		old->next = h->retired;
		h->retired = old;
	}
	__atomic_store_n(&h->stale, false, __ATOMIC_RELEASE);
	__atomic_store_n(&h->next_check_ns, mono_ns() + h->check_ns,
			 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&h->lock);
	return 0;
}
