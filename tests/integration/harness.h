/* SPDX-License-Identifier: BSD-3-Clause
 * Shared pieces of the in-process datapath tests: net_ring ports the test
 * feeds and drains, crafted RPC frames, and dispatchers running for real
 * on their own lcores.
 */
#ifndef TURBOLB_TEST_HARNESS_H
#define TURBOLB_TEST_HARNESS_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "turbolb/config.h"
#include "turbolb/proto.h"
#include "dp.h"

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

/* ---- dispatchers on their own lcores ---- */

/* As many as eal_init_dps() gives lcores. */
#define MAX_DPS 2

/* The EAL of a test whose own thread, on lcore 0 (CPU 0), plays the
 * clients and the host while up to MAX_DPS dispatchers run on lcores 1
 * (CPU 0) and 2 (CPU 1): no huge pages (256 MB), no PCI, no shared
 * config, the libraries' logs at error. extra: more EAL arguments
 * (--vdev=...), NULL-terminated, or NULL. 0, or -1 if the EAL did not
 * start. */
int eal_init_dps(const char *prog, char *const extra[]);

/* A config and its dispatchers, dp[d] on lcore datapath.lcores[d] in
 * tlb_dp_main(). Zeroed before dp_set_load() (a static one is). */
struct dp_set {
	struct tlb_config cfg;
	struct rte_mempool *pool; /* the ports' mbufs (tlb_ports_setup()) */
	struct tlb_dp dp[MAX_DPS];
};

/* Loads yaml, as file name in messages, and sets up its ports. 0, or
 * -1 with the reason on stderr. */
int dp_set_load(struct dp_set *s, const char *name, const char *yaml);
/* Starts one dispatcher on each of datapath.lcores (at most MAX_DPS),
 * each in tlb_dps[]. 0, or -1 with the reason on stderr. dp_set_free()
 * undoes it and dp_set_load(), failed or not. */
int dp_set_start(struct dp_set *s);
/* Has every dispatcher quit and waits until they have, after which
 * their counters no longer move. Again is harmless. */
void dp_set_stop(void);
/* dp_set_stop(), then frees the dispatchers, the ports and the config
 * (not the EAL). */
void dp_set_free(struct dp_set *s);

#endif
