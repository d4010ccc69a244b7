/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-loadgen: RPC load generator.
 *
 * One lcore (the main one) alternates between sending whatever the
 * schedule says is due and draining responses, on one RX and one TX queue
 * of one port. Send times come from the schedule alone; when the loop is
 * late it sends the overdue requests in bursts and reports how late it
 * got, so an overloaded generator shows up as "behind" instead of as a
 * lower offered load. In a closed loop the window of outstanding requests
 * sets the pace instead.
 *
 * A sweep or an SLO search runs several rate points on the port set up
 * once, one after the other, each with its own warm-up and counters but
 * all in one request-id space: a straggler of one point can never pass
 * for a response of the next.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "turbolb/proto.h"
#include "cli.h"
#include "lg.h"
#include "progress.h"
#include "lg_unmap_guard.h"

RTE_LOG_REGISTER(lg_logtype, turbolb.loadgen, INFO);

#define LG_LOG(level, fmt, ...)                                                \
	rte_log(RTE_LOG_##level, lg_logtype, "turbolb.loadgen: " fmt "\n",     \
		##__VA_ARGS__)

#define BURST 32
/* Staging room for a burst of messages plus one message of the most
 * packets, so a message is always staged whole. */
#define TX_CAP     (BURST + TLB_RPC_MAX_PKTS)
#define RX_DESC    1024
#define TX_DESC    1024
#define POOL_CACHE 256
/* Largest frame the RX path copies out of a chained mbuf for parsing. */
#define RX_COPY_MAX (LG_MTU_MAX + 64)
/* The link watch: checked this often, a restarted port that is still down
 * this long after its start is restarted again (turbolb-server's values),
 * and the loop naps this long per pass while the link is down. */
#define LINK_CHECK_MS      20
#define LINK_START_WAIT_MS 2000
#define LINK_DOWN_NAP_US   1000

/* Bumped by SIGINT/SIGTERM: the first stops sending, one more during the
 * wait for stragglers ends that too. */
static volatile sig_atomic_t stop_signals;

struct lg_port {
	uint16_t id;
	bool configured;
	bool started;
	struct rte_mempool *pool;
	struct rte_ether_addr mac;
	/* Polled only while up; outlives the rate points. */
	struct lg_link link;
};

/* State of one run at one rate. */
struct lg_run {
	const struct lg_opts *o;
	uint16_t port;
	struct lg_port *p;
	uint64_t link_wait; /* ticks: --link-wait */
	uint64_t n_flows;   /* source ports x source addresses */
	uint32_t src_ip;    /* first source address, host order */
	struct rte_mempool *pool;
	struct tlb_frame_addrs addrs;
	struct tlb_parse_opts popts;
	struct lg_sched sched;
	struct lg_track track;
	struct tlb_rng hint_rng;
	struct tlb_hist hist;
	uint64_t *per_core;
	uint32_t n_cores;

	double ns_per_tick;
	uint64_t start;     /* tick of schedule offset 0 */
	double warm_ticks;  /* offsets below this are warm-up */
	double end_ticks;   /* duration mode: offsets from here on stop */
	uint64_t lag_bound; /* ticks */
	uint64_t max_lag;   /* ticks, measured requests only */
	uint32_t pkts_per_msg;
	uint32_t room; /* payload bytes per packet */

	bool sending;
	uint64_t send_end; /* tick the send phase ended */
	uint64_t last_send;
	bool stalled; /* the port or the pool refuses us */
	uint64_t stall_since;

	struct rte_mbuf *tx[TX_CAP];
	uint16_t tx_head, tx_n;

	struct lg_result res;
	uint8_t rx_copy[RX_COPY_MAX];
};

static void
on_signal(int sig)
{
	RTE_SET_USED(sig);
	stop_signals++;
}

static int
install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) != 0 ||
	    sigaction(SIGTERM, &sa, NULL) != 0)
		return -1;
	return 0;
}

static int
find_port(const char *name, uint16_t *id)
{
	if (name == NULL) {
		RTE_ETH_FOREACH_DEV(*id)
		return 0;
		LG_LOG(ERR, "no ethdev port; give one to the EAL, e.g. "
			    "--vdev=net_memif0,role=client,socket=PATH,"
			    "socket-abstract=no");
		return -1;
	}
	if (cli_port_resolve(name, rte_eth_dev_get_port_by_name,
			     rte_eth_dev_is_valid_port, id) == 0)
		return 0;
	LG_LOG(ERR, "no port named '%s'; available:", name);
	RTE_ETH_FOREACH_DEV(*id)
	{
		char n[RTE_ETH_NAME_MAX_LEN];

		if (rte_eth_dev_get_name_by_port(*id, n) == 0)
			LG_LOG(ERR, "  %u: %s", *id, n);
	}
	return -1;
}

/* Stops the port (if it runs) and starts it again. Called only from the
 * lcore that polls the port, between bursts: a port must not be polled
 * while it is stopped or started. */
/* Stops p if it runs; a failure is logged, and p counts as stopped. */
static void
port_stop(struct lg_port *p)
{
	int rc;

	if (!p->started)
		return;
	rc = rte_eth_dev_stop(p->id);
	if (rc != 0)
		LG_LOG(WARNING, "port %u: stop: %s", p->id, rte_strerror(-rc));
	p->started = false;
}

