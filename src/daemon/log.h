/* SPDX-License-Identifier: BSD-3-Clause
 * Log types of the daemon: turbolb.main, turbolb.port, turbolb.dp,
 * turbolb.telemetry, turbolb.control. Each file logs under its own type.
 */
#ifndef TURBOLBD_LOG_H
#define TURBOLBD_LOG_H

#include <rte_log.h>

extern int tlb_logtype_main;
extern int tlb_logtype_port;
extern int tlb_logtype_dp;
extern int tlb_logtype_telemetry;
extern int tlb_logtype_control;

#define TLB_LOG(level, type, fmt, ...)                                         \
	rte_log(RTE_LOG_##level, tlb_logtype_##type,                           \
		"turbolb." #type ": " fmt "\n", ##__VA_ARGS__)

#endif /* TURBOLBD_LOG_H */
