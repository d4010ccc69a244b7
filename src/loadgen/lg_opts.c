/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-loadgen command line: the options after "--". Parsed before the
 * EAL starts, so a typo costs no device set-up, and checked as a whole so
 * the run never starts with a combination that cannot work.
 */
#include <math.h>
#include <string.h>

#include "cli.h"
#include "lg.h"

#define MAX_RATE       1e9
#define MAX_SECONDS    1e6
#define MAX_TIMEOUT_MS 3600000u

/* What the command line said explicitly, for the cross-option checks. */
struct seen {
	bool duration, rate, arrival, rates, sweep, rate_min, rate_max;
	bool iterations, src_mac;
	double sweep_lo, sweep_hi, sweep_step;
};

/* The option table writes here; lg_opts_parse() copies the result out. */
static struct lg_opts P;
static struct seen W;

static int
dist_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	return tlb_dist_parse(arg, &P.dist, err, errlen);
}

static int
rates_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	return lg_parse_rates(arg, P.rates, LG_MAX_POINTS, &P.n_rates, err,
			      errlen);
}

/* The step may be left out for an SLO search, which is only known at the
 * end. */
static int
sweep_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	return lg_parse_sweep(arg, false, &W.sweep_lo, &W.sweep_hi,
			      &W.sweep_step, err, errlen);
}

/* A label goes into CSV and JSON unquoted-safe: no commas, quotes,
 * backslashes or control characters. */
static int
label_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	if (strlen(arg) >= LG_LABEL_MAX)
		goto bad;
	for (const char *c = arg; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ',' ||
		    *c == '"' || *c == '\\')
			goto bad;
	snprintf(P.label, sizeof(P.label), "%s", arg);
	return 0;
bad:
	snprintf(err, errlen,
		 "want at most %u characters, no commas, quotes, "
		 "backslashes or control characters",
		 LG_LABEL_MAX - 1);
	return -1;
}

static const char *const arrivals[] = {"poisson", "fixed", NULL};
static const int arrival_values[] = {LG_ARRIVAL_POISSON, LG_ARRIVAL_FIXED};

#define SECONDS(lo, hi, open)                                                  \
	.kind = CLI_DURATION, .unit_ns = 1e9, .dlo = (lo), .dhi = (hi),        \
	.lo_open = (open), .arg = "SEC"

