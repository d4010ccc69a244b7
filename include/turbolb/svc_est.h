/* SPDX-License-Identifier: BSD-3-Clause
 * Service times seen at the NIC, for protocols whose responses carry none
 * (dns, memcached, udp): the spacing of a busy core's completions. A
 * single-threaded server that still has requests queued when it finishes
 * one starts the next at once, so the time from that completion to the
 * next one is the next request's service time. When a completion leaves
 * the core idle, the next request arrives at some later time and the next
 * spacing says nothing: no sample. A poll that finds k completions of one
 * core at once gives the first the whole spacing and the others 0: their
 * mean is still the mean service time, which is what the class's running
 * average (tlb_policy_observe(), weight 1/8) follows. No DPDK.
 */
#ifndef TURBOLB_SVC_EST_H
#define TURBOLB_SVC_EST_H

#include <stdbool.h>
#include <stdint.h>

/* A completion at now_ns at a core that keeps outstanding_after requests
 * after it. *busy_since_ns is that core's state, 0 at first. Returns true
 * with *sample_ns the service time this completion shows, or false when
 * it shows none. */
static inline bool
tlb_spacing_sample(uint64_t *busy_since_ns, uint64_t now_ns,
		   uint64_t outstanding_after, uint32_t *sample_ns)
{
	bool have = *busy_since_ns != 0;

	if (have) {
		uint64_t d =
			now_ns > *busy_since_ns ? now_ns - *busy_since_ns : 0;

		*sample_ns = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
	}
	/* a clock at 0 must not read as "idle": 1 ns off then */
	if (outstanding_after == 0)
		*busy_since_ns = 0;
	else
		*busy_since_ns = now_ns != 0 ? now_ns : 1;
	return have;
}

#endif /* TURBOLB_SVC_EST_H */
