/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb RPC wire protocol v1: build, parse and validate frames on plain
 * byte buffers. No DPDK here: the daemon, the host side, the load generator
 * and the tests all share this code. Layout: docs/protocol.md.
 */
#ifndef TURBOLB_PROTO_H
#define TURBOLB_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLB_RPC_MAGIC     0x5442u /* "TB" */
#define TLB_RPC_VERSION   1u
#define TLB_RPC_HDR_LEN   48u
#define TLB_RPC_MAX_PKTS  64u /* bound on packets per message */
#define TLB_RPC_MAX_PORTS 8u  /* UDP ports one daemon serves */

enum tlb_msg_type {
	TLB_MSG_REQUEST = 1,
	TLB_MSG_RESPONSE = 2,
	TLB_MSG_ERROR = 3, /* NACK: status says why */
};

/* Header flags. */
#define TLB_RPC_F_HINT 0x0001u /* svc_hint_ns is valid */

/* Byte offsets inside the RPC header on the wire (docs/protocol.md). */
enum {
	TLB_RPC_OFF_MAGIC = 0,
	TLB_RPC_OFF_VERSION = 2,
	TLB_RPC_OFF_TYPE = 3,
	TLB_RPC_OFF_FLAGS = 4,
	TLB_RPC_OFF_SVC_CLASS = 6,
	TLB_RPC_OFF_REQ_ID = 8,
	TLB_RPC_OFF_PKT_IDX = 16,
	TLB_RPC_OFF_PKT_CNT = 18,
	TLB_RPC_OFF_PAYLOAD_LEN = 20,
	TLB_RPC_OFF_STATUS = 22,
	TLB_RPC_OFF_SVC_HINT_NS = 24,
	TLB_RPC_OFF_WORK_NS = 28,
	TLB_RPC_OFF_CLIENT_TS = 32,
	TLB_RPC_OFF_SERVER_CORE = 40,
	TLB_RPC_OFF_RESERVED = 42,
	TLB_RPC_OFF_SERVICE_NS = 44,
};

/* The RPC header in host byte order. On the wire every field is big endian,
 * at the offsets given in docs/protocol.md (48 bytes in all). */
struct tlb_rpc_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t type;       /* enum tlb_msg_type */
	uint16_t flags;     /* TLB_RPC_F_* */
	uint16_t svc_class; /* service class (per-class averages in jlq) */
	uint64_t req_id;    /* unique per client flow */
	uint16_t pkt_idx;   /* 0 .. pkt_cnt-1 */
	uint16_t pkt_cnt;   /* 1 .. TLB_RPC_MAX_PKTS */
	uint16_t
		payload_len; /* payload bytes in this packet after the header */
	uint16_t
		status; /* responses/errors: 0 = ok, else enum tlb_rpc_status */
	uint32_t svc_hint_ns; /* expected service time, if TLB_RPC_F_HINT */
	uint32_t work_ns;     /* work the NIC charged; server echoes it */
	uint64_t client_ts;   /* client timestamp; server echoes it */
	uint16_t server_core; /* responses: host core that served it, as the
				 server knows it; TLB_RPC_CORE_UNKNOWN: not
				 said. The daemon attributes a response by
				 the queue it arrives on and counts a
				 disagreement (docs/protocol.md) */
	uint16_t reserved;    /* zero on send, ignored on receive */
	uint32_t service_ns;  /* responses: measured service time */
};

#define TLB_RPC_CORE_UNKNOWN 0xffffu

enum tlb_rpc_status {
	TLB_RPC_ST_OK = 0,
	TLB_RPC_ST_NOT_FOUND = 1,
	TLB_RPC_ST_BAD_REQUEST = 2,
	TLB_RPC_ST_OVERLOAD = 3,
};

/* What a frame is, once parsed. */
enum tlb_frame_class {
	TLB_FRAME_PASS = 0, /* not an RPC for us: ARP, ICMP, ND, other ports */
	TLB_FRAME_REQUEST,  /* RPC request (to one of our ports) */
	TLB_FRAME_RESPONSE, /* RPC response or error (from one of our ports) */
};

