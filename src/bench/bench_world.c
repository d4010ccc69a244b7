/* SPDX-License-Identifier: BSD-3-Clause
 * The benchmark's topology: rings, net_ring ports over them, the turbolbd
 * config naming them, the request and response frames, the host step and
 * the checks that make a run fail when the datapath drops or misroutes.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_bus_vdev.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "turbolb/policy.h"
#include "turbolb/proto.h"
#include "port.h"
#include "bench.h"

#define STEP_BURST 64

void
bench_fail(struct bench_run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
	r->failed = true;
}

static unsigned int
pow2_above(unsigned int n)
{
	unsigned int p = 64;

	while (p <= n)
		p <<= 1;
	return p;
}

static struct rte_ring *
ring_new(const char *what, unsigned int gen, unsigned int i, unsigned int size)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "b%u%s%u", gen, what, i);
	/* Single producer and consumer: in a direct world several ports
	 * share a ring, but only their dispatcher's lcore touches it. */
	return rte_ring_create(name, size, (int)rte_socket_id(),
			       RING_F_SP_ENQ | RING_F_SC_DEQ);
}

uint16_t
bench_flow_sport(unsigned int flow)
{
	return (uint16_t)(10000 + flow);
}

/* Service-time hints vary by flow (request mode) so that jlq sees
 * different work; in reqresp mode one value, which every prebuilt
 * response echoes back. */
uint32_t
bench_flow_hint(unsigned int flow, enum bench_mode mode)
{
	if (mode == BENCH_REQRESP)
		return BENCH_RESP_WORK_NS;
	return 500 + 250 * (flow % 8);
}

static struct tlb_frame_addrs
flow_addrs(unsigned int flow)
{
	const uint8_t src_ip[4] = {10, 0, (uint8_t)(flow >> 8),
				   (uint8_t)(flow + 1)};
	static const uint8_t dst_ip[4] = {10, 1, 0, 1};

	return tlb_frame_addrs_v4(src_ip, dst_ip, bench_flow_sport(flow),
				  BENCH_RPC_PORT);
}

/* A request of flow `flow`; with work_ns set, as it will be once the
 * datapath stamped it (the response template needs that). Every flow's
 * hint is non-zero: every request carries one. */
static size_t
build_request(uint8_t *f, size_t cap, unsigned int flow, uint64_t id,
	      enum bench_mode mode, uint32_t work_ns)
{
	static const uint8_t payload[BENCH_PAYLOAD];
	struct tlb_frame_addrs a = flow_addrs(flow);
	struct tlb_rpc_hdr h = tlb_request_hdr(id, bench_flow_hint(flow, mode));

	h.svc_class = (uint16_t)(flow % 4);
	h.work_ns = work_ns;
	return tlb_build_frame(f, cap, &a, &h, payload, BENCH_PAYLOAD);
}