static void
port_restart(struct lg_port *p, uint64_t now)
{
	int rc;

	port_stop(p);
	rc = rte_eth_dev_start(p->id);
	if (rc != 0) {
		/* Every 5 s or so: the peer may be down for long. */
		if (p->link.start_failures % 250 == 0)
			LG_LOG(WARNING,
			       "port %u: start: %s; retrying every "
			       "%d ms (is the peer up?)",
			       p->id, rte_strerror(-rc), LINK_CHECK_MS);
		lg_link_started(&p->link, now, false);
		return;
	}
	p->started = true;
	rc = rte_eth_promiscuous_enable(p->id);
	if (rc != 0 && rc != -ENOTSUP)
		LG_LOG(WARNING, "port %u: promiscuous: %s", p->id,
		       rte_strerror(-rc));
	lg_link_started(&p->link, now, true);
}

/* A memif client hands its peer receive descriptors only inside
 * rx_burst: until its first poll after a (re)connect the peer has no room
 * for a response and drops it. So the port is polled once as soon as its
 * link is up, before any request goes out; nothing can be there yet. */
static void
port_prime(struct lg_port *p)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n;

	lg_burst_enter();
	n = rte_eth_rx_burst(p->id, 0, pkts, BURST);
	lg_burst_exit();
	rte_pktmbuf_free_bulk(pkts, n);
}

/* Waits for the link of a port just started, restarting a memif port
 * whose handshake did not complete (lg_link_check). */
static int
wait_link(struct lg_port *p, double seconds)
{
	uint64_t deadline = rte_get_tsc_cycles() +
			    (uint64_t)(seconds * (double)rte_get_tsc_hz());
	struct rte_eth_link link;
	uint64_t now;

	for (;;) {
		now = rte_get_tsc_cycles();
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(p->id, &link) != 0)
			link.link_status = RTE_ETH_LINK_UP;
		switch (lg_link_check(&p->link, now,
				      link.link_status == RTE_ETH_LINK_UP)) {
		case LG_LINK_CAME_UP:
			port_prime(p);
			return 0;
		case LG_LINK_RESTART:
			LG_LOG(WARNING,
			       "port %u: link still down %d ms after "
			       "its start: restarting it",
			       p->id, LINK_START_WAIT_MS);
			port_restart(p, now);
			break;
		default:
			break;
		}
		if (stop_signals != 0 || now >= deadline)
			break;
		rte_delay_ms(LINK_CHECK_MS);
	}
	LG_LOG(ERR,
	       "port %u: link still down after %.1f s (is the peer, "
	       "e.g. the memif server, running?)",
	       p->id, seconds);
	return -1;
}

static int
port_setup(const struct lg_opts *o, struct lg_port *p)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t rxd = RX_DESC, txd = TX_DESC;
	unsigned int n_mbufs, room;
	int socket, rc;

	if (find_port(o->port, &p->id) != 0)
		return -1;
	rc = rte_eth_dev_info_get(p->id, &info);
	if (rc != 0) {
		LG_LOG(ERR, "port %u: info: %s", p->id, rte_strerror(-rc));
		return -1;
	}
	socket = rte_eth_dev_socket_id(p->id);
	if (socket < 0)
		socket = (int)rte_socket_id();

	/* Ring sizes in both directions, the TX staging area and the
	 * per-lcore cache; the rest is slack. */
	n_mbufs = 2 * (RX_DESC + TX_DESC) + 2 * TX_CAP + 2 * POOL_CACHE;
	room = RTE_MAX((unsigned int)RTE_MBUF_DEFAULT_BUF_SIZE,
		       RTE_PKTMBUF_HEADROOM + o->mtu + RTE_ETHER_HDR_LEN);
	p->pool = rte_pktmbuf_pool_create("lg_mbufs", n_mbufs, POOL_CACHE, 0,
					  (uint16_t)room, socket);
	if (p->pool == NULL) {
		LG_LOG(ERR, "mbuf pool of %u x %u bytes: %s (more EAL -m?)",
		       n_mbufs, room, rte_strerror(rte_errno));
		return -1;
	}

	memset(&conf, 0, sizeof(conf));
	if (o->mtu > RTE_ETHER_MTU) {
		if (info.max_mtu >= o->mtu)
			conf.rxmode.mtu = o->mtu;
		else
			LG_LOG(WARNING,
			       "port %u: --mtu %u above the port's maximum "
			       "%u; large frames may be dropped",
			       p->id, o->mtu, info.max_mtu);
	}
	rc = rte_eth_dev_configure(p->id, 1, 1, &conf);
	if (rc != 0) {
		LG_LOG(ERR, "port %u: configure: %s", p->id, rte_strerror(-rc));
		return -1;
	}
	p->configured = true;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &rxd, &txd);
	if (rc == 0)
		rc = rte_eth_rx_queue_setup(p->id, 0, rxd, (unsigned int)socket,
					    NULL, p->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(p->id, 0, txd, (unsigned int)socket,
					    NULL);
	if (rc != 0) {
		LG_LOG(ERR, "port %u: queue set-up: %s", p->id,
		       rte_strerror(-rc));
		return -1;
	}
	rc = rte_eth_dev_start(p->id);
	if (rc != 0) {
		/* memif clients fail here when the server's socket is not
		 * there yet, with an unhelpful errno. */
		LG_LOG(ERR,
		       "port %u (%s): start failed: %s; is the peer up "
		       "(for memif: the server and its socket)?",
		       p->id, info.device ? rte_dev_name(info.device) : "?",
		       rte_strerror(-rc));
		return -1;
	}
	p->started = true;
	/* Responses come back to our own address, but a balancer or switch
	 * in between might rewrite it; not every driver knows the notion. */
	rc = rte_eth_promiscuous_enable(p->id);
	if (rc != 0 && rc != -ENOTSUP)
		LG_LOG(WARNING, "port %u: promiscuous: %s", p->id,
		       rte_strerror(-rc));
	rc = rte_eth_macaddr_get(p->id, &p->mac);
	if (rc != 0)
		memset(&p->mac, 0, sizeof(p->mac));
	LG_LOG(INFO, "port %u: %u rx/%u tx descriptors, %u mbufs", p->id, rxd,
	       txd, n_mbufs);
	/* DPDK 22.11's memif client stays down once its peer left, and
	 * after a handshake its peer refused: that port is restarted until
	 * the peer is back. */
	lg_link_init(&p->link,
		     info.driver_name != NULL &&
			     strcmp(info.driver_name, "net_memif") == 0,
		     rte_get_tsc_hz() / 1000 * LINK_CHECK_MS,
		     rte_get_tsc_hz() / 1000 * LINK_START_WAIT_MS,
		     rte_get_tsc_cycles());
	return wait_link(p, o->link_wait_s);
}

