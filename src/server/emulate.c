/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server --mode emulate: one worker lcore carries every logical
 * core as an emulated FIFO server in TSC time (emu.h): a request completes
 * at max(its arrival, the core's previous completion) + its service-time
 * hint, and its response leaves then.
 */
#include <rte_lcore.h>

#include "server.h"

/* The service time of an emulated request: its hint, capped by
 * --max-spin-us; a request without a hint takes none. */
static inline uint32_t
emu_svc_ns(const struct tlb_parsed *p)
{
	uint32_t max_ns = conf.max_spin_us * 1000u;

	if (!(p->hdr.flags & TLB_RPC_F_HINT))
		return 0;
	return p->hdr.svc_hint_ns > max_ns ? max_ns : p->hdr.svc_hint_ns;
}

/* Turns a request read at TSC time `now` into its response at once and
 * queues it on the core's emulated FIFO (the caller checked for room);
 * emu_send_due sends it and posts its credit when its service has ended.
 * It arrived at `now`, or with --emu-arrival sent at its client_ts (never
 * later than now): then a stretch in which this thread did not run costs
 * the emulated cores no capacity. A response that cannot be built still
 * occupies the core and still earns its credit: the request was served. */
static inline void
emu_admit_frame(struct srv_core *c, struct rte_mbuf *m, uint64_t now)
{
	uint64_t arrival = now;
	struct tlb_parsed p;
	struct emu_req r;
	size_t out_len;

	if (!parse_request(c, m, &p))
		return;
	if (conf.emu_arrival_sent && p.hdr.client_ts < now)
		arrival = p.hdr.client_ts;
	r.svc_ns = emu_svc_ns(&p);
	r.work_ns = p.hdr.work_ns;
	r.item = m;
	out_len = tlb_make_response(
		rte_pktmbuf_mtod(m, void *), rte_pktmbuf_data_len(m), &p,
		TLB_MSG_RESPONSE, TLB_RPC_ST_OK, (uint16_t)c->idx, r.svc_ns, 0);
	if (unlikely(out_len == 0)) {
		c->st.resp_err++;
		rte_pktmbuf_free(m);
		r.item = NULL;
	} else {
		m->data_len = (uint16_t)out_len;
		m->pkt_len = (uint32_t)out_len;
	}
	/* Cycles from ns without overflow for any uint32_t ns and any
	 * TSC rate below 18 GHz. */
	emu_admit(&c->emu, arrival,
		  (uint64_t)r.svc_ns * (tsc_hz / 1000u) / 1000000u, &r);
}

/* Sends the responses of c whose service has ended by `now`, oldest
 * first, and posts their credits at once: the daemon's view of the core's
 * queue is the emulated queue. */
static inline void
emu_send_due(struct srv_core *c, uint64_t now)
{
	struct emu_req done[BURST];
	struct rte_mbuf *tx[BURST + 1]; /* and a feedback frame */
	uint16_t n_tx = 0;
	uint32_t n;

	n = emu_take(&c->emu, now, done, BURST);
	if (n == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (c->credit != NULL)
			tlb_host_complete(c->credit, done[i].work_ns,
					  done[i].svc_ns);
		if (done[i].item != NULL)
			tx[n_tx++] = done[i].item;
	}
	c->st.served += n;
	if (c->credit != NULL)
		tlb_host_flush(c->credit);
	send_responses(c, tx, n_tx);
}

/* A core whose port the main lcore restarts is left alone (paused) until
 * the port runs again; its held responses wait, and it keeps beating: it
 * is alive, only idle. Returns whether c is paused. */
static inline bool
emu_paused(struct srv_core *c, uint64_t now)
{
	bool req = __atomic_load_n(&c->port->pause_req, __ATOMIC_ACQUIRE);

	if (likely(!req && !c->paused))
		return false;
	if (!req) {
		__atomic_store_n(&c->paused, false, __ATOMIC_RELEASE);
		tlb_host_set_running(c->credit, true);
		return false;
	}
	if (!c->paused) {
		if (c->credit != NULL) {
			tlb_host_flush(c->credit);
			tlb_host_set_running(c->credit, false);
			send_feedback(c);
		}
		__atomic_store_n(&c->paused, true, __ATOMIC_RELEASE);
	}
	if (c->credit != NULL && now - c->last_beat >= tsc_hz / BEAT_PER_SEC) {
		tlb_host_beat(c->credit);
		c->last_beat = now;
	}
	return true;
}

/* One pass over an emulated core: admit what its RX queue holds (as far
 * as its FIFO has room; the rest waits in the queue), send what is due.
 * Returns whether anything arrived. */
static inline bool
emu_poll_core(struct srv_core *c, uint64_t now)
{
	struct rte_mbuf *rx[BURST];
	uint32_t room = emu_room(&c->emu);
	uint16_t nb = 0;

	if (room != 0) {
		nb = core_rx_burst(c, rx,
				   (uint16_t)RTE_MIN(room, (uint32_t)BURST));
		c->st.rx += nb;
		for (uint16_t i = 0; i < nb; i++)
			emu_admit_frame(c, rx[i], now);
	}
	emu_send_due(c, now);
	if (c->credit != NULL && now - c->last_beat >= tsc_hz / BEAT_PER_SEC) {
		tlb_host_beat(c->credit);
		c->last_beat = now;
		send_feedback(c);
	}
	return nb != 0;
}

/* The worker of --mode emulate: polls every logical core's queue in turn.
 * With --idle-sleep-us, a pass in which nothing arrived and nothing is
 * due is followed by a sleep of at most that long and at most until the
 * next held response is due: the thread leaves the CPU to its peers while
 * the emulated cores are busy, at the price of responses leaving up to
 * the OS's wake-up latency late, and (with --emu-arrival poll) arrivals
 * stamped that much late. */
int
emu_loop(void *arg)
{
	const uint64_t cycles_per_us = tsc_hz / 1000000u;
	uint64_t next, now, sleep_us;
	bool got;

	(void)arg;
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		SRV_LOG(INFO,
			"core %u (emulated) on lcore %u polls port %s queue %u",
			cores[i].idx, cores[i].lcore, cores[i].port->name,
			cores[i].queue);
		tlb_host_set_running(cores[i].credit, true);
	}
	while (likely(!force_quit)) {
		got = false;
		next = UINT64_MAX;
		for (uint32_t i = 0; i < conf.n_cores; i++) {
			struct srv_core *c = &cores[i];

			now = rte_rdtsc();
			if (unlikely(emu_paused(c, now)))
				continue;
			got |= emu_poll_core(c, now);
			next = RTE_MIN(next, emu_next_done(&c->emu));
		}
		if (got || conf.idle_sleep_us == 0)
			continue;
		now = rte_rdtsc();
		sleep_us = conf.idle_sleep_us;
		if (next != UINT64_MAX)
			sleep_us =
				next <= now
					? 0
					: RTE_MIN(sleep_us,
						  (next - now) / cycles_per_us);
		if (sleep_us == 0)
			continue;
		rte_delay_us_sleep((unsigned int)sleep_us);
		for (uint32_t i = 0; i < conf.n_cores; i++)
			cores[i].st.idle_sleeps++;
	}
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		if (cores[i].credit != NULL) {
			tlb_host_flush(cores[i].credit);
			if (conf.feedback != SRV_FB_RING)
				tlb_host_set_offline(cores[i].credit);
			else
				tlb_host_set_running(cores[i].credit, false);
			send_feedback(&cores[i]);
		}
	}
	return 0;
}

/* Frees what the emulated cores still hold (after the worker stopped). */
void
emu_release(void)
{
	struct emu_req r[BURST];
	uint32_t n;

	for (uint32_t i = 0; cores != NULL && i < conf.n_cores; i++) {
		if (cores[i].emu.ring == NULL)
			continue;
		while ((n = emu_take(&cores[i].emu, UINT64_MAX, r, BURST)) != 0)
			for (uint32_t j = 0; j < n; j++)
				rte_pktmbuf_free(r[j].item);
		emu_core_free(&cores[i].emu);
	}
}
