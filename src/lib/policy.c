/* SPDX-License-Identifier: BSD-3-Clause
 * The policy table and what policies share: their parameters (each
 * described by its policy's table), init, spec parsing, the work estimate,
 * the argmin scan over the load view, the Toeplitz hash.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/string.h>

#include "turbolb/policy.h"
#include "policy_impl.h"

const struct tlb_policy_ops *const tlb_policies[] = {
	&tlb_policy_rss, &tlb_policy_rr,  &tlb_policy_random, &tlb_policy_pod,
	&tlb_policy_jsq, &tlb_policy_jlq, &tlb_policy_jbsq,   NULL,
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

/* Read by tlb_argmin(), so by every policy that uses it. */
const struct tlb_policy_param tlb_param_prefer_running = TLB_POLICY_PARAM_BOOL(
	"prefer_running", prefer_running, false,
	"`jsq`/`jlq`/`jbsq`: among the least loaded cores, pick one whose "
	"thread runs");

bool
tlb_policy_reads(const struct tlb_policy_ops *ops,
		 const struct tlb_policy_param *param)
{
	for (const struct tlb_policy_param *const *q = ops->params;
	     q != NULL && *q != NULL; q++)
		if (*q == param)
			return true;
	return false;
}

size_t
tlb_policy_params_all(const struct tlb_policy_param **out, size_t max)
{
	size_t n = 0;

	/* Ordered by field: the smallest offset past the last one taken.
	 * A parameter that several policies read is one descriptor. */
	for (size_t last = 0, first = 1;; first = 0) {
		const struct tlb_policy_param *next = NULL;

		for (unsigned int i = 0; tlb_policies[i] != NULL; i++)
			for (const struct tlb_policy_param *const *q =
				     tlb_policies[i]->params;
			     q != NULL && *q != NULL; q++)
				if ((first || (*q)->off > last) &&
				    (next == NULL || (*q)->off < next->off))
					next = *q;
		if (next == NULL)
			return n;
		if (n < max)
			out[n] = next;
		n++;
		last = next->off;
	}
}

