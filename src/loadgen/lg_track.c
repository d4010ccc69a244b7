/* SPDX-License-Identifier: BSD-3-Clause
 * Outstanding-request tracking: a window of slots indexed by request id.
 *
 * Every issued id ends in exactly one of received, errors or lost (lost
 * may later turn late, which counts it in late as well but never moves it
 * back), so sent == received + errors + lost holds per phase once the run
 * is finished. Responses that match nothing are counted, never trusted.
 */
#include <stdlib.h>

#include "lg.h"

/* Smallest and largest windows. The upper bound keeps the table at a few
 * hundred MiB; past it a slot may be needed again while its request is
 * still in the timeout, which is counted (evicted) rather than hidden. */
#define WINDOW_MIN (1ull << 12)
#define WINDOW_MAX (1ull << 24)

static uint64_t
window_for(double want)
{
	uint64_t w = WINDOW_MIN;

	while (w < WINDOW_MAX && (double)w < want)
		w <<= 1;
	return w;
}

uint64_t
lg_track_window(double rate, uint32_t timeout_ms)
{
	/* Twice the mean number in flight at the timeout, plus room for the
	 * bursts of a Poisson schedule and of a sender catching up. */
	return window_for(2.0 * rate * ((double)timeout_ms / 1e3) + 4096.0);
}

uint64_t
lg_track_window_n(uint64_t n)
{
	/* Twice the most in flight, so a request counted lost keeps its slot
	 * a while longer, to be told "late" rather than "unknown". */
	return window_for(2.0 * (double)n + 4096.0);
}

int
lg_track_init(struct lg_track *t, uint64_t window, uint64_t timeout,
	      uint64_t first_id)
{
	struct lg_slot *slots;

	if (window == 0 || (window & (window - 1)) != 0)
		return -1;
	/* calloc: every slot starts LG_SLOT_FREE. */
	slots = calloc(window, sizeof(*slots));
	if (slots == NULL)
		return -1;
	*t = (struct lg_track){
		.slots = slots,
		.mask = window - 1,
		.first_id = first_id,
		.next_id = first_id,
		.tail = first_id,
		.timeout = timeout,
	};
	return 0;
}

void
lg_track_fini(struct lg_track *t)
{
	free(t->slots);
	t->slots = NULL;
}

static void
mark_lost(struct lg_track *t, struct lg_slot *s)
{
	s->state = LG_SLOT_LOST;
	t->outstanding--;
	t->phase[s->measured].lost++;
}

/* Moves tail past everything resolved. */
static void
advance_tail(struct lg_track *t)
{
	while (t->tail < t->next_id) {
		const struct lg_slot *s = &t->slots[t->tail & t->mask];

		if (s->id == t->tail && s->state == LG_SLOT_OUTSTANDING)
			break;
		t->tail++;
	}
}

uint64_t
lg_track_issue(struct lg_track *t, uint64_t now, bool measured)
{
	uint64_t id = t->next_id++;
	struct lg_slot *s = &t->slots[id & t->mask];

	if (s->state == LG_SLOT_OUTSTANDING) {
		/* Its request is a whole window old: give up on it now. */
		mark_lost(t, s);
		t->evicted++;
	}
	s->id = id;
	s->sent = now;
	s->state = LG_SLOT_OUTSTANDING;
	s->measured = measured ? LG_PHASE_MEASURED : LG_PHASE_WARMUP;
	t->outstanding++;
	t->phase[s->measured].sent++;
	if (t->tail + t->mask < id)
		advance_tail(t);
	return id;
}

enum lg_match
lg_track_complete(struct lg_track *t, uint64_t id, bool is_error,
		  uint64_t *sent, bool *measured)
{
	struct lg_slot *s;

	if (id < t->first_id || id >= t->next_id) {
		t->unknown++;
		return LG_MATCH_UNKNOWN;
	}
	s = &t->slots[id & t->mask];
	if (s->id != id || s->state == LG_SLOT_FREE) {
		t->unknown++;
		return LG_MATCH_UNKNOWN;
	}
	switch (s->state) {
	case LG_SLOT_OUTSTANDING:
		s->state = LG_SLOT_DONE;
		t->outstanding--;
		if (is_error)
			t->phase[s->measured].errors++;
		else
			t->phase[s->measured].received++;
		*sent = s->sent;
		*measured = s->measured == LG_PHASE_MEASURED;
		if (id == t->tail)
			advance_tail(t);
		return LG_MATCH_OK;
	case LG_SLOT_LOST:
		s->state = LG_SLOT_LATE;
		t->phase[s->measured].late++;
		return LG_MATCH_LATE;
	default:
		t->duplicates++;
		return LG_MATCH_DUP;
	}
}

void
lg_track_expire(struct lg_track *t, uint64_t now)
{
	while (t->tail < t->next_id) {
		struct lg_slot *s = &t->slots[t->tail & t->mask];

		if (s->id == t->tail && s->state == LG_SLOT_OUTSTANDING) {
			/* Ids go out in time order: the rest are younger.
			 * now may predate a send made after it was read. */
			if (now < s->sent || now - s->sent <= t->timeout)
				break;
			mark_lost(t, s);
		}
		t->tail++;
	}
}

void
lg_track_finish(struct lg_track *t)
{
	for (; t->tail < t->next_id; t->tail++) {
		struct lg_slot *s = &t->slots[t->tail & t->mask];

		if (s->id == t->tail && s->state == LG_SLOT_OUTSTANDING)
			mark_lost(t, s);
	}
}

uint64_t
lg_track_write_off(struct lg_track *t)
{
	uint64_t n = 0;

	for (; t->tail < t->next_id; t->tail++) {
		struct lg_slot *s = &t->slots[t->tail & t->mask];

		if (s->id == t->tail && s->state == LG_SLOT_OUTSTANDING) {
			mark_lost(t, s);
			t->phase[s->measured].written_off++;
			n++;
		}
	}
	return n;
}
