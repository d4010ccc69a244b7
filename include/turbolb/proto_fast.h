/* SPDX-License-Identifier: BSD-3-Clause
 * The frame nearly every request and response is, checked (and stamped)
 * at fixed offsets, inline: Ethernet without a VLAN tag, IPv4 without
 * options, not a fragment, UDP to (requests) or from (responses) one of
 * our ports, a single-packet RPC message. The dispatcher tries this first
 * and parses anything it refuses with tlb_parse_frame(), which then says
 * exactly what is wrong: refusing costs nothing but the general parse.
 * No DPDK here.
 *
 *   0       14            34      42                              90
 *   | Ether | IPv4 (IHL 5) | UDP   | RPC header (48)               | payload
 *                           ck@40           work_ns@70
 */
#ifndef TURBOLB_PROTO_FAST_H
#define TURBOLB_PROTO_FAST_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "turbolb/proto.h"

#define TLB_FAST_IP_OFF  14u
#define TLB_FAST_UDP_OFF 34u
#define TLB_FAST_RPC_OFF 42u
#define TLB_FAST_MIN_LEN (TLB_FAST_RPC_OFF + TLB_RPC_HDR_LEN)

/* What the request path needs of such a frame. */
struct tlb_req_fast {
	uint32_t svc_hint_ns; /* 0 unless TLB_RPC_F_HINT is set */
	uint16_t svc_class;
};

static inline uint16_t
tlb_fast_rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t
tlb_fast_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

/* What both directions check: the layout up to UDP, and lengths that hold
 * an RPC header. *udp_len: the datagram's length. */
static inline bool
tlb_fast_layout(const uint8_t *b, size_t len, size_t *udp_len)
{
	size_t tot_len;

	if (len < TLB_FAST_MIN_LEN ||
	    tlb_fast_rd32(b + 12) >> 8 != 0x080045u ||   /* IPv4, IHL 5 */
	    (tlb_fast_rd32(b + 20) & 0x3fff00ffu) != 17) /* MF, offset; UDP */
		return false;
	tot_len = tlb_fast_rd16(b + TLB_FAST_IP_OFF + 2);
	*udp_len = tlb_fast_rd16(b + TLB_FAST_UDP_OFF + 4);
	/* Unsigned differences, each bounding a length on both sides:
	 * 76 <= tot_len <= len - 14 and 56 <= udp_len <= tot_len - 20. */
	return tot_len - (20 + 8 + TLB_RPC_HDR_LEN) <= len - TLB_FAST_MIN_LEN &&
	       *udp_len - (8 + TLB_RPC_HDR_LEN) <=
		       tot_len - (20 + 8 + TLB_RPC_HDR_LEN);
}

static __attribute__((noinline, unused)) bool
tlb_fast_our_port_slow(const struct tlb_parse_opts *opts, uint16_t port)
{
	return tlb_is_native_port(opts, port);
}

/* tlb_is_native_port(), the first port (the usual daemon's only one)
 * compared first, the rest out of line. */
static inline __attribute__((always_inline)) bool
tlb_fast_our_port(const struct tlb_parse_opts *opts, uint16_t port)
{
	if (__builtin_expect(
		    port == opts->udp_ports[0] && opts->n_udp_ports != 0, 1))
		return true;
	return tlb_fast_our_port_slow(opts, port);
}

/* Magic, version and type: the header's first word. */
#define TLB_FAST_HEAD(type)                                                    \
	((uint32_t)TLB_RPC_MAGIC << 16 | TLB_RPC_VERSION << 8 | (type))

/* The RPC header of a single-packet message in that layout, or NULL: a
 * request to one of our turbolb ports, or (response) a response or error
 * from one of them to a port that is not ours, of any protocol (the
 * destination decides). */
static inline __attribute__((always_inline)) const uint8_t *
tlb_fast_rpc(const uint8_t *b, size_t len, const struct tlb_parse_opts *opts,
	     bool response)
{
	const uint8_t *r = b + TLB_FAST_RPC_OFF;
	size_t udp_len;
	uint16_t sport, dport;
	uint32_t head;

	if (!tlb_fast_layout(b, len, &udp_len))
		return NULL;
	sport = tlb_fast_rd16(b + TLB_FAST_UDP_OFF);
	dport = tlb_fast_rd16(b + TLB_FAST_UDP_OFF + 2);
	head = tlb_fast_rd32(r + TLB_RPC_OFF_MAGIC);
	if (response) {
		if (!tlb_fast_our_port(opts, sport) ||
		    tlb_is_rpc_port(opts, dport) ||
		    (head != TLB_FAST_HEAD(TLB_MSG_RESPONSE) &&
		     head != TLB_FAST_HEAD(TLB_MSG_ERROR)))
			return NULL;
	} else if (!tlb_fast_our_port(opts, dport) ||
		   head != TLB_FAST_HEAD(TLB_MSG_REQUEST)) {
		return NULL;
	}
	/* pkt_idx 0 and pkt_cnt 1 in one word; the payload inside the
	 * datagram */
	if (tlb_fast_rd32(r + TLB_RPC_OFF_PKT_IDX) != 1 ||
	    tlb_fast_rd16(r + TLB_RPC_OFF_PAYLOAD_LEN) >
		    udp_len - 8 - TLB_RPC_HDR_LEN)
		return NULL;
	return r;
}

