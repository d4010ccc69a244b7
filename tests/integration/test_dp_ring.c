/* SPDX-License-Identifier: BSD-3-Clause
 * Integration test, in one process on net_ring ports: crafted frames go
 * into the daemon's real datapath (tlb_dp_poll), and what comes out of
 * each port is checked. Deterministic: the test drives every poll.
 *
 *   uplink  ring_up   rx <- test injects requests   tx -> test reads
 *   targets ring_tN   tx -> test reads requests     rx <- test injects
 *   slow    ring_def  (default target for non-RPC traffic)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_cycles.h>
#include <rte_malloc.h>

#include "turbolb/config.h"
#include "turbolb/credit_ring.h"
#include "dp.h"
#include "port.h"
#include "harness.h"

#define N_CORES 4

static struct ring_port up, def, tgt[N_CORES];
static struct rte_mempool *test_pool, *dp_pool;
static struct tlb_config cfg;
static struct tlb_dp dp;
static uint64_t next_id = 1;

static const char *base_yaml = "ports:\n"
			       "  uplink: { port: net_ring_up }\n"
			       "  default_target: { port: net_ring_def }\n"
			       "  targets:\n"
			       "    - { core: 0, port: net_ring_t0 }\n"
			       "    - { core: 1, port: net_ring_t1 }\n"
			       "    - { core: 2, port: net_ring_t2 }\n"
			       "    - { core: 3, port: net_ring_t3 }\n"
			       "datapath:\n"
			       "  lcores: [1]\n"
			       "  rx_desc: 256\n"
			       "  tx_desc: 256\n"
			       "fifo:\n"
			       "  capacity: 4\n"
			       "host:\n"
			       "  credits: inband\n"
			       "  stale_timeout_us: 60000000\n";

/* ---- frames ---- */

static void
inject(struct rte_ring *r, const void *frame, size_t len)
{
	assert_int_equal(rte_ring_enqueue(r, mbuf_of(test_pool, frame, len)),
			 0);
}

/* Sends one request from client port sport; returns its id. */
static uint64_t
send_request(uint16_t sport, uint32_t hint_ns)
{
	uint8_t f[256];
	struct tlb_frame_addrs a = client(sport);
	struct tlb_rpc_hdr h = tlb_request_hdr(next_id, hint_ns);
	size_t len = tlb_build_frame(f, sizeof(f), &a, &h, "abcd", 4);

	assert_true(len > 0);
	inject(up.rx[0], f, len);
	return next_id++;
}

/* Polls until the datapath has nothing left to do (the idle poll flushes
 * the TX buffers). */
static void
pump(void)
{
	for (int i = 0; i < 64; i++)
		if (tlb_dp_poll(&dp) == 0)
			return;
	fail_msg("datapath never went idle");
}

/* Makes core answer the request (as turbolb-server does). */
static void
respond(unsigned int core, const struct out_pkt *req)
{
	assert_int_equal(rte_ring_enqueue(tgt[core].rx[0],
					  response_mbuf(test_pool, req,
							(uint16_t)core, 500)),
			 0);
}

static uint64_t
counter(enum tlb_dp_counter c)
{
	return dp.stats.c[c];
}

/* Packets the residence histogram counted, over its buckets. */
static uint64_t
residence_count(void)
{
	uint64_t n = 0;

	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS; b++)
		n += dp.stats.residence[b];
	return n;
}

/* ---- fixtures ---- */

static struct tlb_transport *xport; /* the host transport of this case */

/* Starts the dispatcher; cr (may be NULL) is wrapped as its shm host
 * transport. */
static void
start_with(const char *policy, uint32_t k, enum tlb_credit_mode credits,
	   struct tlb_transport *t)
{
	char err[256];

	strcpy(cfg.policy.name, policy);
	cfg.policy.params.k = k;
	cfg.host.credits = credits;
	xport = t;
	assert_int_equal(tlb_dp_init(&dp, &cfg, 1, 0, t, err, sizeof(err)), 0);
	tlb_dps[0] = &dp;
	tlb_n_dps = 1;
}

static void
start(const char *policy, uint32_t k, enum tlb_credit_mode credits,
      struct tlb_cr *cr)
{
	struct tlb_transport *t = NULL;
	char err[256];

	if (cr != NULL)
		assert_int_equal(
			tlb_transport_shm_wrap(cr, &t, err, sizeof(err)), 0);
	start_with(policy, k, credits, t);
}

/* Before the case destroys its ring: the dispatcher reads it no more. */
static void
close_host(void)
{
	tlb_transport_close(xport);
	xport = NULL;
	dp.host = NULL;
}

static int
teardown_dp(void **state)
{
	(void)state;
	tlb_dp_fini(&dp);
	close_host();
	cfg.datapath.tx_hold_ns = TLB_CFG_TX_HOLD_NS;
	cfg.datapath.burst = 32;
	drain(up.tx[0]);
	drain(def.tx[0]);
	for (int i = 0; i < N_CORES; i++)
		drain(tgt[i].tx[0]);
	return 0;
}

static int
group_setup(void **state)
{
	char *argv[] = {"test_dp_ring",
			"--no-huge",
			"-m",
			"256",
			"--no-shconf",
			"--no-pci",
			"-l",
			"0",
			"--log-level=lib.*:error",
			NULL};
	char name[16];

	(void)state;
	if (rte_eal_init(9, argv) < 0)
		return -1;
	make_port("up", &up, 1);
	make_port("def", &def, 1);
	for (int i = 0; i < N_CORES; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		make_port(name, &tgt[i], 1);
	}
	test_pool = rte_pktmbuf_pool_create("test_pool", 4096, 0, 0,
					    RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (test_pool == NULL)
		return -1;
	if (tlb_config_load_buffer("test.yaml", base_yaml, strlen(base_yaml),
				   &cfg, stderr) != 0)
		return -1;
	return tlb_ports_setup(&cfg, &dp_pool);
}

static int
group_teardown(void **state)
{
	(void)state;
	tlb_ports_teardown();
	tlb_config_free(&cfg);
	rte_eal_cleanup();
	return 0;
}

/* ---- tests ---- */

static void
test_rss_flow_sticks(void **state)
{
	struct out_pkt out[64];
	unsigned int cores_used = 0;

	(void)state;
	start("rss", 2, TLB_CREDITS_INBAND, NULL);
	for (uint16_t flow = 0; flow < 8; flow++) {
		int home = -1;

		for (int r = 0; r < 5; r++)
			send_request((uint16_t)(20000 + flow * 7), 0);
		pump();
		for (int c = 0; c < N_CORES; c++) {
			unsigned int n = collect(tgt[c].tx[0], out, 64);

			if (n == 0)
				continue;
			/* All five requests of the flow on one core. */
			assert_int_equal(home, -1);
			assert_int_equal(n, 5);
			home = c;
		}
		assert_true(home >= 0);
		cores_used |= 1u << home;
	}
	/* Eight flows do not all hash to one core. */
	assert_true(__builtin_popcount(cores_used) >= 2);
	assert_int_equal(counter(TLB_DP_steered), 40);
}

static void
test_jsq_least_outstanding(void **state)
{
	struct out_pkt out[64];
	unsigned int n;

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	/* Eight requests, no responses: two per core. */
	for (int r = 0; r < 8; r++)
		send_request(30000, 1000);
	pump();
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), 2);

	/* Core 2 answers both: it is now the shortest queue. */
	for (int c = 0; c < N_CORES; c++)
		if (c != 2)
			assert_int_equal(drain(tgt[c].tx[0]), 2);
	n = collect(tgt[2].tx[0], out, 64);
	assert_int_equal(n, 2);
	respond(2, &out[0]);
	respond(2, &out[1]);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 2), 0);
	assert_int_equal(counter(TLB_DP_completions_inband), 2);
	/* The responses reach the client, with the ids it sent. */
	struct out_pkt resp[8];
	assert_int_equal(collect(up.tx[0], resp, 8), 2);
	assert_int_equal(resp[0].p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(resp[0].p.hdr.req_id, out[0].p.hdr.req_id);
	assert_int_equal(resp[1].p.hdr.req_id, out[1].p.hdr.req_id);

	send_request(30000, 1000);
	send_request(30000, 1000);
	pump();
	assert_int_equal(collect(tgt[2].tx[0], out, 64), 2);
	for (int c = 0; c < N_CORES; c++)
		if (c != 2)
			assert_int_equal(collect(tgt[c].tx[0], out, 64), 0);
}

static void
test_work_stamped_checksum_valid(void **state)
{
	struct out_pkt out[4];
	uint8_t expect[256];
	struct tlb_frame_addrs a = client(31000);

	(void)state;
	start("jlq", 2, TLB_CREDITS_INBAND, NULL);
	uint64_t id = send_request(31000, 2500);
	pump();
	unsigned int n = 0;
	int core = -1;
	for (int c = 0; c < N_CORES && n == 0; c++) {
		n = collect(tgt[c].tx[0], out, 4);
		core = c;
	}
	assert_int_equal(n, 1);
	/* The charged work rides in the header, and the frame is exactly
	 * what a sender stamping it would have built: UDP checksum right. */
	assert_int_equal(out[0].p.hdr.work_ns, 2500);
	struct tlb_rpc_hdr h = tlb_request_hdr(id, 2500);
	h.work_ns = 2500;
	size_t len = tlb_build_frame(expect, sizeof(expect), &a, &h, "abcd", 4);
	assert_int_equal(len, out[0].len);
	assert_memory_equal(expect, out[0].frame, len);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core), 2500);
	respond((unsigned int)core, &out[0]);
	pump();
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core), 0);

	/* The largest hint is charged and stamped whole, and paid back. */
	send_request(31000, UINT32_MAX);
	pump();
	n = 0;
	for (int c = 0; c < N_CORES && n == 0; c++) {
		n = collect(tgt[c].tx[0], out, 4);
		core = c;
	}
	assert_int_equal(n, 1);
	assert_int_equal(out[0].p.hdr.work_ns, UINT32_MAX);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core),
			 UINT32_MAX);
	respond((unsigned int)core, &out[0]);
	pump();
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core), 0);
}

/* Requests and responses the fast path refuses (VLAN-tagged, IPv6) take
 * the general parse: charged, stamped with a valid UDP checksum,
 * answered and paid back exactly like the plain ones. */
