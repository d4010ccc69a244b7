/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb RPC wire protocol v1: frame parse/classify, build and in-place
 * response rewrite on plain byte buffers. Layout and rules:
 * docs/protocol.md.
 *
 * Every multi-byte field is read and written through memcpy plus the
 * endian.h conversions, because frames come from mbufs and memif rings at
 * arbitrary alignment and a wide load through a cast pointer is undefined
 * behaviour (and faults on some Arm configurations).
 */
#include <endian.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "turbolb/proto.h"
#include "turbolb/proto_fast.h"
#include "proto_impl.h"

#define ETH_HDR_LEN    14u
#define VLAN_TAG_LEN   4u
#define ETH_ADDR_LEN   6u
#define ETHERTYPE_IPV4 0x0800u
#define ETHERTYPE_IPV6 0x86ddu
#define ETHERTYPE_VLAN 0x8100u

#define IPV4_MIN_HDR_LEN 20u
#define IPV4_DF          0x4000u
#define IPV4_MF          0x2000u
#define IPV4_OFF_MASK    0x1fffu
#define IPV6_HDR_LEN     40u
#define IP_TTL_DEFAULT   64u
#define UDP_HDR_LEN      8u
#define IP_MAX_LEN       65535u

/* IPv6 next-header values the parser walks through. */
#define IP6_NH_HOPOPTS   0u
#define IP6_NH_ROUTING   43u
#define IP6_NH_FRAGMENT  44u
#define IP6_NH_DSTOPTS   60u
#define IP6_FRAG_HDR_LEN 8u
/* Enough for any sane chain; bounds the work an attacker can make us do. */
#define IP6_MAX_EXT_HDRS 8u

/* The big-endian loads of proto_fast.h. */
#define rd16 tlb_fast_rd16
#define rd32 tlb_fast_rd32

static inline uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void
wr16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
wr32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void
wr64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

static const char *const parse_err_names[TLB_PARSE_ERR_MAX] = {
	[TLB_PARSE_OK] = "ok",
	[TLB_PARSE_TRUNC_ETH] = "trunc_eth",
	[TLB_PARSE_TRUNC_VLAN] = "trunc_vlan",
	[TLB_PARSE_TRUNC_IP] = "trunc_ip",
	[TLB_PARSE_BAD_IP_VERSION] = "bad_ip_version",
	[TLB_PARSE_BAD_IHL] = "bad_ihl",
	[TLB_PARSE_BAD_IP_LEN] = "bad_ip_len",
	[TLB_PARSE_IP_FRAGMENT] = "ip_fragment",
	[TLB_PARSE_BAD_IP_EXT] = "bad_ip_ext",
	[TLB_PARSE_TRUNC_UDP] = "trunc_udp",
	[TLB_PARSE_BAD_UDP_LEN] = "bad_udp_len",
	[TLB_PARSE_TRUNC_RPC] = "trunc_rpc",
	[TLB_PARSE_BAD_MAGIC] = "bad_magic",
	[TLB_PARSE_BAD_VERSION] = "bad_version",
	[TLB_PARSE_BAD_TYPE] = "bad_type",
	[TLB_PARSE_BAD_PAYLOAD_LEN] = "bad_payload_len",
	[TLB_PARSE_BAD_PKT_COUNT] = "bad_pkt_count",
	[TLB_PARSE_BAD_PKT_INDEX] = "bad_pkt_index",
	[TLB_PARSE_TRUNC_MSG] = "trunc_msg",
};

const char *
tlb_parse_err_str(enum tlb_parse_err err)
{
	/* The enum may arrive as any int from a counter index; compare as
	 * unsigned so negative values also land on "unknown". */
	if ((unsigned int)err >= TLB_PARSE_ERR_MAX ||
	    parse_err_names[err] == NULL)
		return "unknown";
	return parse_err_names[err];
}

