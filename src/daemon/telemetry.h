/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef TURBOLBD_TELEMETRY_H
#define TURBOLBD_TELEMETRY_H

/* Registers the /turbolb/... commands. Returns 0 or -1. */
int tlb_telemetry_register(void);

#endif /* TURBOLBD_TELEMETRY_H */
