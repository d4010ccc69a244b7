/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd: the on-NIC RPC load balancer daemon.
 *
 * Start-up: config -> EAL -> ports -> credit ring -> dispatcher state ->
 * telemetry and the metrics endpoint -> poll loops on the datapath lcores; the
 * main lcore waits for a signal. Shutdown runs the same steps backwards.
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "turbolb/config.h"
#include "turbolb/transport.h"
#include "turbolb/stats.h"
#include "control.h"
#include "dp.h"
#include "eal.h"
#include "log.h"
#include "cli.h"
#include "metrics.h"
#include "port.h"
#include "sd_notify.h"
#include "telemetry.h"

RTE_LOG_REGISTER(tlb_logtype_main, turbolb.main, INFO);

static void
policies(FILE *f)
{
	fprintf(f, "\nPolicies:");
	for (unsigned int i = 0; tlb_policies[i] != NULL; i++)
		fprintf(f, "\n  %-8s %s", tlb_policies[i]->name,
			tlb_policies[i]->summary);
	fprintf(f, "\n");
}

static const char *config_path, *check_path;

static const struct cli_opt opts[] = {
	{.name = "config",
	 .letter = 'c',
	 .kind = CLI_STRING,
	 CLI_DEST(config_path),
	 .arg = "FILE",
	 .help = "run with this YAML configuration"},
	{.name = "check-config",
	 .letter = 't',
	 .kind = CLI_STRING,
	 CLI_DEST(check_path),
	 .arg = "FILE",
	 .help = "validate FILE and exit (no DPDK)"},
	CLI_OPT_HELP('h'),
	CLI_OPT_VERSION('V'),
	{.kind = CLI_END},
};

static const struct cli_spec spec = {
	.prog = "turbolbd",
	.usage = "-c FILE [-- EAL overrides]\n"
		 "       turbolbd --check-config FILE",
	.about = "Steers each RPC request to the least-loaded host core.",
	.epilog_fn = policies,
	.version = TLB_VERSION,
	.opts = opts,
	/* What follows the options ("--" and on) overrides the EAL
	 * arguments of the file. */
	.stop_at_arg = true,
};

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

static volatile sig_atomic_t reload_requested;

static void
on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_requested = 1;
	else
		tlb_force_quit = true;
}

static void
log_summary(void)
{
	for (unsigned int d = 0; d < tlb_n_dps; d++) {
		const struct tlb_dp *dp = tlb_dps[d];

		TLB_LOG(NOTICE, main, "lcore %u final counters:", dp->lcore_id);
		for (unsigned int i = 0; i < TLB_DP_N_COUNTERS; i++)
			if (dp->stats.c[i] != 0)
				TLB_LOG(NOTICE, main, "  %-24s %" PRIu64,
					tlb_dp_counter_names[i],
					dp->stats.c[i]);
		for (unsigned int e = 1; e < TLB_PARSE_ERR_MAX; e++)
			if (dp->stats.drop_parse[e] != 0)
				TLB_LOG(NOTICE, main,
					"  drop_parse_%-13s %" PRIu64,
					tlb_parse_err_str(e),
					dp->stats.drop_parse[e]);
		for (uint32_t i = 0; i < dp->n_cores; i++)
			TLB_LOG(NOTICE, main,
				"  core %u: sent %" PRIu64
				" completed %" PRIu64,
				dp->core_id[i], dp->lv->core[i].sent,
				dp->lv->core[i].completed);
	}
}

/* The host transport's fault counters, when a host broke anything. */
static void
log_transport_faults(const struct tlb_transport *host)
{
	struct tlb_cr_faults f;

	tlb_transport_faults(host, &f);
	if (f.sigbus + f.size_changes + f.bad_header + f.bad_index +
		    f.bad_record ==
	    0)
		return;
	TLB_LOG(NOTICE, main,
		"host transport faults: sigbus %" PRIu64
		" size_changes %" PRIu64 " bad_header %" PRIu64
		" bad_index %" PRIu64 " bad_record %" PRIu64 " repairs %" PRIu64
		" restores %" PRIu64 " fallback_cores %" PRIu32,
		f.sigbus, f.size_changes, f.bad_header, f.bad_index,
		f.bad_record, f.repairs, f.restores, f.fallback_cores);
}

