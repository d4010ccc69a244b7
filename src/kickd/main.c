/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-kickd: the host side of the scheduler kick.
 *
 * When host cores are threads (or vCPUs) sharing physical CPUs, a request
 * steered to a core whose thread is not on a CPU waits for the thread's
 * next time slice: milliseconds. turbolbd rings that core's doorbell in the
 * credit ring; this agent sees the ring and makes the thread run now, with
 * a temporary SCHED_FIFO boost that it reverts as soon as the core's work
 * has drained, or when --max-boost-us has passed, whichever comes first.
 * The boost stands in for kicking a hypervisor's scheduler (the NIC cannot
 * reach one in this emulation); see docs/host-integration.md.
 *
 *   turbolb-kickd --credit-ring NAME [--poll-us 20] [--quiet-us 50]
 *       [--max-boost-us 1000] [--priority 1] [--self-priority 0]
 *       [--no-sched-watch] [--watch-only] [--stats FILE]
 *
 * It is a separate process, not a thread of the server: it attaches to the
 * region as a third party (tlb_cr_attach_agent: no new host epoch), learns
 * each core's thread from the slot (libturbolb-host publishes pid and tid
 * at the core's first call) and writes only its own words: the sched flags
 * and its counters.
 *
 * Waiting on the doorbells is a poll of the counters every --poll-us: the
 * writer is the NIC side, another machine on real hardware, which cannot
 * make a futex wake on the host; a PCIe write into host memory is what it
 * can do, and polling that memory is the honest model of it.
 *
 * Seeing preemption: a busy-polling server thread says RUNNING even while
 * the kernel has it waiting on a run queue, so the daemon would never kick
 * it. The agent watches each thread's context switches through a perf
 * software event (PERF_RECORD_SWITCH records of that thread, read from the
 * event's ring buffer without a system call) and publishes "off its CPU"
 * in the slot's sched word (TLB_CR_SCHED_OFF_CPU); tlb_cr_state() then
 * reads PARKED for that core, so the daemon's kick and prefer_running see
 * it. /proc/<tid>/stat cannot tell running from runnable ('R' for both)
 * and /proc/<tid>/schedstat moves only at ticks and switches; the switch
 * records are exact, and late only by the agent's poll interval.
 *
 * The same records tell which boosted thread holds the CPU that a newly
 * boosted one waits for; boosts share one priority, so the older one
 * yields (kick_yield) rather than keep the newer one waiting.
 *
 * The decision of what to do with a core is a pure function, kick_step(),
 * above the program proper, so that tests/unit/test_kick.c can include
 * this file with TLB_KICKD_TEST defined and test it on constructed states.
 * docs/host-integration.md ("The scheduler kick") has the whole design.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/perf_event.h>

#include "turbolb/credit_ring.h"

/* ---- decision logic (pure) ---- */

struct kick_params {
	/* No doorbell ring and no credit record for this long, after the
	 * core has shown that it ran: its work has drained. */
	uint64_t quiet_ns;
	/* No boost lasts longer: a buggy core cannot keep its CPU. */
	uint64_t max_boost_ns;
};

/* A thread's place as its context-switch records tell it. */
enum kick_cpu {
	KICK_CPU_UNKNOWN,	/* not watched, no record yet, records lost */
	KICK_CPU_ON,
	KICK_CPU_OFF,
};

/* One look at a core's slot, and at its thread. */
struct kick_obs {
	uint64_t doorbell;
	uint64_t heartbeat;
	uint32_t records;	/* credit records posted (free running) */
	enum tlb_core_run_state host_state; /* the thread's own word */
	bool thread_ok;		/* a live thread to boost is known */
	enum kick_cpu cpu;	/* where the thread is */
};

/* What the agent did for one core, over its whole life. */
struct kick_counts {
	uint64_t rings;		/* doorbell rings seen, each exactly once */
	uint64_t served;	/* rings that started or extended a boost */
	uint64_t ignored;	/* rings with no thread to boost, or whose
				 * boost failed */
	uint64_t boosts;	/* boosts started */
	uint64_t reverted_drain;
	uint64_t reverted_bound;
	uint64_t reverted_yield;	/* gave its CPU to a newer boost */
	uint64_t boost_failures;
	uint64_t boosted_ns;	/* time spent boosted */
};

/* The agent's memory of one core. kick_core_forget clears all of it but
 * the counters. */
struct kick_core {
	bool primed;		/* the fields below hold a first look */
	bool boosted;
	bool posts_records;	/* its records moved since we look */
	bool saw_running;	/* RUNNING at or since the boost */
	bool saw_on_cpu;	/* on its CPU at or since the boost */
	uint64_t doorbell;
	uint64_t heartbeat;
	uint32_t records;
	uint32_t records_at_boost;
	uint64_t hb_at_boost;
	uint64_t boost_ns;	/* when the boost began */
	uint64_t active_ns;	/* last ring or record (or the boost) */
	uint64_t boost_rings;	/* rings the boost was started for */
	struct kick_counts n;
};

enum kick_action {
	KICK_NONE,
	KICK_BOOST,		/* make the thread run now */
	KICK_REVERT_DRAIN,	/* its work drained: back to its policy */
	KICK_REVERT_BOUND,	/* boosted max_boost_ns: back, whatever */
	KICK_REVERT_YIELD,	/* a newer boost needs its CPU: back */
};

/* Forgets the core's doorbell and boost (a new region, a new thread);
 * the caller has reverted any boost already. */
static void
kick_core_forget(struct kick_core *k)
{
	struct kick_counts n = k->n;

	memset(k, 0, sizeof(*k));
	k->n = n;
}

static enum kick_action
kick_end(struct kick_core *k, uint64_t now_ns, enum kick_action a)
{
	k->boosted = false;
	k->n.boosted_ns += now_ns - k->boost_ns;
	if (a == KICK_REVERT_BOUND)
		k->n.reverted_bound++;
	else if (a == KICK_REVERT_YIELD)
		k->n.reverted_yield++;
	else
		k->n.reverted_drain++;
	return a;
}

/* Decides what to do with a core after looking at its slot at now_ns.
 *
 * Doorbell: a counter only the NIC side bumps. The difference to the last
 * look is the number of rings since, so each ring is seen exactly once
 * however many come between two looks; a counter that went back belongs
 * to a new region and is only recorded. Rate limiting is the daemon's
 * (kick.min_interval_us): the agent acts on every ring it sees.
 *
 * Boost: a ring is the NIC side's word that the core has work and its
 * thread is not running (or makes no progress). A core not boosted, with
 * a live thread that is not OFFLINE, is boosted; a ring for a boosted core
 * extends its boost (the quiet clock starts again).
 *
 * Drain: the host does not know how many requests the NIC side has
 * outstanding on a core, so drained means: the core has shown that it ran
 * since the boost began, and then for quiet_ns neither a ring nor a credit
 * record came. Proof that it ran: its thread was seen on its CPU (a
 * polling thread on its CPU serves what is queued within microseconds, so
 * quiet_ns of that with no completion means nothing is queued), or it
 * posted a credit record, or, for a core that posts none (in-band
 * credits), its heartbeat moved. The quiet clock starts again at each
 * ring, each record and when the thread gets on its CPU.
 * A thread that was RUNNING at or since the boost and now says PARKED
 * (about to sleep: nothing left to do), or went OFFLINE or away, has
 * drained too. A thread kicked while PARKED stays boosted until it runs
 * (it may be asleep) or the bound.
 *
 * Bound: a boost that has lasted max_boost_ns ends whatever the core does. */
static enum kick_action
kick_step(struct kick_core *k, const struct kick_obs *o, uint64_t now_ns,
	  const struct kick_params *p)
{
	uint64_t rings = 0;
	bool ran;

	if (!k->primed || o->doorbell < k->doorbell) {
		/* Rings from before we looked are history, not kicks. */
		k->primed = true;
		k->doorbell = o->doorbell;
		k->records = o->records;
		k->heartbeat = o->heartbeat;
		if (!k->boosted)
			return KICK_NONE;
	}
	rings = o->doorbell - k->doorbell;
	k->doorbell = o->doorbell;
	k->n.rings += rings;
	if (rings != 0)
		k->active_ns = now_ns;
	if (o->records != k->records) {
		k->records = o->records;
		k->posts_records = true;
		k->active_ns = now_ns;
	}
	k->heartbeat = o->heartbeat;

	if (k->boosted) {
		k->n.served += rings;
		if (o->host_state == TLB_RUN_RUNNING)
			k->saw_running = true;
		if (o->cpu == KICK_CPU_ON && !k->saw_on_cpu) {
			k->saw_on_cpu = true;
			k->active_ns = now_ns;
		}
		if (!o->thread_ok || o->host_state == TLB_RUN_OFFLINE ||
		    (k->saw_running && o->host_state == TLB_RUN_PARKED))
			return kick_end(k, now_ns, KICK_REVERT_DRAIN);
		ran = k->saw_on_cpu || o->records != k->records_at_boost ||
		      (!k->posts_records && o->heartbeat != k->hb_at_boost);
		if (ran && now_ns - k->active_ns >= p->quiet_ns)
			return kick_end(k, now_ns, KICK_REVERT_DRAIN);
		if (now_ns - k->boost_ns >= p->max_boost_ns)
			return kick_end(k, now_ns, KICK_REVERT_BOUND);
		return KICK_NONE;
	}
	if (rings == 0)
		return KICK_NONE;
	if (!o->thread_ok || o->host_state == TLB_RUN_OFFLINE) {
		k->n.ignored += rings;
		return KICK_NONE;
	}
	k->boosted = true;
	k->boost_ns = now_ns;
	k->active_ns = now_ns;
	k->records_at_boost = o->records;
	k->hb_at_boost = o->heartbeat;
	k->saw_running = o->host_state == TLB_RUN_RUNNING;
	/* On its CPU already (the NIC side's view was stale, or this is a
	 * stall kick): the quiet clock runs from now. */
	k->saw_on_cpu = o->cpu == KICK_CPU_ON;
	k->boost_rings = rings;
	k->n.served += rings;
	k->n.boosts++;
	return KICK_BOOST;
}

/* A newer boost is for a thread waiting on the CPU this boosted thread
 * holds. Boosts have one priority, so the newer one would wait behind
 * this one, for as long as this one keeps finding work, up to the bound:
 * a kick must make its thread run now, as the hypervisor's scheduler
 * would on the NIC's kick, so the older boost ends. If its core still has
 * work, the NIC side kicks it again (a stall kick). */
static enum kick_action
kick_yield(struct kick_core *k, uint64_t now_ns)
{
	if (!k->boosted)
		return KICK_NONE;
	return kick_end(k, now_ns, KICK_REVERT_YIELD);
}

/* The boost kick_step asked for was not made: the thread is gone or
 * already real-time, the agent only watches, or (failure) the kernel
 * refused. Undoes its bookkeeping: its rings count as ignored. */
static void
kick_boost_undo(struct kick_core *k, bool failure)
{
	if (!k->boosted)
		return;
	k->boosted = false;
	k->n.boosts--;
	k->n.served -= k->boost_rings;
	k->n.ignored += k->boost_rings;
	if (failure)
		k->n.boost_failures++;
}

/* What the slot publishes for the daemon's telemetry: a boost that
 * yielded ended before the bound, with its core's turn done for now, so
 * it counts with the drained ones there. */
static void
kick_slot_stats(const struct kick_core *k, struct tlb_cr_kick_stats *ks)
{
	ks->kicks_served = k->n.served;
	ks->boosts = k->n.boosts;
	ks->reverted_drain = k->n.reverted_drain + k->n.reverted_yield;
	ks->reverted_bound = k->n.reverted_bound;
}

/* A thread's context switches as its perf ring tells them. */
struct kick_perf {
	enum kick_cpu where;
	int32_t cpu;		/* CPU of its last switch; -1: not known */
	uint64_t switches;	/* switch records seen */
	uint64_t lost;		/* lost-records records seen */
};

/* Consumes the perf records in data[*tail..head) (a ring of size bytes, a
 * power of two) into st: where the last context-switch record left the
 * thread, and on which CPU. A PERF_RECORD_SWITCH is an 8-byte header
 * whose misc says out or in, followed by the sample id the event asks for
 * (sample_id_all, PERF_SAMPLE_CPU: u32 cpu, u32 reserved). A lost-records
 * record makes the place unknown until the next switch; other records are
 * skipped by their size. Records are 8-byte multiples at 8-byte offsets,
 * so a header or the cpu word never straddles the end of the ring. A
 * malformed ring is skipped whole. */
static void
kick_perf_scan(const uint8_t *data, uint64_t size, uint64_t *tail,
	       uint64_t head, struct kick_perf *st)
{
	struct perf_event_header h;
	uint64_t t = *tail;
	uint32_t cpu;

	if (head - t > size)
		goto bad;
	while (t != head) {
		if (head - t < sizeof(h))
			goto bad;
		memcpy(&h, data + (t & (size - 1)), sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > head - t)
			goto bad;
		if (h.type == PERF_RECORD_SWITCH) {
			st->where = (h.misc & PERF_RECORD_MISC_SWITCH_OUT) ?
					    KICK_CPU_OFF : KICK_CPU_ON;
			st->cpu = -1;
			if (h.size >= sizeof(h) + 2 * sizeof(uint32_t)) {
				memcpy(&cpu, data + ((t + sizeof(h)) &
						     (size - 1)),
				       sizeof(cpu));
				st->cpu = cpu > INT32_MAX ? -1 : (int32_t)cpu;
			}
			st->switches++;
		} else if (h.type == PERF_RECORD_LOST) {
			st->where = KICK_CPU_UNKNOWN;
			st->cpu = -1;
			st->lost++;
		}
		t += h.size;
	}
	*tail = t;
	return;
bad:
	*tail = head;
	st->where = KICK_CPU_UNKNOWN;
	st->cpu = -1;
}

#ifndef TLB_KICKD_TEST

/* ---- the program ---- */

#define DEFAULT_POLL_US 20u
#define DEFAULT_QUIET_US 50u
#define DEFAULT_MAX_BOOST_US 1000u
#define DEFAULT_PRIORITY 1
#define CHECK_NS 100000000ull	/* region and thread checks: 100 ms */
#define ATTACH_RETRY_NS 100000000ull
#define PERF_DATA_PAGES 8u	/* ring buffer per thread: 32 KiB */
#define KD_HIST 7		/* < 50, 100, 200, 500, 1000, 2000 us, more */

static const uint64_t hist_us[KD_HIST - 1] = { 50, 100, 200, 500, 1000, 2000 };

struct kd_conf {
	const char *ring;
	uint32_t poll_us;
	uint32_t quiet_us;
	uint32_t max_boost_us;
	int priority;
	int self_priority;
	bool sched_watch;
	bool boost;
	const char *stats_file;
};

/* One core, as the agent runs it. */
struct kd_core {
	struct kick_core k;
	uint32_t pid;		/* its thread, as the slot names it */
	uint32_t tid;
	bool thread_ok;		/* that thread exists */
	/* what to restore after the boost */
	int orig_policy;
	struct sched_param orig_param;
	/* context switches of the thread */
	int perf_fd;
	uint8_t *perf_map;
	size_t perf_len;
	uint64_t perf_tail;
	struct kick_perf perf;
	uint64_t rt_skips;	/* rings for a thread already real-time */
	uint64_t threads;	/* threads seen serving this core */
	uint32_t last_pid;	/* the last of them, for the report */
	uint32_t last_tid;
	/* how the boosts went: how long they lasted, and how long a thread
	 * that was off its CPU took to get on it (at poll granularity) */
	bool wait_cpu;		/* boosted while off its CPU, not on yet */
	uint64_t len_hist[KD_HIST];
	uint64_t oncpu_hist[KD_HIST];
	uint64_t never_on_cpu;	/* boosts that ended with it still off */
	/* last published to the slot */
	uint32_t sched_pub;
	struct tlb_cr_kick_stats ks_pub;
};

static volatile sig_atomic_t force_quit;
static struct kd_conf conf;
static struct tlb_cr *cr;
static dev_t cr_dev;
static ino_t cr_ino;
static uint32_t n_cores;
static struct kd_core *cores;
static uint64_t reattaches;
static bool perf_warned;
static size_t page_size;
static bool boost_warned;

static void
kd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
kd_log(const char *fmt, ...)
{
	va_list ap;

	fputs("turbolb-kickd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
signal_handler(int sig)
{
	(void)sig;
	force_quit = 1;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s --credit-ring NAME [options]\n"
		"  --credit-ring NAME   the daemon's credit ring (e.g. /turbolb-credits)\n"
		"  --poll-us U          look at the doorbells every U us (default %u)\n"
		"  --quiet-us U         a boosted core that ran and then had no ring and no\n"
		"                       credit record for U us has drained (default %u)\n"
		"  --max-boost-us U     no boost lasts longer (default %u)\n"
		"  --priority P         SCHED_FIFO priority of a boost, 1..99 (default %d)\n"
		"  --self-priority P    run the agent itself SCHED_FIFO P (default 0: no)\n"
		"  --no-sched-watch     do not watch context switches: never mark a core\n"
		"                       off its CPU (only PARKED cores and stalls get kicks)\n"
		"  --watch-only         publish off-CPU, never boost (no CAP_SYS_NICE needed)\n"
		"  --stats FILE         final JSON counters to FILE instead of stdout\n"
		"  --help               this text\n"
		"Needs CAP_SYS_NICE (boosts) and, to watch threads of another user,\n"
		"CAP_PERFMON. Stops on SIGINT or SIGTERM, reverting every boost.\n",
		prog, DEFAULT_POLL_US, DEFAULT_QUIET_US, DEFAULT_MAX_BOOST_US,
		DEFAULT_PRIORITY);
}

static int
parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
	  uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v < min || v > max) {
		kd_log("%s: '%s' is not a number in %u..%u", opt, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_RING = 256,
	OPT_POLL_US,
	OPT_QUIET_US,
	OPT_MAX_BOOST_US,
	OPT_PRIORITY,
	OPT_SELF_PRIORITY,
	OPT_NO_SCHED_WATCH,
	OPT_WATCH_ONLY,
	OPT_STATS,
	OPT_HELP,
};

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"credit-ring", required_argument, NULL, OPT_RING},
		{"poll-us", required_argument, NULL, OPT_POLL_US},
		{"quiet-us", required_argument, NULL, OPT_QUIET_US},
		{"max-boost-us", required_argument, NULL, OPT_MAX_BOOST_US},
		{"priority", required_argument, NULL, OPT_PRIORITY},
		{"self-priority", required_argument, NULL, OPT_SELF_PRIORITY},
		{"no-sched-watch", no_argument, NULL, OPT_NO_SCHED_WATCH},
		{"watch-only", no_argument, NULL, OPT_WATCH_ONLY},
		{"stats", required_argument, NULL, OPT_STATS},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	uint32_t v;
	int c;

	conf.poll_us = DEFAULT_POLL_US;
	conf.quiet_us = DEFAULT_QUIET_US;
	conf.max_boost_us = DEFAULT_MAX_BOOST_US;
	conf.priority = DEFAULT_PRIORITY;
	conf.sched_watch = true;
	conf.boost = true;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_RING:
			conf.ring = optarg;
			break;
		case OPT_POLL_US:
			if (parse_u32("--poll-us", optarg, 1, 100000,
				      &conf.poll_us) < 0)
				return -1;
			break;
		case OPT_QUIET_US:
			if (parse_u32("--quiet-us", optarg, 1, 1000000,
				      &conf.quiet_us) < 0)
				return -1;
			break;
		case OPT_MAX_BOOST_US:
			if (parse_u32("--max-boost-us", optarg, 10, 1000000,
				      &conf.max_boost_us) < 0)
				return -1;
			break;
		case OPT_PRIORITY:
			if (parse_u32("--priority", optarg, 1, 99, &v) < 0)
				return -1;
			conf.priority = (int)v;
			break;
		case OPT_SELF_PRIORITY:
			if (parse_u32("--self-priority", optarg, 0, 99, &v) < 0)
				return -1;
			conf.self_priority = (int)v;
			break;
		case OPT_NO_SCHED_WATCH:
			conf.sched_watch = false;
			break;
		case OPT_WATCH_ONLY:
			conf.boost = false;
			break;
		case OPT_STATS:
			conf.stats_file = optarg;
			break;
		case OPT_HELP:
			usage(stdout, argv[0]);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		kd_log("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (conf.ring == NULL) {
		kd_log("--credit-ring is required");
		usage(stderr, argv[0]);
		return -1;
	}
	if (conf.max_boost_us < conf.quiet_us)
		kd_log("note: --max-boost-us %u is below --quiet-us %u: every boost ends by the bound",
		       conf.max_boost_us, conf.quiet_us);
	return 0;
}

