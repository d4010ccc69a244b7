/* SPDX-License-Identifier: BSD-3-Clause
 * The dns protocol (RFC 1035 4.1.1): the 12-byte DNS header. Its id is
 * the request id and its QR bit the direction: a query (QR 0) to the
 * port is a request, a response (QR 1) from it a response; the other way
 * round is bad_type. A DNS server answers a query with one datagram
 * (truncated, with TC, when the answer does not fit), so the first
 * response that echoes an outstanding query's id completes it.
 *
 *   0      2        4         6         8         10        12
 *   | id   | flags  | qdcount | ancount | nscount | arcount |
 *           QR = bit 15 of flags
 */
#include "proto_impl.h"

#define DNS_HDR_LEN 12u
#define DNS_F_QR    0x8000u

static enum tlb_parse_err
dns_classify(const uint8_t *b, size_t len, bool to_port, struct tlb_parsed *out,
	     uint16_t *hdr_len)
{
	struct tlb_rpc_hdr *h = &out->hdr;
	bool is_response;

	if (len < DNS_HDR_LEN)
		return TLB_PARSE_TRUNC_MSG;
	is_response = (tlb_proto_rd16(b + 2) & DNS_F_QR) != 0;
	if (is_response == to_port)
		return TLB_PARSE_BAD_TYPE;
	h->type = to_port ? TLB_MSG_REQUEST : TLB_MSG_RESPONSE;
	h->req_id = tlb_proto_rd16(b);
	h->pkt_idx = 0;
	h->pkt_cnt = 1;
	h->payload_len = (uint16_t)(len - DNS_HDR_LEN);
	*hdr_len = DNS_HDR_LEN;
	out->cls = to_port ? TLB_FRAME_REQUEST : TLB_FRAME_RESPONSE;
	return TLB_PARSE_OK;
}

const struct tlb_proto_ops tlb_proto_dns = {
	.name = "dns",
	.completion = TLB_COMPLETE_BY_ID,
	.classify = dns_classify,
};
