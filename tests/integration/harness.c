/* SPDX-License-Identifier: BSD-3-Clause
 * Shared pieces of the in-process datapath tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <rte_eth_ring.h>
#include <rte_ethdev.h>

#include "harness.h"

void
make_port(const char *name, struct ring_port *p, unsigned int n)
{
	char rn[64];

	assert_true(n >= 1 && n <= MAX_RING_QUEUES);
	for (unsigned int q = 0; q < n; q++) {
		snprintf(rn, sizeof(rn), "%s_rx%u", name, q);
		p->rx[q] = rte_ring_create(rn, 1024, 0,
					   RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(rn, sizeof(rn), "%s_tx%u", name, q);
		p->tx[q] = rte_ring_create(rn, 1024, 0,
					   RING_F_SP_ENQ | RING_F_SC_DEQ);
		assert_non_null(p->rx[q]);
		assert_non_null(p->tx[q]);
	}
	assert_true(rte_eth_from_rings(name, p->rx, n, p->tx, n, 0) >= 0);
}

struct tlb_frame_addrs
client(uint16_t sport)
{
	struct tlb_frame_addrs a;

	memset(&a, 0, sizeof(a));
	memcpy(a.src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(a.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	a.key.ip_version = 4;
	a.key.proto = 17;
	memcpy(a.key.src_addr, "\x0a\x00\x00\x01", 4);
	memcpy(a.key.dst_addr, "\x0a\x00\x00\x02", 4);
	a.key.src_port = sport;
	a.key.dst_port = RPC_PORT;
	return a;
}

struct tlb_rpc_hdr
request_hdr(uint64_t id, uint32_t hint_ns)
{
	struct tlb_rpc_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = TLB_RPC_MAGIC;
	h.version = TLB_RPC_VERSION;
	h.type = TLB_MSG_REQUEST;
	h.req_id = id;
	h.pkt_cnt = 1;
	if (hint_ns) {
		h.flags = TLB_RPC_F_HINT;
		h.svc_hint_ns = hint_ns;
	}
	return h;
}

struct rte_mbuf *
mbuf_of(struct rte_mempool *pool, const void *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
	return m;
}

unsigned int
collect(struct rte_ring *r, struct out_pkt *out, unsigned int max)
{
	struct tlb_parse_opts opts = { .udp_ports = { RPC_PORT },
				       .n_udp_ports = 1 };
	struct rte_mbuf *m;
	unsigned int n = 0;

	while (n < max && rte_ring_dequeue(r, (void **)&m) == 0) {
		out[n].len = rte_pktmbuf_data_len(m);
		memcpy(out[n].frame, rte_pktmbuf_mtod(m, void *), out[n].len);
		memset(&out[n].p, 0, sizeof(out[n].p));
		tlb_parse_frame(out[n].frame, out[n].len, &opts, &out[n].p);
		rte_pktmbuf_free(m);
		n++;
	}
	return n;
}

unsigned int
drain(struct rte_ring *r)
{
	struct out_pkt tmp[64];
	unsigned int n, total = 0;

	while ((n = collect(r, tmp, 64)) != 0)
		total += n;
	return total;
}

