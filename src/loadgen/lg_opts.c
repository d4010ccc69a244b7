/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-loadgen command line: the options after "--". Parsed before the
 * EAL starts, so a typo costs no device set-up, and checked as a whole so
 * the run never starts with a combination that cannot work.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lg.h"

#define MAX_RATE 1e9
#define MAX_SECONDS 1e6
#define MAX_TIMEOUT_MS 3600000u

enum {
	OPT_RATE = 256,
	OPT_DURATION,
	OPT_REQUESTS,
	OPT_WARMUP,
	OPT_ARRIVAL,
	OPT_DIST,
	OPT_FLOWS,
	OPT_SRC_PORT_BASE,
	OPT_SRC_IP,
	OPT_DST_IP,
	OPT_DST_PORT,
	OPT_DST_MAC,
	OPT_SRC_MAC,
	OPT_SIZE,
	OPT_MTU,
	OPT_TIMEOUT_MS,
	OPT_MAX_LAG_US,
	OPT_CLASS,
	OPT_SEED,
	OPT_JSON,
	OPT_PORT,
	OPT_LINK_WAIT,
	OPT_CLOSED_LOOP,
	OPT_SRC_IPS,
	OPT_RATES,
	OPT_SWEEP,
	OPT_SETTLE,
	OPT_SLO_MULTIPLE,
	OPT_SLO_ITERATIONS,
	OPT_RATE_MIN,
	OPT_RATE_MAX,
	OPT_LABEL,
	OPT_CSV,
	OPT_SLO_CSV,
};

static const struct option longopts[] = {
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "requests", required_argument, NULL, OPT_REQUESTS },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "arrival", required_argument, NULL, OPT_ARRIVAL },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "src-port-base", required_argument, NULL, OPT_SRC_PORT_BASE },
	{ "src-ip", required_argument, NULL, OPT_SRC_IP },
	{ "dst-ip", required_argument, NULL, OPT_DST_IP },
	{ "dst-port", required_argument, NULL, OPT_DST_PORT },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "src-mac", required_argument, NULL, OPT_SRC_MAC },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT_MS },
	{ "max-lag-us", required_argument, NULL, OPT_MAX_LAG_US },
	{ "class", required_argument, NULL, OPT_CLASS },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "link-wait", required_argument, NULL, OPT_LINK_WAIT },
	{ "closed-loop", required_argument, NULL, OPT_CLOSED_LOOP },
	{ "src-ips", required_argument, NULL, OPT_SRC_IPS },
	{ "rates", required_argument, NULL, OPT_RATES },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "settle", required_argument, NULL, OPT_SETTLE },
	{ "slo-multiple", required_argument, NULL, OPT_SLO_MULTIPLE },
	{ "slo-iterations", required_argument, NULL, OPT_SLO_ITERATIONS },
	{ "rate-min", required_argument, NULL, OPT_RATE_MIN },
	{ "rate-max", required_argument, NULL, OPT_RATE_MAX },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "slo-csv", required_argument, NULL, OPT_SLO_CSV },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
