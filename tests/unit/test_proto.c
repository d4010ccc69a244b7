/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests: RPC wire protocol (parse/classify, build, make_response).
 * Run under ASan: the truncation and mutation tests copy every frame into
 * an allocation of exactly its length so that any read past buf[len) is
 * caught.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/proto.h"
#include "turbolb/proto_fast.h"

#define FRAME_MAX 2048
#define SRV_PORT  7000
#define CLI_PORT  40000

/* Which error codes some test has produced; checked last. */
static bool seen_err[TLB_PARSE_ERR_MAX];

static const uint8_t cli_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t srv_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
static const uint8_t cli_v4[4] = {10, 0, 0, 1};
static const uint8_t srv_v4[4] = {10, 0, 0, 2};
static const uint8_t cli_v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x01};
static const uint8_t srv_v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x02};

static struct tlb_parse_opts
std_opts(void)
{
	struct tlb_parse_opts o = {
		.udp_ports = {9000, 7001, SRV_PORT},
		.n_udp_ports = 3,
	};

	return o;
}

static struct tlb_rpc_hdr
std_hdr(void)
{
	struct tlb_rpc_hdr h = {
		.magic = TLB_RPC_MAGIC,
		.version = TLB_RPC_VERSION,
		.type = TLB_MSG_REQUEST,
		.flags = TLB_RPC_F_HINT,
		.svc_class = 3,
		.req_id = 0x0102030405060708ull,
		.pkt_idx = 0,
		.pkt_cnt = 1,
		.status = 0,
		.svc_hint_ns = 1000,
		.work_ns = 2000,
		.client_ts = 0x1122334455667788ull,
	};

	return h;
}

static struct tlb_frame_addrs
std_addrs(int v, bool vlan)
{
	struct tlb_frame_addrs a = {.has_vlan = vlan, .vlan_tci = 0x2064};

	memcpy(a.src_mac, cli_mac, 6);
	memcpy(a.dst_mac, srv_mac, 6);
	a.key.ip_version = (uint8_t)v;
	a.key.proto = 17;
	if (v == 4) {
		memcpy(a.key.src_addr, cli_v4, 4);
		memcpy(a.key.dst_addr, srv_v4, 4);
	} else {
		memcpy(a.key.src_addr, cli_v6, 16);
		memcpy(a.key.dst_addr, srv_v6, 16);
	}
	a.key.src_port = CLI_PORT;
	a.key.dst_port = SRV_PORT;
	return a;
}

/* A valid request frame with payload bytes 0, 1, 2, ... */
static size_t
build_req(uint8_t *buf, int v, bool vlan, uint16_t payload_len)
{
	struct tlb_frame_addrs a = std_addrs(v, vlan);
	struct tlb_rpc_hdr h = std_hdr();
	uint8_t payload[1500];
	size_t n;

	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	assert_true(payload_len <= sizeof(payload));
	n = tlb_build_frame(buf, FRAME_MAX, &a, &h, payload, payload_len);
	assert_true(n > 0);
	return n;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static size_t
l3_of(const uint8_t *f)
{
	return get16(f + 12) == 0x8100 ? 18 : 14;
}

/* Parses f as the unit under test does, from an exact-size heap copy. */
static enum tlb_parse_err
parse_exact(const uint8_t *f, size_t len, const struct tlb_parse_opts *o,
	    struct tlb_parsed *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum tlb_parse_err e;

	assert_non_null(copy);
	memcpy(copy, f, len);
	e = tlb_parse_frame(copy, len, o, out);
	free(copy);
	return e;
}

static void
expect_err(const uint8_t *f, size_t len, enum tlb_parse_err want)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	enum tlb_parse_err e = parse_exact(f, len, &o, &p);

	if (e != want)
		print_error("got %s, want %s\n", tlb_parse_err_str(e),
			    tlb_parse_err_str(want));
	assert_int_equal(e, want);
	if (want != TLB_PARSE_OK)
		assert_int_equal(p.cls, TLB_FRAME_PASS);
	seen_err[want] = true;
}

static void
expect_cls(const uint8_t *f, size_t len, enum tlb_frame_class cls)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;

	assert_int_equal(parse_exact(f, len, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, cls);
}

/* Independent ones' complement sum: 16-bit words, end-around carry folded
 * at every step (RFC 1071's alternative formulation), over two
 * concatenated pieces. A correct checksum makes the total 0xffff. */
static uint16_t
ones_sum(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	size_t n = na + nb;
	uint8_t *all = calloc(1, n + 1);
	uint32_t s = 0;

	assert_non_null(all);
	if (na != 0)
		memcpy(all, a, na);
	if (nb != 0)
		memcpy(all + na, b, nb);
	for (size_t i = 0; i < n; i += 2) {
		s += (uint32_t)all[i] << 8 | all[i + 1];
		if (s > 0xffff)
			s -= 0xffff;
	}
	free(all);
	return (uint16_t)s;
}

static void
check_ip_udp_csums(const uint8_t *f, const struct tlb_parsed *p)
{
	const uint8_t *ip = f + p->l3_off;
	const uint8_t *udp = f + p->l4_off;
	uint16_t ulen = get16(udp + 4);
	uint8_t ph[40];
	size_t phl;

	assert_int_not_equal(get16(udp + 6), 0);
	if (p->key.ip_version == 4) {
		size_t ihl = (size_t)(ip[0] & 15) * 4;

		assert_int_equal(ones_sum(ip, ihl, NULL, 0), 0xffff);
		memcpy(ph, ip + 12, 8);
		ph[8] = 0;
		ph[9] = 17;
		put16(ph + 10, ulen);
		phl = 12;
	} else {
		memcpy(ph, ip + 8, 32);
		memset(ph + 32, 0, 8);
		put16(ph + 34, ulen);
		ph[39] = 17;
		phl = 40;
	}
	assert_int_equal(ones_sum(ph, phl, udp, ulen), 0xffff);
}

/* Inserts IPv6 extension headers (types[i], lens[i] bytes each, lengths
 * multiples of 8) right after the fixed header of an IPv6 frame, chaining
 * next-header fields and fixing the payload length. Returns new length. */
static size_t
insert_v6_ext(uint8_t *f, size_t len, const uint8_t *types, const size_t *lens,
	      unsigned int n)
{
	size_t l3 = l3_of(f), at = l3 + 40, total = 0, pos;
	uint8_t upper = f[l3 + 6];

	for (unsigned int i = 0; i < n; i++)
		total += lens[i];
	assert_true(len + total <= FRAME_MAX);
	memmove(f + at + total, f + at, len - at);
	pos = at;
	for (unsigned int i = 0; i < n; i++) {
		memset(f + pos, 0, lens[i]);
		f[pos] = i + 1 < n ? types[i + 1] : upper;
		if (types[i] != 44)
			f[pos + 1] = (uint8_t)(lens[i] / 8 - 1);
		pos += lens[i];
	}
	f[l3 + 6] = n ? types[0] : upper;
	put16(f + l3 + 4, (uint16_t)(get16(f + l3 + 4) + total));
	return len + total;
}

/* Adds 4 bytes of IPv4 options (NOP NOP NOP EOL). */
static size_t
insert_v4_opts(uint8_t *f, size_t len)
{
	size_t l3 = l3_of(f), at = l3 + 20;
	static const uint8_t opt[4] = {1, 1, 1, 0};

	memmove(f + at + 4, f + at, len - at);
	memcpy(f + at, opt, 4);
	f[l3] = 0x46;
	put16(f + l3 + 2, (uint16_t)(get16(f + l3 + 2) + 4));
	put16(f + l3 + 10, 0);
	put16(f + l3 + 10, (uint16_t)~ones_sum(f + l3, 24, NULL, 0));
	return len + 4;
}

