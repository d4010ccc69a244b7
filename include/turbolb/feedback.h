/* SPDX-License-Identifier: BSD-3-Clause
 * Host feedback and the scheduler kick as frames on the wire: the packet
 * host transport (host.transport: packet). No DPDK.
 *
 * Where the NIC side and the host share no memory (a BlueField's Arm cores
 * and its host are two machines joined by PCIe), a host core says what
 * the credit ring would say (completions and their work, run state,
 * heartbeat, host epoch) in a small Ethernet frame sent on its own port
 * and queue, the one its responses leave by; the dispatcher that receives
 * that queue consumes it and never forwards it. The doorbell goes the
 * other way, out of the default target, to the host's kick agent.
 *
 * Feedback frame (64 bytes, multi-byte fields big-endian):
 *
 *   0   Ethernet: destination TLB_FB_DST_MAC, source the host's (any),
 *       EtherType TLB_FB_ETHERTYPE (0x88b5, IEEE local experimental 1)
 *   14  magic       u32  TLB_FB_MAGIC ("TLFB")
 *   18  version     u8   TLB_FB_VERSION
 *   19  state       u8   enum tlb_core_run_state
 *   20  core        u16  the host core the frame speaks for
 *   22  reserved    u16  0
 *   24  host_epoch  u64  chosen by the host at open, never 0, and larger
 *                        at every open (CLOCK_REALTIME ns)
 *   32  heartbeat   u64  the core's heartbeat counter
 *   40  completions u64  completions since the host epoch began
 *   48  work_ns     u64  the sum of their work_ns (as the NIC charged it)
 *   56  service_ns  u64  the sum of their service times
 *
 * The three sums are running totals, not increments: a frame lost on the
 * way (a full TX queue) loses nothing, since the next one carries the
 * totals again; the receiver credits the difference to the last frame it
 * accepted for the core in that epoch. The first frame of a core in an
 * epoch sets the base and credits nothing: a core is out of rotation until
 * its first frame, so nothing it completed before can be the receiver's.
 *
 * Kick frame (the doorbell, 32 bytes):
 *
 *   0   Ethernet: destination ff:ff:ff:ff:ff:ff, source the NIC side's,
 *       EtherType TLB_KICK_ETHERTYPE (0x88b6, IEEE local experimental 2)
 *   14  magic       u32  TLB_KICK_MAGIC ("TLKK")
 *   18  version     u8   TLB_FB_VERSION
 *   19  reserved    u8   0
 *   20  core        u16  the host core to make run
 *   22  reserved    u16  0
 *   24  doorbell    u64  the core's doorbell count: rings since the NIC
 *                        side started, so a lost kick frame is made up
 *                        by the next one, and each ring is seen once
 *
 * docs/protocol.md ("Host feedback frames") is the reference.
 */
#ifndef TURBOLB_FEEDBACK_H
#define TURBOLB_FEEDBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "turbolb/credit_ring.h"

#define TLB_FB_ETHERTYPE   0x88b5u
#define TLB_KICK_ETHERTYPE 0x88b6u
#define TLB_FB_MAGIC       0x544c4642u /* "TLFB" */
#define TLB_KICK_MAGIC     0x544c4b4bu /* "TLKK" */
#define TLB_FB_VERSION     1u
#define TLB_FB_FRAME_LEN   64u
#define TLB_KICK_FRAME_LEN 32u
/* Locally administered, never a station's: the NIC side takes every
 * feedback frame of a host core's queue whatever its destination. */
#define TLB_FB_DST_MAC                                                         \
	{                                                                      \
		0x02, 0x74, 0x6c, 0x62, 0x66, 0x62                             \
	}

/* What a feedback frame says of one core. */
struct tlb_fb_msg {
	uint16_t core;
	enum tlb_core_run_state state;
	uint64_t host_epoch;
	uint64_t heartbeat;
	uint64_t completions;
	uint64_t work_ns;
	uint64_t service_ns;
};

enum tlb_fb_err {
	TLB_FB_OK = 0,
	TLB_FB_SHORT,       /* fewer bytes than a frame */
	TLB_FB_BAD_TYPE,    /* not the EtherType */
	TLB_FB_BAD_MAGIC,   /* not the magic */
	TLB_FB_BAD_VERSION, /* a version we do not speak */
	TLB_FB_BAD_STATE,   /* no such run state, or reserved bits set */
	TLB_FB_ZERO_EPOCH,  /* host epoch 0 (means "no host") */
};

/* The frame's EtherType is the feedback one (one 16-bit compare; len
 * must be at least 14). */
static inline bool
tlb_fb_is_feedback(const void *frame, size_t len)
{
	const uint8_t *f = (const uint8_t *)frame;

	return len >= 14 && f[12] == (TLB_FB_ETHERTYPE >> 8) &&
	       f[13] == (TLB_FB_ETHERTYPE & 0xff);
}

/* Writes m as a feedback frame into buf (room for len bytes), with the
 * given source MAC (NULL: zeros). Returns TLB_FB_FRAME_LEN, or 0 when len
 * is too small. */
size_t tlb_fb_build(void *buf, size_t len, const uint8_t *src_mac,
		    const struct tlb_fb_msg *m);

/* Parses a feedback frame; trailing bytes (padding) are ignored. Never
 * reads outside frame[0..len). */
enum tlb_fb_err tlb_fb_parse(const void *frame, size_t len,
			     struct tlb_fb_msg *out);

/* Writes a kick frame for core with its doorbell count. Returns
 * TLB_KICK_FRAME_LEN, or 0 when len is too small. */
size_t tlb_kick_build(void *buf, size_t len, const uint8_t *src_mac,
		      uint16_t core, uint64_t doorbell);

/* Parses a kick frame: 0 with *core and *doorbell set, or -1. */
int tlb_kick_parse(const void *frame, size_t len, uint16_t *core,
		   uint64_t *doorbell);

const char *tlb_fb_err_str(enum tlb_fb_err e);

#endif /* TURBOLB_FEEDBACK_H */
