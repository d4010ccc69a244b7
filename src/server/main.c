/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server: the reference RPC server. One ethdev port with N RX and
 * N TX queues, logical core i on its own EAL worker lcore polling RX queue
 * i and answering on TX queue i; or, with --port-per-core, N ports (one VF
 * per host core on real hardware) with core i on queue 0 of port i.
 * Modes: spin (busy-waits for the request's service-time hint: the Turbo
 * evaluation's synthetic server), kv (GET/PUT/DEL on an in-memory table
 * shared by all cores) and emulate (one worker lcore carries every logical
 * core as an emulated FIFO server in TSC time, src/server/emu.h: a request
 * completes at max(its arrival, the core's previous completion) + its
 * service-time hint, and its response leaves then). With a
 * credit ring it reports completions, run state and heartbeats through
 * libturbolb-host, and reattaches when the daemon restarts.
 *
 *   turbolb-server [EAL args] -- --cores N [--port NAME]... [--port-per-core]
 *       [--mode spin|kv|emulate] [--emu-depth N] [--emu-arrival poll|sent]
 *       [--credit-ring NAME] [--idle-sleep-us U] [--udp-port 9000]
 *       [--batch B] [--stats FILE] [--kv-capacity N] [--max-spin-us U]
 *
 * Wire formats: docs/protocol.md (RPC) and docs/host-integration.md (kv).
 */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_jhash.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>
#include <rte_rwlock.h>

#include "turbolb/credit_ring.h"
#include "turbolb/host.h"
#include "turbolb/proto.h"

#include "emu.h"

RTE_LOG_REGISTER(srv_logtype, turbolb.server, INFO);

#define SRV_LOG(level, fmt, ...)                                             \
	rte_log(RTE_LOG_##level, srv_logtype,                                \
		"turbolb.server: " fmt "\n", ##__VA_ARGS__)

#define BURST 32
#define PREFETCH_AHEAD 3
#define NB_RXD 1024
#define NB_TXD 1024
#define POOL_CACHE 256
#define TX_WAIT_PER_SEC 1000	/* a full TX ring is retried for 1 ms */
#define BEAT_PER_SEC 10000	/* heartbeat at most every 100 us */
#define STALE_POLL_MS 20	/* main lcore: ring and link checks */
#define LINK_WAIT_MS 2000	/* memif: restart a port down this long */
#define DEFAULT_UDP_PORT 9000
#define DEFAULT_KV_CAPACITY 16384u
#define DEFAULT_MAX_SPIN_US 100000u
#define DEFAULT_EMU_DEPTH 1024u

/* kv: see docs/host-integration.md */
#define KV_OP_GET 1
#define KV_OP_PUT 2
#define KV_OP_DEL 3
#define KV_HDR_LEN 3		/* op (1) + key length (2, big endian) */
#define KV_KEY_MAX 64
#define KV_VAL_MAX 1024
#define KV_WAYS 8
#define KV_SEED 0x746c626bu

enum srv_mode {
	MODE_SPIN,
	MODE_KV,
	MODE_EMULATE,
};

static const char *const mode_names[] = {
	[MODE_SPIN] = "spin",
	[MODE_KV] = "kv",
	[MODE_EMULATE] = "emulate",
};

struct kv_entry {
	uint16_t klen;		/* 0: free */
	uint16_t vlen;
	uint8_t key[KV_KEY_MAX];
	uint8_t val[KV_VAL_MAX];
};

/* A set of KV_WAYS entries behind one lock: lookups of different sets
 * never contend, and a lookup reads at most one set. */
struct kv_set {
	rte_rwlock_t lock;
	struct kv_entry e[KV_WAYS];
} __rte_cache_aligned;

struct kv_table {
	uint32_t n_sets;	/* power of two */
	uint32_t mask;
	struct kv_set *sets;
};

/* Counters of one logical core; its worker lcore is the only writer, the
 * main lcore reads them once the workers have stopped. */
struct core_stats {
	uint64_t rx;		/* frames received */
	uint64_t served;	/* requests executed (final packets) */
	uint64_t tx;		/* responses sent */
	uint64_t tx_drops;	/* responses the TX queue refused */
	uint64_t nonfinal;	/* non-final packets of multi-packet msgs */
	uint64_t not_request;	/* valid frames that are no request to us */
	uint64_t nonlinear;	/* multi-segment frames we could not flatten */
	uint64_t resp_err;	/* responses that could not be built */
	uint64_t idle_sleeps;
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
	PORT_PAUSING,	/* waiting for every core on it to stop polling */
	PORT_STOPPED,	/* trying to start it again */
};

struct srv_port {
	uint16_t id;
	uint16_t n_queues;
	uint16_t nb_rxd;
	uint16_t nb_txd;
	char name[RTE_ETH_NAME_MAX_LEN];
	bool configured;	/* rte_eth_dev_configure() done: close it */
	bool reconnects;	/* memif: restart the port on link down */
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
	uint32_t idx;		/* logical core */
	unsigned int lcore;
	struct srv_port *port;
	uint16_t queue;
	struct tlb_host_core *credit; /* NULL without a credit ring */
	bool paused;		/* worker: wo, main lcore: ro */
	struct emu_core emu;	/* --mode emulate: the core's FIFO */
	uint64_t last_beat;	/* --mode emulate: TSC of the last heartbeat */
	struct core_stats st;
} __rte_cache_aligned;

struct srv_conf {
	uint32_t n_cores;
	const char *port_names[TLB_CR_MAX_CORES];
	uint32_t n_port_names;
	bool port_per_core;
	enum srv_mode mode;
	const char *credit_ring;
	uint32_t idle_sleep_us;
	uint32_t batch;
	const char *stats_file;
	uint32_t kv_capacity;
	uint32_t max_spin_us;
	uint32_t emu_depth;
	bool emu_arrival_sent;	/* arrival = the request's client_ts */
	struct tlb_parse_opts popts;
};

static volatile bool force_quit;

static struct srv_conf conf;
static struct srv_port *ports;
static uint32_t n_ports;
static struct rte_mempool *pool;
static struct tlb_host *host;
static struct kv_table kv;
static struct srv_core *cores;
static uint64_t tsc_hz;
static uint64_t reattaches;
static uint64_t reattach_failures;

static void
signal_handler(int sig)
{
	(void)sig;
	force_quit = true;
}

static void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [EAL args] -- --cores N [options]\n"
		"  --cores N            logical cores (RX/TX queue pairs), one per EAL worker lcore\n"
		"                       (--mode emulate: all on the first worker lcore)\n"
		"  --port NAME          ethdev port name or id (default: the first port)\n"
		"  --port-per-core      core i polls queue 0 of port i (one VF per core): N ports,\n"
		"                       the --port names in order or else the first N ports\n"
		"  --mode spin|kv|emulate\n"
		"                       spin: busy-wait svc_hint_ns (default); kv: GET/PUT/DEL table;\n"
		"                       emulate: every logical core an emulated FIFO server on one\n"
		"                       worker lcore, busy for svc_hint_ns in TSC time\n"
		"  --credit-ring NAME   report completions to turbolbd through this credit ring\n"
		"  --batch B            completions per credit record (default %u)\n"
		"  --idle-sleep-us U    sleep U us after an empty RX burst (default 0: busy poll)\n"
		"  --udp-port P         RPC UDP port, repeatable (default %u)\n"
		"  --stats FILE         write the final JSON stats to FILE instead of stdout\n"
		"  --kv-capacity N      kv table entries (default %u)\n"
		"  --max-spin-us U      cap on one spin or emulated request (default %u)\n"
		"  --emu-depth N        emulate: requests held per core, a power of two (default %u)\n"
		"  --emu-arrival poll|sent\n"
		"                       emulate: a request arrives when the worker reads it (poll,\n"
		"                       default) or when the client sent it (sent: its client_ts,\n"
		"                       for a client on this machine, sharing its TSC)\n"
		"  --help               this text\n"
		"Example: %s --no-huge -m 256 --lcores=0@0,(1-4)@1 \\\n"
		"    --vdev=net_memif0,role=client,socket=/run/turbolb/host.sock,socket-abstract=no \\\n"
		"    -- --cores 4 --credit-ring /turbolb-credits\n",
		prog, TLB_HOST_BATCH_DEFAULT, DEFAULT_UDP_PORT,
		DEFAULT_KV_CAPACITY, DEFAULT_MAX_SPIN_US, DEFAULT_EMU_DEPTH,
		prog);
}