static void
port_teardown(struct lg_port *p)
{
	port_stop(p);
	if (p->configured) {
		rte_eth_dev_close(p->id);
		p->configured = false;
	}
	/* After close: the driver may hold mbufs until then. Anything still
	 * out now is ours and a bug. */
	if (p->pool != NULL && rte_mempool_in_use_count(p->pool) != 0)
		LG_LOG(WARNING, "%u mbufs not returned to the pool",
		       rte_mempool_in_use_count(p->pool));
	rte_mempool_free(p->pool);
	p->pool = NULL;
}

static int
run_init(struct lg_run *r, const struct lg_opts *o, struct lg_port *p,
	 double rate, uint64_t first_id, uint32_t point)
{
	bool closed = o->arrival == LG_ARRIVAL_CLOSED;
	double hz = (double)rte_get_tsc_hz();
	uint64_t window = closed ? lg_track_window_n(o->window)
				 : lg_track_window(rate, o->timeout_ms);

	memset(r, 0, offsetof(struct lg_run, rx_copy));
	r->o = o;
	r->port = p->id;
	r->p = p;
	r->link_wait = (uint64_t)(o->link_wait_s * hz);
	r->pool = p->pool;
	r->n_flows = (uint64_t)o->flows * o->src_ips;
	r->src_ip = (uint32_t)o->src_ip[0] << 24 |
		    (uint32_t)o->src_ip[1] << 16 | (uint32_t)o->src_ip[2] << 8 |
		    o->src_ip[3];

	memcpy(r->addrs.src_mac,
	       o->has_src_mac ? o->src_mac : p->mac.addr_bytes,
	       sizeof(r->addrs.src_mac));
	memcpy(r->addrs.dst_mac, o->dst_mac, sizeof(r->addrs.dst_mac));
	r->addrs.key.ip_version = 4;
	r->addrs.key.proto = IPPROTO_UDP;
	memcpy(r->addrs.key.src_addr, o->src_ip, 4);
	memcpy(r->addrs.key.dst_addr, o->dst_ip, 4);
	r->addrs.key.dst_port = o->dst_port;
	/* Responses come from the server's port, so that is the one port
	 * the parser calls ours. */
	r->popts.udp_ports[0] = o->dst_port;
	r->popts.n_udp_ports = 1;

	/* Separate streams so the arrivals do not change with the hint
	 * distribution. */
	if (!closed)
		lg_sched_init(&r->sched, o->arrival, rate, hz, o->seed);
	tlb_rng_seed(&r->hint_rng, o->seed ^ 0x5eedf00dcafe1234ull);
	tlb_hist_init(&r->hist);
	r->per_core = calloc(LG_MAX_CORES, sizeof(*r->per_core));
	if (r->per_core == NULL ||
	    lg_track_init(&r->track, window,
			  (uint64_t)((double)o->timeout_ms * 1e-3 * hz),
			  first_id) != 0) {
		free(r->per_core);
		LG_LOG(ERR, "out of memory for %" PRIu64 " request slots",
		       window);
		return -1;
	}

	r->ns_per_tick = 1e9 / hz;
	r->warm_ticks = o->warmup_s * hz;
	r->end_ticks = o->requests != 0 ? INFINITY
					: (o->warmup_s + o->duration_s) * hz;
	r->lag_bound = (uint64_t)((double)o->max_lag_us * 1e-6 * hz);
	r->pkts_per_msg = lg_pkts_per_msg(o->size, o->mtu);
	r->room = lg_payload_room(o->mtu);
	r->res.target_rps = rate;
	r->res.point = point;
	return 0;
}

static void
run_fini(struct lg_run *r)
{
	lg_track_fini(&r->track);
	free(r->per_core);
	r->per_core = NULL;
}

/* Stalls are counted once each, however many polls they last, and timed:
 * a peer that stops reading must not keep us polling forever. */
static void
note_stall(struct lg_run *r, bool stuck, uint64_t now)
{
	if (likely(!stuck)) {
		r->stalled = false;
	} else if (!r->stalled) {
		r->stalled = true;
		r->stall_since = now;
		r->res.tx_stalls++;
	}
}

/* Hands the staged packets to the port; what it refuses stays staged, in
 * order, for the next try. */
