/* SPDX-License-Identifier: BSD-3-Clause
 * Load generator tests, on the part without DPDK: option parsing, the
 * arrival schedule, request tracking and the reports. Time is in ns here
 * (hz = 1e9), so ticks and nanoseconds are the same numbers.
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

#include "lg.h"

#define HZ 1e9

/* Parses a NULL-terminated word list as if it followed "--". */
static int
parse_words(struct lg_opts *o, const char *const *words, FILE *err)
{
	char *argv[64];
	int argc = 0;
	FILE *out = fopen("/dev/null", "w");
	int rc;

	argv[argc++] = (char *)"turbolb-loadgen";
	for (; *words != NULL; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	rc = lg_opts_parse(argc, argv, o, out, err);
	fclose(out);
	return rc;
}

#define PARSE(o, ...)                                                        \
	parse_words((o), (const char *const[]){ __VA_ARGS__, NULL }, errf)

static FILE *errf;

static int
setup_err(void **state)
{
	(void)state;
	errf = fopen("/dev/null", "w");
	return errf == NULL ? -1 : 0;
}

static int
teardown_err(void **state)
{
	(void)state;
	fclose(errf);
	return 0;
}

static void
test_opts_defaults(void **state)
{
	struct lg_opts o;
	const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const uint8_t src[4] = { 10, 0, 0, 1 }, dst[4] = { 10, 0, 0, 2 };

	(void)state;
	assert_int_equal(parse_words(&o, (const char *const[]){ NULL }, errf),
			 0);
	assert_true(o.rate == 10000.0);
	assert_true(o.duration_s == 1.0);
	assert_int_equal(o.requests, 0);
	assert_true(o.warmup_s == 0.0);
	assert_int_equal(o.arrival, LG_ARRIVAL_POISSON);
	assert_int_equal(o.dist.kind, TLB_DIST_FIXED);
	assert_true(o.dist.a == 1000.0);
	assert_string_equal(o.dist_spec, "fixed:1000ns");
	assert_int_equal(o.flows, 64);
	assert_int_equal(o.src_port_base, 10000);
	assert_int_equal(o.dst_port, 9000);
	assert_memory_equal(o.dst_mac, bcast, 6);
	assert_memory_equal(o.src_ip, src, 4);
	assert_memory_equal(o.dst_ip, dst, 4);
	assert_false(o.has_src_mac);
	assert_int_equal(o.size, 0);
	assert_int_equal(o.mtu, 1500);
	assert_int_equal(o.timeout_ms, 1000);
	assert_false(o.json);
	assert_null(o.port);
}

static void
test_opts_all(void **state)
{
	struct lg_opts o;
	const uint8_t mac[6] = { 0x02, 0xab, 0xCD, 0x00, 0x10, 0xff };
	const uint8_t src[4] = { 192, 168, 1, 7 }, dst[4] = { 172, 16, 0, 9 };

	(void)state;
	assert_int_equal(PARSE(&o, "--rate", "20000.5", "--duration", "2.25",
			       "--warmup", "0.5", "--arrival", "fixed",
			       "--dist", "exp:10us", "--flows", "8",
			       "--src-port-base", "20000", "--src-ip",
			       "192.168.1.7", "--dst-ip", "172.16.0.9",
			       "--dst-port", "9001", "--dst-mac",
			       "02:ab:CD:00:10:ff", "--src-mac",
			       "02:ab:cd:00:10:FF", "--size", "3000", "--mtu",
			       "9000", "--timeout-ms", "50", "--max-lag-us",
			       "20", "--class", "7", "--seed", "42", "--json",
			       "--port", "net_memif0", "--link-wait", "0"),
			 0);
	assert_true(o.rate == 20000.5);
	assert_true(o.duration_s == 2.25);
	assert_true(o.warmup_s == 0.5);
	assert_int_equal(o.arrival, LG_ARRIVAL_FIXED);
	assert_int_equal(o.dist.kind, TLB_DIST_EXP);
	assert_true(fabs(tlb_dist_mean(&o.dist) - 10000.0) < 1e-6);
	assert_int_equal(o.flows, 8);
	assert_int_equal(o.src_port_base, 20000);
	assert_memory_equal(o.src_ip, src, 4);
	assert_memory_equal(o.dst_ip, dst, 4);
	assert_int_equal(o.dst_port, 9001);
	assert_memory_equal(o.dst_mac, mac, 6);
	assert_memory_equal(o.src_mac, mac, 6);
	assert_true(o.has_src_mac);
	assert_int_equal(o.size, 3000);
	assert_int_equal(o.mtu, 9000);
	assert_int_equal(o.timeout_ms, 50);
	assert_int_equal(o.max_lag_us, 20);
	assert_int_equal(o.svc_class, 7);
	assert_int_equal(o.seed, 42);
	assert_true(o.json);
	assert_string_equal(o.port, "net_memif0");
	assert_true(o.link_wait_s == 0.0);

	/* --requests replaces the default duration; parsing twice starts
	 * from scratch (getopt reset, defaults again). */
	assert_int_equal(PARSE(&o, "--requests", "1000"), 0);
	assert_int_equal(o.requests, 1000);
	assert_true(o.duration_s == 0.0);
	assert_false(o.json);
	assert_int_equal(o.arrival, LG_ARRIVAL_POISSON);
}

static void
test_opts_errors(void **state)
{
	static const char *const bad[][4] = {
		{ "--rate", "0" },
		{ "--rate", "-5" },
		{ "--rate", "1e400" },
		{ "--rate", "nan" },
		{ "--rate", "10x" },
		{ "--rate", "" },
		{ "--duration", "0" },
		{ "--duration", "1", "--requests", "5" },
		{ "--requests", "0" },
		{ "--requests", "-1" },
		{ "--warmup", "-1" },
		{ "--arrival", "uniform" },
		{ "--dist", "exp" },
		{ "--dist", "nope:1us" },
		{ "--flows", "0" },
		{ "--flows", "65537" },
		{ "--src-port-base", "65500", "--flows", "100" },
		{ "--dst-port", "10010" },
		{ "--dst-port", "0" },
		{ "--dst-port", "65536" },
		{ "--src-ip", "10.0.0" },
		{ "--dst-ip", "::1" },
		{ "--dst-mac", "00:11:22:33:44" },
		{ "--dst-mac", "00:11:22:33:44:55:66" },
		{ "--src-mac", "0:11:22:33:44:55" },
		{ "--size", "-1" },
		{ "--size", "100000" },
		{ "--mtu", "127" },
		{ "--mtu", "9001" },
		{ "--timeout-ms", "0" },
		{ "--class", "65536" },
		{ "--seed", "x" },
		{ "--port", "" },
		{ "--nope" },
		{ "--rate" },
		{ "stray" },
	};
	struct lg_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w[5] = { bad[i][0], bad[i][1], bad[i][2],
				     bad[i][3], NULL };

		if (parse_words(&o, w, errf) != -1)
			fail_msg("accepted: %s %s %s %s", bad[i][0],
				 bad[i][1] ? bad[i][1] : "",
				 bad[i][2] ? bad[i][2] : "",
				 bad[i][3] ? bad[i][3] : "");
	}
	assert_int_equal(PARSE(&o, "--help"), 1);
	assert_int_equal(PARSE(&o, "-h"), 1);
	/* The largest message that fits, and one byte more. */
	assert_int_equal(PARSE(&o, "--size", "91136"), 0);
	assert_int_equal(PARSE(&o, "--size", "91137"), -1);
	/* The destination just past the source range is fine. */
	assert_int_equal(PARSE(&o, "--dst-port", "10064"), 0);
}

