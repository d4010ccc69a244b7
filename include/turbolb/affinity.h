/* SPDX-License-Identifier: BSD-3-Clause
 * Message affinity: the packets of a message that spans several packets
 * go to the core its first packet went to. A bounded, set-associative
 * table keyed by (client address, client port, request id); an entry lives
 * until all of its message's packets have been seen or until it times out.
 * When a set is full of live entries the one closest to expiry is evicted
 * (and counted): the table never grows and never blocks. One writer.
 */
#ifndef TURBOLB_AFFINITY_H
#define TURBOLB_AFFINITY_H

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
	uint64_t expired;   /* entries that timed out (reused) */
	uint64_t evicted;   /* live entries pushed out by a full set */
};

/* entries: rounded up to a power of two, at least 16. NULL on ENOMEM. */
struct tlb_affinity *tlb_aff_create(uint32_t entries, uint64_t timeout_ns);
void tlb_aff_free(struct tlb_affinity *a);

/* Key of a parsed request: its client (source) address and port. */
void tlb_aff_key_of(struct tlb_aff_key *k, const struct tlb_parsed *p);

/* The core of the message, or -1. A hit counts one more packet seen; the
 * entry goes when the message's last packet has been seen. */
int tlb_aff_lookup(struct tlb_affinity *a, const struct tlb_aff_key *k,
		   uint64_t now_ns);

/* Remembers that the message goes to core and that `remaining` more of
 * its packets are to come. */
void tlb_aff_insert(struct tlb_affinity *a, const struct tlb_aff_key *k,
		    uint16_t core, uint16_t remaining, uint64_t now_ns);

const struct tlb_aff_stats *tlb_aff_stats(const struct tlb_affinity *a);
uint32_t tlb_aff_capacity(const struct tlb_affinity *a);

#endif /* TURBOLB_AFFINITY_H */
