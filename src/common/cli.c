/* SPDX-License-Identifier: BSD-3-Clause
 * The command-line layer: value parsers, the table walker over
 * getopt_long, generated --help and the one error channel (cli.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Help column: options whose left part is wider put their text on the
 * next line. */
#define HELP_COL_MAX 28
#define OPT_VAL_BASE 256

/* ---- value parsers ---------------------------------------------------- */

int
cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	uint64_t x = 0;

	if (*s == '\0')
		return -1;
	for (; *s != '\0'; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (*s < '0' || *s > '9' || x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

int
cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *v)
{
	bool neg = *s == '-';
	uint64_t mag;
	int64_t x;

	if (cli_parse_u64(s + neg, 0,
			  neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX,
			  &mag) != 0)
		return -1;
	if (neg)
		x = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	else
		x = (int64_t)mag;
	if (x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* Length of the decimal number at the start of s (the grammar of
 * cli_parse_double), 0 if there is none. */
static size_t
scan_decimal(const char *s)
{
	const char *p = s;
	size_t digits = 0;

	if (*p == '-')
		p++;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (digits == 0)
		return 0;
	if (*p == 'e' || *p == 'E') {
		const char *e = p + 1;

		if (*e == '+' || *e == '-')
			e++;
		if (*e >= '0' && *e <= '9') {
			while (*e >= '0' && *e <= '9')
				e++;
			p = e;
		}
	}
	return (size_t)(p - s);
}

/* The decimal number of the first n bytes of s. */
static int
to_double(const char *s, size_t n, double *v)
{
	char buf[CLI_ITEM_MAX];
	double x;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	x = strtod(buf, NULL);
	if (errno != 0 || !isfinite(x))
		return -1;
	*v = x;
	return 0;
}

int
cli_parse_double(const char *s, double *v)
{
	size_t n = scan_decimal(s);

	if (n == 0 || s[n] != '\0')
		return -1;
	return to_double(s, n, v);
}

/* The number at the start of s times the multiplier of the suffix after
 * it, looked up in units; a bare number is multiplied by bare. */
static int
scaled(const char *s, const char *const *names, const double *mult, double bare,
       double *v)
{
	size_t n = scan_decimal(s);
	double x;

	if (to_double(s, n, &x) != 0)
		return -1;
	if (s[n] == '\0') {
		x *= bare;
	} else {
		size_t i;

		for (i = 0; names[i] != NULL; i++)
			if (strcmp(s + n, names[i]) == 0)
				break;
		if (names[i] == NULL)
			return -1;
		x *= mult[i];
	}
	if (!isfinite(x))
		return -1;
	*v = x;
	return 0;
}

int
cli_parse_rate(const char *s, double *v)
{
	static const char *const names[] = {"k", "K", "M", "G", NULL};
	static const double mult[] = {1e3, 1e3, 1e6, 1e9};

	return scaled(s, names, mult, 1.0, v);
}

int
cli_parse_duration(const char *s, double bare_ns, double *ns)
{
	static const char *const names[] = {"ns", "us", "ms", "s", NULL};
	static const double mult[] = {1.0, 1e3, 1e6, 1e9};

	return scaled(s, names, mult, bare_ns, ns);
}

static int
hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
cli_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	for (int i = 0; i < 6; i++, s += 3) {
		int h = hex(s[0]), l = h < 0 ? -1 : hex(s[1]);

		if (l < 0 || s[2] != (i == 5 ? '\0' : ':'))
			return -1;
		m[i] = (uint8_t)(h << 4 | l);
	}
	memcpy(mac, m, sizeof(m));
	return 0;
}

int
cli_list(const char *s,
	 int (*each)(const char *item, unsigned int i, void *ctx, char *err,
		     size_t errlen),
	 void *ctx, char *err, size_t errlen)
{
	char item[CLI_ITEM_MAX];
	unsigned int i = 0;

	for (;; i++) {
		size_t len = strcspn(s, ",");

		if (len == 0 || len >= sizeof(item)) {
			if (err != NULL)
				snprintf(err, errlen, "item %u is %s", i + 1,
					 len == 0 ? "empty" : "too long");
			return -1;
		}
		memcpy(item, s, len);
		item[len] = '\0';
		if (each(item, i, ctx, err, errlen) != 0)
			return -1;
		if (s[len] == '\0')
			return (int)i + 1;
		s += len + 1;
	}
}

int
cli_port_number(const char *ref, uint16_t *id)
{
	uint64_t v;

	if (cli_parse_u64(ref, 0, UINT16_MAX, &v) != 0)
		return -1;
	*id = (uint16_t)v;
	return 0;
}

int
cli_port_resolve(const char *ref,
		 int (*by_name)(const char *name, uint16_t *id),
		 int (*is_valid)(uint16_t id), uint16_t *id)
{
	uint16_t n;

	if (ref == NULL || *ref == '\0')
		return -1;
	if (by_name(ref, id) == 0)
		return 0;
	if (cli_port_number(ref, &n) != 0 || !is_valid(n))
		return -1;
	*id = n;
	return 0;
}

/* ---- storing values --------------------------------------------------- */

static uint64_t
umax_of(size_t size)
{
	return size >= 8 ? UINT64_MAX : (UINT64_C(1) << (size * 8)) - 1;
}

static void
store_u(void *dest, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)dest = (uint8_t)v;
		break;
	case 2:
		*(uint16_t *)dest = (uint16_t)v;
		break;
	case 4:
		*(uint32_t *)dest = (uint32_t)v;
		break;
	default:
		*(uint64_t *)dest = v;
		break;
	}
}

