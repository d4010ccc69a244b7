/* SPDX-License-Identifier: BSD-3-Clause
 * Telemetry through DPDK's rte_telemetry, so dpdk-telemetry.py and
 * turbolbctl can ask:
 *   /turbolb/stats   counters summed over dispatcher lcores
 *   /turbolb/cores   per host core: sent, completed, outstanding, state
 *   /turbolb/config  the active policy and its parameters
 * Callbacks run in the telemetry thread and only read data-plane memory
 * (relaxed loads): they never write to it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "turbolb/transport.h"
#include "turbolb/stats.h"
#include "control.h"
#include "dp.h"
#include "log.h"
#include "port.h"
#include "telemetry.h"

RTE_LOG_REGISTER(tlb_logtype_telemetry, turbolb.telemetry, INFO);

static uint64_t
sum_counter(unsigned int idx)
{
	uint64_t v = 0;

	for (unsigned int d = 0; d < tlb_n_dps; d++)
		v += tlb_counter_read(&tlb_dps[d]->stats.c[idx]);
	return v;
}

static uint64_t
sum_parse_drop(unsigned int code)
{
	uint64_t v = 0;

	for (unsigned int d = 0; d < tlb_n_dps; d++)
		v += tlb_counter_read(&tlb_dps[d]->stats.drop_parse[code]);
	return v;
}

/* The host kick agent's counters, through the host transport (on shm
 * turbolb-kickd writes them into each core's slot; all zero without an
 * agent). */
static void
sum_kick_stats(struct tlb_cr_kick_stats *t)
{
	struct tlb_transport_core_info info;

	memset(t, 0, sizeof(*t));
	for (unsigned int n = 0; n < tlb_n_dps; n++) {
		const struct tlb_dp *dp = tlb_dps[n];

		if (dp->host == NULL)
			continue;
		for (uint32_t i = 0; i < dp->n_cores; i++) {
			tlb_transport_core_info(dp->host, dp->core_id[i],
						&info);
			t->kicks_served += info.kick.kicks_served;
			t->boosts += info.kick.boosts;
			t->reverted_drain += info.kick.reverted_drain;
			t->reverted_bound += info.kick.reverted_bound;
		}
	}
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tlb_cr_kick_stats ks;
	char name[64];
	uint64_t drops = 0, fifo = 0, loops = 0;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned int i = 0; i < TLB_DP_N_COUNTERS; i++) {
		uint64_t v = sum_counter(i);

		rte_tel_data_add_dict_u64(d, tlb_dp_counter_names[i], v);
		if (strncmp(tlb_dp_counter_names[i], "drop_", 5) == 0)
			drops += v;
	}
	for (unsigned int e = 1; e < TLB_PARSE_ERR_MAX; e++) {
		uint64_t v = sum_parse_drop(e);

		snprintf(name, sizeof(name), "drop_parse_%s",
			 tlb_parse_err_str(e));
		rte_tel_data_add_dict_u64(d, name, v);
		drops += v;
	}
	for (unsigned int i = 0; i < tlb_n_dps; i++) {
		const struct tlb_fifo *f = &tlb_dps[i]->fifo;

		fifo += __atomic_load_n(&f->tail, __ATOMIC_RELAXED) -
			__atomic_load_n(&f->head, __ATOMIC_RELAXED);
		loops += tlb_counter_read(&tlb_dps[i]->stats.loops);
	}
	rte_tel_data_add_dict_u64(d, "drops", drops);
	rte_tel_data_add_dict_u64(d, "fifo_depth", fifo);
	rte_tel_data_add_dict_u64(d, "loops", loops);
	/* DPDK 22.11's /mempool/info has no in-use count. Exact when the
	 * datapath is idle; while it runs, lcore caches change under us. */
	struct rte_mempool *mp = rte_mempool_lookup(TLB_MBUF_POOL);

	if (mp != NULL) {
		rte_tel_data_add_dict_u64(d, "mbufs_in_use",
					  rte_mempool_in_use_count(mp));
		rte_tel_data_add_dict_u64(d, "mbufs_total", mp->size);
	}
	sum_kick_stats(&ks);
	rte_tel_data_add_dict_u64(d, "kicks_served", ks.kicks_served);
	rte_tel_data_add_dict_u64(d, "kick_boosts", ks.boosts);
	rte_tel_data_add_dict_u64(d, "kick_reverted_drain", ks.reverted_drain);
	rte_tel_data_add_dict_u64(d, "kick_reverted_bound", ks.reverted_bound);
	return 0;
}

static const char *
state_name(const struct tlb_core_load *c)
{
	if (!c->online)
		return "offline";
	if (c->stale)
		return "stale";
	if (c->probing)
		return "probing";
	return c->running ? "running" : "online";
}

