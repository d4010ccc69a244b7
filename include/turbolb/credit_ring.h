/* SPDX-License-Identifier: BSD-3-Clause
 * The credit ring: a POSIX shared-memory region through which host cores
 * tell the NIC side what they completed, whether they run, and that they
 * are alive. No DPDK. Each host core owns one slot: a single-producer
 * (that host core) / single-consumer (the dispatcher) ring of credit
 * records, plus its run-state word and heartbeat.
 *
 * Region layout (all little-endian host memory, offsets in bytes):
 *
 *   0      struct tlb_cr_header          (one cache line, 64 bytes)
 *   64     struct tlb_cr_slot[n_cores]   (each slot is 192 bytes of
 *                                         control lines followed by
 *                                         ring_size records of 32 bytes)
 *
 *   slot: line 0  prod_head   (written by the host core, release)
 *         line 1  cons_tail   (written by the NIC side, release)
 *         line 2  the core's run state and its scheduler kick:
 *                   +0  state      u32  host core thread
 *                   +4  sched      u32  kick agent (TLB_CR_SCHED_*)
 *                   +8  heartbeat  u64  host core thread
 *                   +16 doorbell   u64  NIC side
 *                   +24 thread     u64  host core thread: pid << 32 | tid
 *                   +32 kick stats 4 x u64  kick agent (struct
 *                                  tlb_cr_kick_stats, in its order)
 *         then    struct tlb_credit ring[ring_size]
 *
 * Every word has one writer. The thread word and the kick agent's words
 * came after the first cut of version 1, in what was zero padding, and 0
 * means "not published" in each: peers built before them interoperate
 * with peers built after, so the layout version stayed 1.
 *
 * The kick agent (turbolb-kickd, docs/host-integration.md) is a third
 * party: it attaches with tlb_cr_attach_agent, which neither bumps the
 * host epoch nor touches positions, reads the doorbells and writes only
 * its own words.
 *
 * Who creates it: the NIC side (turbolbd) creates the region (mode 0600 by
 * default) with a fresh nic_epoch. A host process attaches, checks magic,
 * version and size, and bumps host_epoch: the NIC side sees the change,
 * resets its view of that host and starts over. Producers index with free
 * running 32-bit counters masked by ring_size - 1 (a power of two).
 */
#ifndef TURBOLB_CREDIT_RING_H
#define TURBOLB_CREDIT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TLB_CR_MAGIC     0x544c4352u /* "TLCR" */
#define TLB_CR_VERSION   1u
#define TLB_CR_NAME_MAX  64
#define TLB_CR_MAX_CORES 256u
#define TLB_CR_MAX_RING  65536u

enum tlb_core_run_state {
	TLB_RUN_OFFLINE = 0, /* no host thread attached to this core */
	TLB_RUN_RUNNING = 1, /* thread is polling or serving */
	TLB_RUN_PARKED = 2,  /* thread is about to block or yield */
};

/* One credit record: a batch of completions of one host core. */
struct tlb_credit {
	uint32_t completions; /* requests completed in this batch */
	uint32_t reserved;
	uint64_t work_ns;    /* sum of the work_ns the NIC charged them */
	uint64_t service_ns; /* sum of their measured service times */
	uint64_t host_ts_ns; /* host CLOCK_MONOTONIC when posted */
};

/* What tlb_cr_drain_sums reports of one core that had credits. */
struct tlb_credit_sum {
	uint32_t idx; /* position of the core in the list asked for */
	uint32_t records;
	uint64_t completions;
	uint64_t work_ns;
};

struct tlb_cr_header {
	uint32_t magic;
	uint32_t version;
	uint64_t size; /* total bytes of the region */
	uint32_t n_cores;
	uint32_t ring_size;  /* records per core, power of two */
	uint64_t nic_epoch;  /* set by the NIC side at create */
	uint64_t host_epoch; /* bumped by each host attach (atomic) */
	uint32_t nic_pid;
	uint32_t flags; /* TLB_CR_F_* */
	uint8_t pad[16];
};

#define TLB_CR_F_CLOSED 0x1u /* NIC side went away: host must reattach */

/* The kick agent's sched word. */
#define TLB_CR_SCHED_OFF_CPU 0x1u /* the core's thread is not on a CPU */

/* What the kick agent did for one core: monotonic counters. */
struct tlb_cr_kick_stats {
	uint64_t kicks_served;   /* doorbell rings the agent acted on */
	uint64_t boosts;         /* boosts started */
	uint64_t reverted_drain; /* boosts ended because the work drained */
	uint64_t reverted_bound; /* boosts ended by the time bound */
};

/* Opaque handle for any side. */
struct tlb_cr;

/* Bytes a region with these dimensions takes; 0 if n_cores is not in
 * 1..TLB_CR_MAX_CORES or ring_size is not a power of two in
 * 16..TLB_CR_MAX_RING. */
size_t tlb_cr_region_size(uint32_t n_cores, uint32_t ring_size);

/* ---- NIC side ---- */

