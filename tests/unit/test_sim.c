/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the simulator engine: hand-computed traces for the NIC
 * model, queueing theory for the statistics (M/M/1, M/D/1, Erlang C), and
 * the properties the report relies on (ordering, determinism, drops).
 *
 * Request counts are sized so that each tolerance is at least three
 * standard deviations of the estimate, as measured over seeds 1-20 (the
 * figures are in docs/results-simulation.md); every test uses seed 1 and
 * 10% warm-up. Sizes keep the whole test near 2 s at -O2 and 30 s at -O0
 * under ASan+UBSan on two CPUs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim.h"

static char err[TLB_SIM_ERR_MAX];

static void
setup(struct tlb_sim_params *p, const char *policy, const char *dist,
      uint32_t cores, double load, uint64_t requests)
{
	tlb_sim_params_default(p);
	assert_int_equal(tlb_sim_set_policy(p, policy, err, sizeof(err)), 0);
	assert_int_equal(tlb_dist_parse(dist, &p->dist, err, sizeof(err)), 0);
	p->n_cores = cores;
	p->load = load;
	p->requests = requests;
	p->warmup = requests / 10;
	p->seed = 1;
}

static void
run(const struct tlb_sim_params *p, struct tlb_sim_result *r)
{
	int rc = tlb_sim_run(p, r, NULL);

	if (rc != 0)
		fail_msg("tlb_sim_run: %s", r->err);
	assert_int_equal(r->completed + r->dropped, r->requests);
}

/* Relative error of got against want, printed so that the test log
 * doubles as the validation record. */
static void
check_close(const char *what, double got, double want, double tol)
{
	double rel = (got - want) / want;

	print_message(
		"%-36s got %10.2f want %10.2f error %+6.2f%% (tol %.0f%%)\n",
		what, got, want, 100.0 * rel, 100.0 * tol);
	if (!(fabs(rel) <= tol))
		fail_msg("%s: %.3f vs %.3f (%.2f%% > %.0f%%)", what, got, want,
			 100.0 * rel, 100.0 * tol);
}

/* Erlang C: probability that an arrival waits in M/M/k at offered load a
 * (in servers, a < k), summed iteratively to avoid factorials. */
static double
erlang_c(unsigned int k, double a)
{
	double term = 1.0, sum = 0.0, last;

	for (unsigned int i = 0; i < k; i++) {
		if (i > 0)
			term *= a / i;
		sum += term;
	}
	term *= a / k;
	last = term * k / (k - a);
	return last / (sum + last);
}

/* Traces: exact answers worked out by hand. */

struct trace_case {
	uint64_t arrival[8];
	uint32_t service[8];
	unsigned int n;
};

static void
run_trace(struct tlb_sim_params *p, const struct trace_case *tc,
	  struct tlb_sim_result *r, struct tlb_hist *h)
{
	struct tlb_sim_trace t = {
		.arrival_ns = tc->arrival,
		.service_ns = tc->service,
		.len = tc->n,
	};

	p->trace = &t;
	p->requests = 0;
	p->warmup = 0;
	if (tlb_sim_run(p, r, h) != 0)
		fail_msg("tlb_sim_run: %s", r->err);
	p->trace = NULL;
	assert_int_equal(r->requests, tc->n);
	assert_int_equal(r->completed + r->dropped, tc->n);
}

static void
test_trace_fifo(void **state)
{
	static struct tlb_hist h;
	struct trace_case tc = {{0, 0, 10}, {5, 5, 5}, 3};
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	setup(&p, "jsq", "fixed:1us", 1, 0.5, 0);
	run_trace(&p, &tc, &r, &h);
	/* The second waits 5 behind the first; the third finds it idle. */
	assert_int_equal(h.count, 3);
	assert_int_equal(h.sum, 5 + 10 + 5);
	assert_int_equal(h.min, 5);
	assert_int_equal(h.max, 10);
	assert_int_equal(r.sim_time_ns, 15);
}

static void
test_trace_nic_delays_and_hold(void **state)
{
	static struct tlb_hist h;
	struct trace_case tc = {{0, 1}, {10, 10}, 2};
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	setup(&p, "jbsq:1", "fixed:1us", 1, 0.5, 0);
	p.dispatch_ns = 2;
	p.delivery_ns = 3;
	p.feedback_ns = 4;
	run_trace(&p, &tc, &r, &h);
	/* A: dispatched 0..2, at the core at 5, done at 15: latency 15.
	 * B: waits for the dispatcher, dispatched 2..4, held (core 0 has
	 * k=1 out); A's completion reaches the NIC at 15 + 4 = 19, B is
	 * sent, at the core at 22, done at 32: latency 31. */
	assert_int_equal(h.count, 2);
	assert_int_equal(h.min, 15);
	assert_int_equal(h.max, 31);
	assert_int_equal(r.held_max, 1);
	assert_int_equal(r.dropped, 0);
	/* The last event is B's feedback reaching the NIC. */
	assert_int_equal(r.sim_time_ns, 36);
}

