/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: the scheduler kick's host side.
 *  - the doorbell protocol through the credit ring: the NIC side rings,
 *    the agent sees every ring exactly once however the rings and its
 *    looks interleave; rate limiting is the daemon's, not the agent's;
 *  - the slot words the kick adds: the thread libturbolb-host publishes,
 *    the agent's OFF_CPU flag as the NIC side's run state sees it, the
 *    agent's counters; an agent attach is not a host attach;
 *  - the agent's decision, kick_step(), on constructed states: when it
 *    boosts, when a boost ends by drain and when by the time bound;
 *  - the parser of perf context-switch records.
 * The agent's decision logic is src/kickd/kick.c, linked as a library.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "turbolb/credit_ring.h"
#include "turbolb/host.h"

#define SHM_NAME_TAG "kick"
#include "shm_name.h"

#include "kick.h"

#define ERRLEN 256
#define US     1000ull

static struct tlb_cr *
host_attach(void)
{
	char err[ERRLEN] = "";
	struct tlb_cr *cr = NULL;

	if (tlb_cr_attach(cur_name, &cr, err, sizeof(err)) != 0)
		fail_msg("tlb_cr_attach: %s", err);
	return cr;
}

static struct tlb_cr *
agent_attach(void)
{
	char err[ERRLEN] = "";
	struct tlb_cr *cr = NULL;

	if (tlb_cr_attach_agent(cur_name, &cr, err, sizeof(err)) != 0)
		fail_msg("tlb_cr_attach_agent: %s", err);
	return cr;
}

static const struct kick_params params = {
	.quiet_ns = 50 * US,
	.max_boost_ns = 1000 * US,
};

/* A core whose thread is RUNNING, known and alive. */
static struct kick_obs
obs_running(uint64_t doorbell, uint32_t records, uint64_t hb)
{
	struct kick_obs o = {
		.doorbell = doorbell,
		.heartbeat = hb,
		.records = records,
		.host_state = TLB_RUN_RUNNING,
		.thread_ok = true,
		.cpu = KICK_CPU_UNKNOWN,
	};

	return o;
}

static void
check_invariants(const struct kick_core *k)
{
	assert_int_equal(k->n.rings, k->n.served + k->n.ignored);
	assert_int_equal(k->n.boosts,
			 k->n.reverted_drain + k->n.reverted_bound +
				 k->n.reverted_yield + (k->boosted ? 1 : 0));
}

/* ---- the doorbell protocol through the region ---- */

/* Rings and looks interleaved at random: the agent counts each ring once,
 * never more, never fewer, whether one or many came between two looks. */
static void
test_each_ring_seen_once(void **state)
{
	struct tlb_cr *nic, *agent;
	struct kick_core k[3];
	uint64_t rung[3] = {0};
	uint64_t now = 0;

	(void)state;
	nic = nic_create(3, 64);
	agent = agent_attach();
	memset(k, 0, sizeof(k));
	/* Rings before the agent's first look are not kicks for it. */
	tlb_cr_ring_doorbell(nic, 1);
	for (uint32_t c = 0; c < 3; c++) {
		struct kick_obs o =
			obs_running(tlb_cr_doorbell(agent, c), 0, 0);

		o.thread_ok = false; /* count, never boost */
		assert_int_equal(kick_step(&k[c], &o, now, &params), KICK_NONE);
	}
	srand(7);
	for (int step = 0; step < 20000; step++) {
		uint32_t c = (uint32_t)rand() % 3;

		now += US;
		if (rand() % 3 != 0) {
			int n = rand() % 4;

			for (int i = 0; i < n; i++)
				tlb_cr_ring_doorbell(nic, c);
			rung[c] += (uint64_t)n;
		} else {
			struct kick_obs o =
				obs_running(tlb_cr_doorbell(agent, c), 0, 0);

			o.thread_ok = false;
			kick_step(&k[c], &o, now, &params);
		}
	}
	for (uint32_t c = 0; c < 3; c++) {
		struct kick_obs o =
			obs_running(tlb_cr_doorbell(agent, c), 0, 0);

		o.thread_ok = false;
		kick_step(&k[c], &o, now, &params);
		assert_int_equal(k[c].n.rings, rung[c]);
		assert_int_equal(k[c].n.ignored, rung[c]);
		check_invariants(&k[c]);
	}
	tlb_cr_detach(agent);
	tlb_cr_destroy(nic, true);
}

