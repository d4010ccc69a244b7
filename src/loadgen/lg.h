/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-loadgen, the part without DPDK: options, the arrival schedule,
 * request-id tracking, the SLO search and result formatting. loadgen.c
 * drives these from the poll loop; the unit tests drive them with a
 * made-up clock and a made-up latency model.
 *
 * Time is counted in ticks of a clock whose rate (hz) the caller gives:
 * the TSC in the tool, 1 GHz (ticks are ns) in the tests.
 */
#ifndef TURBOLB_LOADGEN_LG_H
#define TURBOLB_LOADGEN_LG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "turbolb/dist.h"
#include "turbolb/histogram.h"
#include "turbolb/proto.h"
#include "turbolb/rng.h"

/* Bytes of one frame that are not RPC payload, counted against the MTU
 * (which, as usual, excludes the Ethernet header). */
#define LG_IP_UDP_HDR_LEN (20u + 8u)
#define LG_MTU_MIN        128u
#define LG_MTU_MAX        9000u
/* server_core is 16 bits wide: one counter for each possible value. */
#define LG_MAX_CORES 65536u
/* Rate points of one sweep (--rates, --sweep). */
#define LG_MAX_POINTS 1024u
/* Largest closed-loop window: well inside the largest tracking window. */
#define LG_MAX_WINDOW (1u << 20)
#define LG_LABEL_MAX  64u

enum lg_arrival {
	LG_ARRIVAL_POISSON,
	LG_ARRIVAL_FIXED,
	LG_ARRIVAL_CLOSED, /* a new request on each response or timeout */
};

struct lg_opts {
	double rate;       /* target requests/s */
	double duration_s; /* measured send time; 0 when requests is set */
	uint64_t requests; /* measured requests; 0 when duration_s is set */
	double warmup_s;   /* sent before the measured part, not measured */
	enum lg_arrival arrival;
	struct tlb_dist dist; /* service-time hint of each request */
	char dist_spec[64];   /* canonical form of dist, for the report */
	uint32_t flows;       /* distinct UDP source ports */
	uint16_t src_port_base;
	uint8_t src_ip[4]; /* network byte order */
	uint8_t dst_ip[4];
	uint16_t dst_port;
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool has_src_mac; /* else the port's own address */
	uint32_t size;    /* RPC payload bytes per request */
	uint32_t mtu;     /* IP MTU: bounds the payload of one packet */
	uint32_t timeout_ms;
	uint32_t max_lag_us; /* lag beyond this makes the run "behind" */
	uint16_t svc_class;
	uint64_t seed;
	bool json;
	const char *port;   /* ethdev name or id; NULL: the first port */
	double link_wait_s; /* how long to wait for the link to come up */

	uint32_t window;  /* closed loop: requests kept outstanding */
	uint32_t src_ips; /* consecutive source addresses from src_ip */
	/* The rate points run one after the other on the same port: --rates,
	 * --sweep, or the single --rate. Empty in an SLO search. */
	double rates[LG_MAX_POINTS];
	uint32_t n_rates;
	double settle_s;     /* longest wait for stragglers between points */
	double slo_multiple; /* > 0: search the highest rate meeting the SLO */
	double rate_min;     /* bounds of the SLO search */
	double rate_max;
	uint32_t slo_iterations;
	char label[LG_LABEL_MAX]; /* "policy" in the reports */
	const char *csv_path;     /* one row per rate point */
	const char *slo_csv_path; /* the SLO search's summary row */
	bool quiet;               /* no progress line */
};

/* Fills o with the defaults. */
void lg_opts_default(struct lg_opts *o);

/* Parses the tool's own options (what follows "--"; argv[0] is the program
 * name). Returns 0 when o is ready, 1 when --help was printed to out, -1 on
 * a usage error (explained on err). Resets getopt, so it may be called more
 * than once. */
int lg_opts_parse(int argc, char **argv, struct lg_opts *o, FILE *out,
		  FILE *err);

void lg_usage(FILE *f, const char *prog);

/* Rate lists of --rates ("5000,10000,20000") and --sweep ("LO:HI:STEP";
 * with need_step false also "LO:HI", step then 0). Both return 0, or -1
 * with err filled. lg_sweep_expand turns LO:HI:STEP into the points LO,
 * LO + STEP, ... up to HI (included when the steps land on it). */
int lg_parse_rates(const char *s, double *rates, uint32_t max, uint32_t *n,
		   char *err, size_t errlen);
