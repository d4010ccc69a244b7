/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's options (after the EAL's, past "--"): the table, the
 * defaults, --help and the checks across options. Errors go to the log;
 * main exits 1 on them.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

struct srv_conf conf;

const char *const mode_names[] = {
	[MODE_SPIN] = "spin",
	[MODE_KV] = "kv",
	[MODE_EMULATE] = "emulate",
};

void
usage(const char *prog)
{
	fprintf(stderr,
		"Usage: %s [EAL args] -- --cores N [options]\n"
		"  --cores N            logical cores (RX/TX queue pairs), one "
		"per EAL worker lcore\n"
		"                       (--mode emulate: all on the first "
		"worker lcore)\n"
		"  --port NAME          ethdev port name or id (default: the "
		"first port)\n"
		"  --port-per-core      core i polls queue 0 of port i (one VF "
		"per core): N ports,\n"
		"                       the --port names in order or else the "
		"first N ports\n"
		"  --mode spin|kv|emulate\n"
		"                       spin: busy-wait svc_hint_ns (default); "
		"kv: GET/PUT/DEL table;\n"
		"                       emulate: every logical core an "
		"emulated FIFO server on one\n"
		"                       worker lcore, busy for svc_hint_ns in "
		"TSC time\n"
		"  --credit-ring NAME   report completions to turbolbd through "
		"this credit ring\n"
		"  --feedback packet    report them as feedback frames on each "
		"core's queue instead\n"
		"                       (turbolbd's host.transport: packet)\n"
		"  --agent-ring NAME    --feedback packet: publish the cores' "
		"threads and states in\n"
		"                       a local ring NAME for turbolb-kickd\n"
		"  --batch B            completions per credit record (default "
		"%u)\n"
		"  --idle-sleep-us U    sleep U us after an empty RX burst "
		"(default 0: busy poll)\n"
		"  --udp-port P         RPC UDP port, repeatable (default %u)\n"
		"  --stats FILE         write the final JSON stats to FILE "
		"instead of stdout\n"
		"  --kv-capacity N      kv table entries (default %u)\n"
		"  --max-spin-us U      cap on one spin or emulated request "
		"(default %u)\n"
		"  --emu-depth N        emulate: requests held per core, a "
		"power of two (default %u)\n"
		"  --emu-arrival poll|sent\n"
		"                       emulate: a request arrives when the "
		"worker reads it (poll,\n"
		"                       default) or when the client sent it "
		"(sent: its client_ts,\n"
		"                       for a client on this machine, sharing "
		"its TSC)\n"
		"  --help               this text\n"
		"Example: %s --no-huge -m 256 --lcores=0@0,(1-4)@1 \\\n"
		"    "
		"--vdev=net_memif0,role=client,socket=/run/turbolb/"
		"host.sock,socket-abstract=no \\\n"
		"    -- --cores 4 --credit-ring /turbolb-credits\n",
		prog, TLB_HOST_BATCH_DEFAULT, DEFAULT_UDP_PORT,
		DEFAULT_KV_CAPACITY, DEFAULT_MAX_SPIN_US, DEFAULT_EMU_DEPTH,
		prog);
}