static void
test_other_layouts_general_path(void **state)
{
	static const struct {
		int v;
		bool vlan;
	} shapes[] = {
		{4, true},
		{6, false},
		{6, true},
		{4, false},
	};
	uint64_t steered = 0;

	(void)state;
	start("jlq", 2, TLB_CREDITS_INBAND, NULL);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct tlb_frame_addrs a = client((uint16_t)(32000 + s));
		struct tlb_rpc_hdr h =
			tlb_request_hdr(next_id++, 1500 + 100 * s);
		uint8_t f[256], expect[256];
		struct out_pkt out[4];
		unsigned int n = 0;
		int core = -1;
		size_t len;

		a.key.ip_version = (uint8_t)shapes[s].v;
		a.has_vlan = shapes[s].vlan;
		a.vlan_tci = 7;
		if (shapes[s].v == 6) {
			memset(a.key.src_addr, 0, 16);
			memset(a.key.dst_addr, 0, 16);
			a.key.src_addr[0] = a.key.dst_addr[0] = 0xfd;
			a.key.src_addr[15] = 1;
			a.key.dst_addr[15] = 2;
		}
		len = tlb_build_frame(f, sizeof(f), &a, &h, "abcd", 4);
		assert_true(len > 0);
		inject(up.rx[0], f, len);
		pump();
		for (int c = 0; c < N_CORES && n == 0; c++) {
			n = collect(tgt[c].tx[0], out, 4);
			core = c;
		}
		assert_int_equal(n, 1);
		h.work_ns = h.svc_hint_ns;
		assert_int_equal(tlb_build_frame(expect, sizeof(expect), &a, &h,
						 "abcd", 4),
				 len);
		assert_int_equal(out[0].len, len);
		assert_memory_equal(expect, out[0].frame, len);
		assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core),
				 h.svc_hint_ns);
		respond((unsigned int)core, &out[0]);
		pump();
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)core), 0);
		assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)core),
				 0);
		assert_int_equal(collect(up.tx[0], out, 4), 1);
		assert_int_equal(out[0].p.cls, TLB_FRAME_RESPONSE);
		steered++;
	}
	assert_int_equal(counter(TLB_DP_steered), steered);
	assert_int_equal(counter(TLB_DP_responses), steered);
	assert_int_equal(counter(TLB_DP_completions_inband), steered);
}

/* A request in two segments reaches a core stamped and whole: when the
 * first segment holds the IP datagram (the second: trailing bytes), by
 * the fast path, the second segment sent along untouched; when the
 * datagram spans both, linearized and parsed in full. */
static void
test_multi_segment_frames(void **state)
{
	static const uint8_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	struct tlb_frame_addrs a = client(33000);
	struct tlb_rpc_hdr h = tlb_request_hdr(next_id, 700);
	uint8_t f[256], expect[256], got[256];
	size_t len = tlb_build_frame(f, sizeof(f), &a, &h, "abcd", 4);
	struct rte_mbuf *m, *tail;
	unsigned int seen = 0;

	(void)state;
	assert_true(len > 60);
	h.work_ns = 700;
	assert_int_equal(
		tlb_build_frame(expect, sizeof(expect), &a, &h, "abcd", 4),
		len);
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	/* the datagram in the first segment, 8 bytes after it */
	m = mbuf_of(test_pool, f, len);
	assert_int_equal(
		rte_pktmbuf_chain(m, mbuf_of(test_pool, junk, sizeof(junk))),
		0);
	assert_int_equal(rte_ring_enqueue(up.rx[0], m), 0);
	/* the datagram across both */
	m = mbuf_of(test_pool, f, 50);
	assert_int_equal(
		rte_pktmbuf_chain(m, mbuf_of(test_pool, f + 50, len - 50)), 0);
	assert_int_equal(rte_ring_enqueue(up.rx[0], m), 0);
	pump();
	for (int c = 0; c < N_CORES; c++) {
		while (rte_ring_dequeue(tgt[c].tx[0], (void **)&m) == 0) {
			bool trailing = m->nb_segs == 2;

			assert_int_equal(rte_pktmbuf_pkt_len(m),
					 len + (trailing ? sizeof(junk) : 0));
			assert_int_equal(rte_pktmbuf_data_len(m), len);
			memcpy(got, rte_pktmbuf_mtod(m, void *), len);
			assert_memory_equal(got, expect, len);
			if (trailing) {
				tail = m->next;
				assert_memory_equal(
					rte_pktmbuf_mtod(tail, void *), junk,
					sizeof(junk));
			}
			seen |= trailing ? 1u : 2u;
			rte_pktmbuf_free(m);
		}
	}
	assert_int_equal(seen, 3);
	assert_int_equal(counter(TLB_DP_steered), 2);
	assert_int_equal(counter(TLB_DP_drop_multi_segment), 0);
}

static void
test_jbsq_holds_and_releases_in_order(void **state)
{
	struct out_pkt out[64];
	uint64_t ids[8];

	(void)state;
	start("jbsq", 1, TLB_CREDITS_INBAND, NULL);
	for (int r = 0; r < 6; r++)
		ids[r] = send_request(32000, 0);
	pump();
	/* One per core, two held. */
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), 1);
	assert_int_equal(counter(TLB_DP_held), 2);
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 2);

	/* A response from core 3 lets exactly the oldest held one go, to
	 * core 3. */
	assert_int_equal(collect(tgt[3].tx[0], out, 64), 1);
	respond(3, &out[0]);
	pump();
	assert_int_equal(collect(tgt[3].tx[0], out, 64), 1);
	assert_int_equal(out[0].p.hdr.req_id, ids[4]);
	assert_int_equal(counter(TLB_DP_released), 1);
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 1);

	/* The FIFO holds 4: more than that is dropped and counted. */
	for (int r = 0; r < 5; r++)
		send_request(32000, 0);
	pump();
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 4);
	assert_int_equal(counter(TLB_DP_drop_fifo_full), 2);
	/* What is left at shutdown is counted too (teardown frees it). */
}

/* Sends a request of class svc_class with no hint from client port sport. */
static uint64_t
send_class_request(uint16_t sport, uint16_t svc_class)
{
	uint8_t f[256];
	struct tlb_frame_addrs a = client(sport);
	struct tlb_rpc_hdr h = tlb_request_hdr(next_id, 0);
	size_t len;

	h.svc_class = svc_class;
	len = tlb_build_frame(f, sizeof(f), &a, &h, "abcd", 4);
	assert_true(len > 0);
	inject(up.rx[0], f, len);
	return next_id++;
}

/* A held request leaves the FIFO with the work that its hint, or its
 * class's average, says: stamped in its frame and charged to its core,
 * as if it had gone at once. */
static void
test_jbsq_release_keeps_work(void **state)
{
	struct out_pkt out[64];
	uint64_t hinted, classed;

	(void)state;
	start("jbsq", 1, TLB_CREDITS_INBAND, NULL);
	dp.policy.class_avg_ns[2] = 4000;
	for (int c = 0; c < N_CORES; c++)
		send_request(34000, 0);
	pump();
	hinted = send_request(34000, 7000);
	classed = send_class_request(34000, 2);
	pump();
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 2);

	/* Core 0 answers: the oldest held request goes there, then core 1
	 * answers and the other one goes there. */
	for (unsigned int c = 0; c < 2; c++) {
		assert_int_equal(collect(tgt[c].tx[0], out, 64), 1);
		respond(c, &out[0]);
		pump();
		assert_int_equal(collect(tgt[c].tx[0], out, 64), 1);
		assert_int_equal(out[0].p.hdr.req_id,
				 c == 0 ? hinted : classed);
		assert_int_equal(out[0].p.hdr.svc_class, c == 0 ? 0 : 2);
		assert_int_equal(out[0].p.hdr.work_ns, c == 0 ? 7000 : 4000);
		assert_int_equal(tlb_lv_outstanding_work(dp.lv, c),
				 c == 0 ? 7000 : 4000);
	}
	assert_int_equal(counter(TLB_DP_released), 2);
}

static void
test_multi_packet_stays_together(void **state)
{
	struct out_pkt out[64];
	struct tlb_frame_addrs a = client(33000);
	uint8_t f[256];

	(void)state;
	/* What is tested is that the packets stay together, not when an
	 * entry expires: under emulation (qemu) one pump can take longer
	 * than the default 1 ms, so the entries must outlive the case. */
	uint32_t timeout_us = cfg.affinity.timeout_us;

	cfg.affinity.timeout_us = 10000000;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	cfg.affinity.timeout_us = timeout_us; /* the table has its own copy */
	/* A 3-packet message interleaved with single-packet requests that
	 * would otherwise spread over every core. */
	uint64_t msg = next_id++;
	for (uint16_t idx = 0; idx < 3; idx++) {
		struct tlb_rpc_hdr h = tlb_request_hdr(msg, 0);

		h.pkt_idx = idx;
		h.pkt_cnt = 3;
		size_t len = tlb_build_frame(f, sizeof(f), &a, &h, "xy", 2);
		inject(up.rx[0], f, len);
		send_request(33001, 0);
		pump();
	}
	int home = -1;
	unsigned int total = 0;
	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 64);

		total += n;
		for (unsigned int i = 0; i < n; i++) {
			if (out[i].p.hdr.req_id != msg)
				continue;
			if (home < 0)
				home = c;
			assert_int_equal(c, home);
		}
	}
	assert_int_equal(total, 6);
	assert_int_equal(counter(TLB_DP_affinity_hits), 2);
	/* The message counts once toward its core's load. */
	assert_int_equal(counter(TLB_DP_messages), 4);
}

/* Sends packet idx of a pkt_cnt-packet message id from client port sport. */
static void
send_part(uint16_t sport, uint64_t id, uint16_t idx, uint16_t cnt)
{
	struct tlb_frame_addrs a = client(sport);
	struct tlb_rpc_hdr h = tlb_request_hdr(id, 1000);
	uint8_t f[256];
	size_t len;

	h.pkt_idx = idx;
	h.pkt_cnt = cnt;
	len = tlb_build_frame(f, sizeof(f), &a, &h, "xy", 2);
	inject(up.rx[0], f, len);
}

