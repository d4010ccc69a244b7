/* SPDX-License-Identifier: BSD-3-Clause
 * The RPC request frames the datapath tests and turbolb-bench build:
 * their addresses and header, for tlb_build_frame() (proto.h). No DPDK.
 * A test that needs another shape changes the fields it is about.
 */
#ifndef TURBOLB_TEST_FRAMES_H
#define TURBOLB_TEST_FRAMES_H

#include <stdint.h>
#include <string.h>

#include "turbolb/proto.h"

/* A client's request over IPv4/UDP without VLAN: MAC 02:00:00:00:00:01
 * to 02:00:00:00:00:02, src_ip:sport to dst_ip:dport (ports in host byte
 * order). */
static inline struct tlb_frame_addrs
frame_addrs_v4(const uint8_t src_ip[4], const uint8_t dst_ip[4], uint16_t sport,
	       uint16_t dport)
{
	struct tlb_frame_addrs a;

	memset(&a, 0, sizeof(a));
	memcpy(a.src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(a.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	a.key.ip_version = 4;
	a.key.proto = 17;
	memcpy(a.key.src_addr, src_ip, 4);
	memcpy(a.key.dst_addr, dst_ip, 4);
	a.key.src_port = sport;
	a.key.dst_port = dport;
	return a;
}

/* The header of request id, one packet, every other field zero; a
 * non-zero hint_ns is sent as its service-time hint (TLB_RPC_F_HINT). */
static inline struct tlb_rpc_hdr
frame_request_hdr(uint64_t id, uint32_t hint_ns)
{
	struct tlb_rpc_hdr h;

	memset(&h, 0, sizeof(h));
	h.magic = TLB_RPC_MAGIC;
	h.version = TLB_RPC_VERSION;
	h.type = TLB_MSG_REQUEST;
	h.req_id = id;
	h.pkt_cnt = 1;
	if (hint_ns != 0) {
		h.flags = TLB_RPC_F_HINT;
		h.svc_hint_ns = hint_ns;
	}
	return h;
}

#endif
