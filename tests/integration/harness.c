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

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_launch.h>

#include "harness.h"
#include "port.h"

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

int
eal_init_dps(const char *prog, char *const extra[])
{
	static const char *const base[] = {
		"--no-huge",
		"-m",
		"256",
		"--no-shconf",
		"--no-pci",
		"--lcores=0@0,1@0,2@1",
		"--log-level=lib.*:error",
	};
	char *argv[16];
	int argc = 0;

	argv[argc++] = (char *)prog;
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		argv[argc++] = (char *)base[i];
	for (; extra != NULL && *extra != NULL; extra++) {
		if (argc == (int)(sizeof(argv) / sizeof(argv[0])) - 1)
			return -1;
		argv[argc++] = *extra;
	}
	argv[argc] = NULL;
	return rte_eal_init(argc, argv) < 0 ? -1 : 0;
}

int
dp_set_load(struct dp_set *s, const char *name, const char *yaml)
{
	size_t len = strlen(yaml);

	if (tlb_config_load_buffer(name, yaml, len, &s->cfg, stderr) != 0)
		return -1;
	return tlb_ports_setup(&s->cfg, &s->pool);
}

int
dp_set_start(struct dp_set *s)
{
	unsigned int n = s->cfg.datapath.n_lcores;
	char err[256];

	if (n > MAX_DPS) {
		fprintf(stderr, "datapath.lcores: %u, max %u here\n", n,
			MAX_DPS);
		return -1;
	}
	for (unsigned int d = 0; d < n; d++) {
		if (tlb_dp_init(&s->dp[d], &s->cfg, s->cfg.datapath.lcores[d],
				d, NULL, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			return -1;
		}
		tlb_dps[tlb_n_dps++] = &s->dp[d];
	}
	for (unsigned int d = 0; d < n; d++)
		if (rte_eal_remote_launch(tlb_dp_main, &s->dp[d],
					  s->dp[d].lcore_id) != 0)
			return -1;
	return 0;
}

void
dp_set_stop(void)
{
	tlb_force_quit = true;
	rte_eal_mp_wait_lcore();
}

void
dp_set_free(struct dp_set *s)
{
	dp_set_stop();
	/* all of them: tlb_dp_fini() of a zeroed one does nothing */
	for (unsigned int d = 0; d < MAX_DPS; d++)
		tlb_dp_fini(&s->dp[d]);
	tlb_ports_teardown();
	tlb_config_free(&s->cfg);
}
