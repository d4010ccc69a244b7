/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server: the reference RPC server. One ethdev port with N RX and
 * N TX queues, logical core i on its own EAL worker lcore polling RX queue
 * i and answering on TX queue i; or, with --port-per-core, N ports (one VF
 * per host core on real hardware) with core i on queue 0 of port i.
 * Modes: spin (busy-waits for the request's service-time hint: the Turbo
 * evaluation's synthetic server), kv (GET/PUT/DEL on an in-memory table
 * shared by all cores) and emulate (one worker lcore carries every logical
 * core as an emulated FIFO server in TSC time, src/server/emu.h: a request
 * completes at max(its arrival, the core's previous completion) + its
 * service-time hint, and its response leaves then). With a
 * credit ring it reports completions, run state and heartbeats through
 * libturbolb-host, and reattaches when the daemon restarts.
 *
 *   turbolb-server [EAL args] -- --cores N [--port NAME]... [--port-per-core]
 *       [--mode spin|kv|emulate] [--emu-depth N] [--emu-arrival poll|sent]
 *       [--credit-ring NAME] [--idle-sleep-us U] [--udp-port 9000]
 *       [--batch B] [--stats FILE] [--kv-capacity N] [--max-spin-us U]
 *
 * Wire formats: docs/protocol.md (RPC) and docs/host-integration.md (kv).
 *
 * Files: server.h (the shared state), options.c, ports.c, spin.c (spin and
 * kv workers), kv.c, emulate.c and emu.c (--mode emulate), stats.c (the
 * JSON stats), unmap_guard.c (keeps a memif peer's departure from
 * unmapping rings under a polling core); this file attaches the credit
 * ring, launches the workers and watches the ring and the ports until a
 * signal.
 */
#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "cli.h"
#include "server.h"

RTE_LOG_REGISTER(srv_logtype, turbolb.server, INFO);

/* A worker lcore per core at most, each with an unmap guard slot. */
static_assert(SRV_BURST_SLOTS >= TLB_CR_MAX_CORES,
	      "an unmap guard slot for each core");

volatile bool force_quit;
struct srv_core *cores;
uint64_t tsc_hz;
uint64_t reattaches;
uint64_t reattach_failures;

static struct tlb_host *host;

static void
signal_handler(int sig)
{
	(void)sig;
	force_quit = true;
}

static void
eal_usage_hook(const char *prog)
{
	(void)prog;
	usage(stdout);
}

/* The options after "--", parsed before the EAL starts so that a usage
 * error needs no EAL. argv[sep] ("--") stands in for the program name.
 * CLI_OK, CLI_DONE or CLI_ERROR. */
static int
parse_app_args(int argc, char **argv, int sep)
{
	int app_argc = sep < argc ? argc - sep : 1;
	char **app_argv = calloc((size_t)app_argc + 1, sizeof(*app_argv));
	int rc;

	if (app_argv == NULL) {
		fprintf(stderr, "turbolb-server: out of memory\n");
		return CLI_ERROR;
	}
	app_argv[0] = argv[0];
	for (int i = 1; i < app_argc; i++)
		app_argv[i] = argv[sep + i];
	rc = parse_args(app_argc, app_argv);
	free(app_argv);
	return rc;
}

static int
credit_setup(void)
{
	char err[256];
	struct tlb_host_opts o;
	uint32_t ring_cores;

	tlb_host_opts_init(&o);
	o.batch = conf.batch;
	o.feedback_hold_us = conf.feedback_hold_us;
	o.feedback_state_only = conf.feedback == SRV_FB_STATE;
	if (conf.feedback != SRV_FB_RING) {
		host = tlb_host_open_packet(conf.n_cores, &o, err, sizeof(err));
		if (host == NULL) {
			SRV_LOG(ERR, "--feedback: %s", err);
			return -1;
		}
		if (conf.agent_ring != NULL &&
		    tlb_host_agent_ring(host, conf.agent_ring, err,
					sizeof(err)) != 0) {
			SRV_LOG(ERR, "--agent-ring: %s", err);
			return -1;
		}
		for (uint32_t i = 0; i < conf.n_cores; i++)
			cores[i].credit = tlb_host_core(host, i);
		if (conf.feedback == SRV_FB_STATE)
			SRV_LOG(INFO,
				"feedback frames of run state and heartbeat "
				"on each core's queue: host epoch %" PRIu64,
				tlb_host_epoch(host));
		else
			SRV_LOG(INFO,
				"feedback frames on each core's queue: host "
				"epoch %" PRIu64 ", batch %u, hold %u us",
				tlb_host_epoch(host), conf.batch,
				conf.feedback_hold_us);
		return 0;
	}
	/* Like the port: wait for turbolbd, so start order does not matter
	 * (a region being created reads as invalid for a moment too). */
	for (unsigned int tries = 0;; tries++) {
		host = tlb_host_open_opts(conf.credit_ring, &o, err,
					  sizeof(err));
		if (host != NULL)
			break;
		if (force_quit)
			return -1;
		if (tries % 100 == 0)
			SRV_LOG(WARNING,
				"--credit-ring: %s; retrying every 100 ms "
				"until a signal",
				err);
		rte_delay_us_sleep(100 * 1000);
	}
	ring_cores = tlb_host_n_cores(host);
	if (ring_cores < conf.n_cores) {
		SRV_LOG(ERR,
			"credit ring %s has %u cores, fewer than --cores %u: "
			"the daemon's host_cores and the server must agree",
			conf.credit_ring, ring_cores, conf.n_cores);
		return -1;
	}
	for (uint32_t i = 0; i < conf.n_cores; i++)
		cores[i].credit = tlb_host_core(host, i);
	SRV_LOG(INFO,
		"credit ring %s attached: %u cores, host epoch %" PRIu64
		", batch %u",
		conf.credit_ring, ring_cores, tlb_host_epoch(host), conf.batch);
	return 0;
}

/* The credit ring: notice a daemon restart and move over; the workers
 * follow at their next call, without stopping. */
static void
credit_watch(void)
{
	static bool failing;
	char err[256];

	if (host == NULL || !tlb_host_stale(host))
		return;
	if (!failing)
		SRV_LOG(WARNING,
			"credit ring %s went stale (turbolbd restarted?): "
			"reattaching",
			conf.credit_ring);
	if (tlb_host_reattach(host, err, sizeof(err)) == 0) {
		reattaches++;
		failing = false;
		SRV_LOG(NOTICE,
			"credit ring %s reattached, host epoch %" PRIu64,
			conf.credit_ring, tlb_host_epoch(host));
		return;
	}
	/* The daemon may not be back yet: say so once, keep serving and
	 * keep trying. */
	if (!failing)
		SRV_LOG(WARNING, "reattach failed: %s (retrying every %d ms)",
			err, STALE_POLL_MS);
	failing = true;
	reattach_failures++;
}

static void
watch_loop(void)
{
	while (!force_quit) {
		rte_delay_us_sleep(STALE_POLL_MS * 1000);
		credit_watch();
		for (uint32_t i = 0; i < n_ports; i++)
			port_watch(&ports[i]);
	}
}

int
main(int argc, char **argv)
{
	unsigned int lcore, n_workers, need_workers;
	struct sigaction sa;
	int sep = cli_find_dashdash(argc, argv);
	uint32_t i;
	int ret, rc = 1;

	switch (parse_app_args(argc, argv, sep)) {
	case CLI_DONE:
		return 0;
	case CLI_ERROR:
		return CLI_EXIT_USAGE;
	default:
		break;
	}
	/* Logs to stderr, so that stdout carries nothing but the stats. */
	rte_openlog_stream(stderr);
	rte_set_application_usage_hook(eal_usage_hook);
	ret = rte_eal_init(sep, argv);
	if (ret < 0) {
		fprintf(stderr, "turbolb-server: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	n_workers = rte_lcore_count() - 1;
	if (conf.n_cores == 0)
		conf.n_cores = n_workers;
	/* Emulated cores all run on one worker lcore. */
	need_workers = conf.mode == MODE_EMULATE ? 1 : conf.n_cores;
	if (conf.n_cores == 0 || n_workers < need_workers) {
		if (conf.mode == MODE_EMULATE)
			SRV_LOG(ERR,
				"--mode emulate needs one EAL worker lcore, "
				"the EAL has none (e.g. --lcores=0@0,1@1)");
		else
			SRV_LOG(ERR,
				"--cores %u needs as many EAL worker lcores, "
				"the EAL has %u (map lcores to CPUs, e.g. "
				"--lcores=0@0,(1-%u)@1)",
				conf.n_cores, n_workers,
				conf.n_cores == 0 ? 1 : conf.n_cores);
		goto out_eal;
	}
	tsc_hz = rte_get_tsc_hz();

	cores = rte_zmalloc("srv_cores", sizeof(*cores) * conf.n_cores,
			    RTE_CACHE_LINE_SIZE);
	if (cores == NULL) {
		SRV_LOG(ERR, "out of memory for %u cores", conf.n_cores);
		goto out_eal;
	}
	i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (i == need_workers)
			break;
		cores[i].idx = i;
		cores[i].lcore = lcore;
		cores[i].burst = &srv_burst_slots[i];
		i++;
	}
	for (i = need_workers; i < conf.n_cores; i++) {
		cores[i].idx = i;
		cores[i].lcore = cores[0].lcore;
		cores[i].burst = cores[0].burst;
	}
	for (i = 0; conf.mode == MODE_EMULATE && i < conf.n_cores; i++) {
		if (emu_core_init(&cores[i].emu, conf.emu_depth) < 0) {
			SRV_LOG(ERR,
				"out of memory for %u emulated cores of depth "
				"%u",
				conf.n_cores, conf.emu_depth);
			goto out_cores;
		}
	}
	if (conf.mode == MODE_KV && kv_init(conf.kv_capacity) < 0) {
		SRV_LOG(ERR, "out of memory for a kv table of %u entries",
			conf.kv_capacity);
		goto out_cores;
	}
	if ((conf.credit_ring != NULL || conf.feedback != SRV_FB_RING) &&
	    credit_setup() < 0)
		goto out_host;
	if (find_ports() < 0 || ports_setup() < 0)
		goto out_port;

	SRV_LOG(INFO,
		"serving: mode %s, %u cores on %u port%s, UDP port %u%s, idle "
		"sleep %u us",
		mode_names[conf.mode], conf.n_cores, n_ports,
		n_ports == 1 ? "" : "s", conf.popts.udp_ports[0],
		conf.popts.n_udp_ports > 1 ? " (and more)" : "",
		conf.idle_sleep_us);
	if (conf.mode == MODE_EMULATE) {
		ret = rte_eal_remote_launch(emu_loop, NULL, cores[0].lcore);
		if (ret != 0) {
			SRV_LOG(ERR,
				"cannot launch the emulated cores on lcore %u: "
				"%s",
				cores[0].lcore, rte_strerror(-ret));
			force_quit = true;
		}
	}
	for (i = 0; conf.mode != MODE_EMULATE && i < conf.n_cores; i++) {
		ret = rte_eal_remote_launch(core_loop, &cores[i],
					    cores[i].lcore);
		if (ret != 0) {
			SRV_LOG(ERR, "cannot launch core %u on lcore %u: %s", i,
				cores[i].lcore, rte_strerror(-ret));
			force_quit = true;
			break;
		}
	}
	if (!force_quit)
		watch_loop();
	rte_eal_mp_wait_lcore();
	emu_release();
	if (srv_unmap_waits != 0)
		SRV_LOG(INFO,
			"unmap guard: %" PRIu64 " bursts held back an unmap "
			"(a memif peer left while a core was inside a burst)",
			srv_unmap_waits);
	SRV_LOG(INFO, "stopped");
	rc = write_stats() == 0 ? 0 : 1;

out_port:
	ports_close();
	if (pool != NULL) {
		unsigned int in_use;

		in_use = rte_mempool_in_use_count(pool);
		if (in_use != 0)
			SRV_LOG(WARNING, "%u mbufs still in use at exit",
				in_use);
		rte_mempool_free(pool);
	}
out_host:
	tlb_host_close(host);
	kv_free();
out_cores:
	emu_release();
	rte_free(cores);
out_eal:
	rte_eal_cleanup();
	return rc;
}