static void
eal_usage_hook(const char *prog)
{
	usage(prog);
}

static int
parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
	  uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' ||
	    v < min || v > max) {
		SRV_LOG(ERR, "%s: '%s' is not a number in %u..%u", opt, s, min,
			max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_CORES = 256,
	OPT_PORT,
	OPT_PORT_PER_CORE,
	OPT_MODE,
	OPT_CREDIT_RING,
	OPT_IDLE_SLEEP_US,
	OPT_UDP_PORT,
	OPT_BATCH,
	OPT_STATS,
	OPT_KV_CAPACITY,
	OPT_MAX_SPIN_US,
	OPT_EMU_DEPTH,
	OPT_EMU_ARRIVAL,
	OPT_HELP,
};

static int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"cores", required_argument, NULL, OPT_CORES},
		{"port", required_argument, NULL, OPT_PORT},
		{"port-per-core", no_argument, NULL, OPT_PORT_PER_CORE},
		{"mode", required_argument, NULL, OPT_MODE},
		{"credit-ring", required_argument, NULL, OPT_CREDIT_RING},
		{"idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP_US},
		{"udp-port", required_argument, NULL, OPT_UDP_PORT},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"stats", required_argument, NULL, OPT_STATS},
		{"kv-capacity", required_argument, NULL, OPT_KV_CAPACITY},
		{"max-spin-us", required_argument, NULL, OPT_MAX_SPIN_US},
		{"emu-depth", required_argument, NULL, OPT_EMU_DEPTH},
		{"emu-arrival", required_argument, NULL, OPT_EMU_ARRIVAL},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	const char *prog = argv[0];
	uint32_t v;
	int c;

	conf.mode = MODE_SPIN;
	conf.batch = TLB_HOST_BATCH_DEFAULT;
	conf.kv_capacity = DEFAULT_KV_CAPACITY;
	conf.max_spin_us = DEFAULT_MAX_SPIN_US;
	conf.emu_depth = DEFAULT_EMU_DEPTH;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CORES:
			if (parse_u32("--cores", optarg, 1, TLB_CR_MAX_CORES,
				      &conf.n_cores) < 0)
				return -1;
			break;
		case OPT_PORT:
			if (conf.n_port_names == RTE_DIM(conf.port_names)) {
				SRV_LOG(ERR, "--port: at most %zu ports",
					RTE_DIM(conf.port_names));
				return -1;
			}
			conf.port_names[conf.n_port_names++] = optarg;
			break;
		case OPT_PORT_PER_CORE:
			conf.port_per_core = true;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "spin") == 0) {
				conf.mode = MODE_SPIN;
			} else if (strcmp(optarg, "kv") == 0) {
				conf.mode = MODE_KV;
			} else if (strcmp(optarg, "emulate") == 0) {
				conf.mode = MODE_EMULATE;
			} else {
				SRV_LOG(ERR, "--mode: '%s' is not one of spin, kv, emulate",
					optarg);
				return -1;
			}
			break;
		case OPT_CREDIT_RING:
			conf.credit_ring = optarg;
			break;
		case OPT_IDLE_SLEEP_US:
			if (parse_u32("--idle-sleep-us", optarg, 0, 1000000,
				      &conf.idle_sleep_us) < 0)
				return -1;
			break;
		case OPT_UDP_PORT:
			if (parse_u32("--udp-port", optarg, 1, 65535, &v) < 0)
				return -1;
			if (conf.popts.n_udp_ports == TLB_RPC_MAX_PORTS) {
				SRV_LOG(ERR, "--udp-port: at most %u ports",
					TLB_RPC_MAX_PORTS);
				return -1;
			}
			conf.popts.udp_ports[conf.popts.n_udp_ports++] =
				(uint16_t)v;
			break;
		case OPT_BATCH:
			if (parse_u32("--batch", optarg, 1, TLB_HOST_BATCH_MAX,
				      &conf.batch) < 0)
				return -1;
			break;
		case OPT_STATS:
			conf.stats_file = optarg;
			break;
		case OPT_KV_CAPACITY:
			if (parse_u32("--kv-capacity", optarg, KV_WAYS,
				      1u << 24, &conf.kv_capacity) < 0)
				return -1;
			break;
		case OPT_MAX_SPIN_US:
			if (parse_u32("--max-spin-us", optarg, 1, 4000000,
				      &conf.max_spin_us) < 0)
				return -1;
			break;
		case OPT_EMU_DEPTH:
			if (parse_u32("--emu-depth", optarg, 1, 1u << 16,
				      &conf.emu_depth) < 0)
				return -1;
			if ((conf.emu_depth & (conf.emu_depth - 1)) != 0) {
				SRV_LOG(ERR, "--emu-depth: %u is not a power of two",
					conf.emu_depth);
				return -1;
			}
			break;
		case OPT_EMU_ARRIVAL:
			if (strcmp(optarg, "poll") == 0) {
				conf.emu_arrival_sent = false;
			} else if (strcmp(optarg, "sent") == 0) {
				conf.emu_arrival_sent = true;
			} else {
				SRV_LOG(ERR, "--emu-arrival: '%s' is neither poll nor sent",
					optarg);
				return -1;
			}
			break;
		case OPT_HELP:
			usage(prog);
			exit(0);
		default:
			usage(prog);
			return -1;
		}
	}
	if (optind < argc) {
		SRV_LOG(ERR, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!conf.port_per_core && conf.n_port_names > 1) {
		SRV_LOG(ERR, "--port given %u times: one port serves every core unless --port-per-core is given",
			conf.n_port_names);
		return -1;
	}
	if (conf.popts.n_udp_ports == 0) {
		conf.popts.udp_ports[0] = DEFAULT_UDP_PORT;
		conf.popts.n_udp_ports = 1;
	}
	return 0;
}

