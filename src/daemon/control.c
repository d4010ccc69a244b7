/* SPDX-License-Identifier: BSD-3-Clause
 * Live changes. What can change without a restart: the keys the schema
 * marks CFG_RELOAD (src/lib/config.c): the policy and its parameters, the
 * FIFO capacity, the host timeouts and the log level, each applied by
 * tlb_control_reload() below. A change to any other key is refused
 * (tlb_config_needs_restart()) and the old settings stay.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bsd/string.h>

#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "control.h"
#include "dp.h"
#include "log.h"

/* How long a dispatcher may take to reach its loop boundary. A datapath
 * lcore that takes longer is stuck; the change is then abandoned (and
 * its memory left, since the lcore may still read it). */
#define UPDATE_TIMEOUT_US (5 * 1000 * 1000)

RTE_LOG_REGISTER(tlb_logtype_control, turbolb.control, INFO);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tlb_config *running;

void
tlb_control_init(struct tlb_config *cfg)
{
	running = cfg;
}

/* "jsq (d=2 k=2 seed=1 prefer_running=false)": every parameter, from
 * the policies' tables. */
static void
describe_policy(const char *name, const struct tlb_policy_params *p, char *buf,
		size_t len)
{
	char params[128];

	tlb_policy_params_format(p, " ", params, sizeof(params));
	snprintf(buf, len, "%s (%s)", name, params);
}

/* Hands the new settings to every dispatcher and waits until each has
 * them: the policy, and of c the FIFO capacity and the host timeouts.
 * Called with the lock held. */
static int
push(const char *policy_name, const struct tlb_policy_params *params,
     const struct tlb_config *c, char *msg, size_t msglen)
{
	struct tlb_dp_update *u[RTE_MAX_LCORE] = {NULL};
	uint64_t gen[RTE_MAX_LCORE];
	int rc = 0;

	for (unsigned int d = 0; d < tlb_n_dps; d++) {
		struct tlb_dp *dp = tlb_dps[d];
		int socket = (int)rte_lcore_to_socket_id(dp->lcore_id);

		u[d] = rte_zmalloc_socket("tlb_update", sizeof(*u[d]), 0,
					  socket);
		if (u[d] == NULL) {
			snprintf(msg, msglen, "no memory");
			rc = -1;
			goto out;
		}
		if (tlb_policy_init(&u[d]->policy, policy_name, params,
				    dp->n_cores, msg, msglen) != 0) {
			rc = -1;
			goto out;
		}
		uint32_t fifo_capacity = c->fifo.capacity;

		u[d]->fifo_limit = fifo_capacity;
		u[d]->stale_timeout_ns =
			(uint64_t)c->host.stale_timeout_us * 1000;
		u[d]->write_off_ns = (uint64_t)c->host.write_off_us * 1000;
		if (fifo_capacity > dp->fifo.capacity) {
			u[d]->fifo_slot = tlb_dp_fifo_alloc(
				fifo_capacity, &u[d]->fifo_capacity, socket);
			if (u[d]->fifo_slot == NULL) {
				snprintf(msg, msglen, "no memory for the FIFO");
				rc = -1;
				goto out;
			}
		}
	}
	for (unsigned int d = 0; d < tlb_n_dps; d++)
		gen[d] = tlb_dp_post_update(tlb_dps[d], u[d]);
	for (unsigned int d = 0; d < tlb_n_dps; d++) {
		unsigned int waited = 0;

		while (!tlb_dp_update_done(tlb_dps[d], gen[d]) &&
		       waited < UPDATE_TIMEOUT_US) {
			usleep(100);
			waited += 100;
		}
		if (!tlb_dp_update_done(tlb_dps[d], gen[d])) {
			TLB_LOG(ERR, control,
				"lcore %u did not take the new "
				"settings: is it stuck?",
				tlb_dps[d]->lcore_id);
			snprintf(msg, msglen, "lcore %u did not respond",
				 tlb_dps[d]->lcore_id);
			u[d] = NULL; /* it may still read it */
			rc = -1;
		}
	}
out:
	for (unsigned int d = 0; d < tlb_n_dps; d++) {
		if (u[d] == NULL)
			continue;
		/* Applied: the old storage is free. Not posted: the new. */
		rte_free(rc == 0 ? u[d]->old_fifo_slot : u[d]->fifo_slot);
		if (rc != 0 && tlb_dp_update_done(tlb_dps[d], gen[d]))
			rte_free(u[d]->old_fifo_slot);
		rte_free(u[d]);
	}
	return rc;
}

