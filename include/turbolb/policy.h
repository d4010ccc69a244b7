/* SPDX-License-Identifier: BSD-3-Clause
 * Dispatch policies behind one small interface. One file per policy
 * (src/lib/policy_<name>.c); adding a policy is that file plus one entry in
 * the table in src/lib/policy.c.
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
#define TLB_MAX_CLASSES 16u /* service classes with their own average */

/* pick() results that are not a core index. */
#define TLB_PICK_HOLD (-1) /* keep the request in the NIC-side FIFO */
#define TLB_PICK_NONE (-2) /* no eligible core */

struct tlb_policy_params {
	uint32_t d;          /* pod: choices sampled (>= 2) */
	uint32_t k;          /* jbsq: bound on outstanding per core (>= 1) */
	uint64_t seed;       /* random, pod, tie breaking */
	bool prefer_running; /* jsq/jlq/jbsq: among the best, a running core */
};

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
	/* Optional: extra parameter checks; returns 0 or -1 and fills err. */
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

/* jlq: the cores in order of outstanding work, kept from one pick to the
 * next (src/lib/order.h), the least loaded first and, among equal loads,
 * the core picked longest ago (before any pick: in rotation from the
 * cursor). A pick takes the first and puts it back where its key goes:
 * the key the dispatch gives it, or its own key for a pick not charged
 * (behind its equals). The order is exact for the view lv at key_gen ==
 * gen, and made again from the view whenever anything else wrote a key.
 *
 * Up to TLB_ORDER_CORES cores, a sorted list: key[j] is the view's work
 * key of core id[j], ascending; lanes from n_cores on hold TLB_KEY_NONE;
 * picked[i] is the stamp of core i's last pick. Over that, a tournament
 * tree: leaf i, at node[leaves + i], is core i's work key in the high 32
 * bits, then the stamp of its last pick (24 bits, renewed before
 * TLB_ORDER_STAMP_END), then i (8 bits); each node is the least of its
 * two children, so node[1] is the first core. */
#define TLB_ORDER_CORES 16u
#define TLB_ORDER_STAMP_END (1u << 24)

struct tlb_order {
	uint32_t key[TLB_ORDER_CORES] __attribute__((aligned(16)));
	uint8_t id[TLB_ORDER_CORES] __attribute__((aligned(16)));
	const struct tlb_load_view *lv; /* the view it was made from */
	uint64_t gen;      /* lv->key_gen for which it is exact */
	uint64_t stamp;    /* the next pick's */
	uint64_t picked[TLB_ORDER_CORES];
	uint32_t leaves;   /* tree: a power of 2 >= n_cores */
	uint32_t depth;    /* log2(leaves) */
	uint64_t node[2 * TLB_MAX_CORES];
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
	uint32_t cursor;     /* rr position, tie-break rotation */
	struct tlb_rng rng;
	/* jlq: per-class running average of observed service time (ns),
	 * used as the work estimate when a request carries no hint */
	uint64_t class_avg_ns[TLB_MAX_CLASSES];
	uint32_t default_work_ns; /* estimate before any observation */
	/* rss: indirection table over cores, and the hash key */
	uint8_t reta[128];
	uint8_t rss_key[40];
	/* rss: Toeplitz hash of rss_key by table, one entry per input nibble
	 * position and value (36 input bytes), instead of 8 steps per byte */
	uint32_t rss_tab[72][16];
	/* jlq */
	struct tlb_order order;
};

/* Table of policies; NULL-terminated. */
extern const struct tlb_policy_ops *const tlb_policies[];

const struct tlb_policy_ops *tlb_policy_find(const char *name);

/* Parses "NAME" or "NAME:PARAM" (pod:d, jbsq:k) into name and params,
 * leaving other params as they are. Returns 0 or -1 with err filled. */
int tlb_policy_parse_spec(const char *spec, char name[TLB_POLICY_NAME_MAX],
			  struct tlb_policy_params *params, char *err,
			  size_t errlen);

/* Default parameters: d=2, k=2, seed=1, prefer_running=false. */
void tlb_policy_params_default(struct tlb_policy_params *params);

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