static void
test_pkts_per_msg(void **state)
{
	(void)state;
	assert_int_equal(lg_payload_room(1500), 1500 - 20 - 8 - 48);
	assert_int_equal(lg_pkts_per_msg(0, 1500), 1);
	assert_int_equal(lg_pkts_per_msg(1, 1500), 1);
	assert_int_equal(lg_pkts_per_msg(1424, 1500), 1);
	assert_int_equal(lg_pkts_per_msg(1425, 1500), 2);
	assert_int_equal(lg_pkts_per_msg(5000, 1500), 4);
	assert_int_equal(lg_pkts_per_msg(64 * 1424, 1500), 64);
}

static void
test_sched_fixed(void **state)
{
	struct lg_sched s;

	(void)state;
	lg_sched_init(&s, LG_ARRIVAL_FIXED, 3.0, HZ, 1);
	/* From the index, so even a gap that is no whole number of ticks
	 * never drifts. */
	for (uint64_t i = 0; i < 3000000; i++) {
		double t = lg_sched_pop(&s);

		if (t != (double)i * (HZ / 3.0))
			fail_msg("request %" PRIu64 " at %f", i, t);
	}
	assert_true(lg_sched_peek(&s) == 3000000.0 * (HZ / 3.0));
}

static void
test_sched_poisson(void **state)
{
	const uint64_t n = 400000;
	const double rate = 20000.0, gap = HZ / rate;
	struct lg_sched s, s2;
	double prev, sum = 0.0, sum2 = 0.0, t = 0.0;

	(void)state;
	lg_sched_init(&s, LG_ARRIVAL_POISSON, rate, HZ, 7);
	lg_sched_init(&s2, LG_ARRIVAL_POISSON, rate, HZ, 7);
	prev = lg_sched_pop(&s);
	assert_true(prev == 0.0);
	assert_true(lg_sched_pop(&s2) == 0.0);
	for (uint64_t i = 0; i < n; i++) {
		double d;

		t = lg_sched_pop(&s);
		/* Same seed, same schedule. */
		assert_true(t == lg_sched_pop(&s2));
		d = t - prev;
		assert_true(d > 0.0);
		sum += d;
		sum2 += d * d;
		prev = t;
	}
	/* Exponential gaps: mean = sd = 1/rate. With n = 4e5 the relative
	 * standard error of the mean is 0.16%, of the sd about 0.3%. */
	{
		double mean = sum / (double)n;
		double sd = sqrt(sum2 / (double)n - mean * mean);

		assert_true(fabs(mean / gap - 1.0) < 0.01);
		assert_true(fabs(sd / gap - 1.0) < 0.02);
	}
	/* A different seed, a different schedule. */
	lg_sched_init(&s2, LG_ARRIVAL_POISSON, rate, HZ, 8);
	lg_sched_pop(&s2);
	lg_sched_init(&s, LG_ARRIVAL_POISSON, rate, HZ, 7);
	lg_sched_pop(&s);
	assert_true(lg_sched_pop(&s) != lg_sched_pop(&s2));
}

