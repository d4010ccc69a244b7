/* SPDX-License-Identifier: BSD-3-Clause
 * The memcached protocol over UDP (memcached's doc/protocol.txt, "UDP
 * protocol"): every datagram starts with an 8-byte frame header, then the
 * text (or binary) protocol.
 *
 *   0            2              4                 6          8
 *   | request id | sequence no. | total datagrams | reserved |
 *
 * A request is one datagram: total 1, sequence 0 (anything else is
 * bad_pkt_count or bad_pkt_index). A response spans datagrams 0..n-1 of
 * total n, all with the request's id; memcached 1.6 answers a multi-key
 * get with one such response per key (and the END line), and may add a
 * header-only datagram of total 0 for a miss. So the first response
 * datagram that echoes an outstanding request's id completes it and the
 * others are follow-ups (TLB_COMPLETE_BY_ID). A text command that ends in
 * "noreply" is never answered: it is marked one-way, and the daemon
 * steers it without charging it.
 */
#include <string.h>

#include "proto_impl.h"

#define MC_HDR_LEN 8u
/* A command line past this is not looked at for noreply: the longest
 * storage command (a 250-byte key and five numbers) fits easily. */
#define MC_LINE_MAX 320u

/* True if the text command's first line ends in the token "noreply",
 * and the command is not a retrieval (get, gets, gat, gats), whose last
 * token is a key, which may be called noreply. */
static bool
mc_noreply(const uint8_t *b, size_t len)
{
	static const char tok[] = " noreply";
	const size_t n = sizeof(tok) - 1;
	size_t end;

	if (len > MC_LINE_MAX)
		len = MC_LINE_MAX;
	for (end = 0; end < len && b[end] != '\n'; end++)
		;
	if (end == len) /* no whole line */
		return false;
	if (end > 0 && b[end - 1] == '\r')
		end--;
	if (end < n || memcmp(b + end - n, tok, n) != 0)
		return false;
	return !(end >= 3 && b[0] == 'g' && (b[1] == 'e' || b[1] == 'a') &&
		 b[2] == 't');
}

static enum tlb_parse_err
mc_classify(const uint8_t *b, size_t len, bool to_port, struct tlb_parsed *out,
	    uint16_t *hdr_len)
{
	struct tlb_rpc_hdr *h = &out->hdr;
	uint16_t seq, total;

	if (len < MC_HDR_LEN)
		return TLB_PARSE_TRUNC_MSG;
	seq = tlb_proto_rd16(b + 2);
	total = tlb_proto_rd16(b + 4);
	if (to_port) {
		if (total != 1)
			return TLB_PARSE_BAD_PKT_COUNT;
		if (seq != 0)
			return TLB_PARSE_BAD_PKT_INDEX;
		if (mc_noreply(b + MC_HDR_LEN, len - MC_HDR_LEN))
			out->msg_flags |= TLB_MSG_F_ONEWAY;
	} else if (total != 0 && seq >= total) {
		return TLB_PARSE_BAD_PKT_INDEX;
	}
	h->type = to_port ? TLB_MSG_REQUEST : TLB_MSG_RESPONSE;
	h->req_id = tlb_proto_rd16(b);
	h->pkt_idx = seq;
	h->pkt_cnt = total;
	h->payload_len = (uint16_t)(len - MC_HDR_LEN);
	*hdr_len = MC_HDR_LEN;
	out->cls = to_port ? TLB_FRAME_REQUEST : TLB_FRAME_RESPONSE;
	return TLB_PARSE_OK;
}

const struct tlb_proto_ops tlb_proto_memcached = {
	.name = "memcached",
	.completion = TLB_COMPLETE_BY_ID,
	.classify = mc_classify,
};