static void
test_trace_rss_static_jsq_spreads(void **state)
{
	static struct tlb_hist h;
	struct trace_case tc = {{0, 0, 0, 0}, {10, 10, 10, 10}, 4};
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	/* One flow: rss must put every request on one core. */
	setup(&p, "rss", "fixed:1us", 4, 0.5, 0);
	p.flows = 1;
	run_trace(&p, &tc, &r, &h);
	assert_int_equal(h.sum, 10 + 20 + 30 + 40);
	assert_true(fabs(r.core_share_max - 4.0) < 1e-9);

	/* jsq sees each core's outstanding count and uses all four. */
	setup(&p, "jsq", "fixed:1us", 4, 0.5, 0);
	p.flows = 1;
	run_trace(&p, &tc, &r, &h);
	assert_int_equal(h.sum, 40);
	assert_int_equal(h.max, 10);
}

static void
test_trace_cfcfs_delivery(void **state)
{
	static struct tlb_hist h;
	struct trace_case tc = {{0, 0, 0}, {10, 10, 10}, 3};
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	setup(&p, "cfcfs", "fixed:1us", 2, 0.5, 0);
	p.delivery_ns = 5;
	p.feedback_ns = 1000; /* the ideal does not wait for feedback */
	run_trace(&p, &tc, &r, &h);
	assert_int_equal(h.sum, 15 + 15 + 25);
}

/* Queueing theory. */

static void
test_mm1(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	/* E[T] = 1 / (mu - lambda), mean service 1 us. */
	setup(&p, "jsq", "exp:1us", 1, 0.5, 400000);
	run(&p, &r);
	check_close("M/M/1 rho=0.5 mean sojourn", r.mean_ns, 1000.0 / 0.5,
		    0.02);
	setup(&p, "jsq", "exp:1us", 1, 0.8, 3000000);
	run(&p, &r);
	check_close("M/M/1 rho=0.8 mean sojourn", r.mean_ns, 1000.0 / 0.2,
		    0.02);
}

static void
check_erlang(unsigned int k, double rho, uint64_t requests)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;
	double a = rho * k;
	double wq = erlang_c(k, a) * 1000.0 / (k - a);
	char what[64];

	setup(&p, "cfcfs", "exp:1us", k, rho, requests);
	run(&p, &r);
	snprintf(what, sizeof(what), "cfcfs M/M/%u rho=%.1f mean wait", k, rho);
	check_close(what, r.mean_wait_ns, wq, 0.03);
}

static void
test_cfcfs_erlang_c(void **state)
{
	(void)state;
	/* M/M/1 waits with probability rho; the others are reference
	 * values computed with factorials. */
	assert_true(fabs(erlang_c(1, 0.8) - 0.8) < 1e-12);
	assert_true(fabs(erlang_c(4, 2.8) - 0.428654) < 1e-6);
	assert_true(fabs(erlang_c(16, 12.8) - 0.304884) < 1e-6);
	check_erlang(4, 0.7, 2000000);
	check_erlang(16, 0.8, 8000000);
}

static void
test_random_is_independent_mm1(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	/* Bernoulli splitting of a Poisson stream gives k independent
	 * Poisson streams of lambda/k: each core is M/M/1 at rho. */
	setup(&p, "random", "exp:1us", 4, 0.7, 500000);
	run(&p, &r);
	check_close("random k=4 rho=0.7 mean sojourn", r.mean_ns, 1000.0 / 0.3,
		    0.03);
}

static void
test_md1(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;
	double rho = 0.7;

	(void)state;
	/* Pollaczek-Khinchine for deterministic service. */
	setup(&p, "jsq", "fixed:1us", 1, rho, 600000);
	run(&p, &r);
	check_close("M/D/1 rho=0.7 mean wait", r.mean_wait_ns,
		    rho * 1000.0 / (2.0 * (1.0 - rho)), 0.03);
}

/* Properties. */

static void
test_ordering(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result rnd, jsq, cf;

	(void)state;
	setup(&p, "random", "exp:1us", 16, 0.8, 500000);
	run(&p, &rnd);
	assert_int_equal(tlb_sim_set_policy(&p, "jsq", err, sizeof(err)), 0);
	run(&p, &jsq);
	assert_int_equal(tlb_sim_set_policy(&p, "cfcfs", err, sizeof(err)), 0);
	run(&p, &cf);
	print_message("16 cores rho=0.8 p99: random %llu jsq %llu; mean: "
		      "jsq %.1f cfcfs %.1f\n",
		      (unsigned long long)rnd.p99_ns,
		      (unsigned long long)jsq.p99_ns, jsq.mean_ns, cf.mean_ns);
	assert_true(jsq.p99_ns <= rnd.p99_ns);
	assert_true(cf.mean_ns <= jsq.mean_ns);
}

