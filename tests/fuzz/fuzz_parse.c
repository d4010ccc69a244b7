/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: the frame parser and the two in-place rewrites that run
 * on what it accepts (tlb_make_response on the servers, tlb_rpc_set_work_ns
 * in the daemon). Every input is a whole frame starting at the Ethernet
 * header. Besides "no crash, no out-of-bounds access" (ASan, UBSan), the
 * documented contracts are checked and a violation aborts:
 *
 * - the result is one of the enum values and an error leaves cls PASS;
 * - NULL opts and an empty port list classify alike, and so do a port
 *   count past TLB_RPC_MAX_PORTS and exactly TLB_RPC_MAX_PORTS;
 * - a parsed RPC's offsets and header are consistent with the frame;
 * - set_work_ns changes only work_ns and the UDP checksum, keeps a valid
 *   checksum valid, keeps "no checksum" (IPv4 0) as it is, and the frame
 *   parses the same afterwards;
 * - make_response of a request parses back as a RESPONSE with the same
 *   req_id and the echoed fields, with valid IPv4 and UDP checksums;
 * - a frame of another protocol (dns, memcached, udp) has its header
 *   where its module says, with the id, direction and packet numbers its
 *   bytes hold, and neither rewrite touches it.
 *
 * libFuzzer passes the input in a heap block of exactly its size, and the
 * rewrites work on exact-size copies, so any access past buf[len) is caught.
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/proto.h"

#include "fuzz_check.h"

#define ETH_HDR_LEN     14u
#define UDP_HDR_LEN     8u
#define IPV6_HDR_LEN    40u
#define RPC_OFF_WORK_NS 28u
#define IP_MAX_LEN      65535u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Written from RFC 1071 here rather than borrowed from proto.c: the point
 * is an independent check of the checksums the library writes. */
static uint64_t
sum_words(uint64_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += rd16(p + i);
	if (n & 1)
		sum += (uint64_t)p[n - 1] << 8;
	return sum;
}

static uint16_t
fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Sum over the pseudo header and the datagram, checksum field included.
 * The IPv6 pseudo header takes the fixed header's addresses, as the
 * protocol doc says the library does. */
static uint64_t
udp_sum(const uint8_t *b, const struct tlb_parsed *p)
{
	const uint8_t *ip = b + p->l3_off;
	const uint8_t *udp = b + p->l4_off;
	size_t udp_len = rd16(udp + 4);
	uint64_t sum;

	if (p->key.ip_version == 4)
		sum = sum_words(0, ip + 12, 8);
	else
		sum = sum_words(0, ip + 8, 32);
	sum += IPPROTO_UDP + udp_len;
	return sum_words(sum, udp, udp_len);
}

static bool
udp_csum_ok(const uint8_t *b, const struct tlb_parsed *p)
{
	return fold(udp_sum(b, p)) == 0xffff;
}

static void
udp_csum_fix(uint8_t *b, const struct tlb_parsed *p)
{
	uint8_t *ck = b + p->l4_off + 6;
	uint16_t c;

	wr16(ck, 0);
	c = (uint16_t)~fold(udp_sum(b, p));
	wr16(ck, c == 0 ? 0xffff : c);
}

static bool
ipv4_csum_ok(const uint8_t *b, const struct tlb_parsed *p)
{
	const uint8_t *ip = b + p->l3_off;

	return fold(sum_words(0, ip, (size_t)(ip[0] & 0x0f) * 4)) == 0xffff;
}

/* The oracle's own, bounded loops (not the parser's tlb_is_rpc_port()):
 * the opts under test may claim more ports than the arrays hold. */
static bool
ours(const struct tlb_parse_opts *o, uint16_t port)
{
	unsigned int i, n;

	if (o == NULL)
		return false;
	n = o->n_udp_ports < TLB_RPC_MAX_PORTS ? o->n_udp_ports
					       : TLB_RPC_MAX_PORTS;
	for (i = 0; i < n; i++)
		if (o->udp_ports[i] == port)
			return true;
	return false;
}

/* The protocol of a port of another protocol, or -1. */
static int
other_proto(const struct tlb_parse_opts *o, uint16_t port)
{
	unsigned int i, n;

	if (o == NULL)
		return -1;
	n = o->n_proto_ports < TLB_RPC_MAX_PORTS ? o->n_proto_ports
						 : TLB_RPC_MAX_PORTS;
	for (i = 0; i < n; i++)
		if (o->proto_ports[i].port == port)
			return o->proto_ports[i].proto;
	return -1;
}