int lg_parse_sweep(const char *s, bool need_step, double *lo, double *hi,
		   double *step, char *err, size_t errlen);
int lg_sweep_expand(double lo, double hi, double step, double *rates,
		    uint32_t max, uint32_t *n);

/* SLO of the search: slo_multiple times the mean service time, in ns. */
double lg_slo_ns(const struct lg_opts *o);

/* RPC payload bytes one packet carries at this MTU. */
uint32_t lg_payload_room(uint32_t mtu);

/* Packets of one request message of `size` payload bytes (at least 1). */
uint32_t lg_pkts_per_msg(uint32_t size, uint32_t mtu);

/*
 * Arrival schedule. Send times are offsets in ticks from the start of the
 * run, each computed from the previous scheduled time (never from when the
 * previous request actually left), so a late sender catches up instead of
 * lowering the rate.
 */
struct lg_sched {
	enum lg_arrival arrival;
	double gap;     /* mean inter-arrival time in ticks */
	double next;    /* offset of the next request */
	uint64_t index; /* requests scheduled so far */
	struct tlb_rng rng;
};

void lg_sched_init(struct lg_sched *s, enum lg_arrival arrival, double rate,
		   double hz, uint64_t seed);

/* Offset of the next request, in ticks; lg_sched_pop() moves past it. */
static inline double
lg_sched_peek(const struct lg_sched *s)
{
	return s->next;
}

double lg_sched_pop(struct lg_sched *s);

/*
 * Request tracking. Ids are issued in order; the state of id lives in slot
 * id & mask. A response is matched against that slot, so duplicates, ids
 * never issued and ids from long ago are all told apart without searching.
 * Because ids are issued in send order, the timeout scan walks forward from
 * the oldest unresolved id and stops at the first one not yet due.
 */
enum lg_slot_state {
	LG_SLOT_FREE = 0,
	LG_SLOT_OUTSTANDING,
	LG_SLOT_DONE, /* answered in time */
	LG_SLOT_LOST, /* timed out, no response yet */
	LG_SLOT_LATE, /* timed out, then answered */
};

struct lg_slot {
	uint64_t id;
	uint64_t sent;    /* ticks */
	uint8_t state;    /* enum lg_slot_state */
	uint8_t measured; /* sent after warm-up */
};

/* Per phase (warm-up, measured) outcome counters. */
struct lg_phase_counts {
	uint64_t sent;
	uint64_t received; /* successful responses in time */
	uint64_t errors;   /* error responses (NACK, status != 0) in time */
	uint64_t lost;     /* no response within the timeout */
	uint64_t late;     /* responses that came after being counted lost */
	/* Of lost: written off when the link went down with them in flight
	 * (lg_track_write_off), not timed out. */
	uint64_t written_off;
};

enum lg_phase {
	LG_PHASE_WARMUP = 0,
	LG_PHASE_MEASURED = 1,
};

struct lg_track {
	struct lg_slot *slots;
	uint64_t mask;
	uint64_t first_id; /* first id of this run */
	uint64_t next_id;  /* next id to issue */
	uint64_t tail;     /* no unresolved id below this one */
	uint64_t timeout;  /* ticks */
	uint64_t outstanding;
	uint64_t duplicates;
	uint64_t unknown;
	uint64_t evicted; /* counted lost early: their slot was needed */
	struct lg_phase_counts phase[2];
};

/* Window of slots for a rate and timeout: a power of two well above the
 * number of requests that can be outstanding at once. */
uint64_t lg_track_window(double rate, uint32_t timeout_ms);
/* The same for at most n outstanding requests (closed loop). */
uint64_t lg_track_window_n(uint64_t n);

int lg_track_init(struct lg_track *t, uint64_t window, uint64_t timeout,
		  uint64_t first_id);
void lg_track_fini(struct lg_track *t);

/* Issues the next id, sent at tick `now`. */
uint64_t lg_track_issue(struct lg_track *t, uint64_t now, bool measured);

enum lg_match {
	LG_MATCH_OK,      /* first response to an outstanding request */
	LG_MATCH_LATE,    /* response to a request already counted lost */
	LG_MATCH_DUP,     /* response to a request already answered */
	LG_MATCH_UNKNOWN, /* id not issued in this run, or long forgotten */
};

/* Resolves id by a response (an error response if is_error). On
 * LG_MATCH_OK, *sent and *measured tell the request's send time and
 * phase. */
enum lg_match lg_track_complete(struct lg_track *t, uint64_t id, bool is_error,
				uint64_t *sent, bool *measured);

