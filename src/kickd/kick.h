/* SPDX-License-Identifier: BSD-3-Clause
 * The scheduler kick's decision logic, as turbolb-kickd runs it for each
 * core: pure functions on the agent's memory of a core (struct kick_core)
 * and one look at its slot (struct kick_obs), and the parser of a
 * thread's perf context-switch records. No system call, no clock: the
 * caller passes the time, so tests/unit/test_kick.c drives it on
 * constructed states. docs/host-integration.md ("The scheduler kick") has
 * the whole design.
 */
#ifndef TURBOLB_KICK_H
#define TURBOLB_KICK_H

#include <stdbool.h>
#include <stdint.h>

#include "turbolb/credit_ring.h"

struct kick_params {
	/* No doorbell ring and no credit record for this long, after the
	 * core has shown that it ran: its work has drained. */
	uint64_t quiet_ns;
	/* No boost lasts longer: a buggy core cannot keep its CPU. */
	uint64_t max_boost_ns;
};

/* A thread's place as its context-switch records tell it. */
enum kick_cpu {
	KICK_CPU_UNKNOWN, /* not watched, no record yet, records lost */
	KICK_CPU_ON,
	KICK_CPU_OFF,
};

/* One look at a core's slot, and at its thread. */
struct kick_obs {
	uint64_t doorbell;
	uint64_t heartbeat;
	uint32_t records; /* credit records posted (free running) */
	enum tlb_core_run_state host_state; /* the thread's own word */
	bool thread_ok;    /* a live thread to boost is known */
	enum kick_cpu cpu; /* where the thread is */
};

/* What the agent did for one core, over its whole life. */
struct kick_counts {
	uint64_t rings;   /* doorbell rings seen, each exactly once */
	uint64_t served;  /* rings that started or extended a boost */
	uint64_t ignored; /* rings with no thread to boost, or whose
			   * boost failed */
	uint64_t boosts;  /* boosts started */
	uint64_t reverted_drain;
	uint64_t reverted_bound;
	uint64_t reverted_yield; /* gave its CPU to a newer boost */
	uint64_t boost_failures;
	uint64_t boosted_ns; /* time spent boosted */
};

/* The agent's memory of one core. kick_core_forget clears all of it but
 * the counters. */
struct kick_core {
	bool primed; /* the fields below hold a first look */
	bool boosted;
	bool posts_records; /* its records moved since we look */
	bool saw_running;   /* RUNNING at or since the boost */
	bool saw_on_cpu;    /* on its CPU at or since the boost */
	uint64_t doorbell;
	uint64_t heartbeat;
	uint32_t records;
	uint32_t records_at_boost;
	uint64_t hb_at_boost;
	uint64_t boost_ns;    /* when the boost began */
	uint64_t active_ns;   /* last ring or record (or the boost) */
	uint64_t boost_rings; /* rings the boost was started for */
	struct kick_counts n;
};

enum kick_action {
	KICK_NONE,
	KICK_BOOST,        /* make the thread run now */
	KICK_REVERT_DRAIN, /* its work drained: back to its policy */
	KICK_REVERT_BOUND, /* boosted max_boost_ns: back, whatever */
	KICK_REVERT_YIELD, /* a newer boost needs its CPU: back */
};

/* A thread's context switches as its perf ring tells them. */
struct kick_perf {
	enum kick_cpu where;
	int32_t cpu;       /* CPU of its last switch; -1: not known */
	uint64_t switches; /* switch records seen */
	uint64_t lost;     /* lost-records records seen */
};

/* Forgets the core's doorbell and boost (a new region, a new thread);
 * the caller has reverted any boost already. */
void kick_core_forget(struct kick_core *k);

/* Ends k's boost at now_ns for reason a (a revert): counts it and the
 * time boosted, and returns a. */
enum kick_action kick_end(struct kick_core *k, uint64_t now_ns,
			  enum kick_action a);

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
enum kick_action kick_step(struct kick_core *k, const struct kick_obs *o,
			   uint64_t now_ns, const struct kick_params *p);

/* A newer boost is for a thread waiting on the CPU this boosted thread
 * holds. Boosts have one priority, so the newer one would wait behind
 * this one, for as long as this one keeps finding work, up to the bound:
 * a kick must make its thread run now, as the hypervisor's scheduler
 * would on the NIC's kick, so the older boost ends. If its core still has
 * work, the NIC side kicks it again (a stall kick). */
enum kick_action kick_yield(struct kick_core *k, uint64_t now_ns);

/* The boost kick_step asked for was not made: the thread is gone or
 * already real-time, the agent only watches, or (failure) the kernel
 * refused. Undoes its bookkeeping: its rings count as ignored. */
void kick_boost_undo(struct kick_core *k, bool failure);

/* What the slot publishes for the daemon's telemetry: a boost that
 * yielded ended before the bound, with its core's turn done for now, so
 * it counts with the drained ones there. */
void kick_slot_stats(const struct kick_core *k, struct tlb_cr_kick_stats *ks);

/* Consumes the perf records in data[*tail..head) (a ring of size bytes, a
 * power of two) into st: where the last context-switch record left the
 * thread, and on which CPU. A PERF_RECORD_SWITCH is an 8-byte header
 * whose misc says out or in, followed by the sample id the event asks for
 * (sample_id_all, PERF_SAMPLE_CPU: u32 cpu, u32 reserved). A lost-records
 * record makes the place unknown until the next switch; other records are
 * skipped by their size. Records are 8-byte multiples at 8-byte offsets,
 * so a header or the cpu word never straddles the end of the ring. A
 * malformed ring is skipped whole. */
void kick_perf_scan(const uint8_t *data, uint64_t size, uint64_t *tail,
		    uint64_t head, struct kick_perf *st);

#endif /* TURBOLB_KICK_H */
