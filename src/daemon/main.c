/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd: the on-NIC RPC load balancer daemon.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/config.h"

static void
usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s -c FILE [-- EAL overrides]\n"
		"       %s --check-config FILE\n"
		"\n"
		"Steers each RPC request to the least-loaded host core.\n"
		"\n"
		"  -c, --config FILE        run with this YAML configuration\n"
		"  -t, --check-config FILE  validate FILE and exit (no DPDK)\n"
		"  -h, --help               show this help\n"
		"  -V, --version            show the version\n"
		"\n"
		"Policies:",
		prog, prog);
	for (unsigned int i = 0; tlb_policies[i] != NULL; i++)
		fprintf(f, "\n  %-8s %s", tlb_policies[i]->name,
			tlb_policies[i]->summary);
	fprintf(f, "\n");
}

/* Loads and validates; errors go to stderr as FILE:LINE:COL: message. */
static int
check_config(const char *path)
{
	struct tlb_config cfg;
	char summary[512];
	int errors = tlb_config_load(path, &cfg, stderr);

	if (errors == 0) {
		tlb_config_summary(&cfg, summary, sizeof(summary));
		printf("%s: ok: %s\n", path, summary);
	} else {
		fprintf(stderr, "%s: %d error%s\n", path, errors,
			errors == 1 ? "" : "s");
	}
	tlb_config_free(&cfg);
	return errors == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config_path = NULL;
	int opt;

	while ((opt = getopt_long(argc, argv, "+c:t:hV", longopts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'c':
			config_path = optarg;
			break;
		case 't':
			return check_config(optarg);
		case 'h':
			usage(stdout, argv[0]);
			return EXIT_SUCCESS;
		case 'V':
			printf("turbolbd %s\n", TLB_VERSION);
			return EXIT_SUCCESS;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (config_path == NULL) {
		usage(stderr, argv[0]);
		return 2;
	}
	fprintf(stderr, "turbolbd: the data path is not built yet; "
			"use --check-config\n");
	return EXIT_FAILURE;
}
