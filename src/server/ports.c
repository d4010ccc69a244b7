/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's ports: which port and queue each logical core polls
 * (one port with a queue per core, or with --port-per-core a port per
 * core), their set-up with the one mbuf pool, and the main lcore's watch
 * that restarts a memif port whose peer went away.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "server.h"

struct srv_port *ports;
uint32_t n_ports;
struct rte_mempool *pool;

static void
list_ports(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;

	SRV_LOG(ERR, "ports are:");
	RTE_ETH_FOREACH_DEV(pid)
	{
		if (rte_eth_dev_get_name_by_port(pid, name) == 0)
			SRV_LOG(ERR, "  %u: %s", pid, name);
	}
}

/* A --port reference: a device name or else a port number. */
static int
port_by_name(const char *name, uint16_t *pid)
{
	if (cli_port_resolve(name, rte_eth_dev_get_port_by_name,
			     rte_eth_dev_is_valid_port, pid) == 0)
		return 0;
	SRV_LOG(ERR, "--port: no port named '%s'", name);
	list_ports();
	return -1;
}

/* The ports, and which core polls which (port, queue): one port with a
 * queue per core, or with --port-per-core a port per core (queue 0). */
int
find_ports(void)
{
	uint32_t avail = rte_eth_dev_count_avail();
	uint16_t pid;

	if (avail == 0) {
		SRV_LOG(ERR, "no ethdev port: give one in the EAL args, e.g. "
			     "--vdev=net_memif0,role=client,socket=/run/"
			     "turbolb/host.sock,socket-abstract=no");
		return -1;
	}
	n_ports = conf.port_per_core ? conf.n_cores : 1;
	if (conf.port_per_core && conf.n_port_names != 0 &&
	    conf.n_port_names != conf.n_cores) {
		SRV_LOG(ERR,
			"--port-per-core: --port given %u times for --cores "
			"%u: name one port per core, or none for the first %u "
			"ports",
			conf.n_port_names, conf.n_cores, conf.n_cores);
		return -1;
	}
	if (conf.n_port_names == 0 && avail < n_ports) {
		SRV_LOG(ERR,
			"--port-per-core: --cores %u needs %u ports, the EAL "
			"has %u (one --vdev, or one VF on the allow list, per "
			"core)",
			conf.n_cores, n_ports, avail);
		list_ports();
		return -1;
	}
	ports = calloc(n_ports, sizeof(*ports));
	if (ports == NULL) {
		SRV_LOG(ERR, "out of memory for %u ports", n_ports);
		return -1;
	}
	if (conf.n_port_names == 0) {
		uint32_t i = 0;

		RTE_ETH_FOREACH_DEV(pid)
		{
			if (i == n_ports)
				break;
			ports[i++].id = pid;
		}
	} else {
		for (uint32_t i = 0; i < n_ports; i++)
			if (port_by_name(conf.port_names[i], &ports[i].id) < 0)
				return -1;
	}
	for (uint32_t i = 0; i < n_ports; i++) {
		struct srv_port *p = &ports[i];

		if (rte_eth_dev_get_name_by_port(p->id, p->name) != 0)
			snprintf(p->name, sizeof(p->name), "%u", p->id);
		for (uint32_t j = 0; j < i; j++) {
			if (ports[j].id == p->id) {
				SRV_LOG(ERR,
					"--port: %s named twice: each core "
					"needs a port of its own",
					p->name);
				return -1;
			}
		}
		p->n_queues = conf.port_per_core ? 1 : (uint16_t)conf.n_cores;
		p->last_link = -1;
	}
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		cores[i].port = &ports[conf.port_per_core ? i : 0];
		cores[i].queue = conf.port_per_core ? 0 : (uint16_t)i;
	}
	return 0;
}

/* Configures a port and settles its descriptor counts; its queues are set
 * up once the pool, sized for every port, exists. */
