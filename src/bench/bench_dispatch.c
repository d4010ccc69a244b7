/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-bench: how many requests per second one dispatcher lcore of
 * turbolbd steers, measured on the real tlb_dp_poll() over net_ring ports,
 * next to testpmd-like io and macswap forwarding over the very same rings.
 * See docs/performance.md; scripts/bench-dispatch.sh runs the whole set
 * (with dpdk-testpmd and callgrind) and writes results/bench-dispatch.json.
 *
 * It sets up its own EAL (no hugepages, no PCI, no shared config), so it
 * runs unchanged under valgrind. With --callgrind every measured window is
 * bracketed by CALLGRIND_ZERO_STATS / CALLGRIND_DUMP_STATS_AT(label):
 * under --toggle-collect=tlb_dp_poll each dump holds exactly the
 * instructions the datapath spent on that window's packets.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#ifdef TLB_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS                                                   \
	do {                                                                   \
	} while (0)
#define CALLGRIND_DUMP_STATS_AT(s)                                             \
	do {                                                                   \
		(void)(s);                                                     \
	} while (0)
#endif

#include "turbolb/policy.h"
#include "bench.h"
#include "cli.h"

#define MAX_LIST      8
#define FWD_MAX_BURST 512

enum fwd_kind { FWD_NONE = 0, FWD_IO = 1, FWD_MACSWAP = 2 };
static const char *const fwd_names[] = {"turbolbd", "io", "macswap"};
static const char *const mode_names[] = {"request", "reqresp"};

struct opts {
	const char *policies[MAX_LIST];
	unsigned int n_policies;
	unsigned int cores[MAX_LIST], n_cores;
	unsigned int dps[MAX_LIST], n_dps;
	bool mode[2];
	uint64_t packets;
	uint64_t warmup;
	unsigned int reps;
	unsigned int preload;
	unsigned int flows;
	unsigned int burst;
	struct bench_dp_cfg dpc;
	unsigned int jbsq_k;
	unsigned int qpp;
	bool baselines;
	enum bench_credits credits;
	bool verify;
	bool smoke;
	bool callgrind;
	bool huge;
	unsigned int memory_mb;
	const char *json;
	double loads[MAX_LIST]; /* latency mode: fractions of saturation */
	unsigned int n_loads;
	uint64_t lat_packets;
	int cpus[BENCH_MAX_DPS + 1];
	unsigned int n_cpus;
	char **eal_extra;
	int n_eal_extra;
};

/* One line of results: a policy (or a forwarding baseline) in a world. */
struct result {
	char label[64];
	int fwd;
	const char *policy;
	enum bench_mode mode;
	unsigned int cores, dps, preload;
	bool copy;
	enum bench_credits credits;
	double mpps[64];     /* wall clock */
	double cpu_mpps[64]; /* per second of the dispatchers' CPU time */
	unsigned int n;
	uint64_t pkts; /* measured packets of the last repetition */
	double pkts_per_poll;
	uint64_t held, released;
	uint64_t fb_frames, responses; /* packet credits, all reps */
	double median, cpu_median;
	double host_share; /* of the last repetition's measured time */
};

/* One line of the latency mode: a policy at a load. */
struct lat_result {
	char label[64];
	const char *policy;
	enum bench_mode mode;
	unsigned int cores;
	double load;        /* the fraction asked for; 1: saturation */
	double sat_mrps;    /* the saturation it is a fraction of */
	double rate_mrps;   /* achieved, gaps left out */
	double dispatch_ns; /* CPU time per request at saturation */
	uint64_t p50, p99, p999, max, clean_p99;
	double mean;
	uint32_t polls_waited_max;
	uint64_t samples, preempted, gaps, backlogged;
	double nic_drop_share; /* of the arrivals: dropped at a full RX ring */
	double gap_ms;
	/* The queueing behind the residence: a poll's mean length in the
	 * daemon's clock, and the requests arriving in one; a request waits
	 * for the rest of the poll it arrives in and for the poll that sends
	 * it, and in reqresp its response for one more. */
	double poll_ns, requests_per_poll;
};

static struct opts o;
static struct lat_result *lats;
static unsigned int n_lats, cap_lats;
static struct bench_lat lat_run; /* one at a time; large */
static struct result *results;
static unsigned int n_results, cap_results;
static struct bench_run run; /* one at a time; large */

static int
policy_item(const char *item, unsigned int i, void *ctx, char *err,
	    size_t errlen)
{
	const struct tlb_policy_ops *p = tlb_policy_find(item);

	(void)ctx;
	if (p == NULL) {
		snprintf(err, errlen, "no policy '%s'", item);
		return -1;
	}
	if (i == MAX_LIST) {
		snprintf(err, errlen, "more than %u policies", MAX_LIST);
		return -1;
	}
	o.policies[i] = p->name;
	return 0;
}

static int
policies_fn(const struct cli_opt *opt, const char *arg, char *err,
	    size_t errlen)
{
	int n = cli_list(arg, policy_item, NULL, err, errlen);

	(void)opt;
	if (n < 0)
		return -1;
	o.n_policies = (unsigned int)n;
	return 0;
}

static int
mode_item(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	(void)i;
	(void)ctx;
	if (strcmp(item, "request") == 0) {
		o.mode[BENCH_REQUEST] = true;
	} else if (strcmp(item, "reqresp") == 0) {
		o.mode[BENCH_REQRESP] = true;
	} else {
		snprintf(err, errlen, "no mode '%s' (request, reqresp)", item);
		return -1;
	}
	return 0;
}

static int
modes_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	o.mode[0] = o.mode[1] = false;
	return cli_list(arg, mode_item, NULL, err, errlen) < 0 ? -1 : 0;
}

static int
load_item(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	double v;

	(void)ctx;
	if (cli_parse_double(item, &v) != 0 || !(v > 0 && v <= 1) ||
	    i == MAX_LIST) {
		snprintf(err, errlen,
			 "'%s' is no fraction in (0, 1] (at "
			 "most %u)",
			 item, MAX_LIST);
		return -1;
	}
	o.loads[i] = v;
	return 0;
}