static void
tx_flush(struct lg_run *r, uint64_t now)
{
	uint16_t n;

	if (r->tx_head == r->tx_n || unlikely(!lg_link_up(&r->p->link)))
		return;
	lg_burst_enter();
	n = rte_eth_tx_burst(r->port, 0, &r->tx[r->tx_head],
			     (uint16_t)(r->tx_n - r->tx_head));
	lg_burst_exit();
	r->tx_head = (uint16_t)(r->tx_head + n);
	r->res.tx_pkts += n;
	note_stall(r, r->tx_head != r->tx_n, now);
	if (likely(r->tx_head == r->tx_n))
		r->tx_head = r->tx_n = 0;
}

/* The sender has been stuck for a whole timeout: whatever it would still
 * send could not be answered in time, so the send phase ends here. */
static void
give_up(struct lg_run *r, uint64_t now)
{
	uint64_t due = r->start + (uint64_t)lg_sched_peek(&r->sched);
	struct rte_eth_link link;

	memset(&link, 0, sizeof(link));
	rte_eth_link_get_nowait(r->port, &link);
	LG_LOG(WARNING,
	       "port %u: sender stuck for %u ms (port full or no "
	       "mbufs; link %s): stopping early",
	       r->port, r->o->timeout_ms,
	       link.link_status == RTE_ETH_LINK_UP ? "up" : "down");
	if (now > due && now - due > r->max_lag)
		r->max_lag = now - due;
	r->res.tx_gave_up = true;
	r->sending = false;
	r->send_end = now;
}

/* The link went down: nothing staged or in flight can be answered any
 * more (the rings it was in go with the connection), so the staged packets
 * are dropped and the requests in flight written off now. The counters as
 * they stand are kept for the first loss of the point. */
static void
link_lost(struct lg_run *r)
{
	struct lg_port *p = r->p;
	uint64_t n;

	if (r->tx_n != r->tx_head) {
		r->res.tx_dropped += r->tx_n - r->tx_head;
		rte_pktmbuf_free_bulk(&r->tx[r->tx_head],
				      (unsigned int)(r->tx_n - r->tx_head));
	}
	r->tx_head = r->tx_n = 0;
	r->stalled = false;
	n = lg_track_write_off(&r->track);
	r->res.link_downs++;
	if (!r->res.first_down.valid) {
		const struct lg_phase_counts *w = &r->track.phase[0];
		const struct lg_phase_counts *m = &r->track.phase[1];

		r->res.first_down.valid = true;
		r->res.first_down.sent = w->sent + m->sent;
		r->res.first_down.answered = w->received + w->errors + w->late +
					     m->received + m->errors + m->late;
		r->res.first_down.lost = w->lost + m->lost;
		r->res.first_down.tx_pkts = r->res.tx_pkts;
		r->res.first_down.tx_dropped = r->res.tx_dropped;
		r->res.first_down.written_off = n;
	}
	LG_LOG(WARNING,
	       "port %u: link down (peer gone?): %" PRIu64
	       " requests in flight written off%s",
	       p->id, n,
	       p->link.reconnects ? "; restarting the port until the peer "
				    "is back"
				  : "; waiting for it");
}

static unsigned int rx_step(struct lg_run *r);

/* The link watch (lg.h): every LINK_CHECK_MS, on the polling lcore. */
static void
link_watch(struct lg_run *r, uint64_t now)
{
	struct lg_port *p = r->p;
	struct rte_eth_link link;
	uint64_t restarts = p->link.restarts;
	bool up = true;

	memset(&link, 0, sizeof(link));
	/* A port without a notion of link is always up. */
	if (rte_eth_link_get_nowait(p->id, &link) == 0)
		up = link.link_status == RTE_ETH_LINK_UP;
	switch (lg_link_check(&p->link, now, up)) {
	case LG_LINK_NONE:
		break;
	case LG_LINK_WENT_DOWN:
		link_lost(r);
		break;
	case LG_LINK_RESTART:
		port_restart(p, now);
		r->res.port_restarts += p->link.restarts - restarts;
		break;
	case LG_LINK_CAME_UP:
		/* port_prime's poll, counting what is there already (answers
		 * to requests written off, sent on by the peer's successor). */
		rx_step(r);
		LG_LOG(NOTICE, "port %u: link up again after %.0f ms", p->id,
		       (double)(now - p->link.down_since) * r->ns_per_tick /
			       1e6);
		break;
	}
}

/* The link is down: nothing goes out. Past --link-wait the send phase
 * ends, as after a stall; until then the requests that fall due are
 * skipped (counted, not issued), so the schedule resumes on time when the
 * link is back instead of bursting an outage's worth of requests. Returns
 * true while the link is down. */
static bool
link_down_step(struct lg_run *r, uint64_t now)
{
	const struct lg_link *l = &r->p->link;

	if (likely(lg_link_up(l)))
		return false;
	if (lg_link_down_for(l, now) > r->link_wait) {
		LG_LOG(WARNING,
		       "port %u: link down longer than --link-wait "
		       "%.1f s: stopping early",
		       r->port, r->o->link_wait_s);
		r->res.tx_gave_up = true;
		r->sending = false;
		r->send_end = now;
		return true;
	}
	if (r->o->arrival == LG_ARRIVAL_CLOSED)
		return true;
	for (;;) {
		double off = lg_sched_peek(&r->sched);

		if (off >= r->end_ticks) {
			/* The set duration ended during the outage. */
			r->sending = false;
			r->send_end = RTE_MAX(r->start + (uint64_t)r->end_ticks,
					      r->last_send);
			break;
		}
		if (r->start + (uint64_t)off > now)
			break;
		lg_sched_pop(&r->sched);
		r->res.link_skipped++;
	}
	return true;
}

