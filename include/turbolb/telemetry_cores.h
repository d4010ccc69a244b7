/* SPDX-License-Identifier: BSD-3-Clause
 * /turbolb/cores in pages: the fields of one host core's entry and which
 * cores one answer lists. No DPDK: the daemon hands the fields to DPDK
 * telemetry (src/daemon/telemetry.c); the unit tests measure them.
 *
 * Why pages: DPDK 22.11 builds a telemetry answer in a 16 KiB buffer
 * (MAX_OUTPUT_LEN in lib/telemetry/telemetry.c) and silently leaves out
 * every entry past the one that does not fit, so a single answer for
 * every core lost cores from about 67 on (an entry with its host fields
 * is about 240 bytes with small counters). One answer now lists at most
 * TLB_TEL_CORES_PAGE_MAX cores, and the key "next" says where the rest
 * begins (docs/architecture.md, "Telemetry").
 *
 * The bound: one entry at its longest, every number at the most digits
 * its type can print, is under 500 bytes (tests/unit/test_telemetry_cores.c
 * measures it in DPDK's own format), so a full page with its envelope
 * stays under TLB_TEL_ANSWER_BUDGET, three quarters of the 16 KiB. The
 * rest is margin: for fields added to an entry later (the unit test fails
 * once a page could pass the budget) and for a DPDK that prints more.
 */
#ifndef TURBOLB_TELEMETRY_CORES_H
#define TURBOLB_TELEMETRY_CORES_H

#include <stdbool.h>
#include <stdint.h>

#include "turbolb/load_view.h"
#include "turbolb/transport.h"

/* DPDK 22.11's telemetry answer size (the hello's max_output_len). */
#define TLB_TEL_ANSWER_MAX 16384u
/* What one /turbolb/cores answer may take at worst: see above. */
#define TLB_TEL_ANSWER_BUDGET 12288u
/* Cores in one answer at most: the page size when COUNT is left out. */
#define TLB_TEL_CORES_PAGE_MAX 16u

/* One host core's entry, as read from the load view and the transport. */
struct tlb_tel_core {
	uint32_t id;         /* host core id: the entry's key */
	uint32_t dispatcher; /* the dispatcher that owns the core */
	uint64_t sent;
	uint64_t completed;
	uint64_t outstanding;
	uint64_t outstanding_work_ns;
	const char *state; /* tlb_tel_core_state() */
	uint8_t stale;
	uint8_t running;
	uint64_t stale_events;
	uint64_t written_off;    /* requests written off at this core */
	uint8_t credit_fallback; /* its ring broken: in-band credits */
	bool has_host;           /* a host transport: host is filled */
	struct tlb_transport_core_info host;
};

/* Receives an entry's fields in order; the daemon adds each to a DPDK
 * telemetry dict, the unit test counts the JSON it makes. */
struct tlb_tel_sink {
	void (*u64)(void *arg, const char *name, uint64_t v);
	void (*str)(void *arg, const char *name, const char *s);
	void *arg;
};

/* "offline", "stale", "probing", "running" or "online", in that
 * precedence. */
const char *tlb_tel_core_state(const struct tlb_core_load *c);

/* Hands c's fields to s, in the order /turbolb/cores lists them. */
void tlb_tel_core_fields(const struct tlb_tel_core *c,
			 const struct tlb_tel_sink *s);

/* Parses the parameters of /turbolb/cores[,FIRST[,COUNT]]: DPDK passes
 * the text after the first comma, or NULL when there is none. FIRST (a
 * host core id) defaults to 0; COUNT defaults to TLB_TEL_CORES_PAGE_MAX,
 * and a larger one is cut to it. Returns 0, or -1 for anything but one
 * or two decimal numbers that fit in 32 bits, or a COUNT of 0. */
int tlb_tel_cores_params(const char *params, uint32_t *first, uint32_t *count);

/* One answer: positions into the caller's list of ids, in id order. */
struct tlb_tel_page {
	uint32_t n; /* cores listed */
	uint32_t pos[TLB_TEL_CORES_PAGE_MAX];
	bool more;     /* cores past the page */
	uint32_t next; /* the lowest such id */
};

/* Picks from ids[0..n_ids) (every host core's id once, in any order) the
 * cores with first <= id < first + count, count at most
 * TLB_TEL_CORES_PAGE_MAX, and the lowest id at or past first + count as
 * next. Asking from FIRST 0 and then from each answer's next therefore
 * lists every core exactly once, in id order, whatever the ids. */
void tlb_tel_cores_page(const uint32_t *ids, uint32_t n_ids, uint32_t first,
			uint32_t count, struct tlb_tel_page *p);

#endif /* TURBOLB_TELEMETRY_CORES_H */
