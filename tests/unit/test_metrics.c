/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: the Prometheus text (include/turbolb/metrics.h). Every
 * counter of the datapath (TLB_DP_COUNTERS, turbolb/dp_counters.h) and every
 * parse-error drop has its one description, so a counter added without
 * one fails here; the text's names, units and labels; metrics.listen's
 * parser. Links the datapath library for tlb_dp_counter_names, without
 * starting DPDK. tests/cli/test_metrics.sh checks the text of a running
 * daemon with the Prometheus parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "turbolb/config.h"
#include "turbolb/metrics.h"
#include "turbolb/proto.h"
#include "dp.h"

static bool
ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && strcmp(s + n - t, tail) == 0;
}

static void
check_described(const char *key)
{
	const struct tlb_metric_stat *m = tlb_metric_stat_find(key);

	if (m == NULL)
		fail_msg("counter %s has no entry (help text) in "
			 "src/lib/metrics.c",
			 key);
	assert_non_null(m->help);
	assert_true(strlen(m->help) > 10);
	assert_int_not_equal(m->type, TLB_METRIC_NONE);
	assert_non_null(m->family);
	assert_memory_equal(m->family, "turbolb_", 8);
	assert_null(strstr(m->family, "_ns"));
	if (m->type == TLB_METRIC_COUNTER)
		assert_true(ends_with(m->family, "_total"));
	if (strncmp(key, "drop_", 5) == 0) {
		assert_string_equal(m->family, "turbolb_drops_total");
		/* the reason label is the key without "drop_" */
		if (m->reason != NULL)
			assert_string_equal(m->reason, key + 5);
	}
	if (ends_with(key, "_ns"))
		assert_true(m->ns && strstr(m->family, "_seconds") != NULL);
}

static void
test_every_counter_described(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < TLB_DP_N_COUNTERS; i++)
		check_described(tlb_dp_counter_names[i]);
	for (unsigned int e = 1; e < TLB_PARSE_ERR_MAX; e++) {
		char key[64];

		snprintf(key, sizeof(key), "drop_parse_%s",
			 tlb_parse_err_str(e));
		check_described(key);
	}
	/* The other keys of /turbolb/stats (src/daemon/telemetry.c). */
	static const char *const more[] = {
		"fifo_depth",          "loops",
		"mbufs_in_use",        "mbufs_total",
		"kicks_served",        "kick_boosts",
		"kick_reverted_drain", "kick_reverted_bound",
	};
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		check_described(more[i]);
	/* The sum is described and not exported. */
	assert_non_null(tlb_metric_stat_find("drops"));
	assert_int_equal(tlb_metric_stat_find("drops")->type, TLB_METRIC_NONE);
	assert_null(tlb_metric_stat_find("no_such_counter"));
	assert_null(tlb_metric_stat_find("drop_parse_"));
}

/* The text into the caller's *text (malloc'ed). */
static void
render(const struct tlb_metric_sample *s, size_t n,
       const struct tlb_metric_core *c, size_t nc,
       const struct tlb_metric_hist *h, unsigned int *unknown, char **text,
       size_t *len)
{
	FILE *f = open_memstream(text, len);

	assert_non_null(f);
	*unknown = tlb_metrics_write(f, s, n, c, nc, h);
	assert_int_equal(fclose(f), 0);
}

static void
test_text(void **state)
{
	const struct tlb_metric_sample s[] = {
		{"rx_uplink", 7},       {"written_off_work_ns", 1500000001},
		{"drop_fifo_full", 3},  {"drop_parse_bad_magic", 2},
		{"drops", 5},           {"fifo_depth", 4},
		{"from_the_future", 1},
	};
	const struct tlb_metric_core c[] = {
		{.id = 10,
		 .dispatcher = 1,
		 .sent = 9,
		 .completed = 8,
		 .outstanding = 1,
		 .outstanding_work_ns = 2000,
		 .state = "stale"},
		{.id = 2, .dispatcher = 0, .sent = 5, .state = "running"},
	};
	unsigned int unknown;
	char *t = NULL;
	size_t len = 0;

	(void)state;
	render(s, sizeof(s) / sizeof(s[0]), c, 2, NULL, &unknown, &t, &len);
	assert_int_equal(unknown, 1);
	assert_null(strstr(t, "from_the_future"));
	assert_non_null(strstr(t, "# HELP turbolb_uplink_rx_frames_total "));
	assert_non_null(strstr(t,
			       "# TYPE turbolb_uplink_rx_frames_total "
			       "counter\nturbolb_uplink_rx_frames_total 7\n"));
	assert_non_null(strstr(t, "\nturbolb_written_off_work_seconds_total "
				  "1.500000001\n"));
	/* One family for the drops, a HELP and TYPE once. */
	assert_non_null(strstr(t, "turbolb_drops_total{reason=\"fifo_full\"} "
				  "3\n"));
	assert_non_null(strstr(t, "turbolb_drops_total{reason="
				  "\"parse_bad_magic\"} 2\n"));
	assert_non_null(strstr(t, "# TYPE turbolb_drops_total counter\n"));
	assert_null(strstr(strstr(t, "# TYPE turbolb_drops_total") + 1,
			   "# TYPE turbolb_drops_total"));
	assert_non_null(strstr(t, "# reason=\"fifo_full\": "));
	assert_non_null(strstr(t, "# reason=\"parse_*\": "));
	assert_null(strstr(t, "turbolb_drops 5"));
	assert_non_null(strstr(t, "# TYPE turbolb_fifo_depth_requests gauge\n"
				  "turbolb_fifo_depth_requests 4\n"));
	/* Cores in id order, labelled. */
	assert_non_null(strstr(t,
			       "turbolb_core_requests_sent_total{core=\"2\","
			       "dispatcher=\"0\"} 5\nturbolb_core_requests_"
			       "sent_total{core=\"10\",dispatcher=\"1\"} 9\n"));
	assert_non_null(strstr(t, "turbolb_core_outstanding_work_seconds{core="
				  "\"10\",dispatcher=\"1\"} 0.000002000\n"));
	assert_non_null(strstr(t, "turbolb_core_state{core=\"10\",dispatcher="
				  "\"1\",state=\"stale\"} 1\n"));
	assert_non_null(strstr(t, "turbolb_core_state{core=\"10\",dispatcher="
				  "\"1\",state=\"running\"} 0\n"));
	free(t);
}

