/* SPDX-License-Identifier: BSD-3-Clause
 * Dispatch policies behind one small interface. One file per policy
 * (src/lib/policy_<name>.c) holds its pick, its private state and the
 * table of its parameters; adding one: docs/architecture.md, "Adding a
 * policy".
 */
#ifndef TURBOLB_POLICY_H
#define TURBOLB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "turbolb/load_view.h"
#include "turbolb/proto.h"
#include "turbolb/rng.h"

#define TLB_POLICY_NAME_MAX 16
#define TLB_MAX_CLASSES     16u /* service classes with their own average */
/* Room for the largest policy state (rss's hash tables); each policy file
 * asserts that its state fits. */
#define TLB_POLICY_STATE_SIZE 4864u
/* Most parameters all policies together have (tlb_policy_params_all()) */
#define TLB_POLICY_PARAMS_MAX 16u

/* pick() results that are not a core index. */
#define TLB_PICK_HOLD (-1) /* keep the request in the NIC-side FIFO */
#define TLB_PICK_NONE (-2) /* no eligible core */

/* The values of every policy's parameters. Each field is described once,
 * by a struct tlb_policy_param in the file of the policy that reads it
 * (shared ones in src/lib/policy_impl.h); everything that parses, prints,
 * checks or defaults a parameter walks those descriptions. */
struct tlb_policy_params {
	uint32_t d;          /* pod */
	uint32_t k;          /* jbsq */
	uint64_t seed;       /* random, pod */
	bool prefer_running; /* jsq, jlq, jbsq */
};

enum tlb_policy_param_type {
	TLB_PARAM_UINT, /* unsigned integer field of .size bytes */
	TLB_PARAM_BOOL,
};

/* One parameter: its field in struct tlb_policy_params, its type, range
 * (UINT: min..max, inclusive) and default, and one line of text for the
 * docs and --help. The configuration accepts it as policy.<name>. */
struct tlb_policy_param {
	const char *name;
	enum tlb_policy_param_type type;
	size_t off;  /* offsetof(struct tlb_policy_params, field) */
	size_t size; /* sizeof the field */
	uint64_t min, max;
	uint64_t def;
	const char *text;
};

#define TLB_POLICY_PARAM_UINT(name_, field, lo, hi, def_, text_)               \
	{                                                                      \
		.name = name_, .type = TLB_PARAM_UINT,                         \
		.off = offsetof(struct tlb_policy_params, field),              \
		.size = sizeof(((struct tlb_policy_params *)0)->field),        \
		.min = lo, .max = hi, .def = def_, .text = text_               \
	}
#define TLB_POLICY_PARAM_BOOL(name_, field, def_, text_)                       \
	{                                                                      \
		.name = name_, .type = TLB_PARAM_BOOL,                         \
		.off = offsetof(struct tlb_policy_params, field),              \
		.size = sizeof(bool), .min = 0, .max = 1, .def = def_,         \
		.text = text_                                                  \
	}

/* What a policy may look at for one request. */
struct tlb_request_info {
	const struct tlb_flow_key *key; /* rss hashes it (uses_flow_key) */
	uint32_t svc_hint_ns;           /* 0: no hint */
	uint16_t svc_class;
};

struct tlb_policy;

struct tlb_policy_ops {
	const char *name;
	const char *summary; /* one line for --help and docs */
	/* pick() reads req->key; without it the dispatcher may leave the
	 * key NULL (its request fast path does not fill one in) */
	bool uses_flow_key;
	/* The parameters pick() reads, NULL-terminated; NULL: none. Their
	 * ranges are checked by tlb_policy_init(). */
	const struct tlb_policy_param *const *params;
	/* The one of params that "NAME:VALUE" sets (an unsigned integer),
	 * or NULL: the policy takes no value in its spec. */
	const struct tlb_policy_param *spec_param;
	/* Optional: checks across parameters, past their ranges; returns 0
	 * or -1 and fills err. */
	int (*check)(const struct tlb_policy_params *params, char *err,
		     size_t errlen);
	/* Optional: set up per-policy state after the generic init. */
	void (*init)(struct tlb_policy *p);
	/* Returns a core index, TLB_PICK_HOLD or TLB_PICK_NONE. */
	int (*pick)(struct tlb_policy *p, const struct tlb_load_view *lv,
		    const struct tlb_request_info *req);
	/* Optional: pick(), and on a core, its charge, as
	 * tlb_policy_dispatch() would make them with pick() (the same pick,
	 * the same view after it). For a policy that keeps something of the
	 * view from one pick to the next: jlq keeps its order of the cores
	 * exact through its own dispatches. */
	int (*dispatch)(struct tlb_policy *p, struct tlb_load_view *lv,
			const struct tlb_request_info *req, uint32_t work_ns);
};