static void
test_determinism(void **state)
{
	const char *policies[] = {"rss", "rr",  "random", "pod:2",
				  "jsq", "jlq", "jbsq:1", "cfcfs"};
	struct tlb_sim_params p;
	struct tlb_sim_result a, b, c;

	(void)state;
	for (unsigned int i = 0; i < sizeof(policies) / sizeof(*policies);
	     i++) {
		setup(&p, policies[i], "bimodal:0.9:0.5us:5.5us", 8, 0.7,
		      50000);
		p.feedback_ns = 500;
		p.delivery_ns = 200;
		p.dispatch_ns = 10;
		run(&p, &a);
		run(&p, &b);
		/* Everything but the error text must repeat exactly. */
		assert_memory_equal(&a, &b,
				    offsetof(struct tlb_sim_result, err));
		p.seed = 2;
		run(&p, &c);
		assert_true(a.mean_ns != c.mean_ns);
		assert_true(a.sim_time_ns != c.sim_time_ns);
	}
}

static void
test_jbsq_drops(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	setup(&p, "jbsq:1", "exp:1us", 4, 2.0, 20000);
	p.fifo_cap = 4;
	p.warmup = 0;
	run(&p, &r);
	assert_true(r.dropped > 0);
	assert_int_equal(r.requests, 20000);
	assert_int_equal(r.completed + r.dropped, r.requests);
	assert_true(r.held_max <= 4);
	/* Overloaded twice over, about half must go. */
	assert_true(r.dropped > 20000 / 3 && r.dropped < 20000 * 2 / 3);

	/* Only a policy that holds can drop. */
	assert_int_equal(tlb_sim_set_policy(&p, "jsq", err, sizeof(err)), 0);
	run(&p, &r);
	assert_int_equal(r.dropped, 0);
	assert_int_equal(r.completed, 20000);
}

static void
test_slo_search(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_slo cf10, cf30, rss30;

	(void)state;
	setup(&p, "cfcfs", "exp:1us", 16, 0.5, 50000);
	assert_int_equal(tlb_sim_max_load(&p, 10.0, &cf10, err, sizeof(err)),
			 0);
	assert_int_equal(tlb_sim_max_load(&p, 30.0, &cf30, err, sizeof(err)),
			 0);
	assert_int_equal(tlb_sim_set_policy(&p, "rss", err, sizeof(err)), 0);
	assert_int_equal(tlb_sim_max_load(&p, 30.0, &rss30, err, sizeof(err)),
			 0);
	print_message("max load: cfcfs 10x %.3f 30x %.3f, rss 30x %.3f\n",
		      cf10.max_load, cf30.max_load, rss30.max_load);
	assert_true(cf10.max_load > 0.8 && cf10.max_load <= 1.05);
	assert_true(cf30.max_load >= cf10.max_load);
	assert_true(rss30.max_load > 0.0 && rss30.max_load < cf30.max_load);
	assert_int_equal(cf10.evaluations, TLB_SIM_SLO_STEPS + 1);
	assert_true(cf10.p99_ns <= cf10.slo_ns);
}

static void
test_fixed_pins_flows(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	/* One client thread on 2 cores: every request on core 0, which is
	 * M/M/1 at twice the load; core 1 serves nothing. */
	setup(&p, "fixed", "exp:1us", 2, 0.25, 400000);
	p.flows = 1;
	run(&p, &r);
	assert_true(fabs(r.core_share_max - 2.0) < 1e-12);
	check_close("fixed, 1 thread on 2 cores, sojourn", r.mean_ns,
		    1000.0 / 0.5, 0.02);
	/* As many threads as cores: thread f on core f, so with one flow
	 * per core each core serves only its own thread's requests and a
	 * Poisson stream splits into independent M/M/1 queues. */
	setup(&p, "fixed", "exp:1us", 4, 0.7, 500000);
	p.flows = 4;
	run(&p, &r);
	check_close("fixed k=4 rho=0.7 mean sojourn", r.mean_ns, 1000.0 / 0.3,
		    0.03);
	assert_int_equal(tlb_sim_set_policy(&p, "fixed:2", err, sizeof(err)),
			 -1);
}

