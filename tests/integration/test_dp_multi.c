/* SPDX-License-Identifier: BSD-3-Clause
 * Integration test: two dispatcher lcores running for real (their own
 * threads, tlb_dp_main) over net_ring ports, each polling its own uplink
 * queue and its own default-target queue and owning half of the host
 * cores. The test thread plays the clients, the host server and the host's
 * slow path. Checks: every request gets exactly one response, on the
 * uplink queue it came in on; the counters of the two dispatchers add up
 * exactly; nothing stays outstanding; both host cores of each dispatcher
 * share its load; slow-path traffic crosses on the queue pair of the
 * dispatcher it came to, both ways, and every default-target queue is
 * drained (each dispatcher counts exactly what was put on its queue).
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
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "dp.h"
#include "harness.h"

#define N_CORES    4
#define N_DPS      2
#define N_REQUESTS 6000
#define WINDOW     256 /* requests in flight, below every ring's size */
#define N_SLOW     300 /* slow-path frames each way on each queue */
#define SLOW_PORT  53  /* not an RPC port: passed through */

static const char *yaml =
	"ports:\n"
	"  uplink: { port: net_ring_up }\n"
	"  default_target: { port: net_ring_df }\n"
	"  targets:\n"
	"    - { core: 0, port: net_ring_t0 }\n"
	"    - { core: 1, port: net_ring_t1 }\n"
	"    - { core: 2, port: net_ring_t2 }\n"
	"    - { core: 3, port: net_ring_t3 }\n"
	"datapath:\n"
	"  lcores: [1, 2]\n"
	"  rx_desc: 256\n"
	"  tx_desc: 256\n"
	"policy: { name: jsq }\n"
	/* The host server is this test thread, which shares a CPU with a
	 * dispatcher: it may stall for a scheduler slice. Not a liveness test.
	 */
	"host: { credits: inband, stale_timeout_us: 60000000 }\n";

static struct ring_port up, df, tgt[N_CORES];
static struct rte_mempool *pool;
static struct dp_set dps;
static uint8_t seen[N_REQUESTS + 1];
static uint64_t served[N_CORES];
/* slow-path frames sent and seen, per queue, each way */
static unsigned int slow_up_sent[N_DPS], slow_down_sent[N_DPS];
static unsigned int slow_up_seen[N_DPS], slow_down_seen[N_DPS];

/* A slow-path frame for queue q, the i-th: UDP to SLOW_PORT, its source
 * port saying the queue it is put on. */
static struct rte_mbuf *
slow_frame(unsigned int q, unsigned int i)
{
	uint8_t f[256];
	struct tlb_frame_addrs a =
		client((uint16_t)(50000 + q * 1000 + i % 1000));
	struct tlb_rpc_hdr h = tlb_request_hdr(i + 1, 0);

	a.key.dst_port = SLOW_PORT;
	size_t len = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);

	return mbuf_of(pool, f, len);
}

/* Puts a few slow-path frames on each queue of the uplink (to the host)
 * and of the default target (to the wire). Returns how many. */
static unsigned int
send_slow(void)
{
	unsigned int n = 0;

	for (unsigned int q = 0; q < N_DPS; q++) {
		if (slow_up_sent[q] < N_SLOW &&
		    rte_ring_count(up.rx[q]) < 512) {
			assert_int_equal(
				rte_ring_enqueue(
					up.rx[q],
					slow_frame(q, slow_up_sent[q])),
				0);
			slow_up_sent[q]++;
			n++;
		}
		if (slow_down_sent[q] < N_SLOW &&
		    rte_ring_count(df.rx[q]) < 512) {
			assert_int_equal(
				rte_ring_enqueue(
					df.rx[q],
					slow_frame(q, slow_down_sent[q])),
				0);
			slow_down_sent[q]++;
			n++;
		}
	}
	return n;
}

/* Slow-path frames the dispatchers sent to the host: each on the default
 * target's queue of the uplink queue it came in on. */
static unsigned int
collect_slow_up(void)
{
	struct out_pkt out[32];
	unsigned int total = 0;

	for (unsigned int q = 0; q < N_DPS; q++) {
		unsigned int n = collect(df.tx[q], out, 32);

		for (unsigned int i = 0; i < n; i++) {
			assert_int_equal(out[i].p.cls, TLB_FRAME_PASS);
			assert_int_equal((out[i].p.key.src_port - 50000) / 1000,
					 q);
		}
		slow_up_seen[q] += n;
		total += n;
	}
	return total;
}

/* The host server: answers whatever reached each core. */
static unsigned int
serve(void)
{
	struct out_pkt req[32];
	unsigned int total = 0;

	for (unsigned int c = 0; c < N_CORES; c++) {
		unsigned int n = collect(tgt[c].tx[0], req, 32);

		for (unsigned int i = 0; i < n; i++)
			assert_int_equal(
				rte_ring_enqueue(tgt[c].rx[0],
						 response_mbuf(pool, &req[i],
							       (uint16_t)c,
							       100)),
				0);
		served[c] += n;
		total += n;
	}
	return total;
}

