/* SPDX-License-Identifier: BSD-3-Clause
 * The datapath's counters, each described once: the one list the daemon
 * makes its counters, their /turbolb/stats keys and their Prometheus
 * metrics from (src/daemon/dp.h, src/lib/metrics.c). No DPDK.
 *
 * X(key, kind, what, help), in the order telemetry and the metrics print
 * them, where kind is
 *   COUNTER  a count; what: its Prometheus family (ending in _total)
 *   SECONDS  a count of nanoseconds; what: its family in seconds
 *   DROP     a drop (key "drop_..."); what: its reason label in the one
 *            family turbolb_drops_total
 * and help is the counter's description, the HELP of its metric.
 */
#ifndef TURBOLB_DP_COUNTERS_H
#define TURBOLB_DP_COUNTERS_H

#define TLB_DP_COUNTERS(X)                                                     \
	X(rx_uplink, COUNTER, "turbolb_uplink_rx_frames_total",                \
	  "Frames received from the uplink.")                                  \
	X(rx_targets, COUNTER, "turbolb_targets_rx_frames_total",              \
	  "Frames received from the host cores' ports.")                       \
	X(steered, COUNTER, "turbolb_steered_packets_total",                   \
	  "Request packets sent to a host core.")                              \
	X(messages, COUNTER, "turbolb_requests_total",                         \
	  "Request messages charged to a host core.")                          \
	X(affinity_hits, COUNTER, "turbolb_affinity_hits_total",               \
	  "Continuation packets of multi-packet messages kept on their "       \
	  "core.")                                                             \
	X(incomplete_messages, COUNTER, "turbolb_incomplete_messages_total",   \
	  "Multi-packet messages whose last packet never came, or that "       \
	  "lost their core: their charge handed back.")                        \
	X(oneway, COUNTER, "turbolb_oneway_requests_total",                    \
	  "Requests never answered by their protocol (memcached noreply): "    \
	  "steered to a host core without a charge.")                          \
	X(held, COUNTER, "turbolb_fifo_held_total",                            \
	  "Requests put in the NIC-side FIFO.")                                \
	X(released, COUNTER, "turbolb_fifo_released_total",                    \
	  "Requests that left the NIC-side FIFO to a host core.")              \
	X(responses, COUNTER, "turbolb_responses_total",                       \
	  "Response packets sent to the uplink.")                              \
	X(completions_inband, COUNTER, "turbolb_completions_inband_total",     \
	  "Completions counted from responses.")                               \
	X(resp_core_mismatch, COUNTER, "turbolb_response_core_mismatch_total", \
	  "Responses whose server_core is not the core of the queue "          \
	  "they came on (counted at the queue's core).")                       \
	X(response_followups, COUNTER, "turbolb_response_followups_total",     \
	  "Response datagrams of a request already completed (more "           \
	  "datagrams or more responses to one request, dns and "               \
	  "memcached): sent on, no completion.")                               \
	X(unanswered, COUNTER, "turbolb_unanswered_requests_total",            \
	  "Requests of dns or memcached with no answer within "                \
	  "host.write_off_us: taken out of the view.")                         \
	X(request_ids_full, COUNTER, "turbolb_request_ids_full_total",         \
	  "Requests of dns or memcached pushed out of the full table of "      \
	  "outstanding request ids, or replaced by a request with the same "   \
	  "id: taken out of the view.")                                        \
	X(completions_credit, COUNTER, "turbolb_completions_credit_total",     \
	  "Completions counted from the credit ring.")                         \
	X(completions_extra, COUNTER, "turbolb_completions_extra_total",       \
	  "Completions beyond what was outstanding, of no written-off "        \
	  "request (duplicates).")                                             \
	X(late_completions, COUNTER, "turbolb_late_completions_total",         \
	  "Completions of written-off or stranded requests.")                  \
	X(written_off, COUNTER, "turbolb_written_off_requests_total",          \
	  "Requests written off at a host core stale for "                     \
	  "host.write_off_us.")                                                \
	X(written_off_work_ns, SECONDS,                                        \
	  "turbolb_written_off_work_seconds_total",                            \
	  "The work of the written-off requests, in seconds.")                 \
	X(pass_up, COUNTER, "turbolb_pass_up_frames_total",                    \
	  "Non-RPC frames from the uplink sent to the default target.")        \
	X(pass_down, COUNTER, "turbolb_pass_down_frames_total",                \
	  "Non-RPC frames from the host side sent to the uplink.")             \
	X(host_restarts, COUNTER, "turbolb_host_restarts_total",               \
	  "Credit ring epoch changes seen.")                                   \
	X(stranded, COUNTER, "turbolb_stranded_requests_total",                \
	  "Requests in flight at a host that restarted.")                      \
	X(kicks_sent, COUNTER, "turbolb_kicks_sent_total",                     \
	  "Doorbells rung: a request steered to a host core that is "          \
	  "not running.")                                                      \
	X(kicks_stall, COUNTER, "turbolb_kicks_stall_total",                   \
	  "Doorbells rung: a host core with work and no progress.")            \
	X(feedback_frames, COUNTER, "turbolb_feedback_frames_total",           \
	  "Feedback frames taken from the host cores' queues "                 \
	  "(host.transport: packet).")                                         \
	X(kick_frames, COUNTER, "turbolb_kick_frames_total",                   \
	  "Doorbells sent as kick frames out of the default target.")          \
	X(drop_fifo_full, DROP, "fifo_full",                                   \
	  "A request to hold, the FIFO full (or no FIFO).")                    \
	X(drop_no_core, DROP, "no_core", "No eligible host core.")             \
	X(drop_tx_full, DROP, "tx_full", "A host core's TX ring full.")        \
	X(drop_uplink_tx_full, DROP, "uplink_tx_full",                         \
	  "The uplink's TX ring full.")                                        \
	X(drop_default_tx_full, DROP, "default_tx_full",                       \
	  "The default target's TX ring full.")                                \
	X(drop_no_default_target, DROP, "no_default_target",                   \
	  "A non-RPC frame, no default target.")                               \
	X(drop_bad_direction, DROP, "bad_direction",                           \
	  "A response from the uplink, or a request from a host.")             \
	X(drop_multi_segment, DROP, "multi_segment",                           \
	  "A frame that could not be linearized.")                             \
	X(drop_continuation, DROP, "continuation",                             \
	  "A packet of a message whose core left rotation.")                   \
	X(drop_shutdown, DROP, "shutdown",                                     \
	  "Still held in the FIFO at shutdown.")                               \
	X(drop_fb_malformed, DROP, "fb_malformed",                             \
	  "A feedback frame that does not parse.")                             \
	X(drop_fb_wrong_core, DROP, "fb_wrong_core",                           \
	  "A feedback frame speaking for another core than its queue's.")      \
	X(drop_fb_stale, DROP, "fb_stale",                                     \
	  "A feedback frame of an older host epoch than the newest seen.")     \
	X(drop_fb_bad_totals, DROP, "fb_bad_totals",                           \
	  "A feedback frame whose totals went back or carry impossible "       \
	  "work: nothing credited.")                                           \
	X(drop_fb_unexpected, DROP, "fb_unexpected",                           \
	  "A feedback frame, the host transport not packet.")                  \
	X(drop_kick_no_mbuf, DROP, "kick_no_mbuf",                             \
	  "A kick frame not sent: no mbuf for it.")

#endif /* TURBOLB_DP_COUNTERS_H */
