/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd's counters as Prometheus text (exposition format 0.0.4): one
 * description of every key of /turbolb/stats and of the per-core values
 * of /turbolb/cores, and the one formatter of both. turbolbd's metrics
 * endpoint (src/daemon/metrics.c) feeds it live counters; `turbolbctl
 * metrics` feeds it the JSON of the same telemetry commands, so both print
 * the same text. No DPDK and no other library: turbolbctl compiles this
 * file itself.
 *
 * Naming (https://prometheus.io/docs/practices/naming/): every family
 * starts with turbolb_, counters end in _total, durations are seconds
 * (the daemon's nanoseconds divided by 1e9). The drop counters are one
 * family, turbolb_drops_total, labelled reason="..." (the key without
 * "drop_"); per-core families are labelled core="N" and dispatcher="D".
 */
#ifndef TURBOLB_METRICS_H
#define TURBOLB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum tlb_metric_type {
	TLB_METRIC_COUNTER,
	TLB_METRIC_GAUGE,
	TLB_METRIC_NONE, /* described, not exported: derived from others */
};

/* What one key of /turbolb/stats becomes. */
struct tlb_metric_stat {
	const char *key;    /* the /turbolb/stats key; ending in '_' after
			     * "drop_parse": every key with that prefix */
	const char *family; /* metric family, with _total for a counter */
	const char *reason; /* drops: the reason label, NULL: the key's
			     * rest after "drop_" (prefix entries) or none */
	enum tlb_metric_type type;
	bool ns;          /* the value is nanoseconds: exported /1e9 */
	const char *help; /* the one description of the counter */
};

/* The description of a /turbolb/stats key, or NULL when it has none. */
const struct tlb_metric_stat *tlb_metric_stat_find(const char *key);

/* One value of /turbolb/stats. */
struct tlb_metric_sample {
	char key[64];
	uint64_t value;
};

/* One host core of /turbolb/cores: the values the metrics export. */
struct tlb_metric_core {
	uint32_t id;
	uint32_t dispatcher;
	uint64_t sent;
	uint64_t completed;
	uint64_t outstanding;
	uint64_t outstanding_work_ns;
	uint64_t stale_events;
	uint64_t written_off;
	char state[16]; /* tlb_tel_core_state()'s words */
};

/* The daemon's residence time: from the start of the poll that received a
 * packet to the rte_eth_tx_burst() call that handed it to its queue (time
 * in the NIC's RX ring before that poll is not seen). Each TX call counts
 * all its packets with the residence of its oldest, an upper bound for
 * the others. Buckets are Prometheus's: a value v falls in the first
 * bucket whose bound is >= v; the last bucket is +Inf. */
#define TLB_RESIDENCE_BUCKETS 12
extern const uint64_t tlb_residence_le_ns[TLB_RESIDENCE_BUCKETS - 1];

/* Index of v's bucket for bounds le[0..n) (ascending); n: +Inf. */
static inline unsigned int
tlb_le_bucket(const uint64_t *le, unsigned int n, uint64_t v)
{
	unsigned int b = 0;

	while (b < n && v > le[b])
		b++;
	return b;
}

struct tlb_metric_hist {
	uint64_t count[TLB_RESIDENCE_BUCKETS]; /* per bucket, not cumulative */
	uint64_t sum_ns;
};

/* Writes the text for stats[0..n_stats), cores[0..n_cores) (cores in
 * any order) and, unless NULL, the residence histogram to f. A key the table
 * does not describe is left out and counted: the return value, so that an older
 * turbolbctl can warn about a newer daemon's counters (the daemon's own keys
 * are all described: tests/unit/test_metrics.c and tests/cli/test_metrics.sh).
 */
unsigned int tlb_metrics_write(FILE *f, const struct tlb_metric_sample *stats,
			       size_t n_stats,
			       const struct tlb_metric_core *cores,
			       size_t n_cores,
			       const struct tlb_metric_hist *residence);

/* The HTTP Content-Type of that text. */
#define TLB_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif /* TURBOLB_METRICS_H */
