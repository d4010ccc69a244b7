/* SPDX-License-Identifier: BSD-3-Clause
 * Single-writer counters, OVS dpif-netdev style: each lcore owns its block
 * and updates it with a relaxed load and a relaxed store (no atomic
 * read-modify-write, no shared cache line). Readers sum the blocks of all
 * lcores with relaxed loads, so readers never write to data-plane memory.
 */
#ifndef TURBOLB_STATS_H
#define TURBOLB_STATS_H

#include <stddef.h>
#include <stdint.h>

static inline void
tlb_counter_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static inline uint64_t
tlb_counter_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Sums counter `idx` over n_blocks blocks of stride bytes starting at
 * base, each block an array of uint64_t counters. */
uint64_t tlb_counter_sum(const void *base, unsigned int n_blocks, size_t stride,
			 unsigned int idx);

#endif /* TURBOLB_STATS_H */
