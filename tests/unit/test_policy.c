/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: every policy's choice on constructed load views.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "turbolb/policy.h"
#include "order.h"

static struct tlb_load_view lv;
static struct tlb_policy pol;
static char err[256];

static void
make(const char *name, uint32_t n_cores, const struct tlb_policy_params *pp)
{
	struct tlb_policy_params def;

	if (pp == NULL) {
		tlb_policy_params_default(&def);
		pp = &def;
	}
	tlb_lv_init(&lv, n_cores);
	assert_int_equal(
		tlb_policy_init(&pol, name, pp, n_cores, err, sizeof(err)), 0);
}

/* Puts n requests of work_ns each in flight at core i. */
static void
load(uint32_t i, unsigned int n, uint32_t work_ns)
{
	for (unsigned int j = 0; j < n; j++)
		tlb_lv_on_dispatch(&lv, i, work_ns);
}

static struct tlb_flow_key
flow(uint32_t src_ip, uint32_t dst_ip, uint16_t sport, uint16_t dport)
{
	struct tlb_flow_key k;

	memset(&k, 0, sizeof(k));
	k.ip_version = 4;
	k.proto = 17;
	for (int b = 0; b < 4; b++) {
		k.src_addr[b] = (uint8_t)(src_ip >> (24 - 8 * b));
		k.dst_addr[b] = (uint8_t)(dst_ip >> (24 - 8 * b));
	}
	k.src_port = sport;
	k.dst_port = dport;
	return k;
}

static int
pick(void)
{
	struct tlb_request_info req = {0};

	return tlb_policy_pick(&pol, &lv, &req);
}

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static void
test_table(void **state)
{
	const char *names[] = {"rss", "rr",  "random", "pod",
			       "jsq", "jlq", "jbsq"};
	unsigned int n = 0;

	(void)state;
	for (unsigned int i = 0; i < 7; i++) {
		const struct tlb_policy_ops *ops = tlb_policy_find(names[i]);

		assert_non_null(ops);
		assert_string_equal(ops->name, names[i]);
		assert_non_null(ops->pick);
		assert_non_null(ops->summary);
	}
	/* every entry of the table is found by its name */
	while (tlb_policies[n] != NULL) {
		assert_ptr_equal(tlb_policy_find(tlb_policies[n]->name),
				 tlb_policies[n]);
		n++;
	}
	assert_true(n >= 7);
	assert_null(tlb_policy_find("cfcfs"));
	assert_null(tlb_policy_find(""));
}

