/* SPDX-License-Identifier: BSD-3-Clause
 * Feedback and kick frames: their builders and parsers (feedback.h). Both
 * sides link this file: the daemon through the core library, the host
 * library with a copy of its own.
 */
#include <string.h>

#include "turbolb/feedback.h"

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void
put_eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	memcpy(f, dst, 6);
	if (src != NULL)
		memcpy(f + 6, src, 6);
	else
		memset(f + 6, 0, 6);
	put16(f + 12, type);
}

size_t
tlb_fb_build(void *buf, size_t len, const uint8_t *src_mac,
	     const struct tlb_fb_msg *m)
{
	static const uint8_t dst[6] = TLB_FB_DST_MAC;
	uint8_t *f = buf;

	if (len < TLB_FB_FRAME_LEN)
		return 0;
	put_eth(f, dst, src_mac, TLB_FB_ETHERTYPE);
	put32(f + 14, TLB_FB_MAGIC);
	f[18] = TLB_FB_VERSION;
	f[19] = (uint8_t)m->state;
	put16(f + 20, m->core);
	put16(f + 22, 0);
	put64(f + 24, m->host_epoch);
	put64(f + 32, m->heartbeat);
	put64(f + 40, m->completions);
	put64(f + 48, m->work_ns);
	put64(f + 56, m->service_ns);
	return TLB_FB_FRAME_LEN;
}

enum tlb_fb_err
tlb_fb_parse(const void *frame, size_t len, struct tlb_fb_msg *out)
{
	const uint8_t *f = frame;

	if (len < TLB_FB_FRAME_LEN)
		return TLB_FB_SHORT;
	if (get16(f + 12) != TLB_FB_ETHERTYPE)
		return TLB_FB_BAD_TYPE;
	if (get32(f + 14) != TLB_FB_MAGIC)
		return TLB_FB_BAD_MAGIC;
	if (f[18] != TLB_FB_VERSION)
		return TLB_FB_BAD_VERSION;
	if (f[19] > TLB_RUN_PARKED || get16(f + 22) != 0)
		return TLB_FB_BAD_STATE;
	out->host_epoch = get64(f + 24);
	if (out->host_epoch == 0)
		return TLB_FB_ZERO_EPOCH;
	out->state = (enum tlb_core_run_state)f[19];
	out->core = get16(f + 20);
	out->heartbeat = get64(f + 32);
	out->completions = get64(f + 40);
	out->work_ns = get64(f + 48);
	out->service_ns = get64(f + 56);
	return TLB_FB_OK;
}

size_t
tlb_kick_build(void *buf, size_t len, const uint8_t *src_mac, uint16_t core,
	       uint64_t doorbell)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *f = buf;

	if (len < TLB_KICK_FRAME_LEN)
		return 0;
	put_eth(f, bcast, src_mac, TLB_KICK_ETHERTYPE);
	put32(f + 14, TLB_KICK_MAGIC);
	f[18] = TLB_FB_VERSION;
	f[19] = 0;
	put16(f + 20, core);
	put16(f + 22, 0);
	put64(f + 24, doorbell);
	return TLB_KICK_FRAME_LEN;
}

int
tlb_kick_parse(const void *frame, size_t len, uint16_t *core,
	       uint64_t *doorbell)
{
	const uint8_t *f = frame;

	if (len < TLB_KICK_FRAME_LEN || get16(f + 12) != TLB_KICK_ETHERTYPE ||
	    get32(f + 14) != TLB_KICK_MAGIC || f[18] != TLB_FB_VERSION)
		return -1;
	*core = get16(f + 20);
	*doorbell = get64(f + 24);
	return 0;
}

const char *
tlb_fb_err_str(enum tlb_fb_err e)
{
	switch (e) {
	case TLB_FB_OK:
		return "ok";
	case TLB_FB_SHORT:
		return "short";
	case TLB_FB_BAD_TYPE:
		return "bad_type";
	case TLB_FB_BAD_MAGIC:
		return "bad_magic";
	case TLB_FB_BAD_VERSION:
		return "bad_version";
	case TLB_FB_BAD_STATE:
		return "bad_state";
	case TLB_FB_ZERO_EPOCH:
		return "zero_epoch";
	}
	return "unknown";
}
