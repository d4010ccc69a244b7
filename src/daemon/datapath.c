/* SPDX-License-Identifier: BSD-3-Clause
 * The poll loop of a dispatcher lcore.
 *
 *   uplink RX -> parse -> request?  affinity / FIFO / policy -> target TX
 *                         not ours? -> default target TX (pass through)
 *   target RX -> parse -> response? count completion (inband) -> uplink TX
 *                         not ours? -> uplink TX (pass through)
 *   credit ring -> completions (credits: ring)
 *   end of poll: send the TX buffers that are due (the latency bound)
 *   every housekeeping_us: liveness, host run states, epoch
 */
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>

#include "turbolb/feedback.h"
#include "turbolb/proto_fast.h"
#include "turbolb/stats.h"
#include "turbolb/svc_est.h"
#include "dp.h"
#include "log.h"
#include "port.h"

RTE_LOG_REGISTER(tlb_logtype_dp, turbolb.dp, INFO);

#define MAX_BURST    512
#define CREDIT_BURST 32
/* Prefetch distances in a burst, in packets: the frame's two cache lines
 * PREFETCH_AHEAD ahead, the mbuf's first line (where the frame's address
 * is) MBUF_PREFETCH_AHEAD ahead, so that the frame's prefetch finds it.
 * A window, not the whole burst at once: more prefetches in flight than
 * the core keeps stall it (docs/performance.md, "Prefetch distances"). */
#define PREFETCH_AHEAD      4
#define MBUF_PREFETCH_AHEAD 8
/* every target queue is polled at least every this many iterations */
#define TLB_DP_TARGET_ROUND 4

volatile bool tlb_force_quit;
struct tlb_dp *tlb_dps[RTE_MAX_LCORE];
unsigned int tlb_n_dps;

const char *const tlb_dp_counter_names[TLB_DP_N_COUNTERS] = {
#define X(name, ...) #name,
	TLB_DP_COUNTERS(X)
#undef X
};

static inline void
count(struct tlb_dp *dp, enum tlb_dp_counter c, uint64_t n)
{
	tlb_counter_add(&dp->stats.c[c], n);
}

static inline uint64_t
tsc_to_ns(const struct tlb_dp *dp, uint64_t tsc)
{
	/* A multiply, not a double division, on every poll. */
	return (uint64_t)(((unsigned __int128)tsc * dp->ns_per_tsc_q32) >> 32);
}

/* TX ring full: whatever was charged to a core never reaches it, so it is
 * no longer outstanding there. The dispatch is taken back rather than
 * counted as a completion: a core whose ring is full completes nothing,
 * and must go stale like any other core that makes no progress. */
static void
tx_unsent(struct tlb_dp_port *port, uint16_t from, uint16_t to)
{
	struct tlb_dp *dp = port->dp;

	for (uint16_t i = from; i < to; i++) {
		if (port->core >= 0 && port->charge[i] != 0)
			tlb_lv_on_unsent(dp->lv, (uint32_t)port->core, 1,
					 port->charge[i] - 1);
		rte_pktmbuf_free(port->pkts[i]);
	}
	count(dp, port->drop, to - from);
}

/* Whether a port's protocol completes by id: the table of outstanding ids
 * is made only then. */
static bool
ids_needed(const struct tlb_parse_opts *o)
{
	for (unsigned int i = 0; i < o->n_proto_ports; i++)
		if (tlb_proto_completion(o->proto_ports[i].proto) ==
		    TLB_COMPLETE_BY_ID)
			return true;
	return false;
}

static int port_init(struct tlb_dp *dp, struct tlb_dp_port *port,
		     const struct tlb_port_ref *ref, int core,
		     enum tlb_dp_counter drop, char *err, size_t errlen);

/* Counts n packets sent at tsc with the residence of the oldest of them,
 * whose poll started at since: one record per full buffer and per end of
 * poll, not per TX call, to keep it off the per-queue cost. */
static inline void
residence_record(struct tlb_dp *dp, uint64_t tsc, uint64_t since, uint32_t n)
{
	uint64_t d = tsc > since ? tsc - since : 0;
	unsigned int b = tlb_le_bucket(dp->residence_le_tsc,
				       TLB_RESIDENCE_BUCKETS - 1, d);

	tlb_counter_add(&dp->stats.residence[b], n);
	tlb_counter_add(&dp->stats.residence_tsc, d * n);
}

/* Sends what the buffer holds; what the queue refuses is dropped,
 * counted, and uncharged. The port stays in dp->pending. The caller
 * records the residence. */
static __rte_noinline void
port_flush(struct tlb_dp_port *port)
{
	uint16_t n = port->length, sent;

	if (n == 0)
		return;
	sent = rte_eth_tx_burst(port->port_id, port->queue, port->pkts, n);
	port->length = 0;
	if (unlikely(sent < n))
		tx_unsent(port, sent, n);
}

/* Buffers m, which charged its core charge (work + 1, 0: nothing), and
 * sends the buffer when it is full. The first packet of a buffer sets its
 * deadline and puts the port on the pending list. */
static inline void
port_send(struct tlb_dp_port *port, struct rte_mbuf *m, uint64_t charge)
{
	uint16_t i = port->length;

	if (i == 0) {
		struct tlb_dp *dp = port->dp;

		port->first_tsc = dp->poll_tsc;
		port->deadline = dp->poll_tsc + port->hold_tsc;
		if (!port->listed) {
			port->listed = true;
			dp->pending[dp->n_pending++] = port;
		}
	}
	port->pkts[i] = m;
	port->charge[i] = charge;
	port->length = ++i;
	if (unlikely(i >= port->size)) {
		residence_record(port->dp, rte_rdtsc(), port->first_tsc, i);
		port_flush(port);
	}
}

/* The buffer goes out at the end of this poll, whatever its hold. */
static inline void
port_due_now(struct tlb_dp_port *port)
{
	port->deadline = 0;
}

/* End of a poll: sends every buffer whose deadline is past at tsc (all of
 * them when all is set) and keeps the rest on the pending list. */
static void
send_due(struct tlb_dp *dp, uint64_t tsc, bool all)
{
	uint64_t oldest = tsc;
	uint32_t kept = 0, sent = 0;

	for (uint32_t j = 0; j < dp->n_pending; j++) {
		struct tlb_dp_port *port = dp->pending[j];

		if (port->length != 0 && !all && tsc < port->deadline) {
			dp->pending[kept++] = port;
			continue;
		}
		if (port->length != 0) {
			sent += port->length;
			oldest = RTE_MIN(oldest, port->first_tsc);
		}
		port_flush(port);
		port->listed = false;
	}
	dp->n_pending = kept;
	if (sent != 0)
		residence_record(dp, tsc, oldest, sent);
}

static inline void
prefetch_frame(struct rte_mbuf *m)
{
	const char *f = rte_pktmbuf_mtod(m, const char *);

	rte_prefetch0(f);
	rte_prefetch0(f + 64);
}

/* The first packets of a burst of n: mbufs, then frames. */
static inline void
prefetch_start(struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < MBUF_PREFETCH_AHEAD && i < n; i++)
		rte_prefetch0(pkts[i]);
	for (uint16_t i = 0; i < PREFETCH_AHEAD && i < n; i++)
		prefetch_frame(pkts[i]);
}

/* While packet i is handled: the mbuf ahead. */
static inline void
prefetch_mbuf_ahead(struct rte_mbuf **pkts, uint16_t n, uint16_t i)
{
	if (i + MBUF_PREFETCH_AHEAD < n)
		rte_prefetch0(pkts[i + MBUF_PREFETCH_AHEAD]);
}

/* ---- NIC-side FIFO ---- */

static inline bool
fifo_empty(const struct tlb_fifo *f)
{
	return f->head == f->tail;
}