void
tlb_rpc_hdr_encode(void *dst, const struct tlb_rpc_hdr *h)
{
	uint8_t *d = dst;

	wr16(d + TLB_RPC_OFF_MAGIC, h->magic);
	d[TLB_RPC_OFF_VERSION] = h->version;
	d[TLB_RPC_OFF_TYPE] = h->type;
	wr16(d + TLB_RPC_OFF_FLAGS, h->flags);
	wr16(d + TLB_RPC_OFF_SVC_CLASS, h->svc_class);
	wr64(d + TLB_RPC_OFF_REQ_ID, h->req_id);
	wr16(d + TLB_RPC_OFF_PKT_IDX, h->pkt_idx);
	wr16(d + TLB_RPC_OFF_PKT_CNT, h->pkt_cnt);
	wr16(d + TLB_RPC_OFF_PAYLOAD_LEN, h->payload_len);
	wr16(d + TLB_RPC_OFF_STATUS, h->status);
	wr32(d + TLB_RPC_OFF_SVC_HINT_NS, h->svc_hint_ns);
	wr32(d + TLB_RPC_OFF_WORK_NS, h->work_ns);
	wr64(d + TLB_RPC_OFF_CLIENT_TS, h->client_ts);
	wr16(d + TLB_RPC_OFF_SERVER_CORE, h->server_core);
	wr16(d + TLB_RPC_OFF_RESERVED, h->reserved);
	wr32(d + TLB_RPC_OFF_SERVICE_NS, h->service_ns);
}

/* Inlined into the parser: called for every frame. */
static inline __attribute__((always_inline)) void
hdr_decode(struct tlb_rpc_hdr *h, const void *src)
{
	const uint8_t *s = src;

	h->magic = rd16(s + TLB_RPC_OFF_MAGIC);
	h->version = s[TLB_RPC_OFF_VERSION];
	h->type = s[TLB_RPC_OFF_TYPE];
	h->flags = rd16(s + TLB_RPC_OFF_FLAGS);
	h->svc_class = rd16(s + TLB_RPC_OFF_SVC_CLASS);
	h->req_id = rd64(s + TLB_RPC_OFF_REQ_ID);
	h->pkt_idx = rd16(s + TLB_RPC_OFF_PKT_IDX);
	h->pkt_cnt = rd16(s + TLB_RPC_OFF_PKT_CNT);
	h->payload_len = rd16(s + TLB_RPC_OFF_PAYLOAD_LEN);
	h->status = rd16(s + TLB_RPC_OFF_STATUS);
	h->svc_hint_ns = rd32(s + TLB_RPC_OFF_SVC_HINT_NS);
	h->work_ns = rd32(s + TLB_RPC_OFF_WORK_NS);
	h->client_ts = rd64(s + TLB_RPC_OFF_CLIENT_TS);
	h->server_core = rd16(s + TLB_RPC_OFF_SERVER_CORE);
	h->reserved = rd16(s + TLB_RPC_OFF_RESERVED);
	h->service_ns = rd32(s + TLB_RPC_OFF_SERVICE_NS);
}

void
tlb_rpc_hdr_decode(struct tlb_rpc_hdr *h, const void *src)
{
	hdr_decode(h, src);
}

/* opts come from config and may be NULL: no ports, everything passes. */
static inline __attribute__((always_inline)) bool
port_is_ours(const struct tlb_parse_opts *opts, uint16_t port)
{
	return opts != NULL && tlb_is_rpc_port(opts, port);
}

static inline __attribute__((always_inline)) bool
port_is_native(const struct tlb_parse_opts *opts, uint16_t port)
{
	return opts != NULL && tlb_is_native_port(opts, port);
}

/* The protocol of a port of another protocol, or -1. */
static inline int
port_proto(const struct tlb_parse_opts *opts, uint16_t port)
{
	return opts != NULL ? tlb_proto_port_find(opts, port) : -1;
}

/* RPC header checks, in the documented order. [off, end) is what the UDP
 * length says is left of the datagram. */
static inline __attribute__((always_inline)) enum tlb_parse_err
parse_rpc(const uint8_t *b, size_t off, size_t end, enum tlb_frame_class want,
	  struct tlb_parsed *out)
{
	struct tlb_rpc_hdr *h = &out->hdr;