/* Many first packets whose messages never finish pin every jbsq core at
 * its bound; once the affinity timeout passes, their charges come back
 * (incomplete_messages), every core is in rotation again and a new
 * request is steered at once. Waits are bounded polls on a condition. */
static void
test_unfinished_messages_released(void **state)
{
	struct out_pkt out[64];
	unsigned int n = 0;

	(void)state;
	start("jbsq", 1, TLB_CREDITS_INBAND, NULL);
	for (uint16_t r = 0; r < N_CORES; r++)
		send_part((uint16_t)(34000 + r), next_id++, 0, 2);
	pump();
	for (int c = 0; c < N_CORES; c++) {
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), 1);
		drain(tgt[c].tx[0]);
	}
	/* Every core at its bound: a new request waits. */
	send_request(35000, 0);
	pump();
	assert_int_equal(counter(TLB_DP_held), 1);
	for (int i = 0;
	     i < 100000 && counter(TLB_DP_incomplete_messages) < N_CORES; i++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	assert_int_equal(counter(TLB_DP_incomplete_messages), N_CORES);
	/* The held request went as soon as a core was free again. */
	assert_int_equal(counter(TLB_DP_released), 1);
	for (int c = 0; c < N_CORES; c++)
		n += collect(tgt[c].tx[0], out, 64);
	assert_int_equal(n, 1);
	/* Every core takes a request again. */
	for (int r = 0; r < N_CORES - 1; r++)
		send_request(35001, 0);
	pump();
	for (int c = 0; c < N_CORES; c++) {
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), 1);
		drain(tgt[c].tx[0]);
	}
	assert_int_equal(counter(TLB_DP_drop_fifo_full), 0);
}

/* A message whose core goes out of rotation between its packets: the
 * later packets are dropped and counted, never charged to another core,
 * and the message's charge goes back to its core. */
static void
test_continuation_of_lost_core_dropped(void **state)
{
	struct out_pkt out[64];
	uint64_t id = next_id++;
	int home = -1;
	unsigned int n = 0;

	(void)state;
	uint32_t timeout_us = cfg.affinity.timeout_us;

	cfg.affinity.timeout_us = 10000000;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	cfg.affinity.timeout_us = timeout_us;
	send_part(36000, id, 0, 3);
	pump();
	for (int c = 0; c < N_CORES; c++)
		if (collect(tgt[c].tx[0], out, 64) == 1)
			home = c;
	assert_true(home >= 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)home), 1);
	tlb_lv_set_online(dp.lv, (uint32_t)home, false);
	send_part(36000, id, 1, 3);
	send_part(36000, id, 2, 3);
	pump();
	for (int c = 0; c < N_CORES; c++)
		n += collect(tgt[c].tx[0], out, 64);
	assert_int_equal(n, 0);
	assert_int_equal(counter(TLB_DP_drop_continuation), 2);
	assert_int_equal(counter(TLB_DP_incomplete_messages), 1);
	assert_int_equal(counter(TLB_DP_messages), 1);
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), 0);
}

/* Makes core answer req, saying in the header it was server_core. */
static void
respond_as(unsigned int core, const struct out_pkt *req, uint16_t server_core)
{
	assert_int_equal(rte_ring_enqueue(tgt[core].rx[0],
					  response_mbuf(test_pool, req,
							server_core, 500)),
			 0);
}

/* A response is the completion of the core whose queue it arrives on;
 * a header that names another core is counted, one that names none is
 * not (docs/protocol.md, "work_ns, server_core, service_ns"). */
static void
test_response_attributed_by_queue(void **state)
{
	struct out_pkt out[64];

	(void)state;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	for (int r = 0; r < N_CORES; r++)
		send_request(39000, 1000);
	pump();
	assert_int_equal(collect(tgt[2].tx[0], out, 64), 1);
	respond_as(2, &out[0], 1);
	assert_int_equal(collect(tgt[3].tx[0], out, 64), 1);
	respond_as(3, &out[0], TLB_RPC_CORE_UNKNOWN);
	assert_int_equal(collect(tgt[0].tx[0], out, 64), 1);
	respond_as(0, &out[0], 0);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 2), 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 3), 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 1);
	assert_int_equal(counter(TLB_DP_resp_core_mismatch), 1);
	assert_int_equal(counter(TLB_DP_completions_inband), 3);
	drain(tgt[1].tx[0]);
}

/* The responses of every host core's queue in one poll are handled
 * together (datapath.c, struct target_rx), each completing the core whose
 * queue it came on. With 150 answers a core and a burst of 512, what the
 * queues hold does not fit the gathering array at once: each queue after
 * the first makes it hand on what it holds first. With the default burst
 * of 32 all fit at once, 32 a queue, over five polls. */
#define GATHER_PER_CORE 150

static void
test_responses_gathered_across_queues(void **state)
{
	static const uint32_t bursts[] = {512, 32};
	static struct out_pkt out[GATHER_PER_CORE];
	const uint64_t total = GATHER_PER_CORE * N_CORES;

	(void)state;
	for (size_t b = 0; b < RTE_DIM(bursts); b++) {
		cfg.datapath.burst = bursts[b];
		start("rr", 2, TLB_CREDITS_INBAND, NULL);
		for (uint64_t r = 0; r < total; r++)
			send_request(39000, 1000);
		pump();
		for (unsigned int c = 0; c < N_CORES; c++) {
			unsigned int n =
				collect(tgt[c].tx[0], out, GATHER_PER_CORE);

			assert_int_equal(n, GATHER_PER_CORE);
			for (unsigned int i = 0; i < n; i++)
				respond(c, &out[i]);
		}
		pump();
		assert_int_equal(drain(up.tx[0]), total);
		assert_int_equal(counter(TLB_DP_responses), total);
		assert_int_equal(counter(TLB_DP_completions_inband), total);
		assert_int_equal(counter(TLB_DP_resp_core_mismatch), 0);
		for (unsigned int c = 0; c < N_CORES; c++)
			assert_int_equal(tlb_lv_outstanding(dp.lv, c), 0);
		tlb_dp_fini(&dp);
		memset(&dp, 0, sizeof(dp));
	}
}

/* A probed core (one request at a time) that gets a multi-packet
 * message as its probe gets the rest of that message too: the cap is for
 * new requests, not for the packets of one it has. */
static void
test_probe_message_stays_whole(void **state)
{
	struct out_pkt out[8];
	uint64_t id = next_id++;

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	for (uint32_t c = 1; c < N_CORES; c++)
		tlb_lv_set_online(dp.lv, c, false);
	dp.lv->core[0].probing = 1;
	tlb_lv_refresh(dp.lv, 0);
	send_part(36500, id, 0, 3);
	send_part(36500, id, 1, 3);
	send_part(36500, id, 2, 3);
	pump();
	assert_true(dp.lv->core[0].capped);
	assert_int_equal(collect(tgt[0].tx[0], out, 8), 3);
	assert_int_equal(counter(TLB_DP_drop_continuation), 0);
	assert_int_equal(counter(TLB_DP_messages), 1);
}

static void
test_pass_through_untouched(void **state)
{
	struct out_pkt out[4];
	uint8_t arp[60];
	uint8_t f[256];

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	memset(arp, 0, sizeof(arp));
	memset(arp, 0xff, 6);
	memcpy(arp + 6, "\x02\x00\x00\x00\x00\x01", 6);
	arp[12] = 0x08;
	arp[13] = 0x06;
	for (int i = 14; i < 42; i++)
		arp[i] = (uint8_t)i;
	inject(up.rx[0], arp, sizeof(arp));

	/* UDP to another port is not ours either. */
	struct tlb_frame_addrs a = client(34000);
	a.key.dst_port = 53;
	struct tlb_rpc_hdr h = tlb_request_hdr(1, 0);
	size_t len = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);
	inject(up.rx[0], f, len);
	pump();
	assert_int_equal(collect(def.tx[0], out, 4), 2);
	assert_int_equal(out[0].len, sizeof(arp));
	assert_memory_equal(out[0].frame, arp, sizeof(arp));
	assert_int_equal(out[1].len, len);
	assert_memory_equal(out[1].frame, f, len);
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(drain(tgt[c].tx[0]), 0);

	/* And back: the slow path and a host's ARP reply go to the uplink. */
	inject(def.rx[0], arp, sizeof(arp));
	inject(tgt[1].rx[0], arp, sizeof(arp));
	pump();
	assert_int_equal(collect(up.tx[0], out, 4), 2);
	assert_memory_equal(out[0].frame, arp, sizeof(arp));
	assert_memory_equal(out[1].frame, arp, sizeof(arp));
	assert_int_equal(counter(TLB_DP_pass_up), 2);
	assert_int_equal(counter(TLB_DP_pass_down), 2);
}

static void
test_malformed_counted(void **state)
{
	uint8_t f[256];
	struct tlb_frame_addrs a = client(35000);
	struct tlb_rpc_hdr h = tlb_request_hdr(1, 0);
	size_t len = tlb_build_frame(f, sizeof(f), &a, &h, "abcd", 4);
	size_t rpc = len - 4 - TLB_RPC_HDR_LEN;
	uint8_t bad[256];

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	/* Bad magic (UDP checksum is not checked by the daemon). */
	memcpy(bad, f, len);
	bad[rpc] ^= 0xff;
	inject(up.rx[0], bad, len);
	/* Bad version, twice. */
	memcpy(bad, f, len);
	bad[rpc + 2] = 9;
	inject(up.rx[0], bad, len);
	inject(up.rx[0], bad, len);
	/* Cut inside the Ethernet header. */
	inject(up.rx[0], f, 10);
	/* A response arriving from the wire side. */
	uint8_t r[256];
	struct tlb_parsed p;
	struct tlb_parse_opts opts = {.udp_ports = {RPC_PORT},
				      .n_udp_ports = 1};
	memcpy(r, f, len);
	assert_int_equal(tlb_parse_frame(r, len, &opts, &p), TLB_PARSE_OK);
	size_t rlen =
		tlb_make_response(r, len, &p, TLB_MSG_RESPONSE, 0, 0, 0, 0);
	inject(up.rx[0], r, rlen);
	pump();
	assert_int_equal(dp.stats.drop_parse[TLB_PARSE_BAD_MAGIC], 1);
	assert_int_equal(dp.stats.drop_parse[TLB_PARSE_BAD_VERSION], 2);
	assert_int_equal(dp.stats.drop_parse[TLB_PARSE_TRUNC_ETH], 1);
	assert_int_equal(counter(TLB_DP_drop_bad_direction), 1);
	assert_int_equal(counter(TLB_DP_steered), 0);
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(drain(tgt[c].tx[0]), 0);
	assert_int_equal(drain(def.tx[0]), 0);
	/* Every mbuf came back: nothing leaked on the drop paths. */
	assert_int_equal(rte_mempool_in_use_count(test_pool), 0);
}

