/* SPDX-License-Identifier: BSD-3-Clause
 * The command-line layer every turbolb tool parses its options through.
 *
 * A tool describes its options once, in a table of struct cli_opt: the
 * long name, the short letter, the kind of argument, where the value goes,
 * the accepted range, the default and the help text. cli_parse() walks
 * argv with getopt_long built from that table, converts and range-checks
 * every value, prints --help generated from the same table, and reports
 * every mistake the same way: "PROG: message" and "Try 'PROG --help'." on
 * the error stream, after which the tool exits with CLI_EXIT_USAGE (2).
 *
 * Adopting it in a tool:
 *
 *	static struct my_opts o;
 *	static const struct cli_opt opts[] = {
 *		{ .name = "port", .letter = 'p', .kind = CLI_UINT,
 *		  CLI_DEST(o.port), .lo = 1, .hi = 65535, .def = "9000",
 *		  .arg = "PORT", .help = "UDP port to listen on" },
 *		{ .name = "json", .kind = CLI_FLAG, CLI_DEST(o.json),
 *		  .help = "print JSON" },
 *		CLI_OPT_HELP('h'),
 *		{ .kind = CLI_END },
 *	};
 *	static const struct cli_spec spec = {
 *		.prog = "my-tool", .usage = "[options]", .opts = opts,
 *	};
 *	int first;
 *	switch (cli_parse(&spec, argc, argv, &first)) {
 *	case CLI_DONE: return 0;             (help or version printed)
 *	case CLI_ERROR: return CLI_EXIT_USAGE;
 *	}
 *
 * Every option with a .def gets that default before argv is read, parsed
 * by the same code as a value on the command line, and shown in --help.
 * Checks that involve several options belong to the tool, after
 * cli_parse(); cli_usage_error() reports them through the same channel.
 *
 * All numbers are decimal: "010" is ten, never eight, and "0x10" is an
 * error. No DPDK here: a port given by name is resolved by the caller's
 * lookup function (cli_port_resolve()).
 */
#ifndef TLB_CLI_H
#define TLB_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status of a tool on a usage error. */
#define CLI_EXIT_USAGE 2

/* Results of cli_parse(). */
#define CLI_OK    0  /* options parsed; the tool runs */
#define CLI_DONE  1  /* --help or --version printed; the tool exits 0 */
#define CLI_ERROR -1 /* usage error reported; exit CLI_EXIT_USAGE */

/* Room for one parser's explanation of a bad value. */
#define CLI_ERR_MAX 160

enum cli_kind {
	CLI_END,       /* ends a table: { .kind = CLI_END } */
	CLI_SECTION,   /* no option: .help is a heading in --help */
	CLI_FLAG,      /* no argument; sets the bool at dest */
	CLI_UINT,      /* unsigned integer of .size bytes, in [.lo, .hi] */
	CLI_INT,       /* signed integer of .size bytes, in [.slo, .shi] */
	CLI_DOUBLE,    /* decimal number, double, in [.dlo, .dhi] */
	CLI_RATE,      /* per-second rate, double: 500, 2.5k, 1M, 1G */
	CLI_DURATION,  /* double in units of .unit_ns: a bare number is in
			* that unit, else 250ns, 1.5us, 2ms, 1s */
	CLI_NS,        /* uint64_t nanoseconds: a bare number is ns, else as
			* CLI_DURATION; rounded to the nearest ns */
	CLI_STRING,    /* const char * into argv; non-empty */
	CLI_CHOICE,    /* one of .choices; stores .values[i] (or i) as an
			* integer of .size bytes */
	CLI_MAC,       /* uint8_t[6] from XX:XX:XX:XX:XX:XX */
	CLI_IPV4,      /* uint8_t[4], network order, from A.B.C.D */
	CLI_UINT_LIST, /* comma list of unsigned int in [.lo, .hi], at most
			* .max_items, the count to *.count */
	CLI_FN,        /* the tool's own parser: .fn */
	CLI_HELP,      /* prints --help to the output stream: CLI_DONE */
	CLI_VERSION,   /* prints "PROG VERSION": CLI_DONE */
};

