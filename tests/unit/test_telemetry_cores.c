/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: /turbolb/cores in pages (include/turbolb/telemetry_cores.h)
 * without DPDK. The parameters, the pages over 1024 host cores, and the
 * bound: a page at its longest, in the JSON DPDK 22.11 writes, stays
 * within TLB_TEL_ANSWER_BUDGET of the 16 KiB answer.
 * tests/integration/test_telemetry_1024.c checks the same against DPDK's
 * own telemetry.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "turbolb/telemetry_cores.h"

#define N_CORES 1024u
#define N_DPS   4u

/* ---- DPDK 22.11's JSON, written out ----------------------------------
 * output_json() in lib/telemetry/telemetry.c with telemetry_json.h: the
 * answer {"<cmd>":{...}}, a dict entry "name":value, entries joined by
 * ',', no spaces; a core is a dict container under its id. */

struct json_buf {
	char s[4 * TLB_TEL_ANSWER_MAX];
	size_t len;
	unsigned int fields; /* in the current dict */
};

static void put(struct json_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
put(struct json_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof(b->s) - b->len);
	b->len += (size_t)n;
}

static void
json_u64(void *arg, const char *name, uint64_t v)
{
	struct json_buf *b = arg;

	put(b, "%s\"%s\":%" PRIu64, b->fields++ ? "," : "", name, v);
}

static void
json_str(void *arg, const char *name, const char *v)
{
	struct json_buf *b = arg;

	put(b, "%s\"%s\":\"%s\"", b->fields++ ? "," : "", name, v);
}

/* One answer of /turbolb/cores for the page p of rows, as DPDK writes it;
 * returns its length. */
static size_t
answer_json(struct json_buf *b, const struct tlb_tel_core *rows,
	    const struct tlb_tel_page *p)
{
	struct tlb_tel_sink sink = {.u64 = json_u64, .str = json_str, .arg = b};

	b->len = 0;
	put(b, "{\"/turbolb/cores\":{");
	for (uint32_t j = 0; j < p->n; j++) {
		put(b, "%s\"%" PRIu32 "\":{", j ? "," : "", rows[p->pos[j]].id);
		b->fields = 0;
		tlb_tel_core_fields(&rows[p->pos[j]], &sink);
		put(b, "}");
	}
	if (p->more)
		put(b, "%s\"next\":%" PRIu32, p->n ? "," : "", p->next);
	put(b, "}}");
	return b->len;
}

/* The longest entry there can be: every number at its type's most
 * digits, the longest state, the host fields. */
static struct tlb_tel_core
worst_row(uint32_t id)
{
	static const struct tlb_core_load states[] = {
		{.online = 0},
		{.online = 1, .stale = 1},
		{.online = 1, .running = 1},
		{.online = 1},
	};
	struct tlb_tel_core r = {
		.id = id,
		.dispatcher = UINT32_MAX,
		.sent = UINT64_MAX,
		.completed = UINT64_MAX,
		.outstanding = UINT64_MAX,
		.outstanding_work_ns = UINT64_MAX,
		.state = "",
		.stale = UINT8_MAX,
		.running = UINT8_MAX,
		.stale_events = UINT64_MAX,
		.written_off = UINT64_MAX,
		.credit_fallback = 1,
		.has_host = true,
		.host =
			{
				.tid = UINT32_MAX,
				.off_cpu = true,
				.kick = {UINT64_MAX, UINT64_MAX, UINT64_MAX,
					 UINT64_MAX},
			},
	};

	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strlen(tlb_tel_core_state(&states[i])) > strlen(r.state))
			r.state = tlb_tel_core_state(&states[i]);
	return r;
}

/* ---- parameters ------------------------------------------------------ */