static void
test_credit_ring(void **state)
{
	struct out_pkt out[64];
	struct tlb_cr *nic, *host;
	char err[256], name[64];

	(void)state;
	snprintf(name, sizeof(name), "/tlb-dptest-%d", getpid());
	assert_int_equal(
		tlb_cr_create(name, N_CORES, 64, 0600, &nic, err, sizeof(err)),
		0);
	start("jsq", 2, TLB_CREDITS_RING, nic);
	/* No host attached: every core offline, requests dropped. */
	send_request(36000, 0);
	pump();
	assert_int_equal(counter(TLB_DP_drop_no_core), 1);

	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	/* Housekeeping runs every housekeeping_us. */
	rte_delay_us_block(cfg.datapath.housekeeping_us * 2);
	pump();
	for (int r = 0; r < 4; r++)
		send_request(36000, 100);
	pump();
	assert_int_equal(collect(tgt[2].tx[0], out, 64), 0);
	assert_int_equal(collect(tgt[3].tx[0], out, 64), 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 2);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 2);

	/* A response does not count in ring mode; the credit does. */
	assert_int_equal(collect(tgt[0].tx[0], out, 64), 2);
	respond(0, &out[0]);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 2);
	assert_int_equal(drain(up.tx[0]), 1);
	struct tlb_credit c = {.completions = 2, .work_ns = 200};
	assert_int_equal(tlb_cr_post(host, 0, &c, 1), 1);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 0);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, 0), 0);
	assert_int_equal(counter(TLB_DP_completions_credit), 2);
	assert_int_equal(counter(TLB_DP_completions_inband), 0);

	/* The host restarts: the two requests at core 1 are stranded. */
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	rte_delay_us_block(cfg.datapath.housekeeping_us * 2);
	pump();
	assert_int_equal(counter(TLB_DP_host_restarts), 1);
	assert_int_equal(counter(TLB_DP_stranded), 2);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 0);
	assert_false(tlb_lv_eligible(dp.lv, 0));
	assert_true(tlb_lv_eligible(dp.lv, 1));
	tlb_cr_detach(host);
	close_host();
	tlb_cr_destroy(nic, true);
}

/* Runs the housekeeping on the next poll, then polls until idle. */
static void
housekeep(void)
{
	uint64_t period = dp.housekeeping_tsc;

	dp.housekeeping_tsc = 0;
	dp.last_housekeeping_tsc = 0;
	tlb_dp_poll(&dp);
	dp.housekeeping_tsc = period;
	pump();
}

/* Breaks core's ring as a faulty host does: a record no host writes
 * (more work than its completion can carry), which the drain finds. */
static void
break_ring(struct tlb_cr *host, unsigned int core)
{
	struct tlb_credit bad = {.completions = 1,
				 .work_ns = 2ull * UINT32_MAX};

	assert_int_equal(tlb_cr_post(host, core, &bad, 1), 1);
	pump();
	assert_true(tlb_transport_fallback(dp.host, core));
}

/* A core whose ring breaks falls back to in-band credits at the next
 * housekeeping. A response that passed before then, whose credit the
 * broken ring lost, completes its request when the core enters fallback
 * (core 0); a response whose credit came first completes nothing more
 * there (core 1). */
static void
test_credit_ring_fallback_gap(void **state)
{
	struct out_pkt out0[8], out1[8];
	struct tlb_cr *nic, *host;
	char err[256], name[64];

	(void)state;
	snprintf(name, sizeof(name), "/tlb-dptest-gap-%d", getpid());
	assert_int_equal(
		tlb_cr_create(name, N_CORES, 64, 0600, &nic, err, sizeof(err)),
		0);
	start("jsq", 2, TLB_CREDITS_RING, nic);
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	tlb_cr_set_state(host, 0, TLB_RUN_RUNNING);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	/* Housekeeping only where the test calls it: on a slow machine
	 * (qemu) its period would pass between the steps below. */
	dp.housekeeping_tsc = UINT64_MAX;
	housekeep();
	for (int r = 0; r < 4; r++)
		send_request(36100, 100);
	pump();
	assert_int_equal(collect(tgt[0].tx[0], out0, 8), 2);
	assert_int_equal(collect(tgt[1].tx[0], out1, 8), 2);

	/* Core 0: a response passes, its credit not posted yet; then the
	 * ring breaks and the credit is lost. */
	respond(0, &out0[0]);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 2);
	break_ring(host, 0);
	/* Core 1: the credit first, then its response; then the ring
	 * breaks. */
	struct tlb_credit c = {.completions = 1, .work_ns = 100};
	assert_int_equal(tlb_cr_post(host, 1, &c, 1), 1);
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 1);
	respond(1, &out1[0]);
	pump();
	break_ring(host, 1);
	assert_int_equal(drain(up.tx[0]), 2);
	assert_int_equal(dp.credit_fallback[0] & 3, 0);

	housekeep();
	assert_int_equal(dp.credit_fallback[0] & 3, 3);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 1);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, 0), 100);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 1);
	assert_int_equal(counter(TLB_DP_completions_inband), 1);
	assert_int_equal(counter(TLB_DP_completions_credit), 1);

	/* In fallback the responses count. */
	respond(0, &out0[1]);
	respond(1, &out1[1]);
	pump();
	assert_int_equal(drain(up.tx[0]), 2);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 0);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, 0), 0);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 1), 0);
	assert_int_equal(tlb_lv_outstanding_work(dp.lv, 1), 0);
	assert_int_equal(counter(TLB_DP_completions_inband), 3);
	assert_int_equal(counter(TLB_DP_completions_extra), 0);
	assert_int_equal(counter(TLB_DP_late_completions), 0);
	tlb_cr_detach(host);
	close_host();
	tlb_cr_destroy(nic, true);
}

/* Without host memory (transport none): every core is taken as running,
 * occupancy comes from the responses alone, the kick is off even when asked
 * for (no doorbell), and no host epoch ever resets the view. */
static void
test_transport_none(void **state)
{
	struct tlb_transport *t;
	struct out_pkt out[64];
	char err[256];

	(void)state;
	assert_int_equal(
		tlb_transport_none_create(N_CORES, &t, err, sizeof(err)), 0);
	assert_false(tlb_transport_can_kick(t));
	cfg.kick.enabled = true;
	start_with("jsq", 2, TLB_CREDITS_INBAND, t);
	cfg.kick.enabled = false;
	assert_false(dp.kick);
	/* Housekeeping (every housekeeping_us) reads the run states. */
	rte_delay_us_block(cfg.datapath.housekeeping_us * 2);
	pump();
	for (uint32_t c = 0; c < N_CORES; c++) {
		assert_true(dp.lv->core[c].running);
		assert_true(tlb_lv_eligible(dp.lv, c));
	}
	for (int r = 0; r < 2 * N_CORES; r++)
		send_request(38000, 100);
	pump();
	for (int c = 0; c < N_CORES; c++) {
		assert_int_equal(collect(tgt[c].tx[0], out, 64), 2);
		respond((unsigned int)c, &out[0]);
	}
	pump();
	for (uint32_t c = 0; c < N_CORES; c++)
		assert_int_equal(tlb_lv_outstanding(dp.lv, c), 1);
	assert_int_equal(counter(TLB_DP_completions_inband), N_CORES);
	assert_int_equal(counter(TLB_DP_completions_credit), 0);
	assert_int_equal(counter(TLB_DP_host_restarts), 0);
	assert_int_equal(counter(TLB_DP_stranded), 0);
	assert_int_equal(drain(up.tx[0]), N_CORES);
}

