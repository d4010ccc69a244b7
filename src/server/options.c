/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's options (after the EAL's, past "--"): one table for the
 * command-line layer (src/common/cli.h), which converts and range-checks
 * every value and generates --help, and the checks across options. Usage
 * errors go to stderr; main exits CLI_EXIT_USAGE on them, before the EAL
 * starts.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "server.h"

struct srv_conf conf;

const char *const mode_names[] = {
	[MODE_SPIN] = "spin",
	[MODE_KV] = "kv",
	[MODE_EMULATE] = "emulate",
	NULL,
};

static const char *const arrival_names[] = {"poll", "sent", NULL};
/* In the order of enum srv_feedback. */
static const char *const feedback_names[] = {"ring", "packet", "state", NULL};

/* --batch's default, as the table spells it, is the library's. */
_Static_assert(TLB_HOST_BATCH_DEFAULT == 16, "--batch: default 16");

/* Set once --udp-port is on the command line: its default is dropped. */
static bool udp_port_given;

/* --port, repeatable: the names in order (resolved in ports.c). */
static int
port_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	if (*arg == '\0') {
		snprintf(err, errlen, "want a port name or number");
		return -1;
	}
	if (conf.n_port_names == RTE_DIM(conf.port_names)) {
		snprintf(err, errlen, "at most %zu ports",
			 RTE_DIM(conf.port_names));
		return -1;
	}
	conf.port_names[conf.n_port_names++] = arg;
	return 0;
}

/* --udp-port, repeatable: the default is the list until the first one is
 * given, then the given ones alone. */
static int
udp_port_fn(const struct cli_opt *opt, const char *arg, char *err,
	    size_t errlen)
{
	uint64_t v;

	(void)opt;
	if (cli_parse_u64(arg, 1, 65535, &v) != 0) {
		snprintf(err, errlen, "want an integer in 1..65535");
		return -1;
	}
	if (!udp_port_given)
		conf.popts.n_udp_ports = 0;
	if (conf.popts.n_udp_ports == TLB_RPC_MAX_PORTS) {
		snprintf(err, errlen, "at most %u ports", TLB_RPC_MAX_PORTS);
		return -1;
	}
	conf.popts.udp_ports[conf.popts.n_udp_ports++] = (uint16_t)v;
	return 0;
}

/* --emu-depth: a power of two, so that a core's FIFO index is a mask. */
static int
emu_depth_fn(const struct cli_opt *opt, const char *arg, char *err,
	     size_t errlen)
{
	uint64_t v;

	(void)opt;
	if (cli_parse_u64(arg, 1, 1u << 16, &v) != 0 || (v & (v - 1)) != 0) {
		snprintf(err, errlen, "want a power of two in 1..65536");
		return -1;
	}
	conf.emu_depth = (uint32_t)v;
	return 0;
}

