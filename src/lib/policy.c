/* SPDX-License-Identifier: BSD-3-Clause
 * The policy table and what policies share: init, spec parsing, the work
 * estimate, the argmin scan over the load view, the Toeplitz hash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "turbolb/policy.h"
#include "policy_impl.h"

const struct tlb_policy_ops *const tlb_policies[] = {
	&tlb_policy_rss,
	&tlb_policy_rr,
	&tlb_policy_random,
	&tlb_policy_pod,
	&tlb_policy_jsq,
	&tlb_policy_jlq,
	&tlb_policy_jbsq,
	NULL,
};

#define DEFAULT_WORK_NS 1000u

const struct tlb_policy_ops *
tlb_policy_find(const char *name)
{
	for (unsigned int i = 0; tlb_policies[i] != NULL; i++)
		if (strcmp(tlb_policies[i]->name, name) == 0)
			return tlb_policies[i];
	return NULL;
}

void
tlb_policy_params_default(struct tlb_policy_params *params)
{
	memset(params, 0, sizeof(*params));
	params->d = 2;
	params->k = 2;
	params->seed = 1;
	params->prefer_running = false;
}

int
tlb_policy_parse_spec(const char *spec, char name[TLB_POLICY_NAME_MAX],
		      struct tlb_policy_params *params, char *err,
		      size_t errlen)
{
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	const struct tlb_policy_ops *ops;

	if (len == 0 || len >= TLB_POLICY_NAME_MAX) {
		snprintf(err, errlen, "bad policy '%s'", spec);
		return -1;
	}
	memcpy(name, spec, len);
	name[len] = '\0';
	ops = tlb_policy_find(name);
	if (ops == NULL) {
		snprintf(err, errlen, "unknown policy '%s'", name);
		return -1;
	}
	if (colon == NULL)
		return 0;

	const char *arg = colon + 1;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 ||
	    v > UINT32_MAX) {
		snprintf(err, errlen, "policy '%s': bad parameter '%s'", name,
			 arg);
		return -1;
	}
	if (strcmp(name, "pod") == 0) {
		params->d = (uint32_t)v;
	} else if (strcmp(name, "jbsq") == 0) {
		params->k = (uint32_t)v;
	} else {
		snprintf(err, errlen, "policy '%s' takes no parameter", name);
		return -1;
	}
	return 0;
}

int
tlb_policy_init(struct tlb_policy *p, const char *name,
		const struct tlb_policy_params *params, uint32_t n_cores,
		char *err, size_t errlen)
{
	const struct tlb_policy_ops *ops = tlb_policy_find(name);

	if (ops == NULL) {
		snprintf(err, errlen, "unknown policy '%s'", name);
		return -1;
	}
	if (n_cores == 0 || n_cores > TLB_MAX_CORES) {
		snprintf(err, errlen, "policy %s: %u cores (must be 1..%u)",
			 name, n_cores, TLB_MAX_CORES);
		return -1;
	}
	if (ops->check != NULL && ops->check(params, err, errlen) != 0)
		return -1;

	memset(p, 0, sizeof(*p));
	p->ops = ops;
	p->params = *params;
	p->n_cores = n_cores;
	p->default_work_ns = DEFAULT_WORK_NS;
	tlb_rng_seed(&p->rng, params->seed);
	if (ops->init != NULL)
		ops->init(p);
	return 0;
}

void
tlb_policy_observe(struct tlb_policy *p, uint16_t svc_class,
		   uint32_t service_ns)
{
	uint64_t *avg = &p->class_avg_ns[svc_class % TLB_MAX_CLASSES];

	if (*avg == 0)
		*avg = service_ns ? service_ns : 1;
	else
		*avg = *avg - (*avg >> 3) + (service_ns >> 3);
}

/* The common case (no prefer_running, and a bound only on the metric
 * scanned) works on the view's dense keys, where ineligible cores are
 * UINT64_MAX: the minimum, then the first core at or after the rotating
 * start that has it. Up to TREE_MIN_CORES cores a plain scan does both
 * (about three instructions a core: four independent chains). Above, the
 * tree of struct tlb_min_tree keeps the minimum at hand: between two
 * picks usually one key changed (the core picked last), a path of log2 n
 * nodes; and it finds the core in log2 n steps when it is not among the
 * first few from the start. Measured with callgrind in docs/performance.md:
 * below about 12 cores the scan is cheaper. */
