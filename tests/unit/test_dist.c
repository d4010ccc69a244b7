/* SPDX-License-Identifier: BSD-3-Clause
 * Distribution tests: spec parsing, analytic moments against hand-computed
 * values, sample moments against the analytic ones, and a
 * Kolmogorov-Smirnov goodness-of-fit test of the exponential sampler.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/dist.h"
#include "turbolb/rng.h"

#define MOMENT_N 2000000
#define KS_N     100000
/* Critical value of the one-sample KS statistic at the 1% level. */
#define KS_CRIT (1.63 / sqrt((double)KS_N))

static void
assert_close(double got, double want, double rel)
{
	double tol = rel * fabs(want);

	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, want %.17g (rel tol %g)", got, want, rel);
}

static struct tlb_dist
parse_ok(const char *spec)
{
	struct tlb_dist d;
	char err[256] = "";

	if (tlb_dist_parse(spec, &d, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", spec, err);
	return d;
}

static void
test_parse_each(void **state)
{
	static const struct {
		const char *spec;
		enum tlb_dist_kind kind;
		double a, b, p;
	} cases[] = {
		{"fixed:250ns", TLB_DIST_FIXED, 250, 0, 0},
		{"fixed:100", TLB_DIST_FIXED, 100, 0, 0},
		{"fixed:0", TLB_DIST_FIXED, 0, 0, 0},
		{"exp:1us", TLB_DIST_EXP, 1000, 0, 0},
		{"exp:1.5us", TLB_DIST_EXP, 1500, 0, 0},
		{"exp:2ms", TLB_DIST_EXP, 2e6, 0, 0},
		{"uniform:1us:3us", TLB_DIST_UNIFORM, 1000, 3000, 0},
		{"uniform:2ms:2ms", TLB_DIST_UNIFORM, 2e6, 2e6, 0},
		{"uniform:0:1s", TLB_DIST_UNIFORM, 0, 1e9, 0},
		{"normal:10us:2us", TLB_DIST_NORMAL, 10000, 2000, 0},
		{"normal:0:1us", TLB_DIST_NORMAL, 0, 1000, 0},
		{"bimodal:0.9:1us:100us", TLB_DIST_BIMODAL, 1000, 100000, 0.9},
		{"bimodal:0:1:2", TLB_DIST_BIMODAL, 1, 2, 0},
		{"bimodal:1:2s:1ns", TLB_DIST_BIMODAL, 2e9, 1, 1},
		{"bimodal:.25:1:2", TLB_DIST_BIMODAL, 1, 2, 0.25},
		{"lognormal:1ms:2ms", TLB_DIST_LOGNORMAL, 1e6, 2e6, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tlb_dist d = parse_ok(cases[i].spec);

		assert_int_equal(d.kind, cases[i].kind);
		assert_true(d.a == cases[i].a);
		assert_true(d.b == cases[i].b);
		assert_true(d.p == cases[i].p);
	}
}

static void
test_parse_lognormal_params(void **state)
{
	struct tlb_dist d;

	(void)state;
	/* sigma^2 = ln(1 + (SD/MEAN)^2) = ln 5; mu = ln(1e6) - ln(5)/2. */
	d = parse_ok("lognormal:1ms:2ms");
	assert_close(d.sigma, 1.2686362411795196, 1e-12);
	assert_close(d.mu, 13.010791601747224, 1e-12);
	/* sigma^2 = ln 1.25; mu = ln(1e6) - ln(1.25)/2. */
	d = parse_ok("lognormal:1ms:500us");
	assert_close(d.sigma, 0.47238072707743883, 1e-12);
	assert_close(d.mu, 13.70393878230717, 1e-12);
	/* No spread: a point mass at the mean. */
	d = parse_ok("lognormal:1us:0");
	assert_true(d.sigma == 0.0);
	assert_close(d.mu, log(1000.0), 1e-12);
}

static void
test_parse_bad(void **state)
{
	static const char *const bad[] = {
		"",
		":",
		":1us",
		"foo:1us",
		"Exp:1us",
		"exp",
		"exp:",
		"exp:1us:",
		"exp:1us:2us",
		"exp:-1us",
		"exp:+1us",
		"exp:1xs",
		"exp:1US",
		"exp:1 us",
		"exp: 1us",
		"exp:1us ",
		" exp:1us",
		"exp:1e3",
		"exp:0x10",
		"exp:inf",
		"exp:nan",
		"exp:1.2.3us",
		"exp:.us",
		"exp:us",
		"exp:0",
		"exp:1sec",
		"exp:1m",
		"fixed",
		"fixed:",
		"fixed:1us:2us",
		"fixed:-5",
		"uniform:2us:1us",
		"uniform:1us",
		"uniform:1us:",
		"uniform::1us",
		"uniform:1us:2us:3us",
		"normal:1us",
		"normal:1us:-1us",
		"normal:-1us:1us",
		"bimodal:1.5:1us:2us",
		"bimodal:-0.1:1us:2us",
		"bimodal:0.5:1us",
		"bimodal:0.5us:1us:2us",
		"bimodal:0.5:1us:2us:3us",
		"bimodal:1.0001:1:2",
		"lognormal:0:1us",
		"lognormal:1us",
		"lognormal:1us:-1",
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tlb_dist d, before;

		memset(&d, 0xa5, sizeof(d));
		memcpy(&before, &d, sizeof(d));
		err[0] = '\0';
		if (tlb_dist_parse(bad[i], &d, err, sizeof(err)) != -1)
			fail_msg("'%s' accepted", bad[i]);
		if (strncmp(err, "bad distribution '", 18) != 0)
			fail_msg("'%s': bad message '%s'", bad[i], err);
		/* Failure leaves the output alone. */
		assert_memory_equal(&d, &before, sizeof(d));
	}
	assert_int_equal(
		tlb_dist_parse(NULL, &(struct tlb_dist){0}, err, sizeof(err)),
		-1);
	assert_true(err[0] != '\0');
}

static void
assert_err(const char *spec, const char *want)
{
	struct tlb_dist d;
	char err[256] = "";

	assert_int_equal(tlb_dist_parse(spec, &d, err, sizeof(err)), -1);
	if (strstr(err, want) == NULL)
		fail_msg("'%s': message '%s' lacks '%s'", spec, err, want);
}

static void
test_parse_messages(void **state)
{
	struct tlb_dist d;
	char err[256], small[12];

	(void)state;
	assert_int_equal(tlb_dist_parse("exp:", &d, err, sizeof(err)), -1);
	assert_string_equal(err, "bad distribution 'exp:': missing mean");
	assert_err("foo:1us", "unknown kind 'foo'");
	assert_err("exp:1us:2us", "too many arguments (want exp:MEAN)");
	assert_err("uniform:1us", "missing high");
	assert_err("uniform:2us:1us", "low (A) is above high (B)");
	assert_err("bimodal:1.5:1us:2us", "bad probability '1.5'");
	assert_err("exp:5xs", "bad mean '5xs'");
	assert_err("normal:1us:-3", "bad sd '-3'");
	assert_err("exp:0", "mean must be > 0");

	/* Truncated but terminated; NULL err is allowed. */
	memset(small, 'x', sizeof(small));
	assert_int_equal(tlb_dist_parse("exp:", &d, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(tlb_dist_parse("exp:", &d, NULL, 0), -1);
	assert_int_equal(tlb_dist_parse("exp:", &d, err, 0), -1);
}

static void
test_time_units(void **state)
{
	static const struct {
		const char *s;
		double ns;
	} good[] = {
		{"250ns", 250},      {"1.5us", 1500}, {"2ms", 2e6},
		{"1s", 1e9},         {"100", 100},    {"0", 0},
		{"0.5ns", 0.5},      {".5us", 500},   {"3.", 3},
		{"0.000001s", 1000}, {"007us", 7000}, {"2.25s", 2.25e9},
	};
	static const char *const bad[] = {
		"",     "-1", "+1",  "1 ",    " 1",  "1e3",  "1sec",
		"1m",   "1h", "us",  "1.5.5", "1Us", "1 us", "1nss",
		"1ns1", ".",  ".ns", "0x1",   "inf", "nan",  "1,5us",
	};
	double ns;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ns = -1;
		if (tlb_parse_time_ns(good[i].s, &ns) != 0)
			fail_msg("'%s' rejected", good[i].s);
		assert_close(ns, good[i].ns, 1e-15);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = -7;
		if (tlb_parse_time_ns(bad[i], &ns) != -1)
			fail_msg("'%s' accepted", bad[i]);
		assert_true(ns == -7);
	}
	assert_int_equal(tlb_parse_time_ns(NULL, &ns), -1);
}

static void
test_analytic(void **state)
{
	static const struct {
		const char *spec;
		double mean, var;
	} cases[] = {
		{"fixed:5us", 5000, 0},
		{"exp:2us", 2000, 4e6},
		/* (B - A)^2 / 12 */
		{"uniform:1us:3us", 2000, 4e6 / 12},
		{"uniform:7us:7us", 7000, 0},
		/* Half-normal: s sqrt(2/pi), s^2 (1 - 2/pi). */
		{"normal:0:1us", 797.8845608028654, 363380.2276324186},
		/* beta = 1: lambda = phi(1) / Phi(1) = 0.2876. */
		{"normal:1us:1us", 1287.5999709391783, 629686.2857766055},
		/* beta = 5: truncation barely shows. */
		{"normal:10us:2us", 10000.002973439881, 3999970.2655923404},
		{"normal:3us:0", 3000, 0},
		/* p a + (1 - p) b; p (1 - p) (a - b)^2 */
		{"bimodal:0.9:1us:10us", 1900, 0.09 * 81e6},
		{"bimodal:1:1us:10us", 1000, 0},
		/* Parameters are the lognormal's own moments. */
		{"lognormal:1ms:2ms", 1e6, 4e12},
		{"lognormal:1ms:500us", 1e6, 2.5e11},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tlb_dist d = parse_ok(cases[i].spec);

		assert_close(tlb_dist_mean(&d), cases[i].mean, 1e-9);
		if (cases[i].var == 0)
			assert_true(fabs(tlb_dist_variance(&d)) < 1e-6);
		else
			assert_close(tlb_dist_variance(&d), cases[i].var, 1e-9);
	}
}

static void
check_moments(const char *spec, uint64_t seed)
{
	struct tlb_dist d = parse_ok(spec);
	double want_mean = tlb_dist_mean(&d);
	double want_var = tlb_dist_variance(&d);
	double mean = 0, m2 = 0;
	struct tlb_rng r;

	tlb_rng_seed(&r, seed);
	for (long i = 0; i < MOMENT_N; i++) {
		double x = tlb_dist_sample(&d, &r);
		double delta = x - mean;

		if (!(x >= 0.0))
			fail_msg("%s: sample %g", spec, x);
		mean += delta / (double)(i + 1);
		m2 += delta * (x - mean);
	}
	m2 /= MOMENT_N - 1;
	if (!(fabs(mean - want_mean) <= 0.01 * want_mean))
		fail_msg("%s: sample mean %g, analytic %g", spec, mean,
			 want_mean);
	if (want_var == 0.0) {
		assert_true(m2 < 1e-6);
	} else if (!(fabs(m2 - want_var) <= 0.03 * want_var)) {
		fail_msg("%s: sample variance %g, analytic %g", spec, m2,
			 want_var);
	}
}

static void
test_sample_moments(void **state)
{
	static const char *const specs[] = {
		"fixed:5us",
		"exp:2us",
		"uniform:1us:3us",
		"normal:10us:2us",
		"normal:0:1us",
		"normal:1us:1us",
		"bimodal:0.9:1us:10us",
		"lognormal:1ms:500us",
		"lognormal:1ms:1ms",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		check_moments(specs[i], 0x5eed0000 + i);
}

static void
test_sample_support(void **state)
{
	struct tlb_dist u = parse_ok("uniform:1us:3us");
	struct tlb_dist b = parse_ok("bimodal:0.25:1us:9us");
	struct tlb_rng r;
	long n_a = 0;

	(void)state;
	tlb_rng_seed(&r, 3);
	for (int i = 0; i < 100000; i++) {
		double x = tlb_dist_sample(&u, &r);
		double y = tlb_dist_sample(&b, &r);

		assert_true(x >= 1000 && x <= 3000);
		assert_true(y == 1000 || y == 9000);
		n_a += y == 1000;
	}
	/* Binomial sd is 137; 5 sd either way. */
	assert_true(labs(n_a - 25000) < 700);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One-sample KS statistic of xs (sorted in place) against Exp(mean). */
static double
ks_exp(double *xs, size_t n, double mean)
{
	double d = 0;

	qsort(xs, n, sizeof(*xs), cmp_double);
	for (size_t i = 0; i < n; i++) {
		double f = -expm1(-xs[i] / mean);
		double lo = f - (double)i / (double)n;
		double hi = (double)(i + 1) / (double)n - f;

		if (lo > d)
			d = lo;
		if (hi > d)
			d = hi;
	}
	return d;
}

static void
test_exp_ks(void **state)
{
	double *xs = malloc(KS_N * sizeof(*xs));
	struct tlb_dist d = parse_ok("exp:1us");
	struct tlb_rng r;
	double stat;

	(void)state;
	assert_non_null(xs);

	tlb_rng_seed(&r, 2024);
	for (size_t i = 0; i < KS_N; i++) {
		xs[i] = tlb_exp_sample(&r, 1000.0);
		assert_true(xs[i] >= 0.0 && !signbit(xs[i]));
	}
	stat = ks_exp(xs, KS_N, 1000.0);
	if (!(stat < KS_CRIT))
		fail_msg("tlb_exp_sample: D = %g >= %g", stat, KS_CRIT);

	/* Same through the spec path. */
	for (size_t i = 0; i < KS_N; i++)
		xs[i] = tlb_dist_sample(&d, &r);
	stat = ks_exp(xs, KS_N, 1000.0);
	if (!(stat < KS_CRIT))
		fail_msg("exp:1us: D = %g >= %g", stat, KS_CRIT);

	/* The test has teeth: uniform samples with the same mean fail... */
	for (size_t i = 0; i < KS_N; i++)
		xs[i] = 2000.0 * tlb_rng_unit(&r);
	stat = ks_exp(xs, KS_N, 1000.0);
	if (!(stat > KS_CRIT))
		fail_msg("uniform passed as exponential: D = %g", stat);

	/* ... and so does an exponential with a mean 5% off. */
	for (size_t i = 0; i < KS_N; i++)
		xs[i] = tlb_exp_sample(&r, 1050.0);
	stat = ks_exp(xs, KS_N, 1000.0);
	if (!(stat > KS_CRIT))
		fail_msg("wrong mean passed: D = %g", stat);
	free(xs);
}

static void
test_determinism(void **state)
{
	static const char *const specs[] = {
		"fixed:5us",
		"exp:2us",
		"uniform:1us:3us",
		"normal:1us:1us",
		"bimodal:0.5:1us:10us",
		"lognormal:1ms:1ms",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct tlb_dist d = parse_ok(specs[i]);
		struct tlb_rng r1, r2, r3;
		int differ = 0;

		tlb_rng_seed(&r1, 99);
		tlb_rng_seed(&r2, 99);
		tlb_rng_seed(&r3, 100);
		for (int j = 0; j < 1000; j++) {
			double x = tlb_dist_sample(&d, &r1);

			assert_true(x == tlb_dist_sample(&d, &r2));
			differ |= x != tlb_dist_sample(&d, &r3);
		}
		/* Only the point mass may ignore the seed. */
		assert_int_equal(differ, d.kind != TLB_DIST_FIXED);
	}
}

static void
test_format(void **state)
{
	static const struct {
		const char *spec, *canon;
	} cases[] = {
		{"fixed:1us", "fixed:1000ns"},
		{"exp:1us", "exp:1000ns"},
		{"exp:1.5ns", "exp:1.5ns"},
		{"uniform:1us:2s", "uniform:1000ns:2000000000ns"},
		{"normal:0.25us:0.125ns", "normal:250ns:0.125ns"},
		{"bimodal:0.9:1us:100us", "bimodal:0.9:1000ns:100000ns"},
		{"bimodal:1:1:2", "bimodal:1:1ns:2ns"},
		{"lognormal:1ms:500us", "lognormal:1000000ns:500000ns"},
	};
	char buf[128], small[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tlb_dist d = parse_ok(cases[i].spec), again;

		tlb_dist_format(&d, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].canon);
		/* The canonical form parses back to the same thing. */
		again = parse_ok(buf);
		assert_int_equal(again.kind, d.kind);
		assert_true(again.a == d.a && again.b == d.b);
		assert_true(again.p == d.p);
		assert_true(again.mu == d.mu && again.sigma == d.sigma);
	}
	tlb_dist_format(&(struct tlb_dist){.kind = TLB_DIST_EXP, .a = 1000},
			small, sizeof(small));
	assert_string_equal(small, "exp:100");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_each),
		cmocka_unit_test(test_parse_lognormal_params),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_messages),
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_analytic),
		cmocka_unit_test(test_sample_moments),
		cmocka_unit_test(test_sample_support),
		cmocka_unit_test(test_exp_ks),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