/* The agent does not rate-limit: a ring after a drained boost boosts
 * again at once, however soon it comes (kick.min_interval_us is the
 * daemon's). */
static void
test_agent_does_not_rate_limit(void **state)
{
	struct tlb_cr_kick_stats ks, got;
	struct tlb_cr *nic, *agent;
	struct kick_core k;
	struct kick_obs o;
	uint64_t now = 0;
	uint32_t rec = 0;

	(void)state;
	nic = nic_create(1, 64);
	agent = agent_attach();
	memset(&k, 0, sizeof(k));
	o = obs_running(tlb_cr_doorbell(agent, 0), rec, 0);
	kick_step(&k, &o, now, &params);
	for (int i = 0; i < 10; i++) {
		tlb_cr_ring_doorbell(nic, 0);
		now += US;
		o = obs_running(tlb_cr_doorbell(agent, 0), rec, 0);
		assert_int_equal(kick_step(&k, &o, now, &params), KICK_BOOST);
		/* It completes something, then stays quiet. */
		now += US;
		o = obs_running(tlb_cr_doorbell(agent, 0), ++rec, 0);
		assert_int_equal(kick_step(&k, &o, now, &params), KICK_NONE);
		now += params.quiet_ns;
		assert_int_equal(kick_step(&k, &o, now, &params),
				 KICK_REVERT_DRAIN);
	}
	assert_int_equal(k.n.boosts, 10);
	assert_int_equal(k.n.served, 10);
	assert_int_equal(k.n.reverted_drain, 10);
	check_invariants(&k);
	/* What the daemon's telemetry reads back from the slot. */
	kick_slot_stats(&k, &ks);
	tlb_cr_set_kick_stats(agent, 0, &ks);
	tlb_cr_kick_stats(nic, 0, &got);
	assert_int_equal(got.kicks_served, 10);
	assert_int_equal(got.boosts, 10);
	assert_int_equal(got.reverted_drain, 10);
	assert_int_equal(got.reverted_bound, 0);
	tlb_cr_detach(agent);
	tlb_cr_destroy(nic, true);
}

/* An agent is not a host: its attach leaves host_epoch alone (the NIC side
 * would otherwise reset its view of the real host), and its detach leaves
 * the host's states and threads alone but withdraws its OFF_CPU flags. */
static void
test_agent_attach_is_not_a_host(void **state)
{
	struct tlb_cr *nic, *host, *agent;
	uint64_t epoch;
	uint32_t pid;

	(void)state;
	nic = nic_create(2, 64);
	host = host_attach();
	epoch = tlb_cr_host_epoch(nic);
	assert_int_not_equal(epoch, 0);
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_tid(host, 0, 100, 101);
	agent = agent_attach();
	assert_int_equal(tlb_cr_host_epoch(nic), epoch);
	tlb_cr_set_sched(agent, 0, TLB_CR_SCHED_OFF_CPU);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_PARKED);
	tlb_cr_detach(agent);
	assert_int_equal(tlb_cr_host_epoch(nic), epoch);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_RUNNING);
	assert_int_equal(tlb_cr_sched(nic, 0), 0);
	assert_int_equal(tlb_cr_tid(nic, 0, &pid), 101);
	assert_int_equal(pid, 100);
	/* A host detach withdraws its threads with its states. */
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_tid(nic, 0, &pid), 0);
	assert_int_equal(pid, 0);
	tlb_cr_destroy(nic, true);
}

/* OFF_CPU turns a RUNNING core into PARKED for the NIC side, and nothing
 * else: PARKED and OFFLINE stay what they are, and the host's own word
 * is still there for the agent. */