lg_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- [options]\n"
		"\n"
		"turbolb RPC load generator: sends requests from one ethdev port,\n"
		"open loop on a schedule or closed loop with a window, and measures\n"
		"response latency; one rate, a sweep of rates, or a search for the\n"
		"highest rate that meets a latency SLO.\n"
		"\n"
		"Load:\n"
		"  --rate RPS            target requests per second (10000)\n"
		"  --arrival KIND        poisson (exponential gaps) | fixed (poisson)\n"
		"  --closed-loop W       instead: keep W requests outstanding, a new\n"
		"                        one on each response or timeout\n"
		"  --duration SEC        measured send time per point, decimals\n"
		"                        allowed (1)\n"
		"  --requests N          or: send N measured requests per point\n"
		"  --warmup SEC          sent before each measured part; tracked, not\n"
		"                        measured (0)\n"
		"  --dist SPEC           service-time hint of each request (fixed:1us):\n"
		"                        fixed:T exp:MEAN uniform:A:B normal:MEAN:SD\n"
		"                        bimodal:P:A:B lognormal:MEAN:SD\n"
		"  --class C             svc_class of every request (0)\n"
		"  --size BYTES          RPC payload per request; split into several\n"
		"                        packets above the MTU's room (0)\n"
		"  --mtu BYTES           IP MTU (1500)\n"
		"Flows and addresses:\n"
		"  --flows F             distinct UDP source ports (64)\n"
		"  --src-ips N           spread over N consecutive source addresses\n"
		"                        from --src-ip: F x N flows (1)\n"
		"  --src-port-base P     first source port (10000)\n"
		"  --src-ip A.B.C.D      (10.0.0.1)\n"
		"  --dst-ip A.B.C.D      (10.0.0.2)\n"
		"  --dst-port P          (9000)\n"
		"  --dst-mac MAC         (ff:ff:ff:ff:ff:ff)\n"
		"  --src-mac MAC         (the port's address)\n"
		"Sweeps and the SLO search (the port is set up once):\n"
		"  --rates LIST          rate points, e.g. 5000,10000,20000\n"
		"  --sweep LO:HI:STEP    rate points LO, LO+STEP, .. up to HI\n"
		"  --settle SEC          between points, wait up to this long for\n"
		"                        answers to requests counted lost (1)\n"
		"  --slo-multiple X      search by bisection for the highest\n"
		"                        throughput with p99 <= X times the mean of\n"
		"                        --dist and nothing lost, between --sweep\n"
		"                        LO:HI (STEP unused) or --rate-min/--rate-max\n"
		"  --rate-min RPS, --rate-max RPS\n"
		"  --slo-iterations N    bisection steps after both bounds (8)\n"
		"Measurement and output:\n"
		"  --timeout-ms T        a request unanswered this long is lost;\n"
		"                        also the wait for stragglers (1000)\n"
		"  --max-lag-us US       report \"behind\" when a request leaves later\n"
		"                        than this after its scheduled time (1000)\n"
		"  --seed N              arrival and service-time randomness (1)\n"
		"  --label NAME          the \"policy\" of every record (empty)\n"
		"  --json                one JSON object per rate point (and one for\n"
		"                        the SLO search) instead of text\n"
		"  --csv FILE            header and one row per rate point\n"
		"  --slo-csv FILE        header and the SLO search's summary row\n"
		"Port:\n"
		"  --port NAME|ID        ethdev port (the first one)\n"
		"  --link-wait SEC       wait this long for the link to come up, at the\n"
		"                        start and after it went down (10)\n"
		"  -h, --help            show this help\n"
		"\n"
		"Example:\n"
		"  %s --no-huge -m 256 --file-prefix lg \\\n"
		"    --vdev=net_memif0,role=client,socket=/run/turbolb/uplink.sock,"
		"socket-abstract=no \\\n"
		"    -- --rates 10000,20000,40000 --duration 2 --dist exp:10us "
		"--csv out.csv\n",
		prog, prog);
}

void
lg_opts_default(struct lg_opts *o)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	memset(o, 0, sizeof(*o));
	o->rate = 10000.0;
	o->duration_s = 1.0;
	o->arrival = LG_ARRIVAL_POISSON;
	tlb_dist_parse("fixed:1us", &o->dist, NULL, 0);
	tlb_dist_format(&o->dist, o->dist_spec, sizeof(o->dist_spec));
	o->flows = 64;
	o->src_port_base = 10000;
	inet_pton(AF_INET, "10.0.0.1", o->src_ip);
	inet_pton(AF_INET, "10.0.0.2", o->dst_ip);
	o->dst_port = 9000;
	memcpy(o->dst_mac, bcast, sizeof(bcast));
	o->mtu = 1500;
	o->timeout_ms = 1000;
	o->max_lag_us = 1000;
	o->seed = 1;
	o->link_wait_s = 10.0;
	o->src_ips = 1;
	o->settle_s = 1.0;
	o->slo_iterations = 8;
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

