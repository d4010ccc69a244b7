/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-sim: the command line around the simulation engine. Output is a
 * contract: with --json, one JSON object per line (a run, or an SLO
 * search); without, a table for people. Exit 0 on success, 1 when a run
 * fails (I/O, memory), 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "sim.h"
#include "sim_trace.h"

#define EXIT_USAGE 2
#define MAX_SLOS 8
#define MAX_SWEEP_POINTS 10000

#ifndef TLB_VERSION
#define TLB_VERSION "unknown"
#endif

struct cli {
	struct tlb_sim_params p;
	bool json;
	bool have_load, have_requests, have_warmup, have_cores;
	bool have_policy, have_dist;
	bool sweep;
	double sweep_lo, sweep_hi, sweep_step;
	double slo[MAX_SLOS];
	unsigned int n_slo;
	const char *trace_path;
	struct tlb_sim_trace_buf trace;
	bool table_header_done;
};

enum {
	OPT_CORES = 256,
	OPT_POLICY,
	OPT_DIST,
	OPT_LOAD,
	OPT_REQUESTS,
	OPT_SEED,
	OPT_FLOWS,
	OPT_DISPATCH,
	OPT_DELIVERY,
	OPT_FEEDBACK,
	OPT_FIFO,
	OPT_DISPATCHERS,
	OPT_SPLIT,
	OPT_VIEW,
	OPT_VIEW_SYNC,
	OPT_WARMUP,
	OPT_JSON,
	OPT_SWEEP,
	OPT_SLO,
	OPT_TRACE,
	OPT_HELP,
	OPT_VERSION,
};

static const struct option long_opts[] = {
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "requests", required_argument, NULL, OPT_REQUESTS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "dispatch-ns", required_argument, NULL, OPT_DISPATCH },
	{ "delivery-ns", required_argument, NULL, OPT_DELIVERY },
	{ "feedback-ns", required_argument, NULL, OPT_FEEDBACK },
	{ "fifo", required_argument, NULL, OPT_FIFO },
	{ "dispatchers", required_argument, NULL, OPT_DISPATCHERS },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "view", required_argument, NULL, OPT_VIEW },
	{ "view-sync-ns", required_argument, NULL, OPT_VIEW_SYNC },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "slo-multiple", required_argument, NULL, OPT_SLO },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: turbolb-sim --cores N --policy NAME[:PARAM] --dist SPEC\n"
		"                   (--load RHO | --sweep LO:HI:STEP | --slo-multiple X | --trace FILE)\n"
		"                   [--requests COUNT] [--seed S] [--flows F] [--warmup COUNT]\n"
		"                   [--dispatch-ns T] [--delivery-ns T] [--feedback-ns T]\n"
		"                   [--fifo CAP] [--dispatchers D [--split even|rss]\n"
		"                   [--view partitioned|shared [--view-sync-ns T]]] [--json]\n"
		"\n"
		"Simulates N host cores (one FIFO server each) behind the turbolb NIC\n"
		"dispatcher, running the daemon's own policy code.\n"
		"\n"
		"  --cores N          host cores (1..%u)\n"
		"  --policy SPEC      a policy below; pod:D and jbsq:K take a parameter\n"
		"  --dist SPEC        service time: fixed:T exp:MEAN uniform:A:B normal:MEAN:SD\n"
		"                     bimodal:P:A:B lognormal:MEAN:SD (T in ns, us, ms, s)\n"
		"  --load RHO         offered load: lambda = RHO * N / mean service (Poisson)\n"
		"  --requests COUNT   requests generated (default 1000000)\n"
		"  --warmup COUNT     first requests left out of the statistics\n"
		"                     (default: a tenth of them; 0 with --trace)\n"
		"  --seed S           random seed (default 1); same seed, same output\n"
		"  --flows F          client flows, distinct 5-tuples for rss (default %u)\n"
		"  --dispatch-ns T    NIC cost per request; the dispatcher is one server\n"
		"  --delivery-ns T    NIC -> core latency\n"
		"  --feedback-ns T    core -> NIC completion latency (the load view lags)\n"
		"  --fifo CAP         NIC FIFO for held (jbsq) requests (default %u)\n"
		"  --dispatchers D    NIC dispatchers (1..%u, default 1), each its own\n"
		"                     server, policy, load view and FIFO\n"
		"  --split MODE       how the wire reaches them: even (each request to a\n"
		"                     random one, the default) or rss (by flow hash)\n"
		"  --view MODE        partitioned (default: dispatcher d balances over its\n"
		"                     own N/D cores) or shared (all N cores; the others'\n"
		"                     sends and completions seen --view-sync-ns late)\n"
		"  --view-sync-ns T   shared view: how often a dispatcher reads the\n"
		"                     others' counters (0, the default: at once)\n"
		"  --sweep LO:HI:STEP one run per load LO, LO+STEP, .. HI\n"
		"  --slo-multiple X   highest load with p99 <= X x mean service and no drops,\n"
		"                     by bisection over (0, %.1f] (%u halvings); repeatable\n"
		"  --trace FILE       'ARRIVAL_NS SERVICE_NS' per line instead of --load/--dist\n"
		"  --json             one JSON object per line\n"
		"\n"
		"policies:\n",
		TLB_MAX_CORES, TLB_SIM_DEFAULT_FLOWS, TLB_SIM_DEFAULT_FIFO,
		TLB_SIM_MAX_DISPATCHERS, TLB_SIM_SLO_LOAD_MAX,
		TLB_SIM_SLO_STEPS);
	for (unsigned int i = 0; tlb_policies[i] != NULL; i++)
		fprintf(f, "  %-8s %s\n", tlb_policies[i]->name,
			tlb_policies[i]->summary);
	fprintf(f, "  %-8s %s\n", TLB_SIM_CFCFS,
		"one central FIFO, any idle core takes the next (simulator "
		"only: the M/G/k ideal)");
	fprintf(f, "  %-8s %s\n", TLB_SIM_FIXED,
		"flow f (one client thread) always to core f mod N "
		"(simulator only: the client's static choice)");
}

