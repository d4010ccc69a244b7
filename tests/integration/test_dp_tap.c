/* SPDX-License-Identifier: BSD-3-Clause
 * Integration test: two dispatchers on an uplink and a default target
 * that are net_tap ports with a queue per dispatcher, so that the port
 * set-up asks a real multi-queue device for RSS, and the queue a frame
 * lands on is not the test's choice: the kernel's tun driver picks it per
 * flow. The test thread writes frames on the kernel side of the taps
 * (AF_PACKET), from many client flows, and plays the host cores on
 * net_ring ports. Checks, all counted: every request gets exactly one
 * response out of the uplink; both dispatchers received requests from the
 * wire; every slow-path frame the host sent crossed to the wire, drained
 * from the default target by both dispatchers. Needs root and /dev/net/tun
 * (skipped otherwise).
 */
/* rte_eth_dev_conf_get(), to read back how the ports were configured, is
 * still experimental in DPDK 22.11. */
#define ALLOW_EXPERIMENTAL_API

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "dp.h"
#include "harness.h"

#define N_CORES    4
#define N_DPS      2
#define N_REQUESTS 2000
#define N_SLOW     400
#define N_FLOWS    64 /* client source ports: the tun driver hashes them */
#define SLOW_PORT  53

static char up_if[IFNAMSIZ], df_if[IFNAMSIZ];
static struct ring_port tgt[N_CORES];
static struct rte_mempool *pool;
static struct dp_set dps;
static int up_sock = -1, df_sock = -1;
static uint8_t seen[N_REQUESTS + 1];

/* An AF_PACKET socket on the kernel side of tap interface name. */
static int
packet_socket(const char *name)
{
	struct sockaddr_ll sll;
	int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));

	if (s < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(name);
	if (sll.sll_ifindex == 0 ||
	    bind(s, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		close(s);
		return -1;
	}
	return s;
}

static void
send_frame(int s, const void *f, size_t len)
{
	while (send(s, f, len, 0) < 0) {
		assert_true(errno == EAGAIN || errno == ENOBUFS);
		usleep(10);
	}
}

/* Takes one frame the kernel side of a tap received (not one it sent),
 * parsed; false when none waits. */
static bool
recv_frame(int s, struct out_pkt *o)
{
	struct tlb_parse_opts opts = {.udp_ports = {RPC_PORT},
				      .n_udp_ports = 1};
	struct sockaddr_ll from;
	socklen_t fl = sizeof(from);
	ssize_t n;

	for (;;) {
		n = recvfrom(s, o->frame, sizeof(o->frame), 0,
			     (struct sockaddr *)&from, &fl);
		if (n < 0) {
			assert_true(errno == EAGAIN);
			return false;
		}
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		o->len = (uint16_t)n;
		memset(&o->p, 0, sizeof(o->p));
		tlb_parse_frame(o->frame, o->len, &opts, &o->p);
		return true;
	}
}

/* The host: answers whatever reached each core. */
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
		total += n;
	}
	return total;
}

