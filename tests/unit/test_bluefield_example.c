/* SPDX-License-Identifier: BSD-3-Clause
 * configs/bluefield-example.yaml is meant to run on a BlueField-2 as
 * written. What can be checked without one:
 * - it loads as turbolbd --check-config loads it, without an error or a
 *   warning (the host cores divide evenly among the dispatchers);
 * - its host transport crosses PCIe (packet: feedback frames on the VFs),
 *   not shared memory, with credits from the host (ring);
 * - its ports follow the names DPDK 22.11's mlx5 PMD gives a single,
 *   non-bonded PF and its representors (mlx5_os.c, "%s_representor_%s%u"
 *   with the PCI name): the uplink is the PF's PCI address BDF, host core
 *   i's target is BDF_representor_vfi, the default target is the host PF,
 *   BDF_representor_vf4294967295 (port name -1 printed unsigned);
 * - every representor it names is probed by its allow-list entry
 *   (BDF,representor=pf0vf[LIST], the host PF as 65535), on the same BDF;
 * - the dispatchers' queues start at 0 on the uplink and the default
 *   target, so that RSS spreads over exactly the queues they poll.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/config.h"

#ifndef TLB_SRCDIR
#error "build with -DTLB_SRCDIR=\"<repository root>\""
#endif

#define EXAMPLE TLB_SRCDIR "/configs/bluefield-example.yaml"

/* The VF index mlx5 takes for the host PF's representor in devargs. */
#define HPF_DEVARG 65535u
/* How the PMD names the host PF's representor: index -1, as %u. */
#define HPF_NAME_INDEX 4294967295ul

static struct tlb_config cfg;
static char bdf[16];
static bool probed[HPF_DEVARG + 1]; /* VF indexes the allow list probes */

/* Whether s matches the extended regular expression re whole; the first
 * group, if any, lands in group (size len). */
static bool
matches(const char *re, const char *s, char *group, size_t len)
{
	regex_t r;
	regmatch_t m[2];
	bool ok;

	assert_int_equal(regcomp(&r, re, REG_EXTENDED), 0);
	ok = regexec(&r, s, 2, m, 0) == 0;
	if (ok && group != NULL && m[1].rm_so >= 0) {
		size_t n = (size_t)(m[1].rm_eo - m[1].rm_so);

		assert_true(n < len);
		memcpy(group, s + m[1].rm_so, n);
		group[n] = '\0';
	}
	regfree(&r);
	return ok;
}

/* Marks the VF indexes of an ethdev representor list, "0-7,65535". */
static void
mark_list(char *list)
{
	for (char *item = strtok(list, ","); item != NULL;
	     item = strtok(NULL, ",")) {
		char *end;
		unsigned long lo = strtoul(item, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		assert_int_equal(*end, '\0');
		assert_true(lo <= hi && hi <= HPF_DEVARG);
		for (unsigned long v = lo; v <= hi; v++)
			probed[v] = true;
	}
}

static int
setup(void **state)
{
	char *msgs = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msgs, &len);
	int errors;

	(void)state;
	if (f == NULL)
		return -1;
	errors = tlb_config_load(EXAMPLE, &cfg, f);
	fclose(f);
	/* what --check-config prints besides its summary: nothing */
	if (errors != 0 || len != 0) {
		fprintf(stderr, "%s: %d errors:\n%s", EXAMPLE, errors, msgs);
		free(msgs);
		return -1;
	}
	free(msgs);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	tlb_config_free(&cfg);
	return 0;
}

static void
test_transport_crosses_pcie(void **state)
{
	(void)state;
	assert_int_not_equal(cfg.host.transport, TLB_TRANSPORT_SHM);
	assert_int_equal(cfg.host.transport, TLB_TRANSPORT_PACKET);
	assert_int_equal(cfg.host.credits, TLB_CREDITS_RING);
	/* the kick, if enabled, leaves by the default target */
	assert_true(!cfg.kick.enabled || cfg.ports.has_default_target);
}

static void
test_allow_list(void **state)
{
	char list[256];
	unsigned int n = 0;

	(void)state;
	assert_false(cfg.eal.no_pci);
	assert_false(cfg.eal.no_huge);
	assert_int_equal(cfg.eal.n_vdevs, 0);
	for (unsigned int i = 0; i < cfg.eal.n_args; i++) {
		const char *a = cfg.eal.args[i];
		char dev[16];

		if (strncmp(a, "--allow=", 8) != 0)
			continue;
		n++;
		assert_true(matches("^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\."
				    "[0-7]),",
				    a + 8, dev, sizeof(dev)));
		assert_true(matches(",representor=pf0vf\\[([0-9,-]+)\\](,|$)",
				    a + 8, list, sizeof(list)));
		strcpy(bdf, dev);
		mark_list(list);
	}
	/* one PF, probed with its representors */
	assert_int_equal(n, 1);
	assert_true(probed[0]);
}

static void
test_mlx5_port_names(void **state)
{
	char re[128], idx[16];

	(void)state;
	assert_true(bdf[0] != '\0');
	/* the uplink: the PF itself, p0 */
	assert_string_equal(cfg.ports.uplink.port, bdf);

	/* host core i: VF i's representor, probed, each VF once */
	snprintf(re, sizeof(re), "^%s_representor_vf([0-9]+)$", bdf);
	for (unsigned int i = 0; i < cfg.ports.n_targets; i++) {
		const struct tlb_target_cfg *t = &cfg.ports.targets[i];
		unsigned long vf;

		assert_true(matches(re, t->ref.port, idx, sizeof(idx)));
		vf = strtoul(idx, NULL, 10);
		assert_int_equal(vf, t->core);
		assert_true(vf < HPF_DEVARG);
		assert_true(probed[vf]);
		assert_int_equal(t->ref.queue, 0);
	}

	/* the default target: the host PF's representor, pf0hpf */
	assert_true(cfg.ports.has_default_target);
	assert_true(
		matches(re, cfg.ports.default_target.port, idx, sizeof(idx)));
	assert_int_equal(strtoul(idx, NULL, 10), HPF_NAME_INDEX);
	assert_true(probed[HPF_DEVARG]);
}

static void
test_dispatcher_queues(void **state)
{
	(void)state;
	assert_true(cfg.datapath.n_lcores >= 2);
	assert_int_equal(cfg.ports.n_targets % cfg.datapath.n_lcores, 0);
	assert_int_equal(cfg.ports.uplink.queue, 0);
	assert_int_equal(cfg.ports.default_target.queue, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transport_crosses_pcie),
		cmocka_unit_test(test_allow_list),
		cmocka_unit_test(test_mlx5_port_names),
		cmocka_unit_test(test_dispatcher_queues),
	};

	return cmocka_run_group_tests_name("bluefield_example", tests, setup,
					   teardown);
}