static void
test_err_str(void **state)
{
	static const char *const want[TLB_PARSE_ERR_MAX] = {
		"ok",
		"trunc_eth",
		"trunc_vlan",
		"trunc_ip",
		"bad_ip_version",
		"bad_ihl",
		"bad_ip_len",
		"ip_fragment",
		"bad_ip_ext",
		"trunc_udp",
		"bad_udp_len",
		"trunc_rpc",
		"bad_magic",
		"bad_version",
		"bad_type",
		"bad_payload_len",
		"bad_pkt_count",
		"bad_pkt_index",
		"trunc_msg",
	};

	(void)state;
	for (int i = 0; i < TLB_PARSE_ERR_MAX; i++) {
		const char *s = tlb_parse_err_str((enum tlb_parse_err)i);

		assert_non_null(s);
		assert_string_equal(s, want[i]);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(
				s, tlb_parse_err_str((enum tlb_parse_err)j));
		assert_string_not_equal(s, "unknown");
	}
	assert_string_equal(tlb_parse_err_str(TLB_PARSE_ERR_MAX), "unknown");
	assert_string_equal(tlb_parse_err_str((enum tlb_parse_err)1000),
			    "unknown");
	assert_string_equal(tlb_parse_err_str((enum tlb_parse_err) - 1),
			    "unknown");
}

static void
test_hdr_wire_layout(void **state)
{
	struct tlb_rpc_hdr h = {
		.magic = 0x5442,
		.version = 0x01,
		.type = 0x02,
		.flags = 0x0304,
		.svc_class = 0x0506,
		.req_id = 0x0708090a0b0c0d0eull,
		.pkt_idx = 0x0f10,
		.pkt_cnt = 0x1112,
		.payload_len = 0x1314,
		.status = 0x1516,
		.svc_hint_ns = 0x1718191a,
		.work_ns = 0x1b1c1d1e,
		.client_ts = 0x1f20212223242526ull,
		.server_core = 0x2728,
		.reserved = 0x292a,
		.service_ns = 0x2b2c2d2e,
	};
	static const uint8_t want[TLB_RPC_HDR_LEN] = {
		0x54, 0x42, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
		0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c,
		0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
		0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e,
	};
	uint8_t wire[TLB_RPC_HDR_LEN + 2];
	struct tlb_rpc_hdr d;

	(void)state;
	memset(wire, 0xee, sizeof(wire));
	/* Odd address: encode/decode must not assume alignment. */
	tlb_rpc_hdr_encode(wire + 1, &h);
	assert_memory_equal(wire + 1, want, TLB_RPC_HDR_LEN);
	assert_int_equal(wire[0], 0xee);
	assert_int_equal(wire[TLB_RPC_HDR_LEN + 1], 0xee);
	memset(&d, 0, sizeof(d));
	tlb_rpc_hdr_decode(&d, wire + 1);
	assert_memory_equal(&d, &h, sizeof(h));
}

static void
check_roundtrip(int v, bool vlan)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_rpc_hdr h = std_hdr();
	uint8_t f[FRAME_MAX];
	struct tlb_parsed p;
	size_t n, l3 = vlan ? 18 : 14, l4 = l3 + (v == 4 ? 20 : 40);
	const uint16_t plen = 200;

	n = build_req(f, v, vlan, plen);
	assert_int_equal(n, l4 + 8 + 48 + plen);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.has_vlan, vlan);
	if (vlan) {
		assert_int_equal(p.vlan_tci, 0x2064);
		assert_int_equal(get16(f + 12), 0x8100);
	}
	assert_int_equal(get16(f + l3 - 2), v == 4 ? 0x0800 : 0x86dd);
	assert_memory_equal(f, srv_mac, 6);
	assert_memory_equal(f + 6, cli_mac, 6);
	assert_int_equal(p.l3_off, l3);
	assert_int_equal(p.l4_off, l4);
	assert_int_equal(p.rpc_off, l4 + 8);
	assert_int_equal(p.payload_off, l4 + 8 + 48);
	assert_int_equal(p.key.ip_version, v);
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(p.key.src_port, CLI_PORT);
	assert_int_equal(p.key.dst_port, SRV_PORT);
	if (v == 4) {
		assert_memory_equal(p.key.src_addr, cli_v4, 4);
		assert_memory_equal(p.key.dst_addr, srv_v4, 4);
		/* TTL 64, DF, id 0 */
		assert_int_equal(f[l3 + 8], 64);
		assert_int_equal(get16(f + l3 + 6), 0x4000);
		assert_int_equal(get16(f + l3 + 4), 0);
		assert_int_equal(get16(f + l3 + 2), n - l3);
	} else {
		assert_memory_equal(p.key.src_addr, cli_v6, 16);
		assert_memory_equal(p.key.dst_addr, srv_v6, 16);
		assert_int_equal(f[l3] >> 4, 6);
		assert_int_equal(f[l3 + 6], 17);
		assert_int_equal(f[l3 + 7], 64);
		assert_int_equal(get16(f + l3 + 4), n - l3 - 40);
	}
	h.payload_len = plen;
	assert_memory_equal(&p.hdr, &h, sizeof(h));
	for (unsigned int i = 0; i < plen; i++)
		assert_int_equal(f[p.payload_off + i], (uint8_t)i);
	check_ip_udp_csums(f, &p);
}

static void
test_roundtrip_v4(void **state)
{
	(void)state;
	check_roundtrip(4, false);
}

static void
test_roundtrip_v4_vlan(void **state)
{
	(void)state;
	check_roundtrip(4, true);
}

static void
test_roundtrip_v6(void **state)
{
	(void)state;
	check_roundtrip(6, false);
}

static void
test_roundtrip_v6_vlan(void **state)
{
	(void)state;
	check_roundtrip(6, true);
}

/* Values computed offline, independently of this code: the IPv4 header
 * is the well-known example whose checksum is 0xb861; UDP sums were
 * computed with a separate script over the same bytes. */
static void
test_build_known_checksums(void **state)
{
	struct tlb_frame_addrs a = std_addrs(4, false);
	struct tlb_rpc_hdr h = std_hdr();
	static const uint8_t s4[4] = {192, 168, 0, 1};
	static const uint8_t d4[4] = {192, 168, 0, 199};
	static const uint8_t ip_want[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	uint8_t payload[39], f[FRAME_MAX];
	size_t n;

	(void)state;
	for (unsigned int i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)i;
	memcpy(a.key.src_addr, s4, 4);
	memcpy(a.key.dst_addr, d4, 4);
	n = tlb_build_frame(f, sizeof(f), &a, &h, payload, sizeof(payload));
	assert_int_equal(n, 14 + 0x73);
	assert_memory_equal(f + 14, ip_want, 20);
	assert_int_equal(get16(f + 34 + 6), 0xc583);

	a = std_addrs(6, false);
	n = tlb_build_frame(f, sizeof(f), &a, &h, payload, sizeof(payload));
	assert_int_equal(n, 14 + 40 + 8 + 48 + 39);
	assert_int_equal(get16(f + 54 + 6), 0xec27);
}

/* A checksum that computes to 0 must go out as 0xffff: zero means "none"
 * in IPv4 and is illegal in IPv6. Choosing the first payload word equal to
 * the checksum of the frame with a zero word there forces that case. */
static void
test_build_zero_checksum(void **state)
{
	struct tlb_rpc_hdr h = std_hdr();
	uint8_t f[FRAME_MAX], payload[2] = {0, 0};
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;

	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct tlb_frame_addrs a = std_addrs(v, false);
		size_t l4 = v == 4 ? 34 : 54, n;
		uint16_t c;

		n = tlb_build_frame(f, sizeof(f), &a, &h, payload, 2);
		c = get16(f + l4 + 6);
		payload[0] = (uint8_t)(c >> 8);
		payload[1] = (uint8_t)c;
		n = tlb_build_frame(f, sizeof(f), &a, &h, payload, 2);
		assert_int_equal(get16(f + l4 + 6), 0xffff);
		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		check_ip_udp_csums(f, &p);
		payload[0] = payload[1] = 0;
	}
}