static struct rte_mbuf *
mbuf_of(struct rte_mempool *pool, const uint8_t *f, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	if (m == NULL)
		return NULL;
	d = rte_pktmbuf_append(m, (uint16_t)len);
	if (d == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(d, f, len);
	return m;
}

static int
world_config(struct bench_world *w, const struct bench_dp_cfg *dpc, char *err,
	     size_t errlen)
{
	size_t cap = 256 + (size_t)w->n_cores * 96;
	char *y = malloc(cap);
	size_t off = 0;
	int rc;

	if (y == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
#define ADD(...) off += (size_t)snprintf(y + off, cap - off, __VA_ARGS__)
	ADD("ports:\n  uplink: { port: net_ring_b%uup }\n  targets:\n", w->gen);
	for (unsigned int i = 0; i < w->n_cores; i++)
		ADD("    - { core: %u, port: net_ring_b%ut%u, queue: %u }\n", i,
		    w->gen, i / w->queues_per_port, i % w->queues_per_port);
	ADD("datapath:\n  lcores: [");
	for (unsigned int d = 0; d < w->n_dps; d++)
		ADD("%s%u", d ? ", " : "", d + 1);
	/* The pool is only for the drop paths: the benchmark brings its
	 * own mbufs. The ring PMD has no descriptors, the minimum does. */
	ADD("]\n  burst: %u\n  tx_hold_ns: %u\n  housekeeping_us: %u\n"
	    "  rx_desc: 64\n  tx_desc: 64\n  mbufs: 1024\n",
	    w->burst, dpc->tx_hold_ns, dpc->housekeeping_us);
	ADD("fifo: { capacity: %u }\n", dpc->fifo_cap);
	/* No completions in request mode: liveness must not take cores out
	 * of rotation during a run. */
	if (w->credits == BENCH_CREDITS_RING)
		ADD("host: { credits: ring, credit_ring: %s, "
		    "stale_timeout_us: 60000000 }\n",
		    w->ring_name);
	else if (w->credits == BENCH_CREDITS_PACKET)
		ADD("host: { credits: ring, transport: packet, "
		    "stale_timeout_us: 60000000 }\n");
	else
		ADD("host: { credits: inband, stale_timeout_us: 60000000 }\n");
	ADD("telemetry: { enabled: false }\nlog: { level: warning }\n");
#undef ADD
	if (off >= cap) {
		free(y);
		snprintf(err, errlen, "config buffer too small");
		return -1;
	}
	rc = tlb_config_load_buffer("turbolb-bench.yaml", y, off, &w->cfg,
				    stderr);
	free(y);
	if (rc != 0) {
		snprintf(err, errlen, "generated config does not load");
		return -1;
	}
	return 0;
}

/* Packet credits: the packet transport, and a host whose cores each
 * report once, fed to the transport directly (no dispatcher runs yet), so
 * that the host epoch is known and every core is in rotation from the
 * first request. No hold: the host step flushes each core it answered, so
 * a core sends one frame per host step, as it posts one credit record
 * with ring credits (a batch alone would starve jbsq, whose cores never
 * hold a batch). */
static int
packet_credits(struct bench_world *w, char *err, size_t errlen)
{
	uint8_t fb[TLB_HOST_FEEDBACK_LEN];
	struct tlb_host_opts ho;
	size_t n;

	if (tlb_transport_packet_create(w->n_cores, &w->xport, err, errlen) !=
	    0)
		return -1;
	tlb_host_opts_init(&ho);
	ho.feedback_hold_us = 0;
	w->host = tlb_host_open_packet(w->n_cores, &ho, err, errlen);
	if (w->host == NULL)
		return -1;
	for (unsigned int i = 0; i < w->n_cores; i++) {
		w->hc[i] = tlb_host_core(w->host, i);
		n = tlb_host_feedback(w->hc[i], fb, sizeof(fb));
		if (n == 0 ||
		    tlb_transport_feed(w->xport, i, fb, n) != TLB_FEED_OK) {
			snprintf(err, errlen, "feedback: core %u's first frame",
				 i);
			return -1;
		}
	}
	return 0;
}

int
bench_world_create(struct bench_world *w, unsigned int gen,
		   unsigned int n_cores, unsigned int n_dps, unsigned int qpp,
		   unsigned int preload, unsigned int burst, unsigned int flows,
		   bool copy, enum bench_credits credits,
		   const struct bench_dp_cfg *dpc, char *err, size_t errlen)
{
	struct rte_ring *rx[RTE_MAX_QUEUES_PER_PORT],
		*tx[RTE_MAX_QUEUES_PER_PORT];
	char name[64];
	unsigned int rsize;

	memset(w, 0, sizeof(*w));
	w->gen = gen;
	w->n_cores = n_cores;
	w->n_dps = n_dps;
	w->queues_per_port = qpp;
	w->n_tports = (n_cores + qpp - 1) / qpp;
	w->preload = preload;
	w->burst = burst;
	w->flows = flows;
	w->copy = copy;
	w->credits = credits;
	snprintf(w->ring_name, sizeof(w->ring_name), "/turbolb-bench-%d-%u",
		 (int)getpid(), gen);
	/* Room for every mbuf of the dispatcher in any one ring. */
	rsize = pow2_above(2 * preload + 2 * STEP_BURST);
	for (unsigned int d = 0; d < n_dps; d++) {
		w->up_rx[d] = ring_new("ur", gen, d, rsize);
		w->up_tx[d] = ring_new("ut", gen, d, rsize);
		w->stash[d] = ring_new("st", gen, d, 2 * rsize);
		if (!w->up_rx[d] || !w->up_tx[d] || !w->stash[d])
			goto no_ring;
	}
	for (unsigned int i = 0; i < n_cores; i++) {
		w->t_rx[i] = ring_new("tr", gen, i, rsize);
		w->t_tx[i] = copy ? ring_new("tt", gen, i, rsize)
				  : w->up_rx[i % n_dps];
		if (!w->t_rx[i] || !w->t_tx[i])
			goto no_ring;
	}
	snprintf(name, sizeof(name), "b%uup", gen);
	int pid = rte_eth_from_rings(name, w->up_rx, n_dps, w->up_tx, n_dps,
				     rte_socket_id());
	if (pid < 0) {
		snprintf(err, errlen, "net_ring %s: %s", name,
			 rte_strerror(rte_errno));
		return -1;
	}
	w->up_port = (uint16_t)pid;
	for (unsigned int p = 0; p < w->n_tports; p++) {
		unsigned int first = p * qpp;
		unsigned int nq = RTE_MIN(qpp, n_cores - first);

		for (unsigned int q = 0; q < nq; q++) {
			rx[q] = w->t_rx[first + q];
			tx[q] = w->t_tx[first + q];
		}
		snprintf(name, sizeof(name), "b%ut%u", gen, p);
		pid = rte_eth_from_rings(name, rx, nq, tx, nq, rte_socket_id());
		if (pid < 0) {
			snprintf(err, errlen, "net_ring %s: %s", name,
				 rte_strerror(rte_errno));
			return -1;
		}
		for (unsigned int q = 0; q < nq; q++) {
			w->t_port[first + q] = (uint16_t)pid;
			w->t_queue[first + q] = (uint16_t)q;
		}
	}
	if (world_config(w, dpc, err, errlen) != 0)
		return -1;
	if (tlb_ports_setup(&w->cfg, &w->dp_pool) != 0) {
		snprintf(err, errlen, "tlb_ports_setup failed");
		return -1;
	}
	if (credits == BENCH_CREDITS_PACKET)
		return packet_credits(w, err, errlen);
	if (credits == BENCH_CREDITS_RING) {
		/* As turbolbd does: the daemon side creates the ring, the
		 * host side attaches. */
		if (tlb_transport_shm_create(
			    w->ring_name, n_cores, w->cfg.host.ring_size, 0600,
			    (gid_t)-1, &w->xport, err, errlen) != 0)
			return -1;
		w->host = tlb_host_open(w->ring_name, err, errlen);
		if (w->host == NULL) {
			tlb_transport_close(w->xport); /* unlinks the ring */
			w->xport = NULL;
			return -1;
		}
		for (unsigned int i = 0; i < n_cores; i++) {
			w->hc[i] = tlb_host_core(w->host, i);
			if (w->hc[i] == NULL) {
				snprintf(err, errlen, "credit ring: no core %u",
					 i);
				return -1;
			}
			/* attached and serving: in rotation */
			tlb_host_set_running(w->hc[i], true);
		}
	}
	return 0;
no_ring:
	snprintf(err, errlen, "rings: %s", rte_strerror(rte_errno));
	return -1;
}

static unsigned int
ring_free_all(struct rte_ring *r)
{
	void *objs[STEP_BURST];
	unsigned int n, total = 0;

	if (r == NULL)
		return 0;
	while ((n = rte_ring_dequeue_burst(r, objs, STEP_BURST, NULL)) != 0) {
		rte_pktmbuf_free_bulk((struct rte_mbuf **)objs, n);
		total += n;
	}
	return total;
}

unsigned int
bench_world_drain(struct bench_world *w)
{
	unsigned int n = 0;

	for (unsigned int d = 0; d < w->n_dps; d++)
		n += ring_free_all(w->up_rx[d]) + ring_free_all(w->up_tx[d]) +
		     ring_free_all(w->stash[d]);
	for (unsigned int i = 0; i < w->n_cores; i++) {
		n += ring_free_all(w->t_rx[i]);
		if (w->copy)
			n += ring_free_all(w->t_tx[i]);
	}
	return n;
}

void
bench_world_destroy(struct bench_world *w)
{
	char name[64];

	for (unsigned int d = 0; d < w->n_dps; d++)
		if (w->dp_live[d]) {
			tlb_dp_fini(&w->dp[d]);
			w->dp_live[d] = false;
		}
	bench_world_drain(w);
	tlb_host_close(w->host);
	w->host = NULL;
	tlb_transport_close(w->xport);
	w->xport = NULL;
	tlb_ports_teardown();
	snprintf(name, sizeof(name), "net_ring_b%uup", w->gen);
	rte_vdev_uninit(name);
	for (unsigned int p = 0; p < w->n_tports; p++) {
		snprintf(name, sizeof(name), "net_ring_b%ut%u", w->gen, p);
		rte_vdev_uninit(name);
	}
	rte_mempool_free(w->dp_pool);
	w->dp_pool = NULL;
	for (unsigned int d = 0; d < w->n_dps; d++) {
		rte_ring_free(w->up_rx[d]);
		rte_ring_free(w->up_tx[d]);
		rte_ring_free(w->stash[d]);
	}
	for (unsigned int i = 0; i < w->n_cores; i++) {
		rte_ring_free(w->t_rx[i]);
		if (w->copy)
			rte_ring_free(w->t_tx[i]);
	}
	tlb_config_free(&w->cfg);
}

struct rte_mbuf *
bench_request_mbuf(struct rte_mempool *pool, unsigned int flow, uint64_t id,
		   enum bench_mode mode)
{
	uint8_t f[256];
	size_t len = build_request(f, sizeof(f), flow, id, mode, 0);

	return len ? mbuf_of(pool, f, len) : NULL;
}

struct rte_mbuf *
bench_response_mbuf(struct rte_mempool *pool, unsigned int flow, uint64_t id)
{
	struct tlb_parse_opts opts = {.udp_ports = {BENCH_RPC_PORT},
				      .n_udp_ports = 1};
	struct tlb_parsed p;
	uint8_t f[256];
	size_t len = build_request(f, sizeof(f), flow, id, BENCH_REQRESP,
				   BENCH_RESP_WORK_NS);

	if (len == 0 || tlb_parse_frame(f, len, &opts, &p) != TLB_PARSE_OK)
		return NULL;
	/* One response serves any core: it does not say which. */
	len = tlb_make_response(f, len, &p, TLB_MSG_RESPONSE, 0,
				TLB_RPC_CORE_UNKNOWN, BENCH_RESP_SERVICE_NS, 0);
	return len ? mbuf_of(pool, f, len) : NULL;
}

int
bench_world_load(struct bench_world *w, struct rte_mempool *pool,
		 enum bench_mode mode, char *err, size_t errlen)
{
	bench_world_drain(w);
	w->fb_pool = pool;
	for (unsigned int d = 0; d < w->n_dps; d++) {
		/* Flows are spread over the dispatchers as an RSS NIC would
		 * spread them over the uplink queues: each its own set. */
		for (unsigned int j = 0; j < w->preload; j++) {
			unsigned int flow = (j * w->n_dps + d) % w->flows;
			struct rte_mbuf *m =
				bench_request_mbuf(pool, flow, j + 1, mode);

			if (m == NULL ||
			    rte_ring_enqueue(w->up_rx[d], m) != 0) {
				snprintf(err, errlen, "preload: no mbuf");
				return -1;
			}
		}
		if (mode != BENCH_REQRESP)
			continue;
		/* One response per request in flight, twice over: the host
		 * step never has to wait for the stash. */
		for (unsigned int j = 0; j < 2 * w->preload; j++) {
			unsigned int flow = (j * w->n_dps + d) % w->flows;
			struct rte_mbuf *m =
				bench_response_mbuf(pool, flow, j + 1);

			if (m == NULL ||
			    rte_ring_enqueue(w->stash[d], m) != 0) {
				snprintf(err, errlen, "responses: no mbuf");
				return -1;
			}
		}
	}
	return 0;
}

/* ---- frame checks ---- */

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Ones' complement sum over the IPv4 pseudo header and the datagram must
 * be all ones: the stamping kept the UDP checksum right. */
static bool
udp_csum_ok(const uint8_t *b, const struct tlb_parsed *p, size_t len)
{
	const uint8_t *ip = b + p->l3_off, *udp = b + p->l4_off;
	size_t ulen = rd16(udp + 4);
	uint64_t sum = 17 + ulen;

	if (p->l4_off + ulen > len)
		return false;
	for (unsigned int i = 12; i < 20; i += 2)
		sum += rd16(ip + i);
	for (size_t i = 0; i + 1 < ulen; i += 2)
		sum += rd16(udp + i);
	if (ulen & 1)
		sum += (uint32_t)udp[ulen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void
verify_request(struct bench_run *r, unsigned int d, unsigned int core,
	       struct rte_mbuf *m)
{
	static const struct tlb_parse_opts opts = {
		.udp_ports = {BENCH_RPC_PORT}, .n_udp_ports = 1};
	const uint8_t *b = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = rte_pktmbuf_data_len(m);
	struct bench_world *w = r->w;
	struct tlb_parsed p;
	unsigned int flow;

	if (tlb_parse_frame(b, len, &opts, &p) != TLB_PARSE_OK ||
	    p.cls != TLB_FRAME_REQUEST) {
		bench_fail(r, "core %u got a frame that is no valid request",
			   core);
		return;
	}
	flow = (unsigned int)(p.key.src_port - bench_flow_sport(0));
	if (flow >= w->flows) {
		bench_fail(r, "core %u: unknown flow (port %u)", core,
			   p.key.src_port);
		return;
	}
	if (p.hdr.work_ns != bench_flow_hint(flow, r->mode))
		bench_fail(r, "core %u: work_ns %u stamped, %u expected", core,
			   p.hdr.work_ns, bench_flow_hint(flow, r->mode));
	if (!udp_csum_ok(b, &p, len))
		bench_fail(r, "core %u: bad UDP checksum after stamping", core);
	if (core % w->n_dps != d)
		bench_fail(r, "core %u reached from dispatcher %u", core, d);
	if (strcmp(r->policy, "rss") == 0) {
		/* A flow stays on one core, and it is the core NIC RSS with
		 * the standard key and a 128-entry table filled round robin
		 * picks. */
		const struct tlb_policy *pol = &w->dp[d].policy;
		uint32_t h = tlb_rss_hash_flow(tlb_rss_default_key, &p.key);
		unsigned int want = h % 128 % pol->n_cores;

		if (want != core / w->n_dps)
			bench_fail(r, "rss: flow %u on core %u, hash says %u",
				   flow, core, want * w->n_dps + d);
		if (r->flow_core[flow] >= 0 && r->flow_core[flow] != (int)core)
			bench_fail(r, "rss: flow %u moved from core %d to %u",
				   flow, r->flow_core[flow], core);
		r->flow_core[flow] = (int16_t)core;
	}
}

/* Packet credits: core i's feedback frame, when one is due, after its
 * responses on its target RX ring, as a server sends it last in its TX
 * burst. */
static void
host_feedback(struct bench_run *r, unsigned int d, unsigned int i)
{
	struct bench_world *w = r->w;
	uint8_t fb[TLB_HOST_FEEDBACK_LEN];
	struct rte_mbuf *m;
	size_t n = tlb_host_feedback(w->hc[i], fb, sizeof(fb));

	if (n == 0)
		return;
	m = rte_pktmbuf_alloc(w->fb_pool);
	if (unlikely(m == NULL)) {
		tlb_host_feedback_unsent(w->hc[i]);
		return;
	}
	memcpy(rte_pktmbuf_append(m, (uint16_t)n), fb, n);
	if (unlikely(rte_ring_enqueue(w->t_rx[i], m) != 0)) {
		rte_pktmbuf_free(m);
		tlb_host_feedback_unsent(w->hc[i]);
		return;
	}
	r->fb_sent[d]++;
}

void
bench_host_step(struct bench_run *r, unsigned int d)
{
	struct bench_world *w = r->w;
	struct rte_mbuf *pkts[STEP_BURST], *resp[STEP_BURST];
	unsigned int n, k;

	for (unsigned int i = d; i < w->n_cores; i += w->n_dps) {
		n = rte_ring_dequeue_burst(w->t_tx[i], (void **)pkts,
					   STEP_BURST, NULL);
		if (n == 0)
			continue;
		r->seen[i] += n;
		if (unlikely(r->verify))
			for (unsigned int j = 0; j < n; j++)
				verify_request(r, d, i, pkts[j]);
		if (unlikely(rte_ring_enqueue_bulk(w->up_rx[d], (void **)pkts,
						   n, NULL) != n))
			bench_fail(r, "uplink RX ring full");
		if (r->mode != BENCH_REQRESP)
			continue;
		k = rte_ring_dequeue_bulk(w->stash[d], (void **)resp, n, NULL);
		if (unlikely(k != n ||
			     rte_ring_enqueue_bulk(w->t_rx[i], (void **)resp, n,
						   NULL) != n))
			bench_fail(r, "response stash ran dry");
		if (w->credits == BENCH_CREDITS_RING) {
			/* The work and service time of the prebuilt
			 * response: one credit per request answered. */
			for (unsigned int j = 0; j < n; j++)
				tlb_host_complete(w->hc[i], BENCH_RESP_WORK_NS,
						  BENCH_RESP_SERVICE_NS);
			tlb_host_flush(w->hc[i]);
		} else if (w->credits == BENCH_CREDITS_PACKET && r->fwd == 0) {
			for (unsigned int j = 0; j < n; j++)
				tlb_host_complete(w->hc[i], BENCH_RESP_WORK_NS,
						  BENCH_RESP_SERVICE_NS);
			tlb_host_flush(w->hc[i]);
			host_feedback(r, d, i);
		}
	}
	if (r->mode != BENCH_REQRESP)
		return;
	while ((n = rte_ring_dequeue_burst(w->up_tx[d], (void **)pkts,
					   STEP_BURST, NULL)) != 0) {
		if (unlikely(r->verify))
			for (unsigned int j = 0; j < n; j++) {
				const uint8_t *b =
					rte_pktmbuf_mtod(pkts[j], uint8_t *);

				/* Responses go out unchanged: the type byte
				 * is still "response". */
				if (b[42 + 3] != TLB_MSG_RESPONSE)
					bench_fail(r, "uplink sent a frame "
						      "that is no response");
			}
		if (unlikely(rte_ring_enqueue_bulk(w->stash[d], (void **)pkts,
						   n, NULL) != n))
			bench_fail(r, "stash full");
	}
}

/* ---- after a run ---- */

/* Ring and packet credits: every request the host step answered was
 * posted as a credit (none held back; packet: the host's last frame fed
 * here), and what the dispatcher did not drain yet is still in the
 * transport: drained + left = answered, exactly. */
static int
check_ring_credits(struct bench_run *r, unsigned int d, const uint64_t *c)
{
	struct bench_world *w = r->w;
	const struct tlb_dp *dp = &w->dp[d];
	struct tlb_credit rec[64];
	uint64_t answered = 0, left = 0;

	for (unsigned int l = 0; l < dp->n_cores; l++) {
		unsigned int core = dp->core_id[l];
		struct tlb_host_core_stats hs;
		unsigned int k;

		/* Packet credits: one last frame with the host's totals, fed
		 * as the dispatcher would (it has stopped); the frames still
		 * in the core's ring never get out (the next load frees
		 * them), and the totals of the last may be in none else. */
		if (w->credits == BENCH_CREDITS_PACKET) {
			uint8_t fb[TLB_HOST_FEEDBACK_LEN];
			size_t n;

			tlb_host_flush(w->hc[core]);
			tlb_host_feedback_unsent(w->hc[core]);
			n = tlb_host_feedback(w->hc[core], fb, sizeof(fb));
			if (n != 0 && tlb_transport_feed(w->xport, core, fb,
							 n) != TLB_FEED_OK)
				bench_fail(r, "core %u: last frame refused",
					   core);
		}
		tlb_host_core_stats(w->hc[core], &hs);
		if (hs.pending != 0 || hs.ring_full != 0)
			bench_fail(r,
				   "core %u: %" PRIu64 " credits held back, "
				   "ring full %" PRIu64 " times",
				   core, hs.pending, hs.ring_full);
		if (r->mode == BENCH_REQRESP)
			answered += r->seen[core];
		while ((k = tlb_transport_drain(w->xport, core, rec,
						RTE_DIM(rec))) != 0)
			for (unsigned int j = 0; j < k; j++)
				left += rec[j].completions;
	}
	if (c[TLB_DP_completions_extra] != 0 ||
	    c[TLB_DP_completions_inband] != 0 ||
	    c[TLB_DP_completions_credit] + left != answered)
		bench_fail(r,
			   "dispatcher %u: %" PRIu64 " answered, %" PRIu64
			   " credits drained + %" PRIu64 " left, %" PRIu64
			   " in-band, %" PRIu64 " extra",
			   d, answered, c[TLB_DP_completions_credit], left,
			   c[TLB_DP_completions_inband],
			   c[TLB_DP_completions_extra]);
	return r->failed ? -1 : 0;
}

static uint64_t
dp_drops(const struct tlb_dp *dp, char *which, size_t len)
{
	uint64_t n = 0;

	which[0] = '\0';
	for (unsigned int c = 0; c < TLB_DP_N_COUNTERS; c++) {
		if (strncmp(tlb_dp_counter_names[c], "drop_", 5) != 0 ||
		    dp->stats.c[c] == 0)
			continue;
		n += dp->stats.c[c];
		snprintf(which, len, "%s", tlb_dp_counter_names[c]);
	}
	for (unsigned int e = 0; e < TLB_PARSE_ERR_MAX; e++) {
		if (dp->stats.drop_parse[e] == 0)
			continue;
		n += dp->stats.drop_parse[e];
		snprintf(which, len, "drop_parse_%s",
			 tlb_parse_err_str((enum tlb_parse_err)e));
	}
	return n;
}

/* The counters of dispatcher d add up, and what each core was charged is
 * what reached its queue. */
static int
check_dp(struct bench_run *r, unsigned int d)
{
	struct bench_world *w = r->w;
	const struct tlb_dp *dp = &w->dp[d];
	const uint64_t *c = dp->stats.c;
	uint64_t sent = 0, lo = UINT64_MAX, hi = 0;
	uint64_t wlo = UINT64_MAX, whi = 0;
	char which[64];
	uint64_t drops = dp_drops(dp, which, sizeof(which));

	if (drops != 0) {
		bench_fail(r, "dispatcher %u dropped %" PRIu64 " packets (%s)",
			   d, drops, which);
		return -1;
	}
	/* Every request that came in left for a core or waits in the
	 * FIFO: rx + released = steered + held. */
	if (c[TLB_DP_rx_uplink] + c[TLB_DP_released] !=
		    c[TLB_DP_steered] + c[TLB_DP_held] ||
	    c[TLB_DP_steered] != c[TLB_DP_messages]) {
		bench_fail(r,
			   "dispatcher %u: counters do not add up: rx %" PRIu64
			   " steered %" PRIu64 " held %" PRIu64
			   " released %" PRIu64,
			   d, c[TLB_DP_rx_uplink], c[TLB_DP_steered],
			   c[TLB_DP_held], c[TLB_DP_released]);
		return -1;
	}
	for (unsigned int l = 0; l < dp->n_cores; l++) {
		unsigned int core = dp->core_id[l];
		uint64_t s = dp->lv->core[l].sent;
		uint64_t ow = tlb_lv_outstanding_work(dp->lv, l);
		uint64_t got = r->seen[core];

		if (!w->copy) {
			struct rte_eth_stats st;

			if (rte_eth_stats_get(w->t_port[core], &st) != 0) {
				bench_fail(r, "no port stats");
				return -1;
			}
			got = st.q_opackets[w->t_queue[core]];
			if (st.oerrors != 0)
				bench_fail(r, "TX to core %u failed", core);
		}
		/* What the view charged to a core is exactly what reached
		 * that core's queue: nothing misrouted. */
		if (got != s) {
			bench_fail(r,
				   "core %u: %" PRIu64 " charged, %" PRIu64
				   " arrived",
				   core, s, got);
			return -1;
		}
		sent += s;
		lo = RTE_MIN(lo, s);
		hi = RTE_MAX(hi, s);
		wlo = RTE_MIN(wlo, ow);
		whi = RTE_MAX(whi, ow);
	}
	if (sent != c[TLB_DP_steered]) {
		bench_fail(r,
			   "dispatcher %u: steered %" PRIu64
			   ", cores got %" PRIu64,
			   d, c[TLB_DP_steered], sent);
		return -1;
	}
	/* Without completions the load-aware policies keep the cores level:
	 * a wrong pick shows up here. */
	if (r->mode == BENCH_REQUEST &&
	    (strcmp(r->policy, "jsq") == 0 || strcmp(r->policy, "rr") == 0) &&
	    hi - lo > 1)
		bench_fail(r, "%s: cores uneven (%" PRIu64 "..%" PRIu64 ")",
			   r->policy, lo, hi);
	if (r->mode == BENCH_REQUEST && strcmp(r->policy, "jlq") == 0 &&
	    whi - wlo > bench_flow_hint(7, BENCH_REQUEST))
		bench_fail(r,
			   "jlq: outstanding work uneven (%" PRIu64 "..%" PRIu64
			   " ns)",
			   wlo, whi);
	if (w->credits != BENCH_CREDITS_INBAND)
		return check_ring_credits(r, d, c);
	if (r->mode == BENCH_REQRESP &&
	    (c[TLB_DP_completions_extra] != 0 ||
	     c[TLB_DP_completions_inband] != c[TLB_DP_responses]))
		bench_fail(r,
			   "dispatcher %u: %" PRIu64 " responses, %" PRIu64
			   " completions, %" PRIu64 " extra",
			   d, c[TLB_DP_responses], c[TLB_DP_completions_inband],
			   c[TLB_DP_completions_extra]);
	return r->failed ? -1 : 0;
}

/* Runs with the dispatchers stopped, their TX buffers flushed and (copy
 * worlds) a last host step done. */
int
bench_check(struct bench_run *r, unsigned int fifo_depth)
{
	struct bench_world *w = r->w;
	uint64_t expect_mbufs = 0, in_rings = 0;

	if (r->failed)
		return -1;
	for (unsigned int d = 0; d < w->n_dps; d++) {
		if (r->fwd == 0 && check_dp(r, d) != 0)
			return -1;
		expect_mbufs += w->preload;
		if (r->mode == BENCH_REQRESP)
			expect_mbufs += 2 * w->preload;
		/* Feedback frames the dispatcher has not taken yet. */
		if (r->fwd == 0)
			expect_mbufs +=
				r->fb_sent[d] -
				w->dp[d].stats.c[TLB_DP_feedback_frames];
		in_rings += rte_ring_count(w->up_rx[d]) +
			    rte_ring_count(w->up_tx[d]) +
			    rte_ring_count(w->stash[d]);
	}
	for (unsigned int i = 0; i < w->n_cores; i++) {
		in_rings += rte_ring_count(w->t_rx[i]);
		if (w->copy)
			in_rings += rte_ring_count(w->t_tx[i]);
	}
	/* Nothing freed, nothing stuck: every mbuf is in a ring or held. */
	if (in_rings + fifo_depth != expect_mbufs)
		bench_fail(r,
			   "%" PRIu64 " mbufs loaded, %" PRIu64 " found in "
			   "rings and %u in the FIFO",
			   expect_mbufs, in_rings, fifo_depth);
	return r->failed ? -1 : 0;
}