static void
store_i(void *dest, size_t size, int64_t v)
{
	switch (size) {
	case 1:
		*(int8_t *)dest = (int8_t)v;
		break;
	case 2:
		*(int16_t *)dest = (int16_t)v;
		break;
	case 4:
		*(int32_t *)dest = (int32_t)v;
		break;
	default:
		*(int64_t *)dest = v;
		break;
	}
}

static bool
in_drange(const struct cli_opt *o, double v)
{
	if (o->dlo == 0.0 && o->dhi == 0.0)
		return !o->lo_open || v > 0.0;
	if (o->lo_open ? !(v > o->dlo) : !(v >= o->dlo))
		return false;
	return v <= o->dhi;
}

static const char *
unit_name(double unit_ns)
{
	if (unit_ns == 1.0)
		return "ns";
	if (unit_ns == 1e3)
		return "us";
	if (unit_ns == 1e6)
		return "ms";
	return "s";
}

/* "want ..." for a value of o that did not parse or is out of range. */
static void
want(const struct cli_opt *o, char *buf, size_t len)
{
	uint64_t hi = o->hi != 0 ? o->hi : umax_of(o->size);
	char range[96] = "a number";

	if (o->want != NULL) {
		snprintf(buf, len, "want %s", o->want);
		return;
	}
	if (o->dlo != 0.0 || o->dhi != 0.0) {
		if (isinf(o->dhi))
			snprintf(range, sizeof(range), "a number %s %g",
				 o->lo_open ? ">" : ">=", o->dlo);
		else
			snprintf(range, sizeof(range), "a number in %c%g, %g]",
				 o->lo_open ? '(' : '[', o->dlo, o->dhi);
	} else if (o->lo_open) {
		snprintf(range, sizeof(range), "a number > 0");
	}
	switch (o->kind) {
	case CLI_UINT:
		snprintf(buf, len, "want an integer in %llu..%llu",
			 (unsigned long long)o->lo, (unsigned long long)hi);
		break;
	case CLI_INT: {
		int64_t lo = o->slo, shi = o->shi;

		if (lo == 0 && shi == 0) {
			shi = (int64_t)(umax_of(o->size) >> 1);
			lo = -shi - 1;
		}
		snprintf(buf, len, "want an integer in %lld..%lld",
			 (long long)lo, (long long)shi);
		break;
	}
	case CLI_DOUBLE:
		snprintf(buf, len, "want %s", range);
		break;
	case CLI_RATE:
		snprintf(buf, len, "want %s per second (k, M, G allowed)",
			 range);
		break;
	case CLI_DURATION:
		/* "a number in [0.1, 3600]" reads "a time in [0.1, 3600] s". */
		snprintf(buf, len,
			 "want a time%s %s (or with a unit: 250ns, 1.5us, "
			 "2ms, 1s)",
			 range + strlen("a number"), unit_name(o->unit_ns));
		break;
	case CLI_NS:
		snprintf(buf, len,
			 "want a time in %llu..%llu ns (or with a "
			 "unit: 250ns, 1.5us, 2ms, 1s)",
			 (unsigned long long)o->lo, (unsigned long long)hi);
		break;
	case CLI_CHOICE: {
		size_t n = (size_t)snprintf(buf, len, "want");

		for (unsigned int i = 0; o->choices[i] != NULL && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
					      i == 0 ? " "
					      : o->choices[i + 1] == NULL
						      ? " or "
						      : ", ",
					      o->choices[i]);
		break;
	}
	case CLI_MAC:
		snprintf(buf, len, "want XX:XX:XX:XX:XX:XX");
		break;
	case CLI_IPV4:
		snprintf(buf, len, "want an IPv4 address A.B.C.D");
		break;
	case CLI_UINT_LIST:
		snprintf(buf, len,
			 "want a comma list of 1..%u integers in "
			 "%llu..%llu",
			 o->max_items, (unsigned long long)o->lo,
			 (unsigned long long)(o->hi != 0 ? o->hi : UINT32_MAX));
		break;
	default:
		snprintf(buf, len, "want a non-empty value");
		break;
	}
}