/* rq: what the fast parser read of m, NULL if it was parsed in full. */
static inline bool
fifo_push(struct tlb_fifo *f, struct rte_mbuf *m, const struct tlb_req_fast *rq)
{
	struct tlb_fifo_slot *s;

	if (f->tail - f->head >= f->limit)
		return false;
	s = &f->slot[f->tail++ & (f->capacity - 1)];
	s->m = m;
	s->fast = rq != NULL;
	if (rq != NULL)
		s->rq = *rq;
	return true;
}

static inline struct tlb_fifo_slot *
fifo_peek(const struct tlb_fifo *f)
{
	return &f->slot[f->head & (f->capacity - 1)];
}

/* ---- the scheduler kick ---- */

/* The doorbell of host core i as a kick frame (feedback.h) out of the
 * default target, where the host's kick agent receives it through the
 * kernel. It carries the core's doorbell count, so that a lost frame is
 * made up by the next one. */
static __rte_noinline void
kick_frame(struct tlb_dp *dp, uint32_t i)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(dp->kick_pool);
	/* the shortest Ethernet frame, padded with zeros */
	const uint16_t len = 60;
	char *f;

	if (unlikely(m == NULL)) {
		count(dp, TLB_DP_drop_kick_no_mbuf, 1);
		return;
	}
	f = rte_pktmbuf_append(m, len);
	memset(f, 0, len);
	tlb_kick_build(f, len, dp->kick_src_mac, (uint16_t)dp->core_id[i],
		       ++dp->kick_count[i]);
	count(dp, TLB_DP_kick_frames, 1);
	port_send(&dp->default_target, m, 0);
}

/* Rings host core i's doorbell, at most once per kick interval: its kick
 * agent then makes the core's thread run now. */
static inline void
kick(struct tlb_dp *dp, uint32_t i, enum tlb_dp_counter c)
{
	if (dp->poll_ns - dp->last_kick_ns[i] < dp->kick_interval_ns)
		return;
	dp->last_kick_ns[i] = dp->poll_ns;
	if (dp->kick_pool != NULL)
		kick_frame(dp, i);
	else
		tlb_transport_doorbell(dp->host, dp->core_id[i]);
	count(dp, c, 1);
}

/* ---- request path ---- */

/* What steering a request depends on besides the request. The request
 * loop is instantiated once per combination of flow_key and own
 * (from_uplink_burst()) with the mode a constant there, so that the
 * compiler drops the branches that do not apply. */
struct steer_mode {
	bool flow_key;  /* the policy hashes the flow: no fast path */
	bool own;       /* the policy's own dispatch (jlq) */
	bool from_fifo; /* a held request leaving the FIFO */
};

/* Where a request went: its host core (>= 0), or one of these. */
enum { STEER_HOLD = -1, STEER_DROPPED = -2 };

/* A new message to the policy's choice, unless the policy says hold. The
 * work charged is stamped into the frame: through p, or at the fixed
 * offsets of the fast layout when p is NULL (constant in both callers).
 * Returns the core or a STEER_ code. */
static __rte_always_inline int
steer_new(struct tlb_dp *dp, struct rte_mbuf *m,
	  const struct tlb_request_info *req, const struct tlb_parsed *p,
	  struct steer_mode mode)
{
	int core;

	/* charged to the core with the pick, and stamped into the frame */
	uint32_t work = tlb_policy_work_estimate(&dp->policy, req);

	/* The policy's own dispatch (jlq: the pick and the charge, which
	 * keep its order exact), or its pick, charged below. */
	if (mode.own)
		core = dp->policy.ops->dispatch(&dp->policy, dp->lv, req, work);
	else
		core = tlb_policy_pick(&dp->policy, dp->lv, req);
	if (unlikely(core < 0)) { /* one test for both */
		if (core == TLB_PICK_HOLD)
			return STEER_HOLD;
		count(dp, TLB_DP_drop_no_core, 1);
		rte_pktmbuf_free(m);
		return STEER_DROPPED;
	}
	if (p == NULL)
		tlb_rpc_stamp_fast(rte_pktmbuf_mtod(m, void *), work);
	else
		tlb_rpc_set_work_ns(rte_pktmbuf_mtod(m, void *), p, work);
	if (!mode.own)
		tlb_lv_on_dispatch(dp->lv, (uint32_t)core, work);
	/* A probed core gets one request at a time: now it has one. */
	if (unlikely(dp->lv->core[core].probing))
		tlb_lv_refresh(dp->lv, (uint32_t)core);
	if (unlikely(dp->kick) && !dp->lv->core[core].running)
		kick(dp, (uint32_t)core, TLB_DP_kicks_sent);
	dp->pend_messages++;
	if (mode.from_fifo)
		count(dp, TLB_DP_released, 1);
	port_send(&dp->target[core], m, (uint64_t)work + 1);
	/* Under a bound the core's answers are looked for in every poll,
	 * since each one lets the next request go; at the bound it gets
	 * nothing more until it answers, so holding its buffer would only
	 * idle it. */
	if (unlikely(dp->policy.bound != 0)) {
		dp->target_owed[core / 64] |= 1ull << (core % 64);
		if (tlb_lv_outstanding(dp->lv, (uint32_t)core) >=
		    dp->policy.bound)
			port_due_now(&dp->target[core]);
	}
	return core;
}

/* An incomplete message's charge goes back to its core, unless the
 * core has been written off or reset since. */
static void
message_lost(struct tlb_dp *dp, const struct tlb_aff_msg *msg)
{
	if (msg->core < dp->n_cores && dp->lv->core[msg->core].gen == msg->gen)
		tlb_lv_on_unsent(dp->lv, msg->core, 1, msg->work_ns);
	count(dp, TLB_DP_incomplete_messages, 1);
}

/* A packet of a message that has its core: sent there uncharged, or, if
 * the core left rotation, dropped with every later packet of it, and the
 * message's charge handed back. */
static int
steer_continuation(struct tlb_dp *dp, struct rte_mbuf *m, int core,
		   const struct tlb_aff_key *akey,
		   const struct tlb_aff_msg *msg)
{
	if (core >= 0 && (uint32_t)core < dp->n_cores &&
	    tlb_lv_in_rotation(dp->lv, (uint32_t)core) &&
	    dp->lv->core[core].gen == msg->gen) {
		dp->pend_affinity++;
		port_send(&dp->target[core], m, 0);
		return core;
	}
	if (core != TLB_AFF_DEAD) {
		tlb_aff_kill(dp->aff, akey);
		message_lost(dp, msg);
	}
	count(dp, TLB_DP_drop_continuation, 1);
	rte_pktmbuf_free(m);
	return STEER_DROPPED;
}

/* The key of a request of a protocol completed by id: its client's
 * address and port and its id, the protocol in the id's top bits (one
 * client socket may talk to several services). A response's client is its
 * destination. */
static void
ids_key(struct tlb_aff_key *k, const struct tlb_parsed *p, bool response)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->addr, response ? p->key.dst_addr : p->key.src_addr,
	       sizeof(k->addr));
	k->port = response ? p->key.dst_port : p->key.src_port;
	k->ip_version = p->key.ip_version;
	k->req_id = p->hdr.req_id | (uint64_t)p->proto << 56;
}

/* A tracked request that leaves the view unanswered: its charge goes back
 * to its core, unless the core has been written off or reset since. */
static void
request_unanswered(struct tlb_dp *dp, const struct tlb_aff_msg *msg,
		   enum tlb_dp_counter why)
{
	if (msg->core < dp->n_cores && dp->lv->core[msg->core].gen == msg->gen)
		tlb_lv_on_unsent(dp->lv, msg->core, 1, msg->work_ns);
	count(dp, why, 1);
}

/* Remembers what a request of a protocol completed by id charged core. A
 * request still outstanding under the same key (the client reused the id
 * before its answer) and one pushed out of a full set are taken out of
 * the view. */
