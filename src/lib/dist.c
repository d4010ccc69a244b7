/* SPDX-License-Identifier: BSD-3-Clause
 * Service-time distributions: spec parsing, sampling, analytic moments.
 * Numbers are parsed by hand rather than with strtod so that the syntax is
 * exactly "digits[.digits]unit" (no sign, exponent, hex, inf, whitespace)
 * and does not depend on the locale's decimal point.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "turbolb/dist.h"

#define FIELD_MAX 64
#define MAX_ARGS  3
/* Enough for "%.0f" of any finite double (309 digits) plus sign. */
#define NUM_MAX 320

/* Not M_PI: that needs _GNU_SOURCE or _DEFAULT_SOURCE. */
#define TLB_PI    3.14159265358979323846
#define TLB_SQRT2 1.41421356237309504880

struct kind_desc {
	const char *name;
	enum tlb_dist_kind kind;
	const char *usage;
	unsigned int n_args;
	const char *arg_names[MAX_ARGS];
};

static const struct kind_desc kinds[] = {
	{"fixed", TLB_DIST_FIXED, "fixed:T", 1, {"time"}},
	{"exp", TLB_DIST_EXP, "exp:MEAN", 1, {"mean"}},
	{"uniform", TLB_DIST_UNIFORM, "uniform:A:B", 2, {"low", "high"}},
	{"normal", TLB_DIST_NORMAL, "normal:MEAN:SD", 2, {"mean", "sd"}},
	{"bimodal",
	 TLB_DIST_BIMODAL,
	 "bimodal:P:A:B",
	 3,
	 {"probability", "value A", "value B"}},
	{"lognormal",
	 TLB_DIST_LOGNORMAL,
	 "lognormal:MEAN:SD",
	 2,
	 {"mean", "sd"}},
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

/* A rejection sampler for a normal truncated at 0 accepts with probability
 * >= 1/2 when the mean is >= 0 (all a parsed spec allows); the cap only
 * stops a hand-built struct with a very negative mean from spinning. */
#define NORMAL_MAX_TRIES 1000

static void __attribute__((format(printf, 4, 5)))
set_err(char *err, size_t errlen, const char *spec, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return;
	n = snprintf(err, errlen, "bad distribution '%s': ", spec);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Parses "digits[.digits]" (at least one digit) at s; returns the number
 * of characters used, 0 if none. */
static size_t
parse_decimal(const char *s, double *out)
{
	const char *p = s;
	double v = 0.0, frac = 0.0, scale = 1.0;
	int digits = 0, frac_digits = 0;

	while (*p >= '0' && *p <= '9') {
		v = v * 10.0 + (*p - '0');
		digits++;
		p++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			/* Digits past double precision cannot change the
			 * result; stop before scale could overflow. */
			if (frac_digits < 18) {
				frac = frac * 10.0 + (*p - '0');
				scale *= 10.0;
				frac_digits++;
			}
			digits++;
			p++;
		}
	}
	if (digits == 0)
		return 0;
	v += frac / scale;
	if (!isfinite(v))
		return 0;
	*out = v;
	return (size_t)(p - s);
}

int
tlb_parse_time_ns(const char *s, double *ns)
{
	static const struct {
		const char *name;
		double mult;
	} units[] = {
		{"", 1.0}, {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
	};
	double v;
	size_t n;

	if (s == NULL)
		return -1;
	n = parse_decimal(s, &v);
	if (n == 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].name) == 0) {
			v *= units[i].mult;
			if (!isfinite(v))
				return -1;
			*ns = v;
			return 0;
		}
	}
	return -1;
}

static int
parse_plain(const char *s, double *out)
{
	double v;
	size_t n = parse_decimal(s, &v);

	if (n == 0 || s[n] != '\0')
		return -1;
	*out = v;
	return 0;
}

static const struct kind_desc *
find_kind(const char *name, size_t len)
{
	for (size_t i = 0; i < N_KINDS; i++) {
		if (strlen(kinds[i].name) == len &&
		    memcmp(kinds[i].name, name, len) == 0)
			return &kinds[i];
	}
	return NULL;
}

static void
lognormal_params(struct tlb_dist *d)
{
	/* Moment matching: E = exp(mu + s^2/2), Var = E^2 (exp(s^2) - 1). */
	double cv = d->b / d->a;
	double s2 = log1p(cv * cv);

	d->sigma = sqrt(s2);
	d->mu = log(d->a) - s2 / 2.0;
}

