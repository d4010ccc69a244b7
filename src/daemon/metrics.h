/* SPDX-License-Identifier: BSD-3-Clause
 * The Prometheus endpoint: GET /metrics answers the counters of
 * /turbolb/stats and /turbolb/cores as Prometheus text
 * (include/turbolb/metrics.h), served by libevent's evhttp on a DPDK
 * control thread, never on a datapath lcore.
 */
#ifndef TURBOLBD_METRICS_H
#define TURBOLBD_METRICS_H

#include "turbolb/config.h"

/* Listens on cfg->metrics.listen, when it is set, and serves from a new
 * control thread; the dispatchers (tlb_dps) must exist until
 * tlb_metrics_stop(). Returns 0 (also when nothing is configured), or -1
 * when the address cannot be listened on (logged). */
int tlb_metrics_start(const struct tlb_config *cfg);

/* Stops the thread and closes the socket (a unix socket's file is
 * removed). Idempotent; a no-op when not started. */
void tlb_metrics_stop(void);

#endif /* TURBOLBD_METRICS_H */
