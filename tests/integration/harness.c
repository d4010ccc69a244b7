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
	static const uint8_t cli_ip[4] = {10, 0, 0, 1};
	static const uint8_t srv_ip[4] = {10, 0, 0, 2};

	return tlb_frame_addrs_v4(cli_ip, srv_ip, sport, RPC_PORT);
}

struct rte_mbuf *
mbuf_of(struct rte_mempool *pool, const void *frame, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), frame, len);
	return m;
}

struct rte_mbuf *
response_mbuf(struct rte_mempool *pool, const struct out_pkt *req,
	      uint16_t server_core, uint32_t service_ns)
{
	uint8_t f[sizeof(req->frame)];
	size_t len;

	memcpy(f, req->frame, req->len);
	len = tlb_make_response(f, req->len, &req->p, TLB_MSG_RESPONSE, 0,
				server_core, service_ns, 0);
	assert_true(len > 0);
	return mbuf_of(pool, f, len);
}

unsigned int
collect(struct rte_ring *r, struct out_pkt *out, unsigned int max)
{
	struct tlb_parse_opts opts = {.udp_ports = {RPC_PORT},
				      .n_udp_ports = 1};
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
