/* SPDX-License-Identifier: BSD-3-Clause
 * What every host transport implementation (transport_<name>.c) does the
 * same way: allocating its struct tlb_transport.
 */
#ifndef TURBOLB_TRANSPORT_IMPL_H
#define TURBOLB_TRANSPORT_IMPL_H

#include <stdio.h>
#include <stdlib.h>

#include "turbolb/transport.h"

/* A zeroed block of size bytes (the implementation's struct, which starts
 * with its struct tlb_transport) with the transport's fields set; close
 * frees it with free(). NULL with err filled when out of memory. */
static inline struct tlb_transport *
tlb_transport_alloc(size_t size, const struct tlb_transport_ops *ops, void *ctx,
		    uint32_t n_cores, bool has_credits, char *err,
		    size_t errlen)
{
	struct tlb_transport *t = calloc(1, size);

	if (t == NULL) {
		snprintf(err, errlen, "%s transport: out of memory", ops->name);
		return NULL;
	}
	t->ops = ops;
	t->ctx = ctx;
	t->n_cores = n_cores;
	t->has_credits = has_credits;
	return t;
}

#endif