static const struct cli_opt opts[] = {
	{.name = "cores",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.n_cores),
	 .lo = 1,
	 .hi = TLB_CR_MAX_CORES,
	 .arg = "N",
	 .help = "logical cores (RX/TX queue pairs), one per EAL\n"
		 "worker lcore (--mode emulate: all on the first\n"
		 "worker lcore); without it, one per worker lcore"},
	{.name = "port",
	 .kind = CLI_FN,
	 .fn = port_fn,
	 .arg = "NAME",
	 .help = "ethdev port name or number (default: the first\n"
		 "port); repeatable with --port-per-core"},
	{.name = "port-per-core",
	 .kind = CLI_FLAG,
	 CLI_DEST(conf.port_per_core),
	 .help = "core i polls queue 0 of port i (one VF per core):\n"
		 "N ports, the --port names in order or else the\n"
		 "first N ports"},
	{.name = "mode",
	 .kind = CLI_CHOICE,
	 CLI_DEST(conf.mode),
	 .choices = mode_names,
	 .def = "spin",
	 .arg = "spin|kv|emulate",
	 .help = "spin: busy-wait svc_hint_ns; kv: GET/PUT/DEL\n"
		 "table; emulate: every logical core an emulated FIFO\n"
		 "server on one worker lcore, busy for svc_hint_ns in\n"
		 "TSC time"},
	{.name = "credit-ring",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.credit_ring),
	 .arg = "NAME",
	 .help = "report completions to turbolbd through this\n"
		 "credit ring"},
	{.name = "feedback",
	 .kind = CLI_CHOICE,
	 CLI_DEST(conf.feedback),
	 .choices = feedback_names,
	 .def = "ring",
	 .arg = "ring|packet|state",
	 .help = "packet: report completions as feedback frames on\n"
		 "each core's queue (turbolbd's host.transport:\n"
		 "packet) instead of a credit ring; state: frames\n"
		 "of run state and heartbeat only, for turbolbd's\n"
		 "host.credits: inband"},
	{.name = "feedback-hold-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.feedback_hold_us),
	 .hi = TLB_HOST_FEEDBACK_HOLD_US_MAX,
	 .def = "50",
	 .arg = "U",
	 .help = "--feedback packet: a completion waits at most U us\n"
		 "for its frame, which carries every completion of\n"
		 "that time; 0: a frame at each idle poll"},
	{.name = "agent-ring",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.agent_ring),
	 .arg = "NAME",
	 .help = "--feedback packet or state: publish the cores'\n"
		 "threads and states in a local ring NAME for\n"
		 "turbolb-kickd"},
	{.name = "batch",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.batch),
	 .lo = 1,
	 .hi = TLB_HOST_BATCH_MAX,
	 .def = "16",
	 .arg = "B",
	 .help = "completions per credit record"},
	{.name = "idle-sleep-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.idle_sleep_us),
	 .hi = 1000000,
	 .def = "0",
	 .arg = "U",
	 .help = "sleep U us after an empty RX burst;\n0: busy poll"},
	{.name = "udp-port",
	 .kind = CLI_FN,
	 .fn = udp_port_fn,
	 .seen = &udp_port_given,
	 .def = "9000",
	 .arg = "P",
	 .help = "RPC UDP port, repeatable"},
	{.name = "stats",
	 .kind = CLI_STRING,
	 CLI_DEST(conf.stats_file),
	 .arg = "FILE",
	 .help = "write the final JSON stats to FILE instead of\n"
		 "stdout"},
	{.name = "kv-capacity",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.kv_capacity),
	 .lo = KV_WAYS,
	 .hi = 1u << 24,
	 .def = "16384",
	 .arg = "N",
	 .help = "kv table entries"},
	{.name = "max-spin-us",
	 .kind = CLI_UINT,
	 CLI_DEST(conf.max_spin_us),
	 .lo = 1,
	 .hi = 4000000,
	 .def = "100000",
	 .arg = "U",
	 .help = "cap on one spin or emulated request"},
	{.name = "emu-depth",
	 .kind = CLI_FN,
	 .fn = emu_depth_fn,
	 .def = "1024",
	 .arg = "N",
	 .help = "emulate: requests held per core, a power of\ntwo"},
	{.name = "emu-arrival",
	 .kind = CLI_CHOICE,
	 CLI_DEST(conf.emu_arrival_sent),
	 .choices = arrival_names,
	 .def = "poll",
	 .arg = "poll|sent",
	 .help = "emulate: a request arrives when the worker reads\n"
		 "it (poll) or when the client sent it (sent: its\n"
		 "client_ts, for a client on this machine, sharing\n"
		 "its TSC)"},
	CLI_OPT_HELP(0),
	{.kind = CLI_END},
};

static const struct cli_spec spec = {
	.prog = "turbolb-server",
	.usage = "[EAL args] -- [options]",
	.about = "The reference RPC server: each logical core polls its own "
		 "RX queue and\nanswers on its TX queue.",
	.epilog = "Example: turbolb-server --no-huge -m 256 "
		  "--lcores=0@0,(1-4)@1 \\\n"
		  "    --vdev=net_memif0,role=client,socket=/run/turbolb/"
		  "host.sock,socket-abstract=no \\\n"
		  "    -- --cores 4 --credit-ring /turbolb-credits",
	/* Without "--" the EAL would take --help. */
	.hint = "turbolb-server -- --help",
	.opts = opts,
};

void
usage(FILE *f)
{
	cli_help(&spec, f);
}

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
	if (!conf.port_per_core && conf.n_port_names > 1)
		return cli_usage_error(&spec,
				       "--port given %u times: one port serves "
				       "every core unless --port-per-core is "
				       "given",
				       conf.n_port_names);
	if (conf.feedback != SRV_FB_RING && conf.credit_ring != NULL)
		return cli_usage_error(&spec,
				       "--feedback packet and state report "
				       "by frames: no --credit-ring with them");
	if (conf.agent_ring != NULL && conf.feedback == SRV_FB_RING)
		return cli_usage_error(
			&spec,
			"--agent-ring goes with --feedback packet or state "
			"(with a credit ring the agent attaches "
			"to that one)");
	return CLI_OK;
}
