/* SPDX-License-Identifier: BSD-3-Clause
 * libturbolb-host: what an RPC server links to tell turbolbd, through the
 * credit ring the daemon created, what each of its cores completed,
 * whether each core's thread runs, and that it is alive. No DPDK.
 *
 * Threading rules:
 *  - A struct tlb_host_core (one per host core) is used by exactly one
 *    thread at a time: tlb_host_complete, tlb_host_flush,
 *    tlb_host_set_running and tlb_host_beat on one handle must all come
 *    from the same thread (the core's single writer). Different handles
 *    may be used by different threads concurrently, without locks; one
 *    thread may own several handles.
 *  - tlb_host_core, tlb_host_stale, tlb_host_stale_now, tlb_host_reattach,
 *    tlb_host_n_cores, tlb_host_epoch and tlb_host_core_stats may be
 *    called from any thread, concurrently with the core threads.
 *  - tlb_host_close only after every core thread stopped using its handle.
 *
 * Batching: completions accumulate in the core's handle and go to the ring
 * as one credit record once `batch` of them are held, or on
 * tlb_host_flush. Call flush whenever the server has nothing to do (an
 * empty receive burst): credits must never wait on an idle core. A full
 * ring loses nothing: the completions stay held and go with the next post.
 *
 * Daemon restart: when turbolbd exits it marks the region closed; when it
 * starts again it creates a new region under the same name. tlb_host_stale
 * notices either, tlb_host_reattach attaches to the new region (a new host
 * epoch) while core threads keep running; each core moves to the new
 * region at its next call. Completions a core still held at that moment
 * belong to requests the old daemon sent, which the new one never counted:
 * they are discarded (and counted as such).
 *
 * Packet transport (turbolbd's host.transport: packet): where the host
 * shares no memory with turbolbd (a BlueField's host), tlb_host_open_packet
 * replaces the ring with feedback frames (feedback.h, docs/protocol.md):
 * the same calls hold completions, run state and heartbeats, and
 * tlb_host_feedback writes them, when there is something to say, as one
 * small frame that the server sends on the core's own queue with its
 * responses. A frame is due once `batch` completions are held; once the
 * oldest completion held is feedback_hold_us old (with a hold of 0: at
 * each flush instead, as a credit record would be posted); at a state
 * change that lasts until the next call; after a frame that could not be
 * sent (tlb_host_feedback_unsent); and at a heartbeat when the core sent
 * nothing for 100 ms. The hold is what keeps frames few at a low load,
 * where a core is idle after nearly every request: one frame carries the
 * completions of a hold period, and the daemon sees a core's completions
 * up to that much late (docs/host-integration.md weighs the two). There
 * is no region to go stale: a daemon that restarts takes the next frame
 * of each core as its base. With feedback_state_only, completions make
 * no frame due: frames go at state changes, after an unsent frame and at
 * the heartbeat, and the daemon completes requests from the responses.
 *
 * Scheduler kick: each core's slot also names the thread serving it (pid
 * and tid of the thread that first used the handle, or last called
 * tlb_host_set_running on it), so that turbolb-kickd can make that thread
 * run when the daemon rings the core's doorbell. Nothing to call for it.
 */
#ifndef TURBOLB_HOST_H
#define TURBOLB_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TLB_HOST_API __attribute__((visibility("default")))
#else
#define TLB_HOST_API
#endif

#define TLB_HOST_BATCH_DEFAULT            16u
#define TLB_HOST_BATCH_MAX                4096u
#define TLB_HOST_CHECK_MS_DEFAULT         100u
#define TLB_HOST_FEEDBACK_HOLD_US_DEFAULT 50u
#define TLB_HOST_FEEDBACK_HOLD_US_MAX     100000u
/* Bytes a feedback frame takes (tlb_host_feedback). */
#define TLB_HOST_FEEDBACK_LEN 64u

struct tlb_host;
struct tlb_host_core;