	out->rpc_off = (uint16_t)off;
	if (end - off < TLB_RPC_HDR_LEN)
		return TLB_PARSE_TRUNC_RPC;
	hdr_decode(h, b + off);
	if (h->magic != TLB_RPC_MAGIC)
		return TLB_PARSE_BAD_MAGIC;
	if (h->version != TLB_RPC_VERSION)
		return TLB_PARSE_BAD_VERSION;
	if (h->type < TLB_MSG_REQUEST || h->type > TLB_MSG_ERROR)
		return TLB_PARSE_BAD_TYPE;
	/* Direction must match the port: a response aimed at our port (or a
	 * request from it) would be steered as the wrong kind of message. */
	if (want == TLB_FRAME_REQUEST && h->type != TLB_MSG_REQUEST)
		return TLB_PARSE_BAD_TYPE;
	if (want == TLB_FRAME_RESPONSE && h->type == TLB_MSG_REQUEST)
		return TLB_PARSE_BAD_TYPE;
	if (h->pkt_cnt == 0 || h->pkt_cnt > TLB_RPC_MAX_PKTS)
		return TLB_PARSE_BAD_PKT_COUNT;
	if (h->pkt_idx >= h->pkt_cnt)
		return TLB_PARSE_BAD_PKT_INDEX;
	if (h->payload_len > end - off - TLB_RPC_HDR_LEN)
		return TLB_PARSE_BAD_PAYLOAD_LEN;
	out->payload_off = (uint16_t)(off + TLB_RPC_HDR_LEN);
	out->cls = want;
	return TLB_PARSE_OK;
}

enum tlb_parse_err
tlb_rpc_classify(const uint8_t *b, size_t len, bool to_port,
		 struct tlb_parsed *out, uint16_t *hdr_len)
{
	uint16_t rpc_off = out->rpc_off;
	enum tlb_parse_err e;

	/* parse_rpc() works on frame offsets: b is the datagram's payload
	 * here, at offset 0, and the caller keeps its own rpc_off. */
	e = parse_rpc(b, 0, len,
		      to_port ? TLB_FRAME_REQUEST : TLB_FRAME_RESPONSE, out);
	out->rpc_off = rpc_off;
	*hdr_len = TLB_RPC_HDR_LEN;
	return e;
}

/* Common L4 step for both IP versions. [off, end) is the IP payload as the
 * IP length fields bound it (already checked to lie inside the frame). */
static inline __attribute__((always_inline)) enum tlb_parse_err
parse_l4(const uint8_t *b, size_t off, size_t end, bool is_frag,
	 bool first_frag, const struct tlb_parse_opts *opts,
	 struct tlb_parsed *out)
{
	struct tlb_flow_key *k = &out->key;
	enum tlb_frame_class want;
	uint16_t udp_len;
	int proto = -1;

	out->l4_off = (uint16_t)off;
	if (k->proto != IPPROTO_UDP)
		return TLB_PARSE_OK;

	if (is_frag) {
		/* We never reassemble. Later fragments carry no UDP header, so
		 * nobody can tell whose they are: they all get the fragment
		 * code. A first fragment shows its ports; it is an error only
		 * when it would have been an RPC. */
		if (!first_frag || end - off < UDP_HDR_LEN)
			return TLB_PARSE_IP_FRAGMENT;
		k->src_port = rd16(b + off);
		k->dst_port = rd16(b + off + 2);
		if (port_is_ours(opts, k->dst_port) ||
		    port_is_ours(opts, k->src_port))
			return TLB_PARSE_IP_FRAGMENT;
		return TLB_PARSE_OK;
	}

	if (end - off < UDP_HDR_LEN)
		return TLB_PARSE_TRUNC_UDP;
	k->src_port = rd16(b + off);
	k->dst_port = rd16(b + off + 2);
	udp_len = rd16(b + off + 4);
	/* The UDP length is authoritative for where the datagram ends; the
	 * IP payload may be longer (some stacks pad), never shorter. */
	if (udp_len < UDP_HDR_LEN || udp_len > end - off)
		return TLB_PARSE_BAD_UDP_LEN;