static void
test_track_window(void **state)
{
	uint64_t w;

	(void)state;
	w = lg_track_window(1000.0, 1000);
	assert_true(w >= 2 * 1000 + 4096);
	assert_int_equal(w & (w - 1), 0);
	w = lg_track_window(1e6, 1000);
	assert_true(w >= 2000000);
	assert_int_equal(w & (w - 1), 0);
	/* Bounded, even for absurd products. */
	w = lg_track_window(1e9, 3600000);
	assert_int_equal(w, 1ull << 24);
}

static void
check_sum(const struct lg_track *t, int phase)
{
	const struct lg_phase_counts *p = &t->phase[phase];

	assert_int_equal(p->sent, p->received + p->errors + p->lost);
}

static void
test_track_basic(void **state)
{
	struct lg_track t;
	uint64_t sent;
	bool measured;

	(void)state;
	assert_int_equal(lg_track_init(&t, 3000, 100, 0), -1);
	assert_int_equal(lg_track_init(&t, 4096, 1000, 5), 0);
	assert_int_equal(lg_track_issue(&t, 10, false), 5);
	assert_int_equal(lg_track_issue(&t, 20, true), 6);
	assert_int_equal(lg_track_issue(&t, 30, true), 7);
	assert_int_equal(t.outstanding, 3);
	assert_int_equal(t.phase[LG_PHASE_WARMUP].sent, 1);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].sent, 2);

	assert_int_equal(lg_track_complete(&t, 6, false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(sent, 20);
	assert_true(measured);
	/* Again: a duplicate. */
	assert_int_equal(lg_track_complete(&t, 6, false, &sent, &measured),
			 LG_MATCH_DUP);
	assert_int_equal(lg_track_complete(&t, 5, false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(sent, 10);
	assert_false(measured);
	/* Never issued, or before this run. */
	assert_int_equal(lg_track_complete(&t, 8, false, &sent, &measured),
			 LG_MATCH_UNKNOWN);
	assert_int_equal(lg_track_complete(&t, 4, false, &sent, &measured),
			 LG_MATCH_UNKNOWN);
	assert_int_equal(lg_track_complete(&t, UINT64_MAX, false, &sent,
					   &measured),
			 LG_MATCH_UNKNOWN);
	/* An error response resolves it too, and a later OK is a dup. */
	assert_int_equal(lg_track_complete(&t, 7, true, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_track_complete(&t, 7, false, &sent, &measured),
			 LG_MATCH_DUP);
	assert_int_equal(t.outstanding, 0);
	assert_int_equal(t.tail, t.next_id);
	assert_int_equal(t.duplicates, 2);
	assert_int_equal(t.unknown, 3);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].received, 1);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].errors, 1);
	assert_int_equal(t.phase[LG_PHASE_WARMUP].received, 1);
	check_sum(&t, LG_PHASE_WARMUP);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
}