static bool
ours_any(const struct tlb_parse_opts *o, uint16_t port)
{
	return ours(o, port) || other_proto(o, port) >= 0;
}

/* A frame of another protocol: where its header is and what it says. */
static void
check_other(const uint8_t *b, const struct tlb_parse_opts *o,
	    const struct tlb_parsed *p)
{
	const uint8_t *m = b + p->rpc_off;
	size_t end = p->l4_off + (size_t)rd16(b + p->l4_off + 4);
	bool req = p->cls == TLB_FRAME_REQUEST;
	int want;

	/* the destination decides, turbolb ports first */
	if (req) {
		CHECK(!ours(o, p->key.dst_port));
		want = other_proto(o, p->key.dst_port);
	} else {
		CHECK(!ours_any(o, p->key.dst_port));
		CHECK(!ours(o, p->key.src_port));
		want = other_proto(o, p->key.src_port);
	}
	CHECK(want == p->proto);
	CHECK(p->payload_off <= end);
	CHECK(p->hdr.payload_len == end - p->payload_off);
	CHECK(p->hdr.type == (req ? TLB_MSG_REQUEST : TLB_MSG_RESPONSE));
	switch (p->proto) {
	case TLB_PROTO_DNS:
		CHECK(p->payload_off == p->rpc_off + 12u);
		CHECK(p->hdr.req_id == rd16(m));
		CHECK(((m[2] & 0x80) != 0) == !req);
		CHECK(p->hdr.pkt_idx == 0 && p->hdr.pkt_cnt == 1);
		CHECK(p->msg_flags == 0);
		break;
	case TLB_PROTO_MEMCACHED:
		CHECK(p->payload_off == p->rpc_off + 8u);
		CHECK(p->hdr.req_id == rd16(m));
		CHECK(p->hdr.pkt_idx == rd16(m + 2));
		CHECK(p->hdr.pkt_cnt == rd16(m + 4));
		if (req)
			CHECK(p->hdr.pkt_idx == 0 && p->hdr.pkt_cnt == 1);
		else
			CHECK(p->hdr.pkt_cnt == 0 ||
			      p->hdr.pkt_idx < p->hdr.pkt_cnt);
		CHECK(req || p->msg_flags == 0);
		break;
	case TLB_PROTO_UDP:
		CHECK(p->payload_off == p->rpc_off);
		CHECK(p->hdr.req_id == 0 && p->msg_flags == 0);
		break;
	default:
		CHECK(false);
	}
}

/* Field by field: padding inside the structs is not part of the result. */
static bool
hdr_eq(const struct tlb_rpc_hdr *a, const struct tlb_rpc_hdr *b)
{
	return a->magic == b->magic && a->version == b->version &&
	       a->type == b->type && a->flags == b->flags &&
	       a->svc_class == b->svc_class && a->req_id == b->req_id &&
	       a->pkt_idx == b->pkt_idx && a->pkt_cnt == b->pkt_cnt &&
	       a->payload_len == b->payload_len && a->status == b->status &&
	       a->svc_hint_ns == b->svc_hint_ns && a->work_ns == b->work_ns &&
	       a->client_ts == b->client_ts &&
	       a->server_core == b->server_core && a->reserved == b->reserved &&
	       a->service_ns == b->service_ns;
}

static bool
key_eq(const struct tlb_flow_key *a, const struct tlb_flow_key *b)
{
	return memcmp(a->src_addr, b->src_addr, 16) == 0 &&
	       memcmp(a->dst_addr, b->dst_addr, 16) == 0 &&
	       a->src_port == b->src_port && a->dst_port == b->dst_port &&
	       a->ip_version == b->ip_version && a->proto == b->proto;
}

static bool
parsed_eq(const struct tlb_parsed *a, const struct tlb_parsed *b)
{
	return a->cls == b->cls && a->has_vlan == b->has_vlan &&
	       a->vlan_tci == b->vlan_tci && a->l3_off == b->l3_off &&
	       a->l4_off == b->l4_off && a->rpc_off == b->rpc_off &&
	       a->payload_off == b->payload_off && key_eq(&a->key, &b->key) &&
	       hdr_eq(&a->hdr, &b->hdr);
}

