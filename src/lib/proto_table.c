/* SPDX-License-Identifier: BSD-3-Clause
 * The protocols a UDP port can speak: the one table that the parser, the
 * configuration and the daemon read (docs/protocol.md).
 */
#include <string.h>

#include "proto_impl.h"

const struct tlb_proto_ops *const tlb_protos[TLB_PROTO_N] = {
	[TLB_PROTO_TURBOLB] = &tlb_proto_turbolb,
	[TLB_PROTO_DNS] = &tlb_proto_dns,
	[TLB_PROTO_MEMCACHED] = &tlb_proto_memcached,
	[TLB_PROTO_UDP] = &tlb_proto_udp,
};

const char *
tlb_proto_name(enum tlb_proto proto)
{
	if ((unsigned int)proto >= TLB_PROTO_N)
		return NULL;
	return tlb_protos[proto]->name;
}

int
tlb_proto_find(const char *name)
{
	for (unsigned int i = 0; i < TLB_PROTO_N; i++)
		if (strcmp(tlb_protos[i]->name, name) == 0)
			return (int)i;
	return -1;
}

enum tlb_proto_completion
tlb_proto_completion(enum tlb_proto proto)
{
	if ((unsigned int)proto >= TLB_PROTO_N)
		return TLB_COMPLETE_EACH;
	return tlb_protos[proto]->completion;
}

enum tlb_parse_err
tlb_proto_classify(enum tlb_proto proto, const uint8_t *b, size_t len,
		   bool to_port, struct tlb_parsed *out)
{
	uint16_t hdr_len = 0;
	enum tlb_parse_err e;

	if ((unsigned int)proto >= TLB_PROTO_N)
		return TLB_PARSE_BAD_TYPE;
	out->proto = (uint8_t)proto;
	e = tlb_protos[proto]->classify(b, len, to_port, out, &hdr_len);
	if (e == TLB_PARSE_OK)
		out->payload_off = (uint16_t)(out->rpc_off + hdr_len);
	return e;
}
