/* SPDX-License-Identifier: BSD-3-Clause
 * Shared pieces of the in-process datapath tests: net_ring ports the test
 * feeds and drains, and crafted RPC frames.
 */
#ifndef TURBOLB_TEST_HARNESS_H
#define TURBOLB_TEST_HARNESS_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "turbolb/proto.h"

#define RPC_PORT        9000
#define MAX_RING_QUEUES 4

/* A net_ring port named net_ring_<name> with n queues. */
struct ring_port {
	struct rte_ring *rx[MAX_RING_QUEUES]; /* the test enqueues */
	struct rte_ring *tx[MAX_RING_QUEUES]; /* the test dequeues */
};

struct out_pkt {
	struct tlb_parsed p;
	uint8_t frame[2048];
	uint16_t len;
};

void make_port(const char *name, struct ring_port *p, unsigned int n);
/* A request's addresses from client port sport to the RPC port
 * (frame_addrs_v4: 10.0.0.1 to 10.0.0.2). */
struct tlb_frame_addrs client(uint16_t sport);
struct rte_mbuf *mbuf_of(struct rte_mempool *pool, const void *frame,
			 size_t len);
/* The response a host core makes of req, as turbolb-server does: in an
 * mbuf of pool, saying it was served by server_core in service_ns. */
struct rte_mbuf *response_mbuf(struct rte_mempool *pool,
			       const struct out_pkt *req, uint16_t server_core,
			       uint32_t service_ns);
/* Takes up to max frames the datapath sent on r, parsed. */
unsigned int collect(struct rte_ring *r, struct out_pkt *out, unsigned int max);
/* Frees whatever waits on r; returns how many. */
unsigned int drain(struct rte_ring *r);

#endif