static const struct cli_opt opts[] = {
	{.kind = CLI_SECTION, .help = "Load:"},
	{.name = "rate",
	 .kind = CLI_RATE,
	 CLI_DEST(P.rate),
	 .dlo = 0.0,
	 .dhi = MAX_RATE,
	 .lo_open = true,
	 .seen = &W.rate,
	 .def = "10000",
	 .arg = "RPS",
	 .help = "target requests per second (500, 20k, 1M)"},
	{.name = "arrival",
	 .kind = CLI_CHOICE,
	 CLI_DEST(P.arrival),
	 .choices = arrivals,
	 .values = arrival_values,
	 .seen = &W.arrival,
	 .def = "poisson",
	 .arg = "KIND",
	 .help = "poisson (exponential gaps) | fixed"},
	{.name = "closed-loop",
	 .kind = CLI_UINT,
	 CLI_DEST(P.window),
	 .lo = 1,
	 .hi = LG_MAX_WINDOW,
	 .arg = "W",
	 .help = "instead: keep W requests outstanding, a new\n"
		 "one on each response or timeout"},
	{.name = "duration",
	 CLI_DEST(P.duration_s),
	 SECONDS(0.0, MAX_SECONDS, true),
	 .seen = &W.duration,
	 .def = "1",
	 .help = "measured send time per point: seconds,\n"
		 "decimals allowed, or 500ms, 2s"},
	{.name = "requests",
	 .kind = CLI_UINT,
	 CLI_DEST(P.requests),
	 .lo = 1,
	 .hi = UINT64_MAX >> 2,
	 .arg = "N",
	 .help = "or: send N measured requests per point"},
	{.name = "warmup",
	 CLI_DEST(P.warmup_s),
	 SECONDS(0.0, MAX_SECONDS, false),
	 .def = "0",
	 .help = "sent before each measured part; tracked, not\nmeasured"},
	{.name = "dist",
	 .kind = CLI_FN,
	 .fn = dist_fn,
	 .def = "fixed:1us",
	 .arg = "SPEC",
	 .help = "service-time hint of each request:\n"
		 "fixed:T exp:MEAN uniform:A:B normal:MEAN:SD\n"
		 "bimodal:P:A:B lognormal:MEAN:SD"},
	{.name = "class",
	 .kind = CLI_UINT,
	 CLI_DEST(P.svc_class),
	 .def = "0",
	 .arg = "C",
	 .help = "svc_class of every request"},
	{.name = "size",
	 .kind = CLI_UINT,
	 CLI_DEST(P.size),
	 .def = "0",
	 .arg = "BYTES",
	 .help = "RPC payload per request; split into several\n"
		 "packets above the MTU's room"},
	{.name = "mtu",
	 .kind = CLI_UINT,
	 CLI_DEST(P.mtu),
	 .lo = LG_MTU_MIN,
	 .hi = LG_MTU_MAX,
	 .def = "1500",
	 .arg = "BYTES",
	 .help = "IP MTU"},
	{.kind = CLI_SECTION, .help = "Flows and addresses:"},
	{.name = "flows",
	 .kind = CLI_UINT,
	 CLI_DEST(P.flows),
	 .lo = 1,
	 .hi = 65536,
	 .def = "64",
	 .arg = "F",
	 .help = "distinct UDP source ports"},
	{.name = "src-ips",
	 .kind = CLI_UINT,
	 CLI_DEST(P.src_ips),
	 .lo = 1,
	 .hi = 65536,
	 .def = "1",
	 .arg = "N",
	 .help = "spread over N consecutive source addresses\n"
		 "from --src-ip: F x N flows"},
	{.name = "src-port-base",
	 .kind = CLI_UINT,
	 CLI_DEST(P.src_port_base),
	 .lo = 1,
	 .def = "10000",
	 .arg = "P",
	 .help = "first source port"},
	{.name = "src-ip",
	 .kind = CLI_IPV4,
	 CLI_DEST(P.src_ip),
	 .def = "10.0.0.1",
	 .arg = "A.B.C.D",
	 .help = ""},
	{.name = "dst-ip",
	 .kind = CLI_IPV4,
	 CLI_DEST(P.dst_ip),
	 .def = "10.0.0.2",
	 .arg = "A.B.C.D",
	 .help = ""},
	{.name = "dst-port",
	 .kind = CLI_UINT,
	 CLI_DEST(P.dst_port),
	 .lo = 1,
	 .def = "9000",
	 .arg = "P",
	 .help = ""},
	{.name = "dst-mac",
	 .kind = CLI_MAC,
	 CLI_DEST(P.dst_mac),
	 .def = "ff:ff:ff:ff:ff:ff",
	 .arg = "MAC",
	 .help = ""},
	{.name = "src-mac",
	 .kind = CLI_MAC,
	 CLI_DEST(P.src_mac),
	 .seen = &W.src_mac,
	 .arg = "MAC",
	 .help = "(default: the port's address)"},
	{.kind = CLI_SECTION,
	 .help = "Sweeps and the SLO search (the port is set up once):"},
	{.name = "rates",
	 .kind = CLI_FN,
	 .fn = rates_fn,
	 .seen = &W.rates,
	 .arg = "LIST",
	 .help = "rate points, e.g. 5000,10000,20k"},
	{.name = "sweep",
	 .kind = CLI_FN,
	 .fn = sweep_fn,
	 .seen = &W.sweep,
	 .arg = "LO:HI:STEP",
	 .help = "rate points LO, LO+STEP, .. up to HI"},
	{.name = "settle",
	 CLI_DEST(P.settle_s),
	 SECONDS(0.0, MAX_SECONDS, false),
	 .def = "1",
	 .help = "between points, wait up to this long for\n"
		 "answers to requests counted lost"},
	{.name = "slo-multiple",
	 .kind = CLI_DOUBLE,
	 CLI_DEST(P.slo_multiple),
	 .dlo = 0.0,
	 .dhi = 1e6,
	 .lo_open = true,
	 .arg = "X",
	 .help = "search by bisection for the highest\n"
		 "throughput with p99 <= X times the mean of\n"
		 "--dist and nothing lost, between --sweep\n"
		 "LO:HI (STEP unused) or --rate-min/--rate-max"},
	{.name = "rate-min",
	 .kind = CLI_RATE,
	 CLI_DEST(P.rate_min),
	 .dlo = 0.0,
	 .dhi = MAX_RATE,
	 .lo_open = true,
	 .seen = &W.rate_min,
	 .arg = "RPS",
	 .help = "lower bound of the SLO search"},
	{.name = "rate-max",
	 .kind = CLI_RATE,
	 CLI_DEST(P.rate_max),
	 .dlo = 0.0,
	 .dhi = MAX_RATE,
	 .lo_open = true,
	 .seen = &W.rate_max,
	 .arg = "RPS",
	 .help = "upper bound of the SLO search"},
	{.name = "slo-iterations",
	 .kind = CLI_UINT,
	 CLI_DEST(P.slo_iterations),
	 .hi = 64,
	 .seen = &W.iterations,
	 .def = "8",
	 .arg = "N",
	 .help = "bisection steps after both bounds"},
	{.kind = CLI_SECTION, .help = "Measurement and output:"},
	{.name = "timeout-ms",
	 .kind = CLI_UINT,
	 CLI_DEST(P.timeout_ms),
	 .lo = 1,
	 .hi = MAX_TIMEOUT_MS,
	 .def = "1000",
	 .arg = "T",
	 .help = "a request unanswered this long is lost;\n"
		 "also the wait for stragglers"},
	{.name = "max-lag-us",
	 .kind = CLI_UINT,
	 CLI_DEST(P.max_lag_us),
	 .def = "1000",
	 .arg = "US",
	 .help = "report \"behind\" when a request leaves later\n"
		 "than this after its scheduled time"},
	{.name = "seed",
	 .kind = CLI_UINT,
	 CLI_DEST(P.seed),
	 .def = "1",
	 .arg = "N",
	 .help = "arrival and service-time randomness"},
	{.name = "label",
	 .kind = CLI_FN,
	 .fn = label_fn,
	 .arg = "NAME",
	 .help = "the \"policy\" of every record (empty)"},
	{.name = "json",
	 .kind = CLI_FLAG,
	 CLI_DEST(P.json),
	 .help = "one JSON object per rate point (and one for\n"
		 "the SLO search) instead of text"},
	{.name = "csv",
	 .kind = CLI_STRING,
	 CLI_DEST(P.csv_path),
	 .arg = "FILE",
	 .help = "header and one row per rate point"},
	{.name = "slo-csv",
	 .kind = CLI_STRING,
	 CLI_DEST(P.slo_csv_path),
	 .arg = "FILE",
	 .help = "header and the SLO search's summary row"},
	{.name = "quiet",
	 .letter = 'q',
	 .kind = CLI_FLAG,
	 CLI_DEST(P.quiet),
	 .help = "no progress line on a terminal during a\n"
		 "sweep or an SLO search"},
	{.kind = CLI_SECTION, .help = "Port:"},
	{.name = "port",
	 .kind = CLI_STRING,
	 CLI_DEST(P.port),
	 .arg = "NAME|ID",
	 .help = "ethdev port (default: the first one)"},
	{.name = "link-wait",
	 CLI_DEST(P.link_wait_s),
	 SECONDS(0.0, MAX_SECONDS, false),
	 .def = "10",
	 .help = "wait this long for the link to come up, at the\n"
		 "start and after it went down"},
	CLI_OPT_HELP('h'),
	{.kind = CLI_END},
};

