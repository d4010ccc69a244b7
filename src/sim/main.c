/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-sim: the command line around the simulation engine. Output is a
 * contract: with --json, one JSON object per line (a run, or an SLO
 * search); without, a table for people. Exit 0 on success, 1 when a run
 * fails (I/O, memory), 2 on usage errors.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "cli.h"
#include "sim.h"
#include "sim_trace.h"

#define MAX_SLOS         8
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

static struct cli C; /* large; keep it off the stack */

static int
policy_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	return tlb_sim_set_policy(&C.p, arg, err, errlen);
}

static int
dist_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	return tlb_dist_parse(arg, &C.p.dist, err, errlen);
}

static int
sweep_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	char buf[128];
	char *a, *b;

	(void)opt;
	if (strlcpy(buf, arg, sizeof(buf)) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	a = strchr(buf, ':');
	b = a ? strchr(a + 1, ':') : NULL;
	if (a == NULL || b == NULL) {
		snprintf(err, errlen, "want LO:HI:STEP");
		return -1;
	}
	*a++ = '\0';
	*b++ = '\0';
	if (cli_parse_double(buf, &C.sweep_lo) != 0 ||
	    cli_parse_double(a, &C.sweep_hi) != 0 ||
	    cli_parse_double(b, &C.sweep_step) != 0 || !(C.sweep_lo > 0.0) ||
	    C.sweep_hi < C.sweep_lo || !(C.sweep_step > 0.0)) {
		snprintf(err, errlen, "want 0 < LO <= HI and STEP > 0");
		return -1;
	}
	if ((C.sweep_hi - C.sweep_lo) / C.sweep_step > MAX_SWEEP_POINTS) {
		snprintf(err, errlen, "more than %u points", MAX_SWEEP_POINTS);
		return -1;
	}
	return 0;
}

/* Repeatable: one search per multiple. */
static int
slo_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	double x;

	(void)opt;
	if (C.n_slo == MAX_SLOS) {
		snprintf(err, errlen, "at most %u", MAX_SLOS);
		return -1;
	}
	if (cli_parse_double(arg, &x) != 0 || !(x > 0.0)) {
		snprintf(err, errlen, "want a number > 0");
		return -1;
	}
	C.slo[C.n_slo++] = x;
	return 0;
}

static const char *const splits[] = {"even", "rss", NULL};
static const int split_values[] = {TLB_SIM_SPLIT_EVEN, TLB_SIM_SPLIT_RSS};
static const char *const views[] = {"partitioned", "shared", NULL};

#define DELAY(field)                                                           \
	.kind = CLI_NS, CLI_DEST(C.p.field), .hi = 4000000000u, .arg = "T"