static void
test_parse_spec(void **state)
{
	struct tlb_policy_params pp;
	char name[TLB_POLICY_NAME_MAX];

	(void)state;
	tlb_policy_params_default(&pp);
	assert_int_equal(
		tlb_policy_parse_spec("jbsq:4", name, &pp, err, sizeof(err)),
		0);
	assert_string_equal(name, "jbsq");
	assert_int_equal(pp.k, 4);
	assert_int_equal(
		tlb_policy_parse_spec("pod:3", name, &pp, err, sizeof(err)), 0);
	assert_int_equal(pp.d, 3);
	assert_int_equal(pp.k, 4);
	assert_int_equal(
		tlb_policy_parse_spec("jsq", name, &pp, err, sizeof(err)), 0);
	assert_string_equal(name, "jsq");

	assert_int_equal(
		tlb_policy_parse_spec("jsq:2", name, &pp, err, sizeof(err)),
		-1);
	assert_non_null(strstr(err, "takes no parameter"));
	assert_int_equal(
		tlb_policy_parse_spec("nope", name, &pp, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown policy"));
	assert_int_equal(
		tlb_policy_parse_spec("pod:x", name, &pp, err, sizeof(err)),
		-1);
	assert_int_equal(
		tlb_policy_parse_spec("pod:-1", name, &pp, err, sizeof(err)),
		-1);
	assert_int_equal(
		tlb_policy_parse_spec("jbsq:", name, &pp, err, sizeof(err)),
		-1);
	assert_int_equal(tlb_policy_parse_spec("", name, &pp, err, sizeof(err)),
			 -1);
}

/* Each parameter is one descriptor: every one a policy reads is listed by
 * tlb_policy_params_all() (names and fields distinct, or one would hide
 * the other), in range by default, and a policy's spec parameter is one it
 * reads. */
static void
test_param_tables(void **state)
{
	const struct tlb_policy_param *all[TLB_POLICY_PARAMS_MAX];
	size_t n = tlb_policy_params_all(all, TLB_POLICY_PARAMS_MAX);
	struct tlb_policy_params pp;

	(void)state;
	assert_in_range(n, 1, TLB_POLICY_PARAMS_MAX);
	for (size_t i = 0; i < n; i++) {
		assert_true(all[i]->off + all[i]->size <= sizeof(pp));
		assert_true(all[i]->def >= all[i]->min &&
			    all[i]->def <= all[i]->max);
		assert_non_null(all[i]->text);
		assert_ptr_equal(tlb_policy_param_find(all[i]->name), all[i]);
		for (size_t j = 0; j < i; j++) {
			assert_true(all[j]->off + all[j]->size <= all[i]->off);
			assert_string_not_equal(all[j]->name, all[i]->name);
		}
	}
	for (unsigned int p = 0; tlb_policies[p] != NULL; p++) {
		const struct tlb_policy_ops *ops = tlb_policies[p];

		for (const struct tlb_policy_param *const *q = ops->params;
		     q != NULL && *q != NULL; q++) {
			size_t i = 0;

			while (i < n && all[i] != *q)
				i++;
			assert_true(i < n);
			assert_true(tlb_policy_reads(ops, *q));
		}
		if (ops->spec_param != NULL) {
			assert_true(tlb_policy_reads(ops, ops->spec_param));
			assert_int_equal(ops->spec_param->type, TLB_PARAM_UINT);
		}
	}
	assert_null(tlb_policy_param_find("nosuch"));

	/* the defaults are the tables' */
	memset(&pp, 0xa5, sizeof(pp));
	tlb_policy_params_default(&pp);
	assert_int_equal(pp.d, 2);
	assert_int_equal(pp.k, 2);
	assert_int_equal(pp.seed, 1);
	assert_false(pp.prefer_running);
	tlb_policy_params_format(&pp, " ", err, sizeof(err));
	assert_non_null(strstr(err, "d=2 k=2 seed=1 prefer_running=false"));
	pp.prefer_running = true;
	pp.seed = UINT64_MAX;
	tlb_policy_params_format(&pp, ", ", err, sizeof(err));
	assert_non_null(strstr(err, "d=2, k=2, seed=18446744073709551615, "
				    "prefer_running=true"));
	/* who reads what */
	assert_true(tlb_policy_reads(tlb_policy_find("pod"),
				     tlb_policy_param_find("d")));
	assert_true(tlb_policy_reads(tlb_policy_find("pod"),
				     tlb_policy_param_find("seed")));
	assert_false(tlb_policy_reads(tlb_policy_find("jsq"),
				      tlb_policy_param_find("seed")));
	assert_true(tlb_policy_reads(tlb_policy_find("jlq"),
				     tlb_policy_param_find("prefer_running")));
	assert_false(tlb_policy_reads(tlb_policy_find("rr"),
				      tlb_policy_param_find("k")));
}

/* A policy that is only its table: the generic code checks its ranges and
 * parses its spec, with nothing else to edit. */
static int
test_only_pick(struct tlb_policy *p, const struct tlb_load_view *v,
	       const struct tlb_request_info *req)
{
	(void)p;
	(void)v;
	(void)req;
	return 0;
}

static void
test_param_table_generic(void **state)
{
	static const struct tlb_policy_param width =
		TLB_POLICY_PARAM_UINT("k", k, 3, 9, 3, "a made-up parameter");
	static const struct tlb_policy_param *const params[] = {&width, NULL};
	const struct tlb_policy_ops ops = {.name = "made_up",
					   .params = params,
					   .spec_param = &width,
					   .pick = test_only_pick};
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.k = 2;
	assert_int_equal(tlb_policy_check_params(&ops, &pp, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "made_up: k=2 (must be 3..9)");
	pp.k = 10;
	assert_int_equal(tlb_policy_check_params(&ops, &pp, err, sizeof(err)),
			 -1);
	pp.k = 9;
	assert_int_equal(tlb_policy_check_params(&ops, &pp, err, sizeof(err)),
			 0);
	pp.k = 3;
	assert_int_equal(tlb_policy_check_params(&ops, &pp, err, sizeof(err)),
			 0);
	/* a value past the field's width is refused by the spec parser */
	assert_int_equal(
		tlb_policy_parse_spec("jbsq:4294967296", err, &pp,
				      err + TLB_POLICY_NAME_MAX,
				      sizeof(err) - TLB_POLICY_NAME_MAX),
		-1);
	assert_int_equal(
		tlb_policy_parse_spec("jbsq:4294967295", err, &pp,
				      err + TLB_POLICY_NAME_MAX,
				      sizeof(err) - TLB_POLICY_NAME_MAX),
		0);
	assert_int_equal(pp.k, UINT32_MAX);
}

static void
test_init_errors(void **state)
{
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	assert_int_equal(tlb_policy_init(&pol, "jsq", &pp, 0, err, sizeof(err)),
			 -1);
	assert_int_equal(tlb_policy_init(&pol, "jsq", &pp, TLB_MAX_CORES + 1,
					 err, sizeof(err)),
			 -1);
	assert_int_equal(
		tlb_policy_init(&pol, "bogus", &pp, 4, err, sizeof(err)), -1);
	pp.d = 1;
	assert_int_equal(tlb_policy_init(&pol, "pod", &pp, 4, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "d=1"));
	pp.d = 2;
	pp.k = 0;
	assert_int_equal(
		tlb_policy_init(&pol, "jbsq", &pp, 4, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "k=0"));
}

/* The bound the dispatcher sends at once and polls for: jbsq's k, and no
 * bound for a policy without one. */
static void
test_policy_bound(void **state)
{
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.k = 3;
	assert_int_equal(
		tlb_policy_init(&pol, "jbsq", &pp, 4, err, sizeof(err)), 0);
	assert_int_equal(pol.bound, 3);
	assert_int_equal(tlb_policy_init(&pol, "jsq", &pp, 4, err, sizeof(err)),
			 0);
	assert_int_equal(pol.bound, 0);
}

/* Verification vectors of the Toeplitz hash published with the RSS
 * specification (IPv4, with and without ports). */
static void
test_toeplitz_vectors(void **state)
{
	static const struct {
		uint32_t src, dst;
		uint16_t sport, dport;
		uint32_t h_ports, h_addrs;
	} v[] = {
		{IP(66, 9, 149, 187), IP(161, 142, 100, 80), 2794, 1766,
		 0x51ccc178, 0x323e8fc2},
		{IP(199, 92, 111, 2), IP(65, 69, 140, 83), 14230, 4739,
		 0xc626b0ea, 0xd718262a},
		{IP(24, 19, 198, 95), IP(12, 22, 207, 184), 12898, 38024,
		 0x5c2b394a, 0xd2d0a5de},
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct tlb_flow_key k =
			flow(v[i].src, v[i].dst, v[i].sport, v[i].dport);

		assert_int_equal(tlb_rss_hash_flow(tlb_rss_default_key, &k),
				 v[i].h_ports);
		/* Address-only input: the first 8 bytes. */
		uint8_t in[8];
		memcpy(in, k.src_addr, 4);
		memcpy(in + 4, k.dst_addr, 4);
		assert_int_equal(tlb_toeplitz_hash(tlb_rss_default_key, in, 8),
				 v[i].h_addrs);
	}
}

static void
test_rss_flow_sticks(void **state)
{
	unsigned int per_core[4] = {0};

	(void)state;
	make("rss", 4, NULL);
	for (uint16_t port = 1000; port < 3000; port++) {
		struct tlb_flow_key k =
			flow(IP(10, 0, 0, 1), IP(10, 0, 0, 2), port, 9000);
		struct tlb_request_info req = {.key = &k};
		int first = tlb_policy_pick(&pol, &lv, &req);

		assert_in_range(first, 0, 3);
		/* Load does not move a flow. */
		load((uint32_t)first, 3, 1);
		for (int r = 0; r < 3; r++)
			assert_int_equal(tlb_policy_pick(&pol, &lv, &req),
					 first);
		/* The same answer as hash -> indirection table. */
		uint32_t h = tlb_rss_hash_flow(tlb_rss_default_key, &k);
		assert_int_equal(first, (int)(h % 128 % 4));
		per_core[first]++;
	}
	/* 2000 flows over 4 cores: each gets a fair share, roughly. */
	for (int i = 0; i < 4; i++)
		assert_in_range(per_core[i], 350, 650);
}

static void
test_rss_ineligible_core(void **state)
{
	(void)state;
	make("rss", 4, NULL);
	for (uint16_t port = 1000; port < 1200; port++) {
		struct tlb_flow_key k =
			flow(IP(10, 0, 0, 1), IP(10, 0, 0, 2), port, 9000);
		struct tlb_request_info req = {.key = &k};
		int home;

		tlb_lv_set_online(&lv, 2, true);
		home = tlb_policy_pick(&pol, &lv, &req);
		tlb_lv_set_online(&lv, 2, false);
		int now = tlb_policy_pick(&pol, &lv, &req);
		assert_int_not_equal(now, 2);
		assert_int_equal(now, home == 2 ? 3 : home);
	}
	for (uint32_t i = 0; i < 4; i++)
		tlb_lv_set_online(&lv, i, false);
	assert_int_equal(pick(), TLB_PICK_NONE);
}

static void
test_rr(void **state)
{
	(void)state;
	make("rr", 4, NULL);
	load(0, 10, 1); /* load is ignored */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 4; i++)
			assert_int_equal(pick(), i);
	lv.core[1].stale = 1;
	tlb_lv_refresh(&lv, 1);
	assert_int_equal(pick(), 0);
	assert_int_equal(pick(), 2);
	assert_int_equal(pick(), 3);
	assert_int_equal(pick(), 0);
}

static void
test_random(void **state)
{
	unsigned int hits[8] = {0};
	const unsigned int n = 80000;

	(void)state;
	make("random", 8, NULL);
	tlb_lv_set_online(&lv, 5, false);
	for (unsigned int j = 0; j < n; j++) {
		int i = pick();

		assert_in_range(i, 0, 7);
		hits[i]++;
	}
	assert_int_equal(hits[5], 0);
	/* Uniform over the 7 eligible cores: expected n/7 = 11428 each,
	 * sd ~ 100; allow 5 sd. */
	for (int i = 0; i < 8; i++)
		if (i != 5)
			assert_in_range(hits[i], 11428 - 500, 11428 + 500);
	for (uint32_t i = 0; i < 8; i++)
		tlb_lv_set_online(&lv, i, false);
	assert_int_equal(pick(), TLB_PICK_NONE);
}

static void
test_random_deterministic(void **state)
{
	int a[64];
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.seed = 42;
	make("random", 16, &pp);
	for (int j = 0; j < 64; j++)
		a[j] = pick();
	make("random", 16, &pp);
	for (int j = 0; j < 64; j++)
		assert_int_equal(pick(), a[j]);
}

static void
test_pod(void **state)
{
	struct tlb_policy_params pp;
	unsigned int heavy = 0;
	const unsigned int n = 40000;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.d = 2;
	make("pod", 2, &pp);
	load(0, 10, 1);
	/* Sampling 2 of 2 with replacement: the heavy core wins only when
	 * both draws are it, a quarter of the time. */
	for (unsigned int j = 0; j < n; j++)
		heavy += pick() == 0;
	assert_in_range(heavy, n / 4 - 800, n / 4 + 800);

	/* d = 16 over 4 cores: the least loaded core is (almost surely)
	 * always among the samples. */
	pp.d = 16;
	make("pod", 4, &pp);
	load(0, 3, 1);
	load(1, 1, 1);
	load(2, 2, 1);
	load(3, 4, 1);
	unsigned int best = 0;
	for (unsigned int j = 0; j < 1000; j++)
		best += pick() == 1;
	assert_true(best >= 980);
}

static void
test_jsq(void **state)
{
	(void)state;
	make("jsq", 4, NULL);
	load(0, 3, 1);
	load(1, 1, 1);
	load(2, 2, 1);
	load(3, 4, 1);
	assert_int_equal(pick(), 1);
	/* Steering as it picks converges to equal queues. */
	for (int j = 0; j < 10; j++)
		load((uint32_t)pick(), 1, 1);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(tlb_lv_outstanding(&lv, i), 5);
	/* A stale core is never picked, even when it is the shortest. */
	make("jsq", 3, NULL);
	load(1, 5, 1);
	load(2, 5, 1);
	lv.core[0].stale = 1;
	tlb_lv_refresh(&lv, 0);
	for (int j = 0; j < 10; j++)
		assert_int_not_equal(pick(), 0);
	lv.core[1].online = 0;
	tlb_lv_refresh(&lv, 1);
	lv.core[2].online = 0;
	tlb_lv_refresh(&lv, 2);
	assert_int_equal(pick(), TLB_PICK_NONE);
}

static void
test_jsq_ties_fair(void **state)
{
	unsigned int hits[4] = {0};

	(void)state;
	make("jsq", 4, NULL);
	/* All equal: the choice goes round every core, not always core 0. */
	for (int j = 0; j < 400; j++)
		hits[pick()]++;
	for (int i = 0; i < 4; i++)
		assert_int_equal(hits[i], 100);
}

static void
test_prefer_running(void **state)
{
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.prefer_running = true;
	make("jsq", 4, &pp);
	load(0, 2, 1);
	tlb_lv_set_running(&lv, 2, true);
	/* Cores 1, 2, 3 tie at 0; only 2 runs. */
	for (int j = 0; j < 8; j++)
		assert_int_equal(pick(), 2);
	/* A running core with more load does not beat a shorter queue. */
	load(2, 1, 1);
	int i = pick();
	assert_true(i == 1 || i == 3);

	/* Without the flag ties rotate regardless of run state. */
	pp.prefer_running = false;
	make("jsq", 4, &pp);
	tlb_lv_set_running(&lv, 2, true);
	unsigned int not_running = 0;
	for (int j = 0; j < 8; j++)
		not_running += pick() != 2;
	assert_int_equal(not_running, 6);
}

static void
test_jlq_work_aware(void **state)
{
	(void)state;
	/* Core 0: one long request; core 1: three short ones. */
	make("jsq", 2, NULL);
	load(0, 1, 10000);
	load(1, 3, 100);
	assert_int_equal(pick(), 0);
	make("jlq", 2, NULL);
	load(0, 1, 10000);
	load(1, 3, 100);
	assert_int_equal(pick(), 1);
	lv.core[1].online = 0;
	tlb_lv_refresh(&lv, 1);
	assert_int_equal(pick(), 0);
}

static void
test_work_estimate(void **state)
{
	struct tlb_request_info hinted = {.svc_hint_ns = 700, .svc_class = 1};
	struct tlb_request_info plain = {.svc_class = 3};
	struct tlb_request_info other = {.svc_class = 4};

	(void)state;
	make("jlq", 2, NULL);
	assert_int_equal(tlb_policy_work_estimate(&pol, &hinted), 700);
	assert_int_equal(tlb_policy_work_estimate(&pol, &plain), 1000);
	tlb_policy_observe(&pol, 3, 8000);
	assert_int_equal(tlb_policy_work_estimate(&pol, &plain), 8000);
	for (int j = 0; j < 200; j++)
		tlb_policy_observe(&pol, 3, 800);
	/* The average follows the observations (EWMA, weight 1/8). */
	assert_in_range(tlb_policy_work_estimate(&pol, &plain), 800, 820);
	/* Classes are separate; the hint always wins. */
	assert_int_equal(tlb_policy_work_estimate(&pol, &other), 1000);
	tlb_policy_observe(&pol, 1, 5);
	assert_int_equal(tlb_policy_work_estimate(&pol, &hinted), 700);
}

static void
test_jbsq(void **state)
{
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.k = 2;
	make("jbsq", 3, &pp);
	for (int j = 0; j < 6; j++) {
		int i = pick();

		assert_in_range(i, 0, 2);
		load((uint32_t)i, 1, 1);
	}
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(tlb_lv_outstanding(&lv, i), 2);
	/* All at k: hold. */
	assert_int_equal(pick(), TLB_PICK_HOLD);
	assert_int_equal(pick(), TLB_PICK_HOLD);
	/* A credit on core 1 frees exactly one slot there. */
	tlb_lv_on_complete(&lv, 1, 1, 1);
	assert_int_equal(pick(), 1);
	load(1, 1, 1);
	assert_int_equal(pick(), TLB_PICK_HOLD);
	/* No eligible core at all is not a hold. */
	for (uint32_t i = 0; i < 3; i++)
		tlb_lv_set_online(&lv, i, false);
	assert_int_equal(pick(), TLB_PICK_NONE);
}

static void
test_jbsq_k1_is_shortest(void **state)
{
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.k = 1;
	make("jbsq", 4, &pp);
	load(0, 1, 1);
	load(2, 1, 1);
	int i = pick();
	assert_true(i == 1 || i == 3);
	load((uint32_t)i, 1, 1);
	assert_int_equal(pick(), i == 1 ? 3 : 1);
}

/* What jsq, jlq and jbsq must pick, by brute force over the cores' own
 * lines: the least loaded eligible core, ties to the first at or after
 * the rotation cursor. */
static int
ref_pick(const char *name, uint32_t n, uint32_t start, uint64_t k)
{
	bool work = strcmp(name, "jlq") == 0;
	uint64_t best = UINT64_MAX;
	int best_i = -1;

	if (start >= n)
		start = 0;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = (start + j) % n;
		uint64_t v;

		if (!tlb_lv_eligible(&lv, i))
			continue;
		v = work ? tlb_lv_outstanding_work(&lv, i)
			 : tlb_lv_outstanding(&lv, i);
		/* loads from 2^32 - 2 up tie (TLB_KEY_MAX) */
		if (v > TLB_KEY_MAX)
			v = TLB_KEY_MAX;
		if (v < best) {
			best = v;
			best_i = (int)i;
		}
	}
	if (best_i < 0)
		return TLB_PICK_NONE;
	if (strcmp(name, "jbsq") == 0 &&
	    tlb_lv_outstanding(&lv, (uint32_t)best_i) >= k)
		return TLB_PICK_HOLD;
	return best_i;
}

/* What jlq must pick, by brute force: the eligible core of least
 * outstanding work (saturated as the view's keys are), among equals the
 * one picked longest ago; cores never picked come before, in rotation
 * from the cursor at the first pick. */
struct jlq_model {
	bool fresh;
	uint64_t now;
	uint64_t picked[TLB_MAX_CORES];
};

static uint64_t
model_key(uint32_t i, uint32_t n)
{
	uint64_t v;

	if (i >= n || !tlb_lv_eligible(&lv, i))
		return UINT64_MAX;
	v = tlb_lv_outstanding_work(&lv, i);
	return v > TLB_KEY_MAX ? TLB_KEY_MAX : v;
}

static int
model_pick(struct jlq_model *m, uint32_t n, uint32_t cursor)
{
	int best = -1;

	if (m->fresh) {
		for (uint32_t j = 0; j < n; j++)
			m->picked[(cursor + j) % n] = j;
		m->now = n;
		m->fresh = false;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = model_key(i, n);

		if (k == UINT64_MAX)
			continue;
		if (best < 0 || k < model_key((uint32_t)best, n) ||
		    (k == model_key((uint32_t)best, n) &&
		     m->picked[i] < m->picked[best]))
			best = (int)i;
	}
	if (best >= 0)
		m->picked[best] = m->now++;
	return best < 0 ? TLB_PICK_NONE : best;
}

static struct tlb_rng rng; /* seeded in main() */

static uint32_t
rnd(uint32_t bound)
{
	return tlb_rng_below(&rng, bound);
}

/* Core lines as they were before a dispatch (save_lines()), and what
 * the dispatch that picked got must have left in the view (key_gen was
 * gen before it): one more request of work_ns at got and its keys as
 * tlb_lv_refresh() makes them, or, for no core, nothing at all. */
static struct tlb_core_load lines_before[TLB_MAX_CORES];

static void
save_lines(void)
{
	memcpy(lines_before, lv.core, sizeof(lines_before));
}

static void
check_charged(int got, uint32_t work_ns, uint64_t gen)
{
	if (got < 0) {
		assert_true(lv.key_gen == gen);
		assert_memory_equal(lv.core, lines_before,
				    sizeof(lines_before));
		return;
	}

	uint32_t i = (uint32_t)got;
	const struct tlb_core_load *c = &lv.core[i];
	uint32_t mask = tlb_lv_eligible(&lv, i) ? 0 : UINT32_MAX;

	assert_true(lv.key_gen == gen + 1);
	assert_true(c->sent == lines_before[i].sent + 1);
	assert_true(c->sent_work_ns == lines_before[i].sent_work_ns + work_ns);
	assert_int_equal(lv.key_req[i],
			 tlb_lv_key(c->sent - c->completed, mask));
	assert_int_equal(
		lv.key_work[i],
		tlb_lv_key(c->sent_work_ns - c->completed_work_ns, mask));
}

/* Every pick of jsq and jbsq must be the plain scan's, and every pick of
 * jlq the model's above (whose least loaded core is the scan's too):
 * random writes of every kind, one or many between two picks, jumps of
 * hundreds of requests either way and of seconds of work (the keys
 * saturate), at sizes around the 16-key chunks and the 64-bit masks of
 * the argmin, jlq's list and its tree (and its levels). Half the picks
 * are dispatches, as the datapath makes them, each checked to have
 * charged its core and nothing else; the others are pick() alone or
 * pick() and a charge by hand. Midway, jlq's tree runs out of stamps. */
static void
test_argmin_matches_scan(void **state)
{
	static const char *const names[] = {"jsq", "jlq", "jbsq"};
	static const uint32_t sizes[] = {1,   2,   3,   5,   15,           16,
					 17,  32,  33,  63,  64,           65,
					 100, 128, 129, 200, TLB_MAX_CORES};
	struct tlb_policy_params pp;

	(void)state;
	tlb_policy_params_default(&pp);
	pp.k = 3;
	for (size_t a = 0; a < sizeof(names) / sizeof(names[0]); a++) {
		for (size_t b = 0; b < sizeof(sizes) / sizeof(sizes[0]); b++) {
			uint32_t n = sizes[b];

			bool ordered = strcmp(names[a], "jlq") == 0;
			struct jlq_model m = {.fresh = true};
			struct tlb_request_info req0 = {0};

			make(names[a], n, &pp);
			for (unsigned int step = 0; step < 4000; step++) {
				if (step == 2000 &&
				    tlb_jlq_order(&pol)->leaves != 0)
					tlb_jlq_order(&pol)->stamp =
						TLB_ORDER_STAMP_END - 3;
				unsigned int writes =
					rnd(4) == 0 ? 1 + rnd(20) : rnd(2);

				for (unsigned int w = 0; w < writes; w++) {
					uint32_t i = rnd(n);

					switch (rnd(11)) {
					case 0:
					case 1:
					case 2:
						tlb_lv_on_dispatch(
							&lv, i, 1 + rnd(5000));
						break;
					case 3:
					case 4:
						tlb_lv_on_complete(&lv, i,
								   1 + rnd(2),
								   rnd(6000));
						break;
					case 5:
						tlb_lv_set_online(&lv, i,
								  rnd(4) != 0);
						break;
					case 6:
						tlb_lv_on_unsent(&lv, i, 1,
								 rnd(3000));
						break;
					case 8:
						/* a jump up, in one write */
						lv.core[i].sent += 1 + rnd(200);
						lv.core[i].sent_work_ns +=
							rnd(100000);
						tlb_lv_refresh(&lv, i);
						break;
					case 9:
						/* and down */
						tlb_lv_on_complete(&lv, i,
								   1 + rnd(150),
								   rnd(100000));
						break;
					case 10:
						/* seconds of work: past the
						 * 32-bit key (rarely) */
						if (rnd(8) == 0)
							lv.core[i]
								.sent_work_ns +=
								(uint64_t)rnd(3)
								<< 32;
						tlb_lv_refresh(&lv, i);
						break;
					default:
						tlb_lv_reset_core(&lv, i);
						break;
					}
				}
				uint32_t start = pol.cursor;
				int want = ref_pick(names[a], n, start, pp.k);
				int got;

				if (ordered) {
					int scan = want;

					want = model_pick(&m, n, start);
					/* the same least load as the scan's */
					assert_int_equal(want < 0, scan < 0);
					if (want >= 0)
						assert_true(
							model_key(
								(uint32_t)want,
								n) ==
							model_key(
								(uint32_t)scan,
								n));
				}
				/* pick() alone, pick() and a charge by hand,
				 * or (half the time) the dispatch */
				unsigned int how = rnd(4);
				uint32_t work = 1 + rnd(5000);
				uint64_t gen = lv.key_gen;

				if (how < 2) {
					got = pick();
				} else {
					save_lines();
					got = tlb_policy_dispatch(&pol, &lv,
								  &req0, work);
				}
				if (got != want)
					fail_msg("%s, %u cores, step %u: "
						 "picked %d, the %s says %d",
						 names[a], n, step, got,
						 ordered ? "model" : "scan",
						 want);
				if (how == 1 && got >= 0)
					tlb_lv_on_dispatch(&lv, (uint32_t)got,
							   work);
				if (how >= 2)
					check_charged(got, work, gen);
			}
		}
	}
}

/* Loads of 2^32 - 2 ns of work and more tie: among them the order goes
 * round, the core further on is not taken over the one before it. */
static void
test_jlq_saturated_keys_tie(void **state)
{
	(void)state;
	make("jlq", 3, NULL);
	load(0, 1, UINT32_MAX);
	load(0, 1, UINT32_MAX);
	load(1, 1, UINT32_MAX);
	load(2, 1, 7);
	assert_int_equal(pick(), 2);
	load(2, 1, UINT32_MAX);      /* all three past the key's range */
	assert_int_equal(pick(), 0); /* 2 was picked last: behind 0 and 1 */
	assert_int_equal(pick(), 1);
	assert_int_equal(pick(), 2);
	assert_int_equal(pick(), 0);
}

/* A pick from a saturated key, or its dispatch, which leaves the key as
 * it is, then one other write: the next pick must see that write. List
 * (2 cores) and tree (20). */
static void
test_jlq_saturated_pick_then_write(void **state)
{
	static const uint32_t sizes[] = {2, 20};
	struct tlb_request_info req = {0};

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int charged = 0; charged < 2; charged++) {
			make("jlq", sizes[s], NULL);
			for (uint32_t i = 1; i < sizes[s]; i++)
				tlb_lv_set_online(&lv, i, false);
			load(0, 1, UINT32_MAX);
			load(0, 1, UINT32_MAX);
			assert_int_equal(lv.key_work[0], TLB_KEY_MAX);
			/* the only one */
			assert_int_equal(
				charged ? tlb_policy_dispatch(&pol, &lv, &req,
							      1000)
					: pick(),
				0);
			assert_int_equal(lv.key_work[0], TLB_KEY_MAX);
			tlb_lv_set_online(&lv, 1, true);
			assert_int_equal(pick(), 1);
		}
	}
}

