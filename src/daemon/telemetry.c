/* SPDX-License-Identifier: BSD-3-Clause
 * Telemetry through DPDK's rte_telemetry, so dpdk-telemetry.py and
 * turbolbctl can ask:
 *   /turbolb/stats   counters summed over dispatcher lcores
 *   /turbolb/cores   per host core: sent, completed, outstanding, state;
 *                    in pages of at most TLB_TEL_CORES_PAGE_MAX cores
 *   /turbolb/config  the active policy and its parameters
 *   /turbolb/residence  the daemon's residence histogram
 *                    (turbolb/metrics.h): sum_ns, count, and per bucket
 *                    bucket_le_<bound in ns> and bucket_inf (packets in
 *                    that bucket, not cumulative)
 * Callbacks run in the telemetry thread and only read data-plane memory
 * (relaxed loads): they never write to it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "turbolb/stats.h"
#include "turbolb/telemetry_cores.h"
#include "turbolb/transport.h"
#include "control.h"
#include "dp.h"
#include "log.h"
#include "port.h"
#include "telemetry.h"

RTE_LOG_REGISTER(tlb_logtype_telemetry, turbolb.telemetry, INFO);

/* One counter summed over the dispatchers: the one at off in struct
 * tlb_dp (offsetof(struct tlb_dp, stats.loops)). */
static uint64_t
sum_dps(size_t off)
{
	uint64_t v = 0;

	for (unsigned int d = 0; d < tlb_n_dps; d++)
		v += tlb_counter_read(
			(const uint64_t *)(const void *)((const char *)
								 tlb_dps[d] +
							 off));
	return v;
}

/* The host kick agent's counters, each under its /turbolb/stats name. */
static const struct {
	const char *name;
	size_t off; /* in struct tlb_cr_kick_stats */
} kick_fields[] = {
	{"kicks_served", offsetof(struct tlb_cr_kick_stats, kicks_served)},
	{"kick_boosts", offsetof(struct tlb_cr_kick_stats, boosts)},
	{"kick_reverted_drain",
	 offsetof(struct tlb_cr_kick_stats, reverted_drain)},
	{"kick_reverted_bound",
	 offsetof(struct tlb_cr_kick_stats, reverted_bound)},
};

#define N_KICK_FIELDS (sizeof(kick_fields) / sizeof(kick_fields[0]))

/* kick_fields summed over every host core, through the host transport
 * (on shm turbolb-kickd writes them into each core's slot; all zero
 * without an agent). */
static void
sum_kick_stats(uint64_t sum[N_KICK_FIELDS])
{
	struct tlb_transport_core_info info;
	uint64_t v;

	memset(sum, 0, sizeof(uint64_t) * N_KICK_FIELDS);
	for (unsigned int n = 0; n < tlb_n_dps; n++) {
		const struct tlb_dp *dp = tlb_dps[n];

		if (dp->host == NULL)
			continue;
		for (uint32_t i = 0; i < dp->n_cores; i++) {
			tlb_transport_core_info(dp->host, dp->core_id[i],
						&info);
			for (size_t f = 0; f < N_KICK_FIELDS; f++) {
				memcpy(&v,
				       (const char *)&info.kick +
					       kick_fields[f].off,
				       sizeof(v));
				sum[f] += v;
			}
		}
	}
}

void
tlb_telemetry_stats(const struct tlb_tel_sink *s)
{
	uint64_t kick[N_KICK_FIELDS];
	char name[64];
	uint64_t drops = 0, fifo = 0;

	for (unsigned int i = 0; i < TLB_DP_N_COUNTERS; i++) {
		uint64_t v = sum_dps(offsetof(struct tlb_dp, stats.c[i]));

		s->u64(s->arg, tlb_dp_counter_names[i], v);
		if (strncmp(tlb_dp_counter_names[i], "drop_", 5) == 0)
			drops += v;
	}
	for (unsigned int e = 1; e < TLB_PARSE_ERR_MAX; e++) {
		uint64_t v =
			sum_dps(offsetof(struct tlb_dp, stats.drop_parse[e]));

		snprintf(name, sizeof(name), "drop_parse_%s",
			 tlb_parse_err_str(e));
		s->u64(s->arg, name, v);
		drops += v;
	}
	for (unsigned int i = 0; i < tlb_n_dps; i++) {
		const struct tlb_fifo *f = &tlb_dps[i]->fifo;

		fifo += __atomic_load_n(&f->tail, __ATOMIC_RELAXED) -
			__atomic_load_n(&f->head, __ATOMIC_RELAXED);
	}
	s->u64(s->arg, "drops", drops);
	s->u64(s->arg, "fifo_depth", fifo);
	s->u64(s->arg, "loops", sum_dps(offsetof(struct tlb_dp, stats.loops)));
	/* DPDK 22.11's /mempool/info has no in-use count. Exact when the
	 * datapath is idle; while it runs, lcore caches change under us. */
	struct rte_mempool *mp = rte_mempool_lookup(TLB_MBUF_POOL);

	if (mp != NULL) {
		s->u64(s->arg, "mbufs_in_use", rte_mempool_in_use_count(mp));
		s->u64(s->arg, "mbufs_total", mp->size);
	}
	sum_kick_stats(kick);
	for (size_t f = 0; f < N_KICK_FIELDS; f++)
		s->u64(s->arg, kick_fields[f].name, kick[f]);
}