static void
test_params(void **state)
{
	static const struct {
		const char *params;
		int rc;
		uint32_t first, count;
	} cases[] = {
		{NULL, 0, 0, TLB_TEL_CORES_PAGE_MAX},
		{"", 0, 0, TLB_TEL_CORES_PAGE_MAX},
		{"0", 0, 0, TLB_TEL_CORES_PAGE_MAX},
		{"48", 0, 48, TLB_TEL_CORES_PAGE_MAX},
		{"48,3", 0, 48, 3},
		{"48,1", 0, 48, 1},
		{"7,1000", 0, 7, TLB_TEL_CORES_PAGE_MAX},
		{"4294967295", 0, UINT32_MAX, TLB_TEL_CORES_PAGE_MAX},
		{"1,4294967295", 0, 1, TLB_TEL_CORES_PAGE_MAX},
		{"4294967296", -1, 0, 0},
		{"1,4294967296", -1, 0, 0},
		{"1,0", -1, 0, 0},
		{"1,", -1, 0, 0},
		{",1", -1, 0, 0},
		{"1,2,3", -1, 0, 0},
		{"-1", -1, 0, 0},
		{"+1", -1, 0, 0},
		{" 1", -1, 0, 0},
		{"1 ", -1, 0, 0},
		{"0x10", -1, 0, 0},
		{"abc", -1, 0, 0},
		{"1;2", -1, 0, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t first = 12345, count = 12345;
		int rc = tlb_tel_cores_params(cases[i].params, &first, &count);

		if (rc != cases[i].rc)
			fail_msg("params \"%s\": rc %d, want %d",
				 cases[i].params ? cases[i].params : "(null)",
				 rc, cases[i].rc);
		if (rc != 0)
			continue;
		assert_int_equal(first, cases[i].first);
		assert_int_equal(count, cases[i].count);
	}
}

/* ---- pages ----------------------------------------------------------- */

/* The daemon's order: dispatcher d owns cores d, d + N_DPS, ..., and
 * telemetry lists dispatcher by dispatcher. */
static void
daemon_ids(uint32_t *ids)
{
	uint32_t k = 0;

	for (uint32_t d = 0; d < N_DPS; d++)
		for (uint32_t c = d; c < N_CORES; c += N_DPS)
			ids[k++] = c;
	assert_int_equal(k, N_CORES);
}

/* Walks the pages of ids from FIRST 0 as a client does, count a page;
 * checks that each lists its cores in id order, none twice, and returns
 * the pages; seen[id] counts each id listed. */
static unsigned int
walk(const uint32_t *ids, uint32_t n_ids, uint32_t count, uint32_t *seen,
     uint32_t max_id)
{
	struct tlb_tel_page p;
	unsigned int pages = 0;
	uint32_t first = 0;

	memset(seen, 0, sizeof(*seen) * (max_id + 1));
	for (;;) {
		tlb_tel_cores_page(ids, n_ids, first, count, &p);
		pages++;
		assert_true(p.n <= count && p.n <= TLB_TEL_CORES_PAGE_MAX);
		for (uint32_t j = 0; j < p.n; j++) {
			uint32_t id = ids[p.pos[j]];

			assert_true(id >= first && id <= max_id);
			if (j > 0)
				assert_true(id > ids[p.pos[j - 1]]);
			seen[id]++;
		}
		if (!p.more)
			break;
		assert_true(p.next > first);
		first = p.next;
		assert_true(pages <= n_ids);
	}
	return pages;
}

static void
test_pages_1024(void **state)
{
	static uint32_t ids[N_CORES], seen[N_CORES];
	static const uint32_t counts[] = {TLB_TEL_CORES_PAGE_MAX, 1, 5, 7};

	(void)state;
	daemon_ids(ids);
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		unsigned int pages =
			walk(ids, N_CORES, counts[c], seen, N_CORES - 1);

		assert_int_equal(pages, (N_CORES + counts[c] - 1) / counts[c]);
		for (uint32_t id = 0; id < N_CORES; id++)
			if (seen[id] != 1)
				fail_msg("count %u: core %u listed %u times",
					 counts[c], id, seen[id]);
	}
}

static void
test_page_edges(void **state)
{
	static uint32_t ids[N_CORES];
	struct tlb_tel_page p;

	(void)state;
	daemon_ids(ids);
	/* The last, partial page: no next. */
	tlb_tel_cores_page(ids, N_CORES, N_CORES - 3, TLB_TEL_CORES_PAGE_MAX,
			   &p);
	assert_int_equal(p.n, 3);
	assert_false(p.more);
	for (uint32_t j = 0; j < p.n; j++)
		assert_int_equal(ids[p.pos[j]], N_CORES - 3 + j);
	/* Exactly the last full page: no next either. */
	tlb_tel_cores_page(ids, N_CORES, N_CORES - TLB_TEL_CORES_PAGE_MAX,
			   TLB_TEL_CORES_PAGE_MAX, &p);
	assert_int_equal(p.n, TLB_TEL_CORES_PAGE_MAX);
	assert_false(p.more);
	/* Past every core: empty. */
	tlb_tel_cores_page(ids, N_CORES, N_CORES, 4, &p);
	assert_int_equal(p.n, 0);
	assert_false(p.more);
	/* A count past the page is cut to it. */
	tlb_tel_cores_page(ids, N_CORES, 100, 1000, &p);
	assert_int_equal(p.n, TLB_TEL_CORES_PAGE_MAX);
	assert_true(p.more);
	assert_int_equal(p.next, 100 + TLB_TEL_CORES_PAGE_MAX);
	/* FIRST near the top of 32 bits: no overflow. */
	tlb_tel_cores_page(ids, N_CORES, UINT32_MAX, TLB_TEL_CORES_PAGE_MAX,
			   &p);
	assert_int_equal(p.n, 0);
	assert_false(p.more);
	/* No cores at all. */
	tlb_tel_cores_page(ids, 0, 0, TLB_TEL_CORES_PAGE_MAX, &p);
	assert_int_equal(p.n, 0);
	assert_false(p.more);
}