/* A policy instance. Owned by one dispatcher; not thread-safe. */
struct tlb_policy {
	const struct tlb_policy_ops *ops;
	struct tlb_policy_params params;
	uint32_t n_cores;
	/* Outstanding requests at which a core is given no more until it
	 * answers (jbsq: k), 0: none. The dispatcher sends a core's buffer
	 * at once when a request brings it there: holding it would only
	 * idle the core. */
	uint32_t bound;
	uint32_t cursor; /* rr position, tie-break rotation */
	struct tlb_rng rng;
	/* jlq: per-class running average of observed service time (ns),
	 * used as the work estimate when a request carries no hint */
	uint64_t class_avg_ns[TLB_MAX_CLASSES];
	uint32_t default_work_ns; /* estimate before any observation */
	/* The policy's own state, zeroed before its init(): only its file
	 * reads it, as its own struct (TLB_POLICY_STATE() in
	 * src/lib/policy_impl.h). In place, not behind a pointer: a pick
	 * reaches it at a constant offset from p. */
	unsigned char state[TLB_POLICY_STATE_SIZE] __attribute__((aligned(64)));
};

/* Table of policies; NULL-terminated. */
extern const struct tlb_policy_ops *const tlb_policies[];

const struct tlb_policy_ops *tlb_policy_find(const char *name);

/* Parses "NAME" or "NAME:VALUE" into name and params: VALUE sets the
 * policy's spec_param (pod:D, jbsq:K), the other params stay as they are.
 * Returns 0 or -1 with err filled. */
int tlb_policy_parse_spec(const char *spec, char name[TLB_POLICY_NAME_MAX],
			  struct tlb_policy_params *params, char *err,
			  size_t errlen);

/* Every parameter at its default (struct tlb_policy_param.def). */
void tlb_policy_params_default(struct tlb_policy_params *params);

/* Every parameter of every policy, each once, in the order of their fields
 * in struct tlb_policy_params: up to max of them into out. Returns how
 * many there are. */
size_t tlb_policy_params_all(const struct tlb_policy_param **out, size_t max);

/* The parameter called name, of any policy, or NULL. */
const struct tlb_policy_param *tlb_policy_param_find(const char *name);

/* The value of one parameter in params (a bool as 0 or 1). */
uint64_t tlb_policy_param_get(const struct tlb_policy_param *param,
			      const struct tlb_policy_params *params);
void tlb_policy_param_set(const struct tlb_policy_param *param,
			  struct tlb_policy_params *params, uint64_t v);

/* Whether the policy ops reads param. */
bool tlb_policy_reads(const struct tlb_policy_ops *ops,
		      const struct tlb_policy_param *param);

/* "NAME=VALUE" for each parameter of tlb_policy_params_all(), separated
 * by sep, bools as true/false: "d=2 k=2 seed=1 prefer_running=false". */
void tlb_policy_params_format(const struct tlb_policy_params *params,
			      const char *sep, char *buf, size_t len);

/* Checks the parameters ops reads against their ranges, then ops->check.
 * Returns 0, or -1 with err filled. */
int tlb_policy_check_params(const struct tlb_policy_ops *ops,
			    const struct tlb_policy_params *params, char *err,
			    size_t errlen);

/* Sets up p for n_cores. Returns 0, or -1 with err filled (unknown name,
 * bad parameter, n_cores out of range). */
int tlb_policy_init(struct tlb_policy *p, const char *name,
		    const struct tlb_policy_params *params, uint32_t n_cores,
		    char *err, size_t errlen);

static inline int
tlb_policy_pick(struct tlb_policy *p, const struct tlb_load_view *lv,
		const struct tlb_request_info *req)
{
	return p->ops->pick(p, lv, req);
}

/* The pick, charged to its core with work_ns (tlb_lv_on_dispatch()) when
 * it is one: what a dispatcher does with every new request. Returns what
 * tlb_policy_pick() would. */
static inline int
tlb_policy_dispatch(struct tlb_policy *p, struct tlb_load_view *lv,
		    const struct tlb_request_info *req, uint32_t work_ns)
{
	const struct tlb_policy_ops *ops = p->ops;
	int core;

	if (ops->dispatch != NULL)
		return ops->dispatch(p, lv, req, work_ns);
	core = ops->pick(p, lv, req);
	if (core >= 0)
		tlb_lv_on_dispatch(lv, (uint32_t)core, work_ns);
	return core;
}

/* The work charged to a request: its hint when it has one, else the
 * running average of its class. Same answer for every policy, so that
 * switching policy never changes how outstanding work is counted. */
static inline uint32_t
tlb_policy_work_estimate(const struct tlb_policy *p,
			 const struct tlb_request_info *req)
{
	if (req->svc_hint_ns)
		return req->svc_hint_ns;
	uint64_t avg = p->class_avg_ns[req->svc_class % TLB_MAX_CLASSES];
	return avg ? (uint32_t)avg : p->default_work_ns;
}

/* Feeds an observed service time into the class's running average
 * (EWMA with weight 1/8). */
void tlb_policy_observe(struct tlb_policy *p, uint16_t svc_class,
			uint32_t service_ns);

/* Shared helpers for policy files. */

/* Toeplitz hash (as NICs compute RSS) of data with a 40-byte key. */
uint32_t tlb_toeplitz_hash(const uint8_t key[40], const uint8_t *data,
			   size_t len);

/* Toeplitz hash of a flow as NIC RSS computes it: source address,
 * destination address, source port, destination port. */
uint32_t tlb_rss_hash_flow(const uint8_t key[40], const struct tlb_flow_key *k);

/* The standard 40-byte RSS key (Microsoft's verification key). */
extern const uint8_t tlb_rss_default_key[40];

#endif /* TURBOLB_POLICY_H */