static void
test_two_dispatchers(void **state)
{
	struct out_pkt resp[32];
	uint64_t sent = 0, received = 0;
	unsigned int idle = 0;

	(void)state;
	while ((received < N_REQUESTS || slow_up_seen[0] + slow_up_seen[1] +
							 slow_down_seen[0] +
							 slow_down_seen[1] <
						 4 * N_SLOW) &&
	       idle < 200000) {
		unsigned int moved = send_slow();

		/* Clients: requests alternate between the uplink queues, each
		 * queue's flows on their own source ports. */
		while (sent < N_REQUESTS && sent - received < WINDOW) {
			uint8_t f[256];
			unsigned int q = sent % N_DPS;
			struct tlb_frame_addrs a =
				client((uint16_t)(40000 + q * 100 + sent % 7));
			struct tlb_rpc_hdr h = tlb_request_hdr(sent + 1, 0);

			/* Where it came in, for the check below. */
			h.svc_class = (uint16_t)q;
			size_t len =
				tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);
			assert_int_equal(
				rte_ring_enqueue(up.rx[q],
						 mbuf_of(pool, f, len)),
				0);
			sent++;
			moved++;
		}
		moved += serve();
		for (unsigned int q = 0; q < N_DPS; q++) {
			unsigned int n = collect(up.tx[q], resp, 32);

			moved += n;
			for (unsigned int i = 0; i < n; i++) {
				uint64_t id = resp[i].p.hdr.req_id;

				/* The host's slow path, on the uplink queue
				 * of the default-target queue it came on. */
				if (resp[i].p.cls == TLB_FRAME_PASS) {
					assert_int_equal(
						(resp[i].p.key.src_port -
						 50000) /
							1000,
						q);
					slow_down_seen[q]++;
					continue;
				}
				assert_int_equal(resp[i].p.cls,
						 TLB_FRAME_RESPONSE);
				received++;
				assert_in_range(id, 1, N_REQUESTS);
				assert_int_equal(seen[id], 0);
				seen[id] = 1;
				/* Back on the queue it came in on, through
				 * the dispatcher that owns its core. */
				assert_int_equal(resp[i].p.hdr.svc_class, q);
				assert_int_equal(
					resp[i].p.hdr.server_core % N_DPS, q);
			}
		}
		moved += collect_slow_up();
		if (moved == 0) {
			idle++;
			usleep(10);
		} else {
			idle = 0;
		}
	}
	dp_set_stop();
	if (received != N_REQUESTS)
		for (unsigned int d = 0; d < N_DPS; d++)
			for (unsigned int i = 0; i < TLB_DP_N_COUNTERS; i++)
				if (dps.dp[d].stats.c[i] != 0)
					fprintf(stderr,
						"dispatcher %u: %s %lu\n", d,
						tlb_dp_counter_names[i],
						(unsigned long)dps.dp[d]
							.stats.c[i]);
	assert_int_equal(received, N_REQUESTS);

	/* Every queue of the default target drained, each by its own
	 * dispatcher, which counted exactly what came on it. */
	for (unsigned int q = 0; q < N_DPS; q++) {
		assert_int_equal(slow_down_sent[q], N_SLOW);
		assert_int_equal(slow_up_sent[q], N_SLOW);
		assert_int_equal(rte_ring_count(df.rx[q]), 0);
		assert_int_equal(slow_down_seen[q], N_SLOW);
		assert_int_equal(slow_up_seen[q], N_SLOW);
		assert_int_equal(dps.dp[q].stats.c[TLB_DP_pass_down], N_SLOW);
		assert_int_equal(dps.dp[q].stats.c[TLB_DP_pass_up], N_SLOW);
	}

	uint64_t steered = 0, responses = 0, completions = 0;
	for (unsigned int d = 0; d < N_DPS; d++) {
		steered += dps.dp[d].stats.c[TLB_DP_steered];
		responses += dps.dp[d].stats.c[TLB_DP_responses];
		completions += dps.dp[d].stats.c[TLB_DP_completions_inband];
		assert_int_equal(dps.dp[d].n_cores, N_CORES / N_DPS);
		for (uint32_t i = 0; i < dps.dp[d].n_cores; i++) {
			assert_int_equal(dps.dp[d].core_id[i], d + i * N_DPS);
			assert_int_equal(tlb_lv_outstanding(dps.dp[d].lv, i),
					 0);
		}
	}
	assert_int_equal(steered, N_REQUESTS);
	assert_int_equal(responses, N_REQUESTS);
	assert_int_equal(completions, N_REQUESTS);
	/* jsq within each share: neither core of a pair starves. */
	for (unsigned int c = 0; c < N_CORES; c++)
		assert_true(served[c] > N_REQUESTS / N_CORES / 4);
}

static int
group_setup(void **state)
{
	char name[16];

	(void)state;
	if (eal_init_dps("test_dp_multi", NULL) != 0)
		return -1;
	make_port("up", &up, N_DPS);
	make_port("df", &df, N_DPS);
	for (int i = 0; i < N_CORES; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		make_port(name, &tgt[i], 1);
	}
	pool = rte_pktmbuf_pool_create("test_pool", 8192, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (pool == NULL || dp_set_load(&dps, "multi.yaml", yaml) != 0)
		return -1;
	return dp_set_start(&dps);
}

static int
group_teardown(void **state)
{
	(void)state;
	dp_set_free(&dps);
	rte_eal_cleanup();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_dispatchers),
	};

	return cmocka_run_group_tests_name("two_dispatchers", tests,
					   group_setup, group_teardown);
}
