/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd's configuration: YAML (libyaml) -> typed struct with defaults
 * and range checks. Every error is reported as "FILE:LINE:COL: message" on
 * the given stream; loading goes on after an error to report as many as
 * it can, then fails. No DPDK here. Reference: docs/configuration.md.
 */
#ifndef TURBOLB_CONFIG_H
#define TURBOLB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "turbolb/credit_ring.h"
#include "turbolb/load_view.h"
#include "turbolb/policy.h"
#include "turbolb/proto.h"

#define TLB_CFG_STR_MAX      256 /* device names, devargs, paths */
#define TLB_CFG_MAX_VDEVS    32
#define TLB_CFG_MAX_EAL_ARGS 32
#define TLB_CFG_MAX_LCORES   64
/* datapath.tx_hold_ns's default: how long a request may wait in its
 * host core's TX buffer for others to share the burst (docs/performance.md,
 * "The latency bound") */
#define TLB_CFG_TX_HOLD_NS 1000u

enum tlb_credit_mode {
	TLB_CREDITS_RING = 0,   /* completions from the credit ring */
	TLB_CREDITS_INBAND = 1, /* completions counted from responses */
};

enum tlb_transport_kind {
	TLB_TRANSPORT_SHM = 0,  /* credit ring in shared memory */
	TLB_TRANSPORT_NONE = 1, /* no host memory: in-band credits only */
};

enum tlb_log_level { /* same numbers as RTE_LOG_* */
		     TLB_LOG_EMERG = 1,
		     TLB_LOG_ALERT,
		     TLB_LOG_CRIT,
		     TLB_LOG_ERR,
		     TLB_LOG_WARNING,
		     TLB_LOG_NOTICE,
		     TLB_LOG_INFO,
		     TLB_LOG_DEBUG,
};

/* A port, or a queue of a port, named by its DPDK device name
 * ("net_memif0", "0000:03:00.0", "0000:03:00.0_representor_vf2"). */
struct tlb_port_ref {
	char port[TLB_CFG_STR_MAX];
	uint16_t queue;
};

struct tlb_target_cfg {
	uint32_t core; /* host core id: 0 .. n_targets-1, each exactly once */
	struct tlb_port_ref ref;
};

struct tlb_config {
	char path[TLB_CFG_STR_MAX]; /* file it came from */

	struct {
		uint32_t main_lcore;               /* default 0 */
		uint32_t memory_mb;                /* -m; default 256 */
		bool no_huge;                      /* default false */
		bool no_pci;                       /* default false */
		char file_prefix[TLB_CFG_STR_MAX]; /* default "turbolbd" */
		char *vdevs[TLB_CFG_MAX_VDEVS];    /* --vdev, in order */
		unsigned int n_vdevs;
		char *args[TLB_CFG_MAX_EAL_ARGS]; /* extra EAL arguments */
		unsigned int n_args;
	} eal;

	struct {
		uint32_t lcores[TLB_CFG_MAX_LCORES]; /* datapath lcores */
		unsigned int n_lcores;               /* default 1: lcore 1 */
		uint32_t burst;                      /* 1..512, default 32 */
		uint32_t tx_hold_ns; /* latency bound of TX buffers, 0..1000000
				      */
		uint32_t housekeeping_us;  /* 1..10000, default 100 */
		uint32_t idle_sleep_us;    /* 0: busy poll (default) */
		uint32_t rx_desc, tx_desc; /* default 1024 each */
		uint32_t mbufs;            /* 0: sized automatically */
	} datapath;

	struct {
		struct tlb_port_ref uplink; /* required */
		bool has_default_target;
		struct tlb_port_ref default_target; /* slow path for non-RPC */
		struct tlb_target_cfg targets[TLB_MAX_CORES]; /* by core id */
		unsigned int n_targets; /* required, >= 1 */
	} ports;

	/* rpc.ports (or its short form rpc.udp_ports: turbolb ports) */
	struct {
		uint16_t udp_ports[TLB_RPC_MAX_PORTS]; /* default [9000] */
		unsigned int n_udp_ports;
		/* enum tlb_proto of each of udp_ports, default turbolb */
		uint8_t port_proto[TLB_RPC_MAX_PORTS];
	} rpc;