/* What every result must satisfy, whatever the frame. */
static void
check_result(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
	     enum tlb_parse_err err, const struct tlb_parsed *p)
{
	struct tlb_rpc_hdr h;

	CHECK((unsigned int)err < TLB_PARSE_ERR_MAX);
	CHECK(strcmp(tlb_parse_err_str(err), "unknown") != 0);
	if (err != TLB_PARSE_OK) {
		CHECK(p->cls == TLB_FRAME_PASS);
		return;
	}
	CHECK(len >= ETH_HDR_LEN);
	CHECK(p->l3_off <= len);
	if (p->key.ip_version != 0) {
		CHECK(p->key.ip_version == 4 || p->key.ip_version == 6);
		CHECK(p->l4_off <= len);
		CHECK(b[p->l3_off] >> 4 == p->key.ip_version);
	}
	if (p->cls == TLB_FRAME_PASS)
		return;

	CHECK(p->cls == TLB_FRAME_REQUEST || p->cls == TLB_FRAME_RESPONSE);
	CHECK(p->key.proto == IPPROTO_UDP);
	CHECK(p->rpc_off == p->l4_off + UDP_HDR_LEN);
	CHECK(p->l4_off + (size_t)rd16(b + p->l4_off + 4) <= len);
	if (p->proto != TLB_PROTO_TURBOLB) {
		check_other(b, o, p);
		return;
	}
	CHECK(p->payload_off == p->rpc_off + TLB_RPC_HDR_LEN);
	CHECK(p->payload_off <= len);
	CHECK(p->hdr.payload_len <= len - p->payload_off);
	/* The payload lies inside the UDP datagram, which lies in the frame. */
	CHECK(p->payload_off + (size_t)p->hdr.payload_len <=
	      p->l4_off + (size_t)rd16(b + p->l4_off + 4));
	CHECK(p->l4_off + (size_t)rd16(b + p->l4_off + 4) <= len);
	CHECK(rd16(b + p->l4_off) == p->key.src_port);
	CHECK(rd16(b + p->l4_off + 2) == p->key.dst_port);

	tlb_rpc_hdr_decode(&h, b + p->rpc_off);
	CHECK(hdr_eq(&h, &p->hdr));
	CHECK(h.magic == TLB_RPC_MAGIC && h.version == TLB_RPC_VERSION);
	CHECK(h.pkt_cnt >= 1 && h.pkt_cnt <= TLB_RPC_MAX_PKTS);
	CHECK(h.pkt_idx < h.pkt_cnt);
	if (p->cls == TLB_FRAME_REQUEST) {
		CHECK(h.type == TLB_MSG_REQUEST);
		CHECK(ours(o, p->key.dst_port));
	} else {
		CHECK(h.type == TLB_MSG_RESPONSE || h.type == TLB_MSG_ERROR);
		CHECK(ours(o, p->key.src_port));
		CHECK(!ours_any(o, p->key.dst_port));
	}
}

static enum tlb_parse_err
parse_checked(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
	      struct tlb_parsed *p)
{
	enum tlb_parse_err err = tlb_parse_frame(b, len, o, p);

	check_result(b, len, o, err, p);
	return err;
}

static uint8_t *
dup_frame(const uint8_t *b, size_t len)
{
	/* malloc(0) may return NULL; a parsed RPC frame is never empty. */
	uint8_t *c = malloc(len);

	if (c == NULL)
		abort();
	memcpy(c, b, len);
	return c;
}

/* Only requests can be turned into responses; anything else is refused
 * and left as it was. */
static void
check_not_request(const uint8_t *b, size_t len, const struct tlb_parsed *p)
{
	uint8_t *c = dup_frame(b, len);

	CHECK(tlb_make_response(c, len, p, TLB_MSG_RESPONSE, 0, 0, 0, 0) == 0);
	CHECK(memcmp(c, b, len) == 0);
	free(c);
}

/* Bytes other than [skip_a, skip_a + na) and [skip_b, skip_b + nb) equal. */
static bool
same_except(const uint8_t *a, const uint8_t *b, size_t len, size_t skip_a,
	    size_t na, size_t skip_b, size_t nb)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (i >= skip_a && i < skip_a + na)
			continue;
		if (i >= skip_b && i < skip_b + nb)
			continue;
		if (a[i] != b[i])
			return false;
	}
	return true;
}