int
tlb_dist_parse(const char *spec, struct tlb_dist *d, char *err, size_t errlen)
{
	const struct kind_desc *k;
	const char *colon, *p;
	double v[MAX_ARGS] = {0};
	struct tlb_dist nd;
	unsigned int i;

	if (spec == NULL) {
		if (err != NULL && errlen > 0)
			snprintf(err, errlen, "no distribution given");
		return -1;
	}
	colon = strchr(spec, ':');
	p = colon != NULL ? colon : spec + strlen(spec);
	if (p == spec) {
		set_err(err, errlen, spec, "missing kind (want %s)",
			"fixed, exp, uniform, normal, bimodal or lognormal");
		return -1;
	}
	k = find_kind(spec, (size_t)(p - spec));
	if (k == NULL) {
		set_err(err, errlen, spec, "unknown kind '%.*s' (want %s)",
			(int)(p - spec), spec,
			"fixed, exp, uniform, normal, bimodal or lognormal");
		return -1;
	}

	for (i = 0; i < k->n_args; i++) {
		char field[FIELD_MAX];
		const char *start, *end;
		size_t len;
		int rc;

		if (*p != ':') {
			set_err(err, errlen, spec, "missing %s",
				k->arg_names[i]);
			return -1;
		}
		start = p + 1;
		end = strchr(start, ':');
		if (end == NULL)
			end = start + strlen(start);
		len = (size_t)(end - start);
		p = end;
		if (len == 0) {
			set_err(err, errlen, spec, "missing %s",
				k->arg_names[i]);
			return -1;
		}
		rc = -1;
		if (len < sizeof(field)) {
			memcpy(field, start, len);
			field[len] = '\0';
			if (k->kind == TLB_DIST_BIMODAL && i == 0) {
				rc = parse_plain(field, &v[i]);
				if (rc == 0 && v[i] > 1.0)
					rc = -1;
			} else {
				rc = tlb_parse_time_ns(field, &v[i]);
			}
		}
		if (rc != 0) {
			if (k->kind == TLB_DIST_BIMODAL && i == 0)
				set_err(err, errlen, spec,
					"bad probability '%.*s' (want a number "
					"in [0, 1])",
					(int)len, start);
			else
				set_err(err, errlen, spec,
					"bad %s '%.*s' (want a non-negative "
					"time such as 250ns, 1.5us, 2ms or 1s)",
					k->arg_names[i], (int)len, start);
			return -1;
		}
	}
	if (*p != '\0') {
		set_err(err, errlen, spec, "too many arguments (want %s)",
			k->usage);
		return -1;
	}

	memset(&nd, 0, sizeof(nd));
	nd.kind = k->kind;
	switch (k->kind) {
	case TLB_DIST_FIXED:
		nd.a = v[0];
		break;
	case TLB_DIST_EXP:
		if (v[0] <= 0.0) {
			set_err(err, errlen, spec, "mean must be > 0");
			return -1;
		}
		nd.a = v[0];
		break;
	case TLB_DIST_UNIFORM:
		if (v[0] > v[1]) {
			set_err(err, errlen, spec, "low (A) is above high (B)");
			return -1;
		}
		nd.a = v[0];
		nd.b = v[1];
		break;
	case TLB_DIST_NORMAL:
		nd.a = v[0];
		nd.b = v[1];
		break;
	case TLB_DIST_BIMODAL:
		nd.p = v[0];
		nd.a = v[1];
		nd.b = v[2];
		break;
	case TLB_DIST_LOGNORMAL:
		if (v[0] <= 0.0) {
			set_err(err, errlen, spec, "mean must be > 0");
			return -1;
		}
		nd.a = v[0];
		nd.b = v[1];
		lognormal_params(&nd);
		break;
	}
	*d = nd;
	return 0;
}

