/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's shared state: its configuration, ports and logical
 * cores, the counters of each core, and the frame steps both workers take
 * (the spin and kv worker, spin.c; the emulated cores, emulate.c).
 *
 * Threads: the main lcore parses the options, sets up the ports and the
 * credit ring, then watches both (main.c, ports.c) while the worker
 * lcores serve; a core's counters have one writer, its worker lcore, and
 * are read once the workers have stopped (stats.c).
 */
#ifndef TURBOLB_SERVER_H
#define TURBOLB_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "turbolb/credit_ring.h"
#include "turbolb/host.h"
#include "turbolb/proto.h"

#include "emu.h"
#include "unmap_guard.h"

extern int srv_logtype;

#define SRV_LOG(level, fmt, ...)                                               \
	rte_log(RTE_LOG_##level, srv_logtype, "turbolb.server: " fmt "\n",     \
		##__VA_ARGS__)

#define BURST           32
#define PREFETCH_AHEAD  3
#define NB_RXD          1024
#define NB_TXD          1024
#define POOL_CACHE      256
#define TX_WAIT_PER_SEC 1000  /* a full TX ring is retried for 1 ms */
#define BEAT_PER_SEC    10000 /* heartbeat at most every 100 us */
#define STALE_POLL_MS   20    /* main lcore: ring and link checks */
#define LINK_WAIT_MS    2000  /* memif: restart a port down this long */

/* kv.c: entries per set, the smallest --kv-capacity. */
#define KV_WAYS 8

/* How completions reach turbolbd (--feedback). */
enum srv_feedback {
	SRV_FB_RING,   /* a credit ring (--credit-ring) */
	SRV_FB_PACKET, /* feedback frames with every completion */
	SRV_FB_STATE,  /* frames of run state and heartbeat only: turbolbd
			* completes requests from the responses */
};

enum srv_mode {
	MODE_SPIN,
	MODE_KV,
	MODE_EMULATE,
};

/* Counters of one logical core; its worker lcore is the only writer, the
 * main lcore reads them once the workers have stopped. */
struct core_stats {
	uint64_t rx;          /* frames received */
	uint64_t served;      /* requests executed (final packets) */
	uint64_t tx;          /* responses sent */
	uint64_t tx_drops;    /* responses the TX queue refused */
	uint64_t nonfinal;    /* non-final packets of multi-packet msgs */
	uint64_t not_request; /* valid frames that are no request to us */
	uint64_t nonlinear;   /* multi-segment frames we could not flatten */
	uint64_t resp_err;    /* responses that could not be built */
	uint64_t idle_sleeps;
	uint64_t fb_frames;  /* feedback frames sent (--feedback packet) */
	uint64_t fb_drops;   /* feedback frames the TX queue refused */
	uint64_t fb_no_mbuf; /* feedback frames with no mbuf to go in */
	uint64_t kv_get;
	uint64_t kv_put;
	uint64_t kv_del;
	uint64_t kv_hit;
	uint64_t kv_miss;
	uint64_t kv_full;
	uint64_t kv_bad;
	uint64_t parse_err[TLB_PARSE_ERR_MAX];
};

/* Port control (main lcore: rw). */
enum port_state {
	PORT_RUNNING,
	PORT_PAUSING, /* waiting for every core on it to stop polling */
	PORT_STOPPED, /* trying to start it again */
};

struct srv_port {
	uint16_t id;
	uint16_t n_queues;
	uint16_t nb_rxd;
	uint16_t nb_txd;
	char name[RTE_ETH_NAME_MAX_LEN];
	bool configured; /* rte_eth_dev_configure() done: close it */
	bool reconnects; /* memif: restart the port on link down */
	enum port_state state;
	int last_link;
	unsigned int down_ticks;
	unsigned int start_tries;
	uint64_t restarts;
	/* main lcore: wo; this port's workers: ro. Set while the port must
	 * not be polled. */
	bool pause_req;
};

struct srv_core {
	uint32_t idx; /* logical core */
	unsigned int lcore;
	struct srv_port *port;
	uint16_t queue;
	/* Its worker lcore's unmap guard slot (shared by the emulated cores,
	 * which all run on one lcore). */
	struct srv_burst_slot *burst;
	struct tlb_host_core *credit; /* NULL without a credit ring */
	bool paused;                  /* worker: wo, main lcore: ro */
	struct emu_core emu;          /* --mode emulate: the core's FIFO */
	uint64_t last_beat; /* --mode emulate: TSC of the last heartbeat */
	struct core_stats st;
} __rte_cache_aligned;

struct srv_conf {
	uint32_t n_cores;
	const char *port_names[TLB_CR_MAX_CORES];
	uint32_t n_port_names;
	bool port_per_core;
	enum srv_mode mode;
	const char *credit_ring;
	enum srv_feedback feedback; /* --feedback */
	uint32_t feedback_hold_us;  /* --feedback-hold-us */
	const char *agent_ring;     /* --agent-ring: for turbolb-kickd */
	uint32_t idle_sleep_us;
	uint32_t batch;
	const char *stats_file;
	uint32_t kv_capacity;
	uint32_t max_spin_us;
	uint32_t emu_depth;
	bool emu_arrival_sent; /* arrival = the request's client_ts */
	struct tlb_parse_opts popts;
};

/* Set by SIGINT and SIGTERM: every loop stops. */
extern volatile bool force_quit;

extern struct srv_conf conf;           /* options.c */
extern const char *const mode_names[]; /* options.c */
extern struct srv_port *ports;         /* ports.c */
extern uint32_t n_ports;
extern struct rte_mempool *pool;
extern struct srv_core *cores; /* main.c */
extern uint64_t tsc_hz;
extern uint64_t reattaches;
extern uint64_t reattach_failures;

/* options.c: fills conf from the arguments after the EAL's "--" (argv[0]
 * the program). Returns CLI_OK, CLI_DONE after --help, or CLI_ERROR after
 * a usage error said on stderr. */
int parse_args(int argc, char **argv);
/* The text of --help, for the EAL's usage hook too. */
void usage(FILE *f);

/* kv.c: the table of --mode kv, shared by every core. */
int kv_init(uint32_t capacity);
void kv_free(void);
uint16_t kv_exec(struct core_stats *cs, struct rte_mbuf *m,
		 const struct tlb_parsed *p, enum tlb_msg_type *type,
		 uint16_t *resp_len);

/* spin.c: the worker of a logical core in --mode spin and kv (arg: its
 * struct srv_core). */
int core_loop(void *arg);

/* emulate.c: the one worker of --mode emulate, and what it leaves held
 * once it has stopped. */
int emu_loop(void *arg);
void emu_release(void);

/* ports.c: the ports and which (port, queue) each core polls; their
 * set-up with the mbuf pool; their close; and the main lcore's watch of
 * one port, every STALE_POLL_MS. Errors are logged and return -1. */
int find_ports(void);
int ports_setup(void);
void ports_close(void);
void port_watch(struct srv_port *p);

/* stats.c: the final JSON stats, to --stats FILE or stdout. */
int write_stats(void);

/* Whether m is the last packet of a request to us: true with *p filled
 * in, or false once m has been counted and freed. */
static inline bool
parse_request(struct srv_core *c, struct rte_mbuf *m, struct tlb_parsed *p)
{
	enum tlb_parse_err perr;

	if (unlikely(!rte_pktmbuf_is_contiguous(m)) &&
	    rte_pktmbuf_linearize(m) != 0) {
		c->st.nonlinear++;
		goto drop;
	}
	perr = tlb_parse_frame(rte_pktmbuf_mtod(m, const void *),
			       rte_pktmbuf_data_len(m), &conf.popts, p);
	if (unlikely(perr != TLB_PARSE_OK)) {
		c->st.parse_err[perr < TLB_PARSE_ERR_MAX ? perr : 0]++;
		goto drop;
	}
	if (unlikely(p->cls != TLB_FRAME_REQUEST)) {
		c->st.not_request++;
		goto drop;
	}
	/* All packets of a message reach the same core (the daemon keeps
	 * them together); the message is served once, when its last packet
	 * arrives, and the others only counted. */
	if (unlikely(p->hdr.pkt_idx != p->hdr.pkt_cnt - 1)) {
		c->st.nonfinal++;
		goto drop;
	}
	return true;
drop:
	rte_pktmbuf_free(m);
	return false;
}

/* A core's bursts on its queue. Every rx/tx burst of a worker goes
 * through these: the unmap guard (unmap_guard.c) keeps the memif PMD from
 * unmapping the rings under them when the peer leaves. */
static inline uint16_t
core_rx_burst(struct srv_core *c, struct rte_mbuf **rx, uint16_t n)
{
	uint16_t nb;

	srv_burst_enter(c->burst);
	nb = rte_eth_rx_burst(c->port->id, c->queue, rx, n);
	srv_burst_exit(c->burst);
	return nb;
}

static inline uint16_t
core_tx_burst(struct srv_core *c, struct rte_mbuf **tx, uint16_t n)
{
	uint16_t sent;

	srv_burst_enter(c->burst);
	sent = rte_eth_tx_burst(c->port->id, c->queue, tx, n);
	srv_burst_exit(c->burst);
	return sent;
}

/* --feedback packet: the core's feedback frame when it has one to send
 * (libturbolb-host decides: a batch of completions, the oldest held one
 * --feedback-hold-us old, a state change, one that did not get out, a
 * heartbeat after a quiet 100 ms), else NULL. */
static inline struct rte_mbuf *
feedback_frame(struct srv_core *c)
{
	uint8_t buf[TLB_HOST_FEEDBACK_LEN];
	struct rte_mbuf *m;
	size_t n;

	if (conf.feedback == SRV_FB_RING)
		return NULL;
	n = tlb_host_feedback(c->credit, buf, sizeof(buf));
	if (likely(n == 0))
		return NULL;
	m = rte_pktmbuf_alloc(pool);
	if (unlikely(m == NULL)) {
		c->st.fb_no_mbuf++;
		tlb_host_feedback_unsent(c->credit);
		return NULL;
	}
	memcpy(rte_pktmbuf_append(m, (uint16_t)n), buf, n);
	return m;
}

/* Sends n frames on the core's queue: responses, and with fb a feedback
 * frame last (tx[n - 1]). */
static inline void
send_frames(struct srv_core *c, struct rte_mbuf **tx, uint16_t n, bool fb)
{
	uint16_t sent = core_tx_burst(c, tx, n);
	uint64_t deadline;

	/* A full TX ring is mostly a peer that was briefly descheduled
	 * (several polling processes on few CPUs): a response dropped here
	 * costs the client a timeout, so give the peer a moment first. */
	if (unlikely(sent < n)) {
		deadline = rte_rdtsc() + tsc_hz / TX_WAIT_PER_SEC;
		while (sent < n && rte_rdtsc() < deadline && !force_quit)
			sent += core_tx_burst(c, tx + sent,
					      (uint16_t)(n - sent));
	}
	if (unlikely(sent < n))
		rte_pktmbuf_free_bulk(tx + sent, (unsigned int)(n - sent));
	if (fb) {
		if (sent == n) {
			c->st.fb_frames++;
		} else {
			c->st.fb_drops++;
			tlb_host_feedback_unsent(c->credit);
		}
		n--;
		sent = RTE_MIN(sent, n);
	}
	c->st.tx += sent;
	c->st.tx_drops += (uint64_t)(n - sent);
}

/* Sends n responses, with the core's feedback frame when one is due. */
static inline void
send_responses(struct srv_core *c, struct rte_mbuf **tx, uint16_t n)
{
	struct rte_mbuf *fb = feedback_frame(c);

	if (fb != NULL)
		tx[n++] = fb;
	if (n != 0)
		send_frames(c, tx, n, fb != NULL);
}

/* Sends the core's feedback frame, if one is due, on its own. */
static inline void
send_feedback(struct srv_core *c)
{
	struct rte_mbuf *fb = feedback_frame(c);

	if (fb != NULL)
		send_frames(c, &fb, 1, true);
}

#endif /* TURBOLB_SERVER_H */