static int
loads_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	int n = cli_list(arg, load_item, NULL, err, errlen);

	(void)opt;
	if (n < 0)
		return -1;
	o.n_loads = (unsigned int)n;
	return 0;
}

static const char *const credit_modes[] = {"inband", "ring", "packet", NULL};
/* In a run's label: in-band credits say nothing. */
static const char *const credit_label[] = {"", "ring", "packet"};
static unsigned int cpus_u[BENCH_MAX_DPS + 1];
static bool no_baselines, warm_set, dps_set;

#define UINT_OPT(nm, field, low, high, dflt, text)                             \
	{                                                                      \
		.name = nm, .kind = CLI_UINT, CLI_DEST(o.field), .lo = (low),  \
		.hi = (high), .def = (dflt), .arg = "N", .help = text          \
	}

static const struct cli_opt opts[] = {
	{.name = "policies",
	 .kind = CLI_FN,
	 .fn = policies_fn,
	 .def = "rss,rr,random,pod,jsq,jlq,jbsq",
	 .arg = "LIST",
	 .help = "policies to measure"},
	{.name = "modes",
	 .kind = CLI_FN,
	 .fn = modes_fn,
	 .def = "request,reqresp",
	 .arg = "LIST",
	 .help = "request: requests only, no responses (jbsq skipped:\n"
		 "it needs completions); reqresp: the benchmark answers\n"
		 "every request, the datapath also runs the response path"},
	{.name = "cores",
	 .kind = CLI_UINT_LIST,
	 CLI_DEST(o.cores),
	 .lo = 1,
	 .hi = TLB_MAX_CORES,
	 .max_items = MAX_LIST,
	 .count = &o.n_cores,
	 .def = "16",
	 .arg = "LIST",
	 .help = "host cores (targets), e.g. 2,8,16,64"},
	{.name = "dispatchers",
	 .kind = CLI_UINT_LIST,
	 CLI_DEST(o.dps),
	 .lo = 1,
	 .hi = BENCH_MAX_DPS,
	 .max_items = MAX_LIST,
	 .count = &o.n_dps,
	 .seen = &dps_set,
	 .def = "1",
	 .arg = "LIST",
	 .help = "dispatcher lcores, e.g. 1,2"},
	UINT_OPT("packets", packets, 1, UINT64_MAX / 4, "2000000",
		 "uplink packets per measurement"),
	{.name = "warmup",
	 .kind = CLI_UINT,
	 CLI_DEST(o.warmup),
	 .hi = UINT64_MAX / 4,
	 .seen = &warm_set,
	 .arg = "N",
	 .help = "packets before measuring (default packets/10)"},
	UINT_OPT("reps", reps, 1, 64, "5",
		 "repetitions, the median is reported"),
	UINT_OPT("preload", preload, 0, 0, NULL,
		 "requests in flight per dispatcher (default: max(1024,\n"
		 "burst * (cores/dispatchers + 4)))"),
	UINT_OPT("flows", flows, 1, 60000, "1024", "client flows"),
	UINT_OPT("burst", burst, 1, FWD_MAX_BURST, "32", "datapath.burst"),
	UINT_OPT("tx-hold-ns", dpc.tx_hold_ns, 0, 0, NULL,
		 "datapath.tx_hold_ns (default 1000)"),
	UINT_OPT("housekeeping-us", dpc.housekeeping_us, 0, 0, "100",
		 "datapath.housekeeping_us"),
	UINT_OPT("fifo", dpc.fifo_cap, 0, 0, "4096", "fifo.capacity"),
	UINT_OPT("jbsq-k", jbsq_k, 0, 0, "2", "policy.k for jbsq"),
	UINT_OPT("queues-per-port", qpp, 1, 16, "4",
		 "target queues per net_ring port"),
	{.name = "no-baselines",
	 .kind = CLI_FLAG,
	 CLI_DEST(no_baselines),
	 .help = "skip the io/macswap forwarding loops"},
	{.name = "credits",
	 .kind = CLI_CHOICE,
	 CLI_DEST(o.credits),
	 .choices = credit_modes,
	 .arg = "MODE",
	 .help = "inband (default: completions counted from responses),\n"
		 "ring (a credit ring the benchmark's host posts to)\n"
		 "or packet (feedback frames on the target RX rings)"},
	{.name = "verify",
	 .kind = CLI_FLAG,
	 CLI_DEST(o.verify),
	 .help = "also run copy worlds that check every frame"},
	{.name = "smoke",
	 .kind = CLI_FLAG,
	 CLI_DEST(o.smoke),
	 .help = "tiny check that everything works (fails on any drop\n"
		 "or misroute), 1 and 2 dispatchers; no speed is asserted"},
	{.name = "callgrind",
	 .kind = CLI_FLAG,
	 CLI_DEST(o.callgrind),
	 .help = "one repetition, windows marked for callgrind dumps"},
	{.name = "latency",
	 .kind = CLI_FN,
	 .fn = loads_fn,
	 .arg = "LIST",
	 .help = "latency mode: requests arrive (open loop, Poisson)\n"
		 "at these fractions of the dispatcher's saturation\n"
		 "rate, measured first in the same run (e.g.\n"
		 "0.5,0.9,0.99); reports each request's residence in\n"
		 "the daemon. One dispatcher; replaces the rate runs"},
	UINT_OPT("latency-packets", lat_packets, 1, UINT64_MAX / 4, "200000",
		 "samples per load"),
	{.name = "json",
	 .kind = CLI_STRING,
	 CLI_DEST(o.json),
	 .arg = "FILE",
	 .help = "write the results as JSON"},
	{.name = "cpus",
	 .kind = CLI_UINT_LIST,
	 CLI_DEST(cpus_u),
	 .hi = CPU_SETSIZE - 1,
	 .max_items = BENCH_MAX_DPS + 1,
	 .count = &o.n_cpus,
	 .arg = "LIST",
	 .help = "CPUs for the main lcore, then the dispatchers"},
	{.name = "huge",
	 .kind = CLI_FLAG,
	 CLI_DEST(o.huge),
	 .help = "use hugepages (default --no-huge)"},
	{.name = "memory",
	 .kind = CLI_UINT,
	 CLI_DEST(o.memory_mb),
	 .def = "512",
	 .arg = "MB",
	 .help = "EAL -m"},
	CLI_OPT_HELP('h'),
	{.kind = CLI_END},
};

