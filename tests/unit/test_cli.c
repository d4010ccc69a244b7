/* SPDX-License-Identifier: BSD-3-Clause
 * The command-line layer (src/common): the value parsers, the "--"
 * finder, the table walker (defaults, ranges, short and long forms, errors and
 * their one channel, --help from the table) and the progress line's estimate
 * and text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"

static void
test_u64(void **state)
{
	static const char *const bad[] = {
		"",
		"-1",
		"+1",
		" 1",
		"1 ",
		"0x10",
		"1e3",
		"12a",
		"1.0",
		"18446744073709551616",
		"99999999999999999999",
	};
	uint64_t v = 7;

	(void)state;
	/* Decimal only: a leading zero is no octal prefix. */
	assert_int_equal(cli_parse_u64("010", 0, 100, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(cli_parse_u64("0", 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(
		cli_parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		if (cli_parse_u64(bad[i], 0, UINT64_MAX, &v) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(v, 7);
	}
	/* The range is inclusive at both ends. */
	assert_int_equal(cli_parse_u64("5", 5, 9, &v), 0);
	assert_int_equal(cli_parse_u64("9", 5, 9, &v), 0);
	assert_int_equal(cli_parse_u64("4", 5, 9, &v), -1);
	assert_int_equal(cli_parse_u64("10", 5, 9, &v), -1);
}

static void
test_i64(void **state)
{
	int64_t v = 0;

	(void)state;
	assert_int_equal(cli_parse_i64("-010", -100, 100, &v), 0);
	assert_int_equal(v, -10);
	assert_int_equal(
		cli_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX, &v),
		0);
	assert_true(v == INT64_MIN);
	assert_int_equal(
		cli_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX, &v),
		-1);
	assert_int_equal(cli_parse_i64("-", -5, 5, &v), -1);
	assert_int_equal(cli_parse_i64("--1", -5, 5, &v), -1);
	assert_int_equal(cli_parse_i64("+1", -5, 5, &v), -1);
	assert_int_equal(cli_parse_i64("-6", -5, 5, &v), -1);
}

static void
test_double_rate_duration(void **state)
{
	static const char *const bad[] = {
		"",    ".",   "-",     "+1",  " 1", "0x10", "0x1p3",
		"inf", "nan", "1e400", "1,5", "1e", "5k",
	};
	double v;

	(void)state;
	assert_int_equal(cli_parse_double("2.25", &v), 0);
	assert_true(v == 2.25);
	assert_int_equal(cli_parse_double("-0.5", &v), 0);
	assert_true(v == -0.5);
	assert_int_equal(cli_parse_double("1e3", &v), 0);
	assert_true(v == 1000.0);
	assert_int_equal(cli_parse_double("010", &v), 0);
	assert_true(v == 10.0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_parse_double(bad[i], &v) != -1)
			fail_msg("accepted '%s'", bad[i]);

	assert_int_equal(cli_parse_rate("500", &v), 0);
	assert_true(v == 500.0);
	assert_int_equal(cli_parse_rate("2.5k", &v), 0);
	assert_true(v == 2500.0);
	assert_int_equal(cli_parse_rate("1M", &v), 0);
	assert_true(v == 1e6);
	assert_int_equal(cli_parse_rate("2G", &v), 0);
	assert_true(v == 2e9);
	assert_int_equal(cli_parse_rate("1m", &v), -1);
	assert_int_equal(cli_parse_rate("1kk", &v), -1);
	assert_int_equal(cli_parse_rate("k", &v), -1);

	assert_int_equal(cli_parse_duration("250ns", 1e9, &v), 0);
	assert_true(v == 250.0);
	assert_int_equal(cli_parse_duration("1.5us", 1e9, &v), 0);
	assert_true(v == 1500.0);
	assert_int_equal(cli_parse_duration("2ms", 1e9, &v), 0);
	assert_true(v == 2e6);
	assert_int_equal(cli_parse_duration("3s", 1.0, &v), 0);
	assert_true(v == 3e9);
	/* A bare number is in the caller's unit. */
	assert_int_equal(cli_parse_duration("0.5", 1e9, &v), 0);
	assert_true(v == 5e8);
	assert_int_equal(cli_parse_duration("7", 1.0, &v), 0);
	assert_true(v == 7.0);
	assert_int_equal(cli_parse_duration("1min", 1.0, &v), -1);
	assert_int_equal(cli_parse_duration("us", 1.0, &v), -1);
	assert_int_equal(cli_parse_duration("1 s", 1.0, &v), -1);
}

static void
test_mac(void **state)
{
	static const char *const bad[] = {
		"00:11:22:33:44",
		"00:11:22:33:44:55:66",
		"0:11:22:33:44:55",
		"00-11-22-33-44-55",
		"00:11:22:33:44:5g",
		"00:11:22:33:44:55 ",
		"",
	};
	const uint8_t want[6] = {0x02, 0xab, 0xcd, 0x00, 0x10, 0xff};
	uint8_t mac[6], keep[6];

	(void)state;
	assert_int_equal(cli_parse_mac("02:ab:CD:00:10:ff", mac), 0);
	assert_memory_equal(mac, want, 6);
	memcpy(keep, mac, 6);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli_parse_mac(bad[i], mac) != -1)
			fail_msg("accepted '%s'", bad[i]);
		assert_memory_equal(mac, keep, 6);
	}
}