/* Every policy's dispatch picks what pick() picks and charges the view
 * as tlb_lv_on_dispatch() does: two copies of the same policy and view,
 * one dispatched, one picked and charged by hand, stay the same view
 * through random loads and completions. */
static void
test_dispatch_is_pick_and_charge(void **state)
{
	static struct tlb_load_view lv2;
	static struct tlb_policy pol2;

	(void)state;
	for (unsigned int t = 0; tlb_policies[t] != NULL; t++) {
		const char *name = tlb_policies[t]->name;

		for (uint32_t n = 3; n <= 40; n += 37) {
			make(name, n, NULL);
			lv2 = lv;
			pol2 = pol;
			for (unsigned int step = 0; step < 600; step++) {
				struct tlb_flow_key k = flow(
					IP(10, 0, 0, step % 7), IP(10, 0, 1, 1),
					(uint16_t)(1000 + step % 13), 9000);
				struct tlb_request_info req = {
					.key = &k,
					.svc_hint_ns =
						step % 3 ? 0 : 100 + 7 * step,
					.svc_class = (uint16_t)(step % 2),
				};
				uint32_t work =
					tlb_policy_work_estimate(&pol, &req);
				int a = tlb_policy_dispatch(&pol, &lv, &req,
							    work);
				int b = tlb_policy_pick(&pol2, &lv2, &req);

				assert_int_equal(a, b);
				if (b >= 0)
					tlb_lv_on_dispatch(&lv2, (uint32_t)b,
							   work);
				if (step % 5 == 4) {
					uint32_t i = step % n;

					tlb_lv_on_complete(&lv, i, 1, 700);
					tlb_lv_on_complete(&lv2, i, 1, 700);
				}
				if (step % 97 == 50) {
					tlb_lv_set_online(&lv, step % n, false);
					tlb_lv_set_online(&lv2, step % n,
							  false);
				}
				if (step % 97 == 90) {
					tlb_lv_set_online(&lv, (step - 40) % n,
							  true);
					tlb_lv_set_online(&lv2, (step - 40) % n,
							  true);
				}
				if (memcmp(&lv, &lv2, sizeof(lv)) != 0)
					fail_msg("%s, %u cores, step %u: the "
						 "views differ",
						 name, n, step);
			}
		}
	}
}

