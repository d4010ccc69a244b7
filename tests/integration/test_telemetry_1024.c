/* SPDX-License-Identifier: BSD-3-Clause
 * Integration test: /turbolb/cores through DPDK's own telemetry at 1024
 * host cores, four times what one turbolbd supports (TLB_MAX_CORES): the
 * daemon's telemetry code (src/daemon/telemetry.c) over four dispatchers
 * of 256 cores each, set up by hand (no ports, no lcores running), asked
 * over the real telemetry socket as dpdk-telemetry.py and turbolbctl ask.
 * Checks: from the bare command, following "next" lists every core once
 * with its own values; every answer fits the budget of
 * include/turbolb/telemetry_cores.h, also with every number at its most
 * digits, where no page loses a core; FIRST,COUNT and bad parameters.
 *
 * Everything DPDK makes lives in a mktemp directory (RUNTIME_DIRECTORY)
 * under a file prefix of this pid, removed at the end.
 */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include <rte_eal.h>

#include "turbolb/load_view.h"
#include "turbolb/telemetry_cores.h"
#include "turbolb/transport.h"
#include "dp.h"
#include "telemetry.h"

#define N_DPS        4u
#define CORES_PER_DP TLB_MAX_CORES
#define N_CORES      (N_DPS * CORES_PER_DP)

static struct tlb_dp dps[N_DPS];
static struct tlb_load_view *lvs[N_DPS];
static bool worst; /* every field at its most digits */
static char tmpdir[] = "/tmp/tlb-telcores-XXXXXX";
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int fd = -1;
static char buf[4 * TLB_TEL_ANSWER_MAX];

/* ---- the host side: a transport that only describes its cores -------- */

static void
fake_core_info(const void *ctx, uint32_t core,
	       struct tlb_transport_core_info *out)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
	if (worst) {
		out->tid = UINT32_MAX;
		out->off_cpu = true;
		out->kick.kicks_served = UINT64_MAX;
		out->kick.boosts = UINT64_MAX;
		out->kick.reverted_drain = UINT64_MAX;
		out->kick.reverted_bound = UINT64_MAX;
		return;
	}
	out->tid = core + 100;
	out->off_cpu = core & 1;
	out->kick.kicks_served = core + 1;
	out->kick.boosts = core + 2;
	out->kick.reverted_drain = core + 3;
	out->kick.reverted_bound = core + 4;
}

static const struct tlb_transport_ops fake_ops = {
	.name = "fake",
	.core_info = fake_core_info,
};
static struct tlb_transport fake_host = {.ops = &fake_ops, .n_cores = N_CORES};

/* Core id c's load: distinct values per core, or the longest there are. */
static void
set_loads(void)
{
	for (uint32_t d = 0; d < N_DPS; d++)
		for (uint32_t i = 0; i < CORES_PER_DP; i++) {
			struct tlb_core_load *c = &lvs[d]->core[i];
			uint64_t id = dps[d].core_id[i];

			c->sent = worst ? UINT64_MAX : id * 3 + 1;
			c->completed = worst ? 0 : id;
			c->sent_work_ns = worst ? UINT64_MAX : id * 1000 + 5;
			c->completed_work_ns = 0;
			c->stale_events = worst ? UINT64_MAX : id + 7;
			c->online = !worst;
			c->stale = !worst && id % 5 == 0;
			c->running = id % 2;
		}
}

/* ---- a telemetry client ---------------------------------------------- */

static void
tel_connect(void)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	ssize_t n;

	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	memcpy(sun.sun_path, sock_path, strlen(sock_path) + 1);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	n = recv(fd, buf, sizeof(buf) - 1, 0); /* the hello */
	assert_true(n > 0);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "\"max_output_len\":16384"));
}

/* Sends req; returns its answer's value (in *root, to free) and puts the
 * answer's length in *len. */
