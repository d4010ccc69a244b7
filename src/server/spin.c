/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server --mode spin and --mode kv: a worker lcore per logical
 * core polls its RX queue and answers each request on its TX queue at
 * once, spinning for the request's service-time hint (spin) or executing
 * its kv op (kv.c), and posts the request's credit.
 */
#include <rte_lcore.h>
#include <rte_prefetch.h>

#include "server.h"

static inline uint32_t
cycles_to_ns(uint64_t cycles)
{
	uint64_t ns;

	/* Past UINT32_MAX ns the answer saturates anyway; bounding cycles
	 * first keeps the product from overflowing. */
	if (unlikely(cycles > tsc_hz * 5))
		return UINT32_MAX;
	ns = cycles * 1000000000ull / tsc_hz;
	return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static inline void
spin_for(uint64_t start, uint32_t ns)
{
	uint64_t max_ns = (uint64_t)conf.max_spin_us * 1000u;
	uint64_t end;

	if (ns > max_ns)
		ns = (uint32_t)max_ns;
	end = start + (uint64_t)ns * tsc_hz / 1000000000ull;
	while (rte_rdtsc() < end)
		rte_pause();
}

/* Handles one frame: returns true if m became a response to send, false
 * if it was freed. */
static inline bool
handle_frame(struct srv_core *c, struct rte_mbuf *m)
{
	enum tlb_msg_type type = TLB_MSG_RESPONSE;
	uint16_t status = TLB_RPC_ST_OK;
	uint16_t resp_len = 0;
	struct tlb_parsed p;
	uint64_t t0 = rte_rdtsc();
	uint32_t service_ns;
	size_t out_len;

	if (!parse_request(c, m, &p))
		return false;
	if (conf.mode == MODE_SPIN) {
		if (p.hdr.flags & TLB_RPC_F_HINT)
			spin_for(t0, p.hdr.svc_hint_ns);
	} else {
		status = kv_exec(&c->st, m, &p, &type, &resp_len);
	}
	c->st.served++;
	service_ns = cycles_to_ns(rte_rdtsc() - t0);
	out_len = tlb_make_response(rte_pktmbuf_mtod(m, void *),
				    rte_pktmbuf_data_len(m), &p, type, status,
				    (uint16_t)c->idx, service_ns, resp_len);
	/* The request is done whether or not its response can go out: the
	 * NIC must get the credit either way. */
	if (c->credit != NULL)
		tlb_host_complete(c->credit, p.hdr.work_ns, service_ns);
	if (unlikely(out_len == 0)) {
		c->st.resp_err++;
		goto drop;
	}
	m->data_len = (uint16_t)out_len;
	m->pkt_len = (uint32_t)out_len;
	return true;
drop:
	rte_pktmbuf_free(m);
	return false;
}
/* Stays off the port while the main lcore restarts it. The core is
 * PARKED meanwhile, and keeps beating: it is alive, only idle. */
static void
core_pause(struct srv_core *c)
{
	/* The port is about to stop: the feedback frame goes first. */
	if (c->credit != NULL) {
		tlb_host_flush(c->credit);
		tlb_host_set_running(c->credit, false);
		send_feedback(c);
	}
	__atomic_store_n(&c->paused, true, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->port->pause_req, __ATOMIC_ACQUIRE) &&
	       !force_quit) {
		rte_delay_us_sleep(1000);
		tlb_host_beat(c->credit);
	}
	__atomic_store_n(&c->paused, false, __ATOMIC_RELEASE);
	tlb_host_set_running(c->credit, true);
}

int
core_loop(void *arg)
{
	struct srv_core *c = arg;
	struct rte_mbuf *rx[BURST];
	struct rte_mbuf *tx[BURST + 1]; /* and a feedback frame */
	const uint64_t beat_cycles = tsc_hz / BEAT_PER_SEC;
	uint64_t last_beat = 0;

	SRV_LOG(INFO, "core %u on lcore %u polls port %s queue %u", c->idx,
		c->lcore, c->port->name, c->queue);
	tlb_host_set_running(c->credit, true);
	while (likely(!force_quit)) {
		if (unlikely(__atomic_load_n(&c->port->pause_req,
					     __ATOMIC_ACQUIRE))) {
			core_pause(c);
			continue;
		}
		uint16_t nb = core_rx_burst(c, rx, BURST);
		uint16_t n_tx = 0;
		uint64_t now = rte_rdtsc();

		/* Bounded rate: the heartbeat line is read by the NIC side,
		 * so writing it on every poll would only bounce it. */
		if (c->credit != NULL && now - last_beat >= beat_cycles) {
			tlb_host_beat(c->credit);
			last_beat = now;
		}
		if (nb == 0) {
			/* Idle: credits must not wait for the next request. */
			if (c->credit != NULL) {
				tlb_host_flush(c->credit);
				send_feedback(c);
			}
			if (conf.idle_sleep_us != 0) {
				tlb_host_set_running(c->credit, false);
				rte_delay_us_sleep(conf.idle_sleep_us);
				tlb_host_set_running(c->credit, true);
				c->st.idle_sleeps++;
			}
			continue;
		}
		c->st.rx += nb;
		for (uint16_t i = 0; i < nb && i < PREFETCH_AHEAD; i++)
			rte_prefetch0(rte_pktmbuf_mtod(rx[i], void *));
		for (uint16_t i = 0; i < nb; i++) {
			if (i + PREFETCH_AHEAD < nb)
				rte_prefetch0(rte_pktmbuf_mtod(
					rx[i + PREFETCH_AHEAD], void *));
			if (handle_frame(c, rx[i]))
				tx[n_tx++] = rx[i];
		}
		send_responses(c, tx, n_tx);
	}
	if (c->credit != NULL) {
		tlb_host_flush(c->credit);
		/* Feedback frames: the last one takes the core out of
		 * rotation (the ring's close does it for the ring). */
		if (conf.feedback != SRV_FB_RING)
			tlb_host_set_offline(c->credit);
		else
			tlb_host_set_running(c->credit, false);
		send_feedback(c);
	}
	return 0;
}
