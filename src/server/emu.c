/* SPDX-License-Identifier: BSD-3-Clause
 * Emulated FIFO cores: see emu.h.
 */
#include <stdlib.h>
#include <string.h>

#include "emu.h"

#define EMU_DEPTH_MAX (1u << 24)

int
emu_core_init(struct emu_core *c, uint32_t depth)
{
	memset(c, 0, sizeof(*c));
	if (depth == 0 || depth > EMU_DEPTH_MAX || (depth & (depth - 1)) != 0)
		return -1;
	c->ring = calloc(depth, sizeof(*c->ring));
	if (c->ring == NULL)
		return -1;
	c->mask = depth - 1;
	return 0;
}

void
emu_core_free(struct emu_core *c)
{
	free(c->ring);
	c->ring = NULL;
	c->count = 0;
}

uint64_t
emu_admit(struct emu_core *c, uint64_t arrival, uint64_t svc,
	  const struct emu_req *req)
{
	struct emu_req *slot;
	uint64_t start;

	if (emu_room(c) == 0)
		return UINT64_MAX;
	/* FIFO: the request waits for every request admitted before it. */
	start = arrival > c->next_free ? arrival : c->next_free;
	c->next_free = start + svc;
	c->busy += svc;
	c->admitted++;
	slot = &c->ring[(c->head + c->count) & c->mask];
	*slot = *req;
	slot->done = c->next_free;
	c->count++;
	return c->next_free;
}

uint64_t
emu_next_done(const struct emu_core *c)
{
	return c->count == 0 ? UINT64_MAX : c->ring[c->head].done;
}

uint32_t
emu_take(struct emu_core *c, uint64_t now, struct emu_req *out, uint32_t max)
{
	uint32_t n = 0;

	/* Completions within a core do not decrease: the first one still
	 * running ends the walk. */
	while (n < max && c->count != 0 && c->ring[c->head].done <= now) {
		out[n++] = c->ring[c->head];
		c->head = (c->head + 1) & c->mask;
		c->count--;
	}
	return n;
}