/* True if buf[0, len) is such a frame; then tlb_parse_frame() would
 * return TLB_PARSE_OK with cls TLB_FRAME_REQUEST, no VLAN, IPv4, l4_off
 * TLB_FAST_UDP_OFF, rpc_off TLB_FAST_RPC_OFF and pkt_cnt 1, and out holds
 * the hint and the class it would have decoded. False says only that the
 * frame is not of this layout (tests/unit/test_proto.c checks both ways
 * against tlb_parse_frame()). */
static inline bool
tlb_parse_request_fast(const void *buf, size_t len,
		       const struct tlb_parse_opts *opts,
		       struct tlb_req_fast *out)
{
	const uint8_t *r = tlb_fast_rpc(buf, len, opts, false);

	if (r == NULL)
		return false;
	out->svc_class = tlb_fast_rd16(r + TLB_RPC_OFF_SVC_CLASS);
	out->svc_hint_ns = 0;
	if (tlb_fast_rd16(r + TLB_RPC_OFF_FLAGS) & TLB_RPC_F_HINT)
		out->svc_hint_ns = tlb_fast_rd32(r + TLB_RPC_OFF_SVC_HINT_NS);
	return true;
}

/* What the response path needs of a response in that layout. */
struct tlb_resp_fast {
	uint32_t work_ns;    /* the charge the dispatcher stamped, echoed */
	uint32_t service_ns; /* measured by the server; 0: none */
	uint16_t svc_class;
	uint16_t server_core; /* as the server says, or TLB_RPC_CORE_UNKNOWN */
};

/* The same for the response path: true if buf[0, len) is a
 * single-packet RPC response or error in the plain layout, from one of
 * our ports to a port that is not ours (a frame to one of our ports is a
 * request, whatever its source); then tlb_parse_frame() would return
 * TLB_PARSE_OK with cls TLB_FRAME_RESPONSE, no VLAN, IPv4, l4_off
 * TLB_FAST_UDP_OFF and pkt_cnt 1, and out holds what it would have
 * decoded. */
static inline bool
tlb_parse_response_fast(const void *buf, size_t len,
			const struct tlb_parse_opts *opts,
			struct tlb_resp_fast *out)
{
	const uint8_t *r = tlb_fast_rpc(buf, len, opts, true);

	if (r == NULL)
		return false;
	out->svc_class = tlb_fast_rd16(r + TLB_RPC_OFF_SVC_CLASS);
	out->work_ns = tlb_fast_rd32(r + TLB_RPC_OFF_WORK_NS);
	out->service_ns = tlb_fast_rd32(r + TLB_RPC_OFF_SERVICE_NS);
	out->server_core = tlb_fast_rd16(r + TLB_RPC_OFF_SERVER_CORE);
	return true;
}

/* Writes the 32-bit big-endian value v at w and patches the UDP checksum
 * at ck for it, RFC 1624 eqn. 3 for both 16-bit halves in one sum. The
 * ones' complement sum does not depend on byte order (RFC 1071 2.B), so
 * the words are summed as they lie in the frame. w must sit at an even
 * offset from the UDP header. A zero checksum (IPv4: none) stays zero
 * when zero_is_none. */
static inline void
tlb_csum_patch_be32(uint8_t *w, uint8_t *ck, uint32_t v, bool zero_is_none)
{
	uint32_t be = htobe32(v), o, sum;
	uint16_t c;

	memcpy(&o, w, sizeof(o));
	memcpy(w, &be, sizeof(be));
	memcpy(&c, ck, sizeof(c));
	if (c == 0 && zero_is_none)
		return;
	/* ~HC + ~m + m' in 32-bit ones' complement arithmetic (each carry
	 * out added back in), then folded: the sum of a 32-bit word is the
	 * sum of its 16-bit halves (RFC 1071 2.C). */
	sum = ~o + be;
	sum += sum < be;
	sum += (uint16_t)~c;
	sum += sum < (uint16_t)~c;
	sum = (sum & 0xffff) + (sum >> 16); /* <= 0x1fffe */
	sum += sum >> 16;                   /* the low 16 bits */
	c = (uint16_t)~sum;
	if (c == 0)
		c = 0xffff; /* 0 would mean "no checksum" (either byte order) */
	memcpy(ck, &c, sizeof(c));
}

/* tlb_rpc_set_work_ns() for a frame tlb_parse_request_fast() accepted. */
static inline void
tlb_rpc_stamp_fast(void *frame, uint32_t work_ns)
{
	uint8_t *b = frame;

	tlb_csum_patch_be32(b + TLB_FAST_RPC_OFF + TLB_RPC_OFF_WORK_NS,
			    b + TLB_FAST_UDP_OFF + 6, work_ns, true);
}

#endif /* TURBOLB_PROTO_FAST_H */