static void
test_listen_parse(void **state)
{
	struct tlb_listen_addr a;
	char err[160];

	(void)state;
	assert_int_equal(
		tlb_listen_addr_parse("127.0.0.1:9469", &a, err, sizeof(err)),
		0);
	assert_false(a.is_unix);
	assert_string_equal(a.host, "127.0.0.1");
	assert_int_equal(a.port, 9469);
	assert_int_equal(
		tlb_listen_addr_parse("[::1]:80", &a, err, sizeof(err)), 0);
	assert_string_equal(a.host, "::1");
	assert_int_equal(a.port, 80);
	assert_int_equal(
		tlb_listen_addr_parse("localhost:1", &a, err, sizeof(err)), 0);
	assert_int_equal(tlb_listen_addr_parse("unix:/run/turbolb/m.sock", &a,
					       err, sizeof(err)),
			 0);
	assert_true(a.is_unix);
	assert_string_equal(a.path, "/run/turbolb/m.sock");
	static const char *const bad[] = {
		"9469",          ":9469",           "127.0.0.1:",
		"127.0.0.1:0",   "127.0.0.1:65536", "127.0.0.1:12x",
		"::1:80",        "[::1]80",         "unix:",
		"unix:rel.sock", "127.0.0.1:-1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (tlb_listen_addr_parse(bad[i], &a, err, sizeof(err)) == 0)
			fail_msg("accepted '%s'", bad[i]);
	char longpath[200];

	memset(longpath, 'a', sizeof(longpath));
	memcpy(longpath, "unix:/", 6);
	longpath[sizeof(longpath) - 1] = '\0';
	assert_int_equal(tlb_listen_addr_parse(longpath, &a, err, sizeof(err)),
			 -1);
}

/* A value on a bound is in that bound's bucket, one above in the next;
 * past the last bound is +Inf. */
static void
test_le_bucket(void **state)
{
	const uint64_t *le = tlb_residence_le_ns;
	const unsigned int n = TLB_RESIDENCE_BUCKETS - 1;

	(void)state;
	assert_int_equal(tlb_le_bucket(le, n, 0), 0);
	assert_int_equal(tlb_le_bucket(le, n, 100), 0);
	assert_int_equal(tlb_le_bucket(le, n, 101), 1);
	assert_int_equal(tlb_le_bucket(le, n, 1000), 3);
	assert_int_equal(tlb_le_bucket(le, n, le[n - 1]), n - 1);
	assert_int_equal(tlb_le_bucket(le, n, le[n - 1] + 1), n);
	assert_int_equal(tlb_le_bucket(le, n, UINT64_MAX), n);
	for (unsigned int b = 1; b < n; b++)
		assert_true(le[b] > le[b - 1]);
}

/* The histogram as Prometheus has it: cumulative buckets with le in
 * seconds, +Inf equal to _count, _sum in seconds. */
static void
test_residence_text(void **state)
{
	struct tlb_metric_hist h = {.sum_ns = 2500000123};
	unsigned int unknown;
	char *t = NULL;
	size_t len = 0;

	(void)state;
	h.count[0] = 3;                         /* <= 100 ns */
	h.count[3] = 4;                         /* <= 1 us */
	h.count[TLB_RESIDENCE_BUCKETS - 1] = 1; /* +Inf */
	render(NULL, 0, NULL, 0, &h, &unknown, &t, &len);
	assert_int_equal(unknown, 0);
	assert_non_null(strstr(t, "# TYPE turbolb_residence_seconds "
				  "histogram\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_bucket"
				  "{le=\"0.0000001\"} 3\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_bucket"
				  "{le=\"0.0000005\"} 3\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_bucket"
				  "{le=\"0.000001\"} 7\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_bucket"
				  "{le=\"0.001\"} 7\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_bucket"
				  "{le=\"+Inf\"} 8\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_sum "
				  "2.500000123\n"));
	assert_non_null(strstr(t, "turbolb_residence_seconds_count 8\n"));
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_counter_described),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_le_bucket),
		cmocka_unit_test(test_residence_text),
		cmocka_unit_test(test_listen_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