static const struct cli_opt opts[] = {
	{.name = "cores",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.n_cores),
	 .lo = 1,
	 .hi = TLB_MAX_CORES,
	 .seen = &C.have_cores,
	 .arg = "N",
	 .help = "host cores"},
	{.name = "policy",
	 .kind = CLI_FN,
	 .fn = policy_fn,
	 .seen = &C.have_policy,
	 .arg = "SPEC",
	 .help = "a policy below; pod:D and jbsq:K take a parameter"},
	{.name = "dist",
	 .kind = CLI_FN,
	 .fn = dist_fn,
	 .seen = &C.have_dist,
	 .arg = "SPEC",
	 .help = "service time: fixed:T exp:MEAN uniform:A:B normal:MEAN:SD\n"
		 "bimodal:P:A:B lognormal:MEAN:SD (T in ns, us, ms, s)"},
	{.name = "load",
	 .kind = CLI_DOUBLE,
	 CLI_DEST(C.p.load),
	 .dlo = 0.0,
	 .dhi = HUGE_VAL,
	 .lo_open = true,
	 .seen = &C.have_load,
	 .arg = "RHO",
	 .help = "offered load: lambda = RHO * N / mean service (Poisson)"},
	{.name = "requests",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.requests),
	 .lo = 1,
	 .seen = &C.have_requests,
	 .arg = "COUNT",
	 .help = "requests generated (default 1000000)"},
	{.name = "warmup",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.warmup),
	 .seen = &C.have_warmup,
	 .arg = "COUNT",
	 .help = "first requests left out of the statistics\n"
		 "(default: a tenth of them; 0 with --trace)"},
	{.name = "seed",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.seed),
	 .arg = "S",
	 .help = "random seed (default 1); same seed, same output"},
	{.name = "flows",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.flows),
	 .lo = 1,
	 .hi = TLB_SIM_MAX_FLOWS,
	 .arg = "F",
	 .help = "client flows, distinct 5-tuples for rss (default 64)"},
	{.name = "dispatch-ns",
	 DELAY(dispatch_ns),
	 .help = "NIC cost per request; the dispatcher is one server"},
	{.name = "delivery-ns",
	 DELAY(delivery_ns),
	 .help = "NIC -> core latency"},
	{.name = "feedback-ns",
	 DELAY(feedback_ns),
	 .help = "core -> NIC completion latency (the load view lags)"},
	{.name = "fifo",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.fifo_cap),
	 .arg = "CAP",
	 .help = "NIC FIFO for held (jbsq) requests (default 4096)"},
	{.name = "dispatchers",
	 .kind = CLI_UINT,
	 CLI_DEST(C.p.dispatchers),
	 .lo = 1,
	 .hi = TLB_SIM_MAX_DISPATCHERS,
	 .arg = "D",
	 .help = "NIC dispatchers (default 1), each its own\n"
		 "server, policy, load view and FIFO"},
	{.name = "split",
	 .kind = CLI_CHOICE,
	 CLI_DEST(C.p.split),
	 .choices = splits,
	 .values = split_values,
	 .arg = "MODE",
	 .help = "how the wire reaches them: even (each request to a\n"
		 "random one, the default) or rss (by flow hash)"},
	{.name = "view",
	 .kind = CLI_CHOICE,
	 CLI_DEST(C.p.shared_view),
	 .choices = views,
	 .arg = "MODE",
	 .help = "partitioned (default: dispatcher d balances over its\n"
		 "own N/D cores) or shared (all N cores; the others'\n"
		 "sends and completions seen --view-sync-ns late)"},
	{.name = "view-sync-ns",
	 DELAY(view_sync_ns),
	 .help = "shared view: how often a dispatcher reads the\n"
		 "others' counters (0, the default: at once)"},
	{.name = "sweep",
	 .kind = CLI_FN,
	 .fn = sweep_fn,
	 .seen = &C.sweep,
	 .arg = "LO:HI:STEP",
	 .help = "one run per load LO, LO+STEP, .. HI"},
	{.name = "slo-multiple",
	 .kind = CLI_FN,
	 .fn = slo_fn,
	 .arg = "X",
	 .help = "highest load with p99 <= X x mean service and no drops,\n"
		 "by bisection; repeatable"},
	{.name = "trace",
	 .kind = CLI_STRING,
	 CLI_DEST(C.trace_path),
	 .arg = "FILE",
	 .help = "'ARRIVAL_NS SERVICE_NS' per line instead of --load/--dist"},
	{.name = "json",
	 .kind = CLI_FLAG,
	 CLI_DEST(C.json),
	 .help = "one JSON object per line"},
	CLI_OPT_HELP('h'),
	CLI_OPT_VERSION(0),
	{.kind = CLI_END},
};

static void
usage_tail(FILE *f)
{
	fprintf(f,
		"\n--cores takes 1..%u, --dispatchers 1..%u; --slo-multiple "
		"searches (0, %.1f]\nin %u halvings.\n\npolicies:\n",
		TLB_MAX_CORES, TLB_SIM_MAX_DISPATCHERS, TLB_SIM_SLO_LOAD_MAX,
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

static const struct cli_spec cli_spec = {
	.prog = "turbolb-sim",
	.usage =
		"--cores N --policy NAME[:PARAM] --dist SPEC\n"
		"                   (--load RHO | --sweep LO:HI:STEP | "
		"--slo-multiple X | --trace FILE)\n"
		"                   [--requests COUNT] [--seed S] [--flows F] "
		"[--warmup COUNT]\n"
		"                   [--dispatch-ns T] [--delivery-ns T] "
		"[--feedback-ns T]\n"
		"                   [--fifo CAP] [--dispatchers D [--split "
		"even|rss]\n"
		"                   [--view partitioned|shared [--view-sync-ns "
		"T]]] [--json]",
	.about = "Simulates N host cores (one FIFO server each) behind the "
		 "turbolb NIC\ndispatcher, running the daemon's own policy "
		 "code.",
	.epilog_fn = usage_tail,
	.version = TLB_VERSION,
	.opts = opts,
};

static void __attribute__((format(printf, 1, 2), noreturn))
die_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "turbolb-sim: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'turbolb-sim --help'.\n");
	va_end(ap);
	exit(CLI_EXIT_USAGE);
}

