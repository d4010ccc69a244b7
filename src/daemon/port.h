/* SPDX-License-Identifier: BSD-3-Clause
 * Ports: resolve the config's port names, size the mbuf pool, configure
 * and start every port with the queues the config refers to.
 */
#ifndef TURBOLBD_PORT_H
#define TURBOLBD_PORT_H

#include <stdint.h>

#include <rte_mempool.h>

#include "turbolb/config.h"

/* The daemon's one mbuf pool (telemetry looks it up by this name). */
#define TLB_MBUF_POOL "tlb_mbufs"

/* Resolves a DPDK device name (or a decimal port id) to a port id.
 * Returns 0, or -1 if there is no such port. */
int tlb_port_lookup(const char *name, uint16_t *port_id);

/* Configures and starts every port the config names, with one mbuf pool
 * sized for all rings, the FIFO and the TX buffers. Returns 0, or -1 with
 * a message logged. */
int tlb_ports_setup(const struct tlb_config *cfg, struct rte_mempool **pool);

/* Stops and closes what tlb_ports_setup started. */
void tlb_ports_teardown(void);

#endif /* TURBOLBD_PORT_H */