	/* Both ports ours (server to server): the destination decides. The
	 * turbolb ports are looked at first: nearly every frame is theirs. */
	if (port_is_native(opts, k->dst_port))
		want = TLB_FRAME_REQUEST;
	else if ((proto = port_proto(opts, k->dst_port)) >= 0)
		want = TLB_FRAME_REQUEST;
	else if (port_is_native(opts, k->src_port))
		want = TLB_FRAME_RESPONSE;
	else if ((proto = port_proto(opts, k->src_port)) >= 0)
		want = TLB_FRAME_RESPONSE;
	else
		return TLB_PARSE_OK;
	if (proto < 0)
		return parse_rpc(b, off + UDP_HDR_LEN, off + udp_len, want,
				 out);
	out->rpc_off = (uint16_t)(off + UDP_HDR_LEN);
	return tlb_proto_classify((enum tlb_proto)proto, b + off + UDP_HDR_LEN,
				  udp_len - UDP_HDR_LEN,
				  want == TLB_FRAME_REQUEST, out);
}

static inline __attribute__((always_inline)) enum tlb_parse_err
parse_ipv4(const uint8_t *b, size_t len, size_t off,
	   const struct tlb_parse_opts *opts, struct tlb_parsed *out)
{
	const uint8_t *ip = b + off;
	size_t avail = len - off;
	size_t ihl, tot_len;
	uint16_t frag;

	if (avail < IPV4_MIN_HDR_LEN)
		return TLB_PARSE_TRUNC_IP;
	if ((ip[0] >> 4) != 4)
		return TLB_PARSE_BAD_IP_VERSION;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < IPV4_MIN_HDR_LEN || ihl > avail)
		return TLB_PARSE_BAD_IHL;
	tot_len = rd16(ip + 2);
	/* Longer frames are fine: Ethernet pads short frames to 60 bytes. */
	if (tot_len < ihl || tot_len > avail)
		return TLB_PARSE_BAD_IP_LEN;

	out->key.ip_version = 4;
	out->key.proto = ip[9];
	memcpy(out->key.src_addr, ip + 12, 4);
	memcpy(out->key.dst_addr, ip + 16, 4);

	frag = rd16(ip + 6);
	return parse_l4(b, off + ihl, off + tot_len,
			(frag & (IPV4_MF | IPV4_OFF_MASK)) != 0,
			(frag & IPV4_OFF_MASK) == 0, opts, out);
}

static bool
ip6_nh_is_ext(uint8_t nh)
{
	return nh == IP6_NH_HOPOPTS || nh == IP6_NH_ROUTING ||
	       nh == IP6_NH_FRAGMENT || nh == IP6_NH_DSTOPTS;
}

