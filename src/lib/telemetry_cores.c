/* SPDX-License-Identifier: BSD-3-Clause
 * /turbolb/cores in pages: see include/turbolb/telemetry_cores.h.
 */
#include <string.h>

#include "turbolb/telemetry_cores.h"

const char *
tlb_tel_core_state(const struct tlb_core_load *c)
{
	if (!c->online)
		return "offline";
	if (c->stale)
		return "stale";
	if (c->probing)
		return "probing";
	return c->running ? "running" : "online";
}

void
tlb_tel_core_fields(const struct tlb_tel_core *c, const struct tlb_tel_sink *s)
{
	s->u64(s->arg, "sent", c->sent);
	s->u64(s->arg, "completed", c->completed);
	s->u64(s->arg, "outstanding", c->outstanding);
	s->u64(s->arg, "outstanding_work_ns", c->outstanding_work_ns);
	s->str(s->arg, "state", c->state);
	s->u64(s->arg, "stale", c->stale);
	s->u64(s->arg, "running", c->running);
	s->u64(s->arg, "stale_events", c->stale_events);
	s->u64(s->arg, "written_off", c->written_off);
	s->u64(s->arg, "credit_fallback", c->credit_fallback);
	s->u64(s->arg, "dispatcher", c->dispatcher);
	if (!c->has_host)
		return;
	s->u64(s->arg, "tid", c->host.tid);
	s->u64(s->arg, "off_cpu", c->host.off_cpu);
	s->u64(s->arg, "kicks_served", c->host.kick.kicks_served);
	s->u64(s->arg, "kick_boosts", c->host.kick.boosts);
	s->u64(s->arg, "kick_reverted_drain", c->host.kick.reverted_drain);
	s->u64(s->arg, "kick_reverted_bound", c->host.kick.reverted_bound);
}

/* A decimal number of at most 32 bits at *s, which is moved past it. */
static int
parse_u32(const char **s, uint32_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return -1;
		p++;
	}
	*out = (uint32_t)v;
	*s = p;
	return 0;
}

int
tlb_tel_cores_params(const char *params, uint32_t *first, uint32_t *count)
{
	const char *p = params;

	*first = 0;
	*count = TLB_TEL_CORES_PAGE_MAX;
	if (p == NULL || *p == '\0')
		return 0;
	if (parse_u32(&p, first) != 0)
		return -1;
	if (*p == '\0')
		return 0;
	if (*p != ',')
		return -1;
	p++;
	if (parse_u32(&p, count) != 0 || *p != '\0' || *count == 0)
		return -1;
	if (*count > TLB_TEL_CORES_PAGE_MAX)
		*count = TLB_TEL_CORES_PAGE_MAX;
	return 0;
}

void
tlb_tel_cores_page(const uint32_t *ids, uint32_t n_ids, uint32_t first,
		   uint32_t count, struct tlb_tel_page *p)
{
	/* slot[id - first]: the position of that id plus one, 0: none */
	uint32_t slot[TLB_TEL_CORES_PAGE_MAX] = {0};
	uint64_t end;

	if (count > TLB_TEL_CORES_PAGE_MAX)
		count = TLB_TEL_CORES_PAGE_MAX;
	end = (uint64_t)first + count;
	memset(p, 0, sizeof(*p));
	for (uint32_t k = 0; k < n_ids; k++) {
		if (ids[k] >= end) {
			if (!p->more || ids[k] < p->next)
				p->next = ids[k];
			p->more = true;
		} else if (ids[k] >= first) {
			slot[ids[k] - first] = k + 1;
		}
	}
	for (uint32_t i = 0; i < count; i++)
		if (slot[i] != 0)
			p->pos[p->n++] = slot[i] - 1;
}
