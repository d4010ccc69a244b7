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
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void
lg_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [EAL options] -- [options]\n"
		"\n"
		"Open-loop turbolb RPC load generator: sends requests on a fixed\n"
		"schedule from one ethdev port and measures response latency.\n"
		"\n"
		"  --rate RPS            target requests per second (10000)\n"
		"  --duration SEC        measured send time, decimals allowed (1)\n"
		"  --requests N          or: send N measured requests\n"
		"  --warmup SEC          sent before the measured part; tracked, not\n"
		"                        measured (0)\n"
		"  --arrival KIND        poisson (exponential gaps) | fixed (poisson)\n"
		"  --dist SPEC           service-time hint of each request (fixed:1us):\n"
		"                        fixed:T exp:MEAN uniform:A:B normal:MEAN:SD\n"
		"                        bimodal:P:A:B lognormal:MEAN:SD\n"
		"  --class C             svc_class of every request (0)\n"
		"  --size BYTES          RPC payload per request; split into several\n"
		"                        packets above the MTU's room (0)\n"
		"  --mtu BYTES           IP MTU (1500)\n"
		"  --flows F             distinct UDP source ports (64)\n"
		"  --src-port-base P     first source port (10000)\n"
		"  --src-ip A.B.C.D      (10.0.0.1)\n"
		"  --dst-ip A.B.C.D      (10.0.0.2)\n"
		"  --dst-port P          (9000)\n"
		"  --dst-mac MAC         (ff:ff:ff:ff:ff:ff)\n"
		"  --src-mac MAC         (the port's address)\n"
		"  --timeout-ms T        a request unanswered this long is lost;\n"
		"                        also the wait for stragglers (1000)\n"
		"  --max-lag-us US       report \"behind\" when a request leaves later\n"
		"                        than this after its scheduled time (1000)\n"
		"  --seed N              arrival and service-time randomness (1)\n"
		"  --port NAME|ID        ethdev port (the first one)\n"
		"  --link-wait SEC       wait this long for the link to come up (10)\n"
		"  --json                print one JSON object instead of text\n"
		"  -h, --help            show this help\n"
		"\n"
		"Example:\n"
		"  %s --no-huge -m 256 --file-prefix lg \\\n"
		"    --vdev=net_memif0,role=client,socket=/run/turbolb/uplink.sock,"
		"socket-abstract=no \\\n"
		"    -- --rate 20000 --duration 2 --dist exp:10us --json\n",
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

/* Cross-option checks, once everything is known. */
static int
check(const struct lg_opts *o, bool have_duration, const char *prog,
      FILE *err)
{
	uint32_t npkts;

	if (have_duration && o->requests != 0)
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
	npkts = lg_pkts_per_msg(o->size, o->mtu);
	if (npkts > TLB_RPC_MAX_PKTS)
		return bad(err, prog,
			   "--size %u needs %u packets at --mtu %u; a message "
			   "has at most %u (%u bytes)",
			   o->size, npkts, o->mtu, TLB_RPC_MAX_PKTS,
			   TLB_RPC_MAX_PKTS * lg_payload_room(o->mtu));
	return 0;
}

int
lg_opts_parse(int argc, char **argv, struct lg_opts *o, FILE *out,
	      FILE *err)
{
	const char *prog = argc > 0 ? argv[0] : "turbolb-loadgen";
	bool have_duration = false;
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
			if (parse_double(a, &d) != 0 || d <= 0.0 ||
			    d > MAX_RATE)
				return bad(err, prog,
					   "--rate '%s': want requests/s in "
					   "(0, %.0f]",
					   a, MAX_RATE);
			o->rate = d;
			break;
		case OPT_DURATION:
			if (parse_double(a, &d) != 0 || d <= 0.0 ||
			    d > MAX_SECONDS)
				return bad(err, prog,
					   "--duration '%s': want seconds > 0",
					   a);
			o->duration_s = d;
			have_duration = true;
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
	if (check(o, have_duration, prog, err) != 0)
		return -1;
	tlb_dist_format(&o->dist, o->dist_spec, sizeof(o->dist_spec));
	return 0;
}