/* Creates (replacing any old one) the region `name` ("/turbolb-credits")
 * with the given mode (0600, or 0660 for a group of host processes: they
 * write credits, so read access alone is no use). Returns 0, or -1 with
 * err filled. */
int tlb_cr_create(const char *name, uint32_t n_cores, uint32_t ring_size,
		  mode_t mode, struct tlb_cr **out, char *err, size_t errlen);

/* The same, and the region's group becomes gid (fchown) before any host
 * can see it; (gid_t)-1 keeps the creator's group. */
int tlb_cr_create_group(const char *name, uint32_t n_cores, uint32_t ring_size,
			mode_t mode, gid_t gid, struct tlb_cr **out, char *err,
			size_t errlen);

/* Drains at most max records of core's ring into out. Returns the count. */
unsigned int tlb_cr_drain(struct tlb_cr *cr, uint32_t core,
			  struct tlb_credit *out, unsigned int max);

/* For each of the n cores core[0..n): drains at most max records (1..
 * TLB_CR_SUMS_MAX) and, when there were any, appends their sum to out
 * (room for n). Returns the number of sums. A core with nothing new costs
 * two loads and a compare: the dispatcher calls this once a poll for all
 * its cores, most of them idle between two polls. */
#define TLB_CR_SUMS_MAX 64u
uint32_t tlb_cr_drain_sums(struct tlb_cr *cr, const uint32_t *core, uint32_t n,
			   unsigned int max, struct tlb_credit_sum *out);

/* The run state the NIC side acts on: the host core's own word, except
 * that a RUNNING core whose thread the kick agent saw off its CPU
 * (TLB_CR_SCHED_OFF_CPU) reads PARKED. */
enum tlb_core_run_state tlb_cr_state(const struct tlb_cr *cr, uint32_t core);
uint64_t tlb_cr_heartbeat(const struct tlb_cr *cr, uint32_t core);

/* Returns the host epoch now in the region (0: no host attached yet). */
uint64_t tlb_cr_host_epoch(const struct tlb_cr *cr);

/* Rings core's doorbell (a counter the host side's kick agent watches). */
void tlb_cr_ring_doorbell(struct tlb_cr *cr, uint32_t core);

/* Marks the region closed and unmaps; unlink removes the name too. */
void tlb_cr_destroy(struct tlb_cr *cr, bool unlink);

/* ---- NIC side: a region its hosts can break ----
 *
 * Anyone who may write the region (its mode and group) can truncate it,
 * grow it, or write anything into it. None of that may crash the NIC
 * side or reach its load view. The contract:
 *
 * - Truncation: the NIC side's accesses to the mapping are guarded by a
 *   SIGBUS handler (installed by tlb_cr_create, chained to whatever
 *   handler was there before). A SIGBUS inside a NIC-side ring mapping
 *   does not kill the process: the handler maps anonymous zero pages over
 *   the whole mapping, puts every core on hold and returns, so the access
 *   that faulted completes (reading zeros) and nothing else can fault.
 *   The hot path pays nothing for the guard: no sigsetjmp, no syscall.
 * - Size changes, header rewrites (magic, version, dimensions, size,
 *   nic_epoch, nic_pid, the closed flag): found by tlb_cr_check, which
 *   the control thread calls periodically (fstat of the object and a
 *   compare of the header with what the NIC side wrote).
 * - Impossible positions (a prod_head more than a ring ahead of the
 *   consumer, whose own position the NIC side keeps in private memory and
 *   never reads back from the region) and records out of range (more
 *   work_ns than completions x UINT32_MAX, the most a u32 charge each can
 *   carry): found by the drain itself, which credits nothing from them.
 *
 * Each is counted (tlb_cr_faults) and puts the cores it touches, one core
 * or all of them, in fallback: their ring credits are no longer trusted.
 * A region fault is repaired by tlb_cr_check (the object's size and the
 * header rewritten, the mapping bound to the object again, the positions
 * of each slot set back to the consumer's); a bad position is repaired by
 * the drain (prod_head set back to the consumer). A core leaves fallback
 * when a host attaches again (a new host_epoch in a valid header): ring
 * credits are restored. In fallback the core's state reads OFFLINE (out of
 * rotation: nothing new is charged to it) and its validated records are
 * still drained, so that work already charged is paid back; with
 * tlb_cr_set_inband_fallback(cr, true) the consumer says it counts such a
 * core's completions from the responses instead (in-band): the core then
 * reads RUNNING and its records are drained and dropped, never credited.
 * While the region is on hold (between a fault and its repair) the host
 * epoch reads as the last one seen in a valid header, so that a zeroed or
 * rewritten header does not look like a host restart.
 */

/* Fault counters of one NIC-side region, monotonic. */
struct tlb_cr_faults {
	uint64_t sigbus;         /* SIGBUS caught by the guard (truncation) */
	uint64_t size_changes;   /* region found shrunk (SIGBUS) or resized */
	uint64_t bad_header;     /* header rewritten by someone else */
	uint64_t bad_index;      /* prod_head more than a ring ahead */
	uint64_t bad_record;     /* records out of range, not credited */
	uint64_t repairs;        /* region rewritten by the NIC side */
	uint64_t restores;       /* cores back on ring credits (re-attach) */
	uint32_t fallback_cores; /* cores in fallback now */
};