struct ulist_ctx {
	const struct cli_opt *o;
	unsigned int *out;
};

static int
ulist_item(const char *item, unsigned int i, void *ctx, char *err,
	   size_t errlen)
{
	struct ulist_ctx *c = ctx;
	uint64_t hi = c->o->hi != 0 ? c->o->hi : UINT32_MAX;
	uint64_t v;

	(void)err;
	(void)errlen;
	if (i >= c->o->max_items || cli_parse_u64(item, c->o->lo, hi, &v) != 0)
		return -1;
	c->out[i] = (unsigned int)v;
	return 0;
}

/* Parses arg into o's destination. 0, or -1 with err filled. */
static int
set_value(const struct cli_opt *o, const char *arg, char *err, size_t errlen)
{
	uint64_t u;
	int64_t s;
	double d;

	err[0] = '\0';
	switch (o->kind) {
	case CLI_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case CLI_UINT:
		if (cli_parse_u64(arg, o->lo,
				  o->hi != 0 ? o->hi : umax_of(o->size),
				  &u) != 0)
			break;
		store_u(o->dest, o->size, u);
		return 0;
	case CLI_INT: {
		int64_t lo = o->slo, hi = o->shi;

		if (lo == 0 && hi == 0) {
			hi = (int64_t)(umax_of(o->size) >> 1);
			lo = -hi - 1;
		}
		if (cli_parse_i64(arg, lo, hi, &s) != 0)
			break;
		store_i(o->dest, o->size, s);
		return 0;
	}
	case CLI_DOUBLE:
	case CLI_RATE:
	case CLI_DURATION:
		if ((o->kind == CLI_DOUBLE ? cli_parse_double(arg, &d)
		     : o->kind == CLI_RATE
			     ? cli_parse_rate(arg, &d)
			     : cli_parse_duration(arg, o->unit_ns, &d)) != 0)
			break;
		if (o->kind == CLI_DURATION)
			d /= o->unit_ns;
		if (!in_drange(o, d))
			break;
		*(double *)o->dest = d;
		return 0;
	case CLI_NS: {
		uint64_t hi = o->hi != 0 ? o->hi : UINT64_MAX;

		if (cli_parse_duration(arg, 1.0, &d) != 0 || d < 0.0 ||
		    d > 1.8e19)
			break;
		u = (uint64_t)llround(d);
		if (u < o->lo || u > hi)
			break;
		*(uint64_t *)o->dest = u;
		return 0;
	}
	case CLI_STRING:
		if (*arg == '\0')
			break;
		*(const char **)o->dest = arg;
		return 0;
	case CLI_CHOICE:
		for (unsigned int i = 0; o->choices[i] != NULL; i++) {
			if (strcmp(arg, o->choices[i]) != 0)
				continue;
			store_i(o->dest, o->size,
				o->values != NULL ? o->values[i] : (int)i);
			return 0;
		}
		break;
	case CLI_MAC:
		if (cli_parse_mac(arg, o->dest) != 0)
			break;
		return 0;
	case CLI_IPV4: {
		uint8_t ip[4];

		if (inet_pton(AF_INET, arg, ip) != 1)
			break;
		memcpy(o->dest, ip, sizeof(ip));
		return 0;
	}
	case CLI_UINT_LIST: {
		unsigned int tmp[256];
		struct ulist_ctx c = {.o = o, .out = tmp};
		int n;

		if (o->max_items > 256)
			break;
		n = cli_list(arg, ulist_item, &c, NULL, 0);
		if (n <= 0)
			break;
		memcpy(o->dest, tmp, (size_t)n * sizeof(tmp[0]));
		*o->count = (unsigned int)n;
		return 0;
	}
	case CLI_FN:
		if (o->fn(o, arg, err, errlen) != 0) {
			if (err[0] == '\0')
				want(o, err, errlen);
			return -1;
		}
		return 0;
	default:
		break;
	}
	want(o, err, errlen);
	return -1;
}