/* Counts requests sent more than the timeout before now as lost. */
void lg_track_expire(struct lg_track *t, uint64_t now);

/* Counts every request still outstanding as lost (end of run). */
void lg_track_finish(struct lg_track *t);

/* The link went down: every request still outstanding is counted lost now
 * and written_off (its path is gone, waiting for its timeout would only
 * delay the count). A response that still comes is counted late, as for a
 * timeout. Returns how many were written off. */
uint64_t lg_track_write_off(struct lg_track *t);

/* Closed loop: how many more requests may go out now to keep `window`
 * outstanding. A response or a timeout frees a place; a late response
 * does not: its place went at the timeout. Requests staged but not yet
 * handed to the port are issued, so they count as outstanding. */
static inline uint64_t
lg_closed_room(const struct lg_track *t, uint32_t window)
{
	return t->outstanding >= window ? 0 : window - t->outstanding;
}

/* Requests counted lost that have not answered late (yet): while there
 * are any, a straggler may still come. */
static inline uint64_t
lg_track_unanswered(const struct lg_track *t)
{
	return t->phase[0].lost - t->phase[0].late + t->phase[1].lost -
	       t->phase[1].late;
}

/*
 * Link watch: what to do about the port's link, decided from what the
 * caller observes every `interval` ticks. A memif client in DPDK 22.11 is
 * not reconnected by the PMD once its peer went away, so a port that
 * `reconnects` is stopped and started again (like turbolb-server's ports)
 * until the peer is back; other ports are only waited for. The caller
 * polls the port only while lg_link_up().
 */
enum lg_link_state {
	LG_LINK_UP,
	LG_LINK_DOWN,     /* seen down: stop polling; restart at next check */
	LG_LINK_STARTING, /* the port is stopped; start it until it starts */
	LG_LINK_WAITING,  /* started: waiting for the peer's handshake */
};

enum lg_link_action {
	LG_LINK_NONE,
	LG_LINK_WENT_DOWN, /* stop polling, write off what is in flight */
	LG_LINK_RESTART,   /* stop the port (if started), start it, report */
	LG_LINK_CAME_UP,   /* poll again */
};

struct lg_link {
	enum lg_link_state state;
	bool reconnects;     /* restart the port while it is down */
	uint64_t interval;   /* ticks between checks */
	uint64_t start_wait; /* ticks a started port may stay down */
	uint64_t next_check;
	uint64_t down_since; /* tick the link was seen down */
	uint64_t started_at; /* tick of the last successful start */
	uint64_t downs;      /* times the link went down */
	uint64_t restarts;   /* starts after the first (lg_link_started) */
	uint64_t start_failures;
};

/* For a port just started at `now`: waiting for its link. */
void lg_link_init(struct lg_link *l, bool reconnects, uint64_t interval,
		  uint64_t start_wait, uint64_t now);

static inline bool
lg_link_up(const struct lg_link *l)
{
	return l->state == LG_LINK_UP;
}

static inline bool
lg_link_due(const struct lg_link *l, uint64_t now)
{
	return now >= l->next_check;
}

/* One check, with the link status read at `now`. The state moves with the
 * action returned; after LG_LINK_RESTART the caller reports the start's
 * outcome with lg_link_started(). The first check after the link went down
 * restarts the port, never the one that saw it go down: the PMD may still
 * be tearing the connection down on its interrupt thread then. */
enum lg_link_action lg_link_check(struct lg_link *l, uint64_t now,
				  bool link_up);
void lg_link_started(struct lg_link *l, uint64_t now, bool ok);

/* Ticks the link has been down (0 while up). */
static inline uint64_t
lg_link_down_for(const struct lg_link *l, uint64_t now)
{
	return l->state == LG_LINK_UP || now < l->down_since
		       ? 0
		       : now - l->down_since;
}

/*
 * SLO search. measure(ctx, rate, &sample) runs one rate point and returns
 * 0, or non-zero to abort the search (interrupted). A point meets the SLO
 * when it got responses, lost none and its p99 is within slo_ns.
 *
 * The search measures lo (if that fails there is no answer) and hi (if
 * that passes, hi is the answer: the range was too low), then bisects the
 * offered rate `iterations` times between the highest passing and the
 * lowest failing rate. The answer is the highest *achieved* rate of the
 * passing points. At most iterations + 2 measurements.
 */
struct lg_slo_sample {
	double p99_ns;
	uint64_t lost; /* without a successful response in time */
	double achieved_rps;
};

