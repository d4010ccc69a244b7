/* SPDX-License-Identifier: BSD-3-Clause
 * Reader side of the per-lcore counters: sums one counter across blocks.
 */
#include "turbolb/stats.h"

uint64_t
tlb_counter_sum(const void *base, unsigned int n_blocks, size_t stride,
		unsigned int idx)
{
	const char *p = base;
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n_blocks; i++) {
		const uint64_t *blk =
			(const uint64_t *)(p + (size_t)i * stride);

		sum += tlb_counter_read(&blk[idx]);
	}
	return sum;
}
