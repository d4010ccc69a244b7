/* SPDX-License-Identifier: BSD-3-Clause
 * The protocol modules other than turbolb (src/lib/proto_dns.c,
 * proto_memcached.c, proto_udp.c) through tlb_parse_frame(): what each
 * classifies as request or response, the ids and packet numbers it
 * reports, the malformed inputs it refuses (each a parse error, never a
 * crash), that the turbolb fast paths leave their ports alone; and the
 * service-time estimator of include/turbolb/svc_est.h, which converges to
 * the mean service time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/policy.h"
#include "turbolb/proto.h"
#include "turbolb/proto_fast.h"
#include "turbolb/svc_est.h"

#define FRAME_MAX 2048
#define CLI_PORT  40000
#define NATIVE    9000
#define DNS       53
#define MC        11211
#define UDP       7000

static struct tlb_parse_opts
opts(void)
{
	struct tlb_parse_opts o = {
		.udp_ports = {NATIVE},
		.n_udp_ports = 1,
		.proto_ports = {{DNS, TLB_PROTO_DNS},
				{MC, TLB_PROTO_MEMCACHED},
				{UDP, TLB_PROTO_UDP}},
		.n_proto_ports = 3,
	};

	return o;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet, IPv4 (no options), UDP sport -> dport, then the payload.
 * Checksums are left 0: the parser does not look at them. */
static size_t
build_udp(uint8_t *f, uint16_t sport, uint16_t dport, const void *payload,
	  size_t plen)
{
	memset(f, 0, 42);
	put16(f + 12, 0x0800);
	f[14] = 0x45;
	put16(f + 16, (uint16_t)(20 + 8 + plen));
	f[14 + 8] = 64;
	f[14 + 9] = 17;
	f[14 + 12] = 10;
	f[14 + 15] = 1;
	f[14 + 16] = 10;
	f[14 + 19] = 2;
	put16(f + 34, sport);
	put16(f + 36, dport);
	put16(f + 38, (uint16_t)(8 + plen));
	memcpy(f + 42, payload, plen);
	return 42 + plen;
}

/* Parses from an exact-size heap copy, so that a read past the end is a
 * heap overflow for the sanitizers. */
static enum tlb_parse_err
parse(const uint8_t *f, size_t len, struct tlb_parsed *p)
{
	struct tlb_parse_opts o = opts();
	uint8_t *copy = malloc(len ? len : 1);
	enum tlb_parse_err e;

	assert_non_null(copy);
	memcpy(copy, f, len);
	e = tlb_parse_frame(copy, len, &o, p);
	free(copy);
	return e;
}

/* A DNS header: id, flags, one question. */
static size_t
dns_msg(uint8_t *m, uint16_t id, bool response)
{
	static const uint8_t q[] = {3, 'w', 'w', 'w', 0, 0, 1, 0, 1};

	memset(m, 0, 12);
	put16(m, id);
	put16(m + 2, response ? 0x8180 : 0x0100);
	put16(m + 4, 1);
	memcpy(m + 12, q, sizeof(q));
	return 12 + sizeof(q);
}

/* A memcached UDP frame header and text. */
static size_t
mc_msg(uint8_t *m, uint16_t id, uint16_t seq, uint16_t total, const char *text)
{
	size_t n = strlen(text);

	put16(m, id);
	put16(m + 2, seq);
	put16(m + 4, total);
	put16(m + 6, 0);
	memcpy(m + 8, text, n);
	return 8 + n;
}