static enum tlb_parse_err
parse_ipv6(const uint8_t *b, size_t len, size_t off,
	   const struct tlb_parse_opts *opts, struct tlb_parsed *out)
{
	const uint8_t *ip = b + off;
	size_t avail = len - off;
	size_t pos, end;
	unsigned int n_ext = 0;
	bool is_frag = false, first_frag = true;
	uint8_t nh;

	if (avail < IPV6_HDR_LEN)
		return TLB_PARSE_TRUNC_IP;
	if ((ip[0] >> 4) != 6)
		return TLB_PARSE_BAD_IP_VERSION;
	/* Jumbograms (payload length 0 plus a hop-by-hop option) do not fit
	 * an Ethernet frame; a zero length is simply an empty payload. */
	if (rd16(ip + 4) > avail - IPV6_HDR_LEN)
		return TLB_PARSE_BAD_IP_LEN;
	end = off + IPV6_HDR_LEN + rd16(ip + 4);

	out->key.ip_version = 6;
	memcpy(out->key.src_addr, ip + 8, 16);
	memcpy(out->key.dst_addr, ip + 24, 16);

	nh = ip[6];
	pos = off + IPV6_HDR_LEN;
	while (ip6_nh_is_ext(nh)) {
		size_t hlen;

		if (++n_ext > IP6_MAX_EXT_HDRS)
			return TLB_PARSE_BAD_IP_EXT;
		/* Every extension header is at least 8 bytes long. */
		if (end - pos < 8)
			return TLB_PARSE_BAD_IP_EXT;
		if (nh == IP6_NH_FRAGMENT) {
			uint16_t fo = rd16(b + pos + 2);

			if (is_frag)
				return TLB_PARSE_BAD_IP_EXT;
			is_frag = true;
			first_frag = (fo >> 3) == 0;
			nh = b[pos];
			pos += IP6_FRAG_HDR_LEN;
			/* Past a later fragment's header comes data, not
			 * headers; if it names another extension header the
			 * upper protocol is unknowable, so it may be UDP. */
			if (!first_frag) {
				if (ip6_nh_is_ext(nh))
					return TLB_PARSE_IP_FRAGMENT;
				break;
			}
			continue;
		}
		/* RFC 8200: hop-by-hop options only right after the fixed
		 * header. */
		if (nh == IP6_NH_HOPOPTS && n_ext != 1)
			return TLB_PARSE_BAD_IP_EXT;
		hlen = ((size_t)b[pos + 1] + 1) * 8;
		if (hlen > end - pos)
			return TLB_PARSE_BAD_IP_EXT;
		nh = b[pos];
		pos += hlen;
	}
	out->key.proto = nh;
	return parse_l4(b, pos, end, is_frag, first_frag, opts, out);
}

/* The frame nearly every packet is: Ethernet, IPv4 without options, not a
 * fragment, UDP to or from one of our ports, a well-formed RPC header.
 * Checked in one pass at fixed offsets; anything else (or any check
 * failing) goes the general way, which then reports exactly what is wrong.
 * On success out is what the general path would have filled. */
static inline __attribute__((always_inline)) bool
parse_fast(const uint8_t *b, size_t len, const struct tlb_parse_opts *opts,
	   struct tlb_parsed *out)
{
	enum {
		IP = ETH_HDR_LEN,
		UDP = IP + IPV4_MIN_HDR_LEN,
		RPC = UDP + UDP_HDR_LEN
	};
	const uint8_t *r = b + RPC;
	enum tlb_frame_class want;
	size_t udp_len;
	uint16_t sport, dport, pkt_cnt;

	if (!tlb_fast_layout(b, len, &udp_len))
		return false;
	sport = rd16(b + UDP);
	dport = rd16(b + UDP + 2);
	if (port_is_native(opts, dport))
		want = TLB_FRAME_REQUEST;
	else if (port_is_native(opts, sport) && !port_is_ours(opts, dport))
		want = TLB_FRAME_RESPONSE;
	else
		return false;
	pkt_cnt = rd16(r + TLB_RPC_OFF_PKT_CNT);
	if (rd16(r + TLB_RPC_OFF_MAGIC) != TLB_RPC_MAGIC ||
	    r[TLB_RPC_OFF_VERSION] != TLB_RPC_VERSION ||
	    (want == TLB_FRAME_REQUEST
		     ? r[TLB_RPC_OFF_TYPE] != TLB_MSG_REQUEST
		     : (r[TLB_RPC_OFF_TYPE] != TLB_MSG_RESPONSE &&
			r[TLB_RPC_OFF_TYPE] != TLB_MSG_ERROR)) ||
	    pkt_cnt == 0 || pkt_cnt > TLB_RPC_MAX_PKTS ||
	    rd16(r + TLB_RPC_OFF_PKT_IDX) >= pkt_cnt ||
	    rd16(r + TLB_RPC_OFF_PAYLOAD_LEN) >
		    udp_len - UDP_HDR_LEN - TLB_RPC_HDR_LEN)
		return false;
	/* Every field is written (hdr by hdr_decode), so the whole struct
	 * needs no memset on this path, which most frames take. Of the
	 * IPv6-sized address arrays only the 12 bytes past the IPv4
	 * address need zeroing. */
	out->cls = want;
	out->has_vlan = false;
	out->vlan_tci = 0;
	out->l3_off = IP;
	out->l4_off = UDP;
	out->rpc_off = RPC;
	out->payload_off = RPC + TLB_RPC_HDR_LEN;
	out->proto = TLB_PROTO_TURBOLB;
	out->msg_flags = 0;
	out->key.ip_version = 4;
	out->key.proto = IPPROTO_UDP;
	memcpy(out->key.src_addr, b + IP + 12, 4);
	memset(out->key.src_addr + 4, 0, sizeof(out->key.src_addr) - 4);
	memcpy(out->key.dst_addr, b + IP + 16, 4);
	memset(out->key.dst_addr + 4, 0, sizeof(out->key.dst_addr) - 4);
	out->key.src_port = sport;
	out->key.dst_port = dport;
	hdr_decode(&out->hdr, r);
	return true;
}