static void __attribute__((format(printf, 1, 2), noreturn))
die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "turbolb-sim: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(try turbolb-sim --help)\n");
	exit(EXIT_USAGE);
}

static uint64_t
parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*s < '0' || *s > '9' || *end != '\0' || errno != 0 || v < lo ||
	    v > hi)
		die_usage("--%s: '%s' is not a whole number in %llu..%llu",
			  opt, s, (unsigned long long)lo,
			  (unsigned long long)hi);
	return v;
}

static double
parse_double(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
		die_usage("--%s: '%s' is not a number", opt, s);
	return v;
}

static uint64_t
parse_delay(const char *opt, const char *s)
{
	double ns;

	if (tlb_parse_time_ns(s, &ns) != 0 || ns > 4e9)
		die_usage("--%s: '%s' is not a time below 4s (ns, or with a "
			  "unit: 500ns, 1.5us)",
			  opt, s);
	return (uint64_t)llround(ns);
}

static void
parse_sweep(struct cli *c, const char *s)
{
	char buf[128];
	char *a, *b;

	if (strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
		die_usage("--sweep: '%s' too long", s);
	a = strchr(buf, ':');
	b = a ? strchr(a + 1, ':') : NULL;
	if (a == NULL || b == NULL)
		die_usage("--sweep: want LO:HI:STEP, got '%s'", s);
	*a++ = '\0';
	*b++ = '\0';
	c->sweep_lo = parse_double("sweep", buf);
	c->sweep_hi = parse_double("sweep", a);
	c->sweep_step = parse_double("sweep", b);
	if (!(c->sweep_lo > 0.0) || c->sweep_hi < c->sweep_lo ||
	    !(c->sweep_step > 0.0))
		die_usage("--sweep: want 0 < LO <= HI and STEP > 0, got '%s'",
			  s);
	if ((c->sweep_hi - c->sweep_lo) / c->sweep_step > MAX_SWEEP_POINTS)
		die_usage("--sweep: more than %u points", MAX_SWEEP_POINTS);
	c->sweep = true;
}

static void
parse_args(struct cli *c, int argc, char **argv)
{
	char err[TLB_SIM_ERR_MAX];
	int opt;

	tlb_sim_params_default(&c->p);
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_CORES:
			c->p.n_cores = (uint32_t)parse_u64("cores", optarg, 1,
							   TLB_MAX_CORES);
			c->have_cores = true;
			break;
		case OPT_POLICY:
			if (tlb_sim_set_policy(&c->p, optarg, err,
					       sizeof(err)) != 0)
				die_usage("--policy: %s", err);
			c->have_policy = true;
			break;
		case OPT_DIST:
			if (tlb_dist_parse(optarg, &c->p.dist, err,
					   sizeof(err)) != 0)
				die_usage("--dist: %s", err);
			c->have_dist = true;
			break;
		case OPT_LOAD:
			c->p.load = parse_double("load", optarg);
			if (!(c->p.load > 0.0))
				die_usage("--load: must be > 0, got '%s'",
					  optarg);
			c->have_load = true;
			break;
		case OPT_REQUESTS:
			c->p.requests = parse_u64("requests", optarg, 1,
						  UINT64_MAX);
			c->have_requests = true;
			break;
		case OPT_SEED:
			c->p.seed = parse_u64("seed", optarg, 0, UINT64_MAX);
			break;
		case OPT_FLOWS:
			c->p.flows = (uint32_t)parse_u64("flows", optarg, 1,
							 TLB_SIM_MAX_FLOWS);
			break;
		case OPT_DISPATCH:
			c->p.dispatch_ns = parse_delay("dispatch-ns", optarg);
			break;
		case OPT_DELIVERY:
			c->p.delivery_ns = parse_delay("delivery-ns", optarg);
			break;
		case OPT_FEEDBACK:
			c->p.feedback_ns = parse_delay("feedback-ns", optarg);
			break;
		case OPT_FIFO:
			c->p.fifo_cap = (uint32_t)parse_u64("fifo", optarg, 0,
							    UINT32_MAX);
			break;
		case OPT_DISPATCHERS:
			c->p.dispatchers = (uint32_t)parse_u64(
				"dispatchers", optarg, 1, TLB_SIM_MAX_DISPATCHERS);
			break;
		case OPT_SPLIT:
			if (strcmp(optarg, "even") == 0)
				c->p.split = TLB_SIM_SPLIT_EVEN;
			else if (strcmp(optarg, "rss") == 0)
				c->p.split = TLB_SIM_SPLIT_RSS;
			else
				die_usage("--split: 'even' or 'rss', got '%s'",
					  optarg);
			break;
		case OPT_VIEW:
			if (strcmp(optarg, "partitioned") == 0)
				c->p.shared_view = false;
			else if (strcmp(optarg, "shared") == 0)
				c->p.shared_view = true;
			else
				die_usage("--view: 'partitioned' or 'shared', "
					  "got '%s'",
					  optarg);
			break;
		case OPT_VIEW_SYNC:
			c->p.view_sync_ns = parse_delay("view-sync-ns", optarg);
			break;
		case OPT_WARMUP:
			c->p.warmup = parse_u64("warmup", optarg, 0,
						UINT64_MAX);
			c->have_warmup = true;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_SWEEP:
			parse_sweep(c, optarg);
			break;
		case OPT_SLO:
			if (c->n_slo == MAX_SLOS)
				die_usage("--slo-multiple: at most %u",
					  MAX_SLOS);
			c->slo[c->n_slo] = parse_double("slo-multiple", optarg);
			if (!(c->slo[c->n_slo] > 0.0))
				die_usage("--slo-multiple: must be > 0");
			c->n_slo++;
			break;
		case OPT_TRACE:
			c->trace_path = optarg;
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("turbolb-sim %s\n", TLB_VERSION);
			exit(0);
		default:
			fprintf(stderr, "(try turbolb-sim --help)\n");
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!c->have_cores)
		die_usage("--cores is required");
	if (!c->have_policy)
		die_usage("--policy is required");
	if (c->trace_path != NULL) {
		if (c->have_dist || c->have_load || c->sweep || c->n_slo)
			die_usage("--trace gives arrivals and service times: "
				  "no --dist, --load, --sweep or "
				  "--slo-multiple with it");
		if (!c->have_requests)
			c->p.requests = 0; /* the whole trace */
	} else {
		if (!c->have_dist)
			die_usage("--dist is required");
		if (!c->have_load && !c->sweep && c->n_slo == 0)
			die_usage("give --load, --sweep or --slo-multiple");
	}
	if (!c->have_warmup)
		c->p.warmup = c->trace_path != NULL ? 0 : c->p.requests / 10;
	if (c->trace_path == NULL && c->p.warmup >= c->p.requests)
		die_usage("--warmup %llu must be below --requests %llu",
			  (unsigned long long)c->p.warmup,
			  (unsigned long long)c->p.requests);
}