static int
parse_u32(const char *opt, const char *s, uint32_t min, uint32_t max,
	  uint32_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min ||
	    v > max) {
		SRV_LOG(ERR, "%s: '%s' is not a number in %u..%u", opt, s, min,
			max);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

enum {
	OPT_CORES = 256,
	OPT_PORT,
	OPT_PORT_PER_CORE,
	OPT_MODE,
	OPT_CREDIT_RING,
	OPT_FEEDBACK,
	OPT_AGENT_RING,
	OPT_IDLE_SLEEP_US,
	OPT_UDP_PORT,
	OPT_BATCH,
	OPT_STATS,
	OPT_KV_CAPACITY,
	OPT_MAX_SPIN_US,
	OPT_EMU_DEPTH,
	OPT_EMU_ARRIVAL,
	OPT_HELP,
};

int
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"cores", required_argument, NULL, OPT_CORES},
		{"port", required_argument, NULL, OPT_PORT},
		{"port-per-core", no_argument, NULL, OPT_PORT_PER_CORE},
		{"mode", required_argument, NULL, OPT_MODE},
		{"credit-ring", required_argument, NULL, OPT_CREDIT_RING},
		{"feedback", required_argument, NULL, OPT_FEEDBACK},
		{"agent-ring", required_argument, NULL, OPT_AGENT_RING},
		{"idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP_US},
		{"udp-port", required_argument, NULL, OPT_UDP_PORT},
		{"batch", required_argument, NULL, OPT_BATCH},
		{"stats", required_argument, NULL, OPT_STATS},
		{"kv-capacity", required_argument, NULL, OPT_KV_CAPACITY},
		{"max-spin-us", required_argument, NULL, OPT_MAX_SPIN_US},
		{"emu-depth", required_argument, NULL, OPT_EMU_DEPTH},
		{"emu-arrival", required_argument, NULL, OPT_EMU_ARRIVAL},
		{"help", no_argument, NULL, OPT_HELP},
		{NULL, 0, NULL, 0},
	};
	const char *prog = argv[0];
	uint32_t v;
	int c;

	conf.mode = MODE_SPIN;
	conf.batch = TLB_HOST_BATCH_DEFAULT;
	conf.kv_capacity = DEFAULT_KV_CAPACITY;
	conf.max_spin_us = DEFAULT_MAX_SPIN_US;
	conf.emu_depth = DEFAULT_EMU_DEPTH;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CORES:
			if (parse_u32("--cores", optarg, 1, TLB_CR_MAX_CORES,
				      &conf.n_cores) < 0)
				return -1;
			break;
		case OPT_PORT:
			if (conf.n_port_names == RTE_DIM(conf.port_names)) {
				SRV_LOG(ERR, "--port: at most %zu ports",
					RTE_DIM(conf.port_names));
				return -1;
			}
			conf.port_names[conf.n_port_names++] = optarg;
			break;
		case OPT_PORT_PER_CORE:
			conf.port_per_core = true;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "spin") == 0) {
				conf.mode = MODE_SPIN;
			} else if (strcmp(optarg, "kv") == 0) {
				conf.mode = MODE_KV;
			} else if (strcmp(optarg, "emulate") == 0) {
				conf.mode = MODE_EMULATE;
			} else {
				SRV_LOG(ERR,
					"--mode: '%s' is not one of spin, kv, "
					"emulate",
					optarg);
				return -1;
			}
			break;
		case OPT_CREDIT_RING:
			conf.credit_ring = optarg;
			break;
		case OPT_FEEDBACK:
			if (strcmp(optarg, "packet") == 0) {
				conf.feedback_packet = true;
			} else if (strcmp(optarg, "ring") == 0) {
				conf.feedback_packet = false;
			} else {
				SRV_LOG(ERR,
					"--feedback: '%s' is neither packet "
					"nor ring",
					optarg);
				return -1;
			}
			break;
		case OPT_AGENT_RING:
			conf.agent_ring = optarg;
			break;
		case OPT_IDLE_SLEEP_US:
			if (parse_u32("--idle-sleep-us", optarg, 0, 1000000,
				      &conf.idle_sleep_us) < 0)
				return -1;
			break;
		case OPT_UDP_PORT:
			if (parse_u32("--udp-port", optarg, 1, 65535, &v) < 0)
				return -1;
			if (conf.popts.n_udp_ports == TLB_RPC_MAX_PORTS) {
				SRV_LOG(ERR, "--udp-port: at most %u ports",
					TLB_RPC_MAX_PORTS);
				return -1;
			}
			conf.popts.udp_ports[conf.popts.n_udp_ports++] =
				(uint16_t)v;
			break;
		case OPT_BATCH:
			if (parse_u32("--batch", optarg, 1, TLB_HOST_BATCH_MAX,
				      &conf.batch) < 0)
				return -1;
			break;
		case OPT_STATS:
			conf.stats_file = optarg;
			break;
		case OPT_KV_CAPACITY:
			if (parse_u32("--kv-capacity", optarg, KV_WAYS,
				      1u << 24, &conf.kv_capacity) < 0)
				return -1;
			break;
		case OPT_MAX_SPIN_US:
			if (parse_u32("--max-spin-us", optarg, 1, 4000000,
				      &conf.max_spin_us) < 0)
				return -1;
			break;
		case OPT_EMU_DEPTH:
			if (parse_u32("--emu-depth", optarg, 1, 1u << 16,
				      &conf.emu_depth) < 0)
				return -1;
			if ((conf.emu_depth & (conf.emu_depth - 1)) != 0) {
				SRV_LOG(ERR,
					"--emu-depth: %u is not a power of two",
					conf.emu_depth);
				return -1;
			}
			break;
		case OPT_EMU_ARRIVAL:
			if (strcmp(optarg, "poll") == 0) {
				conf.emu_arrival_sent = false;
			} else if (strcmp(optarg, "sent") == 0) {
				conf.emu_arrival_sent = true;
			} else {
				SRV_LOG(ERR,
					"--emu-arrival: '%s' is neither poll "
					"nor sent",
					optarg);
				return -1;
			}
			break;
		case OPT_HELP:
			usage(prog);
			exit(0);
		default:
			usage(prog);
			return -1;
		}
	}
	if (optind < argc) {
		SRV_LOG(ERR, "unexpected argument '%s'", argv[optind]);
		return -1;
	}
	if (!conf.port_per_core && conf.n_port_names > 1) {
		SRV_LOG(ERR,
			"--port given %u times: one port serves every core "
			"unless --port-per-core is given",
			conf.n_port_names);
		return -1;
	}
	if (conf.feedback_packet && conf.credit_ring != NULL) {
		SRV_LOG(ERR, "--feedback packet reports by frames: no "
			     "--credit-ring with it");
		return -1;
	}
	if (conf.agent_ring != NULL && !conf.feedback_packet) {
		SRV_LOG(ERR, "--agent-ring goes with --feedback packet (with "
			     "a credit ring the agent attaches to that one)");
		return -1;
	}
	if (conf.popts.n_udp_ports == 0) {
		conf.popts.udp_ports[0] = DEFAULT_UDP_PORT;
		conf.popts.n_udp_ports = 1;
	}
	return 0;
}
