/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: the YAML configuration loader on arbitrary bytes.
 * Config files are written by operators, copied around and edited by hand,
 * so the loader must fail cleanly on anything: no crash, no read past the
 * buffer (the input is not NUL-terminated), no leak on any error path
 * (LeakSanitizer), and a config it accepts must hold what
 * docs/configuration.md promises. A violation aborts.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/config.h"
#include "turbolb/policy.h"

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Error messages are formatted but not kept: the stream stays open for
 * the whole run, so it is not a leak. */
static FILE *
null_stream(void)
{
	static FILE *devnull;

	if (devnull == NULL) {
		devnull = fopen("/dev/null", "w");
		if (devnull == NULL)
			abort();
	}
	return devnull;
}

static bool
str_ok(const char *s, size_t cap, bool nonempty)
{
	size_t n = strnlen(s, cap);

	return n < cap && (!nonempty || n > 0);
}

static bool
pow2(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

static void
check_port_ref(const struct tlb_port_ref *r)
{
	CHECK(str_ok(r->port, sizeof(r->port), true));
}

static void
check_str_list(char *const *items, unsigned int n, unsigned int max)
{
	unsigned int i;

	CHECK(n <= max);
	for (i = 0; i < n; i++) {
		CHECK(items[i] != NULL);
		CHECK(str_ok(items[i], TLB_CFG_STR_MAX, true));
	}
}

/* The promises of docs/configuration.md for a config that loaded. */
static void
check_valid(const struct tlb_config *cfg)
{
	const struct tlb_policy_ops *ops;
	char summary[512], tiny[8], err[256];
	unsigned int i, j;

	CHECK(cfg->eal.memory_mb >= 16 && cfg->eal.memory_mb <= 1048576);
	CHECK(str_ok(cfg->eal.file_prefix, sizeof(cfg->eal.file_prefix), true));
	check_str_list(cfg->eal.vdevs, cfg->eal.n_vdevs, TLB_CFG_MAX_VDEVS);
	check_str_list(cfg->eal.args, cfg->eal.n_args, TLB_CFG_MAX_EAL_ARGS);

	CHECK(cfg->datapath.n_lcores >= 1 &&
	      cfg->datapath.n_lcores <= TLB_CFG_MAX_LCORES);
	for (i = 0; i < cfg->datapath.n_lcores; i++) {
		CHECK(cfg->datapath.lcores[i] != cfg->eal.main_lcore);
		for (j = 0; j < i; j++)
			CHECK(cfg->datapath.lcores[i] !=
			      cfg->datapath.lcores[j]);
	}
	CHECK(cfg->datapath.burst >= 1 && cfg->datapath.burst <= 512);
	CHECK(cfg->datapath.tx_hold_ns <= 1000000);
	CHECK(cfg->datapath.housekeeping_us >= 1 &&
	      cfg->datapath.housekeeping_us <= 10000);
	CHECK(cfg->datapath.idle_sleep_us <= 100000);
	CHECK(cfg->datapath.rx_desc >= 64 && cfg->datapath.rx_desc <= 16384);
	CHECK(cfg->datapath.tx_desc >= 64 && cfg->datapath.tx_desc <= 16384);
	CHECK(cfg->datapath.mbufs == 0 ||
	      (cfg->datapath.mbufs >= 1024 && cfg->datapath.mbufs <= 16777216));

	check_port_ref(&cfg->ports.uplink);
	if (cfg->ports.has_default_target)
		check_port_ref(&cfg->ports.default_target);
	CHECK(cfg->ports.n_targets >= 1 &&
	      cfg->ports.n_targets <= TLB_MAX_CORES);
	/* Stored by core id, ids exactly 0..n-1. */
	for (i = 0; i < cfg->ports.n_targets; i++) {
		CHECK(cfg->ports.targets[i].core == i);
		check_port_ref(&cfg->ports.targets[i].ref);
	}

	CHECK(cfg->rpc.n_udp_ports >= 1 &&
	      cfg->rpc.n_udp_ports <= TLB_RPC_MAX_PORTS);
	for (i = 0; i < cfg->rpc.n_udp_ports; i++) {
		CHECK(cfg->rpc.udp_ports[i] != 0);
		for (j = 0; j < i; j++)
			CHECK(cfg->rpc.udp_ports[i] != cfg->rpc.udp_ports[j]);
	}

	CHECK(str_ok(cfg->policy.name, sizeof(cfg->policy.name), true));
	ops = tlb_policy_find(cfg->policy.name);
	CHECK(ops != NULL);
	/* turbolbd hands these to tlb_policy_init(), which runs the same
	 * check: a loaded config must not fail there. */
	CHECK(tlb_policy_check_params(ops, &cfg->policy.params, err,
				      sizeof(err)) == 0);

	CHECK(cfg->fifo.capacity <= 1048576);
	CHECK(pow2(cfg->affinity.entries) && cfg->affinity.entries >= 16 &&
	      cfg->affinity.entries <= 1048576);
	CHECK(cfg->affinity.timeout_us >= 1 &&
	      cfg->affinity.timeout_us <= 10000000);

	CHECK(cfg->host.credits == TLB_CREDITS_RING ||
	      cfg->host.credits == TLB_CREDITS_INBAND);
	CHECK(str_ok(cfg->host.credit_ring, sizeof(cfg->host.credit_ring),
		     true));
	CHECK(cfg->host.credit_ring[0] == '/' &&
	      cfg->host.credit_ring[1] != '\0' &&
	      strchr(cfg->host.credit_ring + 1, '/') == NULL);
	CHECK(pow2(cfg->host.ring_size) && cfg->host.ring_size >= 16 &&
	      cfg->host.ring_size <= TLB_CR_MAX_RING);
	CHECK(cfg->host.stale_timeout_us >= 100 &&
	      cfg->host.stale_timeout_us <= 60000000);
	CHECK(str_ok(cfg->host.group, sizeof(cfg->host.group), false));

	CHECK(cfg->log.level >= TLB_LOG_EMERG &&
	      cfg->log.level <= TLB_LOG_DEBUG);
	CHECK(tlb_credit_mode_str(cfg->host.credits) != NULL);
	CHECK(tlb_log_level_str(cfg->log.level) != NULL);

	/* The summary is what --check-config prints: it must truncate, not
	 * overflow, whatever the names' lengths. */
	tlb_config_summary(cfg, summary, sizeof(summary));
	CHECK(memchr(summary, '\0', sizeof(summary)) != NULL);
	memset(tiny, 0x7f, sizeof(tiny));
	tlb_config_summary(cfg, tiny, 4);
	CHECK(memchr(tiny, '\0', 4) != NULL);
	CHECK(tiny[4] == 0x7f && tiny[7] == 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* On the heap, so that ASan has redzones around it. */
	struct tlb_config *cfg = malloc(sizeof(*cfg));
	int n_err;

	if (cfg == NULL)
		abort();
	n_err = tlb_config_load_buffer("fuzz.yaml", (const char *)data, size,
				       cfg, null_stream());
	CHECK(n_err >= 0);
	if (n_err == 0)
		check_valid(cfg);
	tlb_config_free(cfg);
	free(cfg);
	return 0;
}
