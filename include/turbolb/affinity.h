/* SPDX-License-Identifier: BSD-3-Clause
 * Message affinity: the packets of a message that spans several packets
 * go to the core its first packet went to. A bounded, set-associative
 * table keyed by (client address, client port, request id); an entry lives
 * until all of its message's packets have been seen, until it times out,
 * or until its set is full and it is the one closest to expiry: the table
 * never grows and never blocks. One writer.
 *
 * A message that leaves the table before its last packet (timed out,
 * pushed out) is incomplete: its server never gets it whole and never
 * answers, so what it charged its core is handed back to the caller,
 * which returns it to the load view. A message whose core left rotation
 * is marked dead: its remaining packets are dropped, never charged to a
 * second core.
 */
#ifndef TURBOLB_AFFINITY_H
#define TURBOLB_AFFINITY_H

#include <stdbool.h>
#include <stdint.h>

#include "turbolb/proto.h"

struct tlb_aff_key {
	uint8_t addr[16];
	uint64_t req_id;
	uint16_t port;
	uint8_t ip_version;
};

struct tlb_affinity;

struct tlb_aff_stats {
	uint64_t inserted;
	uint64_t hits;
	uint64_t completed; /* entries removed after their last packet */
	uint64_t expired;   /* incomplete: timed out (swept) */
	uint64_t evicted;   /* incomplete: pushed out by a full set */
	uint64_t killed;    /* marked dead: their core left rotation */
};

/* What a message charged: the core, the work, and the core's generation
 * then (tlb_core_load.gen: a charge made before a write-off or a reset of
 * the core is no longer in the view). */
struct tlb_aff_msg {
	uint32_t work_ns;
	uint32_t gen;
	uint16_t core;
};

/* tlb_aff_lookup() results that are not a core index. */
#define TLB_AFF_NONE (-1) /* not in the table: a new message */
#define TLB_AFF_DEAD (-2) /* its core left rotation: drop the packet */

/* entries: rounded up to a power of two, at least 16. NULL on ENOMEM. */
struct tlb_affinity *tlb_aff_create(uint32_t entries, uint64_t timeout_ns);
void tlb_aff_free(struct tlb_affinity *a);

/* Key of a parsed request: its client (source) address and port. */
void tlb_aff_key_of(struct tlb_aff_key *k, const struct tlb_parsed *p);

/* The core of k's message (and in *msg what it charged), TLB_AFF_DEAD or
 * TLB_AFF_NONE. A found entry counts one more packet seen and goes with
 * the message's last packet. An entry past its time still answers until
 * tlb_aff_sweep() takes it. */
int tlb_aff_lookup(struct tlb_affinity *a, const struct tlb_aff_key *k,
		   struct tlb_aff_msg *msg);

/* Remembers that k's message charged *msg and that `remaining` more of
 * its packets are to come. Returns true when that pushed an incomplete
 * message out of the table: what it charged is in *evicted. */
bool tlb_aff_insert(struct tlb_affinity *a, const struct tlb_aff_key *k,
		    const struct tlb_aff_msg *msg, uint16_t remaining,
		    uint64_t now_ns, struct tlb_aff_msg *evicted);

/* k's message lost its core: its remaining packets look up as
 * TLB_AFF_DEAD until it ends or times out. */
void tlb_aff_kill(struct tlb_affinity *a, const struct tlb_aff_key *k);

/* Looks at the next `budget` entries (round the table) and frees those
 * past their time; each incomplete message among them goes to out[], at
 * most max of them (the walk stops there). Returns how many. Called
 * periodically, so that every entry is looked at within about one
 * timeout. */
uint32_t tlb_aff_sweep(struct tlb_affinity *a, uint64_t now_ns, uint32_t budget,
		       struct tlb_aff_msg *out, uint32_t max);

const struct tlb_aff_stats *tlb_aff_stats(const struct tlb_affinity *a);
uint32_t tlb_aff_capacity(const struct tlb_affinity *a);

#endif /* TURBOLB_AFFINITY_H */