static void
sink_u64(void *arg, const char *name, uint64_t v)
{
	rte_tel_data_add_dict_u64(arg, name, v);
}

static void
sink_str(void *arg, const char *name, const char *v)
{
	rte_tel_data_add_dict_string(arg, name, v);
}

static int
cmd_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tlb_tel_sink sink = {.u64 = sink_u64, .str = sink_str, .arg = d};

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	tlb_telemetry_stats(&sink);
	return 0;
}

void
tlb_telemetry_read_core(unsigned int n, uint32_t i, struct tlb_tel_core *row)
{
	const struct tlb_dp *dp = tlb_dps[n];
	const struct tlb_load_view *lv = dp->lv;
	const struct tlb_core_load *c = &lv->core[i];

	memset(row, 0, sizeof(*row));
	row->id = dp->core_id[i];
	row->dispatcher = n;
	row->sent = tlb_counter_read(&c->sent);
	row->completed = tlb_counter_read(&c->completed);
	row->outstanding = tlb_lv_outstanding(lv, i);
	row->outstanding_work_ns = tlb_lv_outstanding_work(lv, i);
	row->state = tlb_tel_core_state(c);
	row->stale = c->stale;
	row->running = c->running;
	row->stale_events = tlb_counter_read(&c->stale_events);
	row->written_off = tlb_counter_read(&c->written_off);
	row->credit_fallback =
		(uint8_t)(__atomic_load_n(&dp->credit_fallback[i / 64],
					  __ATOMIC_RELAXED) >>
				  (i % 64) &
			  1);
	row->has_host = dp->host != NULL;
	if (row->has_host)
		tlb_transport_core_info(dp->host, dp->core_id[i], &row->host);
}

/* /turbolb/cores[,FIRST[,COUNT]]: the host cores with ids from FIRST on,
 * at most COUNT and at most TLB_TEL_CORES_PAGE_MAX of them (the 16 KiB
 * answer: include/turbolb/telemetry_cores.h), each under its id, and
 * "next": the id to ask from for the rest, when there are more. Bad
 * parameters: -EINVAL, which DPDK answers as null. */
static int
cmd_cores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tlb_tel_sink sink = {.u64 = sink_u64, .str = sink_str};
	struct tlb_tel_page page;
	struct tlb_tel_core row;
	uint32_t first, count, total = 0, k = 0;
	uint32_t *ids, *loc;
	char key[16];
	int rc = 0;

	(void)cmd;
	if (tlb_tel_cores_params(params, &first, &count) != 0)
		return -EINVAL;
	for (unsigned int n = 0; n < tlb_n_dps; n++)
		total += tlb_dps[n]->n_cores;
	/* Every core's id, and where it lives: dispatcher << 16 | index
	 * (an index is below TLB_MAX_CORES). */
	ids = malloc(sizeof(*ids) * (total + 1));
	loc = malloc(sizeof(*loc) * (total + 1));
	if (ids == NULL || loc == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned int n = 0; n < tlb_n_dps; n++)
		for (uint32_t i = 0; i < tlb_dps[n]->n_cores; i++, k++) {
			ids[k] = tlb_dps[n]->core_id[i];
			loc[k] = (uint32_t)n << 16 | i;
		}
	tlb_tel_cores_page(ids, total, first, count, &page);

	rte_tel_data_start_dict(d);
	for (uint32_t j = 0; j < page.n; j++) {
		uint32_t l = loc[page.pos[j]];
		struct rte_tel_data *core = rte_tel_data_alloc();

		if (core == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		tlb_telemetry_read_core(l >> 16, l & 0xffff, &row);
		rte_tel_data_start_dict(core);
		sink.arg = core;
		tlb_tel_core_fields(&row, &sink);
		snprintf(key, sizeof(key), "%u", row.id);
		if (rte_tel_data_add_dict_container(d, key, core, 0) != 0) {
			rte_tel_data_free(core);
			rc = -ENOSPC;
			goto out;
		}
	}
	if (page.more)
		rte_tel_data_add_dict_u64(d, "next", page.next);
out:
	free(ids);
	free(loc);
	return rc;
}