static void
test_track_timeout(void **state)
{
	struct lg_track t;
	uint64_t sent;
	bool measured;

	(void)state;
	assert_int_equal(lg_track_init(&t, 4096, 100, 0), 0);
	for (uint64_t i = 0; i < 10; i++)
		lg_track_issue(&t, 1000 + i * 10, true); /* 1000 .. 1090 */
	/* A clock read before the last send must not expire anything. */
	lg_track_expire(&t, 999);
	assert_int_equal(t.outstanding, 10);
	/* Exactly the timeout is still in time. */
	lg_track_expire(&t, 1100);
	assert_int_equal(t.outstanding, 10);
	lg_track_expire(&t, 1101);
	assert_int_equal(t.outstanding, 9);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 1);
	/* 3 answered in time out of order, so the scan steps over them. */
	assert_int_equal(lg_track_complete(&t, 3, false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_track_complete(&t, 2, false, &sent, &measured),
			 LG_MATCH_OK);
	lg_track_expire(&t, 1145); /* 1 (1010), 4 (1040) lost */
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 3);
	assert_int_equal(t.tail, 5);
	/* Late answer to a lost one; then once more: a duplicate. */
	assert_int_equal(lg_track_complete(&t, 0, false, &sent, &measured),
			 LG_MATCH_LATE);
	assert_int_equal(lg_track_complete(&t, 0, false, &sent, &measured),
			 LG_MATCH_DUP);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].late, 1);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 3);
	/* The end: everything still out is lost. */
	lg_track_finish(&t);
	assert_int_equal(t.outstanding, 0);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 8);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].received, 2);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
}

static void
test_track_evict(void **state)
{
	const uint64_t w = 4096;
	struct lg_track t;
	uint64_t sent;
	bool measured;

	(void)state;
	/* A timeout nobody reaches: the window runs out first. */
	assert_int_equal(lg_track_init(&t, w, UINT64_MAX / 2, 0), 0);
	for (uint64_t i = 0; i < w + 10; i++)
		lg_track_issue(&t, i, true);
	assert_int_equal(t.evicted, 10);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 10);
	assert_int_equal(t.outstanding, w);
	/* Id 3's slot now holds id w + 3. */
	assert_int_equal(lg_track_complete(&t, 3, false, &sent, &measured),
			 LG_MATCH_UNKNOWN);
	assert_int_equal(lg_track_complete(&t, w + 3, false, &sent,
					   &measured),
			 LG_MATCH_OK);
	assert_int_equal(sent, w + 3);
	lg_track_finish(&t);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
}

/* Random responses against a reference model, interleaved in time: one
 * id issued every 10 ns, each answered 0, 1 or 2 times 0..8000 ns later,
 * against a 5000 ns timeout. Time advances in 10 ns steps; in each step
 * the tool's order is kept: send, expire, then the step's responses. */