/* ---- errors and help -------------------------------------------------- */

static FILE *
err_stream(const struct cli_spec *spec)
{
	return spec->err != NULL ? spec->err : stderr;
}

static const char *
prog_name(const struct cli_spec *spec)
{
	return spec->prog != NULL ? spec->prog : "?";
}

static int __attribute__((format(printf, 2, 0)))
vusage_error(const struct cli_spec *spec, const char *fmt, va_list ap)
{
	FILE *f = err_stream(spec);

	fprintf(f, "%s: ", prog_name(spec));
	vfprintf(f, fmt, ap);
	if (spec->hint != NULL)
		fprintf(f, "\nTry '%s'.\n", spec->hint);
	else
		fprintf(f, "\nTry '%s --help'.\n", prog_name(spec));
	return CLI_ERROR;
}

int
cli_usage_error(const struct cli_spec *spec, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vusage_error(spec, fmt, ap);
	va_end(ap);
	return rc;
}

static bool
takes_arg(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_HELP &&
	       o->kind != CLI_VERSION && o->kind != CLI_SECTION;
}

/* The left part of an option's help line: "  -c, --config FILE". */
static int
left_part(const struct cli_opt *o, bool letters, char *buf, size_t len)
{
	int n;

	if (o->letter != 0)
		n = snprintf(buf, len, "  -%c, --%s", o->letter, o->name);
	else
		n = snprintf(buf, len, letters ? "      --%s" : "  --%s",
			     o->name);
	if (takes_arg(o) && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " %s",
			      o->arg != NULL ? o->arg : "VALUE");
	return n;
}

/* Lines of text, each after indent spaces but the first, which continues
 * the current line. */
static void
print_lines(FILE *f, const char *text, int indent)
{
	for (const char *p = text;;) {
		size_t n = strcspn(p, "\n");

		fprintf(f, "%.*s\n", (int)n, p);
		if (p[n] == '\0')
			return;
		p += n + 1;
		fprintf(f, "%*s", indent, "");
	}
}

/* One line of a command's help: "  NAME ARG    text". */
static void
cmd_line(FILE *f, int col, const char *name, const char *arg, const char *help)
{
	int n = fprintf(f, "  %s%s%s", name, arg != NULL ? " " : "",
			arg != NULL ? arg : "");

	if (n + 1 > col)
		fprintf(f, "\n%*s", col, "");
	else
		fprintf(f, "%*s", col - n, "");
	print_lines(f, help != NULL ? help : "", col);
}

static void
cmd_help(const struct cli_cmd *cmds, FILE *f, int col)
{
	for (const struct cli_cmd *c = cmds; c->name != NULL; c++) {
		if (c->takes == CLI_CMD_ARG) {
			cmd_line(f, col, c->name, c->arg, c->help);
			continue;
		}
		cmd_line(f, col, c->name, NULL, c->help);
		if (c->takes == CLI_CMD_OPT_ARG)
			cmd_line(f, col, c->name, c->arg, c->arg_help);
	}
}