/* JSON helpers: non-finite numbers are not JSON, so they print as null. */
static void
json_num(const char *key, double v)
{
	if (isfinite(v))
		printf(",\"%s\":%.6g", key, v);
	else
		printf(",\"%s\":null", key);
}

static void
json_u64(const char *key, uint64_t v)
{
	printf(",\"%s\":%llu", key, (unsigned long long)v);
}

static void
json_str(const char *key, const char *v)
{
	printf(",\"%s\":\"", key);
	for (const unsigned char *s = (const unsigned char *)v; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if (*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

/* The fields that say which configuration a line describes. */
static void
json_config(const struct cli *c, const struct tlb_sim_params *p)
{
	char spec[TLB_SIM_SPEC_MAX], dist[96];

	tlb_sim_policy_spec(p, spec, sizeof(spec));
	printf("{\"policy\":\"%s\"", spec);
	printf(",\"cores\":%u", p->n_cores);
	if (c->trace_path != NULL) {
		json_str("trace", c->trace_path);
	} else {
		tlb_dist_format(&p->dist, dist, sizeof(dist));
		json_str("dist", dist);
	}
	json_num("mean_service_ns", tlb_sim_mean_service_ns(p));
	json_u64("seed", p->seed);
	json_u64("flows", p->flows);
	json_u64("dispatch_ns", p->dispatch_ns);
	json_u64("delivery_ns", p->delivery_ns);
	json_u64("feedback_ns", p->feedback_ns);
	json_u64("fifo", p->fifo_cap);
	json_u64("dispatchers", p->dispatchers);
	json_str("split", p->split == TLB_SIM_SPLIT_RSS ? "rss" : "even");
	json_str("view", p->shared_view ? "shared" : "partitioned");
	json_u64("view_sync_ns", p->view_sync_ns);
}

/* With a trace, the load is what the trace offers. */
static double
effective_load(const struct tlb_sim_params *p, const struct tlb_sim_result *r)
{
	if (p->trace == NULL)
		return p->load;
	return r->offered_mrps * tlb_sim_mean_service_ns(p) / 1e3 /
	       p->n_cores;
}

static void
print_result(struct cli *c, const struct tlb_sim_params *p,
	     const struct tlb_sim_result *r)
{
	if (c->json) {
		json_config(c, p);
		json_num("load", effective_load(p, r));
		json_u64("requests", r->requests);
		json_u64("warmup", p->warmup);
		json_u64("completed", r->completed);
		json_u64("dropped", r->dropped);
		json_u64("measured", r->measured);
		json_num("offered_mrps", r->offered_mrps);
		json_num("throughput_mrps", r->throughput_mrps);
		json_num("mean_ns", r->mean_ns);
		json_num("mean_wait_ns", r->mean_wait_ns);
		json_num("mean_measured_service_ns", r->mean_service_ns);
		json_u64("p50_ns", r->p50_ns);
		json_u64("p90_ns", r->p90_ns);
		json_u64("p99_ns", r->p99_ns);
		json_u64("p999_ns", r->p999_ns);
		json_u64("max_ns", r->max_ns);
		json_u64("held_max", r->held_max);
		json_num("core_share_max", r->core_share_max);
		json_u64("sim_time_ns", r->sim_time_ns);
		printf("}\n");
		fflush(stdout);
		return;
	}
	if (!c->table_header_done) {
		char spec[TLB_SIM_SPEC_MAX], dist[96];

		tlb_sim_policy_spec(p, spec, sizeof(spec));
		if (c->trace_path != NULL)
			snprintf(dist, sizeof(dist), "trace %s",
				 c->trace_path);
		else
			tlb_dist_format(&p->dist, dist, sizeof(dist));
		printf("# %s, %u cores, %s, seed %llu, dispatch %llu ns, "
		       "delivery %llu ns, feedback %llu ns\n",
		       spec, p->n_cores, dist, (unsigned long long)p->seed,
		       (unsigned long long)p->dispatch_ns,
		       (unsigned long long)p->delivery_ns,
		       (unsigned long long)p->feedback_ns);
		printf("%6s %10s %10s %10s %10s %10s %10s %10s %9s\n", "load",
		       "offer_mrps", "tput_mrps", "mean_ns", "p50_ns",
		       "p99_ns", "p999_ns", "requests", "dropped");
		c->table_header_done = true;
	}
	printf("%6.3f %10.3f %10.3f %10.0f %10llu %10llu %10llu %10llu "
	       "%9llu\n",
	       effective_load(p, r), r->offered_mrps, r->throughput_mrps,
	       r->mean_ns, (unsigned long long)r->p50_ns,
	       (unsigned long long)r->p99_ns, (unsigned long long)r->p999_ns,
	       (unsigned long long)r->requests,
	       (unsigned long long)r->dropped);
	fflush(stdout);
}

static void
print_slo(struct cli *c, const struct tlb_sim_params *p,
	  const struct tlb_sim_slo *s)
{
	if (c->json) {
		json_config(c, p);
		json_u64("requests", p->requests);
		json_u64("warmup", p->warmup);
		json_num("slo_multiple", s->multiple);
		json_num("slo_ns", s->slo_ns);
		json_num("max_load", s->max_load);
		json_num("max_throughput_mrps", s->max_throughput_mrps);
		json_u64("p99_ns", s->p99_ns);
		json_str("search", "bisection");
		json_num("load_hi", TLB_SIM_SLO_LOAD_MAX);
		json_u64("steps", TLB_SIM_SLO_STEPS);
		json_u64("evaluations", s->evaluations);
		printf("}\n");
		fflush(stdout);
		return;
	}
	printf("slo p99 <= %gx mean service (%.0f ns): max load %.4f, "
	       "%.3f Mrps (p99 %llu ns; bisection, %u runs)\n",
	       s->multiple, s->slo_ns, s->max_load, s->max_throughput_mrps,
	       (unsigned long long)s->p99_ns, s->evaluations);
	fflush(stdout);
}

static int
run_one(struct cli *c, const struct tlb_sim_params *p)
{
	struct tlb_sim_result r;

	if (tlb_sim_run(p, &r, NULL) != 0) {
		fprintf(stderr, "turbolb-sim: %s\n", r.err);
		return -1;
	}
	print_result(c, p, &r);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct cli c; /* large; keep it off the stack */
	char err[TLB_SIM_ERR_MAX];
	int rc = 0;

	parse_args(&c, argc, argv);
	if (c.trace_path != NULL) {
		if (tlb_sim_trace_load(c.trace_path, &c.trace, err,
				       sizeof(err)) != 0) {
			fprintf(stderr, "turbolb-sim: %s\n", err);
			return 1;
		}
		c.p.trace = &c.trace.trace;
		if (c.p.warmup >= c.trace.trace.len)
			die_usage("--warmup %llu must be below the trace's "
				  "%llu requests",
				  (unsigned long long)c.p.warmup,
				  (unsigned long long)c.trace.trace.len);
	}

	if (c.have_load || c.trace_path != NULL) {
		if (run_one(&c, &c.p) != 0)
			rc = 1;
	}
	if (rc == 0 && c.sweep) {
		for (unsigned int i = 0;; i++) {
			struct tlb_sim_params p = c.p;

			/* Multiplying, not accumulating, keeps the points
			 * on the grid (0.1 + 0.1 + 0.1 != 0.3). */
			p.load = c.sweep_lo + i * c.sweep_step;
			if (p.load > c.sweep_hi + c.sweep_step * 1e-9)
				break;
			if (run_one(&c, &p) != 0) {
				rc = 1;
				break;
			}
		}
	}
	for (unsigned int i = 0; rc == 0 && i < c.n_slo; i++) {
		struct tlb_sim_slo s;

		if (tlb_sim_max_load(&c.p, c.slo[i], &s, err, sizeof(err)) !=
		    0) {
			fprintf(stderr, "turbolb-sim: %s\n", err);
			rc = 1;
			break;
		}
		print_slo(&c, &c.p, &s);
	}
	tlb_sim_trace_free(&c.trace);
	return rc;
}
