/* SPDX-License-Identifier: BSD-3-Clause
 * Port set-up. A port may be referred to several times (the targets of
 * several host cores as queues of one port, or the default target); it is
 * configured once with as many queues as the highest queue index needs.
 * The ports every dispatcher polls a queue of (the uplink, the default
 * target) hash their traffic over those queues (RSS).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "cli.h"
#include "log.h"
#include "port.h"

RTE_LOG_REGISTER(tlb_logtype_port, turbolb.port, INFO);

struct port_use {
	uint16_t port_id;
	uint16_t n_queues;
	/* The RX queues that RSS spreads over, rss_first .. rss_first +
	 * rss_n - 1: one per dispatcher. rss_n is 0 for a port the
	 * dispatchers do not share. */
	uint16_t rss_first, rss_n;
	bool used;
	bool started;
};

static struct port_use ports[RTE_MAX_ETHPORTS];

int
tlb_port_lookup(const char *name, uint16_t *port_id)
{
	/* A bare number is a port id, for ports with unwieldy names. */
	return cli_port_resolve(name, rte_eth_dev_get_port_by_name,
				rte_eth_dev_is_valid_port, port_id);
}

/* Notes that ref's port is used with queues ref->queue .. ref->queue +
 * n - 1; with spread, those are one per dispatcher and RSS spreads the
 * port's traffic over them. */
static int
note_use(const struct tlb_port_ref *ref, uint16_t n, bool spread)
{
	uint16_t pid;

	if (tlb_port_lookup(ref->port, &pid) != 0) {
		TLB_LOG(ERR, port, "no port named '%s' (available:", ref->port);
		RTE_ETH_FOREACH_DEV(pid)
		{
			char name[RTE_ETH_NAME_MAX_LEN];

			if (rte_eth_dev_get_name_by_port(pid, name) == 0)
				TLB_LOG(ERR, port, "  %u: %s", pid, name);
		}
		TLB_LOG(ERR, port, ")");
		return -1;
	}
	struct port_use *u = &ports[pid];
	uint16_t need = (uint16_t)(ref->queue + n);

	u->port_id = pid;
	u->used = true;
	if (u->n_queues < need)
		u->n_queues = need;
	if (spread && n > 1) {
		/* The uplink and the default target on one port: one range
		 * covering both. */
		uint16_t first = u->rss_n == 0
					 ? ref->queue
					 : RTE_MIN(u->rss_first, ref->queue);
		uint16_t end = u->rss_n == 0
				       ? need
				       : RTE_MAX(u->rss_first + u->rss_n, need);

		u->rss_first = first;
		u->rss_n = (uint16_t)(end - first);
	}
	return 0;
}

/* The hash types asked of a port that spreads over the dispatchers: UDP
 * over IPv4 and IPv6 by addresses and ports, so that the RPCs of many
 * clients spread and every packet of one flow (every packet of a
 * multi-packet request among them) reaches one dispatcher, whose affinity
 * table holds the request; other IP traffic by its addresses. */
#define TLB_RSS_HF (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)
#define TLB_RSS_UDP                                                            \
	(RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP)

/* Fills conf's RSS part for u: the hash types of TLB_RSS_HF the device
 * has. A device that cannot hash UDP is logged: its queues then get
 * whatever its driver or the sender puts on them. */
static void
rss_conf(const struct port_use *u, const struct rte_eth_dev_info *info,
	 struct rte_eth_conf *conf)
{
	uint64_t hf = TLB_RSS_HF & info->flow_type_rss_offloads;

	if ((hf & TLB_RSS_UDP) != TLB_RSS_UDP)
		TLB_LOG(WARNING, port,
			"port %u (%s): the device cannot hash UDP over IPv4 "
			"and IPv6 (RSS types 0x%" PRIx64
			"): its %u dispatcher queues get the wire as the "
			"driver or the sender spreads it, not per flow",
			u->port_id,
			info->device ? rte_dev_name(info->device) : "?",
			info->flow_type_rss_offloads, u->rss_n);
	if (hf == 0)
		return;
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf.rss_key = NULL; /* the driver's key */
	conf->rx_adv_conf.rss_conf.rss_hf = hf;
}

/* Points the redirection table of a started RSS port at the dispatchers'
 * queues only, where the port has other RX queues too (queues of host
 * cores, or a uplink.queue above 0): the default table spreads over every
 * RX queue, and what lands on a queue no dispatcher polls is lost. */