static void
test_off_cpu_reads_parked(void **state)
{
	struct tlb_cr *nic, *host, *agent;

	(void)state;
	nic = nic_create(3, 64);
	host = host_attach();
	agent = agent_attach();
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 1, TLB_RUN_PARKED);
	for (uint32_t c = 0; c < 3; c++)
		tlb_cr_set_sched(agent, c, TLB_CR_SCHED_OFF_CPU);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_PARKED);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_PARKED);
	assert_int_equal(tlb_cr_state(nic, 2), TLB_RUN_OFFLINE);
	assert_int_equal(tlb_cr_host_state(agent, 0), TLB_RUN_RUNNING);
	tlb_cr_set_sched(agent, 0, 0);
	assert_int_equal(tlb_cr_state(nic, 0), TLB_RUN_RUNNING);
	/* Out of range: no-ops and zeros, never memory outside. */
	tlb_cr_set_sched(agent, 3, TLB_CR_SCHED_OFF_CPU);
	assert_int_equal(tlb_cr_sched(agent, 3), 0);
	assert_int_equal(tlb_cr_tid(agent, 3, NULL), 0);
	tlb_cr_detach(agent);
	tlb_cr_detach(host);
	tlb_cr_destroy(nic, true);
}

static void
test_kick_stats_round_trip(void **state)
{
	struct tlb_cr_kick_stats ks = {
		.kicks_served = 5,
		.boosts = 4,
		.reverted_drain = 3,
		.reverted_bound = 1,
	};
	struct tlb_cr_kick_stats got;
	struct tlb_cr *nic, *agent;

	(void)state;
	nic = nic_create(2, 64);
	agent = agent_attach();
	tlb_cr_set_kick_stats(agent, 1, &ks);
	tlb_cr_kick_stats(nic, 1, &got);
	assert_memory_equal(&got, &ks, sizeof(ks));
	tlb_cr_kick_stats(nic, 0, &got);
	assert_int_equal(got.kicks_served + got.boosts + got.reverted_drain +
				 got.reverted_bound,
			 0);
	/* The counters share the slot's line with the run state, the
	 * heartbeat and the doorbell, and disturb none of them. */
	assert_int_equal(tlb_cr_doorbell(nic, 1), 0);
	assert_int_equal(tlb_cr_heartbeat(nic, 1), 0);
	assert_int_equal(tlb_cr_state(nic, 1), TLB_RUN_OFFLINE);
	tlb_cr_detach(agent);
	tlb_cr_destroy(nic, true);
}

struct tid_arg {
	struct tlb_host *h;
	uint32_t core;
	uint32_t tid;
};

static void *
core_thread(void *arg)
{
	struct tid_arg *a = arg;
	struct tlb_host_core *c = tlb_host_core(a->h, a->core);

	a->tid = (uint32_t)gettid();
	tlb_host_set_running(c, true);
	return NULL;
}

/* libturbolb-host names each core's thread at the core's first call, and
 * names the new one when another thread takes the handle over, or when a
 * forked child uses the library. */
/* Kept in globals so that a forked child, which exits without freeing
 * what it inherited, does not show it to valgrind as lost. */
static struct tlb_cr *publish_nic;
static struct tlb_host *publish_host;

static void
test_host_publishes_thread(void **state)
{
	char err[ERRLEN] = "";
	struct tid_arg a[2];
	struct tlb_host *h;
	struct tlb_cr *nic;
	pthread_t t;
	uint32_t pid;
	pid_t child;
	int status;

	(void)state;
	nic = publish_nic = nic_create(2, 64);
	h = publish_host = tlb_host_open(cur_name, err, sizeof(err));
	assert_non_null(h);
	assert_int_equal(tlb_cr_tid(nic, 0, NULL), 0);
	for (uint32_t i = 0; i < 2; i++) {
		a[i].h = h;
		a[i].core = i;
		assert_int_equal(pthread_create(&t, NULL, core_thread, &a[i]),
				 0);
		assert_int_equal(pthread_join(t, NULL), 0);
		assert_int_equal(tlb_cr_tid(nic, i, &pid), a[i].tid);
		assert_int_equal(pid, (uint32_t)getpid());
	}
	assert_int_not_equal(a[0].tid, a[1].tid);
	/* Core 0's handle moves to this thread. */
	tlb_host_set_running(tlb_host_core(h, 0), true);
	assert_int_equal(tlb_cr_tid(nic, 0, NULL), (uint32_t)gettid());
	/* The child of a fork names itself, not the thread that forked
	 * (whose tid the library had cached). */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct tlb_host *h2 = tlb_host_open(cur_name, err, sizeof(err));

		if (h2 == NULL)
			_exit(2);
		tlb_host_set_running(tlb_host_core(h2, 1), true);
		/* Read the thread word before closing: close clears it. */
		uint32_t seen = tlb_cr_tid(nic, 1, NULL);
		tlb_host_close(h2);
		_exit(seen == (uint32_t)getpid() ? 0 : 3);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	/* The child saw its own pid as core 1's thread (it checks before
	 * closing, since closing clears the word). */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tlb_host_close(h);
	assert_int_equal(tlb_cr_tid(nic, 0, NULL), 0);
	tlb_cr_destroy(nic, true);
}