/* jlq dispatching one work estimate for every request goes round all the
 * cores, in order from the cursor, and its order stays exact through its
 * own dispatches and through a pick() alone. The same in its list (16
 * cores) and its tree (40). */
static void
test_jlq_order_round(void **state)
{
	static const uint32_t sizes[] = {TLB_ORDER_CORES, 40};
	struct tlb_request_info req = {0};

	(void)state;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];
		bool tree = n > TLB_ORDER_CORES;

		make("jlq", n, NULL);
		pol.cursor = 5;
		for (unsigned int step = 0; step < 10 * n; step++) {
			int got = tlb_policy_dispatch(
				&pol, &lv, &req,
				tlb_policy_work_estimate(&pol, &req));

			assert_int_equal(got, (int)((5 + step) % n));
			assert_true((tlb_jlq_order(&pol)->leaves != 0) ==
					    tree &&
				    tlb_jlq_order(&pol)->gen == lv.key_gen);
		}
		/* a view written elsewhere: made again, the idler core
		 * first */
		tlb_lv_on_complete(&lv, 9, 3, 3000);
		assert_int_equal(pick(), 9);
		assert_true(tlb_jlq_order(&pol)->gen == lv.key_gen);
		/* a pick not charged changes no key: still the idlest */
		assert_int_equal(pick(), 9);
		for (int j = 0; j < 2; j++) { /* 8000, 9000 */
			tlb_lv_on_dispatch(&lv, 9, 1000);
			assert_int_equal(pick(), 9);
		}
		/* at 10000 it ties with all, and goes behind them */
		tlb_lv_on_dispatch(&lv, 9, 1000);
		assert_int_equal(pick(), 5);
		tlb_lv_on_dispatch(&lv, 5, 1000);
		assert_int_equal(pick(), 6);
	}
}