enum tlb_parse_err
tlb_parse_frame(const void *buf, size_t len, const struct tlb_parse_opts *opts,
		struct tlb_parsed *out)
{
	const uint8_t *b = buf;
	size_t off = ETH_HDR_LEN;
	uint16_t etype;

	if (b != NULL && parse_fast(b, len, opts, out))
		return TLB_PARSE_OK;

	/* Fields not reached before an error stay zero; cls stays PASS. */
	memset(out, 0, sizeof(*out));
	out->cls = TLB_FRAME_PASS;
	if (b == NULL || len < ETH_HDR_LEN)
		return TLB_PARSE_TRUNC_ETH;
	etype = rd16(b + 12);
	if (etype == ETHERTYPE_VLAN) {
		if (len < ETH_HDR_LEN + VLAN_TAG_LEN)
			return TLB_PARSE_TRUNC_VLAN;
		out->has_vlan = true;
		out->vlan_tci = rd16(b + 14);
		etype = rd16(b + 16);
		off += VLAN_TAG_LEN;
		/* Our ports sit behind at most one tag. A second one
		 * (0x8100 or 0x88a8) is neither IPv4 nor IPv6 below, so
		 * stacked-tag traffic is handed on untouched. */
	}
	out->l3_off = (uint16_t)off;
	if (etype == ETHERTYPE_IPV4)
		return parse_ipv4(b, len, off, opts, out);
	if (etype == ETHERTYPE_IPV6)
		return parse_ipv6(b, len, off, opts, out);
	return TLB_PARSE_OK;
}