/* Builds all packets of one request into r->tx; false if the pool is dry
 * (nothing is issued then, and the request waits for the next pass). */
static bool
build_msg(struct lg_run *r, uint64_t now, bool measured)
{
	const struct lg_opts *o = r->o;
	struct rte_mbuf **m = &r->tx[r->tx_n];
	struct tlb_rpc_hdr h;
	uint32_t left = o->size;
	double hint;

	if (unlikely(rte_pktmbuf_alloc_bulk(r->pool, m, r->pkts_per_msg) !=
		     0)) {
		note_stall(r, true, now);
		return false;
	}
	hint = tlb_dist_sample(&o->dist, &r->hint_rng);
	memset(&h, 0, sizeof(h));
	h.magic = TLB_RPC_MAGIC;
	h.version = TLB_RPC_VERSION;
	h.type = TLB_MSG_REQUEST;
	h.flags = TLB_RPC_F_HINT;
	h.svc_class = o->svc_class;
	h.req_id = lg_track_issue(&r->track, now, measured);
	h.pkt_cnt = (uint16_t)r->pkts_per_msg;
	h.svc_hint_ns = hint >= (double)UINT32_MAX ? UINT32_MAX
						   : (uint32_t)llround(hint);
	h.client_ts = now;
	/* All packets of a message on one flow: the balancer keeps a
	 * message together by client address, port and id. */
	{
		uint64_t f = h.req_id % r->n_flows;
		uint32_t ip = r->src_ip + (uint32_t)(f / o->flows);

		r->addrs.key.src_port =
			(uint16_t)(o->src_port_base + f % o->flows);
		r->addrs.key.src_addr[0] = (uint8_t)(ip >> 24);
		r->addrs.key.src_addr[1] = (uint8_t)(ip >> 16);
		r->addrs.key.src_addr[2] = (uint8_t)(ip >> 8);
		r->addrs.key.src_addr[3] = (uint8_t)ip;
	}

	for (uint32_t i = 0; i < r->pkts_per_msg; i++) {
		uint16_t plen = (uint16_t)RTE_MIN(left, r->room);
		size_t len;

		h.pkt_idx = (uint16_t)i;
		/* Payload bytes are zeros: the server only needs the count. */
		len = tlb_build_frame(rte_pktmbuf_mtod(m[i], void *),
				      rte_pktmbuf_tailroom(m[i]), &r->addrs, &h,
				      NULL, plen);
		/* Cannot fail: the pool's buffers fit --mtu (port_setup). */
		RTE_VERIFY(len != 0);
		m[i]->data_len = (uint16_t)len;
		m[i]->pkt_len = (uint32_t)len;
		left -= plen;
	}
	r->tx_n = (uint16_t)(r->tx_n + r->pkts_per_msg);
	return true;
}

static void
tx_step(struct lg_run *r, uint64_t now)
{
	const struct lg_opts *o = r->o;
	unsigned int msgs = 0;

	if (unlikely(link_down_step(r, now)))
		return;
	tx_flush(r, now);
	if (unlikely(r->stalled && now - r->stall_since > r->track.timeout)) {
		give_up(r, now);
		return;
	}
	/* The port is full: sending more now would only reorder. The
	 * schedule keeps running, so the wait shows up as lag. */
	if (r->tx_n != 0)
		return;

	while (msgs < BURST && r->tx_n + r->pkts_per_msg <= TX_CAP) {
		double off = lg_sched_peek(&r->sched);
		uint64_t due, t;
		bool measured;

		if (unlikely(off >= r->end_ticks ||
			     (o->requests != 0 &&
			      r->track.phase[LG_PHASE_MEASURED].sent >=
				      o->requests))) {
			/* The send phase lasts until the next request would
			 * have gone out (or the set duration), not until the
			 * last one did: else the achieved rate would count
			 * one gap too few. Later than that if we were late. */
			uint64_t end =
				r->start + (uint64_t)(off < r->end_ticks
							      ? off
							      : r->end_ticks);

			r->sending = false;
			r->send_end = RTE_MAX(r->last_send, end);
			break;
		}
		due = r->start + (uint64_t)off;
		if (due > now)
			break;
		t = rte_rdtsc();
		measured = off >= r->warm_ticks;
		if (!build_msg(r, t, measured))
			break;
		lg_sched_pop(&r->sched);
		r->last_send = t;
		msgs++;
		if (measured) {
			uint64_t lag = t - due;

			if (unlikely(lag > r->max_lag))
				r->max_lag = lag;
			if (unlikely(lag > r->lag_bound))
				r->res.late_sends++;
		}
	}
	tx_flush(r, now);
}

/* Closed loop: a new request whenever one of the window is resolved (a
 * response, or a timeout: lg_track_expire frees its place). */