struct tlb_host_opts {
	/* Completions per credit record, 1..TLB_HOST_BATCH_MAX; 0: default
	 * (TLB_HOST_BATCH_DEFAULT). 1 posts every completion at once. */
	uint32_t batch;
	/* Least time in ms between two looks at the ring's name in
	 * tlb_host_stale (a system call each); 0: default
	 * (TLB_HOST_CHECK_MS_DEFAULT). */
	uint32_t stale_check_ms;
	/* Packet transport: the longest a completion waits in the handle
	 * for the frame that reports it, in us,
	 * 0..TLB_HOST_FEEDBACK_HOLD_US_MAX (see "Packet transport" above). 0:
	 * no hold, a frame at each flush. tlb_host_opts_init sets
	 * TLB_HOST_FEEDBACK_HOLD_US_DEFAULT. */
	uint32_t feedback_hold_us;
	/* The monotonic clock, in ns, that the packet transport's hold and
	 * heartbeat read; NULL: CLOCK_MONOTONIC. Called from the core
	 * threads with clock_arg. For a test's clock, or a server's own. */
	uint64_t (*clock_ns)(void *clock_arg);
	void *clock_arg;
	/* Packet transport, for a daemon that completes requests from the
	 * responses it forwards (turbolbd's host.credits: inband): frames
	 * say run state, heartbeat and epoch, and no completion makes one
	 * due (nor is feedback_hold_us used). Completions are still counted
	 * and each frame carries their totals. false (tlb_host_opts_init):
	 * completions make frames due as "Packet transport" above says. */
	bool feedback_state_only;
};

/* One core's counters. Each is written by the core's thread only; read
 * from elsewhere they may be a moment old. */
struct tlb_host_core_stats {
	uint64_t completed; /* tlb_host_complete calls */
	uint64_t posted;    /* completions that reached the ring */
	uint64_t records;   /* credit records posted */
	uint64_t ring_full; /* posts that found the ring full (retried) */
	uint64_t pending;   /* completions held in the handle now */
	uint64_t discarded; /* completions dropped: held across a reattach,
			     * or the new region has no slot for the core */
	uint64_t switches;  /* times the core moved to a new region */
};

/* Fills o with the defaults. */
TLB_HOST_API void tlb_host_opts_init(struct tlb_host_opts *o);

/* Attaches to the credit ring `ring_name` ("/turbolb-credits") that
 * turbolbd created. Returns NULL with err filled when the region does not
 * exist, cannot be opened, or is not a valid credit ring. opts may be
 * NULL (defaults). */
TLB_HOST_API struct tlb_host *tlb_host_open(const char *ring_name, char *err,
					    size_t errlen);
TLB_HOST_API struct tlb_host *
tlb_host_open_opts(const char *ring_name, const struct tlb_host_opts *opts,
		   char *err, size_t errlen);

/* Reports through feedback frames instead of a credit ring, for n_cores
 * cores (1..256): see "Packet transport" above. opts may be NULL
 * (defaults); its stale_check_ms is not used. */
TLB_HOST_API struct tlb_host *
tlb_host_open_packet(uint32_t n_cores, const struct tlb_host_opts *opts,
		     char *err, size_t errlen);

/* Packet transport: creates, on this machine, a credit ring `name` in
 * which the cores publish their threads, run states and heartbeats (no
 * credits: those go in the frames) for the host's kick agent,
 * turbolb-kickd, which attaches to it as it would to turbolbd's ring and
 * takes its doorbells from kick frames (turbolb-kickd --listen). Call it
 * before the cores' first call; tlb_host_close removes the ring. Returns
 * 0, or -1 with err filled. */
TLB_HOST_API int tlb_host_agent_ring(struct tlb_host *h, const char *name,
				     char *err, size_t errlen);