struct cli_opt;

/* A tool's own value parser: 0, or -1 with err (errlen bytes) saying what
 * was wanted, e.g. "want poisson or fixed". */
typedef int (*cli_fn)(const struct cli_opt *opt, const char *arg, char *err,
		      size_t errlen);

struct cli_opt {
	const char *name; /* long name, without "--" */
	int letter;       /* short option letter, or 0 */
	enum cli_kind kind;
	void *dest;       /* where the value goes (see the kinds) */
	size_t size;      /* sizeof(*dest), for integer kinds */
	uint64_t lo, hi;  /* CLI_UINT, CLI_UINT_LIST range; hi 0: the
			   * type's maximum */
	int64_t slo, shi; /* CLI_INT range; both 0: the type's range */
	double dlo, dhi;  /* CLI_DOUBLE, CLI_RATE, CLI_DURATION range,
			   * in dest's unit; both 0: any finite value */
	bool lo_open;     /* the lower double bound itself is refused */
	double unit_ns;   /* CLI_DURATION: ns per unit of dest (1e9:
			   * seconds) */
	const char *const *choices; /* CLI_CHOICE: NULL-terminated names */
	const int *values;          /* CLI_CHOICE: the value of each name */
	unsigned int max_items;     /* CLI_UINT_LIST: room at dest */
	unsigned int *count;        /* CLI_UINT_LIST: items stored */
	cli_fn fn;                  /* CLI_FN */
	bool *seen;                 /* set when the option is given */
	const char *def;  /* default, as it would be typed; NULL: none */
	const char *arg;  /* argument's name in --help, e.g. "N" */
	const char *help; /* text; '\n' starts a continuation line */
	const char *want; /* replaces the generated "want ..." of an
			   * error, e.g. "requests/s in (0, 1e9]" */
};

/* dest and size of an option from its destination lvalue. */
#define CLI_DEST(x) .dest = &(x), .size = sizeof(x)

/* The --help and --version rows of a table, in the words every tool
 * uses; letter: the short option ('h', 'V'), or 0 for none. */
#define CLI_OPT_HELP(letter_)                                                  \
	{                                                                      \
		.name = "help", .letter = (letter_), .kind = CLI_HELP,         \
		.help = "show this help"                                       \
	}
#define CLI_OPT_VERSION(letter_)                                               \
	{                                                                      \
		.name = "version", .letter = (letter_), .kind = CLI_VERSION,   \
		.help = "show the version"                                     \
	}

/* A subcommand, as in "turbolbctl stats": the first word after the
 * options. A table of them ends with a NULL name. */
enum cli_cmd_arg {
	CLI_CMD_NO_ARG,  /* the command alone */
	CLI_CMD_OPT_ARG, /* with or without one argument */
	CLI_CMD_ARG,     /* with exactly one argument */
};

struct cli_cmd {
	const char *name;
	enum cli_cmd_arg takes;
	const char *arg;      /* the argument's name in --help */
	const char *help;     /* the command alone (CLI_CMD_ARG: with it) */
	const char *arg_help; /* CLI_CMD_OPT_ARG: the command with it */
	/* Runs it: arg is NULL when none was given; returns the exit
	 * status. */
	int (*run)(const struct cli_cmd *cmd, const char *arg, void *ctx);
	const void *data; /* the tool's own, for run */
};

struct cli_spec {
	const char *prog;           /* in messages; default argv[0] */
	const char *usage;          /* what follows "usage: PROG "; lines
				     * after a '\n' are printed as they are */
	const char *about;          /* paragraph after the usage line(s) */
	const char *epilog;         /* text after the options */
	void (*epilog_fn)(FILE *f); /* printed after epilog */
	const char *version;        /* for CLI_VERSION */
	const char *hint;           /* "Try 'HINT'." on errors; default
				     * "PROG --help" */
	const struct cli_opt *opts;
	const struct cli_cmd *cmds; /* listed in --help before the options */
	bool stop_at_arg;           /* options end at the first non-option word
				     * (the words after it are left for the tool,
				     * e.g. EAL arguments); else options and words
				     * may mix and the words come last */
	FILE *out, *err;            /* help and errors; NULL: stdout, stderr */
};

