/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd's counters as Prometheus text: see include/turbolb/metrics.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/dp_counters.h"
#include "turbolb/metrics.h"

#define DROPS "turbolb_drops_total"

#define ENTRY_COUNTER(key, family, help)                                       \
	{key, family, NULL, TLB_METRIC_COUNTER, false, help},
#define ENTRY_SECONDS(key, family, help)                                       \
	{key, family, NULL, TLB_METRIC_COUNTER, true, help},
#define ENTRY_DROP(key, reason, help)                                          \
	{key, DROPS, reason, TLB_METRIC_COUNTER, false, help},

/* Every key of /turbolb/stats, in the order of the text: the datapath's
 * counters (turbolb/dp_counters.h), then the keys telemetry adds
 * (src/daemon/telemetry.c). Entries of one family are adjacent. */
static const struct tlb_metric_stat stat_table[] = {
#define X(key, kind, what, help) ENTRY_##kind(#key, what, help)
	TLB_DP_COUNTERS(X)
#undef X
		{"drop_parse_", DROPS, NULL, TLB_METRIC_COUNTER, false,
		 "A frame on an RPC port that failed to parse; the reason is "
		 "parse_ and the parse error."},
	{"drops", NULL, NULL, TLB_METRIC_NONE, false,
	 "The sum of the drops: sum(turbolb_drops_total)."},
	{"fifo_depth", "turbolb_fifo_depth_requests", NULL, TLB_METRIC_GAUGE,
	 false, "Requests held in the NIC-side FIFOs now."},
	{"loops", "turbolb_poll_loops_total", NULL, TLB_METRIC_COUNTER, false,
	 "Iterations of the dispatchers' poll loops (a heartbeat)."},
	{"mbufs_in_use", "turbolb_mbufs_in_use", NULL, TLB_METRIC_GAUGE, false,
	 "Packet buffers in use (exact when the datapath is idle)."},
	{"mbufs_total", "turbolb_mbufs_capacity", NULL, TLB_METRIC_GAUGE, false,
	 "Packet buffers in the pool."},
	{"kicks_served", "turbolb_kicks_served_total", NULL, TLB_METRIC_COUNTER,
	 false, "Doorbells served by the host kick agent."},
	{"kick_boosts", "turbolb_kick_boosts_total", NULL, TLB_METRIC_COUNTER,
	 false, "Priority boosts by the host kick agent."},
	{"kick_reverted_drain", "turbolb_kick_reverted_drain_total", NULL,
	 TLB_METRIC_COUNTER, false,
	 "Boosts the kick agent reverted: the core drained its work."},
	{"kick_reverted_bound", "turbolb_kick_reverted_bound_total", NULL,
	 TLB_METRIC_COUNTER, false,
	 "Boosts the kick agent reverted: the boost reached its time bound."},
};

#define N_STATS (sizeof(stat_table) / sizeof(stat_table[0]))

/* Around the residences that matter for 1-10 us RPCs, and a tail to see a
 * stalled lcore. */
const uint64_t tlb_residence_le_ns[TLB_RESIDENCE_BUCKETS - 1] = {
	100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 1000000,
};

static const char drops_help[] =
	"Frames and requests dropped, by reason (each reason's meaning: "
	"the comment beside it).";

/* A key ending in '_' is a prefix of the keys it describes. */
static bool
stat_matches(const struct tlb_metric_stat *m, const char *key)
{
	size_t len = strlen(m->key);

	if (len > 0 && m->key[len - 1] == '_')
		return strncmp(key, m->key, len) == 0 && key[len] != '\0';
	return strcmp(key, m->key) == 0;
}

const struct tlb_metric_stat *
tlb_metric_stat_find(const char *key)
{
	for (size_t i = 0; i < N_STATS; i++)
		if (stat_matches(&stat_table[i], key))
			return &stat_table[i];
	return NULL;
}

/* HELP text escapes backslash and newline. */
static void
put_help(FILE *f, const char *family, const char *help)
{
	fprintf(f, "# HELP %s ", family);
	for (const char *p = help; *p != '\0'; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fputc('\n', f);
}

static void
put_header(FILE *f, const char *family, enum tlb_metric_type type,
	   const char *help)
{
	put_help(f, family, help);
	fprintf(f, "# TYPE %s %s\n", family,
		type == TLB_METRIC_COUNTER ? "counter" : "gauge");
}

/* An integer, or nanoseconds as exact decimal seconds. */
static void
put_value(FILE *f, uint64_t v, bool ns)
{
	if (ns)
		fprintf(f, "%" PRIu64 ".%09" PRIu64 "\n", v / 1000000000u,
			v % 1000000000u);
	else
		fprintf(f, "%" PRIu64 "\n", v);
}

static void
write_stats(FILE *f, const struct tlb_metric_sample *s, size_t n)
{
	const char *last = NULL;

	for (size_t i = 0; i < N_STATS; i++) {
		const struct tlb_metric_stat *m = &stat_table[i];
		bool commented = false;

		if (m->type == TLB_METRIC_NONE)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (!stat_matches(m, s[j].key))
				continue;
			if (last == NULL || strcmp(last, m->family) != 0) {
				put_header(f, m->family, m->type,
					   strcmp(m->family, DROPS) == 0
						   ? drops_help
						   : m->help);
				last = m->family;
			}
			if (strcmp(m->family, DROPS) != 0) {
				fprintf(f, "%s ", m->family);
				put_value(f, s[j].value, m->ns);
				continue;
			}
			/* The reason's one description, as a comment: the
			 * family has one HELP. */
			if (!commented)
				fprintf(f, "# reason=\"%s%s\": %s\n",
					m->reason != NULL ? m->reason
							  : m->key + 5,
					m->reason != NULL ? "" : "*", m->help);
			commented = true;
			fprintf(f, "%s{reason=\"%s\"} ", m->family,
				m->reason != NULL ? m->reason : s[j].key + 5);
			put_value(f, s[j].value, m->ns);
		}
	}
}