static void
ids_track(struct tlb_dp *dp, const struct tlb_parsed *p, int core,
	  const struct tlb_request_info *req)
{
	struct tlb_aff_key k;
	struct tlb_aff_msg msg, old;

	ids_key(&k, p, false);
	if (tlb_aff_lookup(dp->ids, &k, &old) >= 0)
		request_unanswered(dp, &old, TLB_DP_request_ids_full);
	msg.core = (uint16_t)core;
	msg.gen = dp->lv->core[core].gen;
	/* what steer_new() charged: the estimate does not change between
	 * two calls without a response between them */
	msg.work_ns = tlb_policy_work_estimate(&dp->policy, req);
	if (tlb_aff_insert(dp->ids, &k, &msg, 1, dp->poll_ns, &old))
		request_unanswered(dp, &old, TLB_DP_request_ids_full);
}

/* A request of a protocol that never answers it: to the policy's pick,
 * uncharged, so that nothing waits for its completion. */
static int
steer_oneway(struct tlb_dp *dp, struct rte_mbuf *m,
	     const struct tlb_request_info *req)
{
	int core = tlb_policy_pick(&dp->policy, dp->lv, req);

	if (core < 0) {
		if (core == TLB_PICK_HOLD)
			return STEER_HOLD;
		count(dp, TLB_DP_drop_no_core, 1);
		rte_pktmbuf_free(m);
		return STEER_DROPPED;
	}
	count(dp, TLB_DP_oneway, 1);
	count(dp, TLB_DP_steered, 1);
	port_send(&dp->target[core], m, 0);
	return core;
}

/* A request of another protocol than turbolb (dns, memcached, udp): one
 * datagram, steered as a new message; the protocols completed by id
 * remember its charge (docs/protocol.md, "What completes a request"). */
static __rte_noinline int
steer_proto(struct tlb_dp *dp, struct rte_mbuf *m, const struct tlb_parsed *p,
	    struct steer_mode mode)
{
	struct tlb_request_info req = {
		.key = &p->key,
		.svc_hint_ns = (p->hdr.flags & TLB_RPC_F_HINT)
				       ? p->hdr.svc_hint_ns
				       : 0,
		.svc_class = p->hdr.svc_class,
	};
	int core;

	if (!mode.from_fifo && !fifo_empty(&dp->fifo))
		return STEER_HOLD;
	if (p->msg_flags & TLB_MSG_F_ONEWAY)
		return steer_oneway(dp, m, &req);
	core = steer_new(dp, m, &req, p, mode);
	if (core >= 0 && tlb_proto_completion(p->proto) == TLB_COMPLETE_BY_ID)
		ids_track(dp, p, core, &req);
	return core;
}

/* Sends a parsed request to its core. The packets of a message follow the
 * first of them to arrive, which is steered as a new message; a new
 * message from the wire waits while older ones are in the FIFO, so that
 * arrival order is kept. Returns the core or a STEER_ code. */
static int
steer(struct tlb_dp *dp, struct rte_mbuf *m, const struct tlb_parsed *p,
      struct steer_mode mode)
{
	struct tlb_aff_key akey;
	struct tlb_aff_msg msg;
	bool multi = p->hdr.pkt_cnt > 1;
	int core;

	if (unlikely(p->proto != TLB_PROTO_TURBOLB))
		return steer_proto(dp, m, p, mode);

	if (unlikely(multi)) {
		tlb_aff_key_of(&akey, p);
		core = tlb_aff_lookup(dp->aff, &akey, &msg);
		if (core != TLB_AFF_NONE)
			return steer_continuation(dp, m, core, &akey, &msg);
	}

	struct tlb_request_info req = {
		.key = &p->key,
		.svc_hint_ns = (p->hdr.flags & TLB_RPC_F_HINT)
				       ? p->hdr.svc_hint_ns
				       : 0,
		.svc_class = p->hdr.svc_class,
	};

	if (!mode.from_fifo && !fifo_empty(&dp->fifo))
		return STEER_HOLD;
	core = steer_new(dp, m, &req, p, mode);
	if (core >= 0 && multi) {
		struct tlb_aff_msg gone;

		msg.core = (uint16_t)core;
		msg.gen = dp->lv->core[core].gen;
		/* what steer_new() charged: the estimate does not change
		 * between two calls without a response between them */
		msg.work_ns = tlb_policy_work_estimate(&dp->policy, &req);
		if (tlb_aff_insert(dp->aff, &akey, &msg,
				   (uint16_t)(p->hdr.pkt_cnt - 1), dp->poll_ns,
				   &gone))
			message_lost(dp, &gone);
	}
	return core;
}

/* A request in the fast layout, read by tlb_parse_request_fast() into rq,
 * to the policy's choice: steer_new() with the work stamped at the fast
 * layout's offsets. */
static __rte_always_inline int
steer_parsed(struct tlb_dp *dp, struct rte_mbuf *m,
	     const struct tlb_req_fast *rq, struct steer_mode mode)
{
	struct tlb_request_info req = {
		.svc_hint_ns = rq->svc_hint_ns,
		.svc_class = rq->svc_class,
	};

	return steer_new(dp, m, &req, NULL, mode);
}

/* Nearly every request: a single packet in the plain layout, checked at
 * fixed offsets with no struct tlb_parsed filled in
 * (include/turbolb/proto_fast.h). False: not such a frame, or a policy
 * that hashes the flow; parse it in full and steer(). The fast parser
 * reads only the first segment: the IP datagram must fit in it (tot_len
 * against data_len), and what further segments hold is sent on as it is,
 * like the trailing bytes the full parser accepts after linearizing.
 * fifo_waits: older requests wait in the FIFO, so this one waits too.
 * True with *rq what the parser read and *r the core or a STEER_ code. */
static __rte_always_inline bool
steer_fast(struct tlb_dp *dp, struct rte_mbuf *m, struct steer_mode mode,
	   bool fifo_waits, struct tlb_req_fast *rq, int *r)
{
	if (unlikely(mode.flow_key) ||
	    !tlb_parse_request_fast(rte_pktmbuf_mtod(m, const void *),
				    rte_pktmbuf_data_len(m), &dp->parse_opts,
				    rq))
		return false;
	if (unlikely(fifo_waits)) {
		*r = STEER_HOLD;
		return true;
	}
	*r = steer_parsed(dp, m, rq, mode);
	return true;
}

/* m to the FIFO, with what the fast parser read of it (rq), or NULL
 * when it was parsed in full. */
static inline void
hold(struct tlb_dp *dp, struct rte_mbuf *m, const struct tlb_req_fast *rq)
{
	if (likely(fifo_push(&dp->fifo, m, rq))) {
		count(dp, TLB_DP_held, 1);
	} else {
		count(dp, TLB_DP_drop_fifo_full, 1);
		rte_pktmbuf_free(m);
	}
}

/* Returns false (frame dropped and counted) unless the frame is whole in
 * its first segment and parses. */
static inline bool
parse_mbuf(struct tlb_dp *dp, struct rte_mbuf *m, struct tlb_parsed *p)
{
	enum tlb_parse_err e;

	if (unlikely(m->nb_segs > 1) && rte_pktmbuf_linearize(m) != 0) {
		count(dp, TLB_DP_drop_multi_segment, 1);
		rte_pktmbuf_free(m);
		return false;
	}
	e = tlb_parse_frame(rte_pktmbuf_mtod(m, const void *),
			    rte_pktmbuf_data_len(m), &dp->parse_opts, p);
	if (unlikely(e != TLB_PARSE_OK)) {
		tlb_counter_add(&dp->stats.drop_parse[e], 1);
		rte_pktmbuf_free(m);
		return false;
	}
	return true;
}

/* *fifo_waits: the FIFO is not empty, kept by the caller for a burst and
 * read again here when m went to the FIFO (or was dropped at its door). */