/* Parse errors: each failure has its own code and string. */
enum tlb_parse_err {
	TLB_PARSE_OK = 0,
	TLB_PARSE_TRUNC_ETH,      /* shorter than an Ethernet header */
	TLB_PARSE_TRUNC_VLAN,     /* 802.1Q tag cut short */
	TLB_PARSE_TRUNC_IP,       /* shorter than the IP header */
	TLB_PARSE_BAD_IP_VERSION, /* IP version field does not match ethertype
				   */
	TLB_PARSE_BAD_IHL,        /* IPv4 IHL < 5 or beyond the frame */
	TLB_PARSE_BAD_IP_LEN,     /* IP total/payload length inconsistent */
	TLB_PARSE_IP_FRAGMENT,    /* fragmented datagram to an RPC port */
	TLB_PARSE_BAD_IP_EXT,     /* IPv6 extension header chain malformed */
	TLB_PARSE_TRUNC_UDP,      /* shorter than a UDP header */
	TLB_PARSE_BAD_UDP_LEN,    /* UDP length inconsistent with IP */
	TLB_PARSE_TRUNC_RPC,      /* shorter than the RPC header */
	TLB_PARSE_BAD_MAGIC,
	TLB_PARSE_BAD_VERSION,
	TLB_PARSE_BAD_TYPE,
	TLB_PARSE_BAD_PAYLOAD_LEN, /* payload_len beyond the UDP datagram */
	TLB_PARSE_BAD_PKT_COUNT,   /* pkt_cnt == 0 or > TLB_RPC_MAX_PKTS */
	TLB_PARSE_BAD_PKT_INDEX,   /* pkt_idx >= pkt_cnt */
	TLB_PARSE_TRUNC_MSG,       /* shorter than its protocol's header (dns,
				      memcached) */
	TLB_PARSE_ERR_MAX
};

/* Returns a constant lower-case identifier, e.g. "trunc_udp"; used as the
 * drop-reason name in counters and telemetry. */
const char *tlb_parse_err_str(enum tlb_parse_err err);

/* Addresses of a frame. IPv4 addresses live in the first 4 bytes of the
 * 16-byte fields, in network byte order; ports in host byte order. */
struct tlb_flow_key {
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
	uint16_t src_port;
	uint16_t dst_port;
	uint8_t ip_version; /* 4 or 6 */
	uint8_t proto;      /* IPPROTO_UDP for RPCs */
};

/* The protocols a UDP port can speak (docs/protocol.md, "Protocols"):
 * each one a module, src/lib/proto_<name>.c. */
enum tlb_proto {
	TLB_PROTO_TURBOLB = 0, /* the RPC header above: the fast path */
	TLB_PROTO_DNS,         /* the DNS header's id and QR bit */
	TLB_PROTO_MEMCACHED,   /* memcached's 8-byte UDP frame header */
	TLB_PROTO_UDP,         /* one datagram each way, no header */
	TLB_PROTO_N
};

/* How a protocol's responses complete its requests at the NIC. */
enum tlb_proto_completion {
	/* Every response message is one completion, on its first packet,
	 * and echoes the work charged (turbolb's work_ns). */
	TLB_COMPLETE_ECHO = 0,
	/* The first response datagram that echoes an outstanding request's
	 * id completes it, with the work it was charged; every later one
	 * (more datagrams, more responses to the same request) is a
	 * follow-up. Requests never answered are written off. */
	TLB_COMPLETE_BY_ID,
	/* Every response datagram completes one request of its core's
	 * queue: nothing identifies which. */
	TLB_COMPLETE_EACH,
};

/* The protocol's configuration name ("turbolb", "dns", ...), or NULL for
 * a value outside the enum. */
const char *tlb_proto_name(enum tlb_proto proto);

/* The protocol called name, or -1. */
int tlb_proto_find(const char *name);

enum tlb_proto_completion tlb_proto_completion(enum tlb_proto proto);

/* A port of a protocol other than turbolb. */
struct tlb_proto_port {
	uint16_t port; /* host byte order */
	uint8_t proto; /* enum tlb_proto, never TLB_PROTO_TURBOLB */
};

/* What the classifier needs to know: the turbolb ports, which the fast
 * paths look at first, and the ports of the other protocols. */
struct tlb_parse_opts {
	uint16_t udp_ports[TLB_RPC_MAX_PORTS]; /* turbolb, host byte order */
	unsigned int n_udp_ports;
	struct tlb_proto_port proto_ports[TLB_RPC_MAX_PORTS];
	unsigned int n_proto_ports;
};

/* Message flags a protocol module sets (tlb_parsed.msg_flags). */
#define TLB_MSG_F_ONEWAY 0x01u /* a request that is never answered */

struct tlb_parsed {
	enum tlb_frame_class cls;
	bool has_vlan;
	uint16_t vlan_tci;
	uint16_t l3_off;      /* offset of the IP header */
	uint16_t l4_off;      /* offset of the UDP header (if UDP) */
	uint16_t rpc_off;     /* offset of the RPC header (RPC frames only) */
	uint16_t payload_off; /* offset of the RPC payload (RPC frames only) */
	uint8_t proto;        /* enum tlb_proto (RPC frames only) */
	uint8_t msg_flags;    /* TLB_MSG_F_* (RPC frames only) */
	struct tlb_flow_key key; /* valid for IP frames */
	/* Valid for RPC frames. For a protocol other than turbolb, its
	 * module fills in type, req_id, pkt_idx, pkt_cnt, svc_class and
	 * (with TLB_RPC_F_HINT in flags) svc_hint_ns from its own header;
	 * the other fields are zero. */
	struct tlb_rpc_hdr hdr;
};