static struct cli_spec spec = {
	.prog = "turbolb-loadgen",
	.usage = "[EAL options] -- [options]",
	.about = "turbolb RPC load generator: sends requests from one ethdev "
		 "port,\n"
		 "open loop on a schedule or closed loop with a window, and "
		 "measures\n"
		 "response latency; one rate, a sweep of rates, or a search "
		 "for the\n"
		 "highest rate that meets a latency SLO.",
	.epilog =
		"Example:\n"
		"  turbolb-loadgen --no-huge -m 256 --file-prefix lg \\\n"
		"    "
		"--vdev=net_memif0,role=client,socket=/run/turbolb/uplink.sock,"
		"socket-abstract=no \\\n"
		"    -- --rates 10000,20000,40000 --duration 2 --dist exp:10us "
		"--csv out.csv",
	.hint = "turbolb-loadgen -- --help",
	.opts = opts,
	/* Words after the options are a mistake, reported as such. */
	.stop_at_arg = true,
};

void
lg_usage(FILE *f, const char *prog)
{
	(void)prog;
	cli_help(&spec, f);
}

void
lg_opts_default(struct lg_opts *o)
{
	memset(&P, 0, sizeof(P));
	spec.err = stderr;
	cli_defaults(&spec);
	tlb_dist_format(&P.dist, P.dist_spec, sizeof(P.dist_spec));
	*o = P;
}

uint32_t
lg_payload_room(uint32_t mtu)
{
	return mtu - LG_IP_UDP_HDR_LEN - TLB_RPC_HDR_LEN;
}

uint32_t
lg_pkts_per_msg(uint32_t size, uint32_t mtu)
{
	uint32_t room = lg_payload_room(mtu);

	if (size == 0)
		return 1;
	return (size + room - 1) / room;
}