static __rte_always_inline void
from_uplink(struct tlb_dp *dp, struct rte_mbuf *m, struct steer_mode mode,
	    bool *fifo_waits)
{
	struct tlb_req_fast rq;
	struct tlb_parsed p;
	int r;

	if (steer_fast(dp, m, mode, *fifo_waits, &rq, &r)) {
		if (r == STEER_HOLD) {
			hold(dp, m, &rq);
			*fifo_waits = !fifo_empty(&dp->fifo);
		}
		return;
	}
	if (!parse_mbuf(dp, m, &p))
		return;
	switch (p.cls) {
	case TLB_FRAME_REQUEST:
		if (steer(dp, m, &p, mode) == STEER_HOLD) {
			hold(dp, m, NULL);
			*fifo_waits = !fifo_empty(&dp->fifo);
		}
		break;
	case TLB_FRAME_PASS:
		if (dp->has_default_target) {
			count(dp, TLB_DP_pass_up, 1);
			port_send(&dp->default_target, m, 0);
		} else {
			count(dp, TLB_DP_drop_no_default_target, 1);
			rte_pktmbuf_free(m);
		}
		break;
	default:
		count(dp, TLB_DP_drop_bad_direction, 1);
		rte_pktmbuf_free(m);
		break;
	}
}

/* Releases held requests, oldest first, while the policy admits them.
 * mode is a constant in each of the callers (drain_fifo()). */
static __rte_always_inline unsigned int
drain_loop(struct tlb_dp *dp, struct steer_mode mode)
{
	struct tlb_fifo *f = &dp->fifo;
	/* Nothing joins the FIFO while it drains: the tail stays, and the
	 * head is stored once. */
	const uint32_t start = f->head, tail = f->tail, mask = f->capacity - 1;
	uint32_t head = start;

	for (; head != tail; head++) {
		struct tlb_fifo_slot *s = &f->slot[head & mask];
		struct rte_mbuf *m = s->m;
		struct tlb_req_fast rq;
		struct tlb_parsed p;
		int r;

		/* It parsed when it came in, the fast way or the general
		 * one; the frame and the parse options are unchanged, so
		 * what the fast parser read then holds, unless the policy
		 * now hashes the flow (a switch since). */
		if (likely(s->fast) && !mode.flow_key)
			r = steer_parsed(dp, m, &s->rq, mode);
		else if (!steer_fast(dp, m, mode, false, &rq, &r)) {
			tlb_parse_frame(rte_pktmbuf_mtod(m, const void *),
					rte_pktmbuf_data_len(m),
					&dp->parse_opts, &p);
			r = steer(dp, m, &p, mode);
		}
		if (r == STEER_HOLD)
			break;
	}
	f->head = head;
	return head - start;
}

/* Not inlined into the poll loop, which calls it only while requests are
 * held. */
static __rte_noinline unsigned int
drain_fifo(struct tlb_dp *dp)
{
	if (unlikely(dp->flow_key))
		return drain_loop(dp,
				  (struct steer_mode){.flow_key = true,
						      .own = dp->own_dispatch,
						      .from_fifo = true});
	if (dp->own_dispatch)
		return drain_loop(dp, (struct steer_mode){.own = true,
							  .from_fifo = true});
	return drain_loop(dp, (struct steer_mode){.from_fifo = true});
}

/* ---- response path ---- */

/* n completions at core beyond what was outstanding there: those of
 * written-off requests are late, the rest duplicates. */
static __rte_noinline void
count_beyond(struct tlb_dp *dp, uint32_t core, uint64_t n)
{
	uint64_t late = tlb_lv_on_late(dp->lv, core, n);

	count(dp, TLB_DP_late_completions, late);
	count(dp, TLB_DP_completions_extra, n - late);
}

/* The completion a response carries, on a message's first packet only:
 * one request of core completed in the load view when completions come
 * in band (or, in fallback, when the core's ring credits are not
 * trusted), else one more response for its ring credit to balance; and
 * its service time observed by the policy. */
static __rte_always_inline void
on_completion(struct tlb_dp *dp, uint32_t core, uint32_t work_ns,
	      uint32_t service_ns, uint16_t svc_class)
{
	if (dp->credits == TLB_CREDITS_INBAND ||
	    unlikely(dp->credit_fallback[core / 64] & (1ull << (core % 64)))) {
		uint64_t extra = tlb_lv_on_complete(dp->lv, core, 1, work_ns);

		count(dp, TLB_DP_completions_inband, 1 - extra);
		if (unlikely(extra != 0))
			count_beyond(dp, core, extra);
	} else {
		dp->credit_responses[core]++;
	}
	if (service_ns != 0)
		tlb_policy_observe(&dp->policy, svc_class, service_ns);
}

/* A response, every packet of it, on its way to the uplink. */
static __rte_always_inline void
send_response(struct tlb_dp *dp, struct rte_mbuf *m)
{
	count(dp, TLB_DP_responses, 1);
	port_send(&dp->uplink, m, 0);
}

/* A response is the completion of the core whose queue it came on: the
 * queue is the NIC's word, the header's server_core the server's, and a
 * server that disagrees is counted (docs/protocol.md). */
static inline void
check_server_core(struct tlb_dp *dp, uint32_t core, uint16_t server_core)
{
	if (unlikely(server_core != dp->core_id[core]) &&
	    server_core != TLB_RPC_CORE_UNKNOWN)
		count(dp, TLB_DP_resp_core_mismatch, 1);
}

/* A feedback frame from host core core's queue (host.transport:
 * packet): the transport takes what it says of that core, and the frame
 * goes no further. */
static __rte_noinline void
on_feedback(struct tlb_dp *dp, uint32_t core, struct rte_mbuf *m)
{
	static const enum tlb_dp_counter why[] = {
		[TLB_FEED_OK] = TLB_DP_feedback_frames,
		[TLB_FEED_MALFORMED] = TLB_DP_drop_fb_malformed,
		[TLB_FEED_WRONG_CORE] = TLB_DP_drop_fb_wrong_core,
		[TLB_FEED_STALE] = TLB_DP_drop_fb_stale,
		[TLB_FEED_BAD_TOTALS] = TLB_DP_drop_fb_bad_totals,
		[TLB_FEED_UNEXPECTED] = TLB_DP_drop_fb_unexpected,
	};
	enum tlb_feed_result r = TLB_FEED_UNEXPECTED;

	if (dp->host != NULL)
		r = tlb_transport_feed(dp->host, dp->core_id[core],
				       rte_pktmbuf_mtod(m, const void *),
				       rte_pktmbuf_data_len(m));
	count(dp, why[r], 1);
	rte_pktmbuf_free(m);
}

/* A response of another protocol than turbolb from core's queue
 * (docs/protocol.md, "What completes a request"). By id: the first
 * datagram echoing an outstanding request completes it at the core it
 * was charged to, with what it was charged; any other is a follow-up.
 * Each: every datagram completes one request of the queue's core, with
 * the mean charge of what is outstanding there, so that the core's work
 * is 0 when its count is. The spacing of the core's completions feeds
 * the class's service-time average. */
static __rte_noinline void
on_proto_response(struct tlb_dp *dp, uint32_t core, struct rte_mbuf *m,
		  const struct tlb_parsed *p)
{
	uint64_t work_ns;
	uint32_t sample = 0;

	if (tlb_proto_completion(p->proto) == TLB_COMPLETE_BY_ID) {
		struct tlb_aff_key k;
		struct tlb_aff_msg msg;

		ids_key(&k, p, true);
		if (tlb_aff_lookup(dp->ids, &k, &msg) < 0) {
			count(dp, TLB_DP_response_followups, 1);
			send_response(dp, m);
			return;
		}
		if (msg.core != core)
			count(dp, TLB_DP_resp_core_mismatch, 1);
		core = msg.core;
		if (core >= dp->n_cores || dp->lv->core[core].gen != msg.gen) {
			/* its core was written off or reset since */
			count_beyond(dp, core < dp->n_cores ? core : 0, 1);
			send_response(dp, m);
			return;
		}
		work_ns = msg.work_ns;
	} else {
		uint64_t out = tlb_lv_outstanding(dp->lv, core);

		work_ns = out != 0 ? tlb_lv_outstanding_work(dp->lv, core) / out
				   : 0;
	}
	on_completion(dp, core, (uint32_t)work_ns, 0, p->hdr.svc_class);
	send_response(dp, m);
	if (tlb_spacing_sample(&dp->busy_since_ns[core], dp->poll_ns,
			       tlb_lv_outstanding(dp->lv, core), &sample))
		tlb_policy_observe(&dp->policy, p->hdr.svc_class, sample);
}