static void
check_set_work_ns(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
		  const struct tlb_parsed *p, uint32_t seed)
{
	const uint32_t values[] = {
		0,           0xffffffffu,        0x0000ffffu,
		0xffff0000u, p->hdr.work_ns,     ~p->hdr.work_ns,
		seed,        seed ^ 0x5a5a5a5au,
	};
	size_t ck_off = p->l4_off + 6u;
	size_t w_off = p->rpc_off + RPC_OFF_WORK_NS;
	unsigned int i, pass;

	/* Pass 0 keeps the input's checksum, valid or not (zero included);
	 * pass 1 makes it valid first, which random inputs seldom are. */
	for (pass = 0; pass < 2; pass++) {
		uint8_t *c = dup_frame(b, len);
		bool was_ok, was_none;

		if (pass == 1)
			udp_csum_fix(c, p);
		was_ok = udp_csum_ok(c, p);
		was_none = p->key.ip_version == 4 && rd16(c + ck_off) == 0;
		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			struct tlb_parsed q, want = *p;
			uint8_t *before = dup_frame(c, len);

			tlb_rpc_set_work_ns(c, p, values[i]);
			CHECK(rd32(c + w_off) == values[i]);
			CHECK(same_except(before, c, len, w_off, 4, ck_off, 2));
			if (was_none)
				CHECK(rd16(c + ck_off) == 0);
			else if (was_ok)
				CHECK(udp_csum_ok(c, p) &&
				      rd16(c + ck_off) != 0);
			CHECK(parse_checked(c, len, o, &q) == TLB_PARSE_OK);
			want.hdr.work_ns = values[i];
			CHECK(parsed_eq(&q, &want));
			free(before);
		}
		free(c);
	}
}

