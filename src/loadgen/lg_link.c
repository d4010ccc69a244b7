/* SPDX-License-Identifier: BSD-3-Clause
 * The link watch's decisions (lg.h), without DPDK: loadgen.c reads the
 * link and carries out the actions, the unit test drives it with made-up
 * link states and clock.
 */
#include "lg.h"

void
lg_link_init(struct lg_link *l, bool reconnects, uint64_t interval,
	     uint64_t start_wait, uint64_t now)
{
	*l = (struct lg_link){
		.state = LG_LINK_WAITING,
		.started_at = now,
		.reconnects = reconnects,
		.interval = interval,
		.start_wait = start_wait,
		.next_check = now + interval,
	};
}

enum lg_link_action
lg_link_check(struct lg_link *l, uint64_t now, bool link_up)
{
	l->next_check = now + l->interval;
	switch (l->state) {
	case LG_LINK_UP:
		if (link_up)
			return LG_LINK_NONE;
		l->state = LG_LINK_DOWN;
		l->down_since = now;
		l->downs++;
		return LG_LINK_WENT_DOWN;
	case LG_LINK_DOWN:
		/* A link that comes back by itself (a NIC, or a memif peer
		 * that reconnected to us) needs nothing more. */
		if (link_up)
			break;
		if (!l->reconnects)
			return LG_LINK_NONE;
		l->state = LG_LINK_STARTING;
		return LG_LINK_RESTART;
	case LG_LINK_STARTING:
		return LG_LINK_RESTART;
	case LG_LINK_WAITING:
		if (link_up)
			break;
		if (!l->reconnects)
			return LG_LINK_NONE;
		/* Started but never up: a peer that was itself still
		 * starting may have refused the handshake, and the PMD does
		 * not try again. */
		if (now - l->started_at < l->start_wait)
			return LG_LINK_NONE;
		l->state = LG_LINK_STARTING;
		return LG_LINK_RESTART;
	}
	l->state = LG_LINK_UP;
	return LG_LINK_CAME_UP;
}

void
lg_link_started(struct lg_link *l, uint64_t now, bool ok)
{
	if (!ok) {
		l->start_failures++;
		return;
	}
	l->state = LG_LINK_WAITING;
	l->started_at = now;
	l->restarts++;
}