static void
test_names(void **state)
{
	(void)state;
	for (int i = 0; i < TLB_PROTO_N; i++)
		assert_int_equal(tlb_proto_find(tlb_proto_name(i)), i);
	assert_string_equal(tlb_proto_name(TLB_PROTO_TURBOLB), "turbolb");
	assert_string_equal(tlb_proto_name(TLB_PROTO_DNS), "dns");
	assert_string_equal(tlb_proto_name(TLB_PROTO_MEMCACHED), "memcached");
	assert_string_equal(tlb_proto_name(TLB_PROTO_UDP), "udp");
	assert_null(tlb_proto_name(TLB_PROTO_N));
	assert_int_equal(tlb_proto_find("http"), -1);
	assert_int_equal(tlb_proto_completion(TLB_PROTO_TURBOLB),
			 TLB_COMPLETE_ECHO);
	assert_int_equal(tlb_proto_completion(TLB_PROTO_DNS),
			 TLB_COMPLETE_BY_ID);
	assert_int_equal(tlb_proto_completion(TLB_PROTO_MEMCACHED),
			 TLB_COMPLETE_BY_ID);
	assert_int_equal(tlb_proto_completion(TLB_PROTO_UDP),
			 TLB_COMPLETE_EACH);
}

static void
test_dns(void **state)
{
	uint8_t f[FRAME_MAX], m[64];
	struct tlb_parsed p;
	size_t n;

	(void)state;
	n = build_udp(f, CLI_PORT, DNS, m, dns_msg(m, 0xbeef, false));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.proto, TLB_PROTO_DNS);
	assert_int_equal(p.hdr.req_id, 0xbeef);
	assert_int_equal(p.hdr.pkt_cnt, 1);
	assert_int_equal(p.hdr.svc_class, 0);
	assert_int_equal(p.rpc_off, 42);
	assert_int_equal(p.payload_off, 42 + 12);
	assert_int_equal(p.msg_flags, 0);

	n = build_udp(f, DNS, CLI_PORT, m, dns_msg(m, 0xbeef, true));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(p.hdr.req_id, 0xbeef);

	/* the QR bit against the direction */
	n = build_udp(f, CLI_PORT, DNS, m, dns_msg(m, 1, true));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_TYPE);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	n = build_udp(f, DNS, CLI_PORT, m, dns_msg(m, 1, false));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_TYPE);

	/* shorter than the header, down to nothing */
	for (size_t len = 0; len < 12; len++) {
		n = build_udp(f, CLI_PORT, DNS, m, len);
		assert_int_equal(parse(f, n, &p), TLB_PARSE_TRUNC_MSG);
		assert_int_equal(p.cls, TLB_FRAME_PASS);
	}
	/* exactly a header is a query with no question: accepted */
	dns_msg(m, 7, false);
	n = build_udp(f, CLI_PORT, DNS, m, 12);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.payload_off, n);
}