static void
from_target(struct tlb_dp *dp, uint32_t core, struct rte_mbuf *m)
{
	struct tlb_resp_fast rs;
	struct tlb_parsed p;

	/* Single-packet responses in the plain layout, as on the request
	 * path (the first segment, see steer_fast()); anything else is
	 * parsed in full. */
	if (tlb_parse_response_fast(rte_pktmbuf_mtod(m, const void *),
				    rte_pktmbuf_data_len(m), &dp->parse_opts,
				    &rs)) {
		check_server_core(dp, core, rs.server_core);
		on_completion(dp, core, rs.work_ns, rs.service_ns,
			      rs.svc_class);
		send_response(dp, m);
		return;
	}
	if (tlb_fb_is_feedback(rte_pktmbuf_mtod(m, const void *),
			       rte_pktmbuf_data_len(m))) {
		on_feedback(dp, core, m);
		return;
	}
	if (!parse_mbuf(dp, m, &p))
		return;
	switch (p.cls) {
	case TLB_FRAME_RESPONSE:
		if (unlikely(p.proto != TLB_PROTO_TURBOLB)) {
			on_proto_response(dp, core, m, &p);
			break;
		}
		if (p.hdr.pkt_idx == 0) {
			check_server_core(dp, core, p.hdr.server_core);
			on_completion(dp, core, p.hdr.work_ns, p.hdr.service_ns,
				      p.hdr.svc_class);
		}
		send_response(dp, m);
		break;
	case TLB_FRAME_PASS:
		count(dp, TLB_DP_pass_down, 1);
		port_send(&dp->uplink, m, 0);
		break;
	default:
		count(dp, TLB_DP_drop_bad_direction, 1);
		rte_pktmbuf_free(m);
		break;
	}
}

/* What the target queues of one poll received, handled as one burst.
 * With many host cores each queue holds a packet or two a poll: handled
 * queue by queue, every packet would wait for its own mbuf and frame to
 * come from memory, since there is nothing ahead of it in its burst to
 * prefetch. Gathered, the prefetches run ahead across queues as on the
 * request path. core[i]: the local index of the queue pkts[i] came on. */
struct target_rx {
	struct rte_mbuf *pkts[MAX_BURST];
	uint16_t core[MAX_BURST];
	uint16_t n;
	unsigned int total; /* received this poll */
};

static __rte_noinline void
from_targets(struct tlb_dp *dp, struct target_rx *rx)
{
	uint16_t n = rx->n;

	count(dp, TLB_DP_rx_targets, n);
	for (uint16_t i = 0; i < PREFETCH_AHEAD && i < n; i++)
		prefetch_frame(rx->pkts[i]);
	for (uint16_t i = 0; i < n; i++) {
		if (i + PREFETCH_AHEAD < n)
			prefetch_frame(rx->pkts[i + PREFETCH_AHEAD]);
		from_target(dp, rx->core[i], rx->pkts[i]);
	}
	rx->n = 0;
}

/* Receives from host core c's queue into rx (handling what rx holds
 * first when a burst might not fit), prefetching each mbuf, and notes
 * whether anything came (dp->target_busy). A core that owed answers and
 * has none outstanding now owes nothing: this is its last poll for it. */
static inline void
poll_target(struct tlb_dp *dp, uint32_t c, struct target_rx *rx, uint16_t burst)
{
	struct tlb_dp_port *t = &dp->target[c];
	uint64_t bit = 1ull << (c % 64);
	uint16_t n;

	if ((dp->target_owed[c / 64] & bit) &&
	    tlb_lv_outstanding(dp->lv, c) == 0)
		dp->target_owed[c / 64] &= ~bit;
	if (rx->n + burst > MAX_BURST)
		from_targets(dp, rx);
	n = rte_eth_rx_burst(t->port_id, t->queue, rx->pkts + rx->n, burst);
	if (n == 0) {
		dp->target_busy[c / 64] &= ~bit;
		return;
	}
	dp->target_busy[c / 64] |= bit;
	for (uint16_t i = rx->n; i < rx->n + n; i++) {
		rte_prefetch0(rx->pkts[i]);
		rx->core[i] = (uint16_t)c;
	}
	rx->n += n;
	rx->total += n;
}

/* Credits of all our cores in one transport call: most cores have none
 * new between two polls, and for those the call costs a compare each. */
static unsigned int
drain_credits(struct tlb_dp *dp)
{
	struct tlb_credit_sum sum[TLB_MAX_CORES];
	uint32_t n = tlb_transport_drain_sums(dp->host, dp->core_id,
					      dp->n_cores, CREDIT_BURST, sum);
	unsigned int moved = 0;

	for (uint32_t j = 0; j < n; j++) {
		const struct tlb_credit_sum *s = &sum[j];
		uint64_t extra = tlb_lv_on_complete(dp->lv, s->idx,
						    s->completions, s->work_ns);

		count(dp, TLB_DP_completions_credit, s->completions - extra);
		if (unlikely(extra != 0))
			count_beyond(dp, s->idx, extra);
		moved += s->records;
	}
	return moved;
}

/* credits: ring. Core's balance starts again: no response passed, and
 * its credits are counted from its completed count now. */
static inline void
balance_sync(struct tlb_dp *dp, uint32_t core)
{
	dp->credit_responses[core] = 0;
	dp->credit_synced[core] = dp->lv->core[core].completed;
	dp->credit_gen[core] = dp->lv->core[core].gen;
}

/* credits: ring. Out of fallback only credits complete requests at a
 * core, so its completed count grows by what they carried. A core whose
 * view was reset or written off since (a new gen) starts its balance
 * again: the responses and credits of what it forgot no longer pair
 * up. */
static inline void
balance_resync(struct tlb_dp *dp, uint32_t core)
{
	if (unlikely(dp->credit_gen[core] != dp->lv->core[core].gen))
		balance_sync(dp, core);
}

/* credits: ring. Core enters fallback: the records drained and dropped
 * since its ring broke carried credits for responses that already
 * passed (more responses than credited completions), and those requests
 * are completed now, with the mean outstanding work each, as a response
 * in fallback would have been. */
static __rte_noinline void
fallback_begins(struct tlb_dp *dp, uint32_t core)
{
	uint64_t credited =
		dp->lv->core[core].completed - dp->credit_synced[core];
	uint64_t n = dp->credit_responses[core];
	uint64_t out = tlb_lv_outstanding(dp->lv, core);
	uint64_t out_work = tlb_lv_outstanding_work(dp->lv, core);
	uint64_t extra;

	if (n <= credited)
		return;
	n -= credited;
	extra = tlb_lv_on_complete(dp->lv, core, n,
				   n >= out ? out_work : out_work / out * n);
	count(dp, TLB_DP_completions_inband, n - extra);
	if (extra != 0)
		count_beyond(dp, core, extra);
}