static int
sum_item(const char *item, unsigned int i, void *ctx, char *err, size_t errlen)
{
	uint64_t v;

	if (cli_parse_u64(item, 0, 100, &v) != 0) {
		snprintf(err, errlen, "bad '%s' at %u", item, i);
		return -1;
	}
	*(uint64_t *)ctx += v;
	return 0;
}

static void
test_list(void **state)
{
	static const char *const bad[] = {"", ",", "1,", ",1", "1,,2", "1,x"};
	uint64_t sum = 0;
	char err[64];

	(void)state;
	assert_int_equal(cli_list("1,20,300", sum_item, &sum, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "bad '300' at 2");
	sum = 0;
	assert_int_equal(cli_list("1,20,30", sum_item, &sum, err, sizeof(err)),
			 3);
	assert_int_equal(sum, 51);
	assert_int_equal(cli_list("7", sum_item, &sum, err, sizeof(err)), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cli_list(bad[i], sum_item, &sum, err, sizeof(err)) != -1)
			fail_msg("accepted '%s'", bad[i]);
}

/* A fake device table: "net_a" is port 3, "1" is the name of port 5;
 * ports 0..5 exist. */
static int
fake_by_name(const char *name, uint16_t *id)
{
	if (strcmp(name, "net_a") == 0)
		*id = 3;
	else if (strcmp(name, "1") == 0)
		*id = 5;
	else
		return -1;
	return 0;
}

static int
fake_valid(uint16_t id)
{
	return id <= 5;
}

static void
test_port(void **state)
{
	uint16_t id = 99;

	(void)state;
	assert_int_equal(
		cli_port_resolve("net_a", fake_by_name, fake_valid, &id), 0);
	assert_int_equal(id, 3);
	/* A name wins over the number it spells. */
	assert_int_equal(cli_port_resolve("1", fake_by_name, fake_valid, &id),
			 0);
	assert_int_equal(id, 5);
	assert_int_equal(cli_port_resolve("04", fake_by_name, fake_valid, &id),
			 0);
	assert_int_equal(id, 4);
	id = 99;
	assert_int_equal(cli_port_resolve("6", fake_by_name, fake_valid, &id),
			 -1);
	assert_int_equal(
		cli_port_resolve("net_b", fake_by_name, fake_valid, &id), -1);
	assert_int_equal(cli_port_resolve("", fake_by_name, fake_valid, &id),
			 -1);
	assert_int_equal(cli_port_resolve("-1", fake_by_name, fake_valid, &id),
			 -1);
	assert_int_equal(id, 99);
	assert_int_equal(cli_port_number("65535", &id), 0);
	assert_int_equal(id, 65535);
	assert_int_equal(cli_port_number("65536", &id), -1);
	assert_int_equal(cli_port_number("0x1", &id), -1);
}

/* ---- where the tool's own options begin ---- */

/* cli_find_dashdash() over "prog" and then words. */
static int
dashdash_v(const char *const *words)
{
	char *argv[16];
	int argc = 0;

	argv[argc++] = (char *)"prog";
	for (; *words != NULL; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	return cli_find_dashdash(argc, argv);
}

#define DASHDASH(...) dashdash_v((const char *const[]){__VA_ARGS__, NULL})

static void
test_dashdash(void **state)
{
	char *lead[] = {(char *)"--", (char *)"-l", (char *)"--", NULL};

	(void)state;
	/* none: argc, the tool has no options */
	assert_int_equal(dashdash_v((const char *const[]){NULL}), 1);
	assert_int_equal(DASHDASH("-l", "0-1", "--no-huge"), 4);
	/* first, last, and the first of two */
	assert_int_equal(DASHDASH("--", "--cores", "2"), 1);
	assert_int_equal(DASHDASH("-l", "0", "--"), 3);
	assert_int_equal(DASHDASH("-a", "x", "--", "--port", "--"), 3);
	/* only the word itself */
	assert_int_equal(DASHDASH("---", "--x", "-", "--=", "-- ", ""), 7);
	/* a "--" meant as an EAL option's value ends the EAL's words */
	assert_int_equal(DASHDASH("--file-prefix", "--", "--cores", "2"), 2);
	/* argv[0] is the program whatever it says; argc bounds the search */
	assert_int_equal(cli_find_dashdash(3, lead), 2);
	assert_int_equal(cli_find_dashdash(2, lead), 2);
}

/* ---- the table walker ---- */

static struct {
	uint32_t count;
	uint16_t port;
	int32_t offset;
	double rate, secs, ratio;
	uint64_t delay_ns;
	const char *name;
	int mode;
	uint8_t mac[6];
	uint8_t ip[4];
	unsigned int cpus[4], n_cpus;
	bool json, verbose;
	bool count_seen;
	int odd;
} t;

static int
odd_fn(const struct cli_opt *o, const char *arg, char *err, size_t errlen)
{
	uint64_t v;

	if (cli_parse_u64(arg, 0, 99, &v) != 0 || v % 2 == 0) {
		snprintf(err, errlen, "want an odd number below 100");
		return -1;
	}
	*(int *)o->dest = (int)v;
	return 0;
}

static const char *const modes[] = {"fast", "slow", NULL};
static const int mode_values[] = {10, 20};

static const struct cli_opt topts[] = {
	{.kind = CLI_SECTION, .help = "Numbers:"},
	{.name = "count",
	 .letter = 'c',
	 .kind = CLI_UINT,
	 CLI_DEST(t.count),
	 .lo = 1,
	 .hi = 1000,
	 .def = "64",
	 .arg = "N",
	 .seen = &t.count_seen,
	 .help = "how many"},
	{.name = "port",
	 .kind = CLI_UINT,
	 CLI_DEST(t.port),
	 .def = "9000",
	 .arg = "P",
	 .help = "UDP port"},
	{.name = "offset",
	 .kind = CLI_INT,
	 CLI_DEST(t.offset),
	 .slo = -5,
	 .shi = 5,
	 .arg = "N",
	 .help = "signed"},
	{.name = "rate",
	 .kind = CLI_RATE,
	 CLI_DEST(t.rate),
	 .dlo = 0.0,
	 .dhi = 1e9,
	 .lo_open = true,
	 .def = "10k",
	 .arg = "RPS",
	 .help = "requests per second"},
	{.name = "duration",
	 .kind = CLI_DURATION,
	 CLI_DEST(t.secs),
	 .unit_ns = 1e9,
	 .dlo = 0.0,
	 .dhi = 3600.0,
	 .def = "1",
	 .arg = "SEC",
	 .help = "how long,\nin seconds"},
	{.name = "ratio",
	 .kind = CLI_DOUBLE,
	 CLI_DEST(t.ratio),
	 .arg = "X",
	 .help = "any number"},
	{.name = "delay",
	 .kind = CLI_NS,
	 CLI_DEST(t.delay_ns),
	 .hi = 4000000000u,
	 .arg = "T",
	 .help = "a delay"},
	{.kind = CLI_SECTION, .help = "Others:"},
	{.name = "name",
	 .letter = 'n',
	 .kind = CLI_STRING,
	 CLI_DEST(t.name),
	 .arg = "NAME",
	 .help = "a name"},
	{.name = "mode",
	 .kind = CLI_CHOICE,
	 CLI_DEST(t.mode),
	 .choices = modes,
	 .values = mode_values,
	 .def = "fast",
	 .arg = "MODE",
	 .help = "fast or slow"},
	{.name = "mac",
	 .kind = CLI_MAC,
	 CLI_DEST(t.mac),
	 .def = "ff:ff:ff:ff:ff:ff",
	 .arg = "MAC",
	 .help = "an address"},
	{.name = "ip",
	 .kind = CLI_IPV4,
	 CLI_DEST(t.ip),
	 .def = "10.0.0.1",
	 .arg = "A.B.C.D",
	 .help = "an IPv4 address"},
	{.name = "cpus",
	 .kind = CLI_UINT_LIST,
	 CLI_DEST(t.cpus),
	 .lo = 0,
	 .hi = 63,
	 .max_items = 4,
	 .count = &t.n_cpus,
	 .arg = "LIST",
	 .help = "CPUs"},
	{.name = "odd",
	 .kind = CLI_FN,
	 CLI_DEST(t.odd),
	 .fn = odd_fn,
	 .arg = "N",
	 .help = "an odd number"},
	{.name = "json",
	 .letter = 'j',
	 .kind = CLI_FLAG,
	 CLI_DEST(t.json),
	 .help = "JSON"},
	{.name = "verbose",
	 .letter = 'v',
	 .kind = CLI_FLAG,
	 CLI_DEST(t.verbose),
	 .help = "more"},
	CLI_OPT_HELP('h'),
	CLI_OPT_VERSION('V'),
	{.kind = CLI_END},
};

static char *out_buf, *err_buf;
static size_t out_len, err_len;

/* Parses a NULL-terminated word list after "tool"; output and errors go
 * to the buffers. */
static int
parse_v(bool stop, int *first, const char *const *words)
{
	char *argv[32];
	int argc = 0, rc;
	FILE *out, *err;
	struct cli_spec spec = {
		.prog = "tool",
		.usage = "[options] [WORD]",
		.about = "A tool to test the walker.",
		.version = "1.2.3",
		.opts = topts,
		.stop_at_arg = stop,
	};

	free(out_buf);
	free(err_buf);
	out = open_memstream(&out_buf, &out_len);
	err = open_memstream(&err_buf, &err_len);
	assert_non_null(out);
	assert_non_null(err);
	spec.out = out;
	spec.err = err;
	memset(&t, 0, sizeof(t));
	argv[argc++] = (char *)"tool";
	for (; *words != NULL; words++)
		argv[argc++] = (char *)*words;
	argv[argc] = NULL;
	rc = cli_parse(&spec, argc, argv, first);
	fclose(out);
	fclose(err);
	return rc;
}

#define PARSE(...)                                                             \
	parse_v(false, NULL, (const char *const[]){__VA_ARGS__, NULL})

static void
test_walker_defaults_and_values(void **state)
{
	const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const uint8_t ip[4] = {10, 0, 0, 1};
	const uint8_t mac[6] = {2, 0, 0, 0, 0, 1};
	int first;

	(void)state;
	assert_int_equal(parse_v(false, &first, (const char *const[]){NULL}),
			 CLI_OK);
	assert_int_equal(first, 1);
	assert_int_equal(t.count, 64);
	assert_false(t.count_seen);
	assert_int_equal(t.port, 9000);
	assert_true(t.rate == 10000.0);
	assert_true(t.secs == 1.0);
	assert_int_equal(t.mode, 10);
	assert_memory_equal(t.mac, bcast, 6);
	assert_memory_equal(t.ip, ip, 4);
	assert_null(t.name);
	assert_false(t.json);
	assert_int_equal(err_len, 0);

	assert_int_equal(PARSE("--count", "010", "-n", "x", "--rate", "1.5M",
			       "--duration", "250ms", "--delay", "1.5us",
			       "--mode", "slow", "--mac", "02:00:00:00:00:01",
			       "--ip", "192.168.0.9", "--cpus", "3,010,63",
			       "--odd", "7", "-jv", "--offset", "-5", "--ratio",
			       "-2.5", "--port=65535"),
			 CLI_OK);
	/* Decimal: "010" is ten. */
	assert_int_equal(t.count, 10);
	assert_true(t.count_seen);
	assert_string_equal(t.name, "x");
	assert_true(t.rate == 1.5e6);
	assert_true(t.secs == 0.25);
	assert_int_equal(t.delay_ns, 1500);
	assert_int_equal(t.mode, 20);
	assert_memory_equal(t.mac, mac, 6);
	assert_int_equal(t.ip[0], 192);
	assert_int_equal(t.ip[3], 9);
	assert_int_equal(t.n_cpus, 3);
	assert_int_equal(t.cpus[0], 3);
	assert_int_equal(t.cpus[1], 10);
	assert_int_equal(t.cpus[2], 63);
	assert_int_equal(t.odd, 7);
	assert_true(t.json && t.verbose);
	assert_int_equal(t.offset, -5);
	assert_true(t.ratio == -2.5);
	assert_int_equal(t.port, 65535);
}

static void
test_walker_words(void **state)
{
	int first;

	(void)state;
	/* Options and words mix; the words come last. */
	assert_int_equal(parse_v(false, &first,
				 (const char *const[]){"stats", "-j", NULL}),
			 CLI_OK);
	assert_true(t.json);
	assert_int_equal(first, 2);
	/* Or options end at the first word, which the tool keeps. */
	assert_int_equal(
		parse_v(true, &first,
			(const char *const[]){"-v", "stats", "-j", NULL}),
		CLI_OK);
	assert_true(t.verbose);
	assert_false(t.json);
	assert_int_equal(first, 2);
	assert_int_equal(
		parse_v(true, &first, (const char *const[]){"--", "-j", NULL}),
		CLI_OK);
	assert_false(t.json);
	assert_int_equal(first, 2);
}

static void
test_walker_errors(void **state)
{
	static const char *const bad[][3] = {
		{"--count", "0"},
		{"--count", "1001"},
		{"--count", "0x10"},
		{"--count", "-1"},
		{"--port", "65536"},
		{"--offset", "6"},
		{"--rate", "0"},
		{"--rate", "2G"},
		{"--rate", "1m"},
		{"--duration", "3601"},
		{"--duration", "-1"},
		{"--duration", "1h"},
		{"--delay", "5s"},
		{"--ratio", "inf"},
		{"--name", ""},
		{"--mode", "medium"},
		{"--mac", "00:11:22:33:44"},
		{"--ip", "10.0.0"},
		{"--cpus", "1,2,3,4,5"},
		{"--cpus", "64"},
		{"--cpus", "1,,2"},
		{"--odd", "8"},
		{"--nope"},
		{"-x"},
		{"--count"},
		{"--json=1"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *w[4] = {bad[i][0], bad[i][1], bad[i][2], NULL};

		if (parse_v(false, NULL, w) != CLI_ERROR)
			fail_msg("accepted: %s %s", bad[i][0],
				 bad[i][1] ? bad[i][1] : "");
		/* One channel: "tool: message", then the hint. */
		if (strncmp(err_buf, "tool: ", 6) != 0 ||
		    strstr(err_buf, "\nTry 'tool --help'.\n") == NULL)
			fail_msg("message for %s: %s", bad[i][0], err_buf);
		assert_int_equal(out_len, 0);
	}
	/* The messages name the option, the value and what was wanted. */
	assert_int_equal(PARSE("--count", "1001"), CLI_ERROR);
	assert_string_equal(err_buf, "tool: --count '1001': want an integer "
				     "in 1..1000\nTry 'tool --help'.\n");
	assert_int_equal(PARSE("--mode", "medium"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "want fast or slow"));
	assert_int_equal(PARSE("--odd", "8"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "--odd '8': want an odd number"));
	assert_int_equal(PARSE("--rate", "0"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "(0, 1e+09]"));
	assert_int_equal(PARSE("--nope"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "unknown option '--nope'"));
	assert_int_equal(PARSE("--count"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "--count needs a value (N)"));
	assert_int_equal(PARSE("-c"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "--count needs a value (N)"));
	assert_int_equal(PARSE("--json=1"), CLI_ERROR);
	assert_non_null(strstr(err_buf, "--json takes no value"));
	/* A later option is not read after an error. */
	assert_int_equal(PARSE("--count", "0", "--help"), CLI_ERROR);
	assert_int_equal(out_len, 0);
}

static void
test_walker_help(void **state)
{
	(void)state;
	assert_int_equal(PARSE("--help"), CLI_DONE);
	assert_int_equal(err_len, 0);
	assert_true(strncmp(out_buf,
			    "usage: tool [options] [WORD]\n\nA tool "
			    "to test the walker.\n\nNumbers:\n",
			    strlen("usage: tool [options] [WORD]\n\nA tool to "
				   "test the walker.\n\nNumbers:\n")) == 0);
	/* Letters and long names aligned, the default from the table,
	 * continuation lines under the text. */
	assert_non_null(strstr(out_buf, "\n  -c, --count N       how many "
					"(default 64)\n"));
	assert_non_null(strstr(out_buf, "\n      --port P        UDP port "
					"(default 9000)\n"));
	assert_non_null(strstr(out_buf, "\n      --duration SEC  how long,\n"
					"                      in seconds "
					"(default 1)\n"));
	assert_non_null(strstr(out_buf, "\n  -j, --json          JSON\n"));
	assert_non_null(strstr(out_buf, "\nOthers:\n"));
	assert_int_equal(PARSE("-h"), CLI_DONE);
	assert_int_equal(PARSE("-V"), CLI_DONE);
	assert_string_equal(out_buf, "tool 1.2.3\n");
}

/* ---- the progress line ---- */

static void
test_progress(void **state)
{
	char buf[128];
	struct cli_progress p;

	(void)state;
	assert_true(cli_progress_eta(0, 10, 5.0) < 0.0);
	assert_true(cli_progress_eta(2, 10, 5.0) == 20.0);
	assert_true(cli_progress_eta(10, 10, 5.0) == 0.0);
	assert_true(cli_progress_eta(12, 10, 5.0) == 0.0);

	cli_progress_secs(buf, sizeof(buf), 42.4);
	assert_string_equal(buf, "42s");
	cli_progress_secs(buf, sizeof(buf), 185.0);
	assert_string_equal(buf, "3m05s");
	cli_progress_secs(buf, sizeof(buf), 7620.0);
	assert_string_equal(buf, "2h07m");
	cli_progress_secs(buf, sizeof(buf), -1.0);
	assert_string_equal(buf, "0s");

	cli_progress_format(buf, sizeof(buf), "sweep", 0, 10, 0.2);
	assert_string_equal(buf, "sweep: step 1/10, 0s elapsed");
	cli_progress_format(buf, sizeof(buf), "sweep", 2, 10, 65.0);
	assert_string_equal(buf, "sweep: step 3/10, 1m05s elapsed, ~4m20s "
				 "left");

	/* Not a terminal: nothing is drawn. */
	{
		char *mem = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&mem, &len);

		cli_progress_start(&p, f, false, "sweep", 3);
		assert_false(p.on);
		cli_progress_step(&p, 1);
		cli_progress_end(&p);
		fclose(f);
		assert_int_equal(len, 0);
		free(mem);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_i64),
		cmocka_unit_test(test_double_rate_duration),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_port),
		cmocka_unit_test(test_dashdash),
		cmocka_unit_test(test_walker_defaults_and_values),
		cmocka_unit_test(test_walker_words),
		cmocka_unit_test(test_walker_errors),
		cmocka_unit_test(test_walker_help),
		cmocka_unit_test(test_progress),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	free(out_buf);
	free(err_buf);
	return rc;
}