static void
test_track_random(void **state)
{
	const uint64_t n = 200000, timeout = 5000, steps = n + 800;
	struct lg_track t;
	struct tlb_rng rng;
	uint64_t exp_ok = 0, exp_dup = 0, exp_lost = 0, exp_late = 0;
	uint32_t *start = calloc(steps + 1, sizeof(*start));
	uint64_t *resp = malloc(2 * n * sizeof(*resp));
	uint32_t *step_of = malloc(2 * n * sizeof(*step_of));
	uint32_t *fill;
	uint64_t nr = 0;

	(void)state;
	assert_non_null(start);
	assert_non_null(resp);
	assert_non_null(step_of);
	tlb_rng_seed(&rng, 99);
	/* Draw the responses and the expected outcome of each id. */
	for (uint64_t i = 0; i < n; i++) {
		unsigned int k = tlb_rng_below(&rng, 10);
		unsigned int copies = k == 0 ? 0 : k == 1 ? 2 : 1;
		uint64_t first = UINT64_MAX;

		for (unsigned int c = 0; c < copies; c++) {
			uint64_t d = tlb_rng_below(&rng, 8000) / 10;

			step_of[nr] = (uint32_t)(i + d);
			resp[nr++] = i;
			if (d < first)
				first = d;
		}
		if (copies == 0) {
			exp_lost++;
		} else if (first * 10 <= timeout) {
			exp_ok++;
		} else {
			exp_lost++;
			exp_late++;
		}
		exp_dup += copies == 2;
	}
	/* Bucket the responses by step (counting sort). */
	for (uint64_t j = 0; j < nr; j++)
		start[step_of[j] + 1]++;
	for (uint64_t k = 0; k < steps; k++)
		start[k + 1] += start[k];
	fill = calloc(steps, sizeof(*fill));
	assert_non_null(fill);
	{
		uint64_t *sorted = malloc(nr * sizeof(*sorted));

		assert_non_null(sorted);
		for (uint64_t j = 0; j < nr; j++)
			sorted[start[step_of[j]] + fill[step_of[j]]++] =
				resp[j];
		memcpy(resp, sorted, nr * sizeof(*resp));
		free(sorted);
	}

	assert_int_equal(lg_track_init(&t, lg_track_window(1e8, 1), timeout,
				       0),
			 0);
	for (uint64_t k = 0; k < steps; k++) {
		uint64_t now = k * 10;

		if (k < n)
			assert_int_equal(lg_track_issue(&t, now, true), k);
		lg_track_expire(&t, now);
		for (uint32_t j = start[k]; j < start[k + 1]; j++) {
			uint64_t sent;
			bool measured;

			if (lg_track_complete(&t, resp[j], false, &sent,
					      &measured) == LG_MATCH_OK) {
				assert_int_equal(sent, resp[j] * 10);
				assert_true(now - sent <= timeout);
			}
		}
	}
	lg_track_finish(&t);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].sent, n);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].received, exp_ok);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, exp_lost);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].late, exp_late);
	assert_int_equal(t.duplicates, exp_dup);
	assert_int_equal(t.unknown, 0);
	assert_int_equal(t.evicted, 0);
	assert_int_equal(t.outstanding, 0);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
	free(start);
	free(resp);
	free(step_of);
	free(fill);
}

/* Fills a result with recognisable numbers. */
static void
sample_result(struct lg_result *r, struct tlb_hist *h, uint64_t *cores)
{
	memset(r, 0, sizeof(*r));
	tlb_hist_init(h);
	for (uint64_t v = 1; v <= 1000; v++)
		tlb_hist_record(h, v * 1000);
	cores[0] = 400;
	cores[1] = 0;
	cores[2] = 600;
	r->target_rps = 20000;
	r->achieved_rps = 19999.5;
	r->received_rps = 19990;
	r->measured_s = 2.0;
	r->measured = (struct lg_phase_counts){ 1001, 1000, 0, 1, 0 };
	r->warmup = (struct lg_phase_counts){ 5, 5, 0, 0, 0 };
	r->duplicates = 2;
	r->unknown = 3;
	r->max_lag_ns = 1234;
	r->behind = true;
	r->hist = h;
	r->per_core = cores;
	r->n_cores = 3;
}

/* The report fn writes, as a NUL-terminated string in malloc'd *buf. */
static void
capture(void (*fn)(FILE *, const struct lg_opts *, const struct lg_result *),
	const struct lg_opts *o, const struct lg_result *r, char **buf)
{
	size_t len = 0;
	FILE *f;

	*buf = NULL;
	f = open_memstream(buf, &len);
	assert_non_null(f);
	fn(f, o, r);
	fclose(f);
	assert_non_null(*buf);
}