static void
check_response(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
	       const struct tlb_parsed *p, enum tlb_msg_type type,
	       uint16_t resp_len, uint32_t seed)
{
	uint16_t status = (uint16_t)seed;
	uint16_t core = (uint16_t)(seed >> 16);
	uint32_t svc = seed * 2654435761u;
	size_t room = len - p->payload_off;
	size_t total = p->payload_off + (size_t)resp_len;
	size_t ip_len;
	struct tlb_parsed q;
	enum tlb_parse_err err;
	uint8_t *c = dup_frame(b, len);
	size_t n;

	ip_len =
		total - p->l3_off - (p->key.ip_version == 6 ? IPV6_HDR_LEN : 0);
	n = tlb_make_response(c, len, p, type, status, core, svc, resp_len);
	if (resp_len > room || ip_len > IP_MAX_LEN) {
		CHECK(n == 0);
		CHECK(memcmp(c, b, len) == 0);
		free(c);
		return;
	}
	CHECK(n == total);

	/* Addresses swapped, headers before the UDP header otherwise kept
	 * (VLAN, options, extension headers), payload prefix untouched. */
	CHECK(memcmp(c, b + 6, 6) == 0 && memcmp(c + 6, b, 6) == 0);
	CHECK(memcmp(c + 12, b + 12, p->l3_off - 12u) == 0);
	if (p->key.ip_version == 4) {
		size_t ihl = (size_t)(b[p->l3_off] & 0x0f) * 4;

		CHECK(ipv4_csum_ok(c, p));
		CHECK(rd16(c + p->l3_off + 2) == total - p->l3_off);
		CHECK(c[p->l3_off + 8] == 64);
		/* TOS, id, fragment word and protocol are echoed. */
		CHECK(c[p->l3_off + 1] == b[p->l3_off + 1]);
		CHECK(memcmp(c + p->l3_off + 4, b + p->l3_off + 4, 4) == 0);
		CHECK(c[p->l3_off + 9] == b[p->l3_off + 9]);
		CHECK(memcmp(c + p->l3_off + 20, b + p->l3_off + 20,
			     ihl - 20) == 0);
	} else {
		CHECK(rd16(c + p->l3_off + 4) == ip_len);
		CHECK(c[p->l3_off + 7] == 64);
		/* Traffic class, flow label and next header are echoed. */
		CHECK(memcmp(c + p->l3_off, b + p->l3_off, 4) == 0);
		CHECK(c[p->l3_off + 6] == b[p->l3_off + 6]);
		CHECK(memcmp(c + p->l3_off + 40, b + p->l3_off + 40,
			     p->l4_off - p->l3_off - 40u) == 0);
	}
	CHECK(rd16(c + p->l4_off + 4) == total - p->l4_off);
	CHECK(udp_csum_ok(c, p) && rd16(c + p->l4_off + 6) != 0);
	CHECK(memcmp(c + p->payload_off, b + p->payload_off, resp_len) == 0);

	/* Both ports ours: the response goes to our port, where only
	 * requests are valid. */
	err = parse_checked(c, n, o, &q);
	if (ours(o, p->key.src_port)) {
		CHECK(err == TLB_PARSE_BAD_TYPE);
		free(c);
		return;
	}
	CHECK(err == TLB_PARSE_OK);
	CHECK(q.cls == TLB_FRAME_RESPONSE);
	CHECK(q.hdr.req_id == p->hdr.req_id);
	CHECK(q.hdr.type == type && q.hdr.status == status);
	CHECK(q.hdr.server_core == core && q.hdr.service_ns == svc);
	CHECK(q.hdr.payload_len == resp_len);
	CHECK(q.hdr.pkt_idx == 0 && q.hdr.pkt_cnt == 1);
	CHECK(q.hdr.reserved == 0);
	CHECK(q.hdr.client_ts == p->hdr.client_ts);
	CHECK(q.hdr.work_ns == p->hdr.work_ns);
	CHECK(q.hdr.svc_class == p->hdr.svc_class);
	CHECK(q.hdr.flags == p->hdr.flags);
	CHECK(q.hdr.svc_hint_ns == p->hdr.svc_hint_ns);
	CHECK(q.has_vlan == p->has_vlan && q.vlan_tci == p->vlan_tci);
	CHECK(q.l3_off == p->l3_off && q.l4_off == p->l4_off);
	CHECK(q.rpc_off == p->rpc_off && q.payload_off == p->payload_off);
	CHECK(q.key.ip_version == p->key.ip_version);
	CHECK(memcmp(q.key.src_addr, p->key.dst_addr, 16) == 0);
	CHECK(memcmp(q.key.dst_addr, p->key.src_addr, 16) == 0);
	CHECK(q.key.src_port == p->key.dst_port);
	CHECK(q.key.dst_port == p->key.src_port);

	/* Whatever followed the new end is trailing padding now. */
	{
		struct tlb_parsed r;

		CHECK(parse_checked(c, len, o, &r) == TLB_PARSE_OK);
		CHECK(parsed_eq(&q, &r));
	}
	/* The daemon stamps responses too, on their way back. */
	check_set_work_ns(c, n, o, &q, seed);

	/* A response is not a request: a second rewrite must refuse. */
	check_not_request(c, n, &q);
	free(c);
}

static void
check_request(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
	      const struct tlb_parsed *p, uint32_t seed)
{
	uint16_t room =
		(uint16_t)(len - p->payload_off < 0xffff ? len - p->payload_off
							 : 0xffff);
	uint8_t *c;

	check_response(b, len, o, p, TLB_MSG_RESPONSE, p->hdr.payload_len,
		       seed);
	check_response(b, len, o, p, TLB_MSG_ERROR, 0, seed);
	check_response(b, len, o, p, TLB_MSG_RESPONSE, room, seed);
	check_response(b, len, o, p, TLB_MSG_ERROR, (uint16_t)(room / 2), seed);
	if (room < 0xffff)
		check_response(b, len, o, p, TLB_MSG_RESPONSE,
			       (uint16_t)(room + 1), seed);

	/* A request is not a valid response type. */
	c = dup_frame(b, len);
	CHECK(tlb_make_response(c, len, p, TLB_MSG_REQUEST, 0, 0, 0, 0) == 0);
	CHECK(memcmp(c, b, len) == 0);
	free(c);
}