/* jlq dispatching into a view of another size (the scan) keeps nothing
 * of it for the view its order was made from: that view's key_gen coming
 * round to the other's must not pass for its own. */
static void
test_jlq_two_views(void **state)
{
	static struct tlb_load_view big;
	struct tlb_request_info req = {0};

	(void)state;
	make("jlq", 4, NULL);
	tlb_lv_init(&big, 8);
	for (int j = 0; j < 8; j++)
		assert_true(tlb_policy_dispatch(&pol, &lv, &req, 1000) >= 0);
	/* the order of lv is exact; now a write it did not make: core 2
	 * is the idlest */
	tlb_lv_on_complete(&lv, 2, 2, 2000);
	assert_true(big.key_gen < lv.key_gen);
	while (big.key_gen < lv.key_gen)
		assert_true(tlb_policy_dispatch(&pol, &big, &req, 1000) >= 0);
	assert_int_equal(pick(), 2);
}

/* A policy over fewer cores than its view looks at its own cores only. */
static void
test_fewer_cores_than_view(void **state)
{
	(void)state;
	make("jsq", 20, NULL);
	assert_int_equal(tlb_policy_init(&pol, "jsq",
					 &(struct tlb_policy_params){
						 .d = 2, .k = 2, .seed = 1},
					 4, err, sizeof(err)),
			 0);
	for (uint32_t i = 0; i < 4; i++)
		load(i, 2, 1);
	/* cores 4.. are idle, but not this policy's */
	for (int j = 0; j < 8; j++) {
		int i = pick();

		assert_true(i >= 0 && i < 4);
	}
}

