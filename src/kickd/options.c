/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-kickd's options: the table, the defaults, --help and the checks
 * across options. Errors go to stderr; main exits 2 on them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "kickd.h"

#define DEFAULT_POLL_US      20u
#define DEFAULT_QUIET_US     50u
#define DEFAULT_MAX_BOOST_US 1000u
#define DEFAULT_PRIORITY     1

struct kd_conf conf;

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s --credit-ring NAME [options]\n"
		"  --credit-ring NAME   the daemon's credit ring (e.g. "
		"/turbolb-credits)\n"
		"  --poll-us U          look at the doorbells every U us "
		"(default %u)\n"
		"  --quiet-us U         a boosted core that ran and then had "
		"no ring and no\n"
		"                       credit record for U us has drained "
		"(default %u)\n"
		"  --max-boost-us U     no boost lasts longer (default %u)\n"
		"  --priority P         SCHED_FIFO priority of a boost, 1..99 "
		"(default %d)\n"
		"  --self-priority P    run the agent itself SCHED_FIFO P "
		"(default 0: no)\n"
		"  --no-sched-watch     do not watch context switches: never "
		"mark a core\n"
		"                       off its CPU (only PARKED cores and "
		"stalls get kicks)\n"
		"  --watch-only         publish off-CPU, never boost (no "
		"CAP_SYS_NICE needed)\n"
		"  --stats FILE         final JSON counters to FILE instead of "
		"stdout\n"
		"  --listen IFACE       take the doorbells from turbolbd's "
		"kick "
		"frames received\n"
		"                       on IFACE (host.transport: packet); the "
		"ring still names\n"
		"                       the threads (turbolb-server "
		"--agent-ring)\n"
		"  --help               this text\n"
		"Needs CAP_SYS_NICE (boosts) and, to watch threads of another "
		"user,\n"
		"CAP_PERFMON. Stops on SIGINT or SIGTERM, reverting every "
		"boost.\n",
		prog, DEFAULT_POLL_US, DEFAULT_QUIET_US, DEFAULT_MAX_BOOST_US,
		DEFAULT_PRIORITY);
}

static int
parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
	  uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min ||
	    v > max) {
		kd_log("%s: '%s' is not a number in %u..%u", opt, s, min, max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_RING = 256,
	OPT_POLL_US,
	OPT_QUIET_US,
	OPT_MAX_BOOST_US,
	OPT_PRIORITY,
	OPT_SELF_PRIORITY,
	OPT_NO_SCHED_WATCH,
	OPT_WATCH_ONLY,
	OPT_STATS,
	OPT_LISTEN,
	OPT_HELP,
};

int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"credit-ring", required_argument, NULL, OPT_RING},
		{"poll-us", required_argument, NULL, OPT_POLL_US},
		{"quiet-us", required_argument, NULL, OPT_QUIET_US},
		{"max-boost-us", required_argument, NULL, OPT_MAX_BOOST_US},
		{"priority", required_argument, NULL, OPT_PRIORITY},
		{"self-priority", required_argument, NULL, OPT_SELF_PRIORITY},
		{"no-sched-watch", no_argument, NULL, OPT_NO_SCHED_WATCH},
		{"watch-only", no_argument, NULL, OPT_WATCH_ONLY},
		{"stats", required_argument, NULL, OPT_STATS},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	uint32_t v;
	int c;

	conf.poll_us = DEFAULT_POLL_US;
	conf.quiet_us = DEFAULT_QUIET_US;
	conf.max_boost_us = DEFAULT_MAX_BOOST_US;
	conf.priority = DEFAULT_PRIORITY;
	conf.sched_watch = true;
	conf.boost = true;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_RING:
			conf.ring = optarg;
			break;
		case OPT_POLL_US:
			if (parse_u32("--poll-us", optarg, 1, 100000,
				      &conf.poll_us) < 0)
				return -1;
			break;
		case OPT_QUIET_US:
			if (parse_u32("--quiet-us", optarg, 1, 1000000,
				      &conf.quiet_us) < 0)
				return -1;
			break;
		case OPT_MAX_BOOST_US:
			if (parse_u32("--max-boost-us", optarg, 10, 1000000,
				      &conf.max_boost_us) < 0)
				return -1;
			break;
		case OPT_PRIORITY:
			if (parse_u32("--priority", optarg, 1, 99, &v) < 0)
				return -1;
			conf.priority = (int)v;
			break;
		case OPT_SELF_PRIORITY:
			if (parse_u32("--self-priority", optarg, 0, 99, &v) < 0)
				return -1;
			conf.self_priority = (int)v;
			break;
		case OPT_NO_SCHED_WATCH:
			conf.sched_watch = false;
			break;
		case OPT_WATCH_ONLY:
			conf.boost = false;
			break;
		case OPT_STATS:
			conf.stats_file = optarg;
			break;
		case OPT_LISTEN:
			conf.listen = optarg;
			break;
		case OPT_HELP:
			usage(stdout, argv[0]);
			exit(0);
		default:
			usage(stderr, argv[0]);
			return -1;
		}
	}
	if (optind < argc) {
		kd_log("unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (conf.ring == NULL) {
		kd_log("--credit-ring is required");
		usage(stderr, argv[0]);
		return -1;
	}
	if (conf.max_boost_us < conf.quiet_us)
		kd_log("note: --max-boost-us %u is below --quiet-us %u: every "
		       "boost ends by the bound",
		       conf.max_boost_us, conf.quiet_us);
	return 0;
}