static json_t *
ask(const char *req, json_t **root, size_t *len)
{
	json_error_t jerr;
	json_t *v;
	ssize_t n;

	assert_true(send(fd, req, strlen(req), 0) == (ssize_t)strlen(req));
	n = recv(fd, buf, sizeof(buf) - 1, MSG_TRUNC);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	buf[n] = '\0';
	*len = (size_t)n;
	/* Counters past INT64_MAX: jansson takes them as reals. */
	*root = json_loadb(buf, (size_t)n, JSON_DECODE_INT_AS_REAL, &jerr);
	if (*root == NULL)
		fail_msg("%s: not JSON (%s): %.200s", req, jerr.text, buf);
	v = json_object_get(*root, "/turbolb/cores");
	assert_non_null(v);
	return v;
}

static double
num(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_number(v))
		fail_msg("no number \"%s\"", key);
	return json_number_value(v);
}

/* Checks one core's entry against set_loads() and fake_core_info(). */
static void
check_core(uint32_t id, const json_t *c)
{
	const char *state = json_string_value(json_object_get(c, "state"));
	const char *want = id % 5 == 0 ? "stale"
			   : id % 2    ? "running"
				       : "online";

	assert_true(json_is_object(c));
	assert_true(num(c, "sent") == id * 3 + 1);
	assert_true(num(c, "completed") == id);
	assert_true(num(c, "outstanding") == 2 * id + 1);
	assert_true(num(c, "outstanding_work_ns") == id * 1000 + 5);
	assert_non_null(state);
	assert_string_equal(state, want);
	assert_true(num(c, "stale_events") == id + 7);
	assert_true(num(c, "dispatcher") == id % N_DPS);
	assert_true(num(c, "tid") == id + 100);
	assert_true(num(c, "off_cpu") == (id & 1));
	assert_true(num(c, "kick_reverted_bound") == id + 4);
}

/* Walks every page as a client does: the bare command, then FIRST from
 * each next. Each answer in the budget, each page full but the last;
 * seen[id] counts the cores listed. Returns the pages. */
static unsigned int
walk(uint32_t *seen, bool check_values)
{
	char req[64] = "/turbolb/cores";
	unsigned int pages = 0;
	uint32_t listed = 0;

	memset(seen, 0, sizeof(*seen) * N_CORES);
	for (;;) {
		uint32_t left = N_CORES - listed, cores = 0;
		const json_t *next, *c;
		const char *key;
		json_t *root, *v;
		size_t len;

		v = ask(req, &root, &len);
		pages++;
		if (len > TLB_TEL_ANSWER_BUDGET)
			fail_msg("%s: %zu bytes, past the budget %u", req, len,
				 TLB_TEL_ANSWER_BUDGET);
		assert_true(json_is_object(v));
		json_object_foreach((json_t *)v, key, c)
		{
			char *end;
			unsigned long id;

			if (strcmp(key, "next") == 0)
				continue;
			id = strtoul(key, &end, 10);
			assert_true(*end == '\0' && id < N_CORES);
			seen[id]++;
			cores++;
			if (check_values)
				check_core((uint32_t)id, c);
		}
		/* DPDK drops what does not fit, silently: a page must hold
		 * every core it should. */
		assert_int_equal(cores, left < TLB_TEL_CORES_PAGE_MAX
						? left
						: TLB_TEL_CORES_PAGE_MAX);
		listed += cores;
		next = json_object_get(v, "next");
		if (next == NULL) {
			json_decref(root);
			break;
		}
		assert_true(json_is_number(next) &&
			    json_number_value(next) == listed);
		snprintf(req, sizeof(req), "/turbolb/cores,%u", listed);
		json_decref(root);
		assert_true(pages <= N_CORES);
	}
	assert_int_equal(listed, N_CORES);
	return pages;
}

static void
test_every_core_once(void **state)
{
	static uint32_t seen[N_CORES];

	(void)state;
	worst = false;
	set_loads();
	assert_int_equal(walk(seen, true), (N_CORES + TLB_TEL_CORES_PAGE_MAX -
					    1) / TLB_TEL_CORES_PAGE_MAX);
	for (uint32_t id = 0; id < N_CORES; id++)
		if (seen[id] != 1)
			fail_msg("core %u listed %u times", id, seen[id]);
}