static void
parse_args(struct cli *c, int argc, char **argv)
{
	int first;

	tlb_sim_params_default(&c->p);
	switch (cli_parse(&cli_spec, argc, argv, &first)) {
	case CLI_DONE:
		exit(0);
	case CLI_ERROR:
		exit(CLI_EXIT_USAGE);
	default:
		break;
	}
	if (first < argc)
		die_usage("unexpected argument '%s'", argv[first]);
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
	return r->offered_mrps * tlb_sim_mean_service_ns(p) / 1e3 / p->n_cores;
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
			snprintf(dist, sizeof(dist), "trace %s", c->trace_path);
		else
			tlb_dist_format(&p->dist, dist, sizeof(dist));
		printf("# %s, %u cores, %s, seed %llu, dispatch %llu ns, "
		       "delivery %llu ns, feedback %llu ns\n",
		       spec, p->n_cores, dist, (unsigned long long)p->seed,
		       (unsigned long long)p->dispatch_ns,
		       (unsigned long long)p->delivery_ns,
		       (unsigned long long)p->feedback_ns);
		printf("%6s %10s %10s %10s %10s %10s %10s %10s %9s\n", "load",
		       "offer_mrps", "tput_mrps", "mean_ns", "p50_ns", "p99_ns",
		       "p999_ns", "requests", "dropped");
		c->table_header_done = true;
	}
	printf("%6.3f %10.3f %10.3f %10.0f %10llu %10llu %10llu %10llu "
	       "%9llu\n",
	       effective_load(p, r), r->offered_mrps, r->throughput_mrps,
	       r->mean_ns, (unsigned long long)r->p50_ns,
	       (unsigned long long)r->p99_ns, (unsigned long long)r->p999_ns,
	       (unsigned long long)r->requests, (unsigned long long)r->dropped);
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
	char err[TLB_SIM_ERR_MAX];
	int rc = 0;

	parse_args(&C, argc, argv);
	if (C.trace_path != NULL) {
		if (tlb_sim_trace_load(C.trace_path, &C.trace, err,
				       sizeof(err)) != 0) {
			fprintf(stderr, "turbolb-sim: %s\n", err);
			return 1;
		}
		C.p.trace = &C.trace.trace;
		if (C.p.warmup >= C.trace.trace.len)
			die_usage("--warmup %llu must be below the trace's "
				  "%llu requests",
				  (unsigned long long)C.p.warmup,
				  (unsigned long long)C.trace.trace.len);
	}

	if (C.have_load || C.trace_path != NULL) {
		if (run_one(&C, &C.p) != 0)
			rc = 1;
	}
	if (rc == 0 && C.sweep) {
		for (unsigned int i = 0;; i++) {
			struct tlb_sim_params p = C.p;

			/* Multiplying, not accumulating, keeps the points
			 * on the grid (0.1 + 0.1 + 0.1 != 0.3). */
			p.load = C.sweep_lo + i * C.sweep_step;
			if (p.load > C.sweep_hi + C.sweep_step * 1e-9)
				break;
			if (run_one(&C, &p) != 0) {
				rc = 1;
				break;
			}
		}
	}
	for (unsigned int i = 0; rc == 0 && i < C.n_slo; i++) {
		struct tlb_sim_slo s;

		if (tlb_sim_max_load(&C.p, C.slo[i], &s, err, sizeof(err)) !=
		    0) {
			fprintf(stderr, "turbolb-sim: %s\n", err);
			rc = 1;
			break;
		}
		print_slo(&C, &C.p, &s);
	}
	tlb_sim_trace_free(&C.trace);
	return rc;
}