static void
rss_reta(const struct port_use *u, const struct rte_eth_dev_info *info)
{
	struct rte_eth_rss_reta_entry64
		reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t size = info->reta_size;
	int rc = -ENOTSUP;

	if (u->rss_first == 0 && u->rss_n == u->n_queues)
		return;
	if (size != 0 && size <= RTE_ETH_RSS_RETA_SIZE_512) {
		memset(reta, 0, sizeof(reta));
		for (uint16_t i = 0; i < size; i++) {
			struct rte_eth_rss_reta_entry64 *e =
				&reta[i / RTE_ETH_RETA_GROUP_SIZE];

			e->mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
			e->reta[i % RTE_ETH_RETA_GROUP_SIZE] =
				(uint16_t)(u->rss_first + i % u->rss_n);
		}
		rc = rte_eth_dev_rss_reta_update(u->port_id, reta, size);
	}
	if (rc != 0)
		TLB_LOG(WARNING, port,
			"port %u: RSS redirection to queues %u..%u: %s: "
			"what the device hashes to its other %u RX queues "
			"is never received",
			u->port_id, u->rss_first, u->rss_first + u->rss_n - 1,
			rte_strerror(-rc), u->n_queues - u->rss_n);
}

/* The floor of the per-lcore cache: what the pool had before it was
 * sized, and enough for a few bursts of each of a small configuration's
 * queues. */
#define TLB_MBUF_CACHE_MIN 256u

/* Mbufs one datapath lcore may hold between taking them from the pool
 * and giving them back, at worst: every target's TX buffer full (a buffer
 * holds up to a burst), the uplink's and the default target's buffers,
 * and the RX burst in hand. Under load the target buffers fill together
 * (rr, and jsq's round-robin ties, spread a burst over every target), so
 * the lcore's mbufs out swing between none and all of this from one flush
 * to the next: the per-lcore cache must absorb that swing, or every swing
 * goes through the pool's backend. A hold time on the TX buffers makes the
 * usual swing smaller, never the worst case. */
static unsigned int
lcore_swing(const struct tlb_config *cfg)
{
	return (cfg->ports.n_targets + 2 +
		(cfg->ports.has_default_target ? 1 : 0)) *
	       cfg->datapath.burst;
}

/* The per-lcore cache: the swing above, at least TLB_MBUF_CACHE_MIN, at
 * most RTE_MEMPOOL_CACHE_MAX_SIZE (the mempool refuses more). Past the
 * cap (more than 14 targets at burst 32) the rest of the swing goes
 * through the backend: see pool_ops(). */
static unsigned int
cache_size(const struct tlb_config *cfg)
{
	unsigned int c = lcore_swing(cfg);

	if (c < TLB_MBUF_CACHE_MIN)
		c = TLB_MBUF_CACHE_MIN;
	if (c > RTE_MEMPOOL_CACHE_MAX_SIZE)
		c = RTE_MEMPOOL_CACHE_MAX_SIZE;
	return c;
}

/* The pool's backend. While the cache absorbs the swing, the backend is
 * rarely touched and DPDK's default (a lock-free ring) serves best when
 * several lcores share the pool. Past the cache, every swing goes through
 * the backend (DPDK 22.11 flushes a full cache whole), and a ring hands
 * back the mbuf freed longest ago: the lcore then cycles through every
 * free mbuf of the pool (which counts every descriptor of every queue:
 * 340 MB at 64 target queues), each one cold in the CPU's caches.
 * A stack hands back the one freed last, so the mbufs in use stay about
 * the swing. Measured with 32 and 64 net_null targets, one lcore, burst
 * 32 (scripts/bench-dispatch.sh --process-only): 1.4 to 1.7 times the
 * rate of the ring. NULL: the default. */
static const char *
pool_ops(const struct tlb_config *cfg, unsigned int cache)
{
	if (lcore_swing(cfg) <= cache)
		return NULL;
	for (uint32_t i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, "stack") == 0)
			return "stack";
	TLB_LOG(WARNING, port,
		"mbuf pool: no 'stack' mempool driver (librte_mempool_stack): "
		"the default ring serves a swing past the cache, at a cost");
	return NULL;
}