/* ---- per core -------------------------------------------------------- */

enum core_field {
	F_SENT,
	F_COMPLETED,
	F_OUTSTANDING,
	F_WORK,
	F_WRITTEN_OFF,
	F_STALE_EV,
};

static const struct {
	const char *family;
	enum tlb_metric_type type;
	enum core_field field;
	const char *help;
} core_table[] = {
	{"turbolb_core_requests_sent_total", TLB_METRIC_COUNTER, F_SENT,
	 "Requests sent to the host core."},
	{"turbolb_core_requests_completed_total", TLB_METRIC_COUNTER,
	 F_COMPLETED, "Requests the host core completed."},
	{"turbolb_core_outstanding_requests", TLB_METRIC_GAUGE, F_OUTSTANDING,
	 "Requests sent to the host core and not completed."},
	{"turbolb_core_outstanding_work_seconds", TLB_METRIC_GAUGE, F_WORK,
	 "The work of the host core's outstanding requests, in seconds."},
	{"turbolb_core_written_off_requests_total", TLB_METRIC_COUNTER,
	 F_WRITTEN_OFF, "Requests written off at the host core."},
	{"turbolb_core_stale_events_total", TLB_METRIC_COUNTER, F_STALE_EV,
	 "Times the host core went stale."},
};

/* tlb_tel_core_state()'s words (src/lib/telemetry_cores.c). */
static const char *const core_states[] = {
	"offline", "stale", "probing", "running", "online",
};

static uint64_t
core_value(const struct tlb_metric_core *c, enum core_field f)
{
	switch (f) {
	case F_SENT:
		return c->sent;
	case F_COMPLETED:
		return c->completed;
	case F_OUTSTANDING:
		return c->outstanding;
	case F_WORK:
		return c->outstanding_work_ns;
	case F_WRITTEN_OFF:
		return c->written_off;
	case F_STALE_EV:
		return c->stale_events;
	}
	return 0;
}

static int
core_cmp(const void *a, const void *b)
{
	const struct tlb_metric_core *x =
		*(const struct tlb_metric_core *const *)a;
	const struct tlb_metric_core *y =
		*(const struct tlb_metric_core *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void
write_cores(FILE *f, const struct tlb_metric_core *cores, size_t n)
{
	const struct tlb_metric_core **order;

	if (n == 0)
		return;
	order = malloc(n * sizeof(*order));
	if (order == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		order[i] = &cores[i];
	qsort(order, n, sizeof(*order), core_cmp);
	for (size_t t = 0; t < sizeof(core_table) / sizeof(core_table[0]);
	     t++) {
		put_header(f, core_table[t].family, core_table[t].type,
			   core_table[t].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f,
				"%s{core=\"%" PRIu32 "\",dispatcher=\"%" PRIu32
				"\"} ",
				core_table[t].family, order[i]->id,
				order[i]->dispatcher);
			put_value(f, core_value(order[i], core_table[t].field),
				  core_table[t].field == F_WORK);
		}
	}
	put_header(f, "turbolb_core_state", TLB_METRIC_GAUGE,
		   "1 for the host core's state, 0 for the others (offline, "
		   "stale, probing, running, online).");
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0;
		     s < sizeof(core_states) / sizeof(core_states[0]); s++)
			fprintf(f,
				"turbolb_core_state{core=\"%" PRIu32
				"\",dispatcher=\"%" PRIu32 "\",state=\"%s\"} "
				"%d\n",
				order[i]->id, order[i]->dispatcher,
				core_states[s],
				strcmp(order[i]->state, core_states[s]) == 0);
	free(order);
}

/* A bound in ns as seconds, the shortest exact decimal. */
static void
put_le(FILE *f, uint64_t ns)
{
	char frac[16];
	int end;

	snprintf(frac, sizeof(frac), "%09" PRIu64, ns % 1000000000u);
	for (end = 9; end > 1 && frac[end - 1] == '0'; end--)
		;
	fprintf(f, "%" PRIu64 ".%.*s", ns / 1000000000u, end, frac);
}

static void
write_residence(FILE *f, const struct tlb_metric_hist *h)
{
	static const char family[] = "turbolb_residence_seconds";
	uint64_t cumulative = 0;

	put_help(f, family,
		 "Time a packet spent in the daemon: from the start of the "
		 "poll that received it to the TX call that sent it; a TX "
		 "call counts its packets with its oldest's time.");
	fprintf(f, "# TYPE %s histogram\n", family);
	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS; b++) {
		cumulative += h->count[b];
		fprintf(f, "%s_bucket{le=\"", family);
		if (b < TLB_RESIDENCE_BUCKETS - 1)
			put_le(f, tlb_residence_le_ns[b]);
		else
			fputs("+Inf", f);
		fprintf(f, "\"} %" PRIu64 "\n", cumulative);
	}
	fprintf(f, "%s_sum ", family);
	put_value(f, h->sum_ns, true);
	fprintf(f, "%s_count %" PRIu64 "\n", family, cumulative);
}

unsigned int
tlb_metrics_write(FILE *f, const struct tlb_metric_sample *stats,
		  size_t n_stats, const struct tlb_metric_core *cores,
		  size_t n_cores, const struct tlb_metric_hist *residence)
{
	unsigned int unknown = 0;

	for (size_t j = 0; j < n_stats; j++)
		unknown += tlb_metric_stat_find(stats[j].key) == NULL;
	write_stats(f, stats, n_stats);
	write_cores(f, cores, n_cores);
	if (residence != NULL)
		write_residence(f, residence);
	return unknown;
}