/* ---- the decision ---- */

static void
test_first_look_only_primes(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(41, 9, 3);

	(void)state;
	memset(&k, 0, sizeof(k));
	assert_int_equal(kick_step(&k, &o, 0, &params), KICK_NONE);
	assert_int_equal(k.n.rings, 0);
	assert_false(k.boosted);
	o.doorbell = 42;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	assert_int_equal(k.n.rings, 1);
	check_invariants(&k);
}

/* Several rings between two looks: one boost serves all of them, and rings
 * during the boost extend it without boosting again. */
static void
test_rings_during_boost_extend_it(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);
	uint64_t now = 0;

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, now, &params);
	o.doorbell = 3;
	assert_int_equal(kick_step(&k, &o, now += US, &params), KICK_BOOST);
	assert_int_equal(k.n.served, 3);
	o.records = 1; /* it ran */
	assert_int_equal(kick_step(&k, &o, now += US, &params), KICK_NONE);
	/* A ring just before the quiet time is up starts the clock again. */
	now += params.quiet_ns - US;
	o.doorbell = 4;
	assert_int_equal(kick_step(&k, &o, now, &params), KICK_NONE);
	assert_int_equal(kick_step(&k, &o, now + params.quiet_ns - 1, &params),
			 KICK_NONE);
	assert_int_equal(kick_step(&k, &o, now + params.quiet_ns, &params),
			 KICK_REVERT_DRAIN);
	assert_int_equal(k.n.boosts, 1);
	assert_int_equal(k.n.served, 4);
	check_invariants(&k);
}

/* Drain needs proof that the core ran: a quiet core that posted nothing
 * since the boost stays boosted, until the time bound. */
static void
test_no_progress_ends_by_bound(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 5, 0);
	uint64_t t0;

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	/* It posted before, so records are what proves it ran. */
	o.records = 6;
	kick_step(&k, &o, US, &params);
	o.doorbell = 1;
	t0 = 2 * US;
	assert_int_equal(kick_step(&k, &o, t0, &params), KICK_BOOST);
	/* The heartbeat moving is not enough for a core that posts. */
	o.heartbeat = 10;
	assert_int_equal(kick_step(&k, &o, t0 + 10 * params.quiet_ns, &params),
			 KICK_NONE);
	assert_int_equal(
		kick_step(&k, &o, t0 + params.max_boost_ns - 1, &params),
		KICK_NONE);
	assert_int_equal(kick_step(&k, &o, t0 + params.max_boost_ns, &params),
			 KICK_REVERT_BOUND);
	assert_int_equal(k.n.reverted_bound, 1);
	assert_int_equal(k.n.boosted_ns, params.max_boost_ns);
	check_invariants(&k);
}

/* A core that has never posted a credit record (in-band credits) proves
 * it ran by its heartbeat. */
static void
test_heartbeat_proves_progress_without_records(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 7);

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	o.doorbell = 1;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	assert_int_equal(kick_step(&k, &o, US + params.quiet_ns, &params),
			 KICK_NONE);
	o.heartbeat = 8;
	assert_int_equal(kick_step(&k, &o, 2 * US + params.quiet_ns, &params),
			 KICK_REVERT_DRAIN);
	check_invariants(&k);
}