/* Parses and classifies one whole frame starting at the Ethernet header.
 * Never reads past buf[len). On TLB_PARSE_OK, out->cls says what it is;
 * frames that are not IP/UDP to or from one of opts' ports are
 * TLB_FRAME_PASS (not an error). A UDP datagram to/from an RPC port must
 * be a valid RPC or it is an error. */
enum tlb_parse_err tlb_parse_frame(const void *buf, size_t len,
				   const struct tlb_parse_opts *opts,
				   struct tlb_parsed *out);

/* Header encode/decode on TLB_RPC_HDR_LEN bytes. decode checks nothing. */
void tlb_rpc_hdr_encode(void *dst, const struct tlb_rpc_hdr *h);
void tlb_rpc_hdr_decode(struct tlb_rpc_hdr *h, const void *src);

/* Where a frame goes: L2 and L3 addresses, ports in host byte order. */
struct tlb_frame_addrs {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	bool has_vlan;
	uint16_t vlan_tci;
	struct tlb_flow_key key; /* ip_version selects IPv4 or IPv6 */
};

/* Writes Ethernet [+ 802.1Q] + IP + UDP + RPC header + payload into buf.
 * Sets h->payload_len from payload_len. Computes the IPv4 header checksum
 * and the UDP checksum (mandatory for IPv6). Returns the frame length, or 0
 * if cap is too small. */
size_t tlb_build_frame(void *buf, size_t cap, const struct tlb_frame_addrs *a,
		       const struct tlb_rpc_hdr *h, const void *payload,
		       uint16_t payload_len);

/* Turns a parsed request frame in place into its response: swaps MAC, IP
 * and UDP addresses, rewrites the RPC header (type, status, server_core,
 * service_ns; req_id, client_ts, work_ns and svc_class are echoed),
 * truncates the payload to resp_payload_len bytes (which must fit in the
 * frame's current payload room) and fixes lengths and checksums.
 * Returns the new frame length, or 0 on error. */
size_t tlb_make_response(void *buf, size_t len, const struct tlb_parsed *p,
			 enum tlb_msg_type type, uint16_t status,
			 uint16_t server_core, uint32_t service_ns,
			 uint16_t resp_payload_len);

/* True if a UDP port is one of the turbolb ports. A count past the array
 * (opts come from config) reads no further than the array. */
static inline bool
tlb_is_native_port(const struct tlb_parse_opts *o, uint16_t port)
{
	unsigned int n = o->n_udp_ports;
	bool ours = false;

	if (n == 1) /* the usual daemon */
		return o->udp_ports[0] == port;
	if (n > TLB_RPC_MAX_PORTS)
		n = TLB_RPC_MAX_PORTS;
	for (unsigned int i = 0; i < n; i++)
		ours |= o->udp_ports[i] == port;
	return ours;
}

/* The protocol of one of the other protocols' ports, or -1. */
static inline int
tlb_proto_port_find(const struct tlb_parse_opts *o, uint16_t port)
{
	unsigned int n = o->n_proto_ports;

	if (n > TLB_RPC_MAX_PORTS)
		n = TLB_RPC_MAX_PORTS;
	for (unsigned int i = 0; i < n; i++)
		if (o->proto_ports[i].port == port)
			return o->proto_ports[i].proto;
	return -1;
}

/* True if a UDP port is one of ours, of any protocol. */
static inline bool
tlb_is_rpc_port(const struct tlb_parse_opts *o, uint16_t port)
{
	if (__builtin_expect(o->n_proto_ports == 0, 1))
		return tlb_is_native_port(o, port);
	return tlb_is_native_port(o, port) || tlb_proto_port_find(o, port) >= 0;
}

/* Classifies the UDP payload b[0, len) of a datagram of protocol proto
 * sent to one of its ports (to_port) or from one, as its module says:
 * on TLB_PARSE_OK out->cls is TLB_FRAME_REQUEST or TLB_FRAME_RESPONSE,
 * and out->hdr, msg_flags and payload_off - rpc_off (the protocol
 * header's length) are filled in; otherwise the error. out's other fields
 * are left alone. Never reads past b[len). */
enum tlb_parse_err tlb_proto_classify(enum tlb_proto proto, const uint8_t *b,
				      size_t len, bool to_port,
				      struct tlb_parsed *out);

/* Sets the work_ns field of the parsed RPC frame in place and updates the
 * UDP checksum incrementally (the daemon stamps what it charged). Frames
 * of other protocols have no such field and are left as they are. */
void tlb_rpc_set_work_ns(void *frame, const struct tlb_parsed *p,
			 uint32_t work_ns);

#endif /* TURBOLB_PROTO_H */