static void
test_dispatchers_partitioned(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;
	double wq = erlang_c(2, 1.4) * 1000.0 / (2 - 1.4);

	(void)state;
	/* Two dispatchers, each owning 2 of the 4 cores, the wire split at
	 * random: each sees Poisson at half the rate, and jbsq:1 with no
	 * feedback delay is central FCFS over its own cores: two M/M/2,
	 * not one M/M/4 (whose wait is about a third of this). */
	setup(&p, "jbsq:1", "exp:1us", 4, 0.7, 2000000);
	p.dispatchers = 2;
	run(&p, &r);
	check_close("jbsq:1 D=2 partitioned = 2 x M/M/2", r.mean_wait_ns, wq,
		    0.03);
	/* Split by RSS over one flow: one dispatcher gets the whole wire
	 * and only its 2 cores work. */
	setup(&p, "jsq", "exp:1us", 4, 0.2, 100000);
	p.dispatchers = 2;
	p.split = TLB_SIM_SPLIT_RSS;
	p.flows = 1;
	run(&p, &r);
	assert_true(r.core_share_max > 1.8);
	p.split = TLB_SIM_SPLIT_EVEN;
	run(&p, &r);
	assert_true(r.core_share_max < 1.2);
}

static void
test_dispatchers_shared_view(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;
	double now, soon, late;

	(void)state;
	/* Shared view read at once: two dispatchers act as one global
	 * view, so jbsq:1 over the 4 cores is M/M/4. */
	setup(&p, "jbsq:1", "exp:1us", 4, 0.7, 2000000);
	p.dispatchers = 2;
	p.shared_view = true;
	run(&p, &r);
	check_close("jbsq:1 D=2 shared = M/M/4", r.mean_wait_ns,
		    erlang_c(4, 2.8) * 1000.0 / (4 - 2.8), 0.03);
	/* Read every 20 ns, the view is nearly exact; read every 5 us, the
	 * dispatchers all chase the same stale idlest cores. */
	setup(&p, "jsq", "exp:1us", 16, 0.9, 400000);
	p.dispatchers = 4;
	p.shared_view = true;
	run(&p, &r);
	now = r.mean_ns;
	p.view_sync_ns = 20;
	run(&p, &r);
	soon = r.mean_ns;
	p.view_sync_ns = 5000;
	run(&p, &r);
	late = r.mean_ns;
	print_message("jsq D=4 shared, sync 0 / 20 ns / 5 us: mean %.0f / "
		      "%.0f / %.0f ns\n",
		      now, soon, late);
	check_close("jsq D=4 sync 20 ns against sync 0", soon, now, 0.05);
	assert_true(late > 2.0 * now);
}

static void
test_bad_params(void **state)
{
	struct tlb_sim_params p;
	struct tlb_sim_result r;

	(void)state;
	tlb_sim_params_default(&p);
	assert_int_equal(tlb_sim_set_policy(&p, "nope", err, sizeof(err)), -1);
	assert_int_equal(tlb_sim_set_policy(&p, "cfcfs:2", err, sizeof(err)),
			 -1);
	assert_int_equal(tlb_sim_set_policy(&p, "jbsq:0", err, sizeof(err)),
			 -1);
	assert_int_equal(tlb_sim_set_policy(&p, "pod:3", err, sizeof(err)), 0);
	assert_int_equal(p.policy_params.d, 3);

	p.n_cores = 0;
	assert_int_equal(tlb_sim_run(&p, &r, NULL), -1);
	assert_non_null(strstr(r.err, "cores"));
	tlb_sim_params_default(&p);
	p.load = 0.0;
	assert_int_equal(tlb_sim_run(&p, &r, NULL), -1);
	tlb_sim_params_default(&p);
	p.warmup = p.requests;
	assert_int_equal(tlb_sim_run(&p, &r, NULL), -1);
	tlb_sim_params_default(&p);
	p.dispatchers = TLB_SIM_MAX_DISPATCHERS + 1;
	assert_int_equal(tlb_sim_run(&p, &r, NULL), -1);
	assert_non_null(strstr(r.err, "dispatchers"));
	p.dispatchers = 2;
	assert_int_equal(tlb_sim_set_policy(&p, "cfcfs", err, sizeof(err)), 0);
	assert_int_equal(tlb_sim_run(&p, &r, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_fifo),
		cmocka_unit_test(test_trace_nic_delays_and_hold),
		cmocka_unit_test(test_trace_rss_static_jsq_spreads),
		cmocka_unit_test(test_trace_cfcfs_delivery),
		cmocka_unit_test(test_mm1),
		cmocka_unit_test(test_cfcfs_erlang_c),
		cmocka_unit_test(test_random_is_independent_mm1),
		cmocka_unit_test(test_md1),
		cmocka_unit_test(test_ordering),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_jbsq_drops),
		cmocka_unit_test(test_slo_search),
		cmocka_unit_test(test_fixed_pins_flows),
		cmocka_unit_test(test_dispatchers_partitioned),
		cmocka_unit_test(test_dispatchers_shared_view),
		cmocka_unit_test(test_bad_params),
	};

	return cmocka_run_group_tests_name("unit", tests, NULL, NULL);
}