/* Parses with o and, for an RPC, runs the rewrite checks. */
static void
exercise(const uint8_t *b, size_t len, const struct tlb_parse_opts *o,
	 uint32_t seed, struct tlb_parsed *p_out)
{
	struct tlb_parsed p;
	enum tlb_parse_err err;

	err = parse_checked(b, len, o, &p);
	if (p_out != NULL)
		*p_out = p;
	if (err != TLB_PARSE_OK || p.cls == TLB_FRAME_PASS)
		return;
	if (p.proto != TLB_PROTO_TURBOLB) {
		/* no work_ns to stamp, no turbolb response to make */
		uint8_t *c = dup_frame(b, len);

		tlb_rpc_set_work_ns(c, &p, seed);
		CHECK(memcmp(c, b, len) == 0);
		free(c);
		check_not_request(b, len, &p);
		return;
	}
	check_set_work_ns(b, len, o, &p, seed);
	if (p.cls == TLB_FRAME_REQUEST)
		check_request(b, len, o, &p, seed);
	else
		check_not_request(b, len, &p);
}

/* Two parses that the doc says must agree. */
static void
check_same(const uint8_t *b, size_t len, const struct tlb_parse_opts *x,
	   const struct tlb_parse_opts *y)
{
	struct tlb_parsed px, py;
	enum tlb_parse_err ex, ey;

	ex = parse_checked(b, len, x, &px);
	ey = parse_checked(b, len, y, &py);
	CHECK(ex == ey);
	CHECK(parsed_eq(&px, &py));
}

/* The builder, fed header values and addresses from the input: what it
 * writes must parse back as exactly that, with valid checksums. */