/* A watched thread proves it ran by getting on its CPU: quiet_ns on it
 * with no completion means nothing was queued (a spurious or late kick),
 * and the quiet clock only starts when it gets there. */
static void
test_on_cpu_proves_progress(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 3, 0);
	uint64_t t_on;

	(void)state;
	memset(&k, 0, sizeof(k));
	o.cpu = KICK_CPU_OFF;
	kick_step(&k, &o, 0, &params);
	o.doorbell = 1;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	/* Still waiting for its CPU: no proof, however quiet. */
	assert_int_equal(kick_step(&k, &o, US + 2 * params.quiet_ns, &params),
			 KICK_NONE);
	t_on = 3 * US + 2 * params.quiet_ns;
	o.cpu = KICK_CPU_ON;
	assert_int_equal(kick_step(&k, &o, t_on, &params), KICK_NONE);
	assert_int_equal(kick_step(&k, &o, t_on + params.quiet_ns - 1, &params),
			 KICK_NONE);
	assert_int_equal(kick_step(&k, &o, t_on + params.quiet_ns, &params),
			 KICK_REVERT_DRAIN);
	/* Kicked while already on its CPU: quiet from the ring on. */
	o.doorbell = 2;
	assert_int_equal(kick_step(&k, &o, 10 * params.quiet_ns, &params),
			 KICK_BOOST);
	assert_int_equal(kick_step(&k, &o, 11 * params.quiet_ns, &params),
			 KICK_REVERT_DRAIN);
	check_invariants(&k);
}

/* A thread kicked while PARKED (asleep, say) keeps its boost until it has
 * run: going RUNNING and then PARKED again is its drain. */
static void
test_parked_core_drains_when_it_parks_again(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	o.host_state = TLB_RUN_PARKED;
	kick_step(&k, &o, 0, &params);
	o.doorbell = 1;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	/* Still asleep: PARKED is not a drain yet. */
	assert_int_equal(kick_step(&k, &o, 2 * US, &params), KICK_NONE);
	o.host_state = TLB_RUN_RUNNING;
	assert_int_equal(kick_step(&k, &o, 3 * US, &params), KICK_NONE);
	o.host_state = TLB_RUN_PARKED;
	assert_int_equal(kick_step(&k, &o, 4 * US, &params), KICK_REVERT_DRAIN);
	check_invariants(&k);
}

static void
test_running_core_drains_when_it_parks(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	o.doorbell = 1;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	o.host_state = TLB_RUN_PARKED;
	assert_int_equal(kick_step(&k, &o, 2 * US, &params), KICK_REVERT_DRAIN);
	check_invariants(&k);
}

/* Nothing to boost: rings for an OFFLINE core or an unknown thread are
 * counted and ignored; a boosted core whose thread goes away drains. */
static void
test_no_thread_no_boost(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	o.host_state = TLB_RUN_OFFLINE;
	o.doorbell = 2;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_NONE);
	o.host_state = TLB_RUN_RUNNING;
	o.thread_ok = false;
	o.doorbell = 3;
	assert_int_equal(kick_step(&k, &o, 2 * US, &params), KICK_NONE);
	assert_int_equal(k.n.ignored, 3);
	o.thread_ok = true;
	o.doorbell = 4;
	assert_int_equal(kick_step(&k, &o, 3 * US, &params), KICK_BOOST);
	o.thread_ok = false;
	assert_int_equal(kick_step(&k, &o, 4 * US, &params), KICK_REVERT_DRAIN);
	check_invariants(&k);
}

/* A boost that yields its CPU to a newer one ends at once, and counts
 * with the drained ones in the slot. */
static void
test_yield(void **state)
{
	struct tlb_cr_kick_stats ks;
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	assert_int_equal(kick_yield(&k, 0), KICK_NONE);
	kick_step(&k, &o, 0, &params);
	o.doorbell = 1;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	assert_int_equal(kick_yield(&k, 3 * US), KICK_REVERT_YIELD);
	assert_false(k.boosted);
	assert_int_equal(k.n.reverted_yield, 1);
	assert_int_equal(k.n.boosted_ns, 2 * US);
	assert_int_equal(kick_step(&k, &o, 4 * US, &params), KICK_NONE);
	check_invariants(&k);
	kick_slot_stats(&k, &ks);
	assert_int_equal(ks.boosts, 1);
	assert_int_equal(ks.reverted_drain, 1);
	assert_int_equal(ks.reverted_bound, 0);
}