/* The policies' parameters, from their tables: each under its name (a
 * bool as 0 or 1); spec_only: only those a NAME:VALUE spec sets (pod's d,
 * jbsq's k). Without spec_only, also "policy_params": the names of the
 * ones the active policy reads, separated by spaces. */
static void
add_policy_params(struct rte_tel_data *d, const struct tlb_config *snap,
		  bool spec_only)
{
	const struct tlb_policy_ops *ops = tlb_policy_find(snap->policy.name);
	const struct tlb_policy_param *all[TLB_POLICY_PARAMS_MAX];
	size_t n = tlb_policy_params_all(all, TLB_POLICY_PARAMS_MAX);
	char reads[128] = "";

	for (size_t i = 0; i < n && i < TLB_POLICY_PARAMS_MAX; i++) {
		bool is_spec = false;

		for (unsigned int p = 0; tlb_policies[p] != NULL; p++)
			is_spec |= tlb_policies[p]->spec_param == all[i];
		if (!spec_only || is_spec)
			rte_tel_data_add_dict_u64(
				d, all[i]->name,
				tlb_policy_param_get(all[i],
						     &snap->policy.params));
		if (ops != NULL && tlb_policy_reads(ops, all[i])) {
			if (reads[0] != '\0')
				strlcat(reads, " ", sizeof(reads));
			strlcat(reads, all[i]->name, sizeof(reads));
		}
	}
	if (!spec_only)
		rte_tel_data_add_dict_string(d, "policy_params", reads);
}

static int
cmd_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static struct tlb_config
		snap; /* telemetry runs one command at a time */

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	if (tlb_n_dps == 0)
		return 0;
	const struct tlb_dp *dp = tlb_dps[0];

	tlb_control_snapshot(&snap);
	rte_tel_data_add_dict_string(d, "policy", snap.policy.name);
	add_policy_params(d, &snap, false);
	rte_tel_data_add_dict_u64(d, "cores", dp->cfg->ports.n_targets);
	rte_tel_data_add_dict_u64(d, "dispatchers", tlb_n_dps);
	rte_tel_data_add_dict_u64(d, "fifo_capacity", snap.fifo.capacity);
	rte_tel_data_add_dict_string(d, "credits",
				     tlb_credit_mode_str(snap.host.credits));
	rte_tel_data_add_dict_string(d, "transport",
				     dp->host != NULL ? dp->host->ops->name
						      : "none");
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
	add_policy_params(d, &snap, true);
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

void
tlb_telemetry_residence(struct tlb_metric_hist *h)
{
	uint64_t tsc = sum_dps(offsetof(struct tlb_dp, stats.residence_tsc));

	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS; b++)
		h->count[b] =
			sum_dps(offsetof(struct tlb_dp, stats.residence[b]));
	/* every dispatcher counts on the one TSC */
	h->sum_ns = (uint64_t)((unsigned __int128)tsc * 1000000000 /
			       rte_get_tsc_hz());
}

static int
cmd_residence(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct tlb_metric_hist h;
	uint64_t total = 0;
	char key[32];

	(void)cmd;
	(void)params;
	tlb_telemetry_residence(&h);
	rte_tel_data_start_dict(d);
	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS; b++) {
		if (b < TLB_RESIDENCE_BUCKETS - 1)
			snprintf(key, sizeof(key), "bucket_le_%" PRIu64,
				 tlb_residence_le_ns[b]);
		else
			snprintf(key, sizeof(key), "bucket_inf");
		rte_tel_data_add_dict_u64(d, key, h.count[b]);
		total += h.count[b];
	}
	rte_tel_data_add_dict_u64(d, "sum_ns", h.sum_ns);
	rte_tel_data_add_dict_u64(d, "count", total);
	return 0;
}

int
tlb_telemetry_register(void)
{
	int rc = 0;

	rc |= rte_telemetry_register_cmd(
		"/turbolb/stats", cmd_stats,
		"Counters summed over dispatchers: rx, steered, responses, "
		"held, drops by reason");
	rc |= rte_telemetry_register_cmd(
		"/turbolb/cores", cmd_cores,
		"Per host core, in pages: params FIRST[,COUNT], then next");
	rc |= rte_telemetry_register_cmd("/turbolb/config", cmd_config,
					 "Active policy and parameters");
	rc |= rte_telemetry_register_cmd(
		"/turbolb/policy", cmd_policy,
		"Show the policy; with a parameter NAME[:PARAM], switch to it");
	rc |= rte_telemetry_register_cmd(
		"/turbolb/residence", cmd_residence,
		"Time packets spent in the daemon, as a histogram in ns");
	rc |= rte_telemetry_register_cmd("/turbolb/reload", cmd_reload,
					 "Re-read the YAML file (as SIGHUP)");
	if (rc != 0)
		TLB_LOG(ERR, telemetry, "cannot register telemetry commands");
	return rc == 0 ? 0 : -1;
}