/* ---- privileges ---- */

static bool
has_cap(unsigned int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return (data[cap / 32].effective & (1u << (cap % 32))) != 0;
}

/* Boosts need CAP_SYS_NICE; say so at once rather than fail at the first
 * kick. Then one real try on ourselves: with CONFIG_RT_GROUP_SCHED a cgroup
 * without a real-time budget refuses SCHED_FIFO even to root. */
static int
check_privileges(void)
{
	struct sched_param sp = { .sched_priority = conf.priority };
	struct sched_param orig;
	int pol;

	if (!conf.boost)
		return 0;
	if (!has_cap(CAP_SYS_NICE)) {
		kd_log("CAP_SYS_NICE is missing: the agent boosts other processes' threads to SCHED_FIFO and back. Run it as root, or give it the capability (setcap cap_sys_nice,cap_perfmon+ep turbolb-kickd, or AmbientCapabilities=CAP_SYS_NICE CAP_PERFMON in its unit); --watch-only needs neither");
		return -1;
	}
	pol = sched_getscheduler(0);
	if (pol < 0 || sched_getparam(0, &orig) != 0) {
		kd_log("sched_getscheduler: %s", strerror(errno));
		return -1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		kd_log("a SCHED_FIFO %d trial on the agent itself failed: %s%s",
		       conf.priority, strerror(errno),
		       errno == EPERM ?
		       " (with CONFIG_RT_GROUP_SCHED, the cgroup needs cpu.rt_runtime_us > 0)" :
		       "");
		return -1;
	}
	if (sched_setscheduler(0, pol, &orig) != 0) {
		kd_log("cannot return to policy %d: %s", pol, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- threads: perf switch records and the boost ---- */

static void
perf_close(struct kd_core *c)
{
	if (c->perf_map != NULL)
		munmap(c->perf_map, c->perf_len);
	if (c->perf_fd >= 0)
		close(c->perf_fd);
	c->perf_map = NULL;
	c->perf_fd = -1;
	c->perf.where = KICK_CPU_UNKNOWN;
	c->perf.cpu = -1;
}

/* A dummy software event on the thread alone (any CPU), recording only
 * its context switches into a ring we read in place. */
static void
perf_open(struct kd_core *c, uint32_t core)
{
	struct perf_event_attr a;
	void *m;
	int fd;

	c->perf.where = KICK_CPU_UNKNOWN;
	c->perf.cpu = -1;
	if (!conf.sched_watch)
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	/* Each switch record says on which CPU: a newer boost can then
	 * tell which boosted thread holds the CPU it waits for. */
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_CPU;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)c->tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (!perf_warned)
			kd_log("core %u: perf_event_open on thread %u: %s; this thread's preemption is not watched (needs CAP_PERFMON, or perf_event_paranoid <= 2 and the same user)",
			       core, c->tid, strerror(errno));
		perf_warned = true;
		return;
	}
	c->perf_len = page_size * (1 + PERF_DATA_PAGES);
	m = mmap(NULL, c->perf_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		if (!perf_warned)
			kd_log("core %u: mmap of the perf ring: %s", core,
			       strerror(errno));
		perf_warned = true;
		close(fd);
		return;
	}
	c->perf_fd = fd;
	c->perf_map = m;
	c->perf_tail = 0;
}

static void
perf_poll(struct kd_core *c)
{
	struct perf_event_mmap_page *mp;
	uint64_t head;

	if (c->perf_map == NULL)
		return;
	mp = (struct perf_event_mmap_page *)c->perf_map;
	/* Acquire: the records are written before data_head moves. */
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	if (head == c->perf_tail)
		return;
	kick_perf_scan(c->perf_map + page_size,
		       (uint64_t)page_size * PERF_DATA_PAGES, &c->perf_tail, head,
		       &c->perf);
	/* Release: we are done reading what the kernel may now reuse. */
	__atomic_store_n(&mp->data_tail, c->perf_tail, __ATOMIC_RELEASE);
}

/* The slot names a thread: does it still exist, in that process? A tid
 * left behind by a server that was killed may come back as an unrelated
 * thread; in the same process under the same pid that is all but
 * impossible. */
static bool
thread_alive(uint32_t pid, uint32_t tid)
{
	char path[64];
	struct stat st;

	if (pid == 0 || tid == 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return stat(path, &st) == 0;
}

static bool
policy_is_fair(int pol)
{
	return pol == SCHED_OTHER || pol == SCHED_BATCH || pol == SCHED_IDLE;
}

/* Returns 0 when boosted, 1 when there was nothing to boost, -1 when
 * the kernel refused. */
static int
boost(struct kd_core *c, uint32_t core)
{
	struct sched_param sp = { .sched_priority = conf.priority };
	int pol;

	if (!conf.boost)
		return 1;
	if (!thread_alive(c->pid, c->tid)) {
		c->thread_ok = false;
		return 1;
	}
	pol = sched_getscheduler((pid_t)c->tid);
	if (pol < 0 || sched_getparam((pid_t)c->tid, &c->orig_param) != 0)
		return errno == ESRCH ? 1 : -1;
	/* A thread someone made real-time already runs when it can; a
	 * priority 1 boost could only lower it. */
	if (!policy_is_fair(pol & ~SCHED_RESET_ON_FORK)) {
		c->rt_skips++;
		return 1;
	}
	c->orig_policy = pol;
	/* Reset on fork: a child of the boosted thread starts as SCHED_OTHER,
	 * not as a real-time task nobody reverts. */
	if (sched_setscheduler((pid_t)c->tid, SCHED_FIFO | SCHED_RESET_ON_FORK,
			       &sp) != 0) {
		int e = errno;

		if (e == ESRCH)
			return 1;	/* it has just exited */
		if (!boost_warned)
			kd_log("core %u: boosting thread %u: %s", core, c->tid,
			       strerror(e));
		boost_warned = true;
		return -1;
	}
	return 0;
}

static void
revert(struct kd_core *c, uint32_t core)
{
	/* sched_setscheduler keeps the thread's nice value. A thread that
	 * is gone needs nothing. */
	if (sched_setscheduler((pid_t)c->tid, c->orig_policy,
			       &c->orig_param) != 0 && errno != ESRCH)
		kd_log("core %u: reverting thread %u to policy %d: %s", core,
		       c->tid, c->orig_policy, strerror(errno));
}

static void
hist_add(uint64_t *h, uint64_t ns)
{
	unsigned int i = 0;

	while (i < KD_HIST - 1 && ns >= hist_us[i] * 1000u)
		i++;
	h[i]++;
}

static void
act(struct kd_core *c, uint32_t core, enum kick_action a, uint64_t now)
{
	int rc;

	switch (a) {
	case KICK_BOOST:
		rc = boost(c, core);
		if (rc != 0)
			kick_boost_undo(&c->k, rc < 0);
		else
			c->wait_cpu = c->perf.where == KICK_CPU_OFF;
		break;
	case KICK_REVERT_DRAIN:
	case KICK_REVERT_BOUND:
	case KICK_REVERT_YIELD:
		revert(c, core);
		hist_add(c->len_hist, now - c->k.boost_ns);
		if (c->wait_cpu)
			c->never_on_cpu++;
		c->wait_cpu = false;
		break;
	case KICK_NONE:
		break;
	}
}

/* Ends a boost now, whatever the core does (shutdown, new thread, new
 * region): counted as drained, since nothing is left for it to do. */
static void
end_boost(struct kd_core *c, uint32_t core)
{
	uint64_t now = mono_ns();

	if (!c->k.boosted)
		return;
	act(c, core, kick_end(&c->k, now, KICK_REVERT_DRAIN), now);
}

/* The slot names another thread (or none) for the core. */
static void
learn_thread(struct kd_core *c, uint32_t core, uint32_t pid, uint32_t tid)
{
	end_boost(c, core);
	perf_close(c);
	c->pid = pid;
	c->tid = tid;
	c->thread_ok = thread_alive(pid, tid);
	if (c->thread_ok) {
		c->threads++;
		c->last_pid = pid;
		c->last_tid = tid;
		perf_open(c, core);
		kd_log("core %u: thread %u of process %u%s", core, tid, pid,
		       c->perf_map != NULL ? ", watching its context switches" :
		       "");
	} else if (tid != 0) {
		kd_log("core %u: thread %u of process %u does not exist", core,
		       tid, pid);
	}
}

/* ---- the region ---- */

static int
name_identity(const char *name, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int fd;

	fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	close(fd);
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

static void
publish(struct kd_core *c, uint32_t core)
{
	struct tlb_cr_kick_stats ks;
	uint32_t sched = 0;

	if (c->thread_ok && c->perf.where == KICK_CPU_OFF)
		sched |= TLB_CR_SCHED_OFF_CPU;
	if (sched != c->sched_pub) {
		tlb_cr_set_sched(cr, core, sched);
		c->sched_pub = sched;
	}
	kick_slot_stats(&c->k, &ks);
	if (memcmp(&ks, &c->ks_pub, sizeof(ks)) != 0) {
		tlb_cr_set_kick_stats(cr, core, &ks);
		c->ks_pub = ks;
	}
}

static void
region_release(void)
{
	if (cr == NULL)
		return;
	for (uint32_t i = 0; i < n_cores; i++) {
		end_boost(&cores[i], i);
		perf_close(&cores[i]);
		cores[i].pid = 0;
		cores[i].tid = 0;
		cores[i].thread_ok = false;
		cores[i].sched_pub = 0;
		memset(&cores[i].ks_pub, 0, sizeof(cores[i].ks_pub));
		kick_core_forget(&cores[i].k);
	}
	/* Publishes the last counters, then withdraws OFF_CPU. */
	for (uint32_t i = 0; i < n_cores; i++) {
		struct tlb_cr_kick_stats ks;

		kick_slot_stats(&cores[i].k, &ks);
		tlb_cr_set_kick_stats(cr, i, &ks);
	}
	tlb_cr_detach(cr);
	cr = NULL;
}

/* Attaches (again); on the first attach sizes the core table, which then
 * keeps its size: a region with more cores has its extra ones unwatched,
 * and one with fewer leaves ours idle. */
static int
region_attach(char *err, size_t errlen)
{
	dev_t dev, dev2;
	ino_t ino, ino2;
	struct tlb_cr *c;

	if (name_identity(conf.ring, &dev, &ino) != 0) {
		snprintf(err, errlen, "credit ring %s: %s", conf.ring,
			 strerror(errno));
		return -1;
	}
	if (tlb_cr_attach_agent(conf.ring, &c, err, errlen) != 0)
		return -1;
	if (name_identity(conf.ring, &dev2, &ino2) != 0 || dev2 != dev ||
	    ino2 != ino) {
		tlb_cr_detach(c);
		snprintf(err, errlen, "credit ring %s was replaced while attaching",
			 conf.ring);
		return -1;
	}
	if (cores == NULL) {
		n_cores = tlb_cr_n_cores(c);
		cores = calloc(n_cores, sizeof(*cores));
		if (cores == NULL) {
			tlb_cr_detach(c);
			snprintf(err, errlen, "out of memory for %u cores",
				 n_cores);
			return -1;
		}
		for (uint32_t i = 0; i < n_cores; i++)
			cores[i].perf_fd = -1;
	} else if (tlb_cr_n_cores(c) != n_cores) {
		kd_log("the new region has %u cores, we watch %u",
		       tlb_cr_n_cores(c), n_cores);
	}
	cr = c;
	cr_dev = dev;
	cr_ino = ino;
	return 0;
}

/* The daemon closed its region, or another one is under the name now. */
static bool
region_stale(void)
{
	dev_t dev;
	ino_t ino;

	if (tlb_cr_closed(cr))
		return true;
	if (name_identity(conf.ring, &dev, &ino) != 0)
		return errno == ENOENT;
	return dev != cr_dev || ino != cr_ino;
}

static void
sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};

	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

/* ---- the loop ---- */

/* core's thread was just boosted while waiting for a CPU: a boosted
 * thread on that CPU would keep it (same priority), so it yields. Without
 * switch records (not watched, or no CPU known yet) nothing is known to
 * be in the way and nothing yields. */
static void
yield_cpu(uint32_t core, uint64_t now)
{
	const struct kick_perf *w = &cores[core].perf;

	if (w->where != KICK_CPU_OFF || w->cpu < 0)
		return;
	for (uint32_t j = 0; j < n_cores; j++) {
		struct kd_core *h = &cores[j];

		if (j == core || !h->k.boosted ||
		    h->perf.where != KICK_CPU_ON || h->perf.cpu != w->cpu)
			continue;
		act(h, j, kick_yield(&h->k, now), now);
	}
}

static void
look(uint32_t core, uint64_t now, const struct kick_params *p)
{
	struct kd_core *c = &cores[core];
	enum kick_action a;
	struct kick_obs o;
	uint32_t pid, tid;

	if (core >= tlb_cr_n_cores(cr))
		return;
	tid = tlb_cr_tid(cr, core, &pid);
	if (tid != c->tid || pid != c->pid)
		learn_thread(c, core, pid, tid);
	perf_poll(c);
	if (c->wait_cpu && c->perf.where == KICK_CPU_ON) {
		hist_add(c->oncpu_hist, now - c->k.boost_ns);
		c->wait_cpu = false;
	}
	o.doorbell = tlb_cr_doorbell(cr, core);
	o.heartbeat = tlb_cr_heartbeat(cr, core);
	o.records = tlb_cr_records_posted(cr, core);
	o.host_state = tlb_cr_host_state(cr, core);
	o.thread_ok = c->thread_ok;
	o.cpu = c->perf.where;
	a = kick_step(&c->k, &o, now, p);
	act(c, core, a, now);
	if (a == KICK_BOOST && c->k.boosted)
		yield_cpu(core, now);
	publish(c, core);
}

static void
run(void)
{
	const struct kick_params p = {
		.quiet_ns = (uint64_t)conf.quiet_us * 1000u,
		.max_boost_ns = (uint64_t)conf.max_boost_us * 1000u,
	};
	const uint64_t poll_ns = (uint64_t)conf.poll_us * 1000u;
	uint64_t next_check = 0, next_try = 0;
	bool failing = false;
	char err[256];

	while (!force_quit) {
		uint64_t now = mono_ns();

		if (cr == NULL) {
			if (now < next_try) {
				sleep_ns(poll_ns);
				continue;
			}
			if (region_attach(err, sizeof(err)) != 0) {
				if (!failing)
					kd_log("%s; retrying every 100 ms until a signal",
					       err);
				failing = true;
				next_try = now + ATTACH_RETRY_NS;
				continue;
			}
			kd_log("credit ring %s attached (%u cores)", conf.ring,
			       tlb_cr_n_cores(cr));
			failing = false;
			next_check = now + CHECK_NS;
		}
		if (now >= next_check) {
			next_check = now + CHECK_NS;
			if (region_stale()) {
				kd_log("credit ring %s went stale (turbolbd restarted?): reattaching",
				       conf.ring);
				region_release();
				reattaches++;
				continue;
			}
			/* A server killed without detaching leaves its
			 * threads in the slots. */
			for (uint32_t i = 0; i < n_cores; i++)
				if (cores[i].thread_ok &&
				    !thread_alive(cores[i].pid, cores[i].tid))
					cores[i].thread_ok = false;
		}
		for (uint32_t i = 0; i < n_cores; i++)
			look(i, now, &p);
		sleep_ns(poll_ns);
	}
}

/* ---- stats ---- */

static void
json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void
json_hist(FILE *f, const char *name, const uint64_t *h)
{
	fprintf(f, ", \"%s\": {", name);
	for (unsigned int i = 0; i < KD_HIST; i++) {
		if (i < KD_HIST - 1)
			fprintf(f, "%s\"lt_%" PRIu64 "us\": %" PRIu64,
				i == 0 ? "" : ", ", hist_us[i], h[i]);
		else
			fprintf(f, ", \"more\": %" PRIu64, h[i]);
	}
	fputc('}', f);
}

static void
json_counts(FILE *f, const struct kd_core *c, const struct kick_counts *n)
{
	fprintf(f, "\"rings\": %" PRIu64 ", \"kicks_served\": %" PRIu64
		", \"kicks_ignored\": %" PRIu64 ", \"boosts\": %" PRIu64
		", \"reverted_drain\": %" PRIu64 ", \"reverted_bound\": %" PRIu64
		", \"boost_failures\": %" PRIu64 ", \"boosted_us\": %" PRIu64
		", \"rt_skips\": %" PRIu64 ", \"switches\": %" PRIu64
		", \"perf_lost\": %" PRIu64,
		n->rings, n->served, n->ignored, n->boosts, n->reverted_drain,
		n->reverted_bound, n->boost_failures, n->boosted_ns / 1000u,
		c->rt_skips, c->perf.switches, c->perf.lost);
	fprintf(f, ", \"reverted_yield\": %" PRIu64 ", \"never_on_cpu\": %"
		PRIu64, n->reverted_yield, c->never_on_cpu);
	json_hist(f, "boost_len", c->len_hist);
	json_hist(f, "boost_to_on_cpu", c->oncpu_hist);
}

static int
write_stats(void)
{
	struct kick_counts t;
	struct kd_core tc;
	FILE *f = stdout;

	if (conf.stats_file != NULL) {
		f = fopen(conf.stats_file, "w");
		if (f == NULL) {
			kd_log("--stats %s: %s", conf.stats_file,
			       strerror(errno));
			return -1;
		}
	}
	memset(&t, 0, sizeof(t));
	memset(&tc, 0, sizeof(tc));
	fprintf(f, "{\n  \"kickd\": {\"credit_ring\": ");
	json_string(f, conf.ring);
	fprintf(f, ", \"poll_us\": %u, \"quiet_us\": %u, \"max_boost_us\": %u"
		", \"priority\": %d, \"self_priority\": %d, \"sched_watch\": %s"
		", \"boost\": %s, \"reattaches\": %" PRIu64 "},\n",
		conf.poll_us, conf.quiet_us, conf.max_boost_us, conf.priority,
		conf.self_priority, conf.sched_watch ? "true" : "false",
		conf.boost ? "true" : "false", reattaches);
	fprintf(f, "  \"cores\": [\n");
	for (uint32_t i = 0; i < n_cores; i++) {
		const struct kd_core *c = &cores[i];
		const struct kick_counts *n = &c->k.n;

		fprintf(f, "    {\"core\": %u, \"pid\": %u, \"tid\": %u, \"threads\": %" PRIu64 ", ",
			i, c->last_pid, c->last_tid, c->threads);
		json_counts(f, c, n);
		fprintf(f, "}%s\n", i + 1 < n_cores ? "," : "");
		t.rings += n->rings;
		t.served += n->served;
		t.ignored += n->ignored;
		t.boosts += n->boosts;
		t.reverted_drain += n->reverted_drain;
		t.reverted_bound += n->reverted_bound;
		t.reverted_yield += n->reverted_yield;
		t.boost_failures += n->boost_failures;
		t.boosted_ns += n->boosted_ns;
		tc.rt_skips += c->rt_skips;
		tc.perf.switches += c->perf.switches;
		tc.perf.lost += c->perf.lost;
		tc.never_on_cpu += c->never_on_cpu;
		for (unsigned int j = 0; j < KD_HIST; j++) {
			tc.len_hist[j] += c->len_hist[j];
			tc.oncpu_hist[j] += c->oncpu_hist[j];
		}
	}
	fprintf(f, "  ],\n  \"total\": {");
	json_counts(f, &tc, &t);
	fprintf(f, "}\n}\n");
	if (f != stdout)
		return fclose(f) == 0 ? 0 : -1;
	fflush(f);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	int rc;

	if (parse_args(argc, argv) < 0)
		return 2;
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	if (check_privileges() < 0)
		return 1;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* A 20 us sleep must not become 70: the default timer slack is
	 * 50 us (real-time threads get none anyway). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (conf.self_priority != 0) {
		struct sched_param sp = {
			.sched_priority = conf.self_priority,
		};

		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
			kd_log("--self-priority %d: %s", conf.self_priority,
			       strerror(errno));
			return 1;
		}
	}
	kd_log("watching %s: poll %u us, quiet %u us, max boost %u us, SCHED_FIFO %d%s%s",
	       conf.ring, conf.poll_us, conf.quiet_us, conf.max_boost_us,
	       conf.priority, conf.sched_watch ? "" : ", no sched watch",
	       conf.boost ? "" : ", watch only");
	run();
	region_release();
	rc = write_stats() == 0 ? 0 : 1;
	for (uint32_t i = 0; i < n_cores; i++)
		perf_close(&cores[i]);
	free(cores);
	return rc;
}

#endif /* TLB_KICKD_TEST */
