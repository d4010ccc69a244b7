/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: feedback frames (feedback.h) as the daemon takes them
 * from a host core's queue, whose sender it does not trust. The input is
 * a sequence of frames, each prefixed by one byte: its length's low bits
 * and the queue (core 0..3) it arrives on. Checked, with a violation
 * aborting:
 *
 * - no crash, no read outside a frame, at any length;
 * - tlb_fb_parse accepts a frame only with the EtherType, magic and
 *   version, a known state and a host epoch that is not 0, and then the
 *   frame rebuilt from what it parsed parses to the same;
 * - the packet transport never credits more work than the completions
 *   can carry (u32 each), and the host epoch never goes back.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "turbolb/feedback.h"
#include "turbolb/transport.h"

#include "fuzz_check.h"

#define N_CORES 4u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tlb_transport *t;
	uint64_t epoch = 0;
	char err[128];
	size_t off = 0;

	if (tlb_transport_packet_create(N_CORES, &t, err, sizeof(err)) != 0)
		return 0;
	while (off < size) {
		uint8_t tag = data[off++];
		uint32_t core = tag & 3u;
		size_t len = (size_t)(tag >> 2) + 14u;
		uint8_t frame[TLB_FB_FRAME_LEN + 64];
		struct tlb_fb_msg m, m2;
		enum tlb_fb_err e;

		if (len > size - off)
			len = size - off;
		memcpy(frame, data + off, len);
		off += len;
		e = tlb_fb_parse(frame, len, &m);
		if (e == TLB_FB_OK) {
			uint8_t again[TLB_FB_FRAME_LEN];

			CHECK(len >= TLB_FB_FRAME_LEN);
			CHECK(m.state <= TLB_RUN_PARKED);
			CHECK(m.host_epoch != 0);
			CHECK(tlb_fb_build(again, sizeof(again), frame + 6,
					   &m) == TLB_FB_FRAME_LEN);
			CHECK(tlb_fb_parse(again, sizeof(again), &m2) ==
			      TLB_FB_OK);
			CHECK(m.core == m2.core && m.state == m2.state &&
			      m.host_epoch == m2.host_epoch &&
			      m.heartbeat == m2.heartbeat &&
			      m.completions == m2.completions &&
			      m.work_ns == m2.work_ns &&
			      m.service_ns == m2.service_ns);
		}
		(void)tlb_transport_feed(t, core, frame, len);
		CHECK(tlb_transport_host_epoch(t) >= epoch);
		epoch = tlb_transport_host_epoch(t);
		for (uint32_t c = 0; c < N_CORES; c++) {
			struct tlb_credit_sum s;

			if (tlb_transport_drain_sums(t, &c, 1, 32, &s) == 1) {
				CHECK(s.idx == 0);
				CHECK(s.records >= 1);
				CHECK(s.work_ns <=
				      s.completions * (uint64_t)UINT32_MAX);
			}
		}
	}
	tlb_transport_close(t);
	return 0;
}