static void
test_memcached_request(void **state)
{
	static const char *const oneway[] = {
		"set k 0 0 1 noreply\r\nx\r\n",
		"delete k noreply\r\n",
		"incr k 1 noreply\n",
	};
	static const char *const answered[] = {
		"get k\r\n",
		"get noreply\r\n", /* a key called noreply */
		"gets a noreply\r\n",
		"set k 0 0 7\r\nnoreply\r\n",
		"set k 0 0 1 noreply", /* no whole line */
		"delete k noreplyx\r\n",
	};
	uint8_t f[FRAME_MAX], m[256];
	struct tlb_parsed p;
	size_t n;

	(void)state;
	n = build_udp(f, CLI_PORT, MC, m, mc_msg(m, 0x1234, 0, 1, "get k\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.proto, TLB_PROTO_MEMCACHED);
	assert_int_equal(p.hdr.req_id, 0x1234);
	assert_int_equal(p.hdr.pkt_idx, 0);
	assert_int_equal(p.hdr.pkt_cnt, 1);
	assert_int_equal(p.payload_off, 42 + 8);
	assert_int_equal(p.hdr.payload_len, 7);

	for (size_t i = 0; i < sizeof(oneway) / sizeof(oneway[0]); i++) {
		n = build_udp(f, CLI_PORT, MC, m,
			      mc_msg(m, 1, 0, 1, oneway[i]));
		assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
		assert_int_equal(p.msg_flags, TLB_MSG_F_ONEWAY);
	}
	for (size_t i = 0; i < sizeof(answered) / sizeof(answered[0]); i++) {
		n = build_udp(f, CLI_PORT, MC, m,
			      mc_msg(m, 1, 0, 1, answered[i]));
		assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
		assert_int_equal(p.msg_flags, 0);
	}

	/* a request is one datagram */
	n = build_udp(f, CLI_PORT, MC, m, mc_msg(m, 1, 0, 2, "get k\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_PKT_COUNT);
	n = build_udp(f, CLI_PORT, MC, m, mc_msg(m, 1, 0, 0, "get k\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_PKT_COUNT);
	n = build_udp(f, CLI_PORT, MC, m, mc_msg(m, 1, 1, 1, "get k\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_PKT_INDEX);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	for (size_t len = 0; len < 8; len++) {
		n = build_udp(f, CLI_PORT, MC, m, len);
		assert_int_equal(parse(f, n, &p), TLB_PARSE_TRUNC_MSG);
	}
}

static void
test_memcached_response(void **state)
{
	uint8_t f[FRAME_MAX], m[256];
	struct tlb_parsed p;
	size_t n;

	(void)state;
	/* datagram 2 of 3 */
	n = build_udp(f, MC, CLI_PORT, m, mc_msg(m, 9, 2, 3, "lue\r\nEND\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(p.hdr.req_id, 9);
	assert_int_equal(p.hdr.pkt_idx, 2);
	assert_int_equal(p.hdr.pkt_cnt, 3);
	/* the header-only datagram of a miss: total 0 */
	n = build_udp(f, MC, CLI_PORT, m, mc_msg(m, 9, 0, 0, ""));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(p.hdr.pkt_cnt, 0);
	/* a sequence number past the total */
	n = build_udp(f, MC, CLI_PORT, m, mc_msg(m, 9, 3, 3, "x"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_PKT_INDEX);
	n = build_udp(f, MC, CLI_PORT, m, 5);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_TRUNC_MSG);
}

static void
test_udp(void **state)
{
	uint8_t f[FRAME_MAX], m[16] = "anything";
	struct tlb_parsed p;
	size_t n;

	(void)state;
	n = build_udp(f, CLI_PORT, UDP, m, 8);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.proto, TLB_PROTO_UDP);
	assert_int_equal(p.hdr.req_id, 0);
	assert_int_equal(p.hdr.pkt_cnt, 1);
	assert_int_equal(p.payload_off, 42);
	n = build_udp(f, UDP, CLI_PORT, m, 0);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	/* a UDP length past the IP payload is still an error */
	put16(f + 38, 9);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_BAD_UDP_LEN);
}

/* The destination decides, whatever the protocols; the turbolb fast
 * paths take no frame of another protocol's port, even one whose payload
 * is a valid turbolb header. */
static void
test_ports_and_fast_paths(void **state)
{
	struct tlb_parse_opts o = opts();
	struct tlb_rpc_hdr h = {.magic = TLB_RPC_MAGIC,
				.version = TLB_RPC_VERSION,
				.type = TLB_MSG_REQUEST,
				.pkt_cnt = 1};
	uint8_t f[FRAME_MAX], m[64];
	struct tlb_req_fast rq;
	struct tlb_resp_fast rs;
	struct tlb_parsed p;
	size_t n;

	(void)state;
	tlb_rpc_hdr_encode(m, &h);
	n = build_udp(f, CLI_PORT, DNS, m, TLB_RPC_HDR_LEN);
	assert_false(tlb_parse_request_fast(f, n, &o, &rq));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.proto, TLB_PROTO_DNS);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	/* the same header from a turbolb port to a dns port: a dns
	 * request, not a turbolb response */
	h.type = TLB_MSG_RESPONSE;
	tlb_rpc_hdr_encode(m, &h);
	m[2] = 0x01; /* keep QR 0 */
	n = build_udp(f, NATIVE, DNS, m, TLB_RPC_HDR_LEN);
	assert_false(tlb_parse_response_fast(f, n, &o, &rs));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.proto, TLB_PROTO_DNS);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	/* and to a port of no protocol: the turbolb response */
	n = build_udp(f, NATIVE, CLI_PORT, m, TLB_RPC_HDR_LEN);
	assert_true(tlb_parse_response_fast(f, n, &o, &rs));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.proto, TLB_PROTO_TURBOLB);
	/* memcached to memcached: a request */
	n = build_udp(f, MC, MC, m, mc_msg(m, 3, 0, 1, "get a\r\n"));
	assert_int_equal(parse(f, n, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	/* a first fragment to a dns port is a fragment error */
	n = build_udp(f, CLI_PORT, DNS, m, dns_msg(m, 1, false));
	put16(f + 20, 0x2000);
	assert_int_equal(parse(f, n, &p), TLB_PARSE_IP_FRAGMENT);
}

/* The work stamp and the response rewrite are turbolb's: a dns frame is
 * left as it is. */
static void
test_no_turbolb_rewrites(void **state)
{
	struct tlb_parse_opts o = opts();
	uint8_t f[FRAME_MAX], g[FRAME_MAX], m[64];
	struct tlb_parsed p;
	size_t n;

	(void)state;
	n = build_udp(f, CLI_PORT, DNS, m, dns_msg(m, 5, false));
	assert_int_equal(tlb_parse_frame(f, n, &o, &p), TLB_PARSE_OK);
	memcpy(g, f, n);
	tlb_rpc_set_work_ns(f, &p, 12345);
	assert_memory_equal(f, g, n);
	assert_int_equal(
		tlb_make_response(f, n, &p, TLB_MSG_RESPONSE, 0, 0, 0, 0), 0);
	assert_memory_equal(f, g, n);
}

/* Every prefix and every single-byte value at every offset of a valid
 * frame of each protocol: an error or a classification, no crash and no
 * read past the end (the copies are exact-size heap blocks). */
static void
test_mutations(void **state)
{
	uint8_t f[FRAME_MAX], m[64], g[FRAME_MAX];
	struct tlb_parsed p;
	size_t lens[4];
	uint8_t frames[4][128];

	(void)state;
	lens[0] = build_udp(frames[0], CLI_PORT, DNS, m, dns_msg(m, 1, false));
	lens[1] = build_udp(frames[1], MC, CLI_PORT, m,
			    mc_msg(m, 1, 1, 2, "VALUE"));
	lens[2] = build_udp(frames[2], CLI_PORT, MC, m,
			    mc_msg(m, 1, 0, 1, "set k 0 0 1 noreply\r\n"));
	lens[3] = build_udp(frames[3], UDP, CLI_PORT, m, 3);
	for (int k = 0; k < 4; k++) {
		memcpy(f, frames[k], lens[k]);
		for (size_t len = 0; len <= lens[k]; len++) {
			enum tlb_parse_err e = parse(f, len, &p);

			assert_true(e < TLB_PARSE_ERR_MAX);
			if (e != TLB_PARSE_OK)
				assert_int_equal(p.cls, TLB_FRAME_PASS);
		}
		for (size_t i = 34; i < lens[k]; i++)
			for (unsigned int v = 0; v < 256; v += 17) {
				memcpy(g, f, lens[k]);
				g[i] = (uint8_t)v;
				assert_true(parse(g, lens[k], &p) <
					    TLB_PARSE_ERR_MAX);
			}
	}
}

/* ---- the service-time estimator ---- */

static uint64_t rng_state = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * One single-threaded FIFO server behind the NIC: requests arrive with
 * exponential gaps at load rho, service times are uniform in [2, 4] us
 * (mean 3 us), and the NIC sees each completion at its next poll (every
 * poll_ns). Feeds the spacing samples into jlq's class average, the way
 * the daemon does, and returns the mean of that average over the last
 * half of n completions; *after50 is the average after the first 50.
 */
static double
simulate(double rho, uint64_t poll_ns, unsigned int n, uint64_t *after50)
{
	struct tlb_policy_params params;
	struct tlb_policy pol;
	uint64_t *arrive = calloc(n, sizeof(*arrive));
	uint64_t *seen = calloc(n, sizeof(*seen));
	uint64_t busy_since = 0, t = 1000, done = 0;
	double sum = 0;
	unsigned int next_arrival = 0;

	assert_non_null(arrive);
	assert_non_null(seen);
	tlb_policy_params_default(&params);
	char err[128];

	assert_int_equal(
		tlb_policy_init(&pol, "jlq", &params, 1, err, sizeof(err)), 0);
	for (unsigned int i = 0; i < n; i++) {
		/* exponential gap of mean 3000 / rho ns */
		double u = ((double)(rnd() >> 11) + 1) / 9007199254740993.0;
		uint64_t service = 2000 + rnd() % 2001;
		uint64_t start;

		t += (uint64_t)(-log(u) * 3000.0 / rho);
		arrive[i] = t;
		start = t > done ? t : done;
		done = start + service;
		seen[i] = (done + poll_ns - 1) / poll_ns * poll_ns;
	}
	for (unsigned int i = 0; i < n; i++) {
		uint64_t now = seen[i];
		uint32_t sample;

		/* the requests the NIC has sent by now and not seen done */
		while (next_arrival < n && arrive[next_arrival] <= now)
			next_arrival++;
		if (tlb_spacing_sample(&busy_since, now,
				       next_arrival - (uint64_t)(i + 1),
				       &sample))
			tlb_policy_observe(&pol, 0, sample);
		if (i == 49)
			*after50 = pol.class_avg_ns[0];
		if (i >= n / 2)
			sum += (double)pol.class_avg_ns[0];
	}
	free(arrive);
	free(seen);
	return sum / (n - n / 2);
}

static void
test_estimator_converges(void **state)
{
	static const double loads[] = {0.5, 0.9, 1.5};
	static const uint64_t polls[] = {1, 500, 2000};

	(void)state;
	for (size_t l = 0; l < sizeof(loads) / sizeof(loads[0]); l++)
		for (size_t q = 0; q < sizeof(polls) / sizeof(polls[0]); q++) {
			uint64_t early = 0;
			double avg =
				simulate(loads[l], polls[q], 20000, &early);

			print_message("load %.1f, poll %4" PRIu64 " ns: "
				      "estimate %.0f ns after 50: %" PRIu64
				      " (mean 3000)\n",
				      loads[l], polls[q], avg, early);
			/* within 5% over the long run, and near after the
			 * first 50 completions */
			assert_true(avg > 2850 && avg < 3150);
			assert_true(early > 2000 && early < 4000);
		}
}

/* A single sample after an idle core: none; a busy one's spacing. */
static void
test_spacing_sample(void **state)
{
	uint64_t busy = 0;
	uint32_t s = 77;

	(void)state;
	assert_false(tlb_spacing_sample(&busy, 1000, 1, &s));
	assert_int_equal(s, 77);
	assert_true(tlb_spacing_sample(&busy, 4000, 0, &s));
	assert_int_equal(s, 3000);
	/* it left the core idle: the next spacing is no service time */
	assert_false(tlb_spacing_sample(&busy, 9000, 2, &s));
	/* two completions in one poll: the second shows 0 */
	assert_true(tlb_spacing_sample(&busy, 9000, 1, &s));
	assert_int_equal(s, 0);
	/* a clock at 0 still counts as busy */
	busy = 0;
	assert_false(tlb_spacing_sample(&busy, 0, 1, &s));
	assert_true(tlb_spacing_sample(&busy, 500, 1, &s));
	assert_int_equal(s, 499);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_memcached_request),
		cmocka_unit_test(test_memcached_response),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_ports_and_fast_paths),
		cmocka_unit_test(test_no_turbolb_rewrites),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_spacing_sample),
		cmocka_unit_test(test_estimator_converges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