/* Incomplete messages past their time hand their charge back. */
static void
sweep_affinity(struct tlb_dp *dp, uint64_t now_ns)
{
	struct tlb_aff_msg gone[32];
	uint32_t n = tlb_aff_sweep(dp->aff, now_ns, dp->aff_sweep, gone,
				   RTE_DIM(gone));

	for (uint32_t i = 0; i < n; i++)
		message_lost(dp, &gone[i]);
	if (dp->ids == NULL)
		return;
	n = tlb_aff_sweep(dp->ids, now_ns, dp->ids_sweep, gone, RTE_DIM(gone));
	for (uint32_t i = 0; i < n; i++)
		request_unanswered(dp, &gone[i], TLB_DP_unanswered);
}

/* Run states and restarts of the host side, liveness of each core. */
static void
housekeeping(struct tlb_dp *dp, uint64_t now_ns)
{
	if (dp->host != NULL) {
		uint64_t epoch = tlb_transport_host_epoch(dp->host);

		if (unlikely(epoch != dp->host_epoch)) {
			uint64_t stranded = 0;

			/* What still sits in a TX buffer was charged under
			 * the old epoch: out with it first (what a full ring
			 * refuses is uncharged now), so that no request is
			 * counted both stranded and dropped. */
			tlb_dp_flush(dp);
			for (uint32_t i = 0; i < dp->n_cores; i++)
				stranded += tlb_lv_reset_core(dp->lv, i);
			if (dp->host_epoch != 0 && dp->index == 0)
				count(dp, TLB_DP_host_restarts, 1);
			count(dp, TLB_DP_stranded, stranded);
			TLB_LOG(NOTICE, dp,
				"lcore %u: host side attached (epoch %#" PRIx64
				"), %" PRIu64 " requests stranded",
				dp->lcore_id, epoch, stranded);
			dp->host_epoch = epoch;
		}
		for (uint32_t i = 0; i < dp->n_cores; i++) {
			enum tlb_core_run_state st =
				tlb_transport_state(dp->host, dp->core_id[i]);
			bool online =
				!dp->online_by_state || st != TLB_RUN_OFFLINE;

			if (online != (bool)dp->lv->core[i].online)
				tlb_lv_set_online(dp->lv, i, online);
			if (dp->credits == TLB_CREDITS_RING) {
				uint64_t bit = 1ull << (i % 64);
				bool was = dp->credit_fallback[i / 64] & bit;
				bool now = tlb_transport_fallback(
					dp->host, dp->core_id[i]);

				balance_resync(dp, i);
				if (now && !was)
					fallback_begins(dp, i);
				if (now != was)
					balance_sync(dp, i);
				if (now)
					dp->credit_fallback[i / 64] |= bit;
				else
					dp->credit_fallback[i / 64] &= ~bit;
			}
			if ((st == TLB_RUN_RUNNING) != dp->lv->core[i].running)
				tlb_lv_set_running(dp->lv, i,
						   st == TLB_RUN_RUNNING);
		}
	}
	sweep_affinity(dp, now_ns);
	if (dp->kick && dp->kick_stall_ns != 0)
		for (uint32_t i = 0; i < dp->n_cores; i++) {
			const struct tlb_core_load *c = &dp->lv->core[i];

			if (c->sent != c->completed && c->watch_since_ns != 0 &&
			    now_ns - c->watch_since_ns > dp->kick_stall_ns)
				kick(dp, i, TLB_DP_kicks_stall);
		}
	struct tlb_lv_written_off wo = {0, 0};

	if (tlb_lv_check_liveness(dp->lv, now_ns, dp->stale_timeout_ns,
				  dp->write_off_ns, &wo) != 0)
		for (uint32_t i = 0; i < dp->n_cores; i++)
			TLB_LOG(DEBUG, dp, "core %u: %s", dp->core_id[i],
				dp->lv->core[i].stale     ? "stale"
				: dp->lv->core[i].probing ? "probing"
							  : "live");
	if (unlikely(wo.requests != 0)) {
		if (dp->credits == TLB_CREDITS_RING)
			for (uint32_t i = 0; i < dp->n_cores; i++)
				balance_resync(dp, i);
		count(dp, TLB_DP_written_off, wo.requests);
		count(dp, TLB_DP_written_off_work_ns, wo.work_ns);
		TLB_LOG(NOTICE, dp,
			"lcore %u: %" PRIu64 " requests written off "
			"at cores stale for %" PRIu64 " us; probing them",
			dp->lcore_id, wo.requests, dp->write_off_ns / 1000);
	}
}

void
tlb_dp_flush(struct tlb_dp *dp)
{
	send_due(dp, rte_rdtsc(), true);
}

/* The requests of a burst with the prefetches ahead, the loop split
 * where the frame prefetches end, so that the requests before do not
 * test for it. mode is a constant in each of the callers. */
static __rte_always_inline void
uplink_loop(struct tlb_dp *dp, struct rte_mbuf **pkts, uint16_t n,
	    struct steer_mode mode)
{
	bool waits = !fifo_empty(&dp->fifo);
	uint16_t i = 0;

	for (; i + PREFETCH_AHEAD < n; i++) {
		prefetch_mbuf_ahead(pkts, n, i);
		prefetch_frame(pkts[i + PREFETCH_AHEAD]);
		from_uplink(dp, pkts[i], mode, &waits);
	}
	for (; i < n; i++)
		from_uplink(dp, pkts[i], mode, &waits);
}

/* A burst from the uplink. Not inlined into the poll loop: the request
 * path gets the registers to itself. */
static __rte_noinline void
from_uplink_burst(struct tlb_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	/* The mbufs' first cache lines (buf_addr, data_off and data_len to
	 * find the frame) ahead of the frames', so that a frame's prefetch
	 * does not wait for its mbuf. */
	prefetch_start(pkts, n);
	if (unlikely(dp->flow_key))
		uplink_loop(dp, pkts, n,
			    (struct steer_mode){.flow_key = true,
						.own = dp->own_dispatch});
	else if (dp->own_dispatch)
		uplink_loop(dp, pkts, n, (struct steer_mode){.own = true});
	else
		uplink_loop(dp, pkts, n, (struct steer_mode){.own = false});
}

uint64_t
tlb_dp_post_update(struct tlb_dp *dp, struct tlb_dp_update *u)
{
	uint64_t gen = dp->update_gen + 1;

	dp->update = u;
	__atomic_store_n(&dp->update_gen, gen, __ATOMIC_RELEASE);
	return gen;
}

bool
tlb_dp_update_done(const struct tlb_dp *dp, uint64_t gen)
{
	return __atomic_load_n(&dp->applied_gen, __ATOMIC_ACQUIRE) == gen;
}

struct tlb_fifo_slot *
tlb_dp_fifo_alloc(uint32_t capacity, uint32_t *cap, int socket)
{
	uint32_t n = 1;

	while (n < capacity)
		n <<= 1;
	*cap = n;
	return rte_zmalloc_socket("tlb_fifo", sizeof(struct tlb_fifo_slot) * n,
				  RTE_CACHE_LINE_SIZE, socket);
}

/* Runs between two iterations: nothing of the old settings is in use. */
static void
apply_update(struct tlb_dp *dp)
{
	uint64_t gen = __atomic_load_n(&dp->update_gen, __ATOMIC_ACQUIRE);
	struct tlb_dp_update *u = dp->update;
	struct tlb_fifo *f = &dp->fifo;

	/* The work estimates carry over: outstanding work was charged with
	 * them and is paid back with the same numbers. */
	memcpy(u->policy.class_avg_ns, dp->policy.class_avg_ns,
	       sizeof(u->policy.class_avg_ns));
	dp->policy = u->policy;
	dp->flow_key = dp->policy.ops->uses_flow_key;
	dp->own_dispatch = dp->policy.ops->dispatch != NULL;
	memset(dp->target_owed, 0, sizeof(dp->target_owed));
	if (u->fifo_slot != NULL) {
		uint32_t depth = f->tail - f->head;

		/* Held requests keep their order in the new storage; a
		 * smaller FIFO keeps them all and admits no more until it
		 * drains below its limit. */
		for (uint32_t i = 0; i < depth && i < u->fifo_capacity; i++)
			u->fifo_slot[i] =
				f->slot[(f->head + i) & (f->capacity - 1)];
		for (uint32_t i = u->fifo_capacity; i < depth; i++) {
			rte_pktmbuf_free(
				f->slot[(f->head + i) & (f->capacity - 1)].m);
			count(dp, TLB_DP_drop_fifo_full, 1);
		}
		u->old_fifo_slot = f->slot;
		f->slot = u->fifo_slot;
		f->capacity = u->fifo_capacity;
		f->head = 0;
		f->tail = RTE_MIN(depth, u->fifo_capacity);
	}
	f->limit = u->fifo_limit;
	dp->stale_timeout_ns = u->stale_timeout_ns;
	dp->write_off_ns = u->write_off_ns;
	__atomic_store_n(&dp->applied_gen, gen, __ATOMIC_RELEASE);
}