static const struct cli_spec spec = {
	.prog = "turbolb-bench",
	.usage = "[options] [-- extra EAL arguments]",
	.opts = opts,
};

/* CLI_OK, CLI_DONE (help printed) or CLI_ERROR (reported). */
static int
parse_args(int argc, char **argv)
{
	int first, rc;

	o.dpc.tx_hold_ns = TLB_CFG_TX_HOLD_NS;
	rc = cli_parse(&spec, argc, argv, &first);
	if (rc != CLI_OK)
		return rc;
	o.baselines = !no_baselines;
	for (unsigned int i = 0; i < o.n_cpus; i++)
		o.cpus[i] = (int)cpus_u[i];
	if (first < argc) {
		o.eal_extra = argv + first;
		o.n_eal_extra = argc - first;
	}
	if (o.smoke) {
		o.packets = 20000;
		o.reps = 1;
		o.verify = true;
		/* Two dispatchers too: the partitioning is checked frame by
		 * frame (each core reached only from its own dispatcher). */
		if (!dps_set) {
			o.dps[0] = 1;
			o.dps[1] = 2;
			o.n_dps = 2;
		}
		if (!warm_set)
			o.warmup = 2000;
	}
	if (o.callgrind)
		o.reps = 1;
	if (!warm_set && !o.smoke)
		o.warmup = RTE_MAX(o.packets / 10, 1000ULL);
	return CLI_OK;
}

/* ---- the measured loops ---- */

static void
barrier(struct bench_run *r)
{
	uint32_t n = r->w->n_dps;
	uint32_t gen = __atomic_load_n(&r->bar_gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&r->bar_count, 1, __ATOMIC_ACQ_REL) == n) {
		__atomic_store_n(&r->bar_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->bar_gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&r->bar_gen, __ATOMIC_ACQUIRE) == gen)
		rte_pause();
}

/* testpmd's macswap, on our ports: swap the MAC addresses and set the
 * offload fields it sets, so the same cache lines are written. */
static inline void
macswap(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_ether_addr a = eth->dst_addr;

	eth->dst_addr = eth->src_addr;
	eth->src_addr = a;
	m->ol_flags &= RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL;
	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = sizeof(struct rte_ipv4_hdr);
}

/* One iteration of a forwarding baseline: one RX burst from the uplink,
 * one TX burst to the next target queue of this dispatcher. Not inlined:
 * callgrind collects it by name (--toggle-collect=bench_fwd_poll). */
__rte_noinline unsigned int bench_fwd_poll(struct bench_run *r, unsigned int d);
__rte_noinline unsigned int
bench_fwd_poll(struct bench_run *r, unsigned int d)
{
	struct bench_world *w = r->w;
	struct rte_mbuf *pkts[FWD_MAX_BURST];
	unsigned int t = r->fwd_next[d];
	unsigned int core = d + t * w->n_dps;
	uint16_t n, sent;

	n = rte_eth_rx_burst(w->up_port, (uint16_t)d, pkts, (uint16_t)w->burst);
	if (unlikely(n == 0))
		return 0;
	if (r->fwd == FWD_MACSWAP) {
		for (uint16_t i = 0; i < n; i++) {
			if (likely(i + 1 < n))
				rte_prefetch0(
					rte_pktmbuf_mtod(pkts[i + 1], void *));
			macswap(pkts[i]);
		}
	}
	sent = rte_eth_tx_burst(w->t_port[core], w->t_queue[core], pkts, n);
	if (unlikely(sent < n))
		rte_pktmbuf_free_bulk(pkts + sent,
				      n - sent); /* fails the check */
	core += w->n_dps;
	r->fwd_next[d] = core < w->n_cores ? t + 1 : 0;
	r->fwd_rx[d] += n;
	return n;
}

struct job {
	struct bench_run *r;
	unsigned int d;
};

static inline uint64_t
uplink_rx(const struct bench_run *r, unsigned int d)
{
	if (r->fwd != FWD_NONE)
		return r->fwd_rx[d];
	return r->w->dp[d].stats.c[TLB_DP_rx_uplink];
}

static inline void
iterate(struct bench_run *r, unsigned int d, bool host)
{
	if (r->fwd != FWD_NONE)
		bench_fwd_poll(r, d);
	else
		tlb_dp_poll(&r->w->dp[d]);
	if (host)
		bench_host_step(r, d);
}

/* One measured iteration. The host step's time is counted apart: the
 * rates are of the dispatcher alone, as the latency mode's clock is. */
static inline void
iterate_timed(struct bench_run *r, unsigned int d, bool host)
{
	uint64_t t;

	iterate(r, d, false);
	if (!host)
		return;
	t = rte_rdtsc();
	bench_host_step(r, d);
	r->host_tsc[d] += rte_rdtsc() - t;
}

/* A world whose packets stopped coming back (all dropped, or held for
 * good) would be polled forever: fail it after this many polls without
 * an uplink packet. A bound on a broken run, not a timing assumption. */
#define STALL_POLLS (1u << 20)

static inline bool
stalled(struct bench_run *r, unsigned int d, uint64_t *last, uint64_t *idle)
{
	uint64_t v = uplink_rx(r, d);

	if (v != *last) {
		*last = v;
		*idle = 0;
		return false;
	}
	if (++*idle < STALL_POLLS)
		return false;
	bench_fail(r,
		   "dispatcher %u: no uplink packet in %u polls (packets "
		   "dropped or held for good)",
		   d, STALL_POLLS);
	return true;
}

static uint64_t
thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Dispatcher d's CPU time measuring, less its host step's. The host step
 * is timed on the TSC, which also counts a preemption inside it: were it
 * ever longer than the thread's CPU time, the CPU time is taken whole. */