static void
tx_step_closed(struct lg_run *r, uint64_t now)
{
	const struct lg_opts *o = r->o;
	double off = (double)(now - r->start);
	uint64_t room;
	unsigned int msgs = 0;

	if (unlikely(off < r->end_ticks && link_down_step(r, now)))
		return;
	tx_flush(r, now);
	if (unlikely(r->stalled && now - r->stall_since > r->track.timeout)) {
		give_up(r, now);
		return;
	}
	if (unlikely(off >= r->end_ticks)) {
		r->sending = false;
		r->send_end = RTE_MAX(r->start + (uint64_t)r->end_ticks,
				      r->last_send);
		return;
	}
	if (r->tx_n != 0)
		return;
	room = lg_closed_room(&r->track, o->window);
	if (unlikely(o->requests != 0 &&
		     r->track.phase[LG_PHASE_MEASURED].sent >= o->requests)) {
		/* As in the open loop, the send phase lasts until the next
		 * request would have gone out: here, when the window next
		 * has room. */
		if (room > 0) {
			r->sending = false;
			r->send_end = RTE_MAX(now, r->last_send);
		}
		return;
	}
	while (room > 0 && msgs < BURST &&
	       r->tx_n + r->pkts_per_msg <= TX_CAP) {
		uint64_t t = rte_rdtsc();

		if (o->requests != 0 &&
		    r->track.phase[LG_PHASE_MEASURED].sent >= o->requests)
			break;
		if (!build_msg(r, t, (double)(t - r->start) >= r->warm_ticks))
			break;
		r->last_send = t;
		msgs++;
		room--;
	}
	tx_flush(r, now);
}

static void
handle_rx(struct lg_run *r, struct rte_mbuf *m, uint64_t now)
{
	const void *data;
	struct tlb_parsed p;
	enum tlb_parse_err err;
	enum lg_match match;
	uint64_t sent, ts, ns;
	bool measured, is_error;

	if (likely(rte_pktmbuf_is_contiguous(m))) {
		data = rte_pktmbuf_mtod(m, const void *);
	} else {
		if (m->pkt_len > sizeof(r->rx_copy)) {
			r->res.parse_errors++;
			return;
		}
		data = rte_pktmbuf_read(m, 0, m->pkt_len, r->rx_copy);
	}
	err = tlb_parse_frame(data, m->pkt_len, &r->popts, &p);
	if (unlikely(err != TLB_PARSE_OK)) {
		r->res.parse_errors++;
		LG_LOG(DEBUG, "rx: %s (%u bytes)", tlb_parse_err_str(err),
		       m->pkt_len);
		return;
	}
	if (unlikely(p.cls != TLB_FRAME_RESPONSE)) {
		r->res.rx_other++;
		return;
	}
	/* One response per message completes it; further packets of a
	 * multi-packet response carry nothing we measure. */
	if (unlikely(p.hdr.pkt_idx != 0)) {
		r->res.rx_extra_pkts++;
		return;
	}
	is_error = p.hdr.type == TLB_MSG_ERROR || p.hdr.status != 0;
	match = lg_track_complete(&r->track, p.hdr.req_id, is_error, &sent,
				  &measured);
	if (match != LG_MATCH_OK || !measured || is_error)
		return;
	ts = p.hdr.client_ts;
	/* The echo is what the server saw; if it is not what we sent the
	 * server mangled it, and our own record is the one to trust. */
	if (unlikely(ts != sent)) {
		r->res.ts_mismatch++;
		ts = sent;
	}
	ns = now > ts ? (uint64_t)((double)(now - ts) * r->ns_per_tick) : 0;
	tlb_hist_record(&r->hist, ns);
	r->per_core[p.hdr.server_core]++;
	if (p.hdr.server_core >= r->n_cores)
		r->n_cores = p.hdr.server_core + 1u;
}

static unsigned int
rx_step(struct lg_run *r)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t n;
	uint64_t now;

	if (unlikely(!lg_link_up(&r->p->link))) {
		rte_delay_us_sleep(LINK_DOWN_NAP_US);
		return 0;
	}
	lg_burst_enter();
	n = rte_eth_rx_burst(r->port, 0, pkts, BURST);
	lg_burst_exit();
	/* One timestamp for the burst: all of it arrived by now, and the
	 * time spent parsing the first packets is not the later ones'. */
	now = rte_rdtsc();

	for (uint16_t i = 0; i < n; i++)
		handle_rx(r, pkts[i], now);
	rte_pktmbuf_free_bulk(pkts, n);
	return n;
}

/* The figures of a finished run. The measured send time runs from the end
 * of the warm-up to the end of the send phase. */
static void
run_result(struct lg_run *r)
{
	struct lg_result *res = &r->res;
	uint64_t mstart = r->start + (uint64_t)r->warm_ticks;
	double secs = 0.0;

	if (r->send_end > mstart)
		secs = (double)(r->send_end - mstart) * r->ns_per_tick / 1e9;
	res->measured = r->track.phase[LG_PHASE_MEASURED];
	res->warmup = r->track.phase[LG_PHASE_WARMUP];
	res->duplicates = r->track.duplicates;
	res->unknown = r->track.unknown;
	res->evicted = r->track.evicted;
	res->measured_s = secs;
	if (secs > 0.0) {
		res->achieved_rps = (double)res->measured.sent / secs;
		res->received_rps = (double)res->measured.received / secs;
	}
	res->behind = r->max_lag > r->lag_bound || res->tx_gave_up;
	res->max_lag_ns = (uint64_t)((double)r->max_lag * r->ns_per_tick);
	res->hist = &r->hist;
	res->per_core = r->per_core;
	res->n_cores = r->n_cores;
}

/* Between rate points: answers to requests already counted lost may still
 * be on their way (an overloaded server works off its queue). Waiting for
 * them, up to --settle, counts them late in this point and lets the system
 * empty before the next point; nothing is waited for when all answered. */
static void
settle(struct lg_run *r)
{
	double hz = (double)rte_get_tsc_hz();
	uint64_t deadline = rte_rdtsc() + (uint64_t)(r->o->settle_s * hz);
	sig_atomic_t sig = stop_signals;

	uint64_t now;

	while (lg_track_unanswered(&r->track) != 0 && stop_signals == sig &&
	       (now = rte_rdtsc()) < deadline) {
		if (lg_link_due(&r->p->link, now))
			link_watch(r, now);
		rx_step(r);
	}
}