const struct cli_cmd *
cli_cmd_pick(const struct cli_spec *spec, int n, char **words)
{
	const struct cli_cmd *c;

	if (n < 1) {
		cli_usage_error(spec, "no command given");
		return NULL;
	}
	for (c = spec->cmds; c->name != NULL; c++)
		if (strcmp(c->name, words[0]) == 0)
			break;
	if (c->name == NULL) {
		cli_usage_error(spec, "unknown command '%s'", words[0]);
		return NULL;
	}
	if (n > 2 || (n == 2 && c->takes == CLI_CMD_NO_ARG)) {
		cli_usage_error(spec, "'%s' takes %s", c->name,
				c->takes == CLI_CMD_NO_ARG ? "no argument"
							   : "one argument");
		return NULL;
	}
	if (n == 1 && c->takes == CLI_CMD_ARG) {
		cli_usage_error(spec, "'%s' needs an argument (%s)", c->name,
				c->arg != NULL ? c->arg : "ARG");
		return NULL;
	}
	return c;
}

void
cli_help(const struct cli_spec *spec, FILE *f)
{
	const struct cli_opt *o;
	bool letters = false;
	int col = 0;
	char left[128];

	for (o = spec->opts; o->kind != CLI_END; o++)
		letters |= o->kind != CLI_SECTION && o->letter != 0;
	for (o = spec->opts; o->kind != CLI_END; o++) {
		int n;

		if (o->kind == CLI_SECTION)
			continue;
		n = left_part(o, letters, left, sizeof(left));
		if (n + 2 <= HELP_COL_MAX && n + 2 > col)
			col = n + 2;
	}
	fprintf(f, "usage: %s ", prog_name(spec));
	print_lines(f, spec->usage != NULL ? spec->usage : "[options]", 0);
	if (spec->about != NULL) {
		fprintf(f, "\n");
		print_lines(f, spec->about, 0);
	}
	fprintf(f, "\n");
	if (spec->cmds != NULL) {
		fprintf(f, "Commands:\n");
		cmd_help(spec->cmds, f, col);
		fprintf(f, "\nOptions:\n");
	}
	for (o = spec->opts; o->kind != CLI_END; o++) {
		int n;

		if (o->kind == CLI_SECTION) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		n = left_part(o, letters, left, sizeof(left));
		fprintf(f, "%s", left);
		if (n + 1 > col)
			fprintf(f, "\n%*s", col, "");
		else
			fprintf(f, "%*s", col - n, "");
		if (o->def == NULL) {
			print_lines(f, o->help != NULL ? o->help : "", col);
		} else {
			/* The default ends the text. */
			const char *help = o->help != NULL ? o->help : "";
			size_t len = strlen(help) + strlen(o->def) + 16;
			char *text = malloc(len);

			if (text == NULL) {
				print_lines(f, help, col);
				continue;
			}
			snprintf(text, len, "%s%s(default %s)", help,
				 *help != '\0' ? " " : "", o->def);
			print_lines(f, text, col);
			free(text);
		}
	}
	if (spec->epilog != NULL) {
		fprintf(f, "\n");
		print_lines(f, spec->epilog, 0);
	}
	if (spec->epilog_fn != NULL)
		spec->epilog_fn(f);
}