static double
dispatcher_cpu_ns(const struct bench_run *r, unsigned int d)
{
	double host_ns = (double)r->host_tsc[d] * 1e9 / rte_get_tsc_hz();
	double cpu = (double)r->cpu_ns[d];

	return cpu > host_ns ? cpu - host_ns : cpu;
}

static int
worker(void *arg)
{
	struct job *j = arg;
	struct bench_run *r = j->r;
	unsigned int d = j->d;
	bool host = r->w->copy;
	uint64_t start, polls = 0, t0, t1, c0, last = 0, idle = 0;

	while (uplink_rx(r, d) < r->warmup && !r->failed &&
	       !stalled(r, d, &last, &idle))
		iterate(r, d, host);
	barrier(r);
	if (d == 0 && r->callgrind)
		CALLGRIND_ZERO_STATS;
	barrier(r);
	start = uplink_rx(r, d);
	c0 = thread_cpu_ns();
	t0 = rte_rdtsc_precise();
	while (uplink_rx(r, d) - start < r->quota && !r->failed &&
	       !stalled(r, d, &last, &idle)) {
		iterate_timed(r, d, host);
		polls++;
	}
	t1 = rte_rdtsc_precise();
	/* On a shared machine the wall clock also counts the time other
	 * processes had this CPU; the thread's CPU time does not. */
	r->cpu_ns[d] = thread_cpu_ns() - c0;
	r->t0[d] = t0;
	r->t1[d] = t1;
	r->pkts[d] = uplink_rx(r, d) - start;
	r->polls[d] = polls;
	barrier(r);
	if (d == 0 && r->callgrind)
		CALLGRIND_DUMP_STATS_AT(r->label);
	return 0;
}

/* ---- one measurement ---- */

static unsigned int
world_lcore(unsigned int d)
{
	return d + 1; /* lcore 0 is the main one */
}

static int
init_dps(struct bench_world *w, const char *policy)
{
	char err[256];

	snprintf(w->cfg.policy.name, sizeof(w->cfg.policy.name), "%s", policy);
	w->cfg.policy.params.k = o.jbsq_k;
	for (unsigned int d = 0; d < w->n_dps; d++) {
		if (tlb_dp_init(&w->dp[d], &w->cfg, world_lcore(d), d, w->xport,
				err, sizeof(err)) != 0) {
			fprintf(stderr, "turbolb-bench: dispatcher %u: %s\n", d,
				err);
			return -1;
		}
		w->dp_live[d] = true;
		tlb_dps[d] = &w->dp[d];
		/* Ring credits: the host side is attached and running
		 * (bench_world_create). The datapath learns that at its
		 * first housekeeping, after the preloaded requests would
		 * have found no core in rotation; and taking the host's
		 * epoch then for an attach, it would strand what it sent. */
		if (w->credits != BENCH_CREDITS_INBAND) {
			w->dp[d].host_epoch =
				tlb_transport_host_epoch(w->xport);
			for (uint32_t l = 0; l < w->dp[d].n_cores; l++)
				tlb_lv_set_online(w->dp[d].lv, l, true);
		}
	}
	tlb_n_dps = w->n_dps;
	return 0;
}

static void
fini_dps(struct bench_world *w)
{
	for (unsigned int d = 0; d < w->n_dps; d++)
		if (w->dp_live[d]) {
			tlb_dp_fini(&w->dp[d]);
			w->dp_live[d] = false;
		}
	tlb_n_dps = 0;
}