const struct tlb_policy_param *
tlb_policy_param_find(const char *name)
{
	const struct tlb_policy_param *all[TLB_POLICY_PARAMS_MAX];
	size_t n = tlb_policy_params_all(all, TLB_POLICY_PARAMS_MAX);

	for (size_t i = 0; i < n && i < TLB_POLICY_PARAMS_MAX; i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}

uint64_t
tlb_policy_param_get(const struct tlb_policy_param *param,
		     const struct tlb_policy_params *params)
{
	const char *f = (const char *)params + param->off;
	uint32_t u32;
	uint16_t u16;
	uint64_t v;
	bool b;

	if (param->type == TLB_PARAM_BOOL) {
		memcpy(&b, f, sizeof(b));
		return b;
	}
	switch (param->size) {
	case 2:
		memcpy(&u16, f, 2);
		return u16;
	case 4:
		memcpy(&u32, f, 4);
		return u32;
	case 8:
		memcpy(&v, f, 8);
		return v;
	default:
		return (uint8_t)*f;
	}
}

void
tlb_policy_param_set(const struct tlb_policy_param *param,
		     struct tlb_policy_params *params, uint64_t v)
{
	char *f = (char *)params + param->off;
	uint32_t u32 = (uint32_t)v;
	uint16_t u16 = (uint16_t)v;
	bool b = v != 0;

	if (param->type == TLB_PARAM_BOOL) {
		memcpy(f, &b, sizeof(b));
		return;
	}
	switch (param->size) {
	case 2:
		memcpy(f, &u16, 2);
		break;
	case 4:
		memcpy(f, &u32, 4);
		break;
	case 8:
		memcpy(f, &v, 8);
		break;
	default:
		*f = (char)(uint8_t)v;
		break;
	}
}

void
tlb_policy_params_default(struct tlb_policy_params *params)
{
	const struct tlb_policy_param *all[TLB_POLICY_PARAMS_MAX];
	size_t n = tlb_policy_params_all(all, TLB_POLICY_PARAMS_MAX);

	memset(params, 0, sizeof(*params));
	for (size_t i = 0; i < n && i < TLB_POLICY_PARAMS_MAX; i++)
		tlb_policy_param_set(all[i], params, all[i]->def);
}

void
tlb_policy_params_format(const struct tlb_policy_params *params,
			 const char *sep, char *buf, size_t len)
{
	const struct tlb_policy_param *all[TLB_POLICY_PARAMS_MAX];
	size_t n = tlb_policy_params_all(all, TLB_POLICY_PARAMS_MAX);
	size_t at = 0;

	if (len > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < n && i < TLB_POLICY_PARAMS_MAX && at < len;
	     i++) {
		uint64_t v = tlb_policy_param_get(all[i], params);
		int w;

		if (all[i]->type == TLB_PARAM_BOOL)
			w = snprintf(buf + at, len - at, "%s%s=%s",
				     i ? sep : "", all[i]->name,
				     v ? "true" : "false");
		else
			w = snprintf(buf + at, len - at, "%s%s=%" PRIu64,
				     i ? sep : "", all[i]->name, v);
		if (w < 0)
			return;
		at += (size_t)w;
	}
}

int
tlb_policy_check_params(const struct tlb_policy_ops *ops,
			const struct tlb_policy_params *params, char *err,
			size_t errlen)
{
	for (const struct tlb_policy_param *const *q = ops->params;
	     q != NULL && *q != NULL; q++) {
		uint64_t v = tlb_policy_param_get(*q, params);

		if ((*q)->type == TLB_PARAM_UINT &&
		    (v < (*q)->min || v > (*q)->max)) {
			snprintf(err, errlen,
				 "%s: %s=%" PRIu64 " (must be %" PRIu64
				 "..%" PRIu64 ")",
				 ops->name, (*q)->name, v, (*q)->min,
				 (*q)->max);
			return -1;
		}
	}
	if (ops->check != NULL)
		return ops->check(params, err, errlen);
	return 0;
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

	const struct tlb_policy_param *param = ops->spec_param;
	size_t bytes = param != NULL ? param->size : sizeof(uint32_t);
	const char *arg = colon + 1;
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	/* The range is the policy's to check (tlb_policy_init()); here only
	 * what the field can hold. */
	if (*arg < '0' || *arg > '9' || *end != '\0' || errno != 0 ||
	    (bytes < 8 && v >> (8 * bytes) != 0)) {
		snprintf(err, errlen, "policy '%s': bad parameter '%s'", name,
			 arg);
		return -1;
	}
	if (param == NULL || param->type != TLB_PARAM_UINT) {
		snprintf(err, errlen, "policy '%s' takes no parameter", name);
		return -1;
	}
	tlb_policy_param_set(param, params, v);
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
	if (tlb_policy_check_params(ops, params, err, errlen) != 0)
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

/* Everything else: one pass over the cores' own lines, in the rotated
 * order, over the cores both the policy and the view have. Out of line,
 * so that the common case stays small. */
int
tlb_argmin_slow(struct tlb_policy *p, const struct tlb_load_view *lv,
		enum tlb_metric metric, uint64_t limit)
{
	uint32_t n = p->n_cores < lv->n_cores ? p->n_cores : lv->n_cores;
	uint32_t start = p->cursor;
	bool prefer_running = p->params.prefer_running;
	uint64_t best = UINT64_MAX;
	bool best_running = false;
	bool eligible_seen = false;
	int best_i = -1;

	if (n == 0)
		return TLB_PICK_NONE;
	p->cursor = start + 1 >= n ? 0 : start + 1;
	if (start >= n)
		start = 0;
	for (uint32_t j = 0, i = start; j < n;
	     j++, i = i + 1 == n ? 0 : i + 1) {
		if (!tlb_lv_eligible(lv, i))
			continue;
		eligible_seen = true;

		uint64_t req = tlb_lv_outstanding(lv, i);
		uint64_t v = metric == TLB_METRIC_WORK
				     ? tlb_lv_outstanding_work(lv, i)
				     : req;
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
	if (best_i >= 0)
		return best_i;
	return eligible_seen ? TLB_PICK_HOLD : TLB_PICK_NONE;
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