int
tlb_control_reload(FILE *log, char *msg, size_t msglen)
{
	struct tlb_config *n = malloc(sizeof(*n));
	const char *why;
	char before[160], after[160], section[128];
	int rc = -1;

	if (n == NULL) {
		snprintf(msg, msglen, "no memory");
		return -1;
	}
	pthread_mutex_lock(&lock);
	int errors = tlb_config_load(running->path, n, log);
	if (errors != 0) {
		snprintf(msg, msglen, "%s: %d error%s, old configuration stays",
			 running->path, errors, errors == 1 ? "" : "s");
		goto out;
	}
	why = tlb_config_needs_restart(running, n, section, sizeof(section));
	if (why != NULL) {
		snprintf(msg, msglen,
			 "%s: section '%s' changed: that needs a "
			 "restart; old configuration stays",
			 running->path, why);
		goto out;
	}

	bool policy_changed =
		strcmp(running->policy.name, n->policy.name) != 0 ||
		memcmp(&running->policy.params, &n->policy.params,
		       sizeof(n->policy.params)) != 0;
	bool changed =
		policy_changed || running->fifo.capacity != n->fifo.capacity ||
		running->host.stale_timeout_us != n->host.stale_timeout_us ||
		running->host.write_off_us != n->host.write_off_us;

	if (changed &&
	    push(n->policy.name, &n->policy.params, n, msg, msglen) != 0)
		goto out;
	if (policy_changed) {
		describe_policy(running->policy.name, &running->policy.params,
				before, sizeof(before));
		describe_policy(n->policy.name, &n->policy.params, after,
				sizeof(after));
		fprintf(log, "reload: policy %s -> %s\n", before, after);
	}
	if (running->fifo.capacity != n->fifo.capacity)
		fprintf(log, "reload: fifo.capacity %u -> %u\n",
			running->fifo.capacity, n->fifo.capacity);
	if (running->host.stale_timeout_us != n->host.stale_timeout_us)
		fprintf(log, "reload: host.stale_timeout_us %u -> %u\n",
			running->host.stale_timeout_us,
			n->host.stale_timeout_us);
	if (running->host.write_off_us != n->host.write_off_us)
		fprintf(log, "reload: host.write_off_us %u -> %u\n",
			running->host.write_off_us, n->host.write_off_us);
	if (running->log.level != n->log.level) {
		rte_log_set_level_pattern("turbolb.*", (uint32_t)n->log.level);
		fprintf(log, "reload: log.level %s -> %s\n",
			tlb_log_level_str(running->log.level),
			tlb_log_level_str(n->log.level));
		changed = true;
	}
	running->policy = n->policy;
	running->fifo = n->fifo;
	running->host.stale_timeout_us = n->host.stale_timeout_us;
	running->host.write_off_us = n->host.write_off_us;
	running->log = n->log;
	snprintf(msg, msglen, "%s: %s", running->path,
		 changed ? "reloaded" : "unchanged");
	rc = 0;
out:
	pthread_mutex_unlock(&lock);
	tlb_config_free(n);
	free(n);
	return rc;
}

int
tlb_control_set_policy(const char *spec, char *msg, size_t msglen)
{
	char name[TLB_POLICY_NAME_MAX];
	struct tlb_policy_params params;
	char desc[160];
	int rc;

	pthread_mutex_lock(&lock);
	params = running->policy.params;
	rc = tlb_policy_parse_spec(spec, name, &params, msg, msglen);
	if (rc == 0)
		rc = push(name, &params, running, msg, msglen);
	if (rc == 0) {
		strlcpy(running->policy.name, name,
			sizeof(running->policy.name));
		running->policy.params = params;
		describe_policy(name, &params, desc, sizeof(desc));
		snprintf(msg, msglen, "policy %s", desc);
		TLB_LOG(NOTICE, control, "policy switched to %s", desc);
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

void
tlb_control_snapshot(struct tlb_config *out)
{
	pthread_mutex_lock(&lock);
	strlcpy(out->path, running->path, sizeof(out->path));
	out->policy = running->policy;
	out->fifo = running->fifo;
	out->host = running->host;
	out->log = running->log;
	out->rpc = running->rpc;
	pthread_mutex_unlock(&lock);
}