/* A boost that could not be made leaves no trace but the counts. */
static void
test_boost_undo(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	o.doorbell = 2;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	kick_boost_undo(&k, true);
	assert_false(k.boosted);
	assert_int_equal(k.n.boosts, 0);
	assert_int_equal(k.n.ignored, 2);
	assert_int_equal(k.n.boost_failures, 1);
	o.doorbell = 3;
	assert_int_equal(kick_step(&k, &o, 2 * US, &params), KICK_BOOST);
	kick_boost_undo(&k, false);
	assert_int_equal(k.n.boost_failures, 1);
	kick_boost_undo(&k, false); /* nothing boosted: no-op */
	assert_int_equal(k.n.ignored, 3);
	check_invariants(&k);
}

/* A doorbell that went back is a new region's: recorded, not counted, and
 * forgetting a core keeps its counters. */
static void
test_new_region_reprimes(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(100, 0, 0);

	(void)state;
	memset(&k, 0, sizeof(k));
	kick_step(&k, &o, 0, &params);
	o.doorbell = 101;
	assert_int_equal(kick_step(&k, &o, US, &params), KICK_BOOST);
	o.host_state = TLB_RUN_PARKED;
	assert_int_equal(kick_step(&k, &o, 2 * US, &params), KICK_REVERT_DRAIN);
	o.host_state = TLB_RUN_RUNNING;
	o.doorbell = 2;
	assert_int_equal(kick_step(&k, &o, 3 * US, &params), KICK_NONE);
	assert_int_equal(k.n.rings, 1);
	kick_core_forget(&k);
	assert_false(k.primed);
	assert_int_equal(k.n.rings, 1);
	assert_int_equal(k.n.reverted_drain, 1);
}

/* Random cores: whatever happens, the counts add up, no boost outlives
 * the bound by more than one look, and every boost ends. */
static void
test_random_cores(void **state)
{
	struct kick_core k;
	struct kick_obs o = obs_running(0, 0, 0);
	uint64_t now = 0, boost_at = 0;
	bool stuck = false;

	(void)state;
	memset(&k, 0, sizeof(k));
	srand(11);
	for (int i = 0; i < 200000; i++) {
		enum kick_action a;
		int r = rand() % 100;

		now += (uint64_t)(1 + rand() % 40) * US;
		if (r < 10)
			o.doorbell += (uint64_t)(1 + rand() % 3);
		else if (r < 25 && !stuck)
			o.records++;
		else if (r == 98)
			stuck = !stuck; /* a core that stops completing */
		else if (r < 30)
			o.heartbeat++;
		else if (r < 32)
			o.host_state = (enum tlb_core_run_state)(rand() % 3);
		else if (r < 33)
			o.thread_ok = !o.thread_ok;
		a = kick_step(&k, &o, now, &params);
		if (a == KICK_BOOST)
			boost_at = now;
		if (a == KICK_REVERT_BOUND)
			assert_true(now - boost_at >= params.max_boost_ns);
		if (k.boosted)
			assert_true(now - boost_at <
				    params.max_boost_ns + 40 * US);
		if (a == KICK_BOOST && rand() % 10 == 0)
			kick_boost_undo(&k, rand() % 2 == 0);
		else if (r == 99)
			kick_yield(&k, now);
		check_invariants(&k);
	}
	assert_true(k.n.boosts > 100);
	assert_true(k.n.reverted_drain > 0);
	assert_true(k.n.reverted_bound > 0);
	assert_true(k.n.reverted_yield > 0);
}

/* ---- perf switch records ---- */

/* A record of len bytes; a switch record of 16 carries its CPU. */
static void
put_rec(uint8_t *ring, uint64_t size, uint64_t *head, uint32_t type,
	uint16_t misc, uint16_t len, uint32_t cpu)
{
	struct perf_event_header h = {
		.type = type,
		.misc = misc,
		.size = len,
	};

	memcpy(ring + (*head & (size - 1)), &h, sizeof(h));
	if (len >= 16)
		memcpy(ring + ((*head + 8) & (size - 1)), &cpu, sizeof(cpu));
	*head += len;
}