/* Uniform in [0, 1). */
static double
rng_unit0(struct tlb_rng *r)
{
	return (tlb_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static double
std_normal(struct tlb_rng *r)
{
	/* Box-Muller; u1 is never 0 so the log is finite. Only the cosine
	 * half is used so that sampling keeps no state between calls. */
	double u1 = tlb_rng_unit(r);
	double u2 = tlb_rng_unit(r);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * TLB_PI * u2);
}

double
tlb_exp_sample(struct tlb_rng *r, double mean)
{
	double x = -log(tlb_rng_unit(r));

	/* u == 1 gives -0.0, which would print as "-0". */
	return x > 0.0 ? x * mean : 0.0;
}

double
tlb_dist_sample(const struct tlb_dist *d, struct tlb_rng *r)
{
	switch (d->kind) {
	case TLB_DIST_FIXED:
		return d->a;
	case TLB_DIST_EXP:
		return tlb_exp_sample(r, d->a);
	case TLB_DIST_UNIFORM:
		return d->a + (d->b - d->a) * rng_unit0(r);
	case TLB_DIST_NORMAL:
		if (d->b <= 0.0)
			return d->a > 0.0 ? d->a : 0.0;
		for (int i = 0; i < NORMAL_MAX_TRIES; i++) {
			double x = d->a + d->b * std_normal(r);

			if (x >= 0.0)
				return x;
		}
		return 0.0;
	case TLB_DIST_BIMODAL:
		return tlb_rng_unit(r) <= d->p ? d->a : d->b;
	case TLB_DIST_LOGNORMAL:
		return exp(d->mu + d->sigma * std_normal(r));
	}
	return 0.0;
}

/* Truncation of N(m, s^2) to [0, inf): with beta = m/s and
 * lambda = phi(beta) / Phi(beta), the mean is m + s lambda and the
 * variance s^2 (1 - beta lambda - lambda^2). */
static void
truncnorm_moments(double m, double s, double *mean, double *var)
{
	double beta, lambda;

	if (s <= 0.0) {
		*mean = m > 0.0 ? m : 0.0;
		*var = 0.0;
		return;
	}
	beta = m / s;
	lambda = exp(-beta * beta / 2.0) / sqrt(2.0 * TLB_PI) /
		 (0.5 * erfc(-beta / TLB_SQRT2));
	*mean = m + s * lambda;
	*var = s * s * (1.0 - beta * lambda - lambda * lambda);
}

double
tlb_dist_mean(const struct tlb_dist *d)
{
	double mean, var;

	switch (d->kind) {
	case TLB_DIST_FIXED:
	case TLB_DIST_EXP:
		return d->a;
	case TLB_DIST_UNIFORM:
		return (d->a + d->b) / 2.0;
	case TLB_DIST_NORMAL:
		truncnorm_moments(d->a, d->b, &mean, &var);
		return mean;
	case TLB_DIST_BIMODAL:
		return d->p * d->a + (1.0 - d->p) * d->b;
	case TLB_DIST_LOGNORMAL:
		return exp(d->mu + d->sigma * d->sigma / 2.0);
	}
	return 0.0;
}

double
tlb_dist_variance(const struct tlb_dist *d)
{
	double mean, var, s2, w;

	switch (d->kind) {
	case TLB_DIST_FIXED:
		return 0.0;
	case TLB_DIST_EXP:
		return d->a * d->a;
	case TLB_DIST_UNIFORM:
		w = d->b - d->a;
		return w * w / 12.0;
	case TLB_DIST_NORMAL:
		truncnorm_moments(d->a, d->b, &mean, &var);
		return var;
	case TLB_DIST_BIMODAL:
		w = d->a - d->b;
		return d->p * (1.0 - d->p) * w * w;
	case TLB_DIST_LOGNORMAL:
		s2 = d->sigma * d->sigma;
		return expm1(s2) * exp(2.0 * d->mu + s2);
	}
	return 0.0;
}

/* Shortest plain decimal (never an exponent, which the parser rejects). */
static void
fmt_num(char *buf, size_t len, double v)
{
	char *dot, *end;

	if (v == floor(v)) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	/* Non-integers are below 2^53, so this stays short. */
	snprintf(buf, len, "%.12f", v);
	dot = strchr(buf, '.');
	if (dot == NULL)
		return;
	end = buf + strlen(buf);
	while (end > dot + 1 && end[-1] == '0')
		end--;
	if (end == dot + 1)
		end = dot;
	*end = '\0';
}

void
tlb_dist_format(const struct tlb_dist *d, char *buf, size_t len)
{
	char x[NUM_MAX], y[NUM_MAX], z[NUM_MAX];
	const char *name = NULL;

	if (buf == NULL || len == 0)
		return;
	for (size_t i = 0; i < N_KINDS; i++) {
		if (kinds[i].kind == d->kind)
			name = kinds[i].name;
	}
	if (name == NULL) {
		snprintf(buf, len, "unknown");
		return;
	}
	fmt_num(x, sizeof(x), d->a);
	fmt_num(y, sizeof(y), d->b);
	switch (d->kind) {
	case TLB_DIST_FIXED:
	case TLB_DIST_EXP:
		snprintf(buf, len, "%s:%sns", name, x);
		break;
	case TLB_DIST_UNIFORM:
	case TLB_DIST_NORMAL:
	case TLB_DIST_LOGNORMAL:
		snprintf(buf, len, "%s:%sns:%sns", name, x, y);
		break;
	case TLB_DIST_BIMODAL:
		fmt_num(z, sizeof(z), d->p);
		snprintf(buf, len, "%s:%s:%sns:%sns", name, z, x, y);
		break;
	}
}