int
main(void)
{
	tlb_rng_seed(&rng, 12345);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_parse_spec),
		cmocka_unit_test(test_param_tables),
		cmocka_unit_test(test_param_table_generic),
		cmocka_unit_test(test_init_errors),
		cmocka_unit_test(test_policy_bound),
		cmocka_unit_test(test_toeplitz_vectors),
		cmocka_unit_test(test_rss_flow_sticks),
		cmocka_unit_test(test_rss_ineligible_core),
		cmocka_unit_test(test_rr),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_random_deterministic),
		cmocka_unit_test(test_pod),
		cmocka_unit_test(test_jsq),
		cmocka_unit_test(test_jsq_ties_fair),
		cmocka_unit_test(test_prefer_running),
		cmocka_unit_test(test_jlq_work_aware),
		cmocka_unit_test(test_work_estimate),
		cmocka_unit_test(test_jbsq),
		cmocka_unit_test(test_jbsq_k1_is_shortest),
		cmocka_unit_test(test_argmin_matches_scan),
		cmocka_unit_test(test_jlq_saturated_keys_tie),
		cmocka_unit_test(test_jlq_order_round),
		cmocka_unit_test(test_jlq_saturated_pick_then_write),
		cmocka_unit_test(test_dispatch_is_pick_and_charge),
		cmocka_unit_test(test_jlq_two_views),
		cmocka_unit_test(test_fewer_cores_than_view),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