	struct {
		char name[TLB_POLICY_NAME_MAX]; /* default "jsq" */
		struct tlb_policy_params params;
	} policy;

	struct {
		uint32_t capacity; /* NIC-side FIFO; default 4096 */
	} fifo;

	struct {
		uint32_t
			entries; /* multi-packet affinity table; default 4096 */
		uint32_t timeout_us; /* default 1000 */
	} affinity;

	struct {
		enum tlb_transport_kind transport; /* default shm */
		enum tlb_credit_mode credits;      /* default ring */
		char credit_ring[TLB_CR_NAME_MAX]; /* default "/turbolb-credits"
						    */
		uint32_t ring_size;          /* power of 2; default 1024 */
		uint32_t stale_timeout_us;   /* default 10000 */
		uint32_t write_off_us;       /* default 100000 */
		char group[TLB_CFG_STR_MAX]; /* may attach to the ring; "" */
	} host;

	struct {
		bool enabled;             /* ring doorbells; default false */
		uint32_t min_interval_us; /* per core; default 100 */
		uint32_t stall_us; /* kick a core with work and no progress
				    * this long; 0: only on steering to a
				    * core that is not running; default 200 */
	} kick;

	struct {
		bool enabled; /* default true */
	} telemetry;

	struct {
		/* The Prometheus endpoint: "HOST:PORT", "[V6ADDR]:PORT" or
		 * "unix:PATH"; "" (the default): no endpoint */
		char listen[TLB_CFG_STR_MAX];
	} metrics;

	struct {
		enum tlb_log_level level; /* default info */
	} log;
};

/* metrics.listen, parsed: a TCP address or a unix socket path. */
struct tlb_listen_addr {
	bool is_unix;
	char host[TLB_CFG_STR_MAX]; /* TCP: a numeric address or a name */
	uint16_t port;              /* TCP: 1..65535 */
	char path[108];             /* unix: sun_path, NUL-terminated */
};

/* Parses a metrics.listen value. Returns 0, or -1 with err filled (why,
 * without the key's name or position). */
int tlb_listen_addr_parse(const char *s, struct tlb_listen_addr *a, char *err,
			  size_t errlen);

/* Fills every field with its default (no targets, no uplink). */
void tlb_config_defaults(struct tlb_config *cfg);

/* Loads path into cfg (defaults first). Returns the number of errors, each
 * printed to errs as "FILE:LINE:COL: message"; 0 means cfg is valid.
 * Whatever the result, call tlb_config_free() on cfg afterwards. */
int tlb_config_load(const char *path, struct tlb_config *cfg, FILE *errs);

/* Same, from a buffer; `name` stands for FILE in messages. */
int tlb_config_load_buffer(const char *name, const char *text, size_t len,
			   struct tlb_config *cfg, FILE *errs);

void tlb_config_free(struct tlb_config *cfg);

/* Whether a reload from a to b is refused: the schema's keys that only a
 * restart can change (the others say CFG_RELOAD, src/lib/config_schema.h)
 * compared. Returns NULL when every difference can be reloaded, else buf:
 * the section of the first that cannot, with the keys of that section a
 * reload can change, "host (only host.stale_timeout_us and
 * host.write_off_us can be reloaded)". */
const char *tlb_config_needs_restart(const struct tlb_config *a,
				     const struct tlb_config *b, char *buf,
				     size_t len);

/* One line: "policy jsq, 4 targets, uplink net_memif0, 1 datapath lcore". */
void tlb_config_summary(const struct tlb_config *cfg, char *buf, size_t len);

/* Name of a credit mode / transport / log level as written in YAML. */
const char *tlb_credit_mode_str(enum tlb_credit_mode m);
const char *tlb_transport_kind_str(enum tlb_transport_kind k);
const char *tlb_log_level_str(enum tlb_log_level l);

#endif /* TURBOLB_CONFIG_H */