/* True when every dispatcher's loop counter moved since the last call: a
 * stuck poll loop stops the watchdog pings, and systemd restarts us. */
static bool
datapath_progressed(void)
{
	static uint64_t last[RTE_MAX_LCORE];
	bool all = true;

	for (unsigned int i = 0; i < tlb_n_dps; i++) {
		uint64_t loops = tlb_counter_read(&tlb_dps[i]->stats.loops);

		if (loops == last[i])
			all = false;
		last[i] = loops;
	}
	return all;
}

/* What the host transport's check found (a host broke the credit ring,
 * or attached to the repaired one). */
static void
log_transport(void *arg, bool warn, const char *msg)
{
	(void)arg;
	if (warn)
		TLB_LOG(WARNING, main, "%s", msg);
	else
		TLB_LOG(NOTICE, main, "%s", msg);
}

/* The main lcore's job while the datapath runs: reloads, the watchdog,
 * and the host transport's check (what a host may have done to the
 * memory it shares with us: tlb_transport_check). */
static void
control_loop(struct tlb_transport *host)
{
	uint64_t wd_usec = 0, since_ping = 0;
	bool wd = tlb_sd_watchdog_enabled(&wd_usec);

	while (!tlb_force_quit) {
		usleep(100 * 1000);
		since_ping += 100 * 1000;
		tlb_transport_check(host, log_transport, NULL);
		if (reload_requested) {
			char msg[256];

			reload_requested = 0;
			tlb_sd_notify("RELOADING=1");
			tlb_control_reload(stderr, msg, sizeof(msg));
			TLB_LOG(NOTICE, main, "SIGHUP: %s", msg);
			tlb_sd_notifyf("READY=1\nSTATUS=%s", msg);
		}
		if (wd && since_ping >= wd_usec / 2) {
			since_ping = 0;
			if (datapath_progressed())
				tlb_sd_notify("WATCHDOG=1");
			else
				TLB_LOG(WARNING, main,
					"a datapath lcore made "
					"no progress: no watchdog ping");
		}
	}
}

/* The host transport the config names: the credit ring in shared memory,
 * feedback frames on the host cores' queues (packet), or none (occupancy
 * from responses only). */
static int
open_transport(const struct tlb_config *cfg, struct tlb_transport **out)
{
	char err[256];

	if (cfg->host.transport == TLB_TRANSPORT_PACKET) {
		if (tlb_transport_packet_create(cfg->ports.n_targets, out, err,
						sizeof(err)) != 0) {
			TLB_LOG(ERR, main, "%s", err);
			return -1;
		}
		TLB_LOG(INFO, main,
			"host transport packet: feedback frames on the host "
			"cores' queues, credits %s%s",
			tlb_credit_mode_str(cfg->host.credits),
			cfg->kick.enabled ? ", kick frames out of the default "
					    "target"
					  : "");
		return 0;
	}

	if (cfg->host.transport == TLB_TRANSPORT_NONE) {
		if (tlb_transport_none_create(cfg->ports.n_targets, out, err,
					      sizeof(err)) != 0) {
			TLB_LOG(ERR, main, "%s", err);
			return -1;
		}
		TLB_LOG(INFO, main,
			"host transport none: no host memory, "
			"credits %s",
			tlb_credit_mode_str(cfg->host.credits));
		return 0;
	}

	mode_t mode = 0600;
	gid_t gid = (gid_t)-1;

	if (cfg->host.group[0] != '\0') {
		struct group *gr = getgrnam(cfg->host.group);

		if (gr == NULL) {
			TLB_LOG(ERR, main, "host.group '%s': no such group",
				cfg->host.group);
			return -1;
		}
		gid = gr->gr_gid;
		/* Its host processes attach read-write: they post credits,
		 * run states and heartbeats. */
		mode = 0660;
	}
	if (tlb_transport_shm_create(cfg->host.credit_ring,
				     cfg->ports.n_targets, cfg->host.ring_size,
				     mode, gid, out, err, sizeof(err)) != 0) {
		TLB_LOG(ERR, main, "%s", err);
		return -1;
	}
	TLB_LOG(INFO, main,
		"host transport shm: credit ring %s, %u cores x "
		"%u records, credits %s",
		cfg->host.credit_ring, cfg->ports.n_targets,
		cfg->host.ring_size, tlb_credit_mode_str(cfg->host.credits));
	return 0;
}