/* ---- kv ---- */

static int
kv_init(uint32_t capacity)
{
	uint32_t sets = rte_align32pow2((capacity + KV_WAYS - 1) / KV_WAYS);

	/* calloc, not rte_malloc: the table is plain process memory, and
	 * untouched sets cost no pages (--no-huge keeps the DPDK heap
	 * small). */
	kv.sets = calloc(sets, sizeof(*kv.sets));
	if (kv.sets == NULL)
		return -1;
	kv.n_sets = sets;
	kv.mask = sets - 1;
	for (uint32_t i = 0; i < sets; i++)
		rte_rwlock_init(&kv.sets[i].lock);
	return 0;
}

static struct kv_set *
kv_set_of(const uint8_t *key, uint16_t klen)
{
	uint32_t kbuf[KV_KEY_MAX / sizeof(uint32_t)];

	/* rte_jhash loads 32-bit words; the key sits at an odd offset in
	 * the frame. */
	memcpy(kbuf, key, klen);
	return &kv.sets[rte_jhash(kbuf, klen, KV_SEED) & kv.mask];
}

static struct kv_entry *
kv_find(struct kv_set *s, const uint8_t *key, uint16_t klen)
{
	for (unsigned int i = 0; i < KV_WAYS; i++) {
		struct kv_entry *e = &s->e[i];

		if (e->klen == klen && memcmp(e->key, key, klen) == 0)
			return e;
	}
	return NULL;
}

static inline uint16_t
rd_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

/* Executes the kv op in the request's payload and writes the value of a
 * GET into the frame. Returns the response's RPC status and sets *type and
 * *resp_len (payload bytes). */
static uint16_t
kv_exec(struct srv_core *c, struct rte_mbuf *m, const struct tlb_parsed *p,
	enum tlb_msg_type *type, uint16_t *resp_len)
{
	uint8_t *pl = rte_pktmbuf_mtod_offset(m, uint8_t *, p->payload_off);
	uint16_t len = p->hdr.payload_len;
	const uint8_t *key, *val;
	struct kv_entry *e;
	struct kv_set *s;
	uint16_t klen, vlen;
	uint8_t op;

	*type = TLB_MSG_RESPONSE;
	*resp_len = 0;
	if (unlikely(len < KV_HDR_LEN))
		goto bad;
	op = pl[0];
	klen = rd_be16(pl + 1);
	if (unlikely(klen == 0 || klen > KV_KEY_MAX ||
		     klen > len - KV_HDR_LEN))
		goto bad;
	key = pl + KV_HDR_LEN;
	val = key + klen;
	vlen = (uint16_t)(len - KV_HDR_LEN - klen);
	s = kv_set_of(key, klen);

	switch (op) {
	case KV_OP_GET: {
		uint16_t room;
		uint16_t st;

		c->st.kv_get++;
		rte_rwlock_read_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e == NULL) {
			rte_rwlock_read_unlock(&s->lock);
			c->st.kv_miss++;
			return TLB_RPC_ST_NOT_FOUND;
		}
		/* The value replaces the request in the frame; grow it if the
		 * value is longer than the request was. */
		room = (uint16_t)(rte_pktmbuf_data_len(m) - p->payload_off);
		if (e->vlen > room &&
		    rte_pktmbuf_append(m, (uint16_t)(e->vlen - room)) == NULL) {
			st = TLB_RPC_ST_BAD_REQUEST;
			*type = TLB_MSG_ERROR;
		} else {
			/* The key is read from the frame: copy the value only
			 * once the comparison is done (they overlap). */
			memcpy(pl, e->val, e->vlen);
			*resp_len = e->vlen;
			st = TLB_RPC_ST_OK;
		}
		rte_rwlock_read_unlock(&s->lock);
		if (st == TLB_RPC_ST_OK)
			c->st.kv_hit++;
		else
			c->st.kv_bad++;
		return st;
	}
	case KV_OP_PUT: {
		struct kv_entry *free_e = NULL;

		c->st.kv_put++;
		if (unlikely(vlen > KV_VAL_MAX))
			goto bad;
		rte_rwlock_write_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e == NULL) {
			for (unsigned int i = 0; i < KV_WAYS; i++) {
				if (s->e[i].klen == 0) {
					free_e = &s->e[i];
					break;
				}
			}
			e = free_e;
			if (e == NULL) {
				rte_rwlock_write_unlock(&s->lock);
				c->st.kv_full++;
				*type = TLB_MSG_ERROR;
				return TLB_RPC_ST_OVERLOAD;
			}
			memcpy(e->key, key, klen);
			e->klen = klen;
		}
		memcpy(e->val, val, vlen);
		e->vlen = vlen;
		rte_rwlock_write_unlock(&s->lock);
		return TLB_RPC_ST_OK;
	}
	case KV_OP_DEL:
		c->st.kv_del++;
		rte_rwlock_write_lock(&s->lock);
		e = kv_find(s, key, klen);
		if (e != NULL)
			e->klen = 0;
		rte_rwlock_write_unlock(&s->lock);
		if (e == NULL) {
			c->st.kv_miss++;
			return TLB_RPC_ST_NOT_FOUND;
		}
		c->st.kv_hit++;
		return TLB_RPC_ST_OK;
	default:
		break;
	}
