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
 * Kick frames (--listen IFACE): where turbolbd runs on another machine (a
 * BlueField's Arm cores) it sends each doorbell as a frame out of its
 * default target, which reaches the host on its slow-path interface; a
 * raw socket bound to that interface wakes the agent on each one (an
 * interrupt, not a poll), and the frame's doorbell count stands for the
 * ring's doorbell word. The ring, then created by the server on the host
 * (turbolb-server --agent-ring), still names the threads.
 *
 * Files: kick.h and kick.c, the decision of what to do with a core (pure,
 * unit-tested in tests/unit/test_kick.c on constructed states); perf.c,
 * the reader of each thread's context-switch records; options.c; this
 * file, the boosts, the region, the loop and the stats.
 * docs/host-integration.md ("The scheduler kick") has the whole design.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/if_packet.h>

#include "turbolb/feedback.h"
#include "kickd.h"

#define CHECK_NS        100000000ull /* region and thread checks: 100 ms */
#define ATTACH_RETRY_NS 100000000ull

static const uint64_t hist_us[KD_HIST - 1] = {50, 100, 200, 500, 1000, 2000};

static volatile sig_atomic_t force_quit;
static struct tlb_cr *cr;
static dev_t cr_dev;
static ino_t cr_ino;
static uint32_t n_cores;
static struct kd_core *cores;
static uint64_t reattaches;
static bool boost_warned;
static int wire_fd = -1;      /* --listen: the raw socket */
static uint64_t wire_frames;  /* kick frames taken */
static uint64_t wire_bad;     /* frames that did not parse */
static uint64_t wire_no_core; /* for a core we do not watch */

void kd_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void
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
	struct sched_param sp = {.sched_priority = conf.priority};
	struct sched_param orig;
	int pol;

	if (!conf.boost)
		return 0;
	if (!has_cap(CAP_SYS_NICE)) {
		kd_log("CAP_SYS_NICE is missing: the agent boosts other "
		       "processes' threads to SCHED_FIFO and back. Run it as "
		       "root, or give it the capability (setcap "
		       "cap_sys_nice,cap_perfmon+ep turbolb-kickd, or "
		       "AmbientCapabilities=CAP_SYS_NICE CAP_PERFMON in its "
		       "unit); --watch-only needs neither");
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
		       errno == EPERM ? " (with CONFIG_RT_GROUP_SCHED, the "
					"cgroup needs cpu.rt_runtime_us > 0)"
				      : "");
		return -1;
	}
	if (sched_setscheduler(0, pol, &orig) != 0) {
		kd_log("cannot return to policy %d: %s", pol, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- threads: the boost ---- */

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
	struct sched_param sp = {.sched_priority = conf.priority};
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
			return 1; /* it has just exited */
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
	if (sched_setscheduler((pid_t)c->tid, c->orig_policy, &c->orig_param) !=
		    0 &&
	    errno != ESRCH)
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
		       c->perf_map != NULL ? ", watching its context switches"
					   : "");
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
		snprintf(err, errlen,
			 "credit ring %s was replaced while attaching",
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
	o.doorbell =
		wire_fd >= 0 ? c->wire_doorbell : tlb_cr_doorbell(cr, core);
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

/* --listen: a raw socket for kick frames, bound to the interface. */
static int
wire_open(void)
{
	struct sockaddr_ll sll;
	unsigned int ifindex = if_nametoindex(conf.listen);
	int fd;

	if (ifindex == 0) {
		kd_log("--listen %s: %s", conf.listen, strerror(errno));
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC,
		    htons(TLB_KICK_ETHERTYPE));
	if (fd < 0) {
		kd_log("--listen %s: raw socket: %s (needs CAP_NET_RAW)",
		       conf.listen, strerror(errno));
		return -1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(TLB_KICK_ETHERTYPE);
	sll.sll_ifindex = (int)ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		kd_log("--listen %s: bind: %s", conf.listen, strerror(errno));
		close(fd);
		return -1;
	}
	wire_fd = fd;
	return 0;
}

/* Takes every kick frame waiting: each core keeps the newest doorbell
 * count (frames of one sender come in order; a count that went back is a
 * restarted daemon, which kick_step records). */
static void
wire_drain(void)
{
	uint8_t buf[128];
	uint64_t bell;
	uint16_t core;
	ssize_t n;

	while ((n = recv(wire_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (tlb_kick_parse(buf, (size_t)n, &core, &bell) != 0) {
			wire_bad++;
			continue;
		}
		if (cores == NULL || core >= n_cores) {
			wire_no_core++;
			continue;
		}
		wire_frames++;
		cores[core].wire_doorbell = bell;
	}
}

/* Sleeps poll_ns, or with --listen until a kick frame comes. */
static void
wait_next(uint64_t ns)
{
	struct pollfd pfd = {.fd = wire_fd, .events = POLLIN};
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};

	if (wire_fd < 0) {
		sleep_ns(ns);
		return;
	}
	if (ppoll(&pfd, 1, &ts, NULL) > 0)
		wire_drain();
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
			if (wire_fd >= 0)
				wire_drain(); /* no core to take them yet */
			if (region_attach(err, sizeof(err)) != 0) {
				if (!failing)
					kd_log("%s; retrying every 100 ms "
					       "until a signal",
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
				kd_log("credit ring %s went stale (turbolbd "
				       "restarted?): reattaching",
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
		wait_next(poll_ns);
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
	fprintf(f,
		"\"rings\": %" PRIu64 ", \"kicks_served\": %" PRIu64
		", \"kicks_ignored\": %" PRIu64 ", \"boosts\": %" PRIu64
		", \"reverted_drain\": %" PRIu64
		", \"reverted_bound\": %" PRIu64
		", \"boost_failures\": %" PRIu64 ", \"boosted_us\": %" PRIu64
		", \"rt_skips\": %" PRIu64 ", \"switches\": %" PRIu64
		", \"perf_lost\": %" PRIu64,
		n->rings, n->served, n->ignored, n->boosts, n->reverted_drain,
		n->reverted_bound, n->boost_failures, n->boosted_ns / 1000u,
		c->rt_skips, c->perf.switches, c->perf.lost);
	fprintf(f,
		", \"reverted_yield\": %" PRIu64 ", \"never_on_cpu\": %" PRIu64,
		n->reverted_yield, c->never_on_cpu);
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
	fprintf(f,
		", \"poll_us\": %u, \"quiet_us\": %u, \"max_boost_us\": %u"
		", \"priority\": %d, \"self_priority\": %d, \"sched_watch\": %s"
		", \"boost\": %s, \"reattaches\": %" PRIu64 "},\n",
		conf.poll_us, conf.quiet_us, conf.max_boost_us, conf.priority,
		conf.self_priority, conf.sched_watch ? "true" : "false",
		conf.boost ? "true" : "false", reattaches);
	if (conf.listen != NULL) {
		fprintf(f, "  \"listen\": {\"iface\": ");
		json_string(f, conf.listen);
		fprintf(f,
			", \"kick_frames\": %" PRIu64
			", \"bad_frames\": %" PRIu64 ", \"no_core\": %" PRIu64
			"},\n",
			wire_frames, wire_bad, wire_no_core);
	}
	fprintf(f, "  \"cores\": [\n");
	for (uint32_t i = 0; i < n_cores; i++) {
		const struct kd_core *c = &cores[i];
		const struct kick_counts *n = &c->k.n;

		fprintf(f,
			"    {\"core\": %u, \"pid\": %u, \"tid\": %u, "
			"\"threads\": %" PRIu64 ", ",
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
	if (check_privileges() < 0)
		return 1;
	if (conf.listen != NULL && wire_open() < 0)
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
	kd_log("watching %s: poll %u us, quiet %u us, max boost %u us, "
	       "SCHED_FIFO %d%s%s%s%s",
	       conf.ring, conf.poll_us, conf.quiet_us, conf.max_boost_us,
	       conf.priority, conf.sched_watch ? "" : ", no sched watch",
	       conf.boost ? "" : ", watch only",
	       conf.listen != NULL ? ", kick frames on " : "",
	       conf.listen != NULL ? conf.listen : "");
	run();
	region_release();
	rc = write_stats() == 0 ? 0 : 1;
	for (uint32_t i = 0; i < n_cores; i++)
		perf_close(&cores[i]);
	free(cores);
	if (wire_fd >= 0)
		close(wire_fd);
	return rc;
}