/* One rate of a list: in (0, MAX_RATE]. s is NUL-terminated. */
static int
parse_rate(const char *s, double *v)
{
	return cli_parse_rate(s, v) != 0 || *v <= 0.0 || *v > MAX_RATE ? -1 : 0;
}

int
lg_parse_rates(const char *s, double *rates, uint32_t max, uint32_t *n,
	       char *err, size_t errlen)
{
	char word[64];

	*n = 0;
	for (;;) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= sizeof(word)) {
			snprintf(err, errlen,
				 "empty or overlong rate in the "
				 "list");
			return -1;
		}
		memcpy(word, s, len);
		word[len] = '\0';
		if (*n == max) {
			snprintf(err, errlen, "more than %u rates", max);
			return -1;
		}
		if (parse_rate(word, &rates[*n]) != 0) {
			snprintf(err, errlen,
				 "rate '%s': want requests/s in "
				 "(0, %.0f]",
				 word, MAX_RATE);
			return -1;
		}
		(*n)++;
		if (s[len] == '\0')
			return 0;
		s += len + 1;
	}
}

int
lg_parse_sweep(const char *s, bool need_step, double *lo, double *hi,
	       double *step, char *err, size_t errlen)
{
	char buf[128], *f[4];
	int nf = 0;

	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -1;
	}
	strcpy(buf, s);
	/* strtok would merge empty fields ("1::3"); split by hand. */
	f[nf++] = buf;
	for (char *c = buf; *c != '\0'; c++) {
		if (*c != ':')
			continue;
		*c = '\0';
		if (nf == 4)
			break;
		f[nf++] = c + 1;
	}
	if (nf > 3 || nf < (need_step ? 3 : 2)) {
		snprintf(err, errlen, "want LO:HI:STEP%s",
			 need_step ? "" : " or LO:HI");
		return -1;
	}
	*step = 0.0;
	if (parse_rate(f[0], lo) != 0 || parse_rate(f[1], hi) != 0 ||
	    (nf == 3 && parse_rate(f[2], step) != 0)) {
		snprintf(err, errlen, "want rates in (0, %.0f]", MAX_RATE);
		return -1;
	}
	if (*hi < *lo) {
		snprintf(err, errlen, "HI below LO");
		return -1;
	}
	return 0;
}

int
lg_sweep_expand(double lo, double hi, double step, double *rates, uint32_t max,
		uint32_t *n)
{
	/* From the index, not by adding steps, so 0.1-sized steps do not
	 * drift; the slack lets HI itself in despite rounding. */
	double count = floor((hi - lo) / step * (1.0 + 1e-12) + 1e-9) + 1.0;

	if (step <= 0.0 || hi < lo || count > (double)max)
		return -1;
	*n = (uint32_t)count;
	for (uint32_t i = 0; i < *n; i++)
		rates[i] = lo + (double)i * step;
	return 0;
}

double
lg_slo_ns(const struct lg_opts *o)
{
	return o->slo_multiple * tlb_dist_mean(&o->dist);
}

/* The flows must not wrap past the last IPv4 address. */
static bool
src_ips_fit(const struct lg_opts *o)
{
	uint32_t ip = (uint32_t)o->src_ip[0] << 24 |
		      (uint32_t)o->src_ip[1] << 16 |
		      (uint32_t)o->src_ip[2] << 8 | o->src_ip[3];

	return (uint64_t)ip + o->src_ips - 1 <= UINT32_MAX;
}