static int
run(struct tlb_config *cfg, const char *prog, int n_over, char **over)
{
	struct rte_mempool *pool = NULL;
	struct tlb_transport *host = NULL;
	char err[256];
	int rc = EXIT_FAILURE;

	if (tlb_eal_init(cfg, prog, n_over, over) != 0)
		return EXIT_FAILURE;
	rte_log_set_level_pattern("turbolb.*", (uint32_t)cfg->log.level);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);

	for (unsigned int i = 0; i < cfg->datapath.n_lcores; i++) {
		unsigned int lcore = cfg->datapath.lcores[i];

		if (!rte_lcore_is_enabled(lcore) ||
		    lcore == rte_get_main_lcore()) {
			TLB_LOG(ERR, main,
				"datapath lcore %u is not a worker "
				"lcore",
				lcore);
			goto out;
		}
	}
	if (cfg->datapath.n_lcores > cfg->ports.n_targets) {
		TLB_LOG(ERR, main,
			"%u dispatcher lcores for %u host cores: "
			"each dispatcher needs at least one host core",
			cfg->datapath.n_lcores, cfg->ports.n_targets);
		goto out;
	}

	if (tlb_ports_setup(cfg, &pool) != 0)
		goto out;

	if (open_transport(cfg, &host) != 0)
		goto out;

	for (unsigned int i = 0; i < cfg->datapath.n_lcores; i++) {
		unsigned int lcore = cfg->datapath.lcores[i];
		struct tlb_dp *dp = rte_zmalloc_socket(
			"tlb_dp", sizeof(*dp), RTE_CACHE_LINE_SIZE,
			(int)rte_lcore_to_socket_id(lcore));

		if (dp == NULL || tlb_dp_init(dp, cfg, lcore, i, host, err,
					      sizeof(err)) != 0) {
			TLB_LOG(ERR, main, "dispatcher %u: %s", i,
				dp == NULL ? "no memory" : err);
			rte_free(dp);
			goto out;
		}
		tlb_dps[tlb_n_dps++] = dp;
	}

	tlb_control_init(cfg);
	if (cfg->telemetry.enabled)
		tlb_telemetry_register();
	/* After the dispatchers exist: the endpoint reads them. */
	if (tlb_metrics_start(cfg) != 0)
		goto out;

	char summary[512];
	tlb_config_summary(cfg, summary, sizeof(summary));
	TLB_LOG(NOTICE, main, "running: %s", summary);

	for (unsigned int i = 0; i < tlb_n_dps; i++)
		rte_eal_remote_launch(tlb_dp_main, tlb_dps[i],
				      tlb_dps[i]->lcore_id);
	tlb_sd_notifyf("READY=1\nSTATUS=%s", summary);
	control_loop(host);
	TLB_LOG(NOTICE, main, "stopping");
	tlb_metrics_stop();
	tlb_sd_notify("STOPPING=1");
	rte_eal_mp_wait_lcore();
	log_summary();
	log_transport_faults(host);
	rc = EXIT_SUCCESS;
out:
	tlb_metrics_stop();
	for (unsigned int d = 0; d < tlb_n_dps; d++) {
		tlb_dp_fini(tlb_dps[d]);
		rte_free(tlb_dps[d]);
		tlb_dps[d] = NULL;
	}
	tlb_n_dps = 0;
	tlb_ports_teardown();
	rte_mempool_free(pool);
	tlb_transport_close(host);
	rte_eal_cleanup();
	return rc;
}

int
main(int argc, char **argv)
{
	struct tlb_config cfg;
	int first, rc;

	switch (cli_parse(&spec, argc, argv, &first)) {
	case CLI_DONE:
		return EXIT_SUCCESS;
	case CLI_ERROR:
		return CLI_EXIT_USAGE;
	default:
		break;
	}
	if (check_path != NULL)
		return check_config(check_path);
	if (config_path == NULL)
		return cli_usage_error(&spec, "-c FILE is required"),
		       CLI_EXIT_USAGE;
	if (tlb_config_load(config_path, &cfg, stderr) != 0) {
		tlb_config_free(&cfg);
		return EXIT_FAILURE;
	}
	/* Whatever follows "--" overrides the EAL arguments of the file. */
	rc = run(&cfg, argv[0], argc - first, argv + first);
	tlb_config_free(&cfg);
	return rc;
}
