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

#define RPC_PORT 9000
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
struct tlb_frame_addrs client(uint16_t sport);
struct tlb_rpc_hdr request_hdr(uint64_t id, uint32_t hint_ns);
struct rte_mbuf *mbuf_of(struct rte_mempool *pool, const void *frame,
			 size_t len);
/* Takes up to max frames the datapath sent on r, parsed. */
unsigned int collect(struct rte_ring *r, struct out_pkt *out,
		     unsigned int max);
/* Frees whatever waits on r; returns how many. */
unsigned int drain(struct rte_ring *r);

#endif