unsigned int
tlb_dp_poll(struct tlb_dp *dp)
{
	struct rte_mbuf *pkts[MAX_BURST];
	struct target_rx rx;
	uint16_t burst = (uint16_t)dp->cfg->datapath.burst;
	uint64_t now = rte_rdtsc();
	uint64_t now_ns = tsc_to_ns(dp, now);
	unsigned int moved = 0;
	uint16_t n;

	dp->poll_tsc = now;
	dp->poll_ns = now_ns;
	if (unlikely(__atomic_load_n(&dp->update_gen, __ATOMIC_RELAXED) !=
		     dp->applied_gen))
		apply_update(dp);

	n = rte_eth_rx_burst(dp->uplink.port_id, dp->uplink.queue, pkts, burst);
	/* A full burst: the wire is ahead of this lcore, which holds
	 * buffers to catch up (below) until a burst less than half full:
	 * switching back at the first burst that is not full would spend
	 * the time batching saves while the backlog is still there, and
	 * waiting for an empty one would hold every request at any load
	 * that rarely leaves the uplink empty (a poll's worth of arrivals
	 * at half of saturation is several requests). */
	if (n == burst)
		dp->behind = true;
	else if (2u * n < burst)
		dp->behind = false;
	bool behind = dp->behind;
	if (n != 0) {
		count(dp, TLB_DP_rx_uplink, n);
		from_uplink_burst(dp, pkts, n);
		moved += n;
	}

	/* An lcore that keeps up with the wire polls every target queue,
	 * so that a response waits for no poll. One that is behind polls
	 * only the queues that had responses last time or whose cores owe
	 * answers under a bound, and every queue every TLB_DP_TARGET_ROUND
	 * iterations: idle queues then cost nothing while it catches up,
	 * and a response waits at most that many polls. */
	rx.n = 0;
	rx.total = 0;
	if (!behind || dp->target_round == 0) {
		dp->target_round = TLB_DP_TARGET_ROUND - 1;
		for (uint32_t c = 0; c < dp->n_cores; c++)
			poll_target(dp, c, &rx, burst);
	} else {
		dp->target_round--;
		for (uint32_t w = 0; w < (dp->n_cores + 63) / 64; w++)
			for (uint64_t b =
				     dp->target_busy[w] | dp->target_owed[w];
			     b != 0; b &= b - 1)
				poll_target(
					dp,
					64 * w + (uint32_t)__builtin_ctzll(b),
					&rx, burst);
	}
	moved += rx.total;
	if (rx.n != 0)
		from_targets(dp, &rx);

	/* Each dispatcher drains its own queue of the default target (RSS
	 * spreads the host's slow path over them) and sends what came on its
	 * own uplink queue: every queue and counter keeps one writer. */
	if (dp->has_default_target) {
		n = rte_eth_rx_burst(dp->default_target.port_id,
				     dp->default_target.queue, pkts, burst);
		for (uint16_t i = 0; i < n; i++)
			port_send(&dp->uplink, pkts[i], 0);
		count(dp, TLB_DP_rx_targets, n);
		count(dp, TLB_DP_pass_down, n);
		moved += n;
	}

	if (dp->host != NULL && dp->credits == TLB_CREDITS_RING)
		moved += drain_credits(dp);
	if (unlikely(!fifo_empty(&dp->fifo)))
		moved += drain_fifo(dp);

	/* The latency bound. An lcore that keeps up with the wire sends
	 * what this poll produced before the next poll, as l3fwd does; one
	 * that is behind holds a buffer until its deadline, so that the
	 * requests of a few polls to one core share a TX call, and catches
	 * up. */
	if (dp->n_pending != 0)
		send_due(dp, rte_rdtsc(), !behind);
	if (now - dp->last_housekeeping_tsc > dp->housekeeping_tsc) {
		housekeeping(dp, now_ns);
		dp->last_housekeeping_tsc = now;
	}
	if (dp->pend_messages + dp->pend_affinity != 0) {
		count(dp, TLB_DP_steered,
		      dp->pend_messages + dp->pend_affinity);
		count(dp, TLB_DP_messages, dp->pend_messages);
		count(dp, TLB_DP_affinity_hits, dp->pend_affinity);
		dp->pend_messages = dp->pend_affinity = 0;
	}
	tlb_counter_add(&dp->stats.loops, 1);
	if (moved != 0)
		tlb_counter_add(&dp->stats.busy_loops, 1);
	return moved;
}

int
tlb_dp_main(void *arg)
{
	struct tlb_dp *dp = arg;
	uint32_t idle_us = dp->cfg->datapath.idle_sleep_us;

	TLB_LOG(INFO, dp, "lcore %u: polling (policy %s, %u host cores)",
		dp->lcore_id, dp->policy.ops->name, dp->n_cores);
	while (!tlb_force_quit) {
		if (tlb_dp_poll(dp) == 0 && idle_us != 0)
			rte_delay_us_sleep(idle_us);
	}
	tlb_dp_flush(dp);
	return 0;
}

/* ---- set-up ---- */

static int
port_init(struct tlb_dp *dp, struct tlb_dp_port *port,
	  const struct tlb_port_ref *ref, int core, enum tlb_dp_counter drop,
	  char *err, size_t errlen)
{
	uint16_t burst = (uint16_t)dp->cfg->datapath.burst;

	if (tlb_port_lookup(ref->port, &port->port_id) != 0) {
		snprintf(err, errlen, "no port '%s'", ref->port);
		return -1;
	}
	port->queue = ref->queue;
	port->core = core;
	port->drop = drop;
	port->dp = dp;
	port->length = 0;
	port->size = burst;
	/* Requests to host cores may wait for others to the same core, up
	 * to the bound; the uplink and the default target get a burst of
	 * whatever each poll produced, one doorbell for all of it. */
	port->hold_tsc =
		core < 0 ? 0
			 : (uint64_t)(((unsigned __int128)
					       dp->cfg->datapath.tx_hold_ns *
				       dp->tsc_hz) /
				      1000000000u);
	port->deadline = 0;
	port->listed = false;
	/* the packets, then their charges, in one block */
	port->pkts = rte_zmalloc_socket(
		"tlb_txb",
		(sizeof(*port->pkts) + sizeof(*port->charge)) * burst,
		RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(dp->lcore_id));
	if (port->pkts == NULL) {
		snprintf(err, errlen, "no memory for TX buffers");
		return -1;
	}
	port->charge = (uint64_t *)(port->pkts + burst);
	return 0;
}

int
tlb_dp_init(struct tlb_dp *dp, const struct tlb_config *cfg,
	    unsigned int lcore_id, unsigned int index,
	    struct tlb_transport *host, char *err, size_t errlen)
{
	uint32_t cap;
	bool kick_wire;

	unsigned int n_dps = cfg->datapath.n_lcores;