static void
test_tap_queues(void **state)
{
	uint64_t sent = 0, received = 0, slow_sent = 0, slow_seen = 0;
	unsigned int idle = 0;
	struct out_pkt o;
	uint8_t f[256];

	(void)state;
	while ((received < N_REQUESTS || slow_seen < N_SLOW) && idle < 100000) {
		unsigned int moved = 0;

		/* Clients on the wire, and the host's slow path. */
		if (sent < N_REQUESTS && sent - received < 128) {
			struct tlb_frame_addrs a =
				client((uint16_t)(40000 + sent % N_FLOWS));
			struct tlb_rpc_hdr h = tlb_request_hdr(sent + 1, 0);
			size_t len =
				tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);

			send_frame(up_sock, f, len);
			sent++;
			moved++;
		}
		if (slow_sent < N_SLOW && slow_sent - slow_seen < 128) {
			struct tlb_frame_addrs a =
				client((uint16_t)(50000 + slow_sent % N_FLOWS));
			struct tlb_rpc_hdr h =
				tlb_request_hdr(slow_sent + 1, 0);

			a.key.dst_port = SLOW_PORT;
			size_t len =
				tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);

			send_frame(df_sock, f, len);
			slow_sent++;
			moved++;
		}
		moved += serve();
		while (recv_frame(up_sock, &o)) {
			moved++;
			if (o.p.cls == TLB_FRAME_RESPONSE) {
				uint64_t id = o.p.hdr.req_id;

				assert_in_range(id, 1, N_REQUESTS);
				assert_int_equal(seen[id], 0);
				seen[id] = 1;
				received++;
			} else if (o.p.cls == TLB_FRAME_PASS &&
				   o.p.key.dst_port == SLOW_PORT) {
				slow_seen++;
			}
		}
		/* What the kernel side of the default target gets: nothing
		 * of ours (no slow-path traffic from the wire here). */
		while (recv_frame(df_sock, &o))
			moved++;
		if (moved == 0) {
			idle++;
			usleep(10);
		} else {
			idle = 0;
		}
	}
	dp_set_stop();

	/* The taps were configured for RSS over UDP and IP (the hash types
	 * net_tap offers), the host cores' ports without. */
	for (uint16_t pid = 0; pid < 2 + N_CORES; pid++) {
		struct rte_eth_conf conf;

		assert_int_equal(rte_eth_dev_conf_get(pid, &conf), 0);
		if (pid < 2) {
			assert_int_equal(conf.rxmode.mq_mode,
					 RTE_ETH_MQ_RX_RSS);
			assert_int_equal(conf.rx_adv_conf.rss_conf.rss_hf,
					 RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
		} else {
			assert_int_equal(conf.rxmode.mq_mode,
					 RTE_ETH_MQ_RX_NONE);
		}
	}
	for (unsigned int d = 0; d < N_DPS; d++)
		fprintf(stderr,
			"dispatcher %u: rx_uplink %" PRIu64 " steered %" PRIu64
			" pass_down %" PRIu64 "\n",
			d, dps.dp[d].stats.c[TLB_DP_rx_uplink],
			dps.dp[d].stats.c[TLB_DP_steered],
			dps.dp[d].stats.c[TLB_DP_pass_down]);
	assert_int_equal(received, N_REQUESTS);
	assert_int_equal(slow_seen, N_SLOW);

	uint64_t steered = 0, pass_down = 0;
	for (unsigned int d = 0; d < N_DPS; d++) {
		/* The tun driver spread the clients' flows over both uplink
		 * queues, and the host's over both default-target queues:
		 * each dispatcher received some of each. */
		assert_true(dps.dp[d].stats.c[TLB_DP_steered] > 0);
		assert_true(dps.dp[d].stats.c[TLB_DP_pass_down] > 0);
		steered += dps.dp[d].stats.c[TLB_DP_steered];
		pass_down += dps.dp[d].stats.c[TLB_DP_pass_down];
	}
	assert_int_equal(steered, N_REQUESTS);
	/* Every slow-path frame drained from the default target's queues;
	 * anything beyond is the kernel's own (IPv6 off keeps it quiet). */
	assert_true(pass_down >= N_SLOW);
}

/* Keeps the kernel's own IPv6 traffic (router and neighbour
 * solicitations) off a tap: the counts above are then the test's. */
static void
ipv6_off(const char *name)
{
	char path[96];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6",
		 name);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			fprintf(stderr, "%s: not written\n", path);
		close(fd);
	}
}

static int
group_setup(void **state)
{
	char vdev_up[64], vdev_df[64];
	char *vdevs[] = {vdev_up, vdev_df, NULL};
	char yaml[1024];
	char name[16];

	(void)state;
	snprintf(up_if, sizeof(up_if), "tlbup%d", (int)getpid() % 100000);
	snprintf(df_if, sizeof(df_if), "tlbdf%d", (int)getpid() % 100000);
	snprintf(vdev_up, sizeof(vdev_up), "--vdev=net_tap0,iface=%s", up_if);
	snprintf(vdev_df, sizeof(vdev_df), "--vdev=net_tap1,iface=%s", df_if);
	if (eal_init_dps("test_dp_tap", vdevs) != 0)
		return -1;
	ipv6_off(up_if);
	ipv6_off(df_if);
	for (int i = 0; i < N_CORES; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		make_port(name, &tgt[i], 1);
	}
	snprintf(yaml, sizeof(yaml),
		 "ports:\n"
		 "  uplink: { port: net_tap0 }\n"
		 "  default_target: { port: net_tap1 }\n"
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
		 "host: { credits: inband, stale_timeout_us: 60000000 }\n");
	pool = rte_pktmbuf_pool_create("test_pool", 8192, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (pool == NULL || dp_set_load(&dps, "tap.yaml", yaml) != 0)
		return -1;
	up_sock = packet_socket(up_if);
	df_sock = packet_socket(df_if);
	if (up_sock < 0 || df_sock < 0) {
		perror("AF_PACKET socket on the taps");
		return -1;
	}
	return dp_set_start(&dps);
}

static int
group_teardown(void **state)
{
	(void)state;
	dp_set_stop();
	if (up_sock >= 0)
		close(up_sock);
	if (df_sock >= 0)
		close(df_sock);
	dp_set_free(&dps);
	rte_eal_cleanup();
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tap_queues),
	};

	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) != 0) {
		fprintf(stderr, "SKIP: needs root and /dev/net/tun\n");
		return 77;
	}
	return cmocka_run_group_tests_name("tap_queues", tests, group_setup,
					   group_teardown);
}