static void
test_build_cap_and_args(void **state)
{
	struct tlb_frame_addrs a = std_addrs(4, true);
	struct tlb_rpc_hdr h = std_hdr();
	uint8_t f[FRAME_MAX];
	size_t need = 18 + 20 + 8 + 48 + 10;

	(void)state;
	memset(f, 0xaa, sizeof(f));
	assert_int_equal(tlb_build_frame(f, need - 1, &a, &h, NULL, 10), 0);
	assert_int_equal(f[0], 0xaa); /* nothing written when it does not fit */
	assert_int_equal(tlb_build_frame(f, need, &a, &h, NULL, 10), need);
	/* No padding beyond the frame; NULL payload means zeros. */
	assert_int_equal(f[need], 0xaa);
	for (size_t i = need - 10; i < need; i++)
		assert_int_equal(f[i], 0);
	/* A small frame is not padded to 60 bytes either: that is the NIC's
	 * job. (Our smallest frame is 90 bytes, so check the length only.) */
	a.has_vlan = false;
	assert_int_equal(tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0), 90);

	a.key.ip_version = 5;
	assert_int_equal(tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0), 0);
	a.key.ip_version = 0;
	assert_int_equal(tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0), 0);
}

static void
test_build_too_long(void **state)
{
	struct tlb_frame_addrs a = std_addrs(4, false);
	struct tlb_rpc_hdr h = std_hdr();
	size_t cap = 70000;
	uint8_t *f = calloc(1, cap);
	uint16_t max4 = 65535 - 20 - 8 - 48, max6 = 65535 - 8 - 48;
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	size_t n;

	(void)state;
	assert_non_null(f);
	/* The IP length fields are 16 bits: beyond that, refuse. */
	assert_int_equal(tlb_build_frame(f, cap, &a, &h, NULL, max4 + 1), 0);
	n = tlb_build_frame(f, cap, &a, &h, NULL, max4);
	assert_int_equal(n, 14 + 65535);
	assert_int_equal(tlb_parse_frame(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.hdr.payload_len, max4);
	a = std_addrs(6, false);
	assert_int_equal(tlb_build_frame(f, cap, &a, &h, NULL, max6 + 1), 0);
	n = tlb_build_frame(f, cap, &a, &h, NULL, max6);
	assert_int_equal(n, 14 + 40 + 65535);
	assert_int_equal(tlb_parse_frame(f, n, &o, &p), TLB_PARSE_OK);
	check_ip_udp_csums(f, &p);
	free(f);
}

static void
test_build_payload_in_place(void **state)
{
	struct tlb_frame_addrs a = std_addrs(6, true);
	struct tlb_rpc_hdr h = std_hdr();
	size_t off = 18 + 40 + 8 + 48;
	uint8_t f[FRAME_MAX];
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;

	(void)state;
	/* A payload staged at its final place in buf survives the build. */
	for (unsigned int i = 0; i < 64; i++)
		f[off + i] = (uint8_t)(0x80 + i);
	assert_int_equal(tlb_build_frame(f, sizeof(f), &a, &h, f + off, 64),
			 off + 64);
	assert_int_equal(parse_exact(f, off + 64, &o, &p), TLB_PARSE_OK);
	for (unsigned int i = 0; i < 64; i++)
		assert_int_equal(f[off + i], 0x80 + i);
	check_ip_udp_csums(f, &p);
	/* Staged a little off its final place: the copy may overlap. */
	for (unsigned int i = 0; i < 64; i++)
		f[off + 3 + i] = (uint8_t)(0x40 + i);
	assert_int_equal(tlb_build_frame(f, sizeof(f), &a, &h, f + off + 3, 64),
			 off + 64);
	for (unsigned int i = 0; i < 64; i++)
		assert_int_equal(f[off + i], 0x40 + i);
}

static void
test_err_trunc_eth(void **state)
{
	uint8_t f[FRAME_MAX];

	(void)state;
	build_req(f, 4, false, 0);
	expect_err(f, 0, TLB_PARSE_TRUNC_ETH);
	expect_err(f, 13, TLB_PARSE_TRUNC_ETH);
}

static void
test_err_trunc_vlan(void **state)
{
	uint8_t f[FRAME_MAX];

	(void)state;
	build_req(f, 4, true, 0);
	for (size_t n = 14; n < 18; n++)
		expect_err(f, n, TLB_PARSE_TRUNC_VLAN);
}

static void
test_err_trunc_ip(void **state)
{
	uint8_t f[FRAME_MAX];

	(void)state;
	build_req(f, 4, false, 0);
	expect_err(f, 14, TLB_PARSE_TRUNC_IP);
	expect_err(f, 14 + 19, TLB_PARSE_TRUNC_IP);
	build_req(f, 4, true, 0);
	expect_err(f, 18 + 19, TLB_PARSE_TRUNC_IP);
	build_req(f, 6, false, 0);
	expect_err(f, 14 + 39, TLB_PARSE_TRUNC_IP);
}

static void
test_err_bad_ip_version(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	f[14] = 0x65;
	expect_err(f, n, TLB_PARSE_BAD_IP_VERSION);
	n = build_req(f, 6, true, 0);
	f[18] = 0x45;
	expect_err(f, n, TLB_PARSE_BAD_IP_VERSION);
}

static void
test_err_bad_ihl(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	f[14] = 0x44;
	expect_err(f, n, TLB_PARSE_BAD_IHL);
	f[14] = 0x40;
	expect_err(f, n, TLB_PARSE_BAD_IHL);
	/* 60-byte header in a frame with 40 bytes of IP. */
	f[14] = 0x4f;
	expect_err(f, 14 + 40, TLB_PARSE_BAD_IHL);
}

static void
test_err_bad_ip_len(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 16);
	put16(f + 16, (uint16_t)(n - 14 + 1));
	expect_err(f, n, TLB_PARSE_BAD_IP_LEN);
	put16(f + 16, 19);
	expect_err(f, n, TLB_PARSE_BAD_IP_LEN);
	n = build_req(f, 6, false, 16);
	put16(f + 18, (uint16_t)(n - 54 + 1));
	expect_err(f, n, TLB_PARSE_BAD_IP_LEN);
	/* A cut-off frame whose headers are all there. */
	n = build_req(f, 6, true, 16);
	expect_err(f, n - 1, TLB_PARSE_BAD_IP_LEN);
}

static void
test_err_ip_fragment_v4(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* First fragment (MF) to our port. */
	n = build_req(f, 4, false, 16);
	put16(f + 20, 0x2000);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* DF plus MF is odd but still a fragment. */
	put16(f + 20, 0x6000);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Later fragment: no UDP header inside, whatever the bytes say. */
	put16(f + 20, 0x0001);
	put16(f + 36, 5353);
	put16(f + 34, 5353);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* First fragment of someone else's datagram: pass. */
	put16(f + 20, 0x2000);
	expect_cls(f, n, TLB_FRAME_PASS);
	/* First fragment from our port (a response). */
	put16(f + 34, SRV_PORT);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Fragments of non-UDP traffic pass. */
	f[23] = 1;
	put16(f + 20, 0x0001);
	expect_cls(f, n, TLB_FRAME_PASS);
	put16(f + 20, 0x2000);
	expect_cls(f, n, TLB_FRAME_PASS);
	/* First fragment too short to show ports: cannot be classified. */
	n = build_req(f, 4, false, 0);
	put16(f + 20, 0x2000);
	put16(f + 16, 20 + 4);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
}

static void
test_err_ip_fragment_v6(void **state)
{
	static const uint8_t frag[1] = {44};
	static const size_t frag_len[1] = {8};
	static const uint8_t dfrag[2] = {60, 44};
	static const size_t dfrag_len[2] = {8, 8};
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* First fragment (offset 0, M=1) to our port. */
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, frag, frag_len, 1);
	put16(f + 54 + 2, 0x0001);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Atomic fragment (offset 0, M=0): still not reassembled by us. */
	put16(f + 54 + 2, 0x0000);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Later fragment. */
	put16(f + 54 + 2, 0x00a8);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Later fragment whose next header is an extension: unknown. */
	f[54] = 60;
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
	/* Later fragment of ICMPv6: pass. */
	f[54] = 58;
	expect_cls(f, n, TLB_FRAME_PASS);
	/* First fragment of a datagram between other ports: pass. */
	f[54] = 17;
	put16(f + 54 + 2, 0x0001);
	put16(f + 62, 5353);
	put16(f + 64, 5353);
	expect_cls(f, n, TLB_FRAME_PASS);
	/* Destination options before the fragment header. */
	n = build_req(f, 6, true, 16);
	n = insert_v6_ext(f, n, dfrag, dfrag_len, 2);
	put16(f + 18 + 40 + 8 + 2, 0x0001);
	expect_err(f, n, TLB_PARSE_IP_FRAGMENT);
}