const struct cli_opt *
cli_find(const struct cli_spec *spec, const char *name)
{
	for (const struct cli_opt *o = spec->opts; o->kind != CLI_END; o++)
		if (o->name != NULL && strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

int
cli_find_dashdash(int argc, char *const argv[])
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

int
cli_defaults(const struct cli_spec *spec)
{
	char err[CLI_ERR_MAX];

	for (const struct cli_opt *o = spec->opts; o->kind != CLI_END; o++) {
		if (o->def == NULL || !takes_arg(o))
			continue;
		if (set_value(o, o->def, err, sizeof(err)) != 0)
			return cli_usage_error(spec, "default of --%s '%s': %s",
					       o->name, o->def, err);
	}
	return 0;
}

/* ---- the walker ------------------------------------------------------- */

static unsigned int
count_opts(const struct cli_spec *spec)
{
	unsigned int n = 0;

	for (const struct cli_opt *o = spec->opts; o->kind != CLI_END; o++)
		n++;
	return n;
}

static const struct cli_opt *
by_val(const struct cli_spec *spec, int val)
{
	unsigned int i = 0;

	for (const struct cli_opt *o = spec->opts; o->kind != CLI_END;
	     o++, i++) {
		if (o->kind == CLI_SECTION)
			continue;
		if ((o->letter != 0 && o->letter == val) ||
		    (int)(OPT_VAL_BASE + i) == val)
			return o;
	}
	return NULL;
}

/* One option, found by getopt; CLI_OK, CLI_DONE or CLI_ERROR. */
static int
apply(const struct cli_spec *spec, const struct cli_opt *o, const char *arg)
{
	char err[CLI_ERR_MAX];

	switch (o->kind) {
	case CLI_HELP:
		cli_help(spec, spec->out != NULL ? spec->out : stdout);
		return CLI_DONE;
	case CLI_VERSION:
		fprintf(spec->out != NULL ? spec->out : stdout, "%s %s\n",
			prog_name(spec),
			spec->version != NULL ? spec->version : "unknown");
		return CLI_DONE;
	default:
		break;
	}
	if (set_value(o, arg, err, sizeof(err)) != 0) {
		if (takes_arg(o))
			return cli_usage_error(spec, "--%s '%s': %s", o->name,
					       arg, err);
		return cli_usage_error(spec, "--%s: %s", o->name, err);
	}
	if (o->seen != NULL)
		*o->seen = true;
	return CLI_OK;
}

int
cli_parse(const struct cli_spec *spec, int argc, char **argv, int *first)
{
	unsigned int n = count_opts(spec), i = 0, k = 0;
	struct option *longopts = calloc(n + 1, sizeof(*longopts));
	char *shortopts = malloc(2 * n + 3);
	size_t s = 0;
	int rc = CLI_OK, opt;

	if (longopts == NULL || shortopts == NULL) {
		free(longopts);
		free(shortopts);
		return cli_usage_error(spec, "out of memory");
	}
	if (spec->stop_at_arg)
		shortopts[s++] = '+';
	/* ':' first: a missing value is told apart from an unknown option. */
	shortopts[s++] = ':';
	for (const struct cli_opt *o = spec->opts; o->kind != CLI_END;
	     o++, i++) {
		if (o->kind == CLI_SECTION)
			continue;
		longopts[k].name = o->name;
		longopts[k].has_arg =
			takes_arg(o) ? required_argument : no_argument;
		longopts[k].val =
			o->letter != 0 ? o->letter : (int)(OPT_VAL_BASE + i);
		k++;
		if (o->letter != 0) {
			shortopts[s++] = (char)o->letter;
			if (takes_arg(o))
				shortopts[s++] = ':';
		}
	}
	shortopts[s] = '\0';

	rc = cli_defaults(spec);
	/* glibc: 0 re-initialises getopt completely, for a tool that parsed
	 * before (the EAL) and for tests that parse many times. */
	optind = 0;
	opterr = 0;
	while (rc == CLI_OK && (opt = getopt_long(argc, argv, shortopts,
						  longopts, NULL)) != -1) {
		const struct cli_opt *o;

		if (opt == ':') {
			o = by_val(spec, optopt);
			rc = cli_usage_error(
				spec, "--%s needs a value (%s)",
				o != NULL ? o->name : "?",
				o != NULL && o->arg != NULL ? o->arg : "VALUE");
		} else if (opt == '?') {
			o = optopt != 0 ? by_val(spec, optopt) : NULL;
			if (o != NULL && !takes_arg(o))
				rc = cli_usage_error(
					spec, "--%s takes no value", o->name);
			else if (optopt != 0 && optopt < OPT_VAL_BASE)
				rc = cli_usage_error(
					spec, "unknown option '-%c'", optopt);
			else
				rc = cli_usage_error(spec,
						     "unknown option '%s'",
						     argv[optind - 1]);
		} else {
			rc = apply(spec, by_val(spec, opt), optarg);
		}
	}
	free(longopts);
	free(shortopts);
	if (first != NULL)
		*first = optind;
	return rc;
}