static void
test_stale_core_skipped(void **state)
{
	struct out_pkt out[64];

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	/* Only this test wants cores to go stale quickly: the others must not
	 * depend on how fast a loaded machine runs their polls. */
	dp.stale_timeout_ns = 1000 * 1000;
	dp.write_off_ns = UINT64_MAX / 2;
	for (int r = 0; r < 4; r++)
		send_request(37000, 0);
	pump();
	struct out_pkt keep;
	/* Cores 1..3 answer; core 0 hangs. */
	for (int c = 0; c < N_CORES; c++) {
		assert_int_equal(collect(tgt[c].tx[0], out, 64), 1);
		if (c == 0)
			keep = out[0];
		else
			respond((unsigned int)c, &out[0]);
	}
	pump();
	/* Wait for the liveness check to see no progress for longer than
	 * stale_timeout_us; bounded, and no time is asserted. */
	for (int i = 0; i < 5000 && !dp.lv->core[0].stale; i++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	assert_true(dp.lv->core[0].stale);
	for (int r = 0; r < 6; r++)
		send_request(37000, 0);
	pump();
	assert_int_equal(collect(tgt[0].tx[0], out, 64), 0);
	/* It answers: back in rotation. */
	respond(0, &keep);
	pump();
	for (int i = 0; i < 5000 && dp.lv->core[0].stale; i++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	assert_false(dp.lv->core[0].stale);
	assert_int_equal(dp.lv->core[0].stale_events, 1);
}

/* A core whose requests were lost (its server died with them and came
 * back) is stale, then written off and probed, then in full rotation
 * again: it gets its share of what comes next. The accounting holds:
 * every request steered is answered or written off. Waits are bounded
 * polls on conditions; no time is asserted. */
static void
test_stale_core_written_off_and_back(void **state)
{
	struct out_pkt out[64];
	unsigned int got[N_CORES] = {0}, polls = 0;
	uint64_t answered = 0;

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	dp.stale_timeout_ns = 1000 * 1000;
	dp.write_off_ns = 2000 * 1000;
	for (int r = 0; r < 2 * N_CORES; r++)
		send_request(37000, 0);
	pump();
	/* Cores 1..3 answer; core 0's two requests are lost. */
	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 64);

		assert_int_equal(n, 2);
		for (unsigned int i = 0; c != 0 && i < n; i++) {
			respond((unsigned int)c, &out[i]);
			answered++;
		}
	}
	pump();
	for (; polls < 100000 && !dp.lv->core[0].probing; polls++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	assert_true(dp.lv->core[0].probing);
	assert_int_equal(dp.lv->core[0].stale_events, 1);
	assert_int_equal(counter(TLB_DP_written_off), 2);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 0);
	/* 1000 requests, each core answering whatever reaches it. */
	for (int r = 0; r < 1000; r++) {
		send_request((uint16_t)(38000 + r % 64), 0);
		tlb_dp_poll(&dp);
		for (int c = 0; c < N_CORES; c++) {
			unsigned int n = collect(tgt[c].tx[0], out, 64);

			for (unsigned int i = 0; i < n; i++)
				respond((unsigned int)c, &out[i]);
			got[c] += n;
			answered += n;
		}
	}
	pump();
	for (int i = 0; i < 100000 && dp.lv->core[0].probing; i++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	printf("after the write-off (%u polls of 100 us): core shares %u %u "
	       "%u %u of 1000\n",
	       polls, got[0], got[1], got[2], got[3]);
	assert_false(dp.lv->core[0].probing);
	assert_true(got[0] >= 1000 / N_CORES / 2);
	assert_int_equal(counter(TLB_DP_steered), 2 * N_CORES + 1000);
	assert_int_equal(counter(TLB_DP_steered),
			 answered + counter(TLB_DP_written_off));
	assert_int_equal(counter(TLB_DP_late_completions), 0);
}

static void
test_kick_parked_core(void **state)
{
	struct tlb_cr *nic, *host;
	char err[256], name[64];

	(void)state;
	snprintf(name, sizeof(name), "/tlb-kicktest-%d", getpid());
	assert_int_equal(
		tlb_cr_create(name, N_CORES, 64, 0600, &nic, err, sizeof(err)),
		0);
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	tlb_cr_set_state(host, 0, TLB_RUN_PARKED);
	tlb_cr_set_state(host, 1, TLB_RUN_RUNNING);
	cfg.kick.enabled = true;
	cfg.kick.min_interval_us = 1000000; /* one kick per core here */
	cfg.kick.stall_us = 0;
	start("jsq", 2, TLB_CREDITS_INBAND, nic);
	cfg.kick.enabled = false;
	rte_delay_us_block(cfg.datapath.housekeeping_us * 2);
	pump();
	assert_false(dp.lv->core[0].running);
	assert_true(dp.lv->core[1].running);

	/* jsq sends to all four cores; the parked one (0) and the two with
	 * no thread attached (2, 3) are not running: each is kicked once,
	 * however many requests it gets. */
	for (int r = 0; r < 12; r++)
		send_request(39000, 0);
	pump();
	assert_int_equal(tlb_cr_doorbell(host, 0), 1);
	assert_int_equal(tlb_cr_doorbell(host, 1), 0);
	assert_int_equal(tlb_cr_doorbell(host, 2), 1);
	assert_int_equal(counter(TLB_DP_kicks_sent), 3);
	tlb_cr_detach(host);
	close_host();
	tlb_cr_destroy(nic, true);
}

static void
test_policy_switch_at_loop_boundary(void **state)
{
	struct out_pkt out[64];
	struct tlb_dp_update u;
	char err[256];
	uint64_t ids[8];

	(void)state;
	start("jbsq", 1, TLB_CREDITS_INBAND, NULL);
	for (int r = 0; r < 6; r++)
		ids[r] = send_request(38000, 0);
	pump();
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 2);

	/* Switch to jsq with a bigger FIFO: the held requests move to the
	 * new storage in order and, jsq never holding, leave at once. Two
	 * new requests come in the same poll: they queue behind the held
	 * ones (arrival order), jsq or not. */
	ids[6] = send_request(38000, 0);
	ids[7] = send_request(38000, 0);
	memset(&u, 0, sizeof(u));
	assert_int_equal(tlb_policy_init(&u.policy, "jsq", &cfg.policy.params,
					 N_CORES, err, sizeof(err)),
			 0);
	u.fifo_slot = tlb_dp_fifo_alloc(64, &u.fifo_capacity, 0);
	assert_non_null(u.fifo_slot);
	u.fifo_limit = 64;
	u.stale_timeout_ns = dp.stale_timeout_ns;
	uint64_t gen = tlb_dp_post_update(&dp, &u);
	assert_false(tlb_dp_update_done(&dp, gen));
	pump();
	assert_true(tlb_dp_update_done(&dp, gen));
	assert_string_equal(dp.policy.ops->name, "jsq");
	assert_non_null(u.old_fifo_slot);
	rte_free(u.old_fifo_slot);
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 0);
	assert_int_equal(counter(TLB_DP_held), 4);
	assert_int_equal(counter(TLB_DP_released), 4);
	/* Released oldest first, one to each core (jsq, all at one). */
	unsigned int seen = 0;
	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 64);

		for (unsigned int i = 0; i < n; i++)
			if (out[i].p.hdr.req_id >= ids[4])
				seen++;
	}
	assert_int_equal(seen, 4);
	assert_int_equal(dp.fifo.limit, 64);
}

/* Posts a switch to policy name (FIFO as it is) and applies it. */
static void
switch_policy(const char *name)
{
	static struct tlb_dp_update u;
	char err[256];

	memset(&u, 0, sizeof(u));
	assert_int_equal(tlb_policy_init(&u.policy, name, &cfg.policy.params,
					 N_CORES, err, sizeof(err)),
			 0);
	u.fifo_limit = dp.fifo.limit;
	u.stale_timeout_ns = dp.stale_timeout_ns;
	uint64_t gen = tlb_dp_post_update(&dp, &u);
	pump();
	assert_true(tlb_dp_update_done(&dp, gen));
	assert_string_equal(dp.policy.ops->name, name);
}

/* Requests held by jbsq when the policy becomes rss, which hashes the
 * flow: each leaves for the core its flow hashes to, the core that a
 * new request of that flow goes to. */
static void
test_held_to_flow_policy(void **state)
{
	struct out_pkt out[64];
	uint64_t held[4];
	int held_core[4], flow_core[4];
	unsigned int cores = 0;

	(void)state;
	start("jbsq", 1, TLB_CREDITS_INBAND, NULL);
	for (int c = 0; c < N_CORES; c++)
		send_request(35000, 0);
	pump();
	for (int c = 0; c < N_CORES; c++)
		drain(tgt[c].tx[0]);
	for (int f = 0; f < 4; f++)
		held[f] = send_request((uint16_t)(20000 + f * 7), 0);
	pump();
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 4);

	switch_policy("rss");
	assert_int_equal(dp.fifo.tail - dp.fifo.head, 0);
	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 64);

		for (unsigned int i = 0; i < n; i++)
			for (int f = 0; f < 4; f++)
				if (out[i].p.hdr.req_id == held[f])
					held_core[f] = c;
	}
	for (int f = 0; f < 4; f++) {
		send_request((uint16_t)(20000 + f * 7), 0);
		pump();
		flow_core[f] = -1;
		for (int c = 0; c < N_CORES; c++)
			if (collect(tgt[c].tx[0], out, 64) == 1)
				flow_core[f] = c;
		assert_int_equal(held_core[f], flow_core[f]);
		cores |= 1u << flow_core[f];
	}
	/* The flows do not all hash to one core. */
	assert_true(__builtin_popcount(cores) >= 2);
}

/* Frames at each core since the last call, added to got[]; returns the
 * core that got a request of hint_ns, or -1. */
static int
collect_all(unsigned int got[N_CORES], uint32_t hint_ns)
{
	struct out_pkt out[64];
	int where = -1;

	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 64);

		got[c] += n;
		for (unsigned int i = 0; i < n; i++)
			if (out[i].p.hdr.svc_hint_ns == hint_ns)
				where = c;
	}
	return where;
}

/* From jsq to jlq and back while requests come: each policy charges the
 * view its own way (jlq through its dispatch, jsq's picks charged by the
 * datapath), jlq's picks follow the work, and every core got exactly
 * the requests the view was charged with. */
static void
test_policy_switch_jlq(void **state)
{
	unsigned int got[N_CORES] = {0};
	int heavy;

	(void)state;
	start("jsq", 1, TLB_CREDITS_INBAND, NULL);
	for (int r = 0; r < N_CORES; r++)
		send_request(38000, 1000);
	pump();
	collect_all(got, 0);
	assert_false(dp.own_dispatch);

	switch_policy("jlq");
	assert_true(dp.own_dispatch);
	send_request(38000, 50000);
	pump();
	heavy = collect_all(got, 50000);
	assert_true(heavy >= 0);
	/* the others stay under the heavy core's 51 us however the light
	 * ones spread */
	for (int r = 0; r < 2 * (N_CORES - 1); r++)
		send_request(38000, 1000);
	pump();
	unsigned int before = got[heavy];
	collect_all(got, 0);
	assert_int_equal(got[heavy], before);

	switch_policy("jsq");
	assert_false(dp.own_dispatch);
	for (int r = 0; r < N_CORES; r++)
		send_request(38000, 1000);
	pump();
	collect_all(got, 0);
	for (int c = 0; c < N_CORES; c++)
		assert_int_equal(dp.lv->core[c].sent, got[c]);
	assert_int_equal(got[0] + got[1] + got[2] + got[3],
			 2 * N_CORES + 1 + 2 * (N_CORES - 1));
}

/* A target ring that takes only part of a TX buffer: the requests it
 * refuses are dropped, counted, and each uncharged by exactly its own
 * work; those it took stay charged. Every request has its own hint, so a
 * charge taken back for the wrong packet shows in the work. */
