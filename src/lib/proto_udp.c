/* SPDX-License-Identifier: BSD-3-Clause
 * The udp protocol: no header. Every datagram to the port is one request
 * and every datagram from it (from a host core) one completion of that
 * core, for request/response services that answer each request with
 * exactly one datagram. Nothing ties a response to its request, so the
 * request id is 0 and a request never answered leaves the view only
 * through the write-off of a core that stops answering (host.write_off_us).
 */
#include "proto_impl.h"

static enum tlb_parse_err
udp_classify(const uint8_t *b, size_t len, bool to_port, struct tlb_parsed *out,
	     uint16_t *hdr_len)
{
	struct tlb_rpc_hdr *h = &out->hdr;

	(void)b;
	(void)len;
	h->type = to_port ? TLB_MSG_REQUEST : TLB_MSG_RESPONSE;
	h->pkt_idx = 0;
	h->pkt_cnt = 1;
	h->payload_len = (uint16_t)len;
	*hdr_len = 0;
	out->cls = to_port ? TLB_FRAME_REQUEST : TLB_FRAME_RESPONSE;
	return TLB_PARSE_OK;
}

const struct tlb_proto_ops tlb_proto_udp = {
	.name = "udp",
	.completion = TLB_COMPLETE_EACH,
	.classify = udp_classify,
};