/* Ids with gaps and in no order: next jumps the gap, nothing is lost. */
static void
test_pages_sparse(void **state)
{
	static uint32_t ids[N_CORES], seen[4 * N_CORES + 1];
	unsigned int pages;

	(void)state;
	/* k * 769 % 1024 is a permutation of 0..1023: distinct ids, in no
	 * order, with gaps of 1 to 3 */
	for (uint32_t k = 0; k < N_CORES; k++)
		ids[k] = ((k * 769u) % N_CORES) * 3 + (k % 3 == 0 ? 0 : 1);
	pages = walk(ids, N_CORES, TLB_TEL_CORES_PAGE_MAX, seen, 4 * N_CORES);
	assert_true(pages >= N_CORES / TLB_TEL_CORES_PAGE_MAX);
	for (uint32_t k = 0; k < N_CORES; k++)
		assert_int_equal(seen[ids[k]], 1);
	/* A gap longer than a page: next names the core after it. */
	{
		const uint32_t few[] = {900, 3, 1000000, 5};
		struct tlb_tel_page p;

		tlb_tel_cores_page(few, 4, 0, 8, &p);
		assert_int_equal(p.n, 2);
		assert_int_equal(few[p.pos[0]], 3);
		assert_int_equal(few[p.pos[1]], 5);
		assert_true(p.more);
		assert_int_equal(p.next, 900);
	}
}

/* ---- the bound ------------------------------------------------------- */

static void
test_worst_page_fits(void **state)
{
	static struct tlb_tel_core rows[TLB_TEL_CORES_PAGE_MAX + 1];
	static struct json_buf b;
	struct tlb_tel_page p;
	uint32_t ids[TLB_TEL_CORES_PAGE_MAX + 1];
	size_t len, entry;

	(void)state;
	/* The widest ids there are, and one more core, so that the page has
	 * a next of 10 digits too. */
	for (uint32_t k = 0; k <= TLB_TEL_CORES_PAGE_MAX; k++) {
		ids[k] = UINT32_MAX - TLB_TEL_CORES_PAGE_MAX + k;
		rows[k] = worst_row(ids[k]);
	}
	tlb_tel_cores_page(ids, TLB_TEL_CORES_PAGE_MAX + 1, ids[0],
			   TLB_TEL_CORES_PAGE_MAX, &p);
	assert_int_equal(p.n, TLB_TEL_CORES_PAGE_MAX);
	assert_true(p.more);
	len = answer_json(&b, rows, &p);
	print_message("worst /turbolb/cores page: %zu bytes for %u cores "
		      "(budget %u, DPDK's answer %u)\n",
		      len, TLB_TEL_CORES_PAGE_MAX, TLB_TEL_ANSWER_BUDGET,
		      TLB_TEL_ANSWER_MAX);
	assert_true(len <= TLB_TEL_ANSWER_BUDGET);
	assert_true(TLB_TEL_ANSWER_BUDGET < TLB_TEL_ANSWER_MAX);
	/* The header's word for one entry: under 500 bytes. */
	p.n = 1;
	p.more = false;
	entry = answer_json(&b, rows, &p) - strlen("{\"/turbolb/cores\":{}}");
	assert_true(entry < 500);
	/* with the longest state in it */
	assert_non_null(strstr(b.s, ",\"state\":\"offline\","));
}

/* Every page of 1024 cores at their longest stays in the budget. */
static void
test_worst_pages_1024(void **state)
{
	static struct tlb_tel_core rows[N_CORES];
	static uint32_t ids[N_CORES];
	static struct json_buf b;
	struct tlb_tel_page p;
	uint32_t first = 0, listed = 0;
	size_t longest = 0;

	(void)state;
	daemon_ids(ids);
	for (uint32_t k = 0; k < N_CORES; k++)
		rows[k] = worst_row(ids[k]);
	do {
		size_t len;

		tlb_tel_cores_page(ids, N_CORES, first, TLB_TEL_CORES_PAGE_MAX,
				   &p);
		len = answer_json(&b, rows, &p);
		if (len > longest)
			longest = len;
		assert_true(len <= TLB_TEL_ANSWER_BUDGET);
		listed += p.n;
		first = p.next;
	} while (p.more);
	assert_int_equal(listed, N_CORES);
	print_message("1024 cores at their longest: pages of at most %zu "
		      "bytes\n",
		      longest);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_pages_1024),
		cmocka_unit_test(test_page_edges),
		cmocka_unit_test(test_pages_sparse),
		cmocka_unit_test(test_worst_page_fits),
		cmocka_unit_test(test_worst_pages_1024),
	};

	return cmocka_run_group_tests_name("telemetry_cores", tests, NULL,
					   NULL);
}