	memset(dp, 0, sizeof(*dp));
	dp->lcore_id = lcore_id;
	dp->index = index;
	dp->cfg = cfg;
	for (uint32_t i = index; i < cfg->ports.n_targets; i += n_dps)
		dp->core_id[dp->n_cores++] = i;
	if (dp->n_cores == 0) {
		snprintf(err, errlen,
			 "dispatcher %u has no host core (%u "
			 "cores for %u dispatchers)",
			 index, cfg->ports.n_targets, n_dps);
		return -1;
	}
	dp->credits = cfg->host.credits;
	dp->online_by_state = cfg->host.credits == TLB_CREDITS_RING ||
			      cfg->host.transport == TLB_TRANSPORT_PACKET;
	dp->host = host;
	/* The packet transport has no doorbell of its own: the kick goes
	 * over the wire, out of the default target. */
	kick_wire = cfg->host.transport == TLB_TRANSPORT_PACKET &&
		    cfg->ports.has_default_target;
	dp->kick = cfg->kick.enabled && host != NULL &&
		   (tlb_transport_can_kick(host) || kick_wire);
	dp->kick_interval_ns = (uint64_t)cfg->kick.min_interval_us * 1000;
	dp->kick_stall_ns = (uint64_t)cfg->kick.stall_us * 1000;
	dp->tsc_hz = rte_get_tsc_hz();
	dp->ns_per_tsc_q32 =
		(uint64_t)(((unsigned __int128)1000000000 << 32) / dp->tsc_hz);
	dp->housekeeping_tsc =
		dp->tsc_hz / 1000000 * cfg->datapath.housekeeping_us;
	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS - 1; b++)
		dp->residence_le_tsc[b] =
			(uint64_t)((unsigned __int128)tlb_residence_le_ns[b] *
				   dp->tsc_hz / 1000000000);
	dp->stale_timeout_ns = (uint64_t)cfg->host.stale_timeout_us * 1000;
	dp->write_off_ns = (uint64_t)cfg->host.write_off_us * 1000;
	/* turbolb ports to the fast paths' list, the others to theirs */
	for (unsigned int i = 0; i < cfg->rpc.n_udp_ports; i++) {
		struct tlb_parse_opts *o = &dp->parse_opts;

		if (cfg->rpc.port_proto[i] == TLB_PROTO_TURBOLB) {
			o->udp_ports[o->n_udp_ports++] = cfg->rpc.udp_ports[i];
		} else {
			o->proto_ports[o->n_proto_ports].port =
				cfg->rpc.udp_ports[i];
			o->proto_ports[o->n_proto_ports++].proto =
				cfg->rpc.port_proto[i];
		}
	}

	if (tlb_policy_init(&dp->policy, cfg->policy.name, &cfg->policy.params,
			    dp->n_cores, err, errlen) != 0)
		return -1;
	dp->flow_key = dp->policy.ops->uses_flow_key;
	dp->own_dispatch = dp->policy.ops->dispatch != NULL;
	dp->lv = rte_zmalloc("tlb_lv", sizeof(*dp->lv), RTE_CACHE_LINE_SIZE);
	dp->aff = tlb_aff_create(cfg->affinity.entries,
				 (uint64_t)cfg->affinity.timeout_us * 1000);
	/* The whole table looked at about once a timeout. */
	dp->aff_sweep = (uint32_t)RTE_MIN(
		(uint64_t)cfg->affinity.entries,
		(uint64_t)cfg->affinity.entries *
				cfg->datapath.housekeeping_us /
				cfg->affinity.timeout_us +
			16);
	if (ids_needed(&dp->parse_opts)) {
		/* A request unanswered for host.write_off_us (taken at
		 * start) leaves the view; with write-off off, only when the
		 * table needs its place. */
		uint64_t wo_us = cfg->host.write_off_us;

		dp->ids = tlb_aff_create(4 * cfg->affinity.entries,
					 wo_us != 0 ? wo_us * 1000
						    : UINT64_MAX / 4);
		dp->ids_sweep =
			wo_us == 0
				? 0
				: (uint32_t)RTE_MIN(
					  4ull * cfg->affinity.entries,
					  4ull * cfg->affinity.entries *
							  cfg->datapath
								  .housekeeping_us /
							  wo_us +
						  16);
		if (dp->ids == NULL) {
			snprintf(err, errlen,
				 "no memory for the request id table");
			tlb_dp_fini(dp);
			return -1;
		}
	}
	dp->fifo.slot =
		tlb_dp_fifo_alloc(cfg->fifo.capacity, &cap,
				  (int)rte_lcore_to_socket_id(lcore_id));
	dp->fifo.capacity = cap;
	dp->fifo.limit = cfg->fifo.capacity;
	if (dp->lv == NULL || dp->aff == NULL || dp->fifo.slot == NULL) {
		snprintf(err, errlen, "no memory for the dispatcher state");
		tlb_dp_fini(dp);
		return -1;
	}
	tlb_lv_init(dp->lv, dp->n_cores);
	/* A core whose host says its states (online_by_state) is offline
	 * until its host thread says otherwise. A core whose ring the
	 * transport finds broken stays in rotation on in-band credits
	 * (credit_fallback). */
	if (host != NULL && dp->online_by_state)
		for (uint32_t i = 0; i < dp->n_cores; i++)
			tlb_lv_set_online(dp->lv, i, false);
	if (host != NULL && dp->credits == TLB_CREDITS_RING)
		tlb_transport_set_inband_fallback(host, true);

	struct tlb_port_ref ref = cfg->ports.uplink;

	ref.queue = (uint16_t)(ref.queue + index);
	if (port_init(dp, &dp->uplink, &ref, -1, TLB_DP_drop_uplink_tx_full,
		      err, errlen) != 0)
		goto fail;
	for (uint32_t i = 0; i < dp->n_cores; i++)
		if (port_init(dp, &dp->target[i],
			      &cfg->ports.targets[dp->core_id[i]].ref, (int)i,
			      TLB_DP_drop_tx_full, err, errlen) != 0)
			goto fail;
	dp->has_default_target = cfg->ports.has_default_target;
	ref = cfg->ports.default_target;
	ref.queue = (uint16_t)(ref.queue + index);
	if (dp->has_default_target &&
	    port_init(dp, &dp->default_target, &ref, -1,
		      TLB_DP_drop_default_tx_full, err, errlen) != 0)
		goto fail;
	if (dp->kick && !tlb_transport_can_kick(host) && kick_wire) {
		struct rte_ether_addr mac;

		dp->kick_pool = rte_mempool_lookup(TLB_MBUF_POOL);
		if (dp->kick_pool == NULL) {
			snprintf(err, errlen,
				 "kick over the wire: no mbuf pool %s",
				 TLB_MBUF_POOL);
			goto fail;
		}
		if (rte_eth_macaddr_get(dp->default_target.port_id, &mac) == 0)
			memcpy(dp->kick_src_mac, mac.addr_bytes, 6);
	}
	dp->last_housekeeping_tsc = rte_rdtsc();
	return 0;
fail:
	tlb_dp_fini(dp);
	return -1;
}

void
tlb_dp_fini(struct tlb_dp *dp)
{
	struct tlb_fifo *f = &dp->fifo;

	if (f->slot != NULL) {
		while (!fifo_empty(f)) {
			rte_pktmbuf_free(fifo_peek(f)->m);
			f->head++;
			count(dp, TLB_DP_drop_shutdown, 1);
		}
		rte_free(f->slot);
		f->slot = NULL;
	}
	rte_free(dp->uplink.pkts);
	rte_free(dp->default_target.pkts);
	dp->uplink.pkts = dp->default_target.pkts = NULL;
	for (uint32_t i = 0; i < TLB_MAX_CORES; i++) {
		rte_free(dp->target[i].pkts);
		dp->target[i].pkts = NULL;
	}
	rte_free(dp->lv);
	dp->lv = NULL;
	tlb_aff_free(dp->aff);
	dp->aff = NULL;
	tlb_aff_free(dp->ids);
	dp->ids = NULL;
}