bad:
	c->st.kv_bad++;
	*type = TLB_MSG_ERROR;
	return TLB_RPC_ST_BAD_REQUEST;
}

/* ---- data path ---- */

static inline uint32_t
cycles_to_ns(uint64_t cycles)
{
	uint64_t ns;

	/* Past UINT32_MAX ns the answer saturates anyway; bounding cycles
	 * first keeps the product from overflowing. */
	if (unlikely(cycles > tsc_hz * 5))
		return UINT32_MAX;
	ns = cycles * 1000000000ull / tsc_hz;
	return ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static inline void
spin_for(uint64_t start, uint32_t ns)
{
	uint64_t max_ns = (uint64_t)conf.max_spin_us * 1000u;
	uint64_t end;

	if (ns > max_ns)
		ns = (uint32_t)max_ns;
	end = start + (uint64_t)ns * tsc_hz / 1000000000ull;
	while (rte_rdtsc() < end)
		rte_pause();
}

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

/* Handles one frame: returns true if m became a response to send, false
 * if it was freed. */
static inline bool
handle_frame(struct srv_core *c, struct rte_mbuf *m)
{
	enum tlb_msg_type type = TLB_MSG_RESPONSE;
	uint16_t status = TLB_RPC_ST_OK;
	uint16_t resp_len = 0;
	struct tlb_parsed p;
	uint64_t t0 = rte_rdtsc();
	uint32_t service_ns;
	size_t out_len;

	if (!parse_request(c, m, &p))
		return false;
	if (conf.mode == MODE_SPIN) {
		if (p.hdr.flags & TLB_RPC_F_HINT)
			spin_for(t0, p.hdr.svc_hint_ns);
	} else {
		status = kv_exec(c, m, &p, &type, &resp_len);
	}
	c->st.served++;
	service_ns = cycles_to_ns(rte_rdtsc() - t0);
	out_len = tlb_make_response(rte_pktmbuf_mtod(m, void *),
				    rte_pktmbuf_data_len(m), &p, type, status,
				    (uint16_t)c->idx, service_ns, resp_len);
	/* The request is done whether or not its response can go out: the
	 * NIC must get the credit either way. */
	if (c->credit != NULL)
		tlb_host_complete(c->credit, p.hdr.work_ns, service_ns);
	if (unlikely(out_len == 0)) {
		c->st.resp_err++;
		goto drop;
	}
	m->data_len = (uint16_t)out_len;
	m->pkt_len = (uint32_t)out_len;
	return true;
drop:
	rte_pktmbuf_free(m);
	return false;
}

static void
send_responses(struct srv_core *c, struct rte_mbuf **tx, uint16_t n)
{
	const uint16_t pid = c->port->id;
	uint16_t sent = rte_eth_tx_burst(pid, c->queue, tx, n);
	uint64_t deadline;

	/* A full TX ring is mostly a peer that was briefly descheduled
	 * (several polling processes on few CPUs): a response dropped here
	 * costs the client a timeout, so give the peer a moment first. */
	if (unlikely(sent < n)) {
		deadline = rte_rdtsc() + tsc_hz / TX_WAIT_PER_SEC;
		while (sent < n && rte_rdtsc() < deadline && !force_quit)
			sent += rte_eth_tx_burst(pid, c->queue, tx + sent,
						 (uint16_t)(n - sent));
	}
	c->st.tx += sent;
	if (unlikely(sent < n)) {
		c->st.tx_drops += (uint64_t)(n - sent);
		rte_pktmbuf_free_bulk(tx + sent, (unsigned int)(n - sent));
	}
}

/* ---- --mode emulate: every logical core on one worker lcore ---- */

/* The service time of an emulated request: its hint, capped by
 * --max-spin-us; a request without a hint takes none. */
static inline uint32_t
emu_svc_ns(const struct tlb_parsed *p)
{
	uint32_t max_ns = conf.max_spin_us * 1000u;

	if (!(p->hdr.flags & TLB_RPC_F_HINT))
		return 0;
	return p->hdr.svc_hint_ns > max_ns ? max_ns : p->hdr.svc_hint_ns;
}

/* Turns a request read at TSC time `now` into its response at once and
 * queues it on the core's emulated FIFO (the caller checked for room);
 * emu_send_due sends it and posts its credit when its service has ended.
 * It arrived at `now`, or with --emu-arrival sent at its client_ts (never
 * later than now): then a stretch in which this thread did not run costs
 * the emulated cores no capacity. A response that cannot be built still
 * occupies the core and still earns its credit: the request was served. */
static inline void
emu_admit_frame(struct srv_core *c, struct rte_mbuf *m, uint64_t now)
{
	uint64_t arrival = now;
	struct tlb_parsed p;
	struct emu_req r;
	size_t out_len;

	if (!parse_request(c, m, &p))
		return;
	if (conf.emu_arrival_sent && p.hdr.client_ts < now)
		arrival = p.hdr.client_ts;
	r.svc_ns = emu_svc_ns(&p);
	r.work_ns = p.hdr.work_ns;
	r.item = m;
	out_len = tlb_make_response(rte_pktmbuf_mtod(m, void *),
				    rte_pktmbuf_data_len(m), &p,
				    TLB_MSG_RESPONSE, TLB_RPC_ST_OK,
				    (uint16_t)c->idx, r.svc_ns, 0);
	if (unlikely(out_len == 0)) {
		c->st.resp_err++;
		rte_pktmbuf_free(m);
		r.item = NULL;
	} else {
		m->data_len = (uint16_t)out_len;
		m->pkt_len = (uint32_t)out_len;
	}
	/* Cycles from ns without overflow for any uint32_t ns and any
	 * TSC rate below 18 GHz. */
	emu_admit(&c->emu, arrival,
		  (uint64_t)r.svc_ns * (tsc_hz / 1000u) / 1000000u, &r);
}

/* Sends the responses of c whose service has ended by `now`, oldest
 * first, and posts their credits at once: the daemon's view of the core's
 * queue is the emulated queue. */
static inline void
emu_send_due(struct srv_core *c, uint64_t now)
{
	struct emu_req done[BURST];
	struct rte_mbuf *tx[BURST];
	uint16_t n_tx = 0;
	uint32_t n;

	n = emu_take(&c->emu, now, done, BURST);
	if (n == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {
		if (c->credit != NULL)
			tlb_host_complete(c->credit, done[i].work_ns,
					  done[i].svc_ns);
		if (done[i].item != NULL)
			tx[n_tx++] = done[i].item;
	}
	c->st.served += n;
	if (n_tx != 0)
		send_responses(c, tx, n_tx);
	if (c->credit != NULL)
		tlb_host_flush(c->credit);
}

/* A core whose port the main lcore restarts is left alone (paused) until
 * the port runs again; its held responses wait, and it keeps beating: it
 * is alive, only idle. Returns whether c is paused. */
static inline bool
emu_paused(struct srv_core *c, uint64_t now)
{
	bool req = __atomic_load_n(&c->port->pause_req, __ATOMIC_ACQUIRE);

	if (likely(!req && !c->paused))
		return false;
	if (!req) {
		__atomic_store_n(&c->paused, false, __ATOMIC_RELEASE);
		tlb_host_set_running(c->credit, true);
		return false;
	}
	if (!c->paused) {
		if (c->credit != NULL) {
			tlb_host_flush(c->credit);
			tlb_host_set_running(c->credit, false);
		}
		__atomic_store_n(&c->paused, true, __ATOMIC_RELEASE);
	}
	if (c->credit != NULL && now - c->last_beat >= tsc_hz / BEAT_PER_SEC) {
		tlb_host_beat(c->credit);
		c->last_beat = now;
	}
	return true;
}

/* One pass over an emulated core: admit what its RX queue holds (as far
 * as its FIFO has room; the rest waits in the queue), send what is due.
 * Returns whether anything arrived. */
static inline bool
emu_poll_core(struct srv_core *c, uint64_t now)
{
	struct rte_mbuf *rx[BURST];
	uint32_t room = emu_room(&c->emu);
	uint16_t nb = 0;

	if (room != 0) {
		nb = rte_eth_rx_burst(c->port->id, c->queue, rx,
				      (uint16_t)RTE_MIN(room, (uint32_t)BURST));
		c->st.rx += nb;
		for (uint16_t i = 0; i < nb; i++)
			emu_admit_frame(c, rx[i], now);
	}
	emu_send_due(c, now);
	if (c->credit != NULL && now - c->last_beat >= tsc_hz / BEAT_PER_SEC) {
		tlb_host_beat(c->credit);
		c->last_beat = now;
	}
	return nb != 0;
}

/* The worker of --mode emulate: polls every logical core's queue in turn.
 * With --idle-sleep-us, a pass in which nothing arrived and nothing is
 * due is followed by a sleep of at most that long and at most until the
 * next held response is due: the thread leaves the CPU to its peers while
 * the emulated cores are busy, at the price of responses leaving up to
 * the OS's wake-up latency late, and (with --emu-arrival poll) arrivals
 * stamped that much late. */
static int
emu_loop(void *arg)
{
	const uint64_t cycles_per_us = tsc_hz / 1000000u;
	uint64_t next, now, sleep_us;
	bool got;

	(void)arg;
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		SRV_LOG(INFO, "core %u (emulated) on lcore %u polls port %s queue %u",
			cores[i].idx, cores[i].lcore, cores[i].port->name,
			cores[i].queue);
		tlb_host_set_running(cores[i].credit, true);
	}
	while (likely(!force_quit)) {
		got = false;
		next = UINT64_MAX;
		for (uint32_t i = 0; i < conf.n_cores; i++) {
			struct srv_core *c = &cores[i];

			now = rte_rdtsc();
			if (unlikely(emu_paused(c, now)))
				continue;
			got |= emu_poll_core(c, now);
			next = RTE_MIN(next, emu_next_done(&c->emu));
		}
		if (got || conf.idle_sleep_us == 0)
			continue;
		now = rte_rdtsc();
		sleep_us = conf.idle_sleep_us;
		if (next != UINT64_MAX)
			sleep_us = next <= now ? 0 :
				RTE_MIN(sleep_us, (next - now) / cycles_per_us);
		if (sleep_us == 0)
			continue;
		rte_delay_us_sleep((unsigned int)sleep_us);
		for (uint32_t i = 0; i < conf.n_cores; i++)
			cores[i].st.idle_sleeps++;
	}
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		if (cores[i].credit != NULL) {
			tlb_host_flush(cores[i].credit);
			tlb_host_set_running(cores[i].credit, false);
		}
	}
	return 0;
}

