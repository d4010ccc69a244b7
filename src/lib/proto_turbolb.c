/* SPDX-License-Identifier: BSD-3-Clause
 * The turbolb protocol: the 48-byte RPC header of docs/protocol.md. Its
 * checks live with the frame parser in src/lib/proto.c, which runs them
 * inline (and at fixed offsets in include/turbolb/proto_fast.h) because
 * nearly every frame is one; this module names them for the table.
 * Responses echo the work the NIC charged (work_ns), so every response
 * message completes its request exactly.
 */
#include "proto_impl.h"

const struct tlb_proto_ops tlb_proto_turbolb = {
	.name = "turbolb",
	.completion = TLB_COMPLETE_ECHO,
	.classify = tlb_rpc_classify,
};
