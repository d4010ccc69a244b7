/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-server's final stats: one JSON document, per core and in total,
 * with the credit ring's counters of each core (docs/host-integration.md).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "server.h"

static_assert(sizeof(struct core_stats) % sizeof(uint64_t) == 0,
	      "core_stats must be nothing but uint64_t counters");

static void
stats_add(struct core_stats *t, const struct core_stats *s)
{
	const uint64_t *src = (const uint64_t *)s;
	uint64_t *dst = (uint64_t *)t;

	/* core_stats is nothing but uint64_t counters. */
	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

static void
json_counters(FILE *f, const struct core_stats *s,
	      const struct tlb_host_core_stats *cs, const char *ind)
{
	fprintf(f, "%s\"received\": %" PRIu64 ",\n", ind, s->rx);
	fprintf(f, "%s\"served\": %" PRIu64 ",\n", ind, s->served);
	fprintf(f, "%s\"responses_sent\": %" PRIu64 ",\n", ind, s->tx);
	fprintf(f, "%s\"tx_drops\": %" PRIu64 ",\n", ind, s->tx_drops);
	fprintf(f, "%s\"nonfinal_packets\": %" PRIu64 ",\n", ind, s->nonfinal);
	fprintf(f, "%s\"not_request\": %" PRIu64 ",\n", ind, s->not_request);
	fprintf(f, "%s\"nonlinear_drops\": %" PRIu64 ",\n", ind, s->nonlinear);
	fprintf(f, "%s\"response_errors\": %" PRIu64 ",\n", ind, s->resp_err);
	fprintf(f, "%s\"idle_sleeps\": %" PRIu64 ",\n", ind, s->idle_sleeps);
	if (conf.feedback != SRV_FB_RING)
		fprintf(f,
			"%s\"feedback\": {\"frames\": %" PRIu64
			", \"tx_drops\": %" PRIu64 ", \"no_mbuf\": %" PRIu64
			"},\n",
			ind, s->fb_frames, s->fb_drops, s->fb_no_mbuf);
	fprintf(f, "%s\"parse_drops\": {", ind);
	for (int i = 1; i < TLB_PARSE_ERR_MAX; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i == 1 ? "" : ", ",
			tlb_parse_err_str((enum tlb_parse_err)i),
			s->parse_err[i]);
	fprintf(f, "},\n");
	if (conf.mode == MODE_KV)
		fprintf(f,
			"%s\"kv\": {\"get\": %" PRIu64 ", \"put\": %" PRIu64
			", \"del\": %" PRIu64 ", \"hit\": %" PRIu64
			", \"miss\": %" PRIu64 ", \"set_full\": %" PRIu64
			", \"bad_request\": %" PRIu64 "},\n",
			ind, s->kv_get, s->kv_put, s->kv_del, s->kv_hit,
			s->kv_miss, s->kv_full, s->kv_bad);
	fprintf(f,
		"%s\"credits\": {\"completed\": %" PRIu64
		", \"posted\": %" PRIu64 ", \"records\": %" PRIu64
		", \"ring_full\": %" PRIu64 ", \"pending\": %" PRIu64
		", \"discarded\": %" PRIu64 ", \"switches\": %" PRIu64 "}\n",
		ind, cs->completed, cs->posted, cs->records, cs->ring_full,
		cs->pending, cs->discarded, cs->switches);
}

static void
json_string(FILE *f, const char *s)
{
	if (s == NULL) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

int
write_stats(void)
{
	struct tlb_host_core_stats cs, tcs;
	struct core_stats total;
	uint64_t port_restarts = 0;
	FILE *f = stdout;

	if (conf.stats_file != NULL) {
		f = fopen(conf.stats_file, "w");
		if (f == NULL) {
			SRV_LOG(ERR, "--stats %s: %s", conf.stats_file,
				strerror(errno));
			return -1;
		}
	}
	memset(&total, 0, sizeof(total));
	memset(&tcs, 0, sizeof(tcs));
	/* "port" is the first (with one port: the only) port; "ports" all
	 * of them, in core order with --port-per-core. */
	fprintf(f, "{\n  \"server\": {\"mode\": \"%s\", \"port\": ",
		mode_names[conf.mode]);
	json_string(f, ports[0].name);
	fprintf(f, ", \"ports\": [");
	for (uint32_t i = 0; i < n_ports; i++) {
		fputs(i == 0 ? "" : ", ", f);
		json_string(f, ports[i].name);
		port_restarts += ports[i].restarts;
	}
	fprintf(f, "], \"port_per_core\": %s, \"cores\": %u, \"udp_ports\": [",
		conf.port_per_core ? "true" : "false", conf.n_cores);
	for (unsigned int i = 0; i < conf.popts.n_udp_ports; i++)
		fprintf(f, "%s%u", i == 0 ? "" : ", ", conf.popts.udp_ports[i]);
	fprintf(f, "], \"credit_ring\": ");
	json_string(f, conf.credit_ring);
	fprintf(f,
		", \"batch\": %u, \"feedback_hold_us\": %u, \"idle_sleep_us\": "
		"%u, \"reattaches\": %" PRIu64
		", \"reattach_failures\": %" PRIu64
		", \"port_restarts\": %" PRIu64 "},\n",
		conf.batch, conf.feedback_hold_us, conf.idle_sleep_us,
		reattaches, reattach_failures, port_restarts);
	fprintf(f, "  \"cores\": [\n");
	for (uint32_t i = 0; i < conf.n_cores; i++) {
		struct srv_core *c = &cores[i];

		tlb_host_core_stats(c->credit, &cs);
		tcs.completed += cs.completed;
		tcs.posted += cs.posted;
		tcs.records += cs.records;
		tcs.ring_full += cs.ring_full;
		tcs.pending += cs.pending;
		tcs.discarded += cs.discarded;
		tcs.switches += cs.switches;
		stats_add(&total, &c->st);
		fprintf(f,
			"    {\n      \"core\": %u,\n      \"lcore\": %u,\n    "
			"  \"port\": ",
			c->idx, c->lcore);
		json_string(f, c->port->name);
		fprintf(f, ",\n      \"queue\": %u,\n", c->queue);
		json_counters(f, &c->st, &cs, "      ");
		fprintf(f, "    }%s\n", i + 1 < conf.n_cores ? "," : "");
	}
	fprintf(f, "  ],\n  \"total\": {\n");
	json_counters(f, &total, &tcs, "    ");
	fprintf(f, "  }\n}\n");
	if (f != stdout) {
		if (fclose(f) != 0) {
			SRV_LOG(ERR, "--stats %s: %s", conf.stats_file,
				strerror(errno));
			return -1;
		}
	} else {
		fflush(f);
	}
	return 0;
}