void tlb_cr_faults(const struct tlb_cr *cr, struct tlb_cr_faults *out);

/* True while core's ring credits are not trusted (see above). */
bool tlb_cr_fallback(const struct tlb_cr *cr, uint32_t core);

/* Whether the consumer counts the completions of a core in fallback from
 * its responses (see above). Default false. */
void tlb_cr_set_inband_fallback(struct tlb_cr *cr, bool on);

/* What tlb_cr_check reports: warn for a fault, not for a repair or a
 * restore. */
typedef void tlb_cr_log_fn(void *arg, bool warn, const char *msg);

/* The control thread's periodic check of a NIC-side region: size and
 * header, the repair of a faulted region, the restore of cores a new host
 * attached for, and one message through log (may be NULL) per kind of
 * event since the last call. Not for dispatcher threads (fstat, mmap,
 * ftruncate). One caller at a time. Returns the number of new events. */
unsigned int tlb_cr_check(struct tlb_cr *cr, tlb_cr_log_fn *log, void *arg);

/* ---- host side ---- */

/* Attaches to an existing region, validating magic, version, size and
 * dimensions; on any mismatch returns -1 with a clear err and writes
 * nothing to the region. On success bumps host_epoch and returns 0.
 * Producer positions are kept: records an earlier host posted and the NIC
 * side has not drained yet are still drained (they are real completions).
 * Only a prod_head more than a ring ahead of cons_tail is reset to it. */
int tlb_cr_attach(const char *name, struct tlb_cr **out, char *err,
		  size_t errlen);

/* Validates a region held in memory (used by attach and by the fuzzer):
 * returns 0 if buf[0..len) is a well-formed region. Never writes. */
int tlb_cr_validate(const void *buf, size_t len, char *err, size_t errlen);

/* Posts up to n records for core; returns how many fit (0 when full). */
unsigned int tlb_cr_post(struct tlb_cr *cr, uint32_t core,
			 const struct tlb_credit *recs, unsigned int n);

void tlb_cr_set_state(struct tlb_cr *cr, uint32_t core,
		      enum tlb_core_run_state st);
void tlb_cr_beat(struct tlb_cr *cr, uint32_t core);

/* Host side: doorbell count (the kick agent compares it to what it saw). */
uint64_t tlb_cr_doorbell(const struct tlb_cr *cr, uint32_t core);

/* Publishes which thread serves core: its process id and thread id (as
 * gettid() returns them, in the host's pid namespace). 0, 0: none. */
void tlb_cr_set_tid(struct tlb_cr *cr, uint32_t core, uint32_t pid,
		    uint32_t tid);

/* True if the NIC side closed the region (host should reattach). */
bool tlb_cr_closed(const struct tlb_cr *cr);

/* Host side: sets every core OFFLINE, withdraws its thread and unmaps.
 * Kick agent side: withdraws its OFF_CPU flags and unmaps. */
void tlb_cr_detach(struct tlb_cr *cr);

/* ---- kick agent side ---- */

/* Attaches to an existing region as the kick agent: validates it like
 * tlb_cr_attach, but leaves host_epoch and the ring positions alone (the
 * agent is not a new host). Returns 0, or -1 with err filled. */
int tlb_cr_attach_agent(const char *name, struct tlb_cr **out, char *err,
			size_t errlen);

/* The thread the host published for core (0: none); *pid gets its
 * process id when pid is not NULL. One load: pid and tid always match. */
uint32_t tlb_cr_tid(const struct tlb_cr *cr, uint32_t core, uint32_t *pid);

/* The host core's own run-state word, without the agent's OFF_CPU. */
enum tlb_core_run_state tlb_cr_host_state(const struct tlb_cr *cr,
					  uint32_t core);

/* Credit records the host core has posted (its free-running producer
 * position): moves whenever the core reports completions. */
uint32_t tlb_cr_records_posted(const struct tlb_cr *cr, uint32_t core);

/* The agent's sched word (TLB_CR_SCHED_*); both sides may read it. */
void tlb_cr_set_sched(struct tlb_cr *cr, uint32_t core, uint32_t flags);
uint32_t tlb_cr_sched(const struct tlb_cr *cr, uint32_t core);

/* The agent's counters for core; both sides may read them (each counter
 * on its own, so they may be a moment apart from each other). */
void tlb_cr_set_kick_stats(struct tlb_cr *cr, uint32_t core,
			   const struct tlb_cr_kick_stats *ks);
void tlb_cr_kick_stats(const struct tlb_cr *cr, uint32_t core,
		       struct tlb_cr_kick_stats *out);

/* Accessors for both sides. */
uint32_t tlb_cr_n_cores(const struct tlb_cr *cr);
uint32_t tlb_cr_ring_size(const struct tlb_cr *cr);

#endif /* TURBOLB_CREDIT_RING_H */