#define TREE_MIN_CORES 12u
#define FIND_NEAR 2u /* cores tried from the start before the tree */

static inline uint64_t
min2(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t
scan_min(const uint64_t *key, uint32_t n)
{
	uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX;
	uint64_t m2 = UINT64_MAX, m3 = UINT64_MAX;
	size_t i = 0;

	/* size_t: no zero-extension of the index on every load */
	for (; i + 4 <= n; i += 4) {
		m0 = min2(key[i], m0);
		m1 = min2(key[i + 1], m1);
		m2 = min2(key[i + 2], m2);
		m3 = min2(key[i + 3], m3);
	}
	for (; i < n; i++)
		m0 = min2(key[i], m0);
	return min2(min2(m0, m1), min2(m2, m3));
}

static inline int
scan_find(const uint64_t *key, uint32_t start, uint32_t n, uint64_t v)
{
	for (size_t i = start; i < n; i++)
		if (key[i] == v)
			return (int)i;
	for (size_t i = 0; i < start; i++)
		if (key[i] == v)
			return (int)i;
	return -1;
}

static __attribute__((noinline, cold)) void
tree_build(struct tlb_min_tree *t, const struct tlb_load_view *lv,
	   const uint64_t *key, uint32_t n)
{
	uint32_t size = 1;

	while (size < n)
		size <<= 1;
	t->lv_id = lv->id;
	t->key = key;
	t->n = n;
	t->size = size;
	t->gen = lv->keys_gen;
	memcpy(&t->node[size], key, n * sizeof(*key));
	for (size_t i = n; i < size; i++)
		t->node[size + i] = UINT64_MAX;
	for (size_t j = size - 1; j >= 1; j--)
		t->node[j] = min2(t->node[2 * j], t->node[2 * j + 1]);
}

static inline void
tree_update(struct tlb_min_tree *t, uint32_t i)
{
	size_t j = t->size + i;
	uint64_t v = t->key[i];

	if (t->node[j] == v)
		return;
	t->node[j] = v;
	/* Up to the root, or to the first node whose minimum stays. */
	for (j >>= 1; j >= 1; j >>= 1) {
		v = min2(t->node[2 * j], t->node[2 * j + 1]);
		if (t->node[j] == v)
			break;
		t->node[j] = v;
	}
}

static inline uint64_t
tree_min(struct tlb_min_tree *t, const struct tlb_load_view *lv,
	 const uint64_t *key, uint32_t n)
{
	uint64_t gen = lv->keys_gen;

	/* key points into lv: the same keys are the same view and metric */
	if (__builtin_expect(t->key != key || t->lv_id != lv->id ||
			     t->n != n ||
			     gen - t->gen > TLB_LV_LOG, 0)) {
		tree_build(t, lv, key, n);
	} else {
		for (uint64_t g = t->gen; g != gen; g++) {
			uint32_t i = lv->keys_log[g % TLB_LV_LOG];

			if (i < n)
				tree_update(t, i);
		}
		t->gen = gen;
	}
	return t->node[1];
}

/* The first leaf at or after start holding v, or -1: up from the leaf
 * until a subtree to the right holds v, then down its leftmost such path. */
static int
tree_find_from(const struct tlb_min_tree *t, uint32_t start, uint64_t v)
{
	size_t j = t->size + start;

	while (t->node[j] != v) {
		/* the next subtree to the right, at the lowest level */
		while (j & 1) {
			j >>= 1;
			if (j == 0)
				return -1;
		}
		j++;
	}
	while (j < t->size)
		j = t->node[2 * j] == v ? 2 * j : 2 * j + 1;
	return (int)(j - t->size);
}

static inline int
tree_find(const struct tlb_min_tree *t, const uint64_t *key, uint32_t start,
	  uint32_t n, uint64_t v)
{
	int i;

	for (uint32_t j = 0, k = start; j < FIND_NEAR; j++) {
		if (key[k] == v)
			return (int)k;
		k = k + 1 == n ? 0 : k + 1;
	}
	i = tree_find_from(t, start, v);
	return i >= 0 ? i : tree_find_from(t, 0, v);
}

/* Everything else: one pass over the cores' own lines, in the rotated
 * order. Kept out of line so that the common case stays small. */
static __attribute__((noinline)) int
argmin_scan(const struct tlb_load_view *lv, uint32_t n, uint32_t start,
	    enum tlb_metric metric, uint64_t limit, bool prefer_running,
	    bool *any_eligible)
{
	uint64_t best = UINT64_MAX;
	bool best_running = false;
	bool eligible_seen = false;
	int best_i = -1;

	for (uint32_t j = 0, i = start; j < n; j++, i = i + 1 == n ? 0 : i + 1) {
		if (!tlb_lv_eligible(lv, i))
			continue;
		eligible_seen = true;

		uint64_t req = tlb_lv_outstanding(lv, i);
		uint64_t v = metric == TLB_METRIC_WORK ?
				     tlb_lv_outstanding_work(lv, i) : req;
		bool running = lv->core[i].running;

		if (req >= limit)
			continue;
		if (v < best ||
		    (prefer_running && v == best && running && !best_running)) {
			best = v;
			best_running = running;
			best_i = (int)i;
		}
	}
	*any_eligible = eligible_seen;
	return best_i;
}

int
tlb_policy_argmin(struct tlb_policy *p, const struct tlb_load_view *lv,
		  enum tlb_metric metric, uint64_t limit, bool *any_eligible)
{
	uint32_t n = p->n_cores < lv->n_cores ? p->n_cores : lv->n_cores;
	uint32_t start = p->cursor;
	const uint64_t *key;
	uint64_t best;
	int best_i = -1;

	if (n == 0) {
		*any_eligible = false;
		return -1;
	}
	/* Rotating the scan's start makes ties go round the cores instead of
	 * always to the lowest index. */
	p->cursor = start + 1 >= n ? 0 : start + 1;
	if (start >= n)
		start = 0;
	if (p->params.prefer_running ||
	    (metric != TLB_METRIC_REQUESTS && limit != UINT64_MAX))
		return argmin_scan(lv, n, start, metric, limit,
				   p->params.prefer_running, any_eligible);
	key = metric == TLB_METRIC_WORK ? lv->key_work : lv->key_req;
	if (n <= TREE_MIN_CORES) {
		best = scan_min(key, n);
		if (best != UINT64_MAX)
			best_i = scan_find(key, start, n, best);
	} else {
		best = tree_min(&p->tree, lv, key, n);
		if (best != UINT64_MAX)
			best_i = tree_find(&p->tree, key, start, n, best);
	}
	/* Only ineligible cores are UINT64_MAX. */
	*any_eligible = best_i >= 0;
	/* The bound is on the metric: if the least loaded core is at it,
	 * every core is. */
	return best < limit ? best_i : -1;
}

/* Microsoft's RSS verification key, the default of most NIC drivers. */
const uint8_t tlb_rss_default_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

uint32_t
tlb_toeplitz_hash(const uint8_t key[40], const uint8_t *data, size_t len)
{
	/* window holds the 32 key bits that line up with the current input
	 * bit; it slides one key bit per input bit. */
	uint32_t window = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
			  (uint32_t)key[2] << 8 | key[3];
	uint32_t hash = 0;

	if (len > 36)
		len = 36; /* the key covers 36 input bytes (IPv6 4-tuple) */
	for (size_t i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (int b = 7; b >= 0; b--) {
			if (data[i] & (1u << b))
				hash ^= window;
			window = window << 1 | ((next >> b) & 1u);
		}
	}
	return hash;
}