/* Sends the schedule and collects responses until every request is
 * resolved; then, with more points to come, settles. Returns with r->res
 * filled. */
static void
run_loop(struct lg_run *r, bool more)
{
	bool closed = r->o->arrival == LG_ARRIVAL_CLOSED;
	uint64_t timeout = r->track.timeout;
	uint64_t deadline = 0, now;
	sig_atomic_t sig_at_drain = 0;

	r->sending = true;
	r->start = rte_rdtsc();
	for (;;) {
		now = rte_rdtsc();
		if (unlikely(lg_link_due(&r->p->link, now)))
			link_watch(r, now);
		if (likely(r->sending)) {
			if (unlikely(stop_signals != 0)) {
				r->sending = false;
				r->send_end = now;
				r->res.interrupted = true;
			} else if (closed) {
				tx_step_closed(r, now);
			} else {
				tx_step(r, now);
			}
			if (!r->sending) {
				deadline = RTE_MAX(r->send_end, now) + timeout;
				sig_at_drain = stop_signals;
			}
		} else {
			/* Stragglers: keep offering what the port refused. */
			tx_flush(r, now);
			if (r->track.outstanding == 0 && r->tx_n == 0)
				break;
			if (now >= deadline || stop_signals != sig_at_drain) {
				if (stop_signals != sig_at_drain)
					r->res.interrupted = true;
				break;
			}
		}
		rx_step(r);
		lg_track_expire(&r->track, now);
	}

	/* Whatever the port never took is freed here and its request was
	 * (or now is) counted lost. */
	if (r->tx_n != r->tx_head) {
		r->res.tx_dropped = r->tx_n - r->tx_head;
		rte_pktmbuf_free_bulk(&r->tx[r->tx_head],
				      (unsigned int)(r->tx_n - r->tx_head));
	}
	r->tx_head = r->tx_n = 0;
	lg_track_finish(&r->track);
	if (more && !r->res.interrupted)
		settle(r);

	run_result(r);
	if (r->track.evicted != 0)
		LG_LOG(WARNING,
		       "%" PRIu64 " requests counted lost early: the "
		       "request window (%" PRIu64 ") was too small",
		       r->track.evicted, r->track.mask + 1);
}

static void
eal_usage_hook(const char *prog)
{
	lg_usage(stdout, prog);
}

/* What the rate points of one invocation share. */
struct lg_ctx {
	const struct lg_opts *o;
	struct lg_port *port;
	struct lg_run *run;
	FILE *csv;
	uint64_t next_id; /* one id space over all points */
	uint32_t point;
	uint32_t n_points; /* known in a sweep; 0 in a search */
	bool table;        /* human output as a table, one row per point */
	bool failed;
	struct cli_progress progress; /* of a sweep or a search */
};

/* Runs one rate point and reports it. Returns 0, or non-zero to stop: a
 * signal (the point was still reported) or an error. */
static int
measure_point(struct lg_ctx *c, double rate, struct lg_slo_sample *s)
{
	const struct lg_opts *o = c->o;
	struct lg_run *run = c->run;
	const struct lg_result *res = &run->res;
	bool more = c->n_points == 0 || c->point + 1 < c->n_points;

	if (run_init(run, o, c->port, rate, c->next_id, c->point) != 0) {
		c->failed = true;
		return -1;
	}
	cli_progress_clear(&c->progress);
	if (o->arrival == LG_ARRIVAL_CLOSED)
		LG_LOG(INFO,
		       "point %u: closed loop, window %u, %" PRIu64
		       " request slots",
		       c->point, o->window, run->track.mask + 1);
	else
		LG_LOG(INFO,
		       "point %u: %.0f rps (%s), %" PRIu64 " request slots",
		       c->point, rate,
		       o->arrival == LG_ARRIVAL_FIXED ? "fixed" : "poisson",
		       run->track.mask + 1);
	cli_progress_step(&c->progress, c->point);
	run_loop(run, more);
	cli_progress_clear(&c->progress);

	if (o->json)
		lg_report_json(stdout, o, res);
	else if (c->table)
		lg_table_row(stdout, o, res);
	else
		lg_report_human(stdout, o, res);
	fflush(stdout);
	if (c->csv != NULL) {
		lg_csv_row(c->csv, o, res);
		fflush(c->csv);
	}
	if (s != NULL) {
		s->p99_ns = (double)tlb_hist_quantile(res->hist, 0.99);
		/* Error responses are no better than none for the SLO. */
		s->lost = res->measured.lost + res->measured.errors;
		s->achieved_rps = res->achieved_rps;
	}
	c->next_id = run->track.next_id;
	c->point++;
	run_fini(run);
	return res->interrupted || stop_signals != 0 ? 1 : 0;
}

static int
measure_cb(void *ctx, double rate, struct lg_slo_sample *s)
{
	return measure_point(ctx, rate, s);
}

/* Opens an output file and writes its header; before the EAL, so a bad
 * path costs no device set-up. */
static FILE *
open_csv(const char *path, void (*header)(FILE *))
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "turbolb-loadgen: %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	header(f);
	fflush(f);
	return f;
}

static int
close_csv(FILE *f, const char *path)
{
	if (f == NULL)
		return 0;
	/* A full disk shows up here at the latest. */
	if (ferror(f) || fclose(f) != 0) {
		LG_LOG(ERR, "%s: write failed", path);
		return -1;
	}
	return 0;
}