/* Frees what the emulated cores still hold (after the worker stopped). */
static void
emu_release(void)
{
	struct emu_req r[BURST];
	uint32_t n;

	for (uint32_t i = 0; cores != NULL && i < conf.n_cores; i++) {
		if (cores[i].emu.ring == NULL)
			continue;
		while ((n = emu_take(&cores[i].emu, UINT64_MAX, r, BURST)) != 0)
			for (uint32_t j = 0; j < n; j++)
				rte_pktmbuf_free(r[j].item);
		emu_core_free(&cores[i].emu);
	}
}

/* Stays off the port while the main lcore restarts it. The core is
 * PARKED meanwhile, and keeps beating: it is alive, only idle. */
static void
core_pause(struct srv_core *c)
{
	if (c->credit != NULL) {
		tlb_host_flush(c->credit);
		tlb_host_set_running(c->credit, false);
	}
	__atomic_store_n(&c->paused, true, __ATOMIC_RELEASE);
	while (__atomic_load_n(&c->port->pause_req, __ATOMIC_ACQUIRE) &&
	       !force_quit) {
		rte_delay_us_sleep(1000);
		tlb_host_beat(c->credit);
	}
	__atomic_store_n(&c->paused, false, __ATOMIC_RELEASE);
	tlb_host_set_running(c->credit, true);
}