typedef int (*lg_measure_fn)(void *ctx, double rate, struct lg_slo_sample *s);

struct lg_slo_cfg {
	double slo_ns;
	double lo, hi; /* offered rates */
	uint32_t iterations;
};

struct lg_slo_result {
	double slo_ns;
	bool found;              /* some point met the SLO */
	bool at_max;             /* hi met it: the answer may lie above */
	bool aborted;            /* measure asked to stop */
	double max_rps;          /* highest achieved rate meeting the SLO */
	double best_offered_rps; /* its offered rate */
	double best_p99_ns;
	double pass_rps; /* final bracket of offered rates: passes */
	double fail_rps; /*   and fails (0: none failed) */
	uint32_t points; /* measurements made */
};

bool lg_slo_pass(const struct lg_slo_sample *s, double slo_ns);
/* Returns 0, or -1 when measure aborted (res holds what was found). */
int lg_slo_search(const struct lg_slo_cfg *cfg, lg_measure_fn measure,
		  void *ctx, struct lg_slo_result *res);

/*
 * Results of one run at one rate. A later sweep or SLO search produces one
 * of these per step.
 */
struct lg_result {
	uint32_t point;      /* index of the rate point in this run */
	double target_rps;   /* offered; 0 in a closed loop */
	double achieved_rps; /* measured requests sent / measured send time */
	double received_rps; /* measured responses / measured send time */
	double measured_s;   /* measured send time */
	struct lg_phase_counts measured;
	struct lg_phase_counts warmup;
	uint64_t duplicates;
	uint64_t unknown;
	uint64_t evicted;
	uint64_t parse_errors;
	uint64_t rx_other;      /* not responses: ARP, requests, other ports */
	uint64_t rx_extra_pkts; /* packets 1.. of multi-packet responses */
	uint64_t ts_mismatch;   /* echoed client_ts did not match */
	uint64_t tx_pkts;
	uint64_t tx_stalls;     /* times the port (or the pool) stopped us */
	uint64_t tx_dropped;    /* packets never sent (given up at the end) */
	bool tx_gave_up;        /* stuck a whole timeout (or the link down
				 * longer than --link-wait): stopped sending */
	uint64_t link_downs;    /* the link went down during the point */
	uint64_t port_restarts; /* the port restarted to reconnect */
	uint64_t link_skipped;  /* requests due while the link was down: not
				 * issued (not in sent) */
	/* Counters as they stood when the link first went down in this point
	 * (valid: it did), so each side of the outage can be accounted
	 * against the peer that served it. */
	struct {
		bool valid;
		uint64_t sent;     /* issued, both phases */
		uint64_t answered; /* received + errors + late, both phases */
		uint64_t lost;     /* both phases, the written off included */
		uint64_t tx_pkts;
		uint64_t tx_dropped; /* staged packets dropped at the loss */
		uint64_t written_off;
	} first_down;
	uint64_t max_lag_ns; /* latest a request left after its time */
	uint64_t late_sends; /* requests sent more than max_lag_us late */
	bool behind;
	bool interrupted;
	const struct tlb_hist *hist; /* latency of measured responses, ns */
	const uint64_t *per_core;    /* measured responses by server_core */
	uint32_t n_cores;            /* entries of per_core worth printing */
};

void lg_report_human(FILE *f, const struct lg_opts *o,
		     const struct lg_result *r);
/* One JSON object on one line. */
void lg_report_json(FILE *f, const struct lg_opts *o,
		    const struct lg_result *r);

/* The table of a sweep: one row per rate point. */
void lg_table_header(FILE *f);
void lg_table_row(FILE *f, const struct lg_opts *o, const struct lg_result *r);

/* CSV: the first nine columns are fixed (policy, offered_rps, achieved_rps,
 * p50_ns, p90_ns, p99_ns, p999_ns, max_ns, lost); more only ever follow. */
void lg_csv_header(FILE *f);
void lg_csv_row(FILE *f, const struct lg_opts *o, const struct lg_result *r);

/* The SLO search's summary: a line, one JSON object, a CSV header and row. */
void lg_slo_report_human(FILE *f, const struct lg_opts *o,
			 const struct lg_slo_result *s);
void lg_slo_report_json(FILE *f, const struct lg_opts *o,
			const struct lg_slo_result *s);
void lg_slo_csv_header(FILE *f);
void lg_slo_csv_row(FILE *f, const struct lg_opts *o,
		    const struct lg_slo_result *s);

#endif /* TURBOLB_LOADGEN_LG_H */