static void
test_report_json(void **state)
{
	static const char *const keys[] = {
		"\"target_rps\":20000.000,", "\"achieved_rps\":19999.500,",
		"\"sent\":1001,", "\"received\":1000,", "\"lost\":1,",
		"\"duplicates\":2,", "\"unknown\":3,", "\"p50_ns\":",
		"\"p90_ns\":", "\"p99_ns\":", "\"p999_ns\":",
		"\"max_ns\":1000000,", "\"mean_ns\":500500.0,",
		"\"behind\":true,", "\"max_lag_ns\":1234,",
		"\"per_core\":[400,0,600]", "\"dist\":\"fixed:1000ns\"",
		"\"warmup\":{\"sent\":5,",
	};
	struct lg_opts o;
	struct lg_result r;
	struct tlb_hist *h = malloc(sizeof(*h));
	uint64_t cores[3];
	char *s;
	int depth = 0;

	(void)state;
	assert_non_null(h);
	lg_opts_default(&o);
	sample_result(&r, h, cores);
	capture(lg_report_json, &o, &r, &s);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strstr(s, keys[i]) == NULL)
			fail_msg("no %s in %s", keys[i], s);
	/* One object on one line, brackets balanced. */
	assert_true(s[0] == '{');
	assert_true(strchr(s, '\n') == s + strlen(s) - 1);
	for (const char *p = s; *p != '\0'; p++) {
		depth += *p == '{' || *p == '[';
		depth -= *p == '}' || *p == ']';
		assert_true(depth >= 0);
	}
	assert_int_equal(depth, 0);
	/* p99 of 1..1000 us is 990 us, within the histogram's error. */
	{
		const char *p = strstr(s, "\"p99_ns\":");
		double v = strtod(p + 9, NULL);

		assert_true(fabs(v / 990000.0 - 1.0) < 0.008);
	}
	free(s);

	/* An empty run still prints numbers, not NaN. */
	tlb_hist_init(h);
	memset(&r, 0, sizeof(r));
	r.hist = h;
	r.achieved_rps = NAN;
	capture(lg_report_json, &o, &r, &s);
	assert_null(strstr(s, "nan"));
	assert_non_null(strstr(s, "\"per_core\":[]"));
	assert_non_null(strstr(s, "\"p50_ns\":0,"));
	free(s);
	free(h);
}

static void
test_report_human(void **state)
{
	struct lg_opts o;
	struct lg_result r;
	struct tlb_hist *h = malloc(sizeof(*h));
	uint64_t cores[3];
	char *s;

	(void)state;
	assert_non_null(h);
	lg_opts_default(&o);
	sample_result(&r, h, cores);
	capture(lg_report_human, &o, &r, &s);
	assert_non_null(strstr(s, "achieved 19999.5 rps"));
	assert_non_null(strstr(s, "sent 1001, received 1000"));
	assert_non_null(strstr(s, "lost 1"));
	assert_non_null(strstr(s, "p50 "));
	assert_non_null(strstr(s, "p99.9 "));
	assert_non_null(strstr(s, "max 1000.0 us"));
	assert_non_null(strstr(s, "mean 500.5 us"));
	assert_non_null(strstr(s, "BEHIND"));
	assert_non_null(strstr(s, "per core: 0:400 1:0 2:600"));
	free(s);
	free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_defaults),
		cmocka_unit_test(test_opts_all),
		cmocka_unit_test(test_opts_errors),
		cmocka_unit_test(test_pkts_per_msg),
		cmocka_unit_test(test_sched_fixed),
		cmocka_unit_test(test_sched_poisson),
		cmocka_unit_test(test_track_window),
		cmocka_unit_test(test_track_basic),
		cmocka_unit_test(test_track_timeout),
		cmocka_unit_test(test_track_evict),
		cmocka_unit_test(test_track_random),
		cmocka_unit_test(test_report_json),
		cmocka_unit_test(test_report_human),
	};

	return cmocka_run_group_tests(tests, setup_err, teardown_err);
}