static double
median(double *v, unsigned int n)
{
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static struct result *
new_result(void)
{
	if (n_results == cap_results) {
		unsigned int cap = cap_results ? 2 * cap_results : 64;
		struct result *nr = realloc(results, cap * sizeof(*nr));

		if (nr == NULL)
			return NULL;
		results = nr;
		cap_results = cap;
	}
	memset(&results[n_results], 0, sizeof(results[0]));
	return &results[n_results++];
}

/* Runs one policy (or baseline) in w, o.reps times. Returns -1 on a
 * failed check. */
static int
measure(struct bench_world *w, struct rte_mempool *pool, int fwd,
	const char *policy, enum bench_mode mode)
{
	struct bench_run *r = &run;
	struct result *res = new_result();
	struct job jobs[BENCH_MAX_DPS];
	char err[256];
	int rc = 0;

	if (res == NULL)
		return -1;
	snprintf(res->label, sizeof(res->label), "c%ud%u%s%s/%s/%s", w->n_cores,
		 w->n_dps, w->copy ? "copy" : "", credit_label[w->credits],
		 mode_names[mode], fwd ? fwd_names[fwd] : policy);
	res->fwd = fwd;
	res->policy = fwd ? NULL : policy;
	res->mode = mode;
	res->cores = w->n_cores;
	res->dps = w->n_dps;
	res->preload = w->preload;
	res->copy = w->copy;
	res->credits = w->credits;

	for (unsigned int rep = 0; rep < o.reps && rc == 0; rep++) {
		uint64_t total = 0, polls = 0, host = 0, span = 0;
		double wall_rate = 0, cpu_rate = 0;
		unsigned int fifo = 0;

		memset(r, 0, sizeof(*r));
		memset(r->flow_core, 0xff, sizeof(r->flow_core));
		r->w = w;
		r->mode = mode;
		r->verify = o.verify && w->copy;
		r->callgrind = o.callgrind;
		r->label = res->label;
		r->fwd = fwd;
		r->policy = fwd ? "" : policy;
		r->warmup = o.warmup / w->n_dps;
		r->quota = o.packets / w->n_dps;
		if (bench_world_load(w, pool, mode, err, sizeof(err)) != 0) {
			fprintf(stderr, "turbolb-bench: %s\n", err);
			return -1;
		}
		for (unsigned int p = 0; p < w->n_tports; p++)
			rte_eth_stats_reset(w->t_port[p * w->queues_per_port]);
		if (fwd == FWD_NONE && init_dps(w, policy) != 0)
			return -1;
		for (unsigned int d = 0; d < w->n_dps; d++) {
			jobs[d].r = r;
			jobs[d].d = d;
			if (rte_eal_remote_launch(worker, &jobs[d],
						  world_lcore(d)) != 0) {
				fprintf(stderr,
					"turbolb-bench: lcore %u busy\n",
					world_lcore(d));
				return -1;
			}
		}
		/* Sleep rather than spin: on a small machine the main
		 * lcore shares a CPU with a dispatcher. */
		for (unsigned int d = 0; d < w->n_dps; d++) {
			while (rte_eal_get_lcore_state(world_lcore(d)) != WAIT)
				usleep(1000);
			rte_eal_wait_lcore(world_lcore(d));
		}
		for (unsigned int d = 0; d < w->n_dps; d++) {
			if (fwd == FWD_NONE) {
				tlb_dp_flush(&w->dp[d]);
				fifo += w->dp[d].fifo.tail - w->dp[d].fifo.head;
				res->held += w->dp[d].stats.c[TLB_DP_held];
				res->released +=
					w->dp[d].stats.c[TLB_DP_released];
				res->fb_frames +=
					w->dp[d].stats
						.c[TLB_DP_feedback_frames];
				res->responses +=
					w->dp[d].stats.c[TLB_DP_responses];
			}
			if (w->copy)
				bench_host_step(r, d);
			total += r->pkts[d];
			polls += r->polls[d];
			host += r->host_tsc[d];
			span += r->t1[d] - r->t0[d];
			/* Each dispatcher's packets over its own time less
			 * its host step's, summed: they run side by side. */
			wall_rate +=
				(double)r->pkts[d] * rte_get_tsc_hz() /
				(double)(r->t1[d] - r->t0[d] - r->host_tsc[d]) /
				1e6;
			cpu_rate += (double)r->pkts[d] * 1e3 /
				    dispatcher_cpu_ns(r, d);
		}
		if (bench_check(r, fifo) != 0) {
			fprintf(stderr, "turbolb-bench: %s: FAILED: %s\n",
				res->label, r->error);
			rc = -1;
		}
		fini_dps(w);
		res->mpps[res->n++] = wall_rate;
		res->cpu_mpps[res->n - 1] = cpu_rate;
		res->host_share = span ? (double)host / (double)span : 0;
		res->pkts = total;
		res->pkts_per_poll = polls ? (double)total / (double)polls : 0;
	}
	res->median = median(res->mpps, res->n);
	res->cpu_median = median(res->cpu_mpps, res->n);
	printf("  %-28s %8.3f Mpps wall %8.3f Mpps/CPU-s  (%u reps, %.1f "
	       "pkts/poll%s",
	       res->label, res->median, res->cpu_median, res->n,
	       res->pkts_per_poll, res->held ? ", FIFO used" : "");
	if (res->host_share != 0)
		printf(", host step %.0f%% of the time, left out",
		       100 * res->host_share);
	if (res->fb_frames != 0 && res->responses != 0)
		printf(", %.3f feedback frames per response",
		       (double)res->fb_frames / (double)res->responses);
	printf(")%s\n", rc ? "  FAILED" : "");
	fflush(stdout);
	return rc;
}

static unsigned int
preload_for(unsigned int cores, unsigned int dps)
{
	unsigned int per = (cores + dps - 1) / dps;

	/* Each target's TX buffer may hold a burst less one: enough in
	 * flight that the uplink queue never runs dry. */
	if (o.preload)
		return o.preload;
	return RTE_MAX(1024u, o.burst * (per + 4));
}

/* ---- the latency mode ---- */

#define LAT_INFLIGHT 4096u

static struct lat_result *
new_lat(void)
{
	if (n_lats == cap_lats) {
		unsigned int cap = cap_lats ? 2 * cap_lats : 32;
		struct lat_result *nl = realloc(lats, cap * sizeof(*nl));

		if (nl == NULL)
			return NULL;
		lats = nl;
		cap_lats = cap;
	}
	memset(&lats[n_lats], 0, sizeof(lats[0]));
	return &lats[n_lats++];
}

/* One latency run of policy in w at rate_mpps (0: saturation); fills
 * lat_run. Returns -1 on a failure. */
static int
lat_once(struct bench_world *w, struct rte_mempool *pool, const char *policy,
	 enum bench_mode mode, double rate_mpps)
{
	struct bench_lat *L = &lat_run;

	memset(L, 0, sizeof(*L));
	L->w = w;
	L->pool = pool;
	L->mode = mode;
	L->rate_mpps = rate_mpps;
	L->packets = o.lat_packets;
	L->warmup = o.lat_packets / 10;
	L->inflight = LAT_INFLIGHT;
	L->tsc_hz = rte_get_tsc_hz();
	L->seed = 1;
	bench_world_drain(w);
	if (init_dps(w, policy) != 0)
		return -1;
	if (rte_eal_remote_launch(bench_latency_run, L, world_lcore(0)) != 0) {
		fprintf(stderr, "turbolb-bench: lcore %u busy\n",
			world_lcore(0));
		return -1;
	}
	while (rte_eal_get_lcore_state(world_lcore(0)) != WAIT)
		usleep(1000);
	rte_eal_wait_lcore(world_lcore(0));
	tlb_dp_flush(&w->dp[0]);
	fini_dps(w);
	bench_world_drain(w);
	if (L->failed) {
		fprintf(stderr, "turbolb-bench: latency %s: %s\n", policy,
			L->error);
		return -1;
	}
	return 0;
}

/* The measured window in the daemon's clock, the gaps left out. */
static uint64_t
lat_window_tsc(const struct bench_lat *L)
{
	return L->t1 - L->t0 - L->gap_tsc;
}

/* Requests per second of the measured window. */
static double
lat_rate(const struct bench_lat *L)
{
	uint64_t t = lat_window_tsc(L);

	return t ? (double)L->measured_made * (double)L->tsc_hz / (double)t /
			       1e6
		 : 0;
}

/* Saturation first, then each load of --latency as a fraction of it. */
static int
measure_latency(struct bench_world *w, struct rte_mempool *pool,
		const char *policy, enum bench_mode mode)
{
	const struct bench_lat *L = &lat_run;
	char label[64];
	double sat, dispatch_ns;

	if (strcmp(policy, "jbsq") == 0)
		snprintf(label, sizeof(label), "jbsq:%u", o.jbsq_k);
	else
		snprintf(label, sizeof(label), "%s", policy);
	/* Saturation, the median of three runs of at least 1 M requests:
	 * what every load is a fraction of must not be one spell of this
	 * machine. */
	double sats[3];

	for (unsigned int k = 0; k < 3; k++) {
		uint64_t packets = o.lat_packets;

		o.lat_packets = RTE_MAX(packets, (uint64_t)1000000);
		if (lat_once(w, pool, policy, mode, 0) != 0)
			return -1;
		o.lat_packets = packets;
		sats[k] = lat_rate(L);
	}
	sat = median(sats, 3);
	dispatch_ns = sat > 0 ? 1e3 / sat : 0;
	printf("  %-8s %-7s saturation %7.3f Mrps (%.0f ns of the daemon's "
	       "time a request)\n",
	       label, mode_names[mode], sat, dispatch_ns);
	for (unsigned int i = 0; i < o.n_loads; i++) {
		struct lat_result *x;

		if (lat_once(w, pool, policy, mode, o.loads[i] * sat) != 0)
			return -1;
		x = new_lat();
		if (x == NULL)
			return -1;
		snprintf(x->label, sizeof(x->label), "%s", label);
		x->policy = policy;
		x->mode = mode;
		x->cores = w->n_cores;
		x->load = o.loads[i];
		x->sat_mrps = sat;
		x->rate_mrps = lat_rate(L);
		x->dispatch_ns = dispatch_ns;
		x->p50 = tlb_hist_quantile(&L->all, 0.5);
		x->p99 = tlb_hist_quantile(&L->all, 0.99);
		x->p999 = tlb_hist_quantile(&L->all, 0.999);
		x->max = L->all.max;
		x->clean_p99 = tlb_hist_quantile(&L->clean, 0.99);
		x->mean = tlb_hist_mean(&L->all);
		x->polls_waited_max = L->polls_waited_max;
		x->samples = L->samples;
		x->preempted = L->preempted;
		x->gaps = L->gaps;
		x->gap_ms = (double)L->gap_tsc * 1e3 / (double)L->tsc_hz;
		x->backlogged = L->backlogged;
		x->poll_ns = L->measured_polls
				     ? (double)lat_window_tsc(L) * 1e9 /
					       (double)L->tsc_hz /
					       (double)L->measured_polls
				     : 0;
		x->requests_per_poll =
			L->measured_polls ? (double)L->measured_made /
						    (double)L->measured_polls
					  : 0;
		x->nic_drop_share = L->nic_dropped
					    ? (double)L->nic_dropped /
						      (double)(L->nic_dropped +
							       L->measured_made)
					    : 0;
		printf("  %-8s %-7s load %4.2f %7.3f Mrps  residence p50 "
		       "%6" PRIu64 " p99 %7" PRIu64 " p99.9 %8" PRIu64
		       " max %9" PRIu64
		       " ns  polls waited max %u  preempted %.3f%% "
		       "(clean p99 %" PRIu64 ")  poll %.0f ns, %.1f "
		       "requests a poll\n",
		       label, mode_names[mode], x->load, x->rate_mrps, x->p50,
		       x->p99, x->p999, x->max, x->polls_waited_max,
		       x->samples ? 100.0 * (double)x->preempted /
					    (double)x->samples
				  : 0,
		       x->clean_p99, x->poll_ns, x->requests_per_poll);
		if (x->nic_drop_share != 0)
			printf("  %-8s %-7s load %4.2f dropped at the full RX "
			       "ring: %.2f%% of the arrivals\n",
			       label, mode_names[mode], x->load,
			       100 * x->nic_drop_share);
		fflush(stdout);
	}
	return 0;
}

static void
write_json_latency(FILE *f)
{
	fprintf(f, "  \"latency\": [\n");
	for (unsigned int i = 0; i < n_lats; i++) {
		const struct lat_result *x = &lats[i];

		fprintf(f,
			"    { \"policy\": \"%s\", \"mode\": \"%s\", "
			"\"cores\": %u, \"dispatchers\": 1, "
			"\"tx_hold_ns\": %u, \"load_fraction\": %.3f, "
			"\"saturation_mrps\": %.4f, \"rate_mrps\": %.4f, "
			"\"dispatch_ns\": %.1f, "
			"\"residence_p50_ns\": %" PRIu64 ", "
			"\"residence_p99_ns\": %" PRIu64 ", "
			"\"residence_p999_ns\": %" PRIu64 ", "
			"\"residence_max_ns\": %" PRIu64 ", "
			"\"residence_mean_ns\": %.1f, "
			"\"residence_clean_p99_ns\": %" PRIu64 ", "
			"\"polls_waited_max\": %u, \"samples\": %" PRIu64
			", \"preempted\": %" PRIu64 ", \"gaps\": %" PRIu64
			", \"gap_ms\": %.3f, \"backlogged\": %" PRIu64
			", \"nic_drop_share\": %.5f, \"poll_ns\": %.1f"
			", \"requests_per_poll\": %.3f }%s\n",
			x->label, mode_names[x->mode], x->cores,
			o.dpc.tx_hold_ns, x->load, x->sat_mrps, x->rate_mrps,
			x->dispatch_ns, x->p50, x->p99, x->p999, x->max,
			x->mean, x->clean_p99, x->polls_waited_max, x->samples,
			x->preempted, x->gaps, x->gap_ms, x->backlogged,
			x->nic_drop_share, x->poll_ns, x->requests_per_poll,
			i + 1 < n_lats ? "," : "");
	}
	fprintf(f, "  ],\n");
}

/* The result of policy in mode at the lowest load measured, or NULL. */
static const struct lat_result *
lat_lowest(const char *policy, enum bench_mode mode, unsigned int cores)
{
	const struct lat_result *best = NULL;

	for (unsigned int i = 0; i < n_lats; i++)
		if (lats[i].policy == policy && lats[i].mode == mode &&
		    lats[i].cores == cores &&
		    (best == NULL || lats[i].load < best->load))
			best = &lats[i];
	return best;
}

/* What turbolb-sim takes to run with what this daemon adds: the time of a
 * request at saturation, the request's residence (NIC -> core) and the
 * response's (the difference of the two modes), at the lowest load. */
static void
print_sim_figures(const char *policy, unsigned int cores)
{
	const struct lat_result *rq = lat_lowest(policy, BENCH_REQUEST, cores);
	const struct lat_result *rr = lat_lowest(policy, BENCH_REQRESP, cores);

	if (rq == NULL)
		return;
	printf("  %-8s turbolb-sim --dispatch-ns %.0f --delivery-ns %" PRIu64,
	       rq->label, rq->dispatch_ns, rq->p50);
	if (rr != NULL && rr->p50 > rq->p50)
		printf(" --feedback-ns %" PRIu64 " (in-band credits)",
		       rr->p50 - rq->p50);
	printf("\n");
}

/* Every policy and mode of the options in a copy world. jbsq needs
 * completions: reqresp only. */
static int
latency_world(struct bench_world *w, struct rte_mempool *pool)
{
	for (unsigned int p = 0; p < o.n_policies; p++) {
		for (int mode = 0; mode < 2; mode++) {
			if (!o.mode[mode] ||
			    (mode == BENCH_REQUEST &&
			     strcmp(o.policies[p], "jbsq") == 0))
				continue;
			if (measure_latency(w, pool, o.policies[p],
					    (enum bench_mode)mode) != 0)
				return -1;
		}
		print_sim_figures(o.policies[p], w->n_cores);
	}
	return 0;
}

/* ---- output ---- */

static void
write_json(const char *path, const char *cpus)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "turbolb-bench: %s: %s\n", path,
			strerror(errno));
		return;
	}
	fprintf(f,
		"{\n  \"tool\": \"turbolb-bench\",\n  \"version\": \"%s\",\n"
		"  \"tsc_hz\": %" PRIu64 ",\n  \"cpus\": \"%s\",\n"
		"  \"packets\": %" PRIu64 ",\n  \"reps\": %u,\n"
		"  \"burst\": %u,\n  \"flows\": %u,\n  \"tx_hold_ns\": %u,\n"
		"  \"jbsq_k\": %u,\n  \"queues_per_port\": %u,\n"
		"  \"callgrind\": %s,\n  \"hugepages\": %s,\n",
		TLB_VERSION, rte_get_tsc_hz(), cpus, o.packets, o.reps, o.burst,
		o.flows, o.dpc.tx_hold_ns, o.jbsq_k, o.qpp,
		o.callgrind ? "true" : "false", o.huge ? "true" : "false");
	write_json_latency(f);
	fprintf(f, "  \"results\": [\n");
	for (unsigned int i = 0; i < n_results; i++) {
		const struct result *x = &results[i];

		fprintf(f,
			"    { \"label\": \"%s\", \"kind\": \"%s\", "
			"\"policy\": %s%s%s, \"mode\": \"%s\", \"cores\": %u, "
			"\"dispatchers\": %u, \"preload\": %u, "
			"\"topology\": \"%s\", \"credits\": \"%s\", "
			"\"packets\": %" PRIu64 ", "
			"\"pkts_per_poll\": %.2f, \"held\": %" PRIu64 ", "
			"\"released\": %" PRIu64 ", \"median_mpps\": %.4f, "
			"\"median_cpu_mpps\": %.4f, \"mpps\": [",
			x->label, fwd_names[x->fwd], x->policy ? "\"" : "",
			x->policy ? x->policy : "null", x->policy ? "\"" : "",
			mode_names[x->mode], x->cores, x->dps, x->preload,
			x->copy ? "copy" : "direct", credit_modes[x->credits],
			x->pkts, x->pkts_per_poll, x->held, x->released,
			x->median, x->cpu_median);
		for (unsigned int k = 0; k < x->n; k++)
			fprintf(f, "%s%.4f", k ? ", " : "", x->mpps[k]);
		fprintf(f, "], \"cpu_mpps\": [");
		for (unsigned int k = 0; k < x->n; k++)
			fprintf(f, "%s%.4f", k ? ", " : "", x->cpu_mpps[k]);
		fprintf(f, "] }%s\n", i + 1 < n_results ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	fclose(f);
}

/* ---- main ---- */

static int
pick_cpus(unsigned int need, char *lcores, size_t len, char *desc, size_t dlen)
{
	cpu_set_t set;
	int avail[CPU_SETSIZE];
	unsigned int n = 0;
	size_t off = 0, doff = 0;

	if (o.n_cpus == 0) {
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			return -1;
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				avail[n++] = c;
		if (n == 0)
			return -1;
		/* main on the first CPU, dispatcher k on the (k+1)-th,
		 * wrapping round on small machines */
		for (unsigned int l = 0; l < need; l++)
			o.cpus[l] = avail[l % n];
		o.n_cpus = need;
	}
	for (unsigned int l = 0; l < need; l++) {
		int cpu = o.cpus[l < o.n_cpus ? l : l % o.n_cpus];

		off += (size_t)snprintf(lcores + off, len - off, "%s%u@%d",
					l ? "," : "", l, cpu);
		doff += (size_t)snprintf(desc + doff, dlen - doff, "%s%d",
					 l ? "," : "", cpu);
		if (off >= len || doff >= dlen)
			return -1;
	}
	return 0;
}

static bool
want_world(bool copy)
{
	if (copy)
		return o.mode[BENCH_REQRESP] || o.verify;
	return o.mode[BENCH_REQUEST] || o.baselines;
}

int
main(int argc, char **argv)
{
	char lcores[512], cpus[256], prefix[64], mem[16];
	char *eal[64];
	int n_eal = 0;
	unsigned int max_dps = 1, max_mbufs = 0, gen = 0;
	struct rte_mempool *pool;
	int failed = 0;

	switch (parse_args(argc, argv)) {
	case CLI_DONE:
		return 0;
	case CLI_ERROR:
		return CLI_EXIT_USAGE;
	default:
		break;
	}
	for (unsigned int i = 0; i < o.n_dps; i++)
		max_dps = RTE_MAX(max_dps, o.dps[i]);
	for (unsigned int i = 0; i < o.n_cores; i++)
		for (unsigned int j = 0; j < o.n_dps; j++)
			max_mbufs = RTE_MAX(
				max_mbufs,
				3 * o.dps[j] *
					preload_for(o.cores[i], o.dps[j]));
	if (o.n_loads != 0) {
		/* One dispatcher; its requests and responses, made up front,
		 * and the world's own pool. */
		max_dps = 1;
		max_mbufs = RTE_MAX(max_mbufs, 2 * LAT_INFLIGHT);
	}
	if (pick_cpus(max_dps + 1, lcores, sizeof(lcores), cpus,
		      sizeof(cpus)) != 0) {
		fprintf(stderr, "turbolb-bench: bad CPU list\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=turbolb-bench-%d",
		 (int)getpid());
	snprintf(mem, sizeof(mem), "%u", o.memory_mb);
	eal[n_eal++] = argv[0];
	eal[n_eal++] = (char *)"--lcores";
	eal[n_eal++] = lcores;
	eal[n_eal++] = (char *)"--main-lcore=0";
	if (!o.huge)
		eal[n_eal++] = (char *)"--no-huge";
	eal[n_eal++] = (char *)"-m";
	eal[n_eal++] = mem;
	eal[n_eal++] = (char *)"--no-pci";
	eal[n_eal++] = (char *)"--no-shconf";
	eal[n_eal++] = (char *)"--no-telemetry";
	eal[n_eal++] = prefix;
	eal[n_eal++] = (char *)"--log-level=lib.*:error";
	eal[n_eal++] = (char *)"--log-level=turbolb.*:warning";
	for (int i = 0; i < o.n_eal_extra && n_eal < 63; i++)
		eal[n_eal++] = o.eal_extra[i];
	eal[n_eal] = NULL;
	if (rte_eal_init(n_eal, eal) < 0) {
		fprintf(stderr, "turbolb-bench: EAL: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	pool = rte_pktmbuf_pool_create("bench_pool", max_mbufs + 1024, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	if (pool == NULL) {
		fprintf(stderr, "turbolb-bench: pool of %u mbufs: %s\n",
			max_mbufs + 1024, rte_strerror(rte_errno));
		return 1;
	}
	if (o.n_loads != 0 && bench_latency_register() != 0) {
		fprintf(stderr, "turbolb-bench: mbuf dynamic field: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	if (o.n_loads != 0)
		printf("turbolb-bench %s: latency, %" PRIu64 " samples a load, "
		       "burst %u, tx_hold_ns %u, %u flows, CPUs %s (main "
		       "first), TSC %.3f GHz\n",
		       TLB_VERSION, o.lat_packets, o.burst, o.dpc.tx_hold_ns,
		       o.flows, cpus, rte_get_tsc_hz() / 1e9);
	else
		printf("turbolb-bench %s: %" PRIu64
		       " packets x %u reps, burst %u, "
		       "%u flows, CPUs %s (main first), TSC %.3f GHz%s\n",
		       TLB_VERSION, o.packets, o.reps, o.burst, o.flows, cpus,
		       rte_get_tsc_hz() / 1e9,
		       o.callgrind ? ", callgrind marks" : "");

	for (unsigned int ci = 0; ci < o.n_cores && !failed; ci++) {
		for (unsigned int di = 0; di < o.n_dps && !failed; di++) {
			unsigned int cores = o.cores[ci], dps = o.dps[di];

			if (o.n_loads != 0 && dps != 1)
				continue;
			if (dps > cores) {
				printf("  (skipped: %u dispatchers for %u "
				       "cores)\n",
				       dps, cores);
				continue;
			}
			for (int copy = 0; copy < 2 && !failed; copy++) {
				struct bench_world *w;
				char err[256];

				if (o.n_loads != 0 ? !copy : !want_world(copy))
					continue;
				w = rte_zmalloc("bench_world", sizeof(*w), 64);
				if (w == NULL ||
				    bench_world_create(
					    w, gen++, cores, dps, o.qpp,
					    preload_for(cores, dps), o.burst,
					    o.flows, copy, o.credits, &o.dpc,
					    err, sizeof(err)) != 0) {
					fprintf(stderr, "turbolb-bench: %s\n",
						w ? err : "no memory");
					failed = 1;
					break;
				}
				printf("%u host cores, %u dispatcher%s, %s "
				       "rings, %u requests in flight per "
				       "dispatcher:\n",
				       cores, dps, dps > 1 ? "s" : "",
				       copy ? "copy" : "direct", w->preload);
				if (o.n_loads != 0) {
					failed |= latency_world(w, pool) != 0;
					bench_world_destroy(w);
					rte_free(w);
					continue;
				}
				if (!copy && o.baselines) {
					failed |= measure(w, pool, FWD_IO, NULL,
							  BENCH_REQUEST) != 0;
					failed |= measure(w, pool, FWD_MACSWAP,
							  NULL,
							  BENCH_REQUEST) != 0;
				}
				for (unsigned int p = 0;
				     p < o.n_policies && !failed; p++) {
					const char *pol = o.policies[p];
					bool jbsq = strcmp(pol, "jbsq") == 0;

					/* Request mode: direct worlds, and
					 * copy worlds to check every frame.
					 * jbsq needs completions. */
					if (o.mode[BENCH_REQUEST] && !jbsq &&
					    (!copy || o.verify))
						failed |=
							measure(w, pool, 0, pol,
								BENCH_REQUEST);
					if (copy && o.mode[BENCH_REQRESP])
						failed |=
							measure(w, pool, 0, pol,
								BENCH_REQRESP);
				}
				bench_world_destroy(w);
				rte_free(w);
			}
		}
	}
	if (o.json != NULL)
		write_json(o.json, cpus);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	if (failed) {
		fprintf(stderr, "turbolb-bench: FAILED\n");
		return 1;
	}
	if (o.smoke)
		printf("turbolb-bench: smoke OK\n");
	return 0;
}