static void
test_err_bad_ip_ext(void **state)
{
	static const uint8_t nine[9] = {60, 60, 60, 60, 60, 60, 60, 60, 60};
	static const size_t nine_len[9] = {8, 8, 8, 8, 8, 8, 8, 8, 8};
	static const uint8_t hbh2[2] = {60, 0};
	static const size_t two_len[2] = {8, 8};
	static const uint8_t frag2[2] = {44, 44};
	static const uint8_t one[1] = {60};
	static const size_t one_len[1] = {16};
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* Eight is the bound and is fine; nine is not. */
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, nine, nine_len, 8);
	expect_cls(f, n, TLB_FRAME_REQUEST);
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, nine, nine_len, 9);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	/* Hop-by-hop not first. */
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, hbh2, two_len, 2);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	/* Two fragment headers. */
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, frag2, two_len, 2);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	/* Header length runs past the IPv6 payload. */
	n = build_req(f, 6, false, 16);
	n = insert_v6_ext(f, n, one, one_len, 1);
	f[55] = 200;
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	/* Header itself cut short by the payload length. */
	n = build_req(f, 6, false, 16);
	f[20] = 60;
	put16(f + 18, 4);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	put16(f + 18, 0);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	/* A fragment header cut short (the frame has the bytes). */
	f[20] = 44;
	put16(f + 18, 4);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
	put16(f + 18, 7);
	expect_err(f, n, TLB_PARSE_BAD_IP_EXT);
}

static void
test_err_trunc_udp(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* The frame has the bytes, the IP length says they are not UDP. */
	n = build_req(f, 4, false, 0);
	put16(f + 16, 20 + 7);
	expect_err(f, n, TLB_PARSE_TRUNC_UDP);
	n = build_req(f, 6, false, 0);
	put16(f + 18, 7);
	expect_err(f, n, TLB_PARSE_TRUNC_UDP);
	put16(f + 18, 0);
	expect_err(f, n, TLB_PARSE_TRUNC_UDP);
}

static void
test_err_bad_udp_len(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 16);
	put16(f + 38, 7);
	expect_err(f, n, TLB_PARSE_BAD_UDP_LEN);
	put16(f + 38, 0);
	expect_err(f, n, TLB_PARSE_BAD_UDP_LEN);
	put16(f + 38, (uint16_t)(n - 34 + 1));
	expect_err(f, n, TLB_PARSE_BAD_UDP_LEN);
	n = build_req(f, 6, false, 16);
	put16(f + 58, (uint16_t)(n - 54 + 1));
	expect_err(f, n, TLB_PARSE_BAD_UDP_LEN);
}

static void
test_err_trunc_rpc(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	put16(f + 38, 8 + 47);
	expect_err(f, n, TLB_PARSE_TRUNC_RPC);
	put16(f + 38, 8);
	expect_err(f, n, TLB_PARSE_TRUNC_RPC);
	n = build_req(f, 6, true, 0);
	put16(f + 18 + 40 + 4, 8 + 47);
	expect_err(f, n, TLB_PARSE_TRUNC_RPC);
}

static void
test_err_bad_magic(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	put16(f + 42, 0x4254);
	expect_err(f, n, TLB_PARSE_BAD_MAGIC);
}

static void
test_err_bad_version(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	f[44] = 0;
	expect_err(f, n, TLB_PARSE_BAD_VERSION);
	f[44] = 2;
	expect_err(f, n, TLB_PARSE_BAD_VERSION);
}

static void
test_err_bad_type(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	f[45] = 0;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	f[45] = 4;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	f[45] = 255;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	/* Responses and errors sent to our port. */
	f[45] = TLB_MSG_RESPONSE;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	f[45] = TLB_MSG_ERROR;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	/* A request coming from our port. */
	put16(f + 34, SRV_PORT);
	put16(f + 36, CLI_PORT);
	f[45] = TLB_MSG_REQUEST;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
	f[45] = 0;
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
}

static void
test_err_bad_payload_len(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 10);
	put16(f + 42 + 20, 11);
	expect_err(f, n, TLB_PARSE_BAD_PAYLOAD_LEN);
	put16(f + 42 + 20, 0xffff);
	expect_err(f, n, TLB_PARSE_BAD_PAYLOAD_LEN);
	/* Less than the datagram is fine. */
	put16(f + 42 + 20, 9);
	expect_cls(f, n, TLB_FRAME_REQUEST);
	/* The UDP length, not the frame, bounds the payload. */
	put16(f + 42 + 20, 10);
	put16(f + 38, (uint16_t)(get16(f + 38) - 1));
	expect_err(f, n, TLB_PARSE_BAD_PAYLOAD_LEN);
}

static void
test_err_bad_pkt_count(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	put16(f + 42 + 18, 0);
	expect_err(f, n, TLB_PARSE_BAD_PKT_COUNT);
	put16(f + 42 + 18, TLB_RPC_MAX_PKTS + 1);
	expect_err(f, n, TLB_PARSE_BAD_PKT_COUNT);
	put16(f + 42 + 18, TLB_RPC_MAX_PKTS);
	put16(f + 42 + 16, TLB_RPC_MAX_PKTS - 1);
	expect_cls(f, n, TLB_FRAME_REQUEST);
}

static void
test_err_bad_pkt_index(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 0);
	put16(f + 42 + 18, 4);
	put16(f + 42 + 16, 4);
	expect_err(f, n, TLB_PARSE_BAD_PKT_INDEX);
	put16(f + 42 + 16, 0xffff);
	expect_err(f, n, TLB_PARSE_BAD_PKT_INDEX);
	put16(f + 42 + 16, 3);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.hdr.pkt_idx, 3);
	assert_int_equal(p.hdr.pkt_cnt, 4);
}

/* Valid frames of every shape the parser walks. */
static size_t
sample_frame(uint8_t *f, unsigned int which)
{
	static const uint8_t ext[3] = {0, 43, 60};
	static const size_t ext_len[3] = {8, 24, 16};
	size_t n;

	switch (which % 6) {
	case 0:
		return build_req(f, 4, false, 33);
	case 1:
		return build_req(f, 4, true, 1);
	case 2:
		return build_req(f, 6, false, 0);
	case 3:
		return build_req(f, 6, true, 7);
	case 4:
		n = build_req(f, 6, false, 5);
		return insert_v6_ext(f, n, ext, ext_len, 3);
	default:
		n = build_req(f, 4, true, 3);
		return insert_v4_opts(f, n);
	}
}

static void
test_truncation_every_offset(void **state)
{
	struct tlb_parse_opts o = std_opts();
	uint8_t f[FRAME_MAX];
	struct tlb_parsed p;

	(void)state;
	for (unsigned int w = 0; w < 6; w++) {
		size_t n = sample_frame(f, w);

		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_REQUEST);
		for (size_t cut = 0; cut < n; cut++) {
			enum tlb_parse_err e = parse_exact(f, cut, &o, &p);

			assert_int_not_equal(e, TLB_PARSE_OK);
			assert_true(e < TLB_PARSE_ERR_MAX);
			assert_int_equal(p.cls, TLB_FRAME_PASS);
		}
	}
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random corruption of valid frames: no crash (ASan), no overread, and
 * whatever is accepted is self-consistent and inside the frame. */
static void
test_mutation_no_overread(void **state)
{
	struct tlb_parse_opts o = std_opts();
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint8_t f[FRAME_MAX];
	struct tlb_parsed p;

	(void)state;
	for (unsigned int it = 0; it < 30000; it++) {
		size_t n = sample_frame(f, it);
		unsigned int flips = 1 + xorshift(&seed) % 4;
		enum tlb_parse_err e;

		for (unsigned int i = 0; i < flips; i++) {
			size_t at = xorshift(&seed) % (n < 140 ? n : 140);

			f[at] = (uint8_t)xorshift(&seed);
		}
		if (xorshift(&seed) % 4 == 0)
			n = xorshift(&seed) % (n + 1);
		e = parse_exact(f, n, &o, &p);
		assert_true(e < TLB_PARSE_ERR_MAX);
		if (e != TLB_PARSE_OK)
			continue;
		assert_true(p.l3_off <= n);
		if (p.cls != TLB_FRAME_PASS) {
			assert_true(p.l4_off + 8u <= p.rpc_off);
			assert_int_equal(p.payload_off, p.rpc_off + 48);
			assert_true(p.payload_off + (size_t)p.hdr.payload_len <=
				    n);
			assert_true(p.hdr.pkt_idx < p.hdr.pkt_cnt);
		}
	}
}