/* The rate points: a sweep, or an SLO search. */
static int
run_points(struct lg_ctx *c, FILE *slo_csv)
{
	const struct lg_opts *o = c->o;
	struct lg_slo_result slo;
	struct lg_slo_cfg cfg;

	if (c->table && !o->json)
		lg_table_header(stdout);
	if (o->slo_multiple == 0.0) {
		/* One rate alone needs no progress line. */
		cli_progress_start(&c->progress, stderr,
				   o->quiet || o->n_rates < 2, "sweep",
				   o->n_rates);
		for (uint32_t i = 0; i < o->n_rates; i++)
			if (measure_point(c, o->rates[i], NULL) != 0)
				break;
		cli_progress_end(&c->progress);
		return c->failed ? -1 : 0;
	}
	cfg = (struct lg_slo_cfg){
		.slo_ns = lg_slo_ns(o),
		.lo = o->rate_min,
		.hi = o->rate_max,
		.iterations = o->slo_iterations,
	};
	LG_LOG(INFO,
	       "SLO search: p99 <= %.0f ns between %.0f and %.0f rps, "
	       "%u bisection steps",
	       cfg.slo_ns, cfg.lo, cfg.hi, cfg.iterations);
	/* Both bounds, then at most one probe per bisection step. */
	cli_progress_start(&c->progress, stderr, o->quiet, "SLO search",
			   cfg.iterations + 2);
	lg_slo_search(&cfg, measure_cb, c, &slo);
	cli_progress_end(&c->progress);
	if (c->failed)
		return -1;
	if (o->json)
		lg_slo_report_json(stdout, o, &slo);
	else
		lg_slo_report_human(stdout, o, &slo);
	fflush(stdout);
	if (slo_csv != NULL)
		lg_slo_csv_row(slo_csv, o, &slo);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct lg_run run;   /* big: the RX copy buffer lives in it */
	static struct lg_opts opts; /* big: the rate list lives in it */
	struct lg_port port = {0};
	struct lg_ctx ctx;
	FILE *csv = NULL, *slo_csv = NULL;
	int sep = cli_find_dashdash(argc, argv);
	char **app_argv;
	int app_argc = argc - sep;
	int rc, status = EXIT_FAILURE;

	/* Our options first, so a usage error needs no EAL. argv[sep] ("--"
	 * or the end) becomes the program name of the option vector. */
	app_argv = calloc((size_t)app_argc + 2, sizeof(*app_argv));
	if (app_argv == NULL)
		return EXIT_FAILURE;
	app_argv[0] = argv[0];
	for (int i = 1; i < app_argc; i++)
		app_argv[i] = argv[sep + i];
	if (app_argc < 1)
		app_argc = 1;
	rc = lg_opts_parse(app_argc, app_argv, &opts, stdout, stderr);
	free(app_argv);
	if (rc != 0)
		return rc > 0 ? EXIT_SUCCESS : 2;
	if (opts.csv_path != NULL) {
		csv = open_csv(opts.csv_path, lg_csv_header);
		if (csv == NULL)
			return EXIT_FAILURE;
	}
	if (opts.slo_csv_path != NULL) {
		slo_csv = open_csv(opts.slo_csv_path, lg_slo_csv_header);
		if (slo_csv == NULL) {
			if (csv != NULL)
				fclose(csv);
			return EXIT_FAILURE;
		}
	}

	/* EAL and our logs to stderr: stdout carries only the results (the
	 * EAL's default console stream writes to stdout). */
	rte_openlog_stream(stderr);
	rte_set_application_usage_hook(eal_usage_hook);
	rc = rte_eal_init(sep, argv);
	if (rc < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", argv[0],
			rte_strerror(rte_errno));
		goto out_files;
	}
	if (install_signals() != 0) {
		LG_LOG(ERR, "signal handlers: %s", strerror(errno));
		goto out;
	}
	if (port_setup(&opts, &port) != 0)
		goto out;
	LG_LOG(INFO,
	       "port %u: hint %s, %u packet%s per request, %" PRIu64
	       " flows, %u rate point%s%s, TSC %.3f MHz",
	       port.id, opts.dist_spec, lg_pkts_per_msg(opts.size, opts.mtu),
	       lg_pkts_per_msg(opts.size, opts.mtu) == 1 ? "" : "s",
	       (uint64_t)opts.flows * opts.src_ips, opts.n_rates,
	       opts.n_rates == 1 ? "" : "s",
	       opts.slo_multiple != 0.0 ? " (SLO search)" : "",
	       (double)rte_get_tsc_hz() / 1e6);
	ctx = (struct lg_ctx){
		.o = &opts,
		.port = &port,
		.run = &run,
		.csv = csv,
		.n_points = opts.n_rates,
		/* One rate alone keeps the detailed report. */
		.table = opts.n_rates != 1 || opts.slo_multiple != 0.0,
	};
	if (run_points(&ctx, slo_csv) == 0)
		status = EXIT_SUCCESS;
out:
	port_teardown(&port);
	if (lg_unmap_waits != 0)
		LG_LOG(INFO,
		       "%" PRIu64 " unmaps waited for a burst to end "
		       "(the memif disconnect race, avoided)",
		       lg_unmap_waits);
	rte_eal_cleanup();
out_files:
	if (close_csv(csv, opts.csv_path) != 0 ||
	    close_csv(slo_csv, opts.slo_csv_path) != 0)
		status = EXIT_FAILURE;
	return status;
}