static void
test_longest_fit(void **state)
{
	static uint32_t seen[N_CORES];

	(void)state;
	worst = true;
	set_loads();
	walk(seen, false);
	for (uint32_t id = 0; id < N_CORES; id++)
		assert_int_equal(seen[id], 1);
	worst = false;
	set_loads();
}

static void
test_params(void **state)
{
	static const char *const bad[] = {
		"/turbolb/cores,x",     "/turbolb/cores,1,0",
		"/turbolb/cores,1,",    "/turbolb/cores,-1",
		"/turbolb/cores,1,2,3", "/turbolb/cores,4294967296",
	};
	json_t *root, *v;
	size_t len;

	(void)state;
	/* FIRST,COUNT: that many from FIRST on, next after them. */
	v = ask("/turbolb/cores,1000,3", &root, &len);
	assert_int_equal(json_object_size(v), 4);
	check_core(1000, json_object_get(v, "1000"));
	check_core(1002, json_object_get(v, "1002"));
	assert_true(num(v, "next") == 1003);
	json_decref(root);
	/* A COUNT past the page: a page. */
	v = ask("/turbolb/cores,7,100000", &root, &len);
	assert_int_equal(json_object_size(v), TLB_TEL_CORES_PAGE_MAX + 1);
	assert_true(num(v, "next") == 7 + TLB_TEL_CORES_PAGE_MAX);
	json_decref(root);
	/* The last cores: no next. */
	v = ask("/turbolb/cores,1020", &root, &len);
	assert_int_equal(json_object_size(v), 4);
	assert_null(json_object_get(v, "next"));
	check_core(1023, json_object_get(v, "1023"));
	json_decref(root);
	/* Past them: nothing. */
	v = ask("/turbolb/cores,5000", &root, &len);
	assert_true(json_is_object(v));
	assert_int_equal(json_object_size(v), 0);
	json_decref(root);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = ask(bad[i], &root, &len);
		if (!json_is_null(v))
			fail_msg("%s: answered, not null", bad[i]);
		json_decref(root);
	}
}

/* ---- set-up ---------------------------------------------------------- */

static int
group_setup(void **state)
{
	char prefix[64];
	char *argv[] = {"test_telemetry_cores",
			"--no-huge",
			"-m",
			"64",
			"--no-pci",
			"--no-shconf",
			"-l",
			"0",
			prefix,
			"--log-level=lib.*:error",
			NULL};

	(void)state;
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	setenv("RUNTIME_DIRECTORY", tmpdir, 1);
	snprintf(prefix, sizeof(prefix), "--file-prefix=tlb-telcores-%ld",
		 (long)getpid());
	if (rte_eal_init(10, argv) < 0)
		return -1;
	snprintf(sock_path, sizeof(sock_path), "%s/dpdk_telemetry.v2",
		 rte_eal_get_runtime_dir());
	/* Dispatcher d owns cores d, d + N_DPS, ..., as tlb_dp_init()
	 * partitions them. */
	for (uint32_t d = 0; d < N_DPS; d++) {
		lvs[d] = aligned_alloc(TLB_CACHE_LINE, sizeof(*lvs[d]));
		if (lvs[d] == NULL)
			return -1;
		tlb_lv_init(lvs[d], CORES_PER_DP);
		dps[d].index = d;
		dps[d].n_cores = CORES_PER_DP;
		for (uint32_t i = 0; i < CORES_PER_DP; i++)
			dps[d].core_id[i] = d + i * N_DPS;
		dps[d].lv = lvs[d];
		dps[d].host = &fake_host;
		tlb_dps[tlb_n_dps++] = &dps[d];
	}
	if (tlb_telemetry_register() != 0)
		return -1;
	tel_connect();
	return 0;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	if (fd >= 0)
		close(fd);
	tlb_n_dps = 0;
	rte_eal_cleanup();
	for (uint32_t d = 0; d < N_DPS; d++)
		free(lvs[d]);
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_core_once),
		cmocka_unit_test(test_longest_fit),
		cmocka_unit_test(test_params),
	};

	return cmocka_run_group_tests_name("telemetry_cores_1024", tests,
					   group_setup, group_teardown);
}