static void
test_pass_arp(void **state)
{
	uint8_t f[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0,
			 0,    0,    0,    1,    0x08, 0x06, 0x00, 0x01,
			 0x08, 0x00, 6,    4,    0x00, 0x01};
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;

	(void)state;
	assert_int_equal(parse_exact(f, sizeof(f), &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	assert_int_equal(p.l3_off, 14);
	/* ARP behind a VLAN tag too. */
	memmove(f + 16, f + 12, 40);
	put16(f + 12, 0x8100);
	put16(f + 14, 5);
	assert_int_equal(parse_exact(f, sizeof(f), &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	assert_true(p.has_vlan);
	assert_int_equal(p.vlan_tci, 5);
	assert_int_equal(p.l3_off, 18);
}

static void
test_pass_icmp_tcp(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = build_req(f, 4, false, 16);
	f[23] = 1; /* ICMP */
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	assert_int_equal(p.key.ip_version, 4);
	assert_int_equal(p.key.proto, 1);
	assert_memory_equal(p.key.src_addr, cli_v4, 4);
	assert_memory_equal(p.key.dst_addr, srv_v4, 4);
	/* TCP to our port number is not ours. */
	f[23] = 6;
	expect_cls(f, n, TLB_FRAME_PASS);
	/* A minimal 28-byte ICMP echo padded out to 60 bytes. */
	n = build_req(f, 4, false, 0);
	f[23] = 1;
	put16(f + 16, 28);
	memset(f + 42, 0, 18);
	expect_cls(f, 60, TLB_FRAME_PASS);
}

static void
test_pass_other_udp(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* DNS-like: neither port ours, and garbage where an RPC would be. */
	n = build_req(f, 4, true, 16);
	put16(f + 38, 5353);
	put16(f + 40, 53);
	memset(f + 46, 0, 48);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	assert_int_equal(p.key.src_port, 5353);
	assert_int_equal(p.key.dst_port, 53);
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(p.l4_off, 38);
	/* A short other-port datagram is fine too. */
	put16(f + 42, 8);
	expect_cls(f, n, TLB_FRAME_PASS);
	n = build_req(f, 6, false, 0);
	put16(f + 56, 123);
	expect_cls(f, n, TLB_FRAME_PASS);
	/* No ports configured, or no opts at all: nothing is ours. */
	n = build_req(f, 4, false, 0);
	{
		struct tlb_parse_opts none = {.n_udp_ports = 0};

		assert_int_equal(parse_exact(f, n, &none, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_PASS);
		assert_int_equal(parse_exact(f, n, NULL, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_PASS);
	}
}

static void
test_pass_icmpv6_nd(void **state)
{
	/* Neighbour solicitation for 2001:db8::2 from 2001:db8::1. */
	uint8_t f[14 + 40 + 32] = {
		0x33, 0x33, 0xff, 0x00, 0x00, 0x02, 0x02, 0x00,
		0x00, 0x00, 0x00, 0x01, 0x86, 0xdd, 0x60, 0,
		0,    0,    0x00, 32,   58,   255,
	};
	static const uint8_t sn[16] = {
		0xff, 0x02, [11] = 0x01, [12] = 0xff, [15] = 0x02};
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t *icmp = f + 54;

	(void)state;
	memcpy(f + 22, cli_v6, 16);
	memcpy(f + 38, sn, 16);
	icmp[0] = 135;
	memcpy(icmp + 8, srv_v6, 16);
	icmp[24] = 1; /* source link-layer address option */
	icmp[25] = 1;
	memcpy(icmp + 26, cli_mac, 6);
	assert_int_equal(parse_exact(f, sizeof(f), &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	assert_int_equal(p.key.ip_version, 6);
	assert_int_equal(p.key.proto, 58);
	assert_int_equal(p.l4_off, 54);
	assert_memory_equal(p.key.src_addr, cli_v6, 16);
	/* MLD report style: hop-by-hop (router alert) then ICMPv6. */
	{
		static const uint8_t hbh[1] = {0};
		static const size_t hbh_len[1] = {8};
		uint8_t g[FRAME_MAX];
		size_t n;

		memcpy(g, f, sizeof(f));
		n = insert_v6_ext(g, sizeof(f), hbh, hbh_len, 1);
		assert_int_equal(parse_exact(g, n, &o, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_PASS);
		assert_int_equal(p.key.proto, 58);
		assert_int_equal(p.l4_off, 62);
	}
	/* No next header. */
	f[20] = 59;
	expect_cls(f, sizeof(f), TLB_FRAME_PASS);
}

static void
test_pass_qinq_and_other_ethertypes(void **state)
{
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* A valid RPC, but behind two tags: not ours. */
	n = build_req(f, 4, true, 8);
	memmove(f + 18, f + 14, n - 14);
	put16(f + 12, 0x8100);
	put16(f + 14, 7);
	put16(f + 16, 0x8100);
	expect_cls(f, n + 4, TLB_FRAME_PASS);
	put16(f + 16, 0x88a8);
	expect_cls(f, n + 4, TLB_FRAME_PASS);
	/* Outer S-tag: not a tag we look through. */
	n = build_req(f, 4, true, 8);
	put16(f + 12, 0x88a8);
	expect_cls(f, n, TLB_FRAME_PASS);
	/* LLDP. */
	put16(f + 12, 0x88cc);
	expect_cls(f, n, TLB_FRAME_PASS);
}

static void
test_classify_request_response(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_frame_addrs a = std_addrs(4, false);
	struct tlb_rpc_hdr h = std_hdr();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	/* To the second configured port. */
	a.key.dst_port = 7001;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 4);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	/* Not configured: pass. */
	a.key.dst_port = 7002;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 4);
	expect_cls(f, n, TLB_FRAME_PASS);

	/* Responses and errors from our port. */
	a = std_addrs(6, true);
	a.key.src_port = SRV_PORT;
	a.key.dst_port = CLI_PORT;
	h.type = TLB_MSG_RESPONSE;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 4);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(p.hdr.type, TLB_MSG_RESPONSE);
	h.type = TLB_MSG_ERROR;
	h.status = TLB_RPC_ST_OVERLOAD;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(p.hdr.status, TLB_RPC_ST_OVERLOAD);

	/* Both ports ours: the destination decides. */
	a.key.src_port = 9000;
	a.key.dst_port = SRV_PORT;
	h.type = TLB_MSG_REQUEST;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);
	expect_cls(f, n, TLB_FRAME_REQUEST);
	h.type = TLB_MSG_RESPONSE;
	n = tlb_build_frame(f, sizeof(f), &a, &h, NULL, 0);
	expect_err(f, n, TLB_PARSE_BAD_TYPE);
}

static void
test_classify_bad_port_count(void **state)
{
	/* A port count past the array must not read beyond it. */
	struct tlb_parse_opts *o = malloc(sizeof(*o));
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n = build_req(f, 4, false, 0);

	(void)state;
	assert_non_null(o);
	memset(o, 0, sizeof(*o));
	o->udp_ports[TLB_RPC_MAX_PORTS - 1] = SRV_PORT;
	o->n_udp_ports = 100000;
	assert_int_equal(parse_exact(f, n, o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	/* A port not in the list makes the lookup run to its bound. */
	put16(f + 36, 7002);
	assert_int_equal(parse_exact(f, n, o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	free(o);
}

static void
test_ext_and_options_request(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	n = sample_frame(f, 4);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.l4_off, 14 + 40 + 8 + 24 + 16);
	assert_int_equal(p.key.proto, 17);
	assert_int_equal(p.hdr.payload_len, 5);
	n = sample_frame(f, 5);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.l4_off, 18 + 24);
	assert_int_equal(p.hdr.payload_len, 3);
}

static void
test_trailing_padding(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p;
	uint8_t f[FRAME_MAX];
	size_t n;

	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		n = build_req(f, v, v == 6, 2);
		memset(f + n, 0, 30);
		assert_int_equal(parse_exact(f, n + 30, &o, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_REQUEST);
		assert_int_equal(p.hdr.payload_len, 2);
	}
	/* IP payload longer than the UDP datagram: UDP length rules. */
	n = build_req(f, 4, false, 10);
	put16(f + 38, (uint16_t)(get16(f + 38) - 4));
	put16(f + 42 + 20, 6);
	expect_cls(f, n, TLB_FRAME_REQUEST);
	put16(f + 42 + 20, 7);
	expect_err(f, n, TLB_PARSE_BAD_PAYLOAD_LEN);
}

static void
check_make_response(size_t (*mk)(uint8_t *), uint16_t resp_len,
		    enum tlb_msg_type type, uint16_t status)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed req, rsp;
	uint8_t f[FRAME_MAX], orig[FRAME_MAX];
	size_t n, m, l3;

	n = mk(f);
	/* A request that has nearly run out of hops, and junk in the
	 * reserved field: neither may leak into the response. */
	l3 = l3_of(f);
	f[l3 + (get16(f + l3 - 2) == 0x0800 ? 8 : 7)] = 1;
	assert_int_equal(parse_exact(f, n, &o, &req), TLB_PARSE_OK);
	put16(f + req.rpc_off + 42, 0xbeef);
	memcpy(orig, f, n);
	assert_int_equal(parse_exact(f, n, &o, &req), TLB_PARSE_OK);
	assert_int_equal(req.cls, TLB_FRAME_REQUEST);
	assert_int_equal(req.hdr.reserved, 0xbeef);
	/* The server writes its answer where the request payload was. */
	for (unsigned int i = 0; i < resp_len; i++)
		f[req.payload_off + i] = (uint8_t)(0xc0 ^ i);
	m = tlb_make_response(f, n, &req, type, status, 5, 123456, resp_len);
	assert_int_equal(m, req.payload_off + resp_len);

	assert_memory_equal(f, orig + 6, 6);
	assert_memory_equal(f + 6, orig, 6);
	assert_memory_equal(f + 12, orig + 12, l3 - 12); /* tag kept */
	if (req.key.ip_version == 4) {
		assert_memory_equal(f + l3 + 12, orig + l3 + 16, 4);
		assert_memory_equal(f + l3 + 16, orig + l3 + 12, 4);
		assert_int_equal(get16(f + l3 + 2), m - l3);
		assert_int_equal(f[l3 + 8], 64);
	} else {
		assert_memory_equal(f + l3 + 8, orig + l3 + 24, 16);
		assert_memory_equal(f + l3 + 24, orig + l3 + 8, 16);
		assert_int_equal(get16(f + l3 + 4), m - l3 - 40);
		assert_int_equal(f[l3 + 7], 64);
	}
	assert_int_equal(get16(f + req.l4_off), get16(orig + req.l4_off + 2));
	assert_int_equal(get16(f + req.l4_off + 2), get16(orig + req.l4_off));
	assert_int_equal(get16(f + req.l4_off + 4), m - req.l4_off);

	assert_int_equal(parse_exact(f, m, &o, &rsp), TLB_PARSE_OK);
	assert_int_equal(rsp.cls, TLB_FRAME_RESPONSE);
	assert_int_equal(rsp.has_vlan, req.has_vlan);
	assert_int_equal(rsp.vlan_tci, req.vlan_tci);
	assert_int_equal(rsp.key.src_port, req.key.dst_port);
	assert_int_equal(rsp.key.dst_port, req.key.src_port);
	assert_memory_equal(rsp.key.src_addr, req.key.dst_addr, 16);
	assert_memory_equal(rsp.key.dst_addr, req.key.src_addr, 16);
	assert_int_equal(rsp.l4_off, req.l4_off);
	assert_int_equal(rsp.hdr.type, type);
	assert_int_equal(rsp.hdr.status, status);
	assert_int_equal(rsp.hdr.server_core, 5);
	assert_int_equal(rsp.hdr.service_ns, 123456);
	assert_int_equal(rsp.hdr.payload_len, resp_len);
	assert_int_equal(rsp.hdr.req_id, req.hdr.req_id);
	assert_int_equal(rsp.hdr.client_ts, req.hdr.client_ts);
	assert_int_equal(rsp.hdr.work_ns, req.hdr.work_ns);
	assert_int_equal(rsp.hdr.svc_class, req.hdr.svc_class);
	assert_int_equal(rsp.hdr.flags, req.hdr.flags);
	assert_int_equal(rsp.hdr.svc_hint_ns, req.hdr.svc_hint_ns);
	assert_int_equal(rsp.hdr.pkt_idx, 0);
	assert_int_equal(rsp.hdr.pkt_cnt, 1);
	assert_int_equal(rsp.hdr.reserved, 0);
	for (unsigned int i = 0; i < resp_len; i++)
		assert_int_equal(f[rsp.payload_off + i], (uint8_t)(0xc0 ^ i));
	check_ip_udp_csums(f, &rsp);
}

static size_t
mk_v4(uint8_t *f)
{
	return build_req(f, 4, false, 100);
}

static size_t
mk_v4_vlan_opts(uint8_t *f)
{
	return insert_v4_opts(f, build_req(f, 4, true, 100));
}

static size_t
mk_v6(uint8_t *f)
{
	return build_req(f, 6, false, 100);
}

static size_t
mk_v6_vlan_ext(uint8_t *f)
{
	static const uint8_t ext[2] = {0, 60};
	static const size_t ext_len[2] = {8, 16};

	return insert_v6_ext(f, build_req(f, 6, true, 100), ext, ext_len, 2);
}

static size_t
mk_v4_multi_padded(uint8_t *f)
{
	size_t n = build_req(f, 4, false, 3);

	/* Packet 2 of 3 of a message, with Ethernet padding behind it. */
	put16(f + 42 + 16, 2);
	put16(f + 42 + 18, 3);
	memset(f + n, 0, 20);
	return n + 20;
}

static void
test_make_response(void **state)
{
	(void)state;
	check_make_response(mk_v4, 20, TLB_MSG_RESPONSE, TLB_RPC_ST_OK);
	check_make_response(mk_v4, 100, TLB_MSG_RESPONSE, TLB_RPC_ST_OK);
	check_make_response(mk_v4, 0, TLB_MSG_ERROR, TLB_RPC_ST_OVERLOAD);
	check_make_response(mk_v4_vlan_opts, 33, TLB_MSG_RESPONSE,
			    TLB_RPC_ST_OK);
	check_make_response(mk_v6, 1, TLB_MSG_RESPONSE, TLB_RPC_ST_NOT_FOUND);
	check_make_response(mk_v6, 100, TLB_MSG_ERROR, TLB_RPC_ST_BAD_REQUEST);
	check_make_response(mk_v6_vlan_ext, 64, TLB_MSG_RESPONSE,
			    TLB_RPC_ST_OK);
	/* The padding is payload room the server may use. */
	check_make_response(mk_v4_multi_padded, 23, TLB_MSG_RESPONSE,
			    TLB_RPC_ST_OK);
}

static void
test_make_response_errors(void **state)
{
	struct tlb_parse_opts o = std_opts();
	struct tlb_parsed p, bad;
	uint8_t f[FRAME_MAX], orig[FRAME_MAX];
	size_t n = build_req(f, 4, true, 50);

	(void)state;
	memcpy(orig, f, n);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	/* Each refusal leaves the frame as it was. */
	assert_int_equal(
		tlb_make_response(f, n, &p, TLB_MSG_RESPONSE, 0, 0, 0, 51), 0);
	assert_int_equal(
		tlb_make_response(f, n, &p, TLB_MSG_REQUEST, 0, 0, 0, 0), 0);
	assert_int_equal(
		tlb_make_response(f, n, &p, (enum tlb_msg_type)9, 0, 0, 0, 0),
		0);
	assert_int_equal(
		tlb_make_response(f, n - 60, &p, TLB_MSG_RESPONSE, 0, 0, 0, 0),
		0);
	bad = p;
	bad.cls = TLB_FRAME_RESPONSE;
	assert_int_equal(
		tlb_make_response(f, n, &bad, TLB_MSG_RESPONSE, 0, 0, 0, 0), 0);
	bad = p;
	bad.rpc_off++;
	assert_int_equal(
		tlb_make_response(f, n, &bad, TLB_MSG_RESPONSE, 0, 0, 0, 0), 0);
	/* Offsets that disagree with the IHL in the frame. */
	bad = p;
	bad.l4_off += 4;
	bad.rpc_off += 4;
	bad.payload_off += 4;
	assert_int_equal(
		tlb_make_response(f, n, &bad, TLB_MSG_RESPONSE, 0, 0, 0, 0), 0);
	bad = p;
	bad.key.ip_version = 6;
	assert_int_equal(
		tlb_make_response(f, n, &bad, TLB_MSG_RESPONSE, 0, 0, 0, 0), 0);
	assert_memory_equal(f, orig, n);
	assert_int_equal(
		tlb_make_response(f, n, &p, TLB_MSG_RESPONSE, 0, 0, 0, 50), n);
}

static void
test_set_work_ns(void **state)
{
	struct tlb_parse_opts o = std_opts();
	uint64_t seed = 12345;
	uint8_t f[FRAME_MAX], orig[FRAME_MAX];
	struct tlb_parsed p, q;

	(void)state;
	for (unsigned int w = 0; w < 6; w++) {
		size_t n = sample_frame(f, w);

		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		/* Many values, so carries and wrap-arounds all happen. */
		for (unsigned int i = 0; i < 2000; i++) {
			uint32_t v = (uint32_t)xorshift(&seed);

			if (i < 4)
				v = (uint32_t[]){0, 0xffffffffu, 0xffff,
						 0xffff0000u}[i];
			memcpy(orig, f, n);
			tlb_rpc_set_work_ns(f, &p, v);
			assert_int_equal(parse_exact(f, n, &o, &q),
					 TLB_PARSE_OK);
			assert_int_equal(q.hdr.work_ns, v);
			check_ip_udp_csums(f, &q);
			/* Only the field and the UDP checksum change. */
			for (size_t k = 0; k < n; k++) {
				if (k >= p.rpc_off + 28u && k < p.rpc_off + 32u)
					continue;
				if (k == p.l4_off + 6u || k == p.l4_off + 7u)
					continue;
				assert_int_equal(f[k], orig[k]);
			}
		}
	}
	/* The rarest carry of the incremental sum: old work 0, new all ones
	 * and a checksum word of 0xfffe as it lies in the frame, which
	 * takes a third fold. A payload word is searched that gives that
	 * checksum. */
	{
		struct tlb_frame_addrs a = std_addrs(4, false);
		struct tlb_rpc_hdr h = std_hdr();
		uint8_t pl[8] = {0};
		uint16_t c = 0;
		size_t n = 0;

		h.work_ns = 0;
		for (uint32_t x = 0; x < 65536; x++) {
			pl[0] = (uint8_t)(x >> 8);
			pl[1] = (uint8_t)x;
			n = tlb_build_frame(f, FRAME_MAX, &a, &h, pl,
					    sizeof(pl));
			memcpy(&c, f + 40, sizeof(c));
			if (c == 0xfffe)
				break;
		}
		assert_int_equal(c, 0xfffe);
		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		tlb_rpc_set_work_ns(f, &p, 0xffffffffu);
		assert_int_equal(parse_exact(f, n, &o, &q), TLB_PARSE_OK);
		assert_int_equal(q.hdr.work_ns, 0xffffffffu);
		check_ip_udp_csums(f, &q);
	}
	/* IPv4 without a UDP checksum stays without one. */
	{
		size_t n = build_req(f, 4, false, 4);

		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		put16(f + p.l4_off + 6, 0);
		tlb_rpc_set_work_ns(f, &p, 77);
		assert_int_equal(get16(f + p.l4_off + 6), 0);
		assert_int_equal(parse_exact(f, n, &o, &q), TLB_PARSE_OK);
		assert_int_equal(q.hdr.work_ns, 77);
	}
	/* Not an RPC frame: nothing is written. */
	{
		size_t n = build_req(f, 4, false, 4);

		put16(f + 36, 5353);
		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		assert_int_equal(p.cls, TLB_FRAME_PASS);
		memcpy(orig, f, n);
		tlb_rpc_set_work_ns(f, &p, 77);
		assert_memory_equal(f, orig, n);
	}
}

/* An RPC frame of any shape the corpus makes: v4/v6, VLAN or not, request,
 * response or error, hint or not, ports ours or not, single- or
 * multi-packet. */
static size_t
fast_corpus_frame(uint8_t *f, uint64_t *seed)
{
	static const uint16_t ours[] = {SRV_PORT, 9000, 7001, 5353};
	static const uint16_t peers[] = {CLI_PORT, CLI_PORT, CLI_PORT, 9000};
	static const uint8_t types[] = {TLB_MSG_REQUEST, TLB_MSG_REQUEST,
					TLB_MSG_RESPONSE, TLB_MSG_ERROR};
	struct tlb_frame_addrs a;
	struct tlb_rpc_hdr h = std_hdr();
	uint8_t payload[64] = {0};
	uint64_t r = xorshift(seed), r2 = xorshift(seed);
	size_t n;

	a = std_addrs(r % 8 == 0 ? 6 : 4, (r >> 3) % 8 == 0);
	h.type = types[r2 % 4];
	if (h.type == TLB_MSG_REQUEST) {
		a.key.dst_port = ours[(r >> 6) % 4];
	} else {
		a.key.src_port = ours[(r >> 6) % 4];
		a.key.dst_port = peers[(r2 >> 2) % 4];
		h.work_ns = (uint32_t)(r2 >> 4);
		h.service_ns = (uint32_t)(r2 >> 30) % 4 ? (uint32_t)r2 : 0;
	}
	h.flags = (r >> 8) % 2 ? TLB_RPC_F_HINT : 0;
	h.svc_class = (uint16_t)(r >> 9);
	h.svc_hint_ns = (uint32_t)(r >> 25);
	if ((r >> 57) % 4 == 0) {
		h.pkt_cnt = (uint16_t)(2 + (r >> 59) % 3);
		h.pkt_idx = (uint16_t)((r >> 61) % h.pkt_cnt);
	}
	n = tlb_build_frame(f, FRAME_MAX, &a, &h, payload,
			    (uint16_t)((r >> 41) % sizeof(payload)));
	assert_true(n > 0);
	return n;
}

/* tlb_parse_request_fast() and tlb_parse_response_fast() accept exactly
 * the frames that tlb_parse_frame() finds to be single-packet requests
 * (responses) in the plain layout, and read the same fields from them:
 * clean frames and frames with their first 100 bytes corrupted, from
 * exact-size copies (ASan: no overread). */
static void
test_fast_parsers_agree(void **state)
{
	/* three ports, and the one port of the usual daemon */
	const struct tlb_parse_opts opts[2] = {
		std_opts(), {.udp_ports = {SRV_PORT}, .n_udp_ports = 1}};
	uint64_t seed = 0x243f6a8885a308d3ull;
	unsigned int req_ok[2] = {0}, resp_ok[2] = {0}, refused = 0;
	uint8_t f[FRAME_MAX];

	(void)state;
	for (unsigned int it = 0; it < 120000; it++) {
		const struct tlb_parse_opts o = opts[it % 2];
		size_t n = fast_corpus_frame(f, &seed);
		unsigned int flips =
			xorshift(&seed) % 3 ? 0 : 1 + xorshift(&seed) % 3;
		struct tlb_req_fast rq = {0};
		struct tlb_resp_fast rs = {0};
		struct tlb_parsed p;
		enum tlb_parse_err e;
		bool fast_req, fast_resp, plain;
		uint8_t *copy;

		for (unsigned int i = 0; i < flips; i++)
			f[xorshift(&seed) % (n < 100 ? n : 100)] =
				(uint8_t)xorshift(&seed);
		if (xorshift(&seed) % 8 == 0)
			n = xorshift(&seed) % (n + 1);
		copy = malloc(n ? n : 1);
		assert_non_null(copy);
		memcpy(copy, f, n);
		fast_req = tlb_parse_request_fast(copy, n, &o, &rq);
		fast_resp = tlb_parse_response_fast(copy, n, &o, &rs);
		free(copy);
		e = parse_exact(f, n, &o, &p);
		plain = e == TLB_PARSE_OK && !p.has_vlan &&
			p.key.ip_version == 4 && p.l4_off == TLB_FAST_UDP_OFF &&
			p.hdr.pkt_cnt == 1;
		assert_int_equal(fast_req, plain && p.cls == TLB_FRAME_REQUEST);
		assert_int_equal(fast_resp,
				 plain && p.cls == TLB_FRAME_RESPONSE);
		if (fast_req) {
			req_ok[it % 2]++;
			assert_int_equal(p.rpc_off, TLB_FAST_RPC_OFF);
			assert_int_equal(rq.svc_class, p.hdr.svc_class);
			assert_int_equal(rq.svc_hint_ns,
					 (p.hdr.flags & TLB_RPC_F_HINT)
						 ? p.hdr.svc_hint_ns
						 : 0);
		} else if (fast_resp) {
			resp_ok[it % 2]++;
			assert_int_equal(p.rpc_off, TLB_FAST_RPC_OFF);
			assert_int_equal(rs.svc_class, p.hdr.svc_class);
			assert_int_equal(rs.work_ns, p.hdr.work_ns);
			assert_int_equal(rs.service_ns, p.hdr.service_ns);
		} else {
			refused += n >= TLB_FAST_MIN_LEN && f[12] == 0x08 &&
				   f[13] == 0 && f[14] == 0x45;
		}
	}
	/* every way was exercised, often */
	print_message(
		"accepted: requests %u + %u, responses %u + %u; refused %u\n",
		req_ok[0], req_ok[1], resp_ok[0], resp_ok[1], refused);
	assert_true(req_ok[0] > 3000 && req_ok[1] > 1000);
	assert_true(resp_ok[0] > 3000 && resp_ok[1] > 1000);
	assert_true(refused > 10000);
}

/* tlb_rpc_stamp_fast() writes what tlb_rpc_set_work_ns() writes, byte for
 * byte, checksum or none. */
static void
test_stamp_fast_matches(void **state)
{
	struct tlb_parse_opts o = std_opts();
	uint64_t seed = 777;
	uint8_t f[FRAME_MAX], g[FRAME_MAX];
	struct tlb_parsed p;

	(void)state;
	for (unsigned int i = 0; i < 4000; i++) {
		size_t n = build_req(f, 4, false, (uint16_t)(i % 40));
		uint32_t v = (uint32_t)xorshift(&seed);
		struct tlb_req_fast rq;

		if (i < 4)
			v = (uint32_t[]){0, 0xffffffffu, 0xffff,
					 0xffff0000u}[i];
		/* a random starting checksum, and now and then none */
		put16(f + TLB_FAST_UDP_OFF + 6,
		      i % 10 == 9 ? 0 : (uint16_t)xorshift(&seed));
		assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
		assert_true(tlb_parse_request_fast(f, n, &o, &rq));
		memcpy(g, f, n);
		tlb_rpc_set_work_ns(f, &p, v);
		tlb_rpc_stamp_fast(g, v);
		assert_memory_equal(f, g, n);
		assert_int_equal(get16(g + TLB_FAST_RPC_OFF + 28), v >> 16);
	}
}

/* A datagram to a dns port shorter than the DNS header. The other
 * protocols' checks are in test_protocols.c. */
static void
test_err_trunc_msg(void **state)
{
	struct tlb_parse_opts o = std_opts();
	uint8_t f[FRAME_MAX];
	struct tlb_parsed p;
	size_t n = build_req(f, 4, false, 0);

	(void)state;
	o.proto_ports[0].port = 53;
	o.proto_ports[0].proto = TLB_PROTO_DNS;
	o.n_proto_ports = 1;
	put16(f + 14 + 20 + 2, 53);
	put16(f + 14 + 2, 20 + 8 + 11);
	put16(f + 14 + 20 + 4, 8 + 11);
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_TRUNC_MSG);
	assert_int_equal(p.cls, TLB_FRAME_PASS);
	seen_err[TLB_PARSE_TRUNC_MSG] = true;
	put16(f + 14 + 2, 20 + 8 + 12);
	put16(f + 14 + 20 + 4, 8 + 12);
	f[14 + 20 + 8 + 2] = 0; /* QR 0: a query */
	assert_int_equal(parse_exact(f, n, &o, &p), TLB_PARSE_OK);
	assert_int_equal(p.cls, TLB_FRAME_REQUEST);
	assert_int_equal(p.proto, TLB_PROTO_DNS);
}

static void
test_all_codes_covered(void **state)
{
	(void)state;
	for (int i = 0; i < TLB_PARSE_ERR_MAX; i++) {
		if (!seen_err[i])
			print_error("no test produced %s\n",
				    tlb_parse_err_str((enum tlb_parse_err)i));
		assert_true(seen_err[i]);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_str),
		cmocka_unit_test(test_hdr_wire_layout),
		cmocka_unit_test(test_roundtrip_v4),
		cmocka_unit_test(test_roundtrip_v4_vlan),
		cmocka_unit_test(test_roundtrip_v6),
		cmocka_unit_test(test_roundtrip_v6_vlan),
		cmocka_unit_test(test_build_known_checksums),
		cmocka_unit_test(test_build_zero_checksum),
		cmocka_unit_test(test_build_cap_and_args),
		cmocka_unit_test(test_build_too_long),
		cmocka_unit_test(test_build_payload_in_place),
		cmocka_unit_test(test_err_trunc_eth),
		cmocka_unit_test(test_err_trunc_vlan),
		cmocka_unit_test(test_err_trunc_ip),
		cmocka_unit_test(test_err_bad_ip_version),
		cmocka_unit_test(test_err_bad_ihl),
		cmocka_unit_test(test_err_bad_ip_len),
		cmocka_unit_test(test_err_ip_fragment_v4),
		cmocka_unit_test(test_err_ip_fragment_v6),
		cmocka_unit_test(test_err_bad_ip_ext),
		cmocka_unit_test(test_err_trunc_udp),
		cmocka_unit_test(test_err_bad_udp_len),
		cmocka_unit_test(test_err_trunc_rpc),
		cmocka_unit_test(test_err_bad_magic),
		cmocka_unit_test(test_err_bad_version),
		cmocka_unit_test(test_err_bad_type),
		cmocka_unit_test(test_err_bad_payload_len),
		cmocka_unit_test(test_err_bad_pkt_count),
		cmocka_unit_test(test_err_bad_pkt_index),
		cmocka_unit_test(test_truncation_every_offset),
		cmocka_unit_test(test_mutation_no_overread),
		cmocka_unit_test(test_pass_arp),
		cmocka_unit_test(test_pass_icmp_tcp),
		cmocka_unit_test(test_pass_other_udp),
		cmocka_unit_test(test_pass_icmpv6_nd),
		cmocka_unit_test(test_pass_qinq_and_other_ethertypes),
		cmocka_unit_test(test_classify_request_response),
		cmocka_unit_test(test_classify_bad_port_count),
		cmocka_unit_test(test_ext_and_options_request),
		cmocka_unit_test(test_trailing_padding),
		cmocka_unit_test(test_make_response),
		cmocka_unit_test(test_make_response_errors),
		cmocka_unit_test(test_set_work_ns),
		cmocka_unit_test(test_fast_parsers_agree),
		cmocka_unit_test(test_stamp_fast_matches),
		/* Must stay last: checks what the tests above produced. */
		cmocka_unit_test(test_err_trunc_msg),
		cmocka_unit_test(test_all_codes_covered),
	};

	seen_err[TLB_PARSE_OK] = true;
	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