static int
core_loop(void *arg)
{
	struct srv_core *c = arg;
	struct rte_mbuf *rx[BURST];
	struct rte_mbuf *tx[BURST];
	const uint64_t beat_cycles = tsc_hz / BEAT_PER_SEC;
	const uint16_t pid = c->port->id;
	const uint16_t q = c->queue;
	uint64_t last_beat = 0;

	SRV_LOG(INFO, "core %u on lcore %u polls port %s queue %u", c->idx,
		c->lcore, c->port->name, q);
	tlb_host_set_running(c->credit, true);
	while (likely(!force_quit)) {
		if (unlikely(__atomic_load_n(&c->port->pause_req,
					     __ATOMIC_ACQUIRE))) {
			core_pause(c);
			continue;
		}
		uint16_t nb = rte_eth_rx_burst(pid, q, rx, BURST);
		uint16_t n_tx = 0;
		uint64_t now = rte_rdtsc();

		/* Bounded rate: the heartbeat line is read by the NIC side,
		 * so writing it on every poll would only bounce it. */
		if (c->credit != NULL && now - last_beat >= beat_cycles) {
			tlb_host_beat(c->credit);
			last_beat = now;
		}
		if (nb == 0) {
			/* Idle: credits must not wait for the next request. */
			if (c->credit != NULL)
				tlb_host_flush(c->credit);
			if (conf.idle_sleep_us != 0) {
				tlb_host_set_running(c->credit, false);
				rte_delay_us_sleep(conf.idle_sleep_us);
				tlb_host_set_running(c->credit, true);
				c->st.idle_sleeps++;
			}
			continue;
		}
		c->st.rx += nb;
		for (uint16_t i = 0; i < nb && i < PREFETCH_AHEAD; i++)
			rte_prefetch0(rte_pktmbuf_mtod(rx[i], void *));
		for (uint16_t i = 0; i < nb; i++) {
			if (i + PREFETCH_AHEAD < nb)
				rte_prefetch0(rte_pktmbuf_mtod(
					rx[i + PREFETCH_AHEAD], void *));
			if (handle_frame(c, rx[i]))
				tx[n_tx++] = rx[i];
		}
		if (n_tx != 0)
			send_responses(c, tx, n_tx);
	}
	if (c->credit != NULL) {
		tlb_host_flush(c->credit);
		tlb_host_set_running(c->credit, false);
	}
	return 0;
}

/* ---- set-up ---- */

static void
list_ports(void)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;

	SRV_LOG(ERR, "ports are:");
	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_get_name_by_port(pid, name) == 0)
			SRV_LOG(ERR, "  %u: %s", pid, name);
	}
}

/* A port by its name or, for a bare number, its id. */
static int
port_by_name(const char *name, uint16_t *pid)
{
	unsigned long v;
	char *end;

	if (rte_eth_dev_get_port_by_name(name, pid) == 0)
		return 0;
	errno = 0;
	v = strtoul(name, &end, 10);
	if (name[0] == '\0' || *end != '\0' || errno != 0 ||
	    v >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port((uint16_t)v)) {
		SRV_LOG(ERR, "--port: no port named '%s'", name);
		list_ports();
		return -1;
	}
	*pid = (uint16_t)v;
	return 0;
}

/* The ports, and which core polls which (port, queue): one port with a
 * queue per core, or with --port-per-core a port per core (queue 0). */