/* A finite, non-negative decimal; nothing after it. */
static int
parse_double(const char *s, double *v)
{
	char *end;

	if (*s == '\0' || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(*v) || *v < 0.0)
		return -1;
	return 0;
}

/* One rate of a list: in (0, MAX_RATE]. s is NUL-terminated. */
static int
parse_rate(const char *s, double *v)
{
	return parse_double(s, v) != 0 || *v <= 0.0 || *v > MAX_RATE ? -1 : 0;
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
			snprintf(err, errlen, "empty or overlong rate in the "
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
			snprintf(err, errlen, "rate '%s': want requests/s in "
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
lg_sweep_expand(double lo, double hi, double step, double *rates,
		uint32_t max, uint32_t *n)
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

static int
parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	/* strtoull would take "-1" as 2^64 - 1. */
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || x > max)
		return -1;
	*v = x;
	return 0;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++) {
		unsigned int v = 0;

		for (int d = 0; d < 2; d++, s++) {
			char c = *s;

			if (c >= '0' && c <= '9')
				v = v * 16 + (unsigned int)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (unsigned int)(c - 'a' + 10);
			else if (c >= 'A' && c <= 'F')
				v = v * 16 + (unsigned int)(c - 'A' + 10);
			else
				return -1;
		}
		mac[i] = (uint8_t)v;
		if (*s != (i == 5 ? '\0' : ':'))
			return -1;
		s++;
	}
	return 0;
}