/*
 * Applies the defaults, then parses argv[1..] (argv[0] is the program).
 * Returns CLI_OK with *first (if not NULL) the index of the first word
 * that is no option, CLI_DONE after --help or --version, or CLI_ERROR
 * after reporting a usage error. Resets getopt, so it may be called again.
 */
int cli_parse(const struct cli_spec *spec, int argc, char **argv, int *first);

/* Sets every option that has a default to it (cli_parse() does this
 * first). Returns 0, or -1 (reported) when a default does not parse. */
int cli_defaults(const struct cli_spec *spec);

/* The generated --help. */
void cli_help(const struct cli_spec *spec, FILE *f);

/* Reports a usage error: "PROG: message" and the hint line on the error
 * stream. Returns CLI_ERROR. */
int cli_usage_error(const struct cli_spec *spec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The command that words[0..n-1] name, its argument count checked;
 * NULL after a usage error was reported (no word, an unknown command, a
 * missing or an extra argument). */
const struct cli_cmd *cli_cmd_pick(const struct cli_spec *spec, int n,
				   char **words);

/* Finds an option of the table by long name, NULL if none. */
const struct cli_opt *cli_find(const struct cli_spec *spec, const char *name);

/* Where a tool's own options begin on a command line that gives the
 * EAL's first, "PROG [EAL args] -- [options]": the index of the first of
 * argv[1..argc-1] that is exactly "--", or argc if none is. Only the
 * words are looked at, so a "--" meant as the value of an EAL option
 * ends the EAL's arguments all the same. */
int cli_find_dashdash(int argc, char *const argv[]);

/* ---- value parsers: 0 with *v set, or -1 with *v untouched ---- */

/* Unsigned decimal in [lo, hi]: digits only, no sign, no space. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v);
/* Signed decimal in [lo, hi]: an optional '-', then digits. */
int cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *v);
/* Decimal number: [-]DIGITS[.DIGITS][e[+-]DIGITS], finite. No hex, no
 * inf or nan, no leading '+' or space. */
int cli_parse_double(const char *s, double *v);
/* A decimal number with an optional k, K (1e3), M (1e6) or G (1e9). */
int cli_parse_rate(const char *s, double *v);
/* A decimal number with an optional unit ns, us, ms or s; a bare number
 * is in units of bare_ns nanoseconds. *ns is the duration in ns. */
int cli_parse_duration(const char *s, double bare_ns, double *ns);
/* XX:XX:XX:XX:XX:XX, two hex digits each, either case. */
int cli_parse_mac(const char *s, uint8_t mac[6]);

/*
 * Walks a comma list: calls each(item, index, ctx) for every item in
 * order, the item NUL-terminated in a private buffer. Empty items (",",
 * "1,,2", "1,") and items longer than CLI_ITEM_MAX - 1 are errors.
 * Returns the number of items, or -1 (each's -1, or a bad item, with err
 * filled when err is not NULL).
 */
#define CLI_ITEM_MAX 64
int cli_list(const char *s,
	     int (*each)(const char *item, unsigned int i, void *ctx, char *err,
			 size_t errlen),
	     void *ctx, char *err, size_t errlen);

/*
 * A port reference: a device name, or else a port number. by_name(name,
 * &id) returns 0 when a port has that name (rte_eth_dev_get_port_by_name
 * fits); is_valid(id) is non-zero when a port has that number
 * (rte_eth_dev_is_valid_port fits). A name wins over a number, so a port
 * named "1" is found by its name. Returns 0 with *id, or -1.
 */
int cli_port_resolve(const char *ref,
		     int (*by_name)(const char *name, uint16_t *id),
		     int (*is_valid)(uint16_t id), uint16_t *id);

/* The number of a port reference that is a bare decimal number up to
 * 65535: 0 with *id, else -1 (then it can only be a name). */
int cli_port_number(const char *ref, uint16_t *id);

#endif
