/* SPDX-License-Identifier: BSD-3-Clause
 * The control plane's changes to running dispatchers: live reload of the
 * YAML file (SIGHUP, /turbolb/reload) and policy switches
 * (/turbolb/policy). Serialized by one lock; each change is built off the
 * data path and handed to every dispatcher at a loop boundary.
 */
#ifndef TURBOLBD_CONTROL_H
#define TURBOLBD_CONTROL_H

#include <stddef.h>
#include <stdio.h>

#include "turbolb/config.h"

/* cfg is the running configuration (the control plane updates its
 * reloadable fields in place, under its lock). */
void tlb_control_init(struct tlb_config *cfg);

/* Re-reads the file the running config came from. Errors (FILE:LINE:COL)
 * and what changed go to log; msg gets a one-line result. Returns 0 when
 * the new settings are in effect (or nothing changed), -1 when the file was
 * rejected and the old settings stay. */
int tlb_control_reload(FILE *log, char *msg, size_t msglen);

/* Switches every dispatcher to policy spec ("jbsq:4"), keeping the other
 * parameters. Returns 0, or -1 with msg saying why. */
int tlb_control_set_policy(const char *spec, char *msg, size_t msglen);

/* Copies the reloadable part of the running config (for telemetry). */
void tlb_control_snapshot(struct tlb_config *out);

#endif /* TURBOLBD_CONTROL_H */