static int
cmd_cores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char key[16];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	/* Each dispatcher reports the host cores of its share. */
	for (unsigned int n = 0; n < tlb_n_dps; n++) {
		const struct tlb_dp *dp = tlb_dps[n];
		const struct tlb_load_view *lv = dp->lv;

		for (uint32_t i = 0; i < lv->n_cores; i++) {
			const struct tlb_core_load *c = &lv->core[i];
			struct rte_tel_data *core = rte_tel_data_alloc();

			if (core == NULL)
				return -ENOMEM;
			rte_tel_data_start_dict(core);
			rte_tel_data_add_dict_u64(core, "sent",
						  tlb_counter_read(&c->sent));
			rte_tel_data_add_dict_u64(core, "completed",
				tlb_counter_read(&c->completed));
			rte_tel_data_add_dict_u64(core, "outstanding",
						  tlb_lv_outstanding(lv, i));
			rte_tel_data_add_dict_u64(core, "outstanding_work_ns",
				tlb_lv_outstanding_work(lv, i));
			rte_tel_data_add_dict_string(core, "state",
						     state_name(c));
			rte_tel_data_add_dict_u64(core, "stale", c->stale);
			rte_tel_data_add_dict_u64(core, "running", c->running);
			rte_tel_data_add_dict_u64(core, "stale_events",
				tlb_counter_read(&c->stale_events));
			rte_tel_data_add_dict_u64(core, "written_off",
				tlb_counter_read(&c->written_off));
			rte_tel_data_add_dict_u64(core, "dispatcher", n);
			if (dp->host != NULL) {
				struct tlb_transport_core_info info;

				tlb_transport_core_info(dp->host,
							dp->core_id[i], &info);
				rte_tel_data_add_dict_u64(core, "tid",
							  info.tid);
				rte_tel_data_add_dict_u64(core, "off_cpu",
							  info.off_cpu);
				rte_tel_data_add_dict_u64(core, "kicks_served",
					info.kick.kicks_served);
				rte_tel_data_add_dict_u64(core, "kick_boosts",
							  info.kick.boosts);
				rte_tel_data_add_dict_u64(core,
					"kick_reverted_drain",
					info.kick.reverted_drain);
				rte_tel_data_add_dict_u64(core,
					"kick_reverted_bound",
					info.kick.reverted_bound);
			}
			snprintf(key, sizeof(key), "%u", dp->core_id[i]);
			rte_tel_data_add_dict_container(d, key, core, 0);
		}
	}
	return 0;
}

static int
cmd_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct tlb_config snap; /* telemetry runs one command at a time */

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (tlb_n_dps == 0)
		return 0;
	const struct tlb_dp *dp = tlb_dps[0];

	tlb_control_snapshot(&snap);
	rte_tel_data_add_dict_string(d, "policy", snap.policy.name);
	rte_tel_data_add_dict_u64(d, "d", snap.policy.params.d);
	rte_tel_data_add_dict_u64(d, "k", snap.policy.params.k);
	rte_tel_data_add_dict_u64(d, "seed", snap.policy.params.seed);
	rte_tel_data_add_dict_u64(d, "prefer_running",
				  snap.policy.params.prefer_running);
	rte_tel_data_add_dict_u64(d, "cores", dp->cfg->ports.n_targets);
	rte_tel_data_add_dict_u64(d, "dispatchers", tlb_n_dps);
	rte_tel_data_add_dict_u64(d, "fifo_capacity", snap.fifo.capacity);
	rte_tel_data_add_dict_string(d, "credits",
				     tlb_credit_mode_str(snap.host.credits));
	rte_tel_data_add_dict_string(d, "transport",
				     dp->host != NULL ? dp->host->ops->name :
							"none");
	rte_tel_data_add_dict_u64(d, "stale_timeout_us",
				  snap.host.stale_timeout_us);
	rte_tel_data_add_dict_u64(d, "udp_port", snap.rpc.udp_ports[0]);
	rte_tel_data_add_dict_string(d, "log_level",
				     tlb_log_level_str(snap.log.level));
	rte_tel_data_add_dict_string(d, "config_file", snap.path);
	return 0;
}

/* /turbolb/policy           -> the active policy
 * /turbolb/policy,jbsq:2    -> switch, without a restart */
static int
cmd_policy(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct tlb_config snap;
	char msg[256];
	int rc = 0;

	(void)cmd;
	rte_tel_data_start_dict(d);
	if (params != NULL && *params != '\0') {
		rc = tlb_control_set_policy(params, msg, sizeof(msg));
		rte_tel_data_add_dict_int(d, "ok", rc == 0);
		rte_tel_data_add_dict_string(d, "message", msg);
	}
	tlb_control_snapshot(&snap);
	rte_tel_data_add_dict_string(d, "policy", snap.policy.name);
	rte_tel_data_add_dict_u64(d, "d", snap.policy.params.d);
	rte_tel_data_add_dict_u64(d, "k", snap.policy.params.k);
	return 0;
}

/* /turbolb/reload: re-reads the YAML file, as SIGHUP does. */
static int
cmd_reload(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char msg[256];
	int rc;

	(void)cmd;
	(void)params;
	rc = tlb_control_reload(stderr, msg, sizeof(msg));
	TLB_LOG(NOTICE, telemetry, "%s", msg);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "ok", rc == 0);
	rte_tel_data_add_dict_string(d, "message", msg);
	return 0;
}

int
tlb_telemetry_register(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd("/turbolb/stats", cmd_stats,
		"Counters summed over dispatchers: rx, steered, responses, "
		"held, drops by reason");
	rc |= rte_telemetry_register_cmd("/turbolb/cores", cmd_cores,
		"Per host core: sent, completed, outstanding, work, state");
	rc |= rte_telemetry_register_cmd("/turbolb/config", cmd_config,
		"Active policy and parameters");
	rc |= rte_telemetry_register_cmd("/turbolb/policy", cmd_policy,
		"Show the policy; with a parameter NAME[:PARAM], switch to it");
	rc |= rte_telemetry_register_cmd("/turbolb/reload", cmd_reload,
		"Re-read the YAML file (as SIGHUP)");
	if (rc != 0)
		TLB_LOG(ERR, telemetry, "cannot register telemetry commands");
	return rc == 0 ? 0 : -1;
}