static void
check_build(const uint8_t *data, size_t size)
{
	struct tlb_frame_addrs a;
	struct tlb_parse_opts o;
	struct tlb_rpc_hdr h;
	struct tlb_parsed p;
	uint8_t frame[2048];
	const uint8_t *payload;
	uint16_t payload_len;
	size_t n;
	uint8_t sel;

	if (size < TLB_RPC_HDR_LEN + 48)
		return;
	tlb_rpc_hdr_decode(&h, data);
	sel = data[TLB_RPC_HDR_LEN];
	memset(&a, 0, sizeof(a));
	memcpy(a.src_mac, data + TLB_RPC_HDR_LEN + 1, 6);
	memcpy(a.dst_mac, data + TLB_RPC_HDR_LEN + 7, 6);
	a.has_vlan = sel & 1;
	a.vlan_tci = rd16(data + TLB_RPC_HDR_LEN + 13);
	a.key.ip_version = sel & 2 ? 6 : 4;
	memcpy(a.key.src_addr, data + TLB_RPC_HDR_LEN + 15, 16);
	memcpy(a.key.dst_addr, data + TLB_RPC_HDR_LEN + 31, 16);
	a.key.src_port = rd16(data + TLB_RPC_HDR_LEN + 44);
	a.key.dst_port = rd16(data + TLB_RPC_HDR_LEN + 46);
	if (a.key.src_port == a.key.dst_port)
		a.key.src_port++;
	payload = data + TLB_RPC_HDR_LEN + 48;
	payload_len = (uint16_t)(size - TLB_RPC_HDR_LEN - 48);

	h.magic = TLB_RPC_MAGIC;
	h.version = TLB_RPC_VERSION;
	h.type = sel & 4 ? TLB_MSG_REQUEST
			 : (sel & 8 ? TLB_MSG_RESPONSE : TLB_MSG_ERROR);
	h.pkt_cnt = (uint16_t)(1 + h.pkt_cnt % TLB_RPC_MAX_PKTS);
	h.pkt_idx = (uint16_t)(h.pkt_idx % h.pkt_cnt);

	n = tlb_build_frame(frame, sizeof(frame), &a, &h, payload, payload_len);
	if (n == 0) {
		/* Only a frame that cannot fit is refused. */
		CHECK(ETH_HDR_LEN + (a.has_vlan ? 4u : 0u) +
			      (a.key.ip_version == 4 ? 20u : IPV6_HDR_LEN) +
			      UDP_HDR_LEN + TLB_RPC_HDR_LEN + payload_len >
		      sizeof(frame));
		return;
	}
	CHECK(n == ETH_HDR_LEN + (a.has_vlan ? 4u : 0u) +
			   (a.key.ip_version == 4 ? 20u : IPV6_HDR_LEN) +
			   UDP_HDR_LEN + TLB_RPC_HDR_LEN + payload_len);
	memset(&o, 0, sizeof(o));
	o.n_udp_ports = 1;
	o.udp_ports[0] =
		h.type == TLB_MSG_REQUEST ? a.key.dst_port : a.key.src_port;
	CHECK(parse_checked(frame, n, &o, &p) == TLB_PARSE_OK);
	CHECK(p.cls == (h.type == TLB_MSG_REQUEST ? TLB_FRAME_REQUEST
						  : TLB_FRAME_RESPONSE));
	h.payload_len = payload_len;
	CHECK(hdr_eq(&p.hdr, &h));
	CHECK(p.has_vlan == a.has_vlan);
	CHECK(!a.has_vlan || p.vlan_tci == a.vlan_tci);
	CHECK(memcmp(frame, a.dst_mac, 6) == 0);
	CHECK(memcmp(frame + 6, a.src_mac, 6) == 0);
	CHECK(memcmp(p.key.src_addr, a.key.src_addr,
		     a.key.ip_version == 4 ? 4 : 16) == 0);
	CHECK(memcmp(p.key.dst_addr, a.key.dst_addr,
		     a.key.ip_version == 4 ? 4 : 16) == 0);
	CHECK(p.key.src_port == a.key.src_port);
	CHECK(p.key.dst_port == a.key.dst_port);
	CHECK(memcmp(frame + p.payload_off, payload, payload_len) == 0);
	if (a.key.ip_version == 4)
		CHECK(ipv4_csum_ok(frame, &p));
	CHECK(udp_csum_ok(frame, &p) && rd16(frame + p.l4_off + 6) != 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct tlb_parse_opts one = {
		.udp_ports = {9000},
		.n_udp_ports = 1,
	};
	static const struct tlb_parse_opts many = {
		.udp_ports = {53, 9000, 9001, 7000, 4791, 1, 65535, 0},
		.n_udp_ports = TLB_RPC_MAX_PORTS,
	};
	static const struct tlb_parse_opts many_over = {
		.udp_ports = {53, 9000, 9001, 7000, 4791, 1, 65535, 0},
		.n_udp_ports = 0xffffffffu,
	};
	static const struct tlb_parse_opts none = {.n_udp_ports = 0};
	/* every protocol, with turbolb's ports first */
	static const struct tlb_parse_opts protos = {
		.udp_ports = {9000},
		.n_udp_ports = 1,
		.proto_ports = {{53, TLB_PROTO_DNS},
				{11211, TLB_PROTO_MEMCACHED},
				{7000, TLB_PROTO_UDP}},
		.n_proto_ports = 3,
	};
	struct tlb_parse_opts own;
	struct tlb_parsed p;
	uint32_t seed = 0;
	size_t i;

	/* Varies the values the rewrites write, without a second input. */
	for (i = 0; i < size; i++)
		seed = seed * 31u + data[i];

	check_build(data, size);
	check_same(data, size, NULL, &none);
	check_same(data, size, &many, &many_over);

	exercise(data, size, NULL, seed, NULL);
	exercise(data, size, &many, seed, NULL);
	exercise(data, size, &protos, seed, NULL);
	exercise(data, size, &one, seed, &p);

	/* Any UDP port can be an RPC port: retry a UDP frame that passed
	 * with its own ports as ours, so the RPC checks see every port. */
	if (p.cls == TLB_FRAME_PASS && p.key.proto == IPPROTO_UDP &&
	    p.key.ip_version != 0) {
		memset(&own, 0, sizeof(own));
		own.udp_ports[0] = p.key.dst_port;
		own.n_udp_ports = 1;
		exercise(data, size, &own, seed, NULL);
		own.udp_ports[0] = p.key.src_port;
		exercise(data, size, &own, seed, NULL);
		own.udp_ports[1] = p.key.dst_port;
		own.n_udp_ports = 2;
		exercise(data, size, &own, seed, NULL);
		/* and as each other protocol's, to and from */
		for (int pr = TLB_PROTO_TURBOLB + 1; pr < TLB_PROTO_N; pr++) {
			memset(&own, 0, sizeof(own));
			own.proto_ports[0].port = p.key.dst_port;
			own.proto_ports[0].proto = (uint8_t)pr;
			own.n_proto_ports = 1;
			exercise(data, size, &own, seed, NULL);
			own.proto_ports[0].port = p.key.src_port;
			exercise(data, size, &own, seed, NULL);
		}
	}
	return 0;
}