static unsigned int
pool_size(const struct tlb_config *cfg, unsigned int cache)
{
	unsigned int n = 0;

	if (cfg->datapath.mbufs != 0)
		return cfg->datapath.mbufs;
	/* Every descriptor of every queue used. */
	for (unsigned int p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (ports[p].used)
			n += ports[p].n_queues *
			     (cfg->datapath.rx_desc + cfg->datapath.tx_desc);
	/* Per datapath lcore: the worst-case swing (TX buffers, RX burst), the
	 * FIFO full, and a cache at its flush threshold (1.5 x its size: that
	 * many free mbufs may sit in it, out of everyone else's reach). The
	 * main lcore has a cache too. */
	n += cfg->datapath.n_lcores *
	     (lcore_swing(cfg) + cfg->fifo.capacity + cache * 3 / 2);
	n += cache * 3 / 2;
	/* Slack: what drivers keep for themselves (net_pcap's infinite_rx
	 * keeps a copy of every packet of its file), the control path. */
	return n + 1024;
}

static int
setup_port(const struct tlb_config *cfg, struct port_use *u,
	   struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t pid = u->port_id;
	uint16_t nrx = u->n_queues, ntx = u->n_queues;
	uint16_t rxd = (uint16_t)cfg->datapath.rx_desc;
	uint16_t txd = (uint16_t)cfg->datapath.tx_desc;
	int socket = rte_eth_dev_socket_id(pid);
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0) {
		TLB_LOG(ERR, port, "port %u: info: %s", pid, rte_strerror(-rc));
		return -1;
	}
	if (nrx > info.max_rx_queues || ntx > info.max_tx_queues) {
		TLB_LOG(ERR, port,
			"port %u (%s): needs %u queues, has at most %u rx/%u "
			"tx",
			pid, info.device ? rte_dev_name(info.device) : "?",
			u->n_queues, info.max_rx_queues, info.max_tx_queues);
		return -1;
	}
	if (u->rss_n > 1)
		rss_conf(u, &info, &conf);
	rc = rte_eth_dev_configure(pid, nrx, ntx, &conf);
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &rxd, &txd);
	for (uint16_t q = 0; rc == 0 && q < nrx; q++)
		rc = rte_eth_rx_queue_setup(pid, q, rxd, socket, NULL, pool);
	for (uint16_t q = 0; rc == 0 && q < ntx; q++)
		rc = rte_eth_tx_queue_setup(pid, q, txd, socket, NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(pid);
	if (rc != 0) {
		TLB_LOG(ERR, port, "port %u: set-up failed: %s", pid,
			rte_strerror(-rc));
		return -1;
	}
	u->started = true;
	if (conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS)
		rss_reta(u, &info);
	/* Requests carry the host's addresses, not ours: see them all. Not
	 * every driver has the notion (memif does not), which is fine. */
	rc = rte_eth_promiscuous_enable(pid);
	if (rc != 0 && rc != -ENOTSUP)
		TLB_LOG(WARNING, port, "port %u: promiscuous: %s", pid,
			rte_strerror(-rc));
	TLB_LOG(INFO, port,
		"port %u started: %u rx/%u tx queues, %u/%u desc, RSS types "
		"0x%" PRIx64,
		pid, nrx, ntx, rxd, txd, conf.rx_adv_conf.rss_conf.rss_hf);
	return 0;
}

int
tlb_ports_setup(const struct tlb_config *cfg, struct rte_mempool **pool)
{
	unsigned int n_mbufs, cache;
	const char *ops;

	memset(ports, 0, sizeof(ports));
	uint16_t n_dps = (uint16_t)cfg->datapath.n_lcores;

	/* The uplink and the default target have one queue pair per
	 * dispatcher lcore, dispatcher i on queue .queue + i. */
	if (note_use(&cfg->ports.uplink, n_dps, true) != 0)
		return -1;
	for (unsigned int i = 0; i < cfg->ports.n_targets; i++)
		if (note_use(&cfg->ports.targets[i].ref, 1, false) != 0)
			return -1;
	if (cfg->ports.has_default_target &&
	    note_use(&cfg->ports.default_target, n_dps, true) != 0)
		return -1;

	cache = cache_size(cfg);
	n_mbufs = pool_size(cfg, cache);
	/* The mempool refuses a cache whose flush threshold exceeds the pool
	 * (a small datapath.mbufs). */
	while (cache > 32 && cache * 3 / 2 > n_mbufs)
		cache /= 2;
	ops = pool_ops(cfg, cache);
	if (ops != NULL)
		*pool = rte_pktmbuf_pool_create_by_ops(
			TLB_MBUF_POOL, n_mbufs, cache, 0,
			RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id(), ops);
	else
		*pool = rte_pktmbuf_pool_create(TLB_MBUF_POOL, n_mbufs, cache,
						0, RTE_MBUF_DEFAULT_BUF_SIZE,
						(int)rte_socket_id());
	if (*pool == NULL) {
		TLB_LOG(ERR, port, "mbuf pool of %u: %s (raise eal.memory_mb?)",
			n_mbufs, rte_strerror(rte_errno));
		return -1;
	}
	TLB_LOG(INFO, port,
		"mbuf pool: %u mbufs, per-lcore cache %u (worst case per "
		"lcore: (%u targets + 2%s) x burst %u = %u mbufs out; cap %u), "
		"backend %s",
		n_mbufs, cache, cfg->ports.n_targets,
		cfg->ports.has_default_target ? " + 1" : "",
		cfg->datapath.burst, lcore_swing(cfg),
		RTE_MEMPOOL_CACHE_MAX_SIZE,
		rte_mempool_get_ops((*pool)->ops_index)->name);
	for (unsigned int p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (ports[p].used && setup_port(cfg, &ports[p], *pool) != 0)
			return -1;
	return 0;
}

void
tlb_ports_teardown(void)
{
	for (unsigned int p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (!ports[p].started)
			continue;
		rte_eth_dev_stop(ports[p].port_id);
		rte_eth_dev_close(ports[p].port_id);
		ports[p].started = false;
	}
}