static void
test_perf_scan(void **state)
{
	struct kick_perf st = {.where = KICK_CPU_UNKNOWN, .cpu = -1};
	uint8_t ring[256];
	uint64_t size = sizeof(ring);
	uint64_t tail, head;

	(void)state;
	memset(ring, 0, sizeof(ring));
	/* Start near the end so that the records wrap, the last one with
	 * its header at the end and its cpu word at the start. */
	tail = head = 1000 * size - 40;
	put_rec(ring, size, &head, PERF_RECORD_SWITCH,
		PERF_RECORD_MISC_SWITCH_OUT |
			PERF_RECORD_MISC_SWITCH_OUT_PREEMPT,
		16, 3);
	put_rec(ring, size, &head, PERF_RECORD_SWITCH, 0, 16, 1);
	put_rec(ring, size, &head, PERF_RECORD_SWITCH,
		PERF_RECORD_MISC_SWITCH_OUT, 16, 1);
	assert_int_equal(head % size, 8);
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_OFF);
	assert_int_equal(st.cpu, 1);
	assert_int_equal(tail, head);
	assert_int_equal(st.switches, 3);
	/* Nothing new: the place stays. */
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_OFF);
	put_rec(ring, size, &head, PERF_RECORD_SWITCH, 0, 16, 2);
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_ON);
	assert_int_equal(st.cpu, 2);
	/* A bare switch record (no sample id): the place, no CPU. */
	put_rec(ring, size, &head, PERF_RECORD_SWITCH,
		PERF_RECORD_MISC_SWITCH_OUT, 8, 0);
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_OFF);
	assert_int_equal(st.cpu, -1);
	/* Lost records: unknown until the next switch; other record types
	 * are skipped by their size. */
	put_rec(ring, size, &head, PERF_RECORD_LOST, 0, 32, 0);
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_UNKNOWN);
	assert_int_equal(st.lost, 1);
	put_rec(ring, size, &head, PERF_RECORD_COMM, 0, 40, 0);
	put_rec(ring, size, &head, PERF_RECORD_SWITCH, 0, 16, 0);
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_ON);
	assert_int_equal(st.cpu, 0);
	assert_int_equal(tail, head);
	/* A malformed record (size 0) or an overrun skips everything. */
	put_rec(ring, size, &head, PERF_RECORD_SWITCH, 0, 0, 0);
	head += 8;
	kick_perf_scan(ring, size, &tail, head, &st);
	assert_int_equal(st.where, KICK_CPU_UNKNOWN);
	assert_int_equal(tail, head);
	st.where = KICK_CPU_ON;
	kick_perf_scan(ring, size, &tail, head + size + 8, &st);
	assert_int_equal(st.where, KICK_CPU_UNKNOWN);
	assert_int_equal(tail, head + size + 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_ring_seen_once,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_agent_does_not_rate_limit,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_agent_attach_is_not_a_host,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_off_cpu_reads_parked,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_kick_stats_round_trip,
						setup_name, unlink_name),
		cmocka_unit_test_setup_teardown(test_host_publishes_thread,
						setup_name, unlink_name),
		cmocka_unit_test(test_first_look_only_primes),
		cmocka_unit_test(test_rings_during_boost_extend_it),
		cmocka_unit_test(test_no_progress_ends_by_bound),
		cmocka_unit_test(
			test_heartbeat_proves_progress_without_records),
		cmocka_unit_test(test_on_cpu_proves_progress),
		cmocka_unit_test(test_parked_core_drains_when_it_parks_again),
		cmocka_unit_test(test_running_core_drains_when_it_parks),
		cmocka_unit_test(test_no_thread_no_boost),
		cmocka_unit_test(test_yield),
		cmocka_unit_test(test_boost_undo),
		cmocka_unit_test(test_new_region_reprimes),
		cmocka_unit_test(test_random_cores),
		cmocka_unit_test(test_perf_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
