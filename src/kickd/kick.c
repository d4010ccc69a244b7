/* SPDX-License-Identifier: BSD-3-Clause
 * The scheduler kick's decision logic (kick.h has the contracts).
 */
#include <string.h>

#include <linux/perf_event.h>

#include "kick.h"

void
kick_core_forget(struct kick_core *k)
{
	struct kick_counts n = k->n;

	memset(k, 0, sizeof(*k));
	k->n = n;
}

enum kick_action
kick_end(struct kick_core *k, uint64_t now_ns, enum kick_action a)
{
	k->boosted = false;
	k->n.boosted_ns += now_ns - k->boost_ns;
	if (a == KICK_REVERT_BOUND)
		k->n.reverted_bound++;
	else if (a == KICK_REVERT_YIELD)
		k->n.reverted_yield++;
	else
		k->n.reverted_drain++;
	return a;
}

enum kick_action
kick_step(struct kick_core *k, const struct kick_obs *o, uint64_t now_ns,
	  const struct kick_params *p)
{
	uint64_t rings = 0;
	bool ran;

	if (!k->primed || o->doorbell < k->doorbell) {
		/* Rings from before we looked are history, not kicks. */
		k->primed = true;
		k->doorbell = o->doorbell;
		k->records = o->records;
		k->heartbeat = o->heartbeat;
		if (!k->boosted)
			return KICK_NONE;
	}
	rings = o->doorbell - k->doorbell;
	k->doorbell = o->doorbell;
	k->n.rings += rings;
	if (rings != 0)
		k->active_ns = now_ns;
	if (o->records != k->records) {
		k->records = o->records;
		k->posts_records = true;
		k->active_ns = now_ns;
	}
	k->heartbeat = o->heartbeat;

	if (k->boosted) {
		k->n.served += rings;
		if (o->host_state == TLB_RUN_RUNNING)
			k->saw_running = true;
		if (o->cpu == KICK_CPU_ON && !k->saw_on_cpu) {
			k->saw_on_cpu = true;
			k->active_ns = now_ns;
		}
		if (!o->thread_ok || o->host_state == TLB_RUN_OFFLINE ||
		    (k->saw_running && o->host_state == TLB_RUN_PARKED))
			return kick_end(k, now_ns, KICK_REVERT_DRAIN);
		ran = k->saw_on_cpu || o->records != k->records_at_boost ||
		      (!k->posts_records && o->heartbeat != k->hb_at_boost);
		if (ran && now_ns - k->active_ns >= p->quiet_ns)
			return kick_end(k, now_ns, KICK_REVERT_DRAIN);
		if (now_ns - k->boost_ns >= p->max_boost_ns)
			return kick_end(k, now_ns, KICK_REVERT_BOUND);
		return KICK_NONE;
	}
	if (rings == 0)
		return KICK_NONE;
	if (!o->thread_ok || o->host_state == TLB_RUN_OFFLINE) {
		k->n.ignored += rings;
		return KICK_NONE;
	}
	k->boosted = true;
	k->boost_ns = now_ns;
	k->active_ns = now_ns;
	k->records_at_boost = o->records;
	k->hb_at_boost = o->heartbeat;
	k->saw_running = o->host_state == TLB_RUN_RUNNING;
	/* On its CPU already (the NIC side's view was stale, or this is a
	 * stall kick): the quiet clock runs from now. */
	k->saw_on_cpu = o->cpu == KICK_CPU_ON;
	k->boost_rings = rings;
	k->n.served += rings;
	k->n.boosts++;
	return KICK_BOOST;
}

enum kick_action
kick_yield(struct kick_core *k, uint64_t now_ns)
{
	if (!k->boosted)
		return KICK_NONE;
	return kick_end(k, now_ns, KICK_REVERT_YIELD);
}

void
kick_boost_undo(struct kick_core *k, bool failure)
{
	if (!k->boosted)
		return;
	k->boosted = false;
	k->n.boosts--;
	k->n.served -= k->boost_rings;
	k->n.ignored += k->boost_rings;
	if (failure)
		k->n.boost_failures++;
}

void
kick_slot_stats(const struct kick_core *k, struct tlb_cr_kick_stats *ks)
{
	ks->kicks_served = k->n.served;
	ks->boosts = k->n.boosts;
	ks->reverted_drain = k->n.reverted_drain + k->n.reverted_yield;
	ks->reverted_bound = k->n.reverted_bound;
}

void
kick_perf_scan(const uint8_t *data, uint64_t size, uint64_t *tail,
	       uint64_t head, struct kick_perf *st)
{
	struct perf_event_header h;
	uint64_t t = *tail;
	uint32_t cpu;

	if (head - t > size)
		goto bad;
	while (t != head) {
		if (head - t < sizeof(h))
			goto bad;
		memcpy(&h, data + (t & (size - 1)), sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > head - t)
			goto bad;
		if (h.type == PERF_RECORD_SWITCH) {
			st->where = (h.misc & PERF_RECORD_MISC_SWITCH_OUT)
					    ? KICK_CPU_OFF
					    : KICK_CPU_ON;
			st->cpu = -1;
			if (h.size >= sizeof(h) + 2 * sizeof(uint32_t)) {
				memcpy(&cpu,
				       data + ((t + sizeof(h)) & (size - 1)),
				       sizeof(cpu));
				st->cpu = cpu > INT32_MAX ? -1 : (int32_t)cpu;
			}
			st->switches++;
		} else if (h.type == PERF_RECORD_LOST) {
			st->where = KICK_CPU_UNKNOWN;
			st->cpu = -1;
			st->lost++;
		}
		t += h.size;
	}
	*tail = t;
	return;
bad:
	*tail = head;
	st->where = KICK_CPU_UNKNOWN;
	st->cpu = -1;
}