static uint64_t
csum_add(uint64_t sum, const uint8_t *p, size_t n)
{
	for (; n > 1; p += 2, n -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	/* An odd tail is padded with a zero byte (RFC 1071). */
	if (n != 0)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t
csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static void
ipv4_set_hdr_csum(uint8_t *ip, size_t ihl)
{
	wr16(ip + 10, 0);
	wr16(ip + 10, (uint16_t)~csum_fold(csum_add(0, ip, ihl)));
}

/* UDP checksum over the pseudo header and [udp, udp + udp_len). For IPv6
 * the pseudo header uses the fixed header's destination: with a routing
 * header whose segments are all used up (the only kind we ever see at the
 * final hop or echo back) that is the final destination. */
static void
udp_set_csum(uint8_t *ip, int ip_version, uint8_t *udp, size_t udp_len)
{
	uint64_t sum;
	uint16_t c;

	if (ip_version == 4)
		sum = csum_add(0, ip + 12, 8);
	else
		sum = csum_add(0, ip + 8, 32);
	sum += IPPROTO_UDP;
	sum += udp_len;
	wr16(udp + 6, 0);
	sum = csum_add(sum, udp, udp_len);
	c = (uint16_t)~csum_fold(sum);
	/* Zero on the wire means "no checksum" (IPv4) or is invalid (IPv6);
	 * ones' complement arithmetic lets us send its twin instead. */
	if (c == 0)
		c = 0xffff;
	wr16(udp + 6, c);
}

size_t
tlb_build_frame(void *buf, size_t cap, const struct tlb_frame_addrs *a,
		const struct tlb_rpc_hdr *h, const void *payload,
		uint16_t payload_len)
{
	uint8_t *b = buf;
	struct tlb_rpc_hdr hdr;
	size_t l3, l4, ip_hlen, udp_len, total;
	int v;

	if (b == NULL || a == NULL || h == NULL)
		return 0;
	v = a->key.ip_version;
	if (v != 4 && v != 6)
		return 0;
	l3 = ETH_HDR_LEN + (a->has_vlan ? VLAN_TAG_LEN : 0);
	ip_hlen = v == 4 ? IPV4_MIN_HDR_LEN : IPV6_HDR_LEN;
	l4 = l3 + ip_hlen;
	udp_len = UDP_HDR_LEN + TLB_RPC_HDR_LEN + (size_t)payload_len;
	/* IPv4 total length covers its header; IPv6 payload length does not. */
	if ((v == 4 ? ip_hlen : 0) + udp_len > IP_MAX_LEN)
		return 0;
	total = l4 + udp_len;
	if (cap < total)
		return 0;

	/* Payload first and with memmove: a caller may have staged it inside
	 * buf already, and the headers below must not clobber it first. */
	if (payload_len != 0) {
		if (payload != NULL)
			memmove(b + l4 + UDP_HDR_LEN + TLB_RPC_HDR_LEN, payload,
				payload_len);
		else
			memset(b + l4 + UDP_HDR_LEN + TLB_RPC_HDR_LEN, 0,
			       payload_len);
	}

	memcpy(b, a->dst_mac, ETH_ADDR_LEN);
	memcpy(b + ETH_ADDR_LEN, a->src_mac, ETH_ADDR_LEN);
	if (a->has_vlan) {
		wr16(b + 12, ETHERTYPE_VLAN);
		wr16(b + 14, a->vlan_tci);
	}
	wr16(b + l3 - 2, v == 4 ? ETHERTYPE_IPV4 : ETHERTYPE_IPV6);

	if (v == 4) {
		uint8_t *ip = b + l3;

		ip[0] = 0x45;
		ip[1] = 0;
		wr16(ip + 2, (uint16_t)(ip_hlen + udp_len));
		wr16(ip + 4, 0);
		/* DF with id 0 (RFC 6864): we never fragment. */
		wr16(ip + 6, IPV4_DF);
		ip[8] = IP_TTL_DEFAULT;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, a->key.src_addr, 4);
		memcpy(ip + 16, a->key.dst_addr, 4);
		ipv4_set_hdr_csum(ip, ip_hlen);
	} else {
		uint8_t *ip = b + l3;

		wr32(ip, 6u << 28);
		wr16(ip + 4, (uint16_t)udp_len);
		ip[6] = IPPROTO_UDP;
		ip[7] = IP_TTL_DEFAULT;
		memcpy(ip + 8, a->key.src_addr, 16);
		memcpy(ip + 24, a->key.dst_addr, 16);
	}

	wr16(b + l4, a->key.src_port);
	wr16(b + l4 + 2, a->key.dst_port);
	wr16(b + l4 + 4, (uint16_t)udp_len);

	hdr = *h;
	hdr.payload_len = payload_len;
	tlb_rpc_hdr_encode(b + l4 + UDP_HDR_LEN, &hdr);

	udp_set_csum(b + l3, v, b + l4, udp_len);
	return total;
}

size_t
tlb_make_response(void *buf, size_t len, const struct tlb_parsed *p,
		  enum tlb_msg_type type, uint16_t status, uint16_t server_core,
		  uint32_t service_ns, uint16_t resp_payload_len)
{
	uint8_t *b = buf;
	uint8_t tmp[16];
	struct tlb_rpc_hdr hdr;
	size_t l3, l4, udp_len, total;
	uint8_t *ip;
	uint16_t port;

	if (b == NULL || p == NULL || p->cls != TLB_FRAME_REQUEST ||
	    p->proto != TLB_PROTO_TURBOLB)
		return 0;
	if (type != TLB_MSG_RESPONSE && type != TLB_MSG_ERROR)
		return 0;
	l3 = p->l3_off;
	l4 = p->l4_off;
	/* p is trusted to come from tlb_parse_frame on this very buffer, but
	 * re-check the layout we are about to write through: a stale or
	 * hand-made p must not make us scribble outside buf. */
	if (l3 < ETH_HDR_LEN || p->rpc_off != l4 + UDP_HDR_LEN ||
	    p->payload_off != p->rpc_off + TLB_RPC_HDR_LEN ||
	    p->payload_off > len || resp_payload_len > len - p->payload_off)
		return 0;
	ip = b + l3;
	if (p->key.ip_version == 4) {
		if (l4 < l3 + IPV4_MIN_HDR_LEN ||
		    (size_t)(ip[0] & 0x0f) * 4 != l4 - l3 || (ip[0] >> 4) != 4)
			return 0;
	} else if (p->key.ip_version == 6) {
		if (l4 < l3 + IPV6_HDR_LEN || (ip[0] >> 4) != 6)
			return 0;
	} else {
		return 0;
	}
	udp_len = UDP_HDR_LEN + TLB_RPC_HDR_LEN + (size_t)resp_payload_len;
	if (udp_len + (p->key.ip_version == 4 ? l4 : l4 - IPV6_HDR_LEN) - l3 >
	    IP_MAX_LEN)
		return 0;
	total = l4 + udp_len;

	memcpy(tmp, b, ETH_ADDR_LEN);
	memcpy(b, b + ETH_ADDR_LEN, ETH_ADDR_LEN);
	memcpy(b + ETH_ADDR_LEN, tmp, ETH_ADDR_LEN);

	/* Options and extension headers are kept as they are. The hop count
	 * is reset because this is a new packet: echoing what was left of
	 * the request's would make far clients unreachable. */
	if (p->key.ip_version == 4) {
		memcpy(tmp, ip + 12, 4);
		memcpy(ip + 12, ip + 16, 4);
		memcpy(ip + 16, tmp, 4);
		wr16(ip + 2, (uint16_t)(total - l3));
		ip[8] = IP_TTL_DEFAULT;
		ipv4_set_hdr_csum(ip, l4 - l3);
	} else {
		memcpy(tmp, ip + 8, 16);
		memcpy(ip + 8, ip + 24, 16);
		memcpy(ip + 24, tmp, 16);
		wr16(ip + 4, (uint16_t)(total - l3 - IPV6_HDR_LEN));
		ip[7] = IP_TTL_DEFAULT;
	}

	port = rd16(b + l4);
	wr16(b + l4, rd16(b + l4 + 2));
	wr16(b + l4 + 2, port);
	wr16(b + l4 + 4, (uint16_t)udp_len);

	/* Start from the parsed request so everything not rewritten here
	 * (req_id, client_ts, work_ns, svc_class, flags, hint) is echoed. */
	hdr = p->hdr;
	hdr.type = (uint8_t)type;
	hdr.status = status;
	hdr.server_core = server_core;
	hdr.service_ns = service_ns;
	hdr.payload_len = resp_payload_len;
	hdr.reserved = 0;
	/* One request message gets one response packet; the response path
	 * counts a completion per message. */
	hdr.pkt_idx = 0;
	hdr.pkt_cnt = 1;
	tlb_rpc_hdr_encode(b + p->rpc_off, &hdr);

	udp_set_csum(ip, p->key.ip_version, b + l4, udp_len);
	return total;
}

void
tlb_rpc_set_work_ns(void *frame, const struct tlb_parsed *p, uint32_t work_ns)
{
	uint8_t *b = frame;

	/* Called per request, so the checksum is patched rather than
	 * recomputed over the whole datagram; work_ns sits at an even offset
	 * from the UDP header, so its halves line up with the checksum's
	 * words. IPv4 may carry no UDP checksum at all; it keeps none. */
	if (b == NULL || p == NULL || p->cls == TLB_FRAME_PASS ||
	    p->proto != TLB_PROTO_TURBOLB ||
	    p->rpc_off != p->l4_off + UDP_HDR_LEN)
		return;
	tlb_csum_patch_be32(b + p->rpc_off + TLB_RPC_OFF_WORK_NS,
			    b + p->l4_off + 6, work_ns, p->key.ip_version == 4);
}