/* Which rates to run: the SLO bounds, the sweep's points, or one --rate. */
static int
check_rates(struct lg_opts *o, const struct seen *w)
{
	if (w->rates && w->sweep)
		return cli_usage_error(
			&spec, "--rates and --sweep exclude each other");
	if (w->rate && (w->rates || w->sweep))
		return cli_usage_error(&spec,
				       "--rate and --%s exclude each other",
				       w->rates ? "rates" : "sweep");
	if (o->slo_multiple == 0.0) {
		if (w->rate_min || w->rate_max || w->iterations ||
		    o->slo_csv_path != NULL)
			return cli_usage_error(&spec,
					       "--rate-min, --rate-max, "
					       "--slo-iterations and --slo-csv "
					       "go with --slo-multiple");
		if (w->sweep) {
			if (w->sweep_step == 0.0)
				return cli_usage_error(
					&spec, "--sweep: want LO:HI:STEP");
			if (lg_sweep_expand(w->sweep_lo, w->sweep_hi,
					    w->sweep_step, o->rates,
					    LG_MAX_POINTS, &o->n_rates) != 0)
				return cli_usage_error(
					&spec, "--sweep: more than %u points",
					LG_MAX_POINTS);
		} else if (!w->rates) {
			o->rates[0] = o->rate;
			o->n_rates = 1;
		}
		return 0;
	}
	/* The SLO search picks its own rates between two bounds. */
	if (w->rates || w->rate)
		return cli_usage_error(
			&spec,
			"--slo-multiple searches between --sweep "
			"LO:HI or --rate-min/--rate-max, not "
			"--%s",
			w->rates ? "rates" : "rate");
	if (w->sweep && (w->rate_min || w->rate_max))
		return cli_usage_error(&spec,
				       "--sweep and --rate-min/--rate-max "
				       "exclude each other");
	if (w->sweep) {
		o->rate_min = w->sweep_lo;
		o->rate_max = w->sweep_hi;
	} else if (!w->rate_min || !w->rate_max) {
		return cli_usage_error(&spec, "--slo-multiple needs its range: "
					      "--sweep LO:HI or --rate-min and "
					      "--rate-max");
	}
	if (o->rate_max <= o->rate_min)
		return cli_usage_error(&spec,
				       "--slo-multiple: the upper rate %.0f "
				       "is not above the lower %.0f",
				       o->rate_max, o->rate_min);
	if (tlb_dist_mean(&o->dist) <= 0.0)
		return cli_usage_error(&spec,
				       "--slo-multiple: the SLO is a multiple "
				       "of the mean of --dist, which is 0");
	o->n_rates = 0;
	return 0;
}

/* Cross-option checks, once everything is known. */
static int
check(struct lg_opts *o, const struct seen *w)
{
	uint32_t npkts;

	if (w->duration && o->requests != 0)
		return cli_usage_error(&spec,
				       "--duration and --requests exclude each "
				       "other");
	if (o->dst_port >= o->src_port_base &&
	    (uint32_t)(o->dst_port - o->src_port_base) < o->flows)
		return cli_usage_error(
			&spec,
			"--dst-port %u lies among the source ports %u..%u; "
			"responses could not be told from requests",
			o->dst_port, o->src_port_base,
			o->src_port_base + o->flows - 1);
	if ((uint32_t)o->src_port_base + o->flows - 1 > UINT16_MAX)
		return cli_usage_error(
			&spec,
			"--src-port-base %u with --flows %u runs past port "
			"65535",
			o->src_port_base, o->flows);
	if (!src_ips_fit(o))
		return cli_usage_error(&spec,
				       "--src-ips %u from --src-ip runs past "
				       "255.255.255.255",
				       o->src_ips);
	npkts = lg_pkts_per_msg(o->size, o->mtu);
	if (npkts > TLB_RPC_MAX_PKTS)
		return cli_usage_error(
			&spec,
			"--size %u needs %u packets at --mtu %u; a message "
			"has at most %u (%u bytes)",
			o->size, npkts, o->mtu, TLB_RPC_MAX_PKTS,
			TLB_RPC_MAX_PKTS * lg_payload_room(o->mtu));
	if (o->window != 0) {
		/* The window sets the pace: there is no rate to offer. */
		if (w->rate || w->rates || w->sweep || w->arrival ||
		    o->slo_multiple != 0.0)
			return cli_usage_error(
				&spec, "--closed-loop sets its own pace: no "
				       "--rate, --rates, --sweep, --arrival or "
				       "--slo-multiple");
		o->arrival = LG_ARRIVAL_CLOSED;
		o->rates[0] = 0.0;
		o->n_rates = 1;
		return 0;
	}
	return check_rates(o, w);
}

int
lg_opts_parse(int argc, char **argv, struct lg_opts *o, FILE *out, FILE *err)
{
	int first, rc;

	memset(&P, 0, sizeof(P));
	memset(&W, 0, sizeof(W));
	spec.out = out;
	spec.err = err;
	rc = cli_parse(&spec, argc, argv, &first);
	if (rc == CLI_OK && first < argc)
		rc = cli_usage_error(&spec, "unexpected argument '%s'",
				     argv[first]);
	if (rc == CLI_OK) {
		P.has_src_mac = W.src_mac;
		if (P.requests != 0)
			P.duration_s = 0.0;
		if (check(&P, &W) != 0)
			rc = CLI_ERROR;
	}
	if (rc == CLI_OK)
		tlb_dist_format(&P.dist, P.dist_spec, sizeof(P.dist_spec));
	*o = P;
	return rc;
}