static int __attribute__((format(printf, 3, 4)))
bad(FILE *err, const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(err, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fprintf(err, "\n(see %s -- --help)\n", prog);
	return -1;
}

/* What the command line said explicitly, for the cross-option checks. */
struct seen {
	bool duration, rate, arrival, rates, sweep, rate_min, rate_max;
	bool iterations;
	double sweep_lo, sweep_hi, sweep_step;
};

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
check_rates(struct lg_opts *o, const struct seen *w, const char *prog,
	    FILE *err)
{
	if (w->rates && w->sweep)
		return bad(err, prog, "--rates and --sweep exclude each other");
	if (w->rate && (w->rates || w->sweep))
		return bad(err, prog, "--rate and --%s exclude each other",
			   w->rates ? "rates" : "sweep");
	if (o->slo_multiple == 0.0) {
		if (w->rate_min || w->rate_max || w->iterations ||
		    o->slo_csv_path != NULL)
			return bad(err, prog, "--rate-min, --rate-max, "
					      "--slo-iterations and --slo-csv "
					      "go with --slo-multiple");
		if (w->sweep) {
			if (w->sweep_step == 0.0)
				return bad(err, prog,
					   "--sweep: want LO:HI:STEP");
			if (lg_sweep_expand(w->sweep_lo, w->sweep_hi,
					    w->sweep_step, o->rates,
					    LG_MAX_POINTS, &o->n_rates) != 0)
				return bad(err, prog,
					   "--sweep: more than %u points",
					   LG_MAX_POINTS);
		} else if (!w->rates) {
			o->rates[0] = o->rate;
			o->n_rates = 1;
		}
		return 0;
	}
	/* The SLO search picks its own rates between two bounds. */
	if (w->rates || w->rate)
		return bad(err, prog, "--slo-multiple searches between --sweep "
				      "LO:HI or --rate-min/--rate-max, not "
				      "--%s",
			   w->rates ? "rates" : "rate");
	if (w->sweep && (w->rate_min || w->rate_max))
		return bad(err, prog, "--sweep and --rate-min/--rate-max "
				      "exclude each other");
	if (w->sweep) {
		o->rate_min = w->sweep_lo;
		o->rate_max = w->sweep_hi;
	} else if (!w->rate_min || !w->rate_max) {
		return bad(err, prog, "--slo-multiple needs its range: "
				      "--sweep LO:HI or --rate-min and "
				      "--rate-max");
	}
	if (o->rate_max <= o->rate_min)
		return bad(err, prog, "--slo-multiple: the upper rate %.0f "
				      "is not above the lower %.0f",
			   o->rate_max, o->rate_min);
	if (tlb_dist_mean(&o->dist) <= 0.0)
		return bad(err, prog, "--slo-multiple: the SLO is a multiple "
				      "of the mean of --dist, which is 0");
	o->n_rates = 0;
	return 0;
}

/* Cross-option checks, once everything is known. */
static int
check(struct lg_opts *o, const struct seen *w, const char *prog, FILE *err)
{
	uint32_t npkts;

	if (w->duration && o->requests != 0)
		return bad(err, prog, "--duration and --requests exclude each "
				      "other");
	if (o->dst_port >= o->src_port_base &&
	    (uint32_t)(o->dst_port - o->src_port_base) < o->flows)
		return bad(err, prog,
			   "--dst-port %u lies among the source ports %u..%u; "
			   "responses could not be told from requests",
			   o->dst_port, o->src_port_base,
			   o->src_port_base + o->flows - 1);
	if ((uint32_t)o->src_port_base + o->flows - 1 > UINT16_MAX)
		return bad(err, prog,
			   "--src-port-base %u with --flows %u runs past port "
			   "65535",
			   o->src_port_base, o->flows);
	if (!src_ips_fit(o))
		return bad(err, prog,
			   "--src-ips %u from --src-ip runs past "
			   "255.255.255.255",
			   o->src_ips);
	npkts = lg_pkts_per_msg(o->size, o->mtu);
	if (npkts > TLB_RPC_MAX_PKTS)
		return bad(err, prog,
			   "--size %u needs %u packets at --mtu %u; a message "
			   "has at most %u (%u bytes)",
			   o->size, npkts, o->mtu, TLB_RPC_MAX_PKTS,
			   TLB_RPC_MAX_PKTS * lg_payload_room(o->mtu));
	if (o->window != 0) {
		/* The window sets the pace: there is no rate to offer. */
		if (w->rate || w->rates || w->sweep || w->arrival ||
		    o->slo_multiple != 0.0)
			return bad(err, prog,
				   "--closed-loop sets its own pace: no "
				   "--rate, --rates, --sweep, --arrival or "
				   "--slo-multiple");
		o->arrival = LG_ARRIVAL_CLOSED;
		o->rates[0] = 0.0;
		o->n_rates = 1;
		return 0;
	}
	return check_rates(o, w, prog, err);
}

/* A label goes into CSV and JSON unquoted-safe: no commas, quotes,
 * backslashes or control characters. */
static bool
label_ok(const char *s)
{
	if (strlen(s) >= LG_LABEL_MAX)
		return false;
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == ',' ||
		    *s == '"' || *s == '\\')
			return false;
	return true;
}