static int
find_ports(void)
{
	uint32_t avail = rte_eth_dev_count_avail();
	uint16_t pid;

	if (avail == 0) {
		SRV_LOG(ERR, "no ethdev port: give one in the EAL args, e.g. --vdev=net_memif0,role=client,socket=/run/turbolb/host.sock,socket-abstract=no");
		return -1;
	}
	n_ports = conf.port_per_core ? conf.n_cores : 1;
	if (conf.port_per_core && conf.n_port_names != 0 &&
	    conf.n_port_names != conf.n_cores) {
		SRV_LOG(ERR, "--port-per-core: --port given %u times for --cores %u: name one port per core, or none for the first %u ports",
			conf.n_port_names, conf.n_cores, conf.n_cores);
		return -1;
	}
	if (conf.n_port_names == 0 && avail < n_ports) {
		SRV_LOG(ERR, "--port-per-core: --cores %u needs %u ports, the EAL has %u (one --vdev, or one VF on the allow list, per core)",
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

		RTE_ETH_FOREACH_DEV(pid) {
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
				SRV_LOG(ERR, "--port: %s named twice: each core needs a port of its own",
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
		SRV_LOG(ERR, "port %s: --cores %u needs %u RX and TX queues, the port has at most %u RX and %u TX (one port per core: --port-per-core)",
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
			SRV_LOG(WARNING, "port %s: start: %s; retrying every 100 ms until a signal (is its peer up?)",
				p->name, rte_strerror(-rc));
		rte_delay_us_sleep(100 * 1000);
	}
	p->state = PORT_RUNNING;
	/* Virtual ports often have no notion of it; that is fine. */
	rc = rte_eth_promiscuous_enable(p->id);
	if (rc != 0 && rc != -ENOTSUP)
		SRV_LOG(WARNING, "port %s: promiscuous mode: %s", p->name,
			rte_strerror(-rc));
	SRV_LOG(INFO, "port %s (id %u): %u RX/TX queue pair%s, %u/%u descriptors",
		p->name, p->id, p->n_queues, p->n_queues == 1 ? "" : "s",
		p->nb_rxd, p->nb_txd);
	return 0;
}

static int
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
		SRV_LOG(ERR, "cannot create a pool of %u mbufs: %s (give the EAL more memory with -m)",
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

static void
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

static int
credit_setup(void)
{
	char err[256];
	struct tlb_host_opts o;
	uint32_t ring_cores;

	tlb_host_opts_init(&o);
	o.batch = conf.batch;
	/* Like the port: wait for turbolbd, so start order does not matter
	 * (a region being created reads as invalid for a moment too). */
	for (unsigned int tries = 0;; tries++) {
		host = tlb_host_open_opts(conf.credit_ring, &o, err,
					  sizeof(err));
		if (host != NULL)
			break;
		if (force_quit)
			return -1;
		if (tries % 100 == 0)
			SRV_LOG(WARNING, "--credit-ring: %s; retrying every 100 ms until a signal",
				err);
		rte_delay_us_sleep(100 * 1000);
	}
	ring_cores = tlb_host_n_cores(host);
	if (ring_cores < conf.n_cores) {
		SRV_LOG(ERR, "credit ring %s has %u cores, fewer than --cores %u: the daemon's host_cores and the server must agree",
			conf.credit_ring, ring_cores, conf.n_cores);
		return -1;
	}
	for (uint32_t i = 0; i < conf.n_cores; i++)
		cores[i].credit = tlb_host_core(host, i);
	SRV_LOG(INFO, "credit ring %s attached: %u cores, host epoch %" PRIu64 ", batch %u",
		conf.credit_ring, ring_cores, tlb_host_epoch(host),
		conf.batch);
	return 0;
}

/* ---- control (main lcore) ---- */

/* The credit ring: notice a daemon restart and move over; the workers
 * follow at their next call, without stopping. */
static void
credit_watch(void)
{
	static bool failing;
	char err[256];

	if (host == NULL || !tlb_host_stale(host))
		return;
	if (!failing)
		SRV_LOG(WARNING, "credit ring %s went stale (turbolbd restarted?): reattaching",
			conf.credit_ring);
	if (tlb_host_reattach(host, err, sizeof(err)) == 0) {
		reattaches++;
		failing = false;
		SRV_LOG(NOTICE, "credit ring %s reattached, host epoch %" PRIu64,
			conf.credit_ring, tlb_host_epoch(host));
		return;
	}
	/* The daemon may not be back yet: say so once, keep serving and
	 * keep trying. */
	if (!failing)
		SRV_LOG(WARNING, "reattach failed: %s (retrying every %d ms)",
			err, STALE_POLL_MS);
	failing = true;
	reattach_failures++;
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
static void
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
				p->name, p->reconnects ?
				": pausing its cores to reconnect" : "");
		p->last_link = RTE_ETH_LINK_DOWN;
		if (!p->reconnects)
			return;
		/* Down since the last start as well: a memif peer that was
		 * still starting may have refused the handshake, and the PMD
		 * does not try again. */
		if (!went_down && ++p->down_ticks < LINK_WAIT_MS / STALE_POLL_MS)
			return;
		if (!went_down)
			SRV_LOG(WARNING, "port %s: link still down %d ms after start: restarting it",
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
				SRV_LOG(WARNING, "port %s: start: %s; retrying every %d ms",
					p->name, rte_strerror(-rc),
					STALE_POLL_MS);
			return;
		}
		p->restarts++;
		p->state = PORT_RUNNING;
		__atomic_store_n(&p->pause_req, false, __ATOMIC_RELEASE);
		SRV_LOG(NOTICE, "port %s: restarted, its cores resume", p->name);
		return;
	}
}

static void
watch_loop(void)
{
	while (!force_quit) {
		rte_delay_us_sleep(STALE_POLL_MS * 1000);
		credit_watch();
		for (uint32_t i = 0; i < n_ports; i++)
			port_watch(&ports[i]);
	}
}

/* ---- stats ---- */

static_assert(sizeof(struct core_stats) % sizeof(uint64_t) == 0,
	      "core_stats must be nothing but uint64_t counters");

static void
stats_add(struct core_stats *t, const struct core_stats *s)
{
	const uint64_t *src = (const uint64_t *)s;
	uint64_t *dst = (uint64_t *)t;

	/* core_stats is nothing but uint64_t counters. */
	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

static void
json_counters(FILE *f, const struct core_stats *s,
	      const struct tlb_host_core_stats *cs, const char *ind)
{
	fprintf(f, "%s\"received\": %" PRIu64 ",\n", ind, s->rx);
	fprintf(f, "%s\"served\": %" PRIu64 ",\n", ind, s->served);
	fprintf(f, "%s\"responses_sent\": %" PRIu64 ",\n", ind, s->tx);
	fprintf(f, "%s\"tx_drops\": %" PRIu64 ",\n", ind, s->tx_drops);
	fprintf(f, "%s\"nonfinal_packets\": %" PRIu64 ",\n", ind,
		s->nonfinal);
	fprintf(f, "%s\"not_request\": %" PRIu64 ",\n", ind, s->not_request);
	fprintf(f, "%s\"nonlinear_drops\": %" PRIu64 ",\n", ind,
		s->nonlinear);
	fprintf(f, "%s\"response_errors\": %" PRIu64 ",\n", ind, s->resp_err);
	fprintf(f, "%s\"idle_sleeps\": %" PRIu64 ",\n", ind, s->idle_sleeps);
	fprintf(f, "%s\"parse_drops\": {", ind);
	for (int i = 1; i < TLB_PARSE_ERR_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i == 1 ? "" : ", ",
			tlb_parse_err_str((enum tlb_parse_err)i),
			s->parse_err[i]);
	fprintf(f, "},\n");
	if (conf.mode == MODE_KV)
		fprintf(f, "%s\"kv\": {\"get\": %" PRIu64 ", \"put\": %" PRIu64 ", \"del\": %" PRIu64 ", \"hit\": %" PRIu64 ", \"miss\": %" PRIu64 ", \"set_full\": %" PRIu64 ", \"bad_request\": %" PRIu64 "},\n",
			ind, s->kv_get, s->kv_put, s->kv_del, s->kv_hit,
			s->kv_miss, s->kv_full, s->kv_bad);
	fprintf(f, "%s\"credits\": {\"completed\": %" PRIu64 ", \"posted\": %" PRIu64 ", \"records\": %" PRIu64 ", \"ring_full\": %" PRIu64 ", \"pending\": %" PRIu64 ", \"discarded\": %" PRIu64 ", \"switches\": %" PRIu64 "}\n",
		ind, cs->completed, cs->posted, cs->records, cs->ring_full,
		cs->pending, cs->discarded, cs->switches);
}

static void
json_string(FILE *f, const char *s)
{
	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static int
write_stats(void)
{
	struct tlb_host_core_stats cs, tcs;
	struct core_stats total;
	uint64_t port_restarts = 0;
	FILE *f = stdout;

	if (conf.stats_file != NULL) {
		f = fopen(conf.stats_file, "w");
		if (f == NULL) {
			SRV_LOG(ERR, "--stats %s: %s", conf.stats_file,
				strerror(errno));
			return -1;
		}
	}
	memset(&total, 0, sizeof(total));
	memset(&tcs, 0, sizeof(tcs));
	/* "port" is the first (with one port: the only) port; "ports" all
	 * of them, in core order with --port-per-core. */
	fprintf(f, "{\n  \"server\": {\"mode\": \"%s\", \"port\": ",
		mode_names[conf.mode]);
	json_string(f, ports[0].name);
	fprintf(f, ", \"ports\": [");
	for (uint32_t i = 0; i < n_ports; i++) {
		fputs(i == 0 ? "" : ", ", f);
		json_string(f, ports[i].name);
		port_restarts += ports[i].restarts;
	}
	fprintf(f, "], \"port_per_core\": %s, \"cores\": %u, \"udp_ports\": [",
		conf.port_per_core ? "true" : "false", conf.n_cores);
	for (unsigned int i = 0; i < conf.popts.n_udp_ports; i++)
		fprintf(f, "%s%u", i == 0 ? "" : ", ",
			conf.popts.udp_ports[i]);
	fprintf(f, "], \"credit_ring\": ");
	json_string(f, conf.credit_ring);
	fprintf(f, ", \"batch\": %u, \"idle_sleep_us\": %u, \"reattaches\": %" PRIu64 ", \"reattach_failures\": %" PRIu64 ", \"port_restarts\": %" PRIu64 "},\n",
		conf.batch, conf.idle_sleep_us, reattaches,
		reattach_failures, port_restarts);
	fprintf(f, "  \"cores\": [\n");
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		struct srv_core *c = &cores[i];

		tlb_host_core_stats(c->credit, &cs);
		tcs.completed += cs.completed;
		tcs.posted += cs.posted;
		tcs.records += cs.records;
		tcs.ring_full += cs.ring_full;
		tcs.pending += cs.pending;
		tcs.discarded += cs.discarded;
		tcs.switches += cs.switches;
		stats_add(&total, &c->st);
		fprintf(f, "    {\n      \"core\": %u,\n      \"lcore\": %u,\n      \"port\": ",
			c->idx, c->lcore);
		json_string(f, c->port->name);
		fprintf(f, ",\n      \"queue\": %u,\n", c->queue);
		json_counters(f, &c->st, &cs, "      ");
		fprintf(f, "    }%s\n", i + 1 < conf.n_cores ? "," : "");
	}
	fprintf(f, "  ],\n  \"total\": {\n");
	json_counters(f, &total, &tcs, "    ");
	fprintf(f, "  }\n}\n");
	if (f != stdout) {
		if (fclose(f) != 0) {
			SRV_LOG(ERR, "--stats %s: %s", conf.stats_file,
				strerror(errno));
			return -1;
		}
	} else {
		fflush(f);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int lcore, n_workers, need_workers;
	struct sigaction sa;
	uint32_t i;
	int ret, rc = 1;

	/* Logs to stderr, so that stdout carries nothing but the stats. */
	rte_openlog_stream(stderr);
	rte_set_application_usage_hook(eal_usage_hook);
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "turbolb-server: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	argc -= ret;
	argv += ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (parse_args(argc, argv) < 0)
		goto out_eal;
	n_workers = rte_lcore_count() - 1;
	if (conf.n_cores == 0)
		conf.n_cores = n_workers;
	/* Emulated cores all run on one worker lcore. */
	need_workers = conf.mode == MODE_EMULATE ? 1 : conf.n_cores;
	if (conf.n_cores == 0 || n_workers < need_workers) {
		if (conf.mode == MODE_EMULATE)
			SRV_LOG(ERR, "--mode emulate needs one EAL worker lcore, the EAL has none (e.g. --lcores=0@0,1@1)");
		else
			SRV_LOG(ERR, "--cores %u needs as many EAL worker lcores, the EAL has %u (map lcores to CPUs, e.g. --lcores=0@0,(1-%u)@1)",
				conf.n_cores, n_workers,
				conf.n_cores == 0 ? 1 : conf.n_cores);
		goto out_eal;
	}
	tsc_hz = rte_get_tsc_hz();

	cores = rte_zmalloc("srv_cores", sizeof(*cores) * conf.n_cores,
			    RTE_CACHE_LINE_SIZE);
	if (cores == NULL) {
		SRV_LOG(ERR, "out of memory for %u cores", conf.n_cores);
		goto out_eal;
	}
	i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == need_workers)
			break;
		cores[i].idx = i;
		cores[i].lcore = lcore;
		i++;
	}
	for (i = need_workers; i < conf.n_cores; i++) {
		cores[i].idx = i;
		cores[i].lcore = cores[0].lcore;
	}
	for (i = 0; conf.mode == MODE_EMULATE && i < conf.n_cores; i++) {
		if (emu_core_init(&cores[i].emu, conf.emu_depth) < 0) {
			SRV_LOG(ERR, "out of memory for %u emulated cores of depth %u",
				conf.n_cores, conf.emu_depth);
			goto out_cores;
		}
	}
	if (conf.mode == MODE_KV && kv_init(conf.kv_capacity) < 0) {
		SRV_LOG(ERR, "out of memory for a kv table of %u entries",
			conf.kv_capacity);
		goto out_cores;
	}
	if (conf.credit_ring != NULL && credit_setup() < 0)
		goto out_host;
	if (find_ports() < 0 || ports_setup() < 0)
		goto out_port;

	SRV_LOG(INFO, "serving: mode %s, %u cores on %u port%s, UDP port %u%s, idle sleep %u us",
		mode_names[conf.mode], conf.n_cores, n_ports,
		n_ports == 1 ? "" : "s",
		conf.popts.udp_ports[0],
		conf.popts.n_udp_ports > 1 ? " (and more)" : "",
		conf.idle_sleep_us);
	if (conf.mode == MODE_EMULATE) {
		ret = rte_eal_remote_launch(emu_loop, NULL, cores[0].lcore);
		if (ret != 0) {
			SRV_LOG(ERR, "cannot launch the emulated cores on lcore %u: %s",
				cores[0].lcore, rte_strerror(-ret));
			force_quit = true;
		}
	}
	for (i = 0; conf.mode != MODE_EMULATE && i < conf.n_cores; i++) {
		ret = rte_eal_remote_launch(core_loop, &cores[i],
					    cores[i].lcore);
		if (ret != 0) {
			SRV_LOG(ERR, "cannot launch core %u on lcore %u: %s",
				i, cores[i].lcore, rte_strerror(-ret));
			force_quit = true;
			break;
		}
	}
	if (!force_quit)
		watch_loop();
	rte_eal_mp_wait_lcore();
	emu_release();
	SRV_LOG(INFO, "stopped");
	rc = write_stats() == 0 ? 0 : 1;

out_port:
	ports_close();
	if (pool != NULL) {
		unsigned int in_use;

		in_use = rte_mempool_in_use_count(pool);
		if (in_use != 0)
			SRV_LOG(WARNING, "%u mbufs still in use at exit",
				in_use);
		rte_mempool_free(pool);
	}
out_host:
	tlb_host_close(host);
	free(kv.sets);
out_cores:
	emu_release();
	rte_free(cores);
out_eal:
	rte_eal_cleanup();
	return rc;
}