static int
port_configure(struct srv_port *p)
{
	struct rte_eth_conf pconf;
	struct rte_eth_dev_info info;
	int rc;

	rc = rte_eth_dev_info_get(p->id, &info);
	if (rc != 0) {
		SRV_LOG(ERR, "port %s: cannot get device info: %s", p->name,
			rte_strerror(-rc));
		return -1;
	}
	p->reconnects = info.driver_name != NULL &&
			strcmp(info.driver_name, "net_memif") == 0;
	if (info.max_rx_queues < p->n_queues ||
	    info.max_tx_queues < p->n_queues) {
		SRV_LOG(ERR,
			"port %s: --cores %u needs %u RX and TX queues, the "
			"port has at most %u RX and %u TX (one port per core: "
			"--port-per-core)",
			p->name, conf.n_cores, p->n_queues, info.max_rx_queues,
			info.max_tx_queues);
		return -1;
	}
	/* No RSS: each core's queue is a target of its own (the daemon
	 * picks the queue), so the port must not spread on its own. */
	memset(&pconf, 0, sizeof(pconf));
	rc = rte_eth_dev_configure(p->id, p->n_queues, p->n_queues, &pconf);
	if (rc != 0) {
		SRV_LOG(ERR, "port %s: configure %u queues: %s", p->name,
			p->n_queues, rte_strerror(-rc));
		return -1;
	}
	p->configured = true;
	p->nb_rxd = NB_RXD;
	p->nb_txd = NB_TXD;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &p->nb_rxd, &p->nb_txd);
	if (rc != 0) {
		SRV_LOG(ERR, "port %s: descriptor counts: %s", p->name,
			rte_strerror(-rc));
		return -1;
	}
	return 0;
}

static int
port_start(struct srv_port *p, int socket)
{
	int rc;

	for (uint16_t q = 0; q < p->n_queues; q++) {
		rc = rte_eth_rx_queue_setup(p->id, q, p->nb_rxd,
					    (unsigned int)socket, NULL, pool);
		if (rc != 0) {
			SRV_LOG(ERR, "port %s: RX queue %u: %s", p->name, q,
				rte_strerror(-rc));
			return -1;
		}
		rc = rte_eth_tx_queue_setup(p->id, q, p->nb_txd,
					    (unsigned int)socket, NULL);
		if (rc != 0) {
			SRV_LOG(ERR, "port %s: TX queue %u: %s", p->name, q,
				rte_strerror(-rc));
			return -1;
		}
	}
	/* A memif client cannot start before its peer listens: wait for
	 * turbolbd rather than make the start order matter. */
	for (unsigned int tries = 0;; tries++) {
		rc = rte_eth_dev_start(p->id);
		if (rc == 0)
			break;
		if (force_quit)
			return -1;
		if (tries % 100 == 0)
			SRV_LOG(WARNING,
				"port %s: start: %s; retrying every 100 ms "
				"until a signal (is its peer up?)",
				p->name, rte_strerror(-rc));
		rte_delay_us_sleep(100 * 1000);
	}
	p->state = PORT_RUNNING;
	/* Virtual ports often have no notion of it; that is fine. */
	rc = rte_eth_promiscuous_enable(p->id);
	if (rc != 0 && rc != -ENOTSUP)
		SRV_LOG(WARNING, "port %s: promiscuous mode: %s", p->name,
			rte_strerror(-rc));
	SRV_LOG(INFO,
		"port %s (id %u): %u RX/TX queue pair%s, %u/%u descriptors",
		p->name, p->id, p->n_queues, p->n_queues == 1 ? "" : "s",
		p->nb_rxd, p->nb_txd);
	return 0;
}