/* Packet transport, the core's thread: when the core has something to
 * report, writes one feedback frame into buf (room for len bytes, at least
 * TLB_HOST_FEEDBACK_LEN) and returns its length; 0 when there is nothing
 * to send now (and always with a credit ring). Send the frame on the
 * core's own queue, the one its responses leave by; call it after each
 * burst of responses and at each idle poll. A frame that does not get out
 * loses nothing: every frame carries the core's totals. */
TLB_HOST_API size_t tlb_host_feedback(struct tlb_host_core *c, void *buf,
				      size_t len);

/* The frame tlb_host_feedback wrote last could not be sent (a full TX
 * queue, no buffer): the core's next call writes one again, with the
 * same totals or newer. */
TLB_HOST_API void tlb_host_feedback_unsent(struct tlb_host_core *c);

/* The core stops serving for good (its thread exits): OFFLINE, so that
 * turbolbd sends it nothing more. With a credit ring tlb_host_close does
 * it for every core; with feedback frames the core's next frame says it. */
TLB_HOST_API void tlb_host_set_offline(struct tlb_host_core *c);

/* Posts what the cores still hold (once, if there is room), marks every
 * core OFFLINE, detaches and frees everything, handles included. */
TLB_HOST_API void tlb_host_close(struct tlb_host *h);

/* Cores in the region now attached (it may change at a reattach). */
TLB_HOST_API uint32_t tlb_host_n_cores(struct tlb_host *h);

/* The host epoch our last attach put into the region. */
TLB_HOST_API uint64_t tlb_host_epoch(struct tlb_host *h);

/* The handle of host core `core` (the same one on every call), or NULL if
 * the region has no such core. The first call on the handle from its
 * thread marks the core RUNNING. */
TLB_HOST_API struct tlb_host_core *tlb_host_core(struct tlb_host *h,
						 uint32_t core);

/* One request completed on this core: work_ns is the work the NIC charged
 * it (the work_ns of its RPC header, echoed), service_ns what serving it
 * took. Posts a credit record once `batch` completions are held. */
TLB_HOST_API void tlb_host_complete(struct tlb_host_core *c, uint32_t work_ns,
				    uint32_t service_ns);

/* Posts what the core holds now. Returns 0 when nothing is held any more,
 * -EAGAIN when the ring is full (the completions stay held; flush again
 * later), -EINVAL for a NULL handle. Packet transport: returns 0; with a
 * hold of 0 the next tlb_host_feedback frame carries what is held, with a
 * hold the frame that the hold makes due does (a flush at every idle
 * poll costs nothing then). */
TLB_HOST_API int tlb_host_flush(struct tlb_host_core *c);

/* RUNNING (true: polling or serving) or PARKED (false: about to sleep,
 * block or yield). Call it on changes, not on every loop. */
TLB_HOST_API void tlb_host_set_running(struct tlb_host_core *c, bool running);

/* Proof of life: bumps the core's heartbeat counter. */
TLB_HOST_API void tlb_host_beat(struct tlb_host_core *c);

/* Copies the core's counters (any thread). */
TLB_HOST_API void tlb_host_core_stats(const struct tlb_host_core *c,
				      struct tlb_host_core_stats *out);

/* True when the attached region is no longer the daemon's: it was closed
 * (CLOSED flag), or the name now refers to another object or to nothing.
 * Looks at most once per stale_check_ms and answers from the last look in
 * between, so it is cheap to call often; once true it stays true until a
 * reattach succeeds. tlb_host_stale_now looks at once. */
TLB_HOST_API bool tlb_host_stale(struct tlb_host *h);
TLB_HOST_API bool tlb_host_stale_now(struct tlb_host *h);

/* Attaches anew to the region now under the name (a new host epoch); the
 * old one is released once every core has moved off it. Returns 0, or -1
 * with err filled and the old attachment kept (retry later: the daemon may
 * not be back yet). */
TLB_HOST_API int tlb_host_reattach(struct tlb_host *h, char *err,
				   size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* TURBOLB_HOST_H */