int
lg_opts_parse(int argc, char **argv, struct lg_opts *o, FILE *out,
	      FILE *err)
{
	const char *prog = argc > 0 ? argv[0] : "turbolb-loadgen";
	struct seen w = { 0 };
	char derr[128];
	uint64_t u;
	double d;
	int opt;

	lg_opts_default(o);
	/* glibc: 0 re-initialises getopt completely (EAL used it before us,
	 * and the tests call us many times). */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		const char *a = optarg;

		switch (opt) {
		case OPT_RATE:
		case OPT_RATE_MIN:
		case OPT_RATE_MAX:
			if (parse_rate(a, &d) != 0)
				return bad(err, prog,
					   "--%s '%s': want requests/s in "
					   "(0, %.0f]",
					   opt == OPT_RATE ? "rate" :
					   opt == OPT_RATE_MIN ? "rate-min" :
								 "rate-max",
					   a, MAX_RATE);
			if (opt == OPT_RATE) {
				o->rate = d;
				w.rate = true;
			} else if (opt == OPT_RATE_MIN) {
				o->rate_min = d;
				w.rate_min = true;
			} else {
				o->rate_max = d;
				w.rate_max = true;
			}
			break;
		case OPT_DURATION:
			if (parse_double(a, &d) != 0 || d <= 0.0 ||
			    d > MAX_SECONDS)
				return bad(err, prog,
					   "--duration '%s': want seconds > 0",
					   a);
			o->duration_s = d;
			w.duration = true;
			break;
		case OPT_REQUESTS:
			if (parse_u64(a, UINT64_MAX >> 2, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--requests '%s': want a count > 0",
					   a);
			o->requests = u;
			break;
		case OPT_WARMUP:
			if (parse_double(a, &d) != 0 || d > MAX_SECONDS)
				return bad(err, prog,
					   "--warmup '%s': want seconds >= 0",
					   a);
			o->warmup_s = d;
			break;
		case OPT_ARRIVAL:
			if (strcmp(a, "poisson") == 0)
				o->arrival = LG_ARRIVAL_POISSON;
			else if (strcmp(a, "fixed") == 0)
				o->arrival = LG_ARRIVAL_FIXED;
			else
				return bad(err, prog,
					   "--arrival '%s': want poisson or "
					   "fixed",
					   a);
			w.arrival = true;
			break;
		case OPT_CLOSED_LOOP:
			if (parse_u64(a, LG_MAX_WINDOW, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--closed-loop '%s': want a window "
					   "of 1..%u requests",
					   a, LG_MAX_WINDOW);
			o->window = (uint32_t)u;
			break;
		case OPT_DIST:
			if (tlb_dist_parse(a, &o->dist, derr, sizeof(derr)) !=
			    0)
				return bad(err, prog, "--dist: %s", derr);
			break;
		case OPT_FLOWS:
			if (parse_u64(a, 65536, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--flows '%s': want 1..65536", a);
			o->flows = (uint32_t)u;
			break;
		case OPT_SRC_IPS:
			if (parse_u64(a, 65536, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--src-ips '%s': want 1..65536", a);
			o->src_ips = (uint32_t)u;
			break;
		case OPT_SRC_PORT_BASE:
			if (parse_u64(a, UINT16_MAX, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--src-port-base '%s': want "
					   "1..65535",
					   a);
			o->src_port_base = (uint16_t)u;
			break;
		case OPT_SRC_IP:
		case OPT_DST_IP:
			if (inet_pton(AF_INET, a,
				      opt == OPT_SRC_IP ? o->src_ip :
							  o->dst_ip) != 1)
				return bad(err, prog,
					   "--%s '%s': want an IPv4 address "
					   "A.B.C.D",
					   opt == OPT_SRC_IP ? "src-ip" :
							       "dst-ip",
					   a);
			break;
		case OPT_DST_PORT:
			if (parse_u64(a, UINT16_MAX, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--dst-port '%s': want 1..65535", a);
			o->dst_port = (uint16_t)u;
			break;
		case OPT_DST_MAC:
		case OPT_SRC_MAC:
			if (parse_mac(a, opt == OPT_DST_MAC ? o->dst_mac :
							      o->src_mac) != 0)
				return bad(err, prog,
					   "--%s '%s': want XX:XX:XX:XX:XX:XX",
					   opt == OPT_DST_MAC ? "dst-mac" :
								"src-mac",
					   a);
			if (opt == OPT_SRC_MAC)
				o->has_src_mac = true;
			break;
		case OPT_SIZE:
			if (parse_u64(a, UINT32_MAX, &u) != 0)
				return bad(err, prog,
					   "--size '%s': want bytes >= 0", a);
			o->size = (uint32_t)u;
			break;
		case OPT_MTU:
			if (parse_u64(a, LG_MTU_MAX, &u) != 0 ||
			    u < LG_MTU_MIN)
				return bad(err, prog,
					   "--mtu '%s': want %u..%u", a,
					   LG_MTU_MIN, LG_MTU_MAX);
			o->mtu = (uint32_t)u;
			break;
		case OPT_TIMEOUT_MS:
			if (parse_u64(a, MAX_TIMEOUT_MS, &u) != 0 || u == 0)
				return bad(err, prog,
					   "--timeout-ms '%s': want 1..%u", a,
					   MAX_TIMEOUT_MS);
			o->timeout_ms = (uint32_t)u;
			break;
		case OPT_MAX_LAG_US:
			if (parse_u64(a, UINT32_MAX, &u) != 0)
				return bad(err, prog,
					   "--max-lag-us '%s': want us >= 0",
					   a);
			o->max_lag_us = (uint32_t)u;
			break;
		case OPT_CLASS:
			if (parse_u64(a, UINT16_MAX, &u) != 0)
				return bad(err, prog,
					   "--class '%s': want 0..65535", a);
			o->svc_class = (uint16_t)u;
			break;
		case OPT_SEED:
			if (parse_u64(a, UINT64_MAX, &u) != 0)
				return bad(err, prog,
					   "--seed '%s': want an integer", a);
			o->seed = u;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_PORT:
			if (*a == '\0')
				return bad(err, prog, "--port: empty name");
			o->port = a;
			break;
		case OPT_LINK_WAIT:
			if (parse_double(a, &d) != 0 || d > MAX_SECONDS)
				return bad(err, prog,
					   "--link-wait '%s': want seconds "
					   ">= 0",
					   a);
			o->link_wait_s = d;
			break;
		case OPT_RATES:
			if (lg_parse_rates(a, o->rates, LG_MAX_POINTS,
					   &o->n_rates, derr,
					   sizeof(derr)) != 0)
				return bad(err, prog, "--rates '%s': %s", a,
					   derr);
			w.rates = true;
			break;
		case OPT_SWEEP:
			/* The step may be left out for an SLO search, which
			 * is only known at the end. */
			if (lg_parse_sweep(a, false, &w.sweep_lo, &w.sweep_hi,
					   &w.sweep_step, derr,
					   sizeof(derr)) != 0)
				return bad(err, prog, "--sweep '%s': %s", a,
					   derr);
			w.sweep = true;
			break;
		case OPT_SETTLE:
			if (parse_double(a, &d) != 0 || d > MAX_SECONDS)
				return bad(err, prog,
					   "--settle '%s': want seconds >= 0",
					   a);
			o->settle_s = d;
			break;
		case OPT_SLO_MULTIPLE:
			if (parse_double(a, &d) != 0 || d <= 0.0 || d > 1e6)
				return bad(err, prog,
					   "--slo-multiple '%s': want a factor "
					   "> 0",
					   a);
			o->slo_multiple = d;
			break;
		case OPT_SLO_ITERATIONS:
			if (parse_u64(a, 64, &u) != 0)
				return bad(err, prog,
					   "--slo-iterations '%s': want 0..64",
					   a);
			o->slo_iterations = (uint32_t)u;
			w.iterations = true;
			break;
		case OPT_LABEL:
			if (!label_ok(a))
				return bad(err, prog,
					   "--label '%s': want at most %u "
					   "characters, no commas, quotes, "
					   "backslashes or control characters",
					   a, LG_LABEL_MAX - 1);
			snprintf(o->label, sizeof(o->label), "%s", a);
			break;
		case OPT_CSV:
		case OPT_SLO_CSV:
			if (*a == '\0')
				return bad(err, prog, "--%s: empty file name",
					   opt == OPT_CSV ? "csv" : "slo-csv");
			if (opt == OPT_CSV)
				o->csv_path = a;
			else
				o->slo_csv_path = a;
			break;
		case 'h':
			lg_usage(out, prog);
			return 1;
		default:
			/* optind already points past the offending word. */
			return bad(err, prog,
				   "unknown option or missing value: '%s'",
				   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad(err, prog, "unexpected argument '%s'",
			   argv[optind]);
	if (o->requests != 0)
		o->duration_s = 0.0;
	if (check(o, &w, prog, err) != 0)
		return -1;
	tlb_dist_format(&o->dist, o->dist_spec, sizeof(o->dist_spec));
	return 0;
}
