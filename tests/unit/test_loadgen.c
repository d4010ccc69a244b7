/* SPDX-License-Identifier: BSD-3-Clause
 * Load generator tests, on the part without DPDK: option parsing, rate
 * lists, the arrival schedule, request tracking and the closed-loop
 * window, the SLO search against a latency model with a known answer, and
 * the reports. Time is in ns here (hz = 1e9), so ticks and nanoseconds are
 * the same numbers.
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

#define PARSE(o, ...)                                                          \
	parse_words((o), (const char *const[]){__VA_ARGS__, NULL}, errf)

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
	const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};

	(void)state;
	assert_int_equal(parse_words(&o, (const char *const[]){NULL}, errf), 0);
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
	/* One point at --rate; no search, no files, no label. */
	assert_int_equal(o.n_rates, 1);
	assert_true(o.rates[0] == 10000.0);
	assert_int_equal(o.window, 0);
	assert_int_equal(o.src_ips, 1);
	assert_true(o.slo_multiple == 0.0);
	assert_int_equal(o.slo_iterations, 8);
	assert_true(o.settle_s == 1.0);
	assert_string_equal(o.label, "");
	assert_null(o.csv_path);
	assert_null(o.slo_csv_path);
}

static void
test_opts_all(void **state)
{
	struct lg_opts o;
	const uint8_t mac[6] = {0x02, 0xab, 0xCD, 0x00, 0x10, 0xff};
	const uint8_t src[4] = {192, 168, 1, 7}, dst[4] = {172, 16, 0, 9};

	(void)state;
	assert_int_equal(
		PARSE(&o, "--rate", "20000.5", "--duration", "2.25", "--warmup",
		      "0.5", "--arrival", "fixed", "--dist", "exp:10us",
		      "--flows", "8", "--src-port-base", "20000", "--src-ip",
		      "192.168.1.7", "--dst-ip", "172.16.0.9", "--dst-port",
		      "9001", "--dst-mac", "02:ab:CD:00:10:ff", "--src-mac",
		      "02:ab:cd:00:10:FF", "--size", "3000", "--mtu", "9000",
		      "--timeout-ms", "50", "--max-lag-us", "20", "--class",
		      "7", "--seed", "42", "--json", "--port", "net_memif0",
		      "--link-wait", "0"),
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
	static const char *const bad[][7] = {
		{"--rate", "0"},
		{"--rate", "-5"},
		{"--rate", "1e400"},
		{"--rate", "nan"},
		{"--rate", "10x"},
		{"--rate", ""},
		{"--duration", "0"},
		{"--duration", "1", "--requests", "5"},
		{"--requests", "0"},
		{"--requests", "-1"},
		{"--warmup", "-1"},
		{"--arrival", "uniform"},
		{"--dist", "exp"},
		{"--dist", "nope:1us"},
		{"--flows", "0"},
		{"--flows", "65537"},
		{"--src-port-base", "65500", "--flows", "100"},
		{"--dst-port", "10010"},
		{"--dst-port", "0"},
		{"--dst-port", "65536"},
		{"--src-ip", "10.0.0"},
		{"--dst-ip", "::1"},
		{"--dst-mac", "00:11:22:33:44"},
		{"--dst-mac", "00:11:22:33:44:55:66"},
		{"--src-mac", "0:11:22:33:44:55"},
		{"--size", "-1"},
		{"--size", "100000"},
		{"--mtu", "127"},
		{"--mtu", "9001"},
		{"--timeout-ms", "0"},
		{"--class", "65536"},
		{"--seed", "x"},
		{"--port", ""},
		{"--nope"},
		{"--rate"},
		{"stray"},
		/* Flows, closed loop. */
		{"--src-ips", "0"},
		{"--src-ips", "65537"},
		{"--src-ip", "255.255.255.250", "--src-ips", "7"},
		{"--closed-loop", "0"},
		{"--closed-loop", "1048577"},
		{"--closed-loop", "4", "--rate", "100"},
		{"--closed-loop", "4", "--arrival", "fixed"},
		{"--arrival", "poisson", "--closed-loop", "4"},
		{"--closed-loop", "4", "--rates", "1,2"},
		{"--closed-loop", "4", "--slo-multiple", "10", "--sweep",
		 "1:2"},
		/* Sweeps. */
		{"--rates", ""},
		{"--rates", "1000,,2000"},
		{"--rates", "1000,0"},
		{"--rates", "1000", "--sweep", "1:3:1"},
		{"--rate", "5", "--rates", "1000"},
		{"--rate", "5", "--sweep", "1:3:1"},
		{"--sweep", "1000:2000"},
		{"--sweep", "3000:1000:100"},
		{"--sweep", "1:1000000:1"},
		{"--settle", "-1"},
		/* The SLO search. */
		{"--slo-multiple", "10"},
		{"--slo-multiple", "10", "--rate-min", "1000"},
		{"--slo-multiple", "10", "--rates", "1,2"},
		{"--slo-multiple", "10", "--rate", "1000", "--sweep", "1:2"},
		{"--slo-multiple", "10", "--rate-min", "5000", "--rate-max",
		 "1000"},
		{"--slo-multiple", "10", "--sweep", "1000:1000"},
		{"--slo-multiple", "10", "--sweep", "1:2", "--rate-max", "3"},
		{"--slo-multiple", "0", "--sweep", "1:2"},
		{"--slo-multiple", "10", "--sweep", "1:2", "--dist", "fixed:0"},
		{"--rate-min", "1000"},
		{"--slo-iterations", "3"},
		{"--slo-csv", "x.csv"},
		{"--slo-multiple", "10", "--sweep", "1:2", "--slo-iterations",
		 "65"},
		/* Output. */
		{"--label", "a,b"},
		{"--label", "a\"b"},
		{"--label", "a\tb"},
		{"--label", "0123456789012345678901234567890123456789"
			    "012345678901234567890123"},
		{"--csv", ""},
	};
	struct lg_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w[8];

		for (size_t k = 0; k < 7; k++)
			w[k] = bad[i][k];
		w[7] = NULL;
		if (parse_words(&o, w, errf) != -1)
			fail_msg("accepted: %s %s %s %s %s %s", bad[i][0],
				 bad[i][1] ? bad[i][1] : "",
				 bad[i][2] ? bad[i][2] : "",
				 bad[i][3] ? bad[i][3] : "",
				 bad[i][4] ? bad[i][4] : "",
				 bad[i][5] ? bad[i][5] : "");
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
test_opts_sweep(void **state)
{
	struct lg_opts o;
	const uint8_t src[4] = {10, 0, 0, 250};

	(void)state;
	assert_int_equal(PARSE(&o, "--rates", "5000,10000,20000.5", "--label",
			       "jbsq:2", "--csv", "out.csv", "--settle",
			       "0.25"),
			 0);
	assert_int_equal(o.n_rates, 3);
	assert_true(o.rates[0] == 5000.0);
	assert_true(o.rates[1] == 10000.0);
	assert_true(o.rates[2] == 20000.5);
	assert_string_equal(o.label, "jbsq:2");
	assert_string_equal(o.csv_path, "out.csv");
	assert_true(o.settle_s == 0.25);

	assert_int_equal(PARSE(&o, "--sweep", "1000:3000:1000"), 0);
	assert_int_equal(o.n_rates, 3);
	assert_true(o.rates[0] == 1000.0 && o.rates[2] == 3000.0);

	/* The SLO search: bounds from --sweep (its step unused) or from
	 * --rate-min/--rate-max; no fixed points. */
	assert_int_equal(PARSE(&o, "--slo-multiple", "10", "--sweep",
			       "1000:50000", "--dist", "exp:2us"),
			 0);
	assert_true(o.rate_min == 1000.0 && o.rate_max == 50000.0);
	assert_int_equal(o.n_rates, 0);
	assert_true(fabs(lg_slo_ns(&o) - 20000.0) < 1e-6);
	assert_int_equal(PARSE(&o, "--slo-multiple", "30", "--sweep",
			       "1000:50000:1000", "--slo-iterations", "3",
			       "--slo-csv", "slo.csv"),
			 0);
	assert_int_equal(o.slo_iterations, 3);
	assert_string_equal(o.slo_csv_path, "slo.csv");
	assert_true(fabs(lg_slo_ns(&o) - 30000.0) < 1e-6);
	assert_int_equal(PARSE(&o, "--slo-multiple", "10", "--rate-min", "200",
			       "--rate-max", "900"),
			 0);
	assert_true(o.rate_min == 200.0 && o.rate_max == 900.0);

	/* Closed loop: one point, no offered rate. */
	assert_int_equal(PARSE(&o, "--closed-loop", "16", "--requests", "50"),
			 0);
	assert_int_equal(o.arrival, LG_ARRIVAL_CLOSED);
	assert_int_equal(o.window, 16);
	assert_int_equal(o.n_rates, 1);
	assert_true(o.rates[0] == 0.0);

	/* Source addresses up to the very last one. */
	assert_int_equal(PARSE(&o, "--src-ip", "10.0.0.250", "--src-ips", "6"),
			 0);
	assert_int_equal(o.src_ips, 6);
	assert_memory_equal(o.src_ip, src, 4);
	assert_int_equal(
		PARSE(&o, "--src-ip", "255.255.255.250", "--src-ips", "6"), 0);
}

static void
test_parse_rates(void **state)
{
	static const char *const bad[] = {
		"",   ",",   "1000,", ",1000", "1000,,2000", "0",   "-5",
		"+5", "abc", "1000x", "1e10",  "nan",        "inf", "1000;2000",
	};
	double r[4];
	uint32_t n;
	char err[128];

	(void)state;
	assert_int_equal(
		lg_parse_rates("5000,10000,20000", r, 4, &n, err, sizeof(err)),
		0);
	assert_int_equal(n, 3);
	assert_true(r[0] == 5000.0 && r[1] == 10000.0 && r[2] == 20000.0);
	assert_int_equal(lg_parse_rates("0.5", r, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_true(r[0] == 0.5);
	/* Kept in the given order, repeats included. */
	assert_int_equal(lg_parse_rates("3,1,3,2", r, 4, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 4);
	assert_true(r[0] == 3.0 && r[1] == 1.0 && r[2] == 3.0 && r[3] == 2.0);
	assert_int_equal(
		lg_parse_rates("1,2,3,4,5", r, 4, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 4"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (lg_parse_rates(bad[i], r, 4, &n, err, sizeof(err)) != -1)
			fail_msg("accepted rate list '%s'", bad[i]);
}

static void
test_parse_sweep(void **state)
{
	static const char *const bad[] = {
		"",         "1000",       "1000:",       ":1000:10",
		"1000::10", "1000:2000:", "1000:2000:0", "2000:1000:10",
		"a:b:c",    "1:2:3:4",    "0:10:1",      "1000:2000:10x",
	};
	double lo, hi, step, r[8];
	uint32_t n;
	char err[128];

	(void)state;
	assert_int_equal(lg_parse_sweep("1000:3000:1000", true, &lo, &hi, &step,
					err, sizeof(err)),
			 0);
	assert_true(lo == 1000.0 && hi == 3000.0 && step == 1000.0);
	assert_int_equal(lg_sweep_expand(lo, hi, step, r, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_true(r[0] == 1000.0 && r[1] == 2000.0 && r[2] == 3000.0);
	/* HI not on a step: the last point stays below it. */
	assert_int_equal(lg_sweep_expand(1000, 3500, 1000, r, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_true(r[2] == 3000.0);
	/* Steps that are no exact binary fraction still reach HI. */
	assert_int_equal(lg_sweep_expand(0.1, 0.7, 0.1, r, 8, &n), 0);
	assert_int_equal(n, 7);
	assert_true(fabs(r[6] - 0.7) < 1e-12);
	assert_int_equal(lg_sweep_expand(5, 5, 1, r, 8, &n), 0);
	assert_int_equal(n, 1);
	assert_true(r[0] == 5.0);
	/* Too many points, or no step. */
	assert_int_equal(lg_sweep_expand(1, 9, 1, r, 8, &n), -1);
	assert_int_equal(lg_sweep_expand(1, 8, 1, r, 8, &n), 0);
	assert_int_equal(n, 8);
	assert_int_equal(lg_sweep_expand(1, 8, 0, r, 8, &n), -1);

	/* LO:HI alone only where the step is not needed. */
	assert_int_equal(lg_parse_sweep("1000:3000", true, &lo, &hi, &step, err,
					sizeof(err)),
			 -1);
	assert_int_equal(lg_parse_sweep("1000:3000", false, &lo, &hi, &step,
					err, sizeof(err)),
			 0);
	assert_true(lo == 1000.0 && hi == 3000.0 && step == 0.0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		for (int need = 0; need < 2; need++)
			if (lg_parse_sweep(bad[i], need, &lo, &hi, &step, err,
					   sizeof(err)) != -1)
				fail_msg("accepted sweep '%s'", bad[i]);
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
	assert_int_equal(
		lg_track_complete(&t, UINT64_MAX, false, &sent, &measured),
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

/* The link goes down with requests in flight: each is written off (lost,
 * and counted written_off) at once, whatever its age; an answer that still
 * comes is late; requests issued after the loss are tracked as usual. */
static void
test_track_write_off(void **state)
{
	struct lg_track t;
	uint64_t sent;
	bool measured;

	(void)state;
	assert_int_equal(lg_track_init(&t, 4096, 100, 0), 0);
	lg_track_issue(&t, 10, false); /* 0: warm-up */
	for (uint64_t i = 1; i < 6; i++)
		lg_track_issue(&t, 10 + i, true); /* 1 .. 5 */
	assert_int_equal(lg_track_complete(&t, 2, false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_track_complete(&t, 4, true, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_track_write_off(&t), 4); /* 0, 1, 3, 5 */
	assert_int_equal(t.outstanding, 0);
	assert_int_equal(t.phase[LG_PHASE_WARMUP].lost, 1);
	assert_int_equal(t.phase[LG_PHASE_WARMUP].written_off, 1);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 3);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].written_off, 3);
	assert_int_equal(lg_track_write_off(&t), 0);
	/* A response from the far side of the outage: late, once. */
	assert_int_equal(lg_track_complete(&t, 3, false, &sent, &measured),
			 LG_MATCH_LATE);
	assert_int_equal(lg_track_complete(&t, 3, false, &sent, &measured),
			 LG_MATCH_DUP);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].late, 1);
	/* After the loss: a timeout is lost, not written off. */
	lg_track_issue(&t, 1000, true); /* 6 */
	lg_track_issue(&t, 1001, true); /* 7 */
	lg_track_expire(&t, 1101);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 4);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].written_off, 3);
	assert_int_equal(lg_track_complete(&t, 7, false, &sent, &measured),
			 LG_MATCH_OK);
	lg_track_finish(&t);
	check_sum(&t, LG_PHASE_MEASURED);
	check_sum(&t, LG_PHASE_WARMUP);
	lg_track_fini(&t);
}

/* The link watch of a memif port (ticks: check every 10, a started port
 * may stay down 100). */
static void
test_link_reconnect(void **state)
{
	struct lg_link l;

	(void)state;
	lg_link_init(&l, true, 10, 100, 0);
	assert_false(lg_link_up(&l));
	assert_false(lg_link_due(&l, 9));
	assert_true(lg_link_due(&l, 10));
	/* Start-up: the handshake did not complete in time: restart. */
	assert_int_equal(lg_link_check(&l, 10, false), LG_LINK_NONE);
	assert_int_equal(lg_link_check(&l, 99, false), LG_LINK_NONE);
	assert_int_equal(lg_link_check(&l, 100, false), LG_LINK_RESTART);
	lg_link_started(&l, 100, true);
	assert_int_equal(l.restarts, 1);
	assert_int_equal(lg_link_check(&l, 110, true), LG_LINK_CAME_UP);
	assert_true(lg_link_up(&l));
	assert_int_equal(lg_link_check(&l, 120, true), LG_LINK_NONE);
	assert_int_equal(lg_link_down_for(&l, 120), 0);
	/* The peer leaves: stop polling; the port is restarted at the next
	 * check, not the one that saw the loss. */
	assert_int_equal(lg_link_check(&l, 130, false), LG_LINK_WENT_DOWN);
	assert_false(lg_link_up(&l));
	assert_int_equal(l.downs, 1);
	assert_int_equal(l.next_check, 140);
	assert_int_equal(lg_link_check(&l, 140, false), LG_LINK_RESTART);
	/* No peer to connect to: started again at every check. */
	lg_link_started(&l, 140, false);
	assert_int_equal(lg_link_check(&l, 150, false), LG_LINK_RESTART);
	lg_link_started(&l, 150, false);
	assert_int_equal(l.start_failures, 2);
	assert_int_equal(lg_link_check(&l, 160, false), LG_LINK_RESTART);
	lg_link_started(&l, 160, true);
	assert_int_equal(l.restarts, 2);
	/* Started, waiting for the handshake. */
	assert_int_equal(lg_link_check(&l, 170, false), LG_LINK_NONE);
	assert_int_equal(lg_link_down_for(&l, 170), 40);
	assert_int_equal(lg_link_check(&l, 180, true), LG_LINK_CAME_UP);
	assert_int_equal(l.downs, 1);
	assert_int_equal(lg_link_down_for(&l, 180), 0);
}

/* A port that is not restarted (a NIC): the watch only waits, and a link
 * that comes back by itself is polled again. */
static void
test_link_wait_only(void **state)
{
	struct lg_link l;

	(void)state;
	lg_link_init(&l, false, 10, 100, 0);
	assert_int_equal(lg_link_check(&l, 200, false), LG_LINK_NONE);
	assert_int_equal(lg_link_check(&l, 210, true), LG_LINK_CAME_UP);
	assert_int_equal(lg_link_check(&l, 20, false), LG_LINK_WENT_DOWN);
	for (uint64_t now = 30; now < 1000; now += 10)
		assert_int_equal(lg_link_check(&l, now, false), LG_LINK_NONE);
	assert_int_equal(lg_link_check(&l, 1000, true), LG_LINK_CAME_UP);
	assert_int_equal(l.restarts, 0);
	assert_int_equal(l.downs, 1);
	/* Down and up again between two checks: nothing to do. */
	lg_link_init(&l, true, 10, 100, 0);
	assert_int_equal(lg_link_check(&l, 10, true), LG_LINK_CAME_UP);
	assert_int_equal(lg_link_check(&l, 20, false), LG_LINK_WENT_DOWN);
	assert_int_equal(lg_link_check(&l, 30, true), LG_LINK_CAME_UP);
	assert_int_equal(l.restarts, 0);
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
	assert_int_equal(lg_track_complete(&t, w + 3, false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(sent, w + 3);
	lg_track_finish(&t);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
}

static void
test_track_window_n(void **state)
{
	uint64_t w;

	(void)state;
	w = lg_track_window_n(1);
	assert_int_equal(w, 8192);
	w = lg_track_window_n(LG_MAX_WINDOW);
	assert_true(w >= 2ull * LG_MAX_WINDOW);
	assert_int_equal(w & (w - 1), 0);
}

/* The closed loop keeps the window full: each response or timeout makes
 * room for exactly one more request, a late answer or a duplicate for
 * none. */
static void
test_closed_window(void **state)
{
	const uint32_t win = 4;
	struct lg_track t;
	uint64_t sent, now = 0, ids[8];
	bool measured;

	(void)state;
	assert_int_equal(lg_track_init(&t, lg_track_window_n(win), 100, 0), 0);
	assert_int_equal(lg_closed_room(&t, win), win);
	for (int i = 0; i < 4; i++)
		ids[i] = lg_track_issue(&t, now++, true);
	assert_int_equal(lg_closed_room(&t, win), 0);
	/* A response: one place. */
	assert_int_equal(lg_track_complete(&t, ids[1], false, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_closed_room(&t, win), 1);
	ids[4] = lg_track_issue(&t, now++, true);
	assert_int_equal(lg_closed_room(&t, win), 0);
	/* Its duplicate: nothing. */
	assert_int_equal(lg_track_complete(&t, ids[1], false, &sent, &measured),
			 LG_MATCH_DUP);
	assert_int_equal(lg_closed_room(&t, win), 0);
	/* An error response resolves a request as well. */
	assert_int_equal(lg_track_complete(&t, ids[2], true, &sent, &measured),
			 LG_MATCH_OK);
	assert_int_equal(lg_closed_room(&t, win), 1);
	ids[5] = lg_track_issue(&t, 50, true);
	/* A timeout: ids 0, 3 (sent at 0, 3) expire at 104; 4 (at 4) not. */
	lg_track_expire(&t, 104);
	assert_int_equal(t.phase[LG_PHASE_MEASURED].lost, 2);
	assert_int_equal(lg_closed_room(&t, win), 2);
	assert_int_equal(lg_track_unanswered(&t), 2);
	/* The late answer to 0 frees nothing more: its place went at the
	 * timeout. */
	assert_int_equal(lg_track_complete(&t, ids[0], false, &sent, &measured),
			 LG_MATCH_LATE);
	assert_int_equal(lg_closed_room(&t, win), 2);
	assert_int_equal(lg_track_unanswered(&t), 1);
	ids[6] = lg_track_issue(&t, 105, true);
	ids[7] = lg_track_issue(&t, 105, true);
	assert_int_equal(lg_closed_room(&t, win), 0);
	assert_int_equal(t.outstanding, win);
	/* Never above the window, whatever the bookkeeping says. */
	assert_int_equal(lg_closed_room(&t, 2), 0);
	lg_track_finish(&t);
	assert_int_equal(lg_closed_room(&t, win), win);
	check_sum(&t, LG_PHASE_MEASURED);
	lg_track_fini(&t);
}

/*
 * SLO search against an M/M/1-like model with a known answer: p99(rate) =
 * S / (1 - rate / C) below the capacity C, everything lost from there on.
 * With SLO = X * S the highest passing rate is C (1 - 1/X).
 */
struct model {
	double s_ns, cap;  /* service time, capacity */
	double achieved;   /* achieved / offered */
	double lost_above; /* from this rate on some are lost (0: never) */
	uint32_t abort_at; /* 1-based call that aborts (0: never) */
	double noise;      /* relative random noise on p99 */
	struct tlb_rng rng;
	uint32_t calls;
	double rates[128];
	bool passed[128];
	double achieved_rps[128];
};

static int
model_measure(void *ctx, double rate, struct lg_slo_sample *s)
{
	struct model *m = ctx;
	double p99;

	m->calls++;
	if (m->abort_at != 0 && m->calls == m->abort_at)
		return 1;
	assert_true(m->calls <= 128);
	m->rates[m->calls - 1] = rate;
	s->achieved_rps = rate * m->achieved;
	s->lost = 0;
	if (rate >= m->cap) {
		p99 = 1e12;
		s->lost = 7;
	} else {
		p99 = m->s_ns / (1.0 - rate / m->cap);
	}
	if (m->noise != 0.0)
		p99 *= 1.0 + m->noise * (2.0 * tlb_rng_unit(&m->rng) - 1.0);
	if (m->lost_above != 0.0 && rate >= m->lost_above)
		s->lost = 1;
	s->p99_ns = p99;
	m->achieved_rps[m->calls - 1] = s->achieved_rps;
	m->passed[m->calls - 1] = lg_slo_pass(s, 10.0 * m->s_ns);
	return 0;
}

static void
model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->s_ns = 1000.0;
	m->cap = 100000.0;
	m->achieved = 1.0;
	tlb_rng_seed(&m->rng, 5);
}

static void
test_slo_pass(void **state)
{
	struct lg_slo_sample s = {.p99_ns = 100, .lost = 0, .achieved_rps = 10};

	(void)state;
	assert_true(lg_slo_pass(&s, 100));
	assert_false(lg_slo_pass(&s, 99.9));
	s.lost = 1;
	assert_false(lg_slo_pass(&s, 1000));
	/* No responses at all: nothing was shown. */
	s.lost = 0;
	s.achieved_rps = 0;
	assert_false(lg_slo_pass(&s, 1000));
}

static void
test_slo_bisect(void **state)
{
	struct model m;
	struct lg_slo_result r;
	struct lg_slo_cfg c = {.slo_ns = 10000.0,
			       .lo = 1000.0,
			       .hi = 200000.0,
			       .iterations = 8};
	const double answer = 90000.0; /* C (1 - 1/10) */
	double width;

	(void)state;
	/* 8 steps: the bracket narrows to (hi - lo) / 2^8. */
	model_init(&m);
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	width = (c.hi - c.lo) / 256.0;
	assert_true(r.found);
	assert_false(r.at_max);
	assert_false(r.aborted);
	assert_int_equal(r.points, 10);
	assert_int_equal(m.calls, 10);
	assert_true(r.slo_ns == 10000.0);
	assert_true(r.max_rps <= answer);
	assert_true(r.max_rps > answer - width);
	assert_true(r.pass_rps <= answer && r.fail_rps > answer);
	assert_true(fabs(r.fail_rps - r.pass_rps - width) < 1e-6);
	assert_true(r.best_offered_rps == r.max_rps);
	assert_true(fabs(r.best_p99_ns - 1000.0 / (1.0 - r.max_rps / 1e5)) <
		    1e-6);
	/* lo, then hi, then only inside the bracket. */
	assert_true(m.rates[0] == c.lo && m.rates[1] == c.hi);
	for (uint32_t i = 2; i < m.calls; i++)
		assert_true(m.rates[i] > c.lo && m.rates[i] < c.hi);

	/* More steps, closer; it stops once the bracket is under 1 rps. */
	model_init(&m);
	c.iterations = 64;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_true(r.max_rps <= answer && r.max_rps > answer - 1.0);
	assert_true(r.fail_rps - r.pass_rps < 1.0);
	assert_true(r.points < 2 + 64);

	/* The answer is the achieved rate, not the offered one. */
	model_init(&m);
	m.achieved = 0.98;
	c.iterations = 20;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_true(fabs(r.max_rps - 0.98 * r.best_offered_rps) < 1e-6);
	assert_true(r.best_offered_rps <= answer &&
		    r.best_offered_rps > answer - 1.0);

	/* X = 30: C (1 - 1/30). */
	model_init(&m);
	c.slo_ns = 30000.0;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_true(r.max_rps <= 1e5 * (1.0 - 1.0 / 30.0));
	assert_true(r.max_rps > 1e5 * (1.0 - 1.0 / 30.0) - 1.0);
	c.slo_ns = 10000.0;

	/* Losses fail a point whatever its latency. */
	model_init(&m);
	m.lost_above = 50000.0;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_true(r.max_rps < 50000.0 && r.max_rps > 50000.0 - 1.0);
}

static void
test_slo_edges(void **state)
{
	struct model m;
	struct lg_slo_result r;
	struct lg_slo_cfg c = {.slo_ns = 10000.0,
			       .lo = 1000.0,
			       .hi = 50000.0,
			       .iterations = 8};

	(void)state;
	/* hi meets the SLO: that is the answer, flagged. */
	model_init(&m);
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_true(r.found && r.at_max);
	assert_int_equal(r.points, 2);
	assert_true(r.max_rps == 50000.0);
	assert_true(r.pass_rps == 50000.0);

	/* Even lo fails: no answer, one point. */
	model_init(&m);
	m.cap = 1000.0;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
	assert_false(r.found);
	assert_int_equal(r.points, 1);
	assert_true(r.max_rps == 0.0);
	assert_true(r.fail_rps == 1000.0);

	/* Aborted on the 4th measurement: what was found so far stays. */
	model_init(&m);
	c.hi = 200000.0;
	m.abort_at = 4;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), -1);
	assert_true(r.aborted);
	assert_int_equal(r.points, 3);
	assert_true(r.found);
	assert_true(r.max_rps == m.achieved_rps[2] ||
		    r.max_rps == m.achieved_rps[0]);
	/* Aborted at once. */
	model_init(&m);
	m.abort_at = 1;
	assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), -1);
	assert_false(r.found);
	assert_int_equal(r.points, 0);
}

/* Noisy measurements need not be monotonic: the search still ends within
 * its budget and reports the best point that passed. */
static void
test_slo_noisy(void **state)
{
	struct lg_slo_cfg c = {.slo_ns = 10000.0,
			       .lo = 1000.0,
			       .hi = 200000.0,
			       .iterations = 12};

	(void)state;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		struct model m;
		struct lg_slo_result r;
		double best = 0.0;

		model_init(&m);
		m.noise = 0.5;
		tlb_rng_seed(&m.rng, seed);
		assert_int_equal(lg_slo_search(&c, model_measure, &m, &r), 0);
		assert_true(r.points <= c.iterations + 2);
		assert_int_equal(r.points, m.calls);
		for (uint32_t i = 0; i < m.calls; i++)
			if (m.passed[i] && m.achieved_rps[i] > best)
				best = m.achieved_rps[i];
		assert_true(r.max_rps == best);
		assert_true(r.found == (best > 0.0));
	}
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

	assert_int_equal(lg_track_init(&t, lg_track_window(1e8, 1), timeout, 0),
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
	r->measured = (struct lg_phase_counts){1001, 1000, 0, 1, 0};
	r->warmup = (struct lg_phase_counts){5, 5, 0, 0, 0};
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
		"\"target_rps\":20000.000,",
		"\"achieved_rps\":19999.500,",
		"\"sent\":1001,",
		"\"received\":1000,",
		"\"lost\":1,",
		"\"duplicates\":2,",
		"\"unknown\":3,",
		"\"p50_ns\":",
		"\"p90_ns\":",
		"\"p99_ns\":",
		"\"p999_ns\":",
		"\"max_ns\":1000000,",
		"\"mean_ns\":500500.0,",
		"\"behind\":true,",
		"\"max_lag_ns\":1234,",
		"\"per_core\":[400,0,600]",
		"\"dist\":\"fixed:1000ns\"",
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

/* Splits a CSV line (no quoting: the loadgen never needs it) in place. */
static int
split_csv(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	f[n++] = line;
	for (char *c = line; *c != '\0'; c++)
		if (*c == ',') {
			*c = '\0';
			if (n == max)
				return -1;
			f[n++] = c + 1;
		}
	return n;
}

static void
capture_header(void (*fn)(FILE *), char **buf)
{
	size_t len = 0;
	FILE *f;

	*buf = NULL;
	f = open_memstream(buf, &len);
	assert_non_null(f);
	fn(f);
	fclose(f);
	assert_non_null(*buf);
}

static void
test_report_csv(void **state)
{
	static const char *const first[] = {
		"policy", "offered_rps", "achieved_rps", "p50_ns",
		"p90_ns", "p99_ns",      "p999_ns",      "max_ns",
		"lost",   "sent",        "received",
	};
	struct lg_opts o;
	struct lg_result r;
	struct tlb_hist *h = malloc(sizeof(*h));
	uint64_t cores[3];
	char *hd, *row, *hf[64], *rf[64], want[256];
	int nh, nr;

	(void)state;
	assert_non_null(h);
	lg_opts_default(&o);
	snprintf(o.label, sizeof(o.label), "jbsq:2");
	sample_result(&r, h, cores);
	capture_header(lg_csv_header, &hd);
	capture(lg_csv_row, &o, &r, &row);
	/* One line each, the same number of fields. */
	assert_true(strchr(hd, '\n') == hd + strlen(hd) - 1);
	assert_true(strchr(row, '\n') == row + strlen(row) - 1);
	/* The fixed columns, exactly. */
	snprintf(want, sizeof(want),
		 "jbsq:2,20000.000,19999.500,%" PRIu64 ",%" PRIu64 ",%" PRIu64
		 ",%" PRIu64 ",1000000,1,1001,1000,",
		 tlb_hist_quantile(h, 0.50), tlb_hist_quantile(h, 0.90),
		 tlb_hist_quantile(h, 0.99), tlb_hist_quantile(h, 0.999));
	if (strncmp(row, want, strlen(want)) != 0)
		fail_msg("row %s does not start with %s", row, want);
	nh = split_csv(hd, hf, 64);
	nr = split_csv(row, rf, 64);
	assert_true(nh > 11);
	assert_int_equal(nh, nr);
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		assert_string_equal(hf[i], first[i]);
	/* Every column named once; a few by name. */
	for (int i = 0; i < nh; i++) {
		for (int j = 0; j < i; j++)
			assert_string_not_equal(hf[i], hf[j]);
		if (strcmp(hf[i], "errors") == 0)
			assert_string_equal(rf[i], "0");
		else if (strcmp(hf[i], "behind") == 0)
			assert_string_equal(rf[i], "1");
		else if (strcmp(hf[i], "dist") == 0)
			assert_string_equal(rf[i], "fixed:1000ns");
		else if (strcmp(hf[i], "unknown") == 0)
			assert_string_equal(rf[i], "3");
		else if (strcmp(hf[i], "mean_ns") == 0)
			assert_string_equal(rf[i], "500500.0");
	}
	free(hd);
	free(row);

	/* No label: an empty first field, still the same shape. */
	o.label[0] = '\0';
	capture(lg_csv_row, &o, &r, &row);
	assert_true(row[0] == ',');
	assert_int_equal(split_csv(row, rf, 64), nh);
	free(row);
	free(h);
}

static void
test_report_table(void **state)
{
	struct lg_opts o;
	struct lg_result r;
	struct tlb_hist *h = malloc(sizeof(*h));
	uint64_t cores[3];
	char *hd, *row;

	(void)state;
	assert_non_null(h);
	lg_opts_default(&o);
	sample_result(&r, h, cores);
	capture_header(lg_table_header, &hd);
	assert_non_null(strstr(hd, "offered"));
	assert_non_null(strstr(hd, "p99_us"));
	capture(lg_table_row, &o, &r, &row);
	/* One line; unlabelled shows "-"; the odd things are noted. */
	assert_true(strchr(row, '\n') == row + strlen(row) - 1);
	assert_true(strncmp(row, "- ", 2) == 0);
	assert_non_null(strstr(row, " 20000 "));
	assert_non_null(strstr(row, " 1000.0 "));
	assert_non_null(strstr(row, "BEHIND"));
	assert_non_null(strstr(row, "dup=2"));
	assert_non_null(strstr(row, "unknown=3"));
	free(row);
	snprintf(o.label, sizeof(o.label), "jsq");
	r.behind = false;
	r.duplicates = r.unknown = 0;
	capture(lg_table_row, &o, &r, &row);
	assert_true(strncmp(row, "jsq ", 4) == 0);
	assert_non_null(strstr(row, " -\n"));
	free(row);
	free(hd);
	free(h);
}

static void
test_report_json_sweep(void **state)
{
	struct lg_opts o;
	struct lg_result r;
	struct tlb_hist *h = malloc(sizeof(*h));
	uint64_t cores[3];
	char *s;

	(void)state;
	assert_non_null(h);
	assert_int_equal(PARSE(&o, "--label", "jlq", "--src-ips", "4"), 0);
	sample_result(&r, h, cores);
	r.point = 2;
	capture(lg_report_json, &o, &r, &s);
	assert_non_null(strstr(s, "\"record\":\"point\","));
	assert_non_null(strstr(s, "\"policy\":\"jlq\","));
	assert_non_null(strstr(s, "\"offered_rps\":20000.000,"));
	assert_non_null(strstr(s, "\"target_rps\":20000.000,"));
	assert_non_null(strstr(s, "\"point\":2,"));
	assert_non_null(strstr(s, "\"src_ips\":4,"));
	assert_non_null(strstr(s, "\"closed_loop\":0,"));
	free(s);
	free(h);
}

/* The search's reports, from a made-up result. */
static void
capture_slo(void (*fn)(FILE *, const struct lg_opts *,
		       const struct lg_slo_result *),
	    const struct lg_opts *o, const struct lg_slo_result *r, char **buf)
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
test_report_slo(void **state)
{
	struct lg_opts o;
	struct lg_slo_result r = {
		.slo_ns = 20000.0,
		.found = true,
		.max_rps = 45123.5,
		.best_offered_rps = 46000.0,
		.best_p99_ns = 18300.0,
		.pass_rps = 46000.0,
		.fail_rps = 47000.0,
		.points = 10,
	};
	char *s, *hd, *hf[32], *rf[32];
	int nh;

	(void)state;
	assert_int_equal(PARSE(&o, "--slo-multiple", "10", "--sweep",
			       "1000:100000", "--dist", "exp:2us", "--label",
			       "rss"),
			 0);
	capture_slo(lg_slo_report_json, &o, &r, &s);
	assert_true(s[0] == '{');
	assert_true(strchr(s, '\n') == s + strlen(s) - 1);
	assert_non_null(strstr(s, "\"record\":\"slo\","));
	assert_non_null(strstr(s, "\"policy\":\"rss\","));
	assert_non_null(strstr(s, "\"slo_multiple\":10,"));
	assert_non_null(strstr(s, "\"slo_ns\":20000.0,"));
	assert_non_null(strstr(s, "\"max_rps\":45123.500,"));
	assert_non_null(strstr(s, "\"found\":true,"));
	assert_non_null(strstr(s, "\"at_max\":false,"));
	assert_non_null(strstr(s, "\"points\":10,"));
	assert_non_null(strstr(s, "\"rate_max\":100000.000,"));
	free(s);

	capture_slo(lg_slo_report_human, &o, &r, &s);
	assert_non_null(strstr(s, "20.0 us"));
	assert_non_null(strstr(s, "max 45124 rps"));
	assert_non_null(strstr(s, "missed at 47000"));
	free(s);
	r.found = false;
	capture_slo(lg_slo_report_human, &o, &r, &s);
	assert_non_null(strstr(s, "not met at the lowest rate, 1000 rps"));
	free(s);

	capture_header(lg_slo_csv_header, &hd);
	capture_slo(lg_slo_csv_row, &o, &r, &s);
	assert_true(strncmp(hd, "policy,slo_multiple,slo_ns,max_rps,", 35) ==
		    0);
	assert_true(strncmp(s, "rss,10,20000.0,45123.500,0,", 27) == 0);
	nh = split_csv(hd, hf, 32);
	assert_int_equal(split_csv(s, rf, 32), nh);
	free(hd);
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_defaults),
		cmocka_unit_test(test_opts_all),
		cmocka_unit_test(test_opts_errors),
		cmocka_unit_test(test_opts_sweep),
		cmocka_unit_test(test_parse_rates),
		cmocka_unit_test(test_parse_sweep),
		cmocka_unit_test(test_pkts_per_msg),
		cmocka_unit_test(test_sched_fixed),
		cmocka_unit_test(test_sched_poisson),
		cmocka_unit_test(test_track_window),
		cmocka_unit_test(test_track_basic),
		cmocka_unit_test(test_track_timeout),
		cmocka_unit_test(test_track_write_off),
		cmocka_unit_test(test_link_reconnect),
		cmocka_unit_test(test_link_wait_only),
		cmocka_unit_test(test_track_evict),
		cmocka_unit_test(test_track_window_n),
		cmocka_unit_test(test_closed_window),
		cmocka_unit_test(test_slo_pass),
		cmocka_unit_test(test_slo_bisect),
		cmocka_unit_test(test_slo_edges),
		cmocka_unit_test(test_slo_noisy),
		cmocka_unit_test(test_track_random),
		cmocka_unit_test(test_report_json),
		cmocka_unit_test(test_report_human),
		cmocka_unit_test(test_report_csv),
		cmocka_unit_test(test_report_table),
		cmocka_unit_test(test_report_json_sweep),
		cmocka_unit_test(test_report_slo),
	};

	return cmocka_run_group_tests(tests, setup_err, teardown_err);
}
