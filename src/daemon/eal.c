/* SPDX-License-Identifier: BSD-3-Clause
 * EAL start-up from the YAML config, as grout does it: the daemon owns its
 * EAL arguments, so the same binary runs on memif here and on mlx5
 * representors on a BlueField with only the YAML file changed.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "eal.h"

#define MAX_ARGS (32 + TLB_CFG_MAX_VDEVS + TLB_CFG_MAX_EAL_ARGS)

static char *xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

/* DPDK's control threads inherit the affinity of the thread that calls
 * rte_eal_init: take the datapath CPUs out of it first. */
static void
keep_off_datapath(const struct tlb_config *cfg)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (unsigned int i = 0; i < cfg->datapath.n_lcores; i++)
		CPU_CLR(cfg->datapath.lcores[i], &set);
	if (CPU_COUNT(&set) == 0) {
		fprintf(stderr, "turbolbd: every allowed CPU is a datapath "
				"lcore; control threads will share them\n");
		return;
	}
	sched_setaffinity(0, sizeof(set), &set);
}

int
tlb_eal_init(const struct tlb_config *cfg, const char *prog, int n_over,
	     char **over)
{
	char *argv[MAX_ARGS + 64];
	char *owned[MAX_ARGS];
	int argc = 0, n_owned = 0, rc;
	char lcores[512];
	size_t off;

	off = (size_t)snprintf(lcores, sizeof(lcores), "%u",
			       cfg->eal.main_lcore);
	for (unsigned int i = 0; i < cfg->datapath.n_lcores; i++)
		off += (size_t)snprintf(lcores + off, sizeof(lcores) - off,
					",%u", cfg->datapath.lcores[i]);

#define ARG(s)   (argv[argc++] = (char *)(s))
#define OWNED(s) (argv[argc++] = owned[n_owned++] = (s))
	ARG(prog);
	ARG("-l");
	ARG(lcores);
	OWNED(xasprintf("--main-lcore=%u", cfg->eal.main_lcore));
	OWNED(xasprintf("--file-prefix=%s", cfg->eal.file_prefix));
	OWNED(xasprintf("-m%u", cfg->eal.memory_mb));
	if (cfg->eal.no_huge)
		ARG("--no-huge");
	if (cfg->eal.no_pci)
		ARG("--no-pci");
	for (unsigned int i = 0; i < cfg->eal.n_vdevs; i++)
		OWNED(xasprintf("--vdev=%s", cfg->eal.vdevs[i]));
	for (unsigned int i = 0; i < cfg->eal.n_args; i++)
		ARG(cfg->eal.args[i]);
	for (int i = 0; i < n_over && argc < MAX_ARGS + 63; i++)
		ARG(over[i]);
	argv[argc] = NULL;
#undef ARG
#undef OWNED

	for (int i = 0; i < n_owned; i++)
		if (owned[i] == NULL) {
			fprintf(stderr, "turbolbd: out of memory\n");
			rc = -1;
			goto out;
		}
	fprintf(stderr, "turbolbd: EAL arguments:");
	for (int i = 1; i < argc; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n");

	keep_off_datapath(cfg);
	rc = rte_eal_init(argc, argv);
	if (rc < 0)
		fprintf(stderr,
			"turbolbd: EAL init failed (%s); see the EAL "
			"messages above\n",
			rte_strerror(rte_errno));
	rc = rc < 0 ? -1 : 0;
out:
	/* EAL keeps pointers into argv for some options (e.g. vdev args are
	 * copied, file prefix is copied): the strings must outlive init only.
	 */
	for (int i = 0; i < n_owned; i++)
		free(owned[i]);
	return rc;
}