int
ports_setup(void)
{
	unsigned int n_mbufs = 1024u;
	int socket;

	for (uint32_t i = 0; i < n_ports; i++) {
		struct srv_port *p = &ports[i];

		if (port_configure(p) < 0)
			return -1;
		/* Every queue's rings full, a burst in flight on each core
		 * and the per-lcore caches, with room to spare. */
		n_mbufs += p->n_queues *
			   (p->nb_rxd + p->nb_txd + 2u * BURST + POOL_CACHE);
	}
	/* Emulated cores hold their requests' frames until the responses
	 * leave. */
	if (conf.mode == MODE_EMULATE)
		n_mbufs += conf.n_cores * conf.emu_depth;
	n_mbufs = RTE_MAX(n_mbufs, 8191u);
	socket = rte_eth_dev_socket_id(ports[0].id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	pool = rte_pktmbuf_pool_create("srv_mbufs", n_mbufs, POOL_CACHE, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (pool == NULL) {
		SRV_LOG(ERR,
			"cannot create a pool of %u mbufs: %s (give the EAL "
			"more memory with -m)",
			n_mbufs, rte_strerror(rte_errno));
		return -1;
	}
	SRV_LOG(INFO, "%u port%s, %u mbufs", n_ports, n_ports == 1 ? "" : "s",
		n_mbufs);
	for (uint32_t i = 0; i < n_ports; i++)
		if (port_start(&ports[i], socket) < 0)
			return -1;
	return 0;
}

void
ports_close(void)
{
	for (uint32_t i = 0; ports != NULL && i < n_ports; i++) {
		struct srv_port *p = &ports[i];

		if (!p->configured)
			continue;
		if (p->state != PORT_STOPPED)
			rte_eth_dev_stop(p->id);
		rte_eth_dev_close(p->id);
	}
	free(ports);
	ports = NULL;
}

static bool
all_paused(const struct srv_port *p)
{
	for (uint32_t i = 0; i < conf.n_cores; i++)
		if (cores[i].port == p &&
		    !__atomic_load_n(&cores[i].paused, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* A port. A memif client whose peer went away stays down (DPDK 22.11
 * does not reconnect it), so when the link drops the cores on that port
 * are paused, the port is stopped and then started again until the peer
 * is back. A port may be stopped and started only while no lcore polls
 * it. Other ports only have their link changes logged. */
void
port_watch(struct srv_port *p)
{
	struct rte_eth_link link;
	bool went_down;
	int rc;

	switch (p->state) {
	case PORT_RUNNING:
		if (rte_eth_link_get_nowait(p->id, &link) != 0)
			return;
		if (link.link_status == RTE_ETH_LINK_UP) {
			if (p->last_link != RTE_ETH_LINK_UP)
				SRV_LOG(NOTICE, "port %s: link up", p->name);
			p->last_link = RTE_ETH_LINK_UP;
			p->down_ticks = 0;
			return;
		}
		went_down = p->last_link == RTE_ETH_LINK_UP;
		if (went_down)
			SRV_LOG(WARNING, "port %s: link down (peer gone?)%s",
				p->name,
				p->reconnects
					? ": pausing its cores to reconnect"
					: "");
		p->last_link = RTE_ETH_LINK_DOWN;
		if (!p->reconnects)
			return;
		/* Down since the last start as well: a memif peer that was
		 * still starting may have refused the handshake, and the PMD
		 * does not try again. */
		if (!went_down &&
		    ++p->down_ticks < LINK_WAIT_MS / STALE_POLL_MS)
			return;
		if (!went_down)
			SRV_LOG(WARNING,
				"port %s: link still down %d ms after start: "
				"restarting it",
				p->name, LINK_WAIT_MS);
		p->down_ticks = 0;
		__atomic_store_n(&p->pause_req, true, __ATOMIC_RELEASE);
		p->state = PORT_PAUSING;
		return;
	case PORT_PAUSING:
		/* A core in the middle of a spin request gets there within
		 * --max-spin-us. */
		if (!all_paused(p))
			return;
		rc = rte_eth_dev_stop(p->id);
		if (rc != 0)
			SRV_LOG(WARNING, "port %s: stop: %s", p->name,
				rte_strerror(-rc));
		p->state = PORT_STOPPED;
		p->start_tries = 0;
		/* fall through */
	case PORT_STOPPED:
		rc = rte_eth_dev_start(p->id);
		if (rc != 0) {
			if (p->start_tries++ % 250 == 0)
				SRV_LOG(WARNING,
					"port %s: start: %s; retrying every %d "
					"ms",
					p->name, rte_strerror(-rc),
					STALE_POLL_MS);
			return;
		}
		p->restarts++;
		p->state = PORT_RUNNING;
		__atomic_store_n(&p->pause_req, false, __ATOMIC_RELEASE);
		SRV_LOG(NOTICE, "port %s: restarted, its cores resume",
			p->name);
		return;
	}
}
