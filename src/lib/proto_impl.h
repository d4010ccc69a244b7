/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the protocol modules, one per src/lib/proto_<name>.c, and the
 * table that lists them (src/lib/proto_table.c). Adding a protocol is one
 * file and one entry there, and its enum tlb_proto value
 * (docs/protocol.md, "Adding a protocol").
 */
#ifndef TURBOLB_PROTO_IMPL_H
#define TURBOLB_PROTO_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "turbolb/proto.h"

struct tlb_proto_ops {
	const char *name; /* in the configuration (rpc.ports[].protocol) */
	enum tlb_proto_completion completion;
	/* Classifies the UDP payload b[0, len) of a datagram to one of the
	 * protocol's ports (to_port) or from one. On TLB_PARSE_OK: out->cls
	 * is TLB_FRAME_REQUEST or TLB_FRAME_RESPONSE, out->hdr and
	 * out->msg_flags hold what the header says (struct tlb_parsed),
	 * and *hdr_len is the protocol header's length (<= len). Otherwise
	 * the first check that failed. Reads nothing at or past b[len). */
	enum tlb_parse_err (*classify)(const uint8_t *b, size_t len,
				       bool to_port, struct tlb_parsed *out,
				       uint16_t *hdr_len);
};

extern const struct tlb_proto_ops tlb_proto_turbolb;
extern const struct tlb_proto_ops tlb_proto_dns;
extern const struct tlb_proto_ops tlb_proto_memcached;
extern const struct tlb_proto_ops tlb_proto_udp;

/* Indexed by enum tlb_proto. */
extern const struct tlb_proto_ops *const tlb_protos[TLB_PROTO_N];

/* The turbolb header checks of tlb_parse_frame(), on a UDP payload
 * (src/lib/proto.c). */
enum tlb_parse_err tlb_rpc_classify(const uint8_t *b, size_t len, bool to_port,
				    struct tlb_parsed *out, uint16_t *hdr_len);

static inline uint16_t
tlb_proto_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

#endif /* TURBOLB_PROTO_IMPL_H */
