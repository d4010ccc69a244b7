/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-kickd's options: one table for the command-line layer
 * (src/common/cli.h), which converts and range-checks every value and
 * generates --help, and the checks across options. Usage errors go to
 * stderr; main exits CLI_EXIT_USAGE on them.
 */
#include <stdio.h>

#include "cli.h"
#include "kickd.h"

struct kd_conf conf;

/* The flags say what the agent does not do; conf says what it does. */
static bool no_sched_watch, watch_only;

static const struct cli_opt opts[] = {
	{.name = "credit-ring",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.ring),
	 .arg = "NAME",
	 .help = "the daemon's credit ring (e.g. /turbolb-credits); "
		 "required"},
	{.name = "poll-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.poll_us),
	 .lo = 1,
	 .hi = 100000,
	 .def = "20",
	 .arg = "U",
	 .help = "look at the doorbells every U us"},
	{.name = "quiet-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.quiet_us),
	 .lo = 1,
	 .hi = 1000000,
	 .def = "50",
	 .arg = "U",
	 .help = "a boosted core that ran and then had no ring and no\n"
		 "credit record for U us has drained"},
	{.name = "max-boost-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.max_boost_us),
	 .lo = 10,
	 .hi = 1000000,
	 .def = "1000",
	 .arg = "U",
	 .help = "no boost lasts longer"},
	{.name = "priority",
	 .kind = CLI_INT,
	 CLI_DEST(conf.priority),
	 .slo = 1,
	 .shi = 99,
	 .def = "1",
	 .arg = "P",
	 .help = "SCHED_FIFO priority of a boost, 1..99"},
	{.name = "self-priority",
	 .kind = CLI_INT,
	 CLI_DEST(conf.self_priority),
	 .slo = 0,
	 .shi = 99,
	 .def = "0",
	 .arg = "P",
	 .help = "run the agent itself SCHED_FIFO P, 0..99; 0: not"},
	{.name = "no-sched-watch",
	 .kind = CLI_FLAG,
	 CLI_DEST(no_sched_watch),
	 .help = "do not watch context switches: never mark a core\n"
		 "off its CPU (only PARKED cores and stalls get kicks)"},
	{.name = "watch-only",
	 .kind = CLI_FLAG,
	 CLI_DEST(watch_only),
	 .help = "publish off-CPU, never boost (no CAP_SYS_NICE needed)"},
	{.name = "stats",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.stats_file),
	 .arg = "FILE",
	 .help = "final JSON counters to FILE instead of stdout"},
	{.name = "listen",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.listen),
	 .arg = "IFACE",
	 .help = "take the doorbells from turbolbd's kick frames\n"
		 "received on IFACE (host.transport: packet); the ring\n"
		 "still names the threads (turbolb-server --agent-ring)"},
	CLI_OPT_HELP(0),
	{.kind = CLI_END},
};

static const struct cli_spec spec = {
	.prog = "turbolb-kickd",
	.usage = "--credit-ring NAME [options]",
	.about = "Boosts a host core's thread when turbolbd rings its "
		 "doorbell.",
	.epilog = "Needs CAP_SYS_NICE (boosts) and, to watch threads of "
		  "another user,\nCAP_PERFMON. Stops on SIGINT or SIGTERM, "
		  "reverting every boost.",
	.opts = opts,
};

int
parse_args(int argc, char **argv)
{
	int first, rc;

	rc = cli_parse(&spec, argc, argv, &first);
	if (rc != CLI_OK)
		return rc;
	if (first < argc)
		return cli_usage_error(&spec, "unexpected argument '%s'",
				       argv[first]);
	if (conf.ring == NULL)
		return cli_usage_error(&spec, "--credit-ring is required");
	conf.sched_watch = !no_sched_watch;
	conf.boost = !watch_only;
	if (conf.max_boost_us < conf.quiet_us)
		kd_log("note: --max-boost-us %u is below --quiet-us %u: every "
		       "boost ends by the bound",
		       conf.max_boost_us, conf.quiet_us);
	return CLI_OK;
}