static void
test_tx_full_uncharges_refused(void **state)
{
	static int fill_marker;
	struct out_pkt out[16];
	unsigned int n_fill = 0, got = 0;
	void *x;

	(void)state;
	start("jsq", 2, TLB_CREDITS_INBAND, NULL);
	/* Core 1's ring full of markers but one slot. */
	while (rte_ring_enqueue(tgt[1].tx[0], &fill_marker) == 0)
		n_fill++;
	assert_int_equal(rte_ring_dequeue(tgt[1].tx[0], &x), 0);
	n_fill--;
	/* jsq: two requests a core, both in its TX buffer until the idle
	 * poll sends it; core 1's ring takes the first. */
	for (uint32_t r = 0; r < 2 * N_CORES; r++)
		send_request(32000, 1000 + 100 * r);
	pump();
	assert_int_equal(counter(TLB_DP_messages), 2 * N_CORES);
	assert_int_equal(counter(TLB_DP_drop_tx_full), 1);
	for (unsigned int i = 0; i < n_fill; i++) {
		assert_int_equal(rte_ring_dequeue(tgt[1].tx[0], &x), 0);
		assert_ptr_equal(x, &fill_marker);
	}
	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 16);
		uint64_t work = 0;

		assert_int_equal(n, c == 1 ? 1 : 2);
		for (unsigned int i = 0; i < n; i++)
			work += out[i].p.hdr.work_ns;
		/* what is outstanding is what arrived, to the ns */
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c), n);
		assert_int_equal(tlb_lv_outstanding_work(dp.lv, (uint32_t)c),
				 work);
		got += n;
	}
	assert_int_equal(got, 2 * N_CORES - 1);
}

/* A request still in a TX buffer when the host epoch changes, whose ring
 * then refuses it: it is counted once, stranded or dropped, never both. */
static void
test_restart_with_buffered_request(void **state)
{
	static int fill_marker;
	const char *name = "/tlb-test-dp-buffered";
	struct tlb_cr *nic, *host;
	char err[256];
	unsigned int n_fill[N_CORES];
	void *x;

	(void)state;
	assert_int_equal(
		tlb_cr_create(name, N_CORES, 64, 0600, &nic, err, sizeof(err)),
		0);
	start("jsq", 2, TLB_CREDITS_INBAND, nic);
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	rte_delay_us_block(cfg.datapath.housekeeping_us * 2);
	pump();
	/* Every target's ring full (of markers, taken out below). */
	for (int c = 0; c < N_CORES; c++) {
		n_fill[c] = 0;
		while (rte_ring_enqueue(tgt[c].tx[0], &fill_marker) == 0)
			n_fill[c]++;
	}
	send_request(38000, 0);
	/* The host restarts while the request sits in a TX buffer. */
	tlb_cr_detach(host);
	assert_int_equal(tlb_cr_attach(name, &host, err, sizeof(err)), 0);
	/* Held past the housekeeping of the next poll, which sees the
	 * new epoch. */
	for (int c = 0; c < N_CORES; c++)
		dp.target[c].hold_tsc = rte_get_tsc_hz();
	dp.last_housekeeping_tsc = 0;
	tlb_dp_poll(&dp);
	pump();
	printf("messages %lu stranded %lu drop_tx_full %lu host_restarts %lu\n",
	       (unsigned long)counter(TLB_DP_messages),
	       (unsigned long)counter(TLB_DP_stranded),
	       (unsigned long)counter(TLB_DP_drop_tx_full),
	       (unsigned long)counter(TLB_DP_host_restarts));
	for (int c = 0; c < N_CORES; c++)
		for (unsigned int i = 0; i < n_fill[c]; i++)
			assert_int_equal(rte_ring_dequeue(tgt[c].tx[0], &x), 0);
	tlb_cr_detach(host);
	close_host();
	tlb_cr_destroy(nic, true);
	assert_int_equal(counter(TLB_DP_messages), 1);
	assert_int_equal(counter(TLB_DP_host_restarts), 1);
	assert_int_equal(
		counter(TLB_DP_stranded) + counter(TLB_DP_drop_tx_full), 1);
}

/* ---- the latency bound (datapath.tx_hold_ns) ---- */

#define STEADY_POLLS 400

/* What a steady run saw. */
struct steady {
	uint64_t sent, delivered, answered;
	uint64_t waited_max; /* polls between a request's and its arrival */
	uint64_t fifo_polls; /* polls that ended with requests held */
};

/* After a poll: every core that jbsq keeps at its bound has nothing left
 * in its TX buffer, and requests wait in the FIFO only while every core
 * is at its bound (they are released in the poll that frees a core). */
static void
check_bound_released(uint32_t k)
{
	bool all_at_bound = true;

	for (uint32_t c = 0; c < N_CORES; c++) {
		uint64_t out = tlb_lv_outstanding(dp.lv, c);

		assert_true(out <= k);
		if (out == k)
			assert_int_equal(dp.target[c].length, 0);
		else
			all_at_bound = false;
	}
	if (dp.fifo.tail != dp.fifo.head)
		assert_true(all_at_bound);
}

/* The uplink never empty: per_poll requests put on it before every poll,
 * and each host core answering at once, right after the poll, whatever
 * reached it. After every poll, each response the datapath took from a
 * host core is on the uplink; with exact set, each request it steered is
 * on its core's ring too. k: jbsq's bound (0: not jbsq). */
static void
run_steady(struct steady *st, bool exact, uint32_t k, unsigned int per_poll)
{
	uint64_t sent_at[STEADY_POLLS * (N_CORES + 2) + 1];
	uint64_t base = next_id, got_up = 0;
	struct out_pkt out[64];

	memset(st, 0, sizeof(*st));
	for (uint64_t poll = 0; poll < STEADY_POLLS; poll++) {
		for (unsigned int r = 0; r < per_poll; r++) {
			sent_at[next_id - base] = poll;
			send_request((uint16_t)(30000 + st->sent % 64), 1000);
			st->sent++;
		}
		tlb_dp_poll(&dp);
		for (unsigned int c = 0; c < N_CORES; c++) {
			unsigned int n = collect(tgt[c].tx[0], out, 64);

			for (unsigned int i = 0; i < n; i++) {
				uint64_t w =
					poll -
					sent_at[out[i].p.hdr.req_id - base];

				st->waited_max = RTE_MAX(st->waited_max, w);
				respond(c, &out[i]);
			}
			st->delivered += n;
		}
		got_up += drain(up.tx[0]);
		assert_int_equal(got_up, counter(TLB_DP_responses));
		if (exact)
			assert_int_equal(st->delivered,
					 counter(TLB_DP_steered));
		if (k != 0)
			check_bound_released(k);
		if (dp.fifo.tail != dp.fifo.head)
			st->fifo_polls++;
	}
	/* The uplink runs dry: what is left goes out, and is answered. */
	for (int round = 0; round < 64 && st->answered < st->sent; round++) {
		tlb_dp_poll(&dp);
		for (unsigned int c = 0; c < N_CORES; c++) {
			unsigned int n = collect(tgt[c].tx[0], out, 64);

			for (unsigned int i = 0; i < n; i++)
				respond(c, &out[i]);
			st->delivered += n;
		}
		got_up += drain(up.tx[0]);
		st->answered = got_up;
	}
	st->answered = got_up;
}

/* tx_hold_ns 0: with the uplink never empty and every burst full (two
 * requests a poll, a burst of 2, so that no buffer fills), every request
 * of every policy reaches its host core's queue in the poll that
 * received it, and every response the uplink in the poll that received
 * it. */
static void
test_hold_zero_same_poll(void **state)
{
	static const struct {
		const char *name;
		uint32_t k;
	} pols[] = {{"rss", 0}, {"rr", 0},  {"random", 0}, {"pod", 0},
		    {"jsq", 0}, {"jlq", 0}, {"jbsq", 1},   {"jbsq", 2}};
	struct steady st;

	(void)state;
	for (size_t i = 0; i < RTE_DIM(pols); i++) {
		cfg.datapath.tx_hold_ns = 0;
		cfg.datapath.burst = 2;
		start(pols[i].name, pols[i].k ? pols[i].k : 2,
		      TLB_CREDITS_INBAND, NULL);
		run_steady(&st, true, pols[i].k, 2);
		printf("%s k=%u: sent %lu delivered %lu answered %lu, polls "
		       "waited max %lu, polls with requests held %lu\n",
		       pols[i].name, pols[i].k, (unsigned long)st.sent,
		       (unsigned long)st.delivered, (unsigned long)st.answered,
		       (unsigned long)st.waited_max,
		       (unsigned long)st.fifo_polls);
		assert_int_equal(st.delivered, st.sent);
		assert_int_equal(st.answered, st.sent);
		assert_int_equal(counter(TLB_DP_drop_fifo_full), 0);
		/* The residence histogram counts every packet sent. */
		assert_int_equal(residence_count(),
				 counter(TLB_DP_steered) +
					 counter(TLB_DP_responses));
		/* Only jbsq may hold a request back: in its FIFO, while
		 * every core is at its bound. */
		if (pols[i].k == 0)
			assert_int_equal(st.waited_max, 0);
		tlb_dp_fini(&dp);
		memset(&dp, 0, sizeof(dp));
	}
}

/* jbsq with every uplink burst full (a burst of 4, 4 requests a poll), so
 * that buffers are held, and the longest hold, so that none leaves by its
 * deadline while the test runs: a request that brings its core to the
 * bound goes out in the poll that steered it, held requests leave the
 * FIFO in the poll whose response frees a core, and nothing is dropped.
 * With k = 2 the FIFO's 4 places fill every other poll. */
static void
test_jbsq_bound_sends_at_once(void **state)
{
	struct steady st;

	(void)state;
	for (uint32_t k = 1; k <= 2; k++) {
		cfg.datapath.burst = 4;
		cfg.datapath.tx_hold_ns = 1000000;
		start("jbsq", k, TLB_CREDITS_INBAND, NULL);
		run_steady(&st, false, k, 4);
		printf("jbsq k=%u: sent %lu delivered %lu answered %lu, polls "
		       "with requests held %lu, released %lu\n",
		       k, (unsigned long)st.sent, (unsigned long)st.delivered,
		       (unsigned long)st.answered, (unsigned long)st.fifo_polls,
		       (unsigned long)counter(TLB_DP_released));
		assert_true(counter(TLB_DP_released) > 0);
		assert_int_equal(st.delivered, st.sent);
		assert_int_equal(st.answered, st.sent);
		assert_int_equal(counter(TLB_DP_drop_fifo_full), 0);
		tlb_dp_fini(&dp);
		memset(&dp, 0, sizeof(dp));
	}
}

/* One poll with n requests on the uplink; returns the requests that
 * reached the host cores' rings, and checks that each response the
 * datapath received in that poll is on the uplink. */
static unsigned int
poll_with(unsigned int n)
{
	uint64_t responses = counter(TLB_DP_responses);
	unsigned int got = 0;

	for (unsigned int r = 0; r < n; r++)
		send_request(30000, 1000);
	tlb_dp_poll(&dp);
	for (int c = 0; c < N_CORES; c++)
		got += drain(tgt[c].tx[0]);
	assert_int_equal(drain(up.tx[0]),
			 counter(TLB_DP_responses) - responses);
	return got;
}

/* An lcore that keeps up (uplink bursts not full) sends everything at
 * the end of each poll; one that is behind (full bursts) holds a host
 * core's buffer until its deadline and sends it at the end of the first
 * poll past it, and sends responses at the end of each poll whatever it
 * holds. The test waits past tx_hold_ns (a bounded wait on the TSC, no
 * assertion on time). */
static void
test_hold_deadline_sends(void **state)
{
	struct out_pkt out[4];
	unsigned int got;

	(void)state;
	cfg.datapath.burst = 4;
	cfg.datapath.tx_hold_ns = 200000;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	/* Keeping up: one request, sent in its poll, and answered. */
	assert_int_equal(poll_with(1), 1);
	assert_int_equal(collect(tgt[0].tx[0], out, 4), 0);
	got = 0;
	/* Behind: full bursts; a buffer is held at least until its
	 * deadline. */
	got += poll_with(4);
	rte_delay_us_block(400);
	got += poll_with(4);
	/* The first full burst's buffers were due: they left, and the
	 * second burst's requests to the same cores with them. */
	assert_int_equal(got, 8);
}

/* Behind from a full uplink burst until one less than half full: a
 * backlog that drains in bursts of a few stops the holding at once, with
 * the buffers held till then sent in that poll; a burst of half or more
 * keeps it. With a burst of one, an empty poll ends it. */
static void
test_behind_ends_below_half_burst(void **state)
{
	struct out_pkt out[4];

	(void)state;
	cfg.datapath.burst = 4;
	cfg.datapath.tx_hold_ns = 1000000;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	/* Full: behind, all four held (the longest hold). */
	assert_int_equal(poll_with(4), 0);
	/* Half a burst: still behind. */
	assert_int_equal(poll_with(2), 0);
	/* Under half: keeping up again, everything leaves. */
	assert_int_equal(poll_with(1), 7);
	tlb_dp_fini(&dp);
	memset(&dp, 0, sizeof(dp));
	/* A burst of one: full with one request (behind, though a full
	 * buffer of one leaves at once), under half with none. Keeping up
	 * again, the lcore polls every host core's queue, and the answer
	 * goes out in that poll. */
	cfg.datapath.burst = 1;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	assert_int_equal(poll_with(1), 1);
	assert_int_equal(tlb_lv_outstanding(dp.lv, 0), 1);
	send_request(30000, 1000);
	tlb_dp_poll(&dp);
	assert_int_equal(collect(tgt[0].tx[0], out, 4), 0);
	assert_int_equal(collect(tgt[1].tx[0], out, 4), 1);
	respond(1, &out[0]);
	poll_with(0);
	assert_int_equal(counter(TLB_DP_responses), 1);
}

/* An lcore that keeps up polls every host core's queue in every poll: a
 * response reaches the uplink in the first poll after it arrived, though
 * requests keep coming (one a poll). */
static void
test_response_next_poll_when_keeping_up(void **state)
{
	struct out_pkt out[4];
	unsigned int n = 0;

	(void)state;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	send_request(30000, 1000);
	tlb_dp_poll(&dp);
	for (int c = 0; c < N_CORES && n == 0; c++)
		if ((n = collect(tgt[c].tx[0], out, 4)) != 0)
			respond((unsigned int)c, &out[0]);
	assert_int_equal(n, 1);
	poll_with(1);
	assert_int_equal(counter(TLB_DP_responses), 1);
}

/* A response received while the lcore is behind reaches the uplink in
 * the poll that received it (poll_with() checks it after every poll). */
static void
test_response_not_held(void **state)
{
	struct out_pkt out[4];
	unsigned int n = 0;

	(void)state;
	cfg.datapath.burst = 4;
	cfg.datapath.tx_hold_ns = 1000000;
	start("rr", 2, TLB_CREDITS_INBAND, NULL);
	/* Keeping up: the request leaves in its poll, and is answered. */
	send_request(30000, 1000);
	tlb_dp_poll(&dp);
	for (int c = 0; c < N_CORES && n == 0; c++)
		if ((n = collect(tgt[c].tx[0], out, 4)) != 0)
			respond((unsigned int)c, &out[0]);
	assert_int_equal(n, 1);
	/* Behind from now on; every target queue is polled within
	 * TLB_DP_TARGET_ROUND polls, and the response goes out in that
	 * poll, whatever the hold. */
	for (int p = 0; p < 4; p++)
		poll_with(4);
	assert_int_equal(counter(TLB_DP_responses), 1);
}

/* ---- dns, memcached and udp ports (docs/protocol.md, "Protocols") ---- */

#define DNS_PORT 53
#define MC_PORT  11211
#define UDP_PORT 7000

static const uint8_t cli_ip[4] = {10, 0, 0, 1}, srv_ip[4] = {10, 0, 0, 2};

/* Starts the dispatcher with a dns, a memcached and a udp port besides
 * the turbolb one; teardown_protocols() puts the turbolb one back alone. */
static void
start_protocols(const char *policy)
{
	cfg.rpc.udp_ports[1] = DNS_PORT;
	cfg.rpc.port_proto[1] = TLB_PROTO_DNS;
	cfg.rpc.udp_ports[2] = MC_PORT;
	cfg.rpc.port_proto[2] = TLB_PROTO_MEMCACHED;
	cfg.rpc.udp_ports[3] = UDP_PORT;
	cfg.rpc.port_proto[3] = TLB_PROTO_UDP;
	cfg.rpc.n_udp_ports = 4;
	start(policy, 2, TLB_CREDITS_INBAND, NULL);
}

static int
teardown_protocols(void **state)
{
	cfg.rpc.n_udp_ports = 1;
	cfg.host.write_off_us = 100000;
	return teardown_dp(state);
}

/* Ethernet, IPv4, UDP and payload, checksums 0 (the datapath does not
 * check them). */
static size_t
raw_frame(uint8_t *f, const uint8_t src[4], const uint8_t dst[4],
	  uint16_t sport, uint16_t dport, const void *payload, size_t plen)
{
	memset(f, 0, 42);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (uint8_t)((20 + 8 + plen) >> 8);
	f[17] = (uint8_t)(20 + 8 + plen);
	f[22] = 64;
	f[23] = 17;
	memcpy(f + 26, src, 4);
	memcpy(f + 30, dst, 4);
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	f[38] = (uint8_t)((8 + plen) >> 8);
	f[39] = (uint8_t)(8 + plen);
	memcpy(f + 42, payload, plen);
	return 42 + plen;
}

/* A DNS query (from the client) or response (from a core) with id. */
static size_t
dns_frame(uint8_t *f, uint16_t id, bool response, uint16_t cport)
{
	uint8_t m[21] = {(uint8_t)(id >> 8),
			 (uint8_t)id,
			 response ? 0x81 : 0x01,
			 response ? 0x80 : 0x00,
			 0,
			 1,
			 [12] = 3,
			 'w',
			 'w',
			 'w',
			 0,
			 0,
			 1,
			 0,
			 1};

	return response ? raw_frame(f, srv_ip, cli_ip, DNS_PORT, cport, m,
				    sizeof(m))
			: raw_frame(f, cli_ip, srv_ip, cport, DNS_PORT, m,
				    sizeof(m));
}

/* A memcached datagram: id, seq, total, then text. */
static size_t
mc_frame(uint8_t *f, uint16_t id, uint16_t seq, uint16_t total,
	 const char *text, bool response, uint16_t cport)
{
	uint8_t m[512] = {(uint8_t)(id >> 8),    (uint8_t)id,
			  (uint8_t)(seq >> 8),   (uint8_t)seq,
			  (uint8_t)(total >> 8), (uint8_t)total};
	size_t n = strlen(text);

	memcpy(m + 8, text, n);
	return response
		       ? raw_frame(f, srv_ip, cli_ip, MC_PORT, cport, m, 8 + n)
		       : raw_frame(f, cli_ip, srv_ip, cport, MC_PORT, m, 8 + n);
}

/* The core that got the one frame sent to the cores, or -1. */
static int
core_of_one(void)
{
	struct out_pkt out[4];
	int got = -1;

	for (int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], out, 4);

		if (n == 1 && got < 0)
			got = c;
		else
			assert_int_equal(n, 0);
	}
	return got;
}

static void
reply(unsigned int core, const uint8_t *f, size_t len)
{
	inject(tgt[core].rx[0], f, len);
}

static void
assert_idle_view(void)
{
	for (unsigned int c = 0; c < N_CORES; c++) {
		assert_int_equal(tlb_lv_outstanding(dp.lv, c), 0);
		assert_int_equal(tlb_lv_outstanding_work(dp.lv, c), 0);
	}
}

/* DNS queries go to the policy's cores, each answer completes its query
 * at the core it went to with the work it was charged, and a second
 * answer to the same id is a follow-up, not a completion. */
static void
test_dns_request_completes(void **state)
{
	uint8_t f[256];
	int core[N_CORES];
	size_t n;

	(void)state;
	start_protocols("rr");
	for (int i = 0; i < N_CORES; i++) {
		inject(up.rx[0], f,
		       dns_frame(f, (uint16_t)(100 + i), false, 41000));
		pump();
		core[i] = core_of_one();
		assert_true(core[i] >= 0);
		assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)core[i]),
				 1);
		assert_true(tlb_lv_outstanding_work(dp.lv, (uint32_t)core[i]) >
			    0);
	}
	assert_int_equal(counter(TLB_DP_messages), N_CORES);
	for (int i = 0; i < N_CORES; i++) {
		n = dns_frame(f, (uint16_t)(100 + i), true, 41000);
		reply((unsigned int)core[i], f, n);
	}
	pump();
	assert_idle_view();
	assert_int_equal(counter(TLB_DP_completions_inband), N_CORES);
	assert_int_equal(drain(up.tx[0]), N_CORES);
	/* the same answer again */
	reply((unsigned int)core[0], f, dns_frame(f, 100, true, 41000));
	pump();
	assert_int_equal(counter(TLB_DP_completions_inband), N_CORES);
	assert_int_equal(counter(TLB_DP_response_followups), 1);
	assert_int_equal(counter(TLB_DP_completions_extra), 0);
	assert_int_equal(counter(TLB_DP_responses), N_CORES + 1);
	assert_idle_view();
	/* a response on the uplink, a query from a core: wrong direction */
	inject(up.rx[0], f, dns_frame(f, 1, true, 41000));
	reply(0, f, dns_frame(f, 1, false, 41000));
	pump();
	assert_int_equal(counter(TLB_DP_drop_bad_direction), 2);
	/* too short: a counted parse error */
	inject(up.rx[0], f,
	       raw_frame(f, cli_ip, srv_ip, 41000, DNS_PORT, "ab", 2));
	pump();
	assert_int_equal(dp.stats.drop_parse[TLB_PARSE_TRUNC_MSG], 1);
}

/* A memcached get answered in several datagrams (seq 0..2 of 3, then a
 * header-only total-0 datagram) is one completion; so is a multi-key get
 * answered with one response per key. */
static void
test_memcached_multi_datagram_once(void **state)
{
	uint8_t f[600];
	int c1, c2;

	(void)state;
	start_protocols("jsq");
	inject(up.rx[0], f, mc_frame(f, 7, 0, 1, "get big\r\n", false, 42000));
	pump();
	c1 = core_of_one();
	assert_true(c1 >= 0);
	inject(up.rx[0], f, mc_frame(f, 8, 0, 1, "get a b\r\n", false, 42000));
	pump();
	c2 = core_of_one();
	assert_true(c2 >= 0 && c2 != c1);
	/* the datagrams of the big value, the last one first */
	reply((unsigned int)c1, f,
	      mc_frame(f, 7, 2, 3, "\r\nEND\r\n", true, 42000));
	pump();
	assert_int_equal(tlb_lv_outstanding(dp.lv, (uint32_t)c1), 0);
	reply((unsigned int)c1, f,
	      mc_frame(f, 7, 0, 3, "VALUE big 0 3000\r\n", true, 42000));
	reply((unsigned int)c1, f, mc_frame(f, 7, 1, 3, "xxxx", true, 42000));
	reply((unsigned int)c1, f, mc_frame(f, 7, 0, 0, "", true, 42000));
	/* one response per key */
	reply((unsigned int)c2, f,
	      mc_frame(f, 8, 0, 1, "VALUE a 0 1\r\n1\r\n", true, 42000));
	reply((unsigned int)c2, f,
	      mc_frame(f, 8, 0, 1, "VALUE b 0 1\r\n2\r\nEND\r\n", true, 42000));
	pump();
	assert_idle_view();
	assert_int_equal(counter(TLB_DP_completions_inband), 2);
	assert_int_equal(counter(TLB_DP_response_followups), 4);
	assert_int_equal(counter(TLB_DP_responses), 6);
	assert_int_equal(drain(up.tx[0]), 6);
	assert_int_equal(counter(TLB_DP_completions_extra), 0);
	/* a request of two datagrams is malformed */
	inject(up.rx[0], f, mc_frame(f, 9, 0, 2, "get c\r\n", false, 42000));
	pump();
	assert_int_equal(dp.stats.drop_parse[TLB_PARSE_BAD_PKT_COUNT], 1);
}

/* noreply: steered, never charged, so nothing waits for its answer. */
static void
test_memcached_noreply_uncharged(void **state)
{
	uint8_t f[256];

	(void)state;
	start_protocols("jsq");
	inject(up.rx[0], f,
	       mc_frame(f, 11, 0, 1, "set k 0 0 1 noreply\r\nx\r\n", false,
			42000));
	pump();
	assert_true(core_of_one() >= 0);
	assert_int_equal(counter(TLB_DP_oneway), 1);
	assert_int_equal(counter(TLB_DP_steered), 1);
	assert_int_equal(counter(TLB_DP_messages), 0);
	assert_idle_view();
}

/* A query never answered leaves the view after host.write_off_us, at a
 * core that keeps answering others; its late answer is no completion. A
 * query whose id the client reuses before the answer is taken out too. */
static void
test_unanswered_written_off(void **state)
{
	uint8_t f[256];
	int core, polls;

	(void)state;
	cfg.host.write_off_us = 2000;
	start_protocols("rr");
	inject(up.rx[0], f, dns_frame(f, 500, false, 43000));
	pump();
	core = core_of_one();
	assert_true(core >= 0);
	for (polls = 0; polls < 100000 && counter(TLB_DP_unanswered) == 0;
	     polls++) {
		rte_delay_us_block(100);
		tlb_dp_poll(&dp);
	}
	assert_int_equal(counter(TLB_DP_unanswered), 1);
	assert_idle_view();
	assert_int_equal(counter(TLB_DP_written_off), 0);
	reply((unsigned int)core, f, dns_frame(f, 500, true, 43000));
	pump();
	assert_int_equal(counter(TLB_DP_response_followups), 1);
	assert_int_equal(counter(TLB_DP_completions_inband), 0);
	/* id 600 twice before its answer: the first one leaves the view */
	inject(up.rx[0], f, dns_frame(f, 600, false, 43000));
	inject(up.rx[0], f, dns_frame(f, 600, false, 43000));
	pump();
	assert_int_equal(counter(TLB_DP_request_ids_full), 1);
	for (int c = 0; c < N_CORES; c++)
		drain(tgt[c].tx[0]);
	reply((unsigned int)core, f, dns_frame(f, 600, true, 43000));
	pump();
	assert_idle_view();
	assert_int_equal(counter(TLB_DP_completions_inband), 1);
}

/* udp: every datagram back from a core completes one request there. */
static void
test_udp_each_datagram(void **state)
{
	uint8_t f[128];
	int core[2];

	(void)state;
	start_protocols("rr");
	for (int i = 0; i < 2; i++) {
		inject(up.rx[0], f,
		       raw_frame(f, cli_ip, srv_ip, 44000, UDP_PORT, "ping",
				 4));
		pump();
		core[i] = core_of_one();
		assert_true(core[i] >= 0);
	}
	assert_true(core[0] != core[1]);
	for (int i = 0; i < 2; i++)
		reply((unsigned int)core[i], f,
		      raw_frame(f, srv_ip, cli_ip, UDP_PORT, 44000, "pong", 4));
	pump();
	assert_idle_view();
	assert_int_equal(counter(TLB_DP_completions_inband), 2);
	assert_int_equal(drain(up.tx[0]), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_dns_request_completes,
					  teardown_protocols),
		cmocka_unit_test_teardown(test_memcached_multi_datagram_once,
					  teardown_protocols),
		cmocka_unit_test_teardown(test_memcached_noreply_uncharged,
					  teardown_protocols),
		cmocka_unit_test_teardown(test_unanswered_written_off,
					  teardown_protocols),
		cmocka_unit_test_teardown(test_udp_each_datagram,
					  teardown_protocols),
		cmocka_unit_test_teardown(test_rss_flow_sticks, teardown_dp),
		cmocka_unit_test_teardown(test_jsq_least_outstanding,
					  teardown_dp),
		cmocka_unit_test_teardown(test_work_stamped_checksum_valid,
					  teardown_dp),
		cmocka_unit_test_teardown(test_other_layouts_general_path,
					  teardown_dp),
		cmocka_unit_test_teardown(test_multi_segment_frames,
					  teardown_dp),
		cmocka_unit_test_teardown(test_jbsq_holds_and_releases_in_order,
					  teardown_dp),
		cmocka_unit_test_teardown(test_jbsq_release_keeps_work,
					  teardown_dp),
		cmocka_unit_test_teardown(test_held_to_flow_policy,
					  teardown_dp),
		cmocka_unit_test_teardown(test_multi_packet_stays_together,
					  teardown_dp),
		cmocka_unit_test_teardown(test_unfinished_messages_released,
					  teardown_dp),
		cmocka_unit_test_teardown(
			test_continuation_of_lost_core_dropped, teardown_dp),
		cmocka_unit_test_teardown(test_responses_gathered_across_queues,
					  teardown_dp),
		cmocka_unit_test_teardown(test_probe_message_stays_whole,
					  teardown_dp),
		cmocka_unit_test_teardown(test_response_attributed_by_queue,
					  teardown_dp),
		cmocka_unit_test_teardown(test_pass_through_untouched,
					  teardown_dp),
		cmocka_unit_test_teardown(test_malformed_counted, teardown_dp),
		cmocka_unit_test_teardown(test_credit_ring, teardown_dp),
		cmocka_unit_test_teardown(test_credit_ring_fallback_gap,
					  teardown_dp),
		cmocka_unit_test_teardown(test_transport_none, teardown_dp),
		cmocka_unit_test_teardown(test_stale_core_skipped, teardown_dp),
		cmocka_unit_test_teardown(test_stale_core_written_off_and_back,
					  teardown_dp),
		cmocka_unit_test_teardown(test_policy_switch_at_loop_boundary,
					  teardown_dp),
		cmocka_unit_test_teardown(test_policy_switch_jlq, teardown_dp),
		cmocka_unit_test_teardown(test_kick_parked_core, teardown_dp),
		cmocka_unit_test_teardown(test_tx_full_uncharges_refused,
					  teardown_dp),
		cmocka_unit_test_teardown(test_hold_zero_same_poll,
					  teardown_dp),
		cmocka_unit_test_teardown(test_jbsq_bound_sends_at_once,
					  teardown_dp),
		cmocka_unit_test_teardown(test_hold_deadline_sends,
					  teardown_dp),
		cmocka_unit_test_teardown(test_response_not_held, teardown_dp),
		cmocka_unit_test_teardown(test_behind_ends_below_half_burst,
					  teardown_dp),
		cmocka_unit_test_teardown(
			test_response_next_poll_when_keeping_up, teardown_dp),
		cmocka_unit_test_teardown(test_restart_with_buffered_request,
					  teardown_dp),
	};

	return cmocka_run_group_tests_name("datapath_ring", tests, group_setup,
					   group_teardown);
}
