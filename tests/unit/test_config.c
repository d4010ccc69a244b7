/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the YAML configuration loader: the shipped files, the
 * defaults, every file of tests/configs/bad/ against its "# expect:" line,
 * strict integers, range boundaries and the error format.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "turbolb/config.h"
#include "config_schema.h"

#ifndef TLB_SRCDIR
#error "build with -DTLB_SRCDIR=\"<repository root>\""
#endif

#define BAD_DIR TLB_SRCDIR "/tests/configs/bad"

/* A config with just the required keys; tests append sections to it. */
#define BASE                                                                   \
	"ports:\n"                                                             \
	"  uplink: { port: up0 }\n"                                            \
	"  targets: [ { core: 0, port: host0 } ]\n"

/* Loads text as "t.yaml"; the messages land in *msgs (free() it). */
static int
load_text(const char *text, struct tlb_config *cfg, char **msgs)
{
	size_t len = 0;
	FILE *f;
	int n;

	*msgs = NULL;
	f = open_memstream(msgs, &len);
	assert_non_null(f);
	n = tlb_config_load_buffer("t.yaml", text, strlen(text), cfg, f);
	fclose(f);
	return n;
}

/* Error count for text, for tests that only care whether it loads. */
static int
count_errors(const char *text)
{
	struct tlb_config cfg;
	char *msgs;
	int n;

	n = load_text(text, &cfg, &msgs);
	tlb_config_free(&cfg);
	free(msgs);
	return n;
}

static char *
concat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	assert_non_null(s);
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

/* ---- the shipped configurations ---- */

static void
test_default_config(void **state)
{
	const char *path = TLB_SRCDIR "/configs/turbolbd.yaml";
	struct tlb_config cfg;
	char summary[256];
	unsigned int i;

	(void)state;
	assert_int_equal(tlb_config_load(path, &cfg, stderr), 0);
	assert_string_equal(cfg.path, path);

	assert_true(cfg.eal.no_huge);
	assert_int_equal(cfg.eal.memory_mb, 256);
	assert_int_equal(cfg.eal.main_lcore, 0);
	assert_int_equal(cfg.eal.n_vdevs, 2);
	assert_string_equal(cfg.eal.vdevs[0],
			    "net_memif0,role=server,"
			    "socket=/run/turbolb/uplink.sock,"
			    "socket-abstract=no,id=0,zero-copy=no");
	assert_string_equal(cfg.eal.vdevs[1], "net_memif1,role=server,"
					      "socket=/run/turbolb/host.sock,"
					      "socket-abstract=no,id=0");

	assert_string_equal(cfg.ports.uplink.port, "net_memif0");
	assert_int_equal(cfg.ports.uplink.queue, 0);
	assert_false(cfg.ports.has_default_target);
	assert_int_equal(cfg.ports.n_targets, 4);
	for (i = 0; i < 4; i++) {
		assert_int_equal(cfg.ports.targets[i].core, i);
		assert_string_equal(cfg.ports.targets[i].ref.port,
				    "net_memif1");
		assert_int_equal(cfg.ports.targets[i].ref.queue, i);
	}

	assert_int_equal(cfg.datapath.n_lcores, 1);
	assert_int_equal(cfg.datapath.lcores[0], 1);
	assert_int_equal(cfg.rpc.n_udp_ports, 1);
	assert_int_equal(cfg.rpc.udp_ports[0], 9000);
	assert_string_equal(cfg.policy.name, "jsq");
	assert_int_equal(cfg.host.credits, TLB_CREDITS_RING);
	assert_string_equal(cfg.host.credit_ring, "/turbolb-credits");
	assert_int_equal(cfg.host.ring_size, 1024);
	assert_int_equal(cfg.log.level, TLB_LOG_INFO);

	tlb_config_summary(&cfg, summary, sizeof(summary));
	assert_string_equal(summary,
			    "policy jsq, 4 targets, uplink net_memif0, "
			    "1 datapath lcore, credits ring");
	tlb_config_free(&cfg);
	assert_int_equal(cfg.eal.n_vdevs, 0);
	assert_null(cfg.eal.vdevs[0]);
}

static void
test_bluefield_config(void **state)
{
	const char *path = TLB_SRCDIR "/configs/bluefield-example.yaml";
	struct tlb_config cfg;
	char name[TLB_CFG_STR_MAX];
	unsigned int i;

	(void)state;
	assert_int_equal(tlb_config_load(path, &cfg, stderr), 0);

	assert_false(cfg.eal.no_huge);
	assert_false(cfg.eal.no_pci);
	assert_int_equal(cfg.eal.n_vdevs, 0);
	assert_true(cfg.eal.n_args >= 1);
	assert_string_equal(cfg.eal.args[0],
			    "--allow=0000:03:00.0,"
			    "representor=pf0vf[0-7,65535],dv_flow_en=1");

	assert_int_equal(cfg.datapath.n_lcores, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(cfg.datapath.lcores[i], i + 1);

	assert_string_equal(cfg.ports.uplink.port, "0000:03:00.0");
	assert_true(cfg.ports.has_default_target);
	assert_string_equal(cfg.ports.default_target.port,
			    "0000:03:00.0_representor_vf4294967295");
	assert_int_equal(cfg.ports.n_targets, 8);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "0000:03:00.0_representor_vf%u",
			 i);
		assert_int_equal(cfg.ports.targets[i].core, i);
		assert_string_equal(cfg.ports.targets[i].ref.port, name);
		assert_int_equal(cfg.ports.targets[i].ref.queue, 0);
	}
	assert_string_equal(cfg.policy.name, "jlq");
	assert_true(cfg.policy.params.prefer_running);
	assert_string_equal(cfg.host.group, "turbolb");
	tlb_config_free(&cfg);
}

/* ---- defaults ---- */

static void
test_defaults_when_omitted(void **state)
{
	struct tlb_config cfg, def;
	char *msgs;

	(void)state;
	tlb_config_defaults(&def);
	assert_int_equal(def.eal.memory_mb, 256);
	assert_string_equal(def.eal.file_prefix, "turbolbd");
	assert_int_equal(def.datapath.n_lcores, 1);
	assert_int_equal(def.datapath.lcores[0], 1);
	assert_int_equal(def.datapath.burst, 32);
	assert_int_equal(def.datapath.tx_hold_ns, 1000);
	assert_int_equal(def.datapath.housekeeping_us, 100);
	assert_int_equal(def.datapath.rx_desc, 1024);
	assert_int_equal(def.datapath.mbufs, 0);
	assert_int_equal(def.rpc.udp_ports[0], 9000);
	assert_string_equal(def.policy.name, "jsq");
	assert_int_equal(def.policy.params.d, 2);
	assert_int_equal(def.policy.params.k, 2);
	assert_int_equal(def.policy.params.seed, 1);
	assert_int_equal(def.fifo.capacity, 4096);
	assert_int_equal(def.affinity.entries, 4096);
	assert_int_equal(def.affinity.timeout_us, 1000);
	assert_int_equal(def.host.credits, TLB_CREDITS_RING);
	assert_string_equal(def.host.credit_ring, "/turbolb-credits");
	assert_int_equal(def.host.ring_size, 1024);
	assert_int_equal(def.host.stale_timeout_us, 10000);
	assert_string_equal(def.host.group, "");
	assert_false(def.kick.enabled);
	assert_int_equal(def.kick.min_interval_us, 100);
	assert_int_equal(def.kick.stall_us, 200);
	assert_true(def.telemetry.enabled);
	assert_int_equal(def.log.level, TLB_LOG_INFO);

	/* every optional section left out, or present but empty */
	assert_int_equal(load_text(BASE "eal:\nhost:\n", &cfg, &msgs), 0);
	assert_memory_equal(&cfg.eal, &def.eal, sizeof(cfg.eal));
	assert_memory_equal(&cfg.datapath, &def.datapath, sizeof(cfg.datapath));
	assert_memory_equal(&cfg.rpc, &def.rpc, sizeof(cfg.rpc));
	assert_memory_equal(&cfg.policy, &def.policy, sizeof(cfg.policy));
	assert_memory_equal(&cfg.fifo, &def.fifo, sizeof(cfg.fifo));
	assert_memory_equal(&cfg.affinity, &def.affinity, sizeof(cfg.affinity));
	assert_memory_equal(&cfg.host, &def.host, sizeof(cfg.host));
	assert_memory_equal(&cfg.kick, &def.kick, sizeof(cfg.kick));
	assert_memory_equal(&cfg.telemetry, &def.telemetry,
			    sizeof(cfg.telemetry));
	assert_memory_equal(&cfg.log, &def.log, sizeof(cfg.log));
	assert_int_equal(cfg.ports.uplink.queue, 0);
	assert_int_equal(cfg.ports.targets[0].ref.queue, 0);
	assert_false(cfg.ports.has_default_target);
	tlb_config_free(&cfg);
	free(msgs);
}

/* ---- tests/configs/bad: each file against its "# expect:" line ---- */

static int
is_yaml(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0;
}

static void
check_bad_file(const char *path)
{
	char line[256], word[128], where[512];
	struct tlb_config cfg;
	size_t len = 0, l, c;
	char *msgs = NULL;
	FILE *f, *errs;
	int n;

	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	if (sscanf(line, "# expect: %zu:%zu %127[^\n]", &l, &c, word) != 3)
		fail_msg("%s: first line is not '# expect: LINE:COL word'",
			 path);

	errs = open_memstream(&msgs, &len);
	assert_non_null(errs);
	n = tlb_config_load(path, &cfg, errs);
	fclose(errs);
	tlb_config_free(&cfg);

	/* the position must start a message: "FILE:LINE:COL: " */
	snprintf(where, sizeof(where), "%s:%zu:%zu: ", path, l, c);
	if (n < 1 || strstr(msgs, where) == NULL ||
	    strstr(strstr(msgs, where), word) == NULL) {
		print_error("%s: expected an error at %zu:%zu with '%s', got "
			    "%d error(s):\n%s",
			    path, l, c, word, n, msgs);
		free(msgs);
		fail();
	}
	free(msgs);
}

static void
test_bad_files(void **state)
{
	struct dirent **names;
	char path[512];
	int i, n;

	(void)state;
	n = scandir(BAD_DIR, &names, is_yaml, alphasort);
	assert_true(n >= 13); /* one file per error class, at least */
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", BAD_DIR,
			 names[i]->d_name);
		check_bad_file(path);
		free(names[i]);
	}
	free(names);
}

/* ---- error reporting ---- */

static void
test_three_errors(void **state)
{
	struct tlb_config cfg;
	char *msgs;

	(void)state;
	assert_int_equal(load_text(BASE "datapath:\n"
					"  burst: 0\n"
					"  bogus: 1\n"
					"host:\n"
					"  credits: fast\n",
				   &cfg, &msgs),
			 3);
	assert_non_null(strstr(msgs, "t.yaml:5:10: datapath.burst: "));
	assert_non_null(
		strstr(msgs, "t.yaml:6:3: datapath.bogus: unknown key"));
	assert_non_null(strstr(msgs, "t.yaml:8:12: host.credits: "));
	tlb_config_free(&cfg);
	free(msgs);
}

/* A config written for the old TX flush timer is refused where the key
 * stands, with what replaced it. */
static void
test_removed_tx_flush_us(void **state)
{
	struct tlb_config cfg;
	char *msgs;

	(void)state;
	assert_int_equal(load_text(BASE "datapath:\n"
					"  tx_flush_us: 100\n",
				   &cfg, &msgs),
			 1);
	assert_non_null(strstr(msgs, "t.yaml:5:16: datapath.tx_flush_us: "
				     "removed: TX buffers are sent within "
				     "datapath.tx_hold_ns"));
	tlb_config_free(&cfg);
	free(msgs);
}

static void
test_load_buffer_name(void **state)
{
	const char text[] = "ports:\n  uplink: { port: a, queue: x }\n"
			    "  targets: [ { core: 0, port: b } ]\n";
	struct tlb_config cfg;
	size_t len = 0;
	char *msgs;
	FILE *f;

	(void)state;
	f = open_memstream(&msgs, &len);
	assert_non_null(f);
	assert_int_equal(tlb_config_load_buffer("inline config", text,
						sizeof(text) - 1, &cfg, f),
			 1);
	fclose(f);
	assert_string_equal(cfg.path, "inline config");
	assert_non_null(strstr(msgs, "inline config:2:29: "
				     "ports.uplink.queue: wrong type"));
	tlb_config_free(&cfg);
	free(msgs);

	/* len, not a terminating NUL, bounds the text */
	assert_int_equal(tlb_config_load_buffer("cut", text, 20, &cfg, NULL),
			 1);
	tlb_config_free(&cfg);
	/* no stream: still counted */
	assert_int_equal(
		tlb_config_load_buffer("quiet", "x: 1\n", 5, &cfg, NULL), 2);
	tlb_config_free(&cfg);
}

static void
test_missing_file(void **state)
{
	struct tlb_config cfg;
	size_t len = 0;
	char *msgs;
	FILE *f;

	(void)state;
	f = open_memstream(&msgs, &len);
	assert_non_null(f);
	assert_int_equal(tlb_config_load("/nonexistent/turbolbd.yaml", &cfg, f),
			 1);
	fclose(f);
	assert_string_equal(msgs, "/nonexistent/turbolbd.yaml: cannot open: "
				  "No such file or directory\n");
	tlb_config_free(&cfg);
	free(msgs);

	f = open_memstream(&msgs, &len);
	assert_non_null(f);
	assert_int_equal(tlb_config_load(TLB_SRCDIR "/configs", &cfg, f), 1);
	fclose(f);
	assert_non_null(strstr(msgs, "cannot open: Is a directory"));
	tlb_config_free(&cfg);
	free(msgs);
}

static void
test_invalid_utf8(void **state)
{
	struct tlb_config cfg;
	char *msgs;

	(void)state;
	/* a byte offset from libyaml, turned into a position: characters,
	 * not bytes, as for every other message */
	assert_int_equal(load_text("ports:\n  uplink: { port: \xc3\xa9\xff }\n",
				   &cfg, &msgs),
			 1);
	assert_non_null(strstr(msgs, "t.yaml:2:20: invalid input"));
	tlb_config_free(&cfg);
	free(msgs);
}

static void
test_structure_errors(void **state)
{
	(void)state;
	/* top level must be a mapping */
	assert_int_equal(count_errors("- a\n- b\n"), 1);
	assert_int_equal(count_errors("just text\n"), 1);
	/* empty file: only the missing section */
	assert_int_equal(count_errors(""), 1);
	assert_int_equal(count_errors("# nothing\n"), 1);
	/* a section that is a scalar or a list */
	assert_int_equal(count_errors(BASE "eal: 5\n"), 1);
	assert_int_equal(count_errors(BASE "eal: [1]\n"), 1);
	/* a list where a scalar goes, a scalar where a list goes */
	assert_int_equal(count_errors(BASE "datapath:\n  burst: [32]\n"), 1);
	assert_int_equal(count_errors(BASE "rpc:\n  udp_ports: 9000\n"), 1);
	assert_int_equal(count_errors(BASE "eal:\n  file_prefix: {a: 1}\n"), 1);
	/* a non-scalar key */
	assert_int_equal(count_errors(BASE "? [a]\n: 1\n"), 1);
	/* duplicate section */
	assert_int_equal(count_errors(BASE "fifo: {}\nfifo: {}\n"), 1);
	/* two documents */
	assert_int_equal(count_errors(BASE "---\n" BASE), 1);
	/* aliases are resolved and checked like the original */
	assert_int_equal(count_errors("ports:\n  uplink: &u { port: a }\n"
				      "  default_target: *u\n"
				      "  targets: [ { core: 0, port: b } ]\n"),
			 0);
	assert_int_equal(count_errors(BASE "fifo: *nowhere\n"), 1);
	/* booleans: only true and false */
	assert_int_equal(count_errors(BASE "eal:\n  no_huge: true\n"), 0);
	assert_int_equal(count_errors(BASE "eal:\n  no_huge: no\n"), 1);
	assert_int_equal(count_errors(BASE "eal:\n  no_huge: \"true\"\n"), 1);
	/* an embedded NUL would cut the string silently */
	assert_int_equal(count_errors(BASE "eal:\n  file_prefix: \"a\\0b\"\n"),
			 1);
	/* every log level name, and a wrong one */
	assert_int_equal(count_errors(BASE "log:\n  level: debug\n"), 0);
	assert_int_equal(count_errors(BASE "log:\n  level: verbose\n"), 1);
}

/* ---- strict integers ---- */

static int
load_seed(const char *value, uint64_t *seed)
{
	struct tlb_config cfg;
	char *text, *msgs;
	int n;

	text = concat3(BASE "policy:\n  seed: ", value, "\n");
	n = load_text(text, &cfg, &msgs);
	*seed = cfg.policy.params.seed;
	tlb_config_free(&cfg);
	free(msgs);
	free(text);
	return n;
}

static void
test_strict_integers(void **state)
{
	static const char *const bad[] = {
		"8080abc",
		"-1",
		"-0",
		"+5",
		"1e3",
		"1.5",
		"010",
		"0x",
		"0x1g",
		"0x-1",
		"12 34",
		"\"32\"",
		"'32'",
		"~",
		"true",
		"18446744073709551616",
		"0x10000000000000000",
		"",
		"[]",
	};
	uint64_t seed;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (load_seed(bad[i], &seed) != 1)
			fail_msg("seed: '%s' accepted", bad[i]);
	}
	assert_int_equal(load_seed("0x10", &seed), 0);
	assert_int_equal(seed, 16);
	assert_int_equal(load_seed("0XfF", &seed), 0);
	assert_int_equal(seed, 255);
	assert_int_equal(load_seed("0", &seed), 0);
	assert_int_equal(seed, 0);
	assert_int_equal(load_seed("18446744073709551615", &seed), 0);
	assert_true(seed == UINT64_MAX);
	assert_int_equal(load_seed("0xffffffffffffffff", &seed), 0);
	assert_true(seed == UINT64_MAX);

	/* a 32-bit field: 2^32 is out of range, not wrapped to 0 */
	assert_int_equal(count_errors(BASE "eal:\n  main_lcore: 4294967296\n"),
			 1);
	assert_int_equal(count_errors(BASE "eal:\n  main_lcore: 4294967295\n"),
			 0);
}

/* ---- range boundaries ---- */

struct range_case {
	const char *name;
	const char *prefix, *suffix; /* text = prefix + value + suffix */
	size_t off, size;            /* the field in struct tlb_config */
	uint64_t min, max;
};

#define FIELD(f)                                                               \
	offsetof(struct tlb_config, f), sizeof(((struct tlb_config *)0)->f)

static const struct range_case range_cases[] = {
	{"datapath.burst", BASE "datapath:\n  burst: ", "\n",
	 FIELD(datapath.burst), 1, 512},
	{"datapath.tx_hold_ns", BASE "datapath:\n  tx_hold_ns: ", "\n",
	 FIELD(datapath.tx_hold_ns), 0, 1000000},
	{"datapath.housekeeping_us", BASE "datapath:\n  housekeeping_us: ",
	 "\n", FIELD(datapath.housekeeping_us), 1, 10000},
	{"datapath.idle_sleep_us", BASE "datapath:\n  idle_sleep_us: ", "\n",
	 FIELD(datapath.idle_sleep_us), 0, 100000},
	{"datapath.rx_desc", BASE "datapath:\n  rx_desc: ", "\n",
	 FIELD(datapath.rx_desc), 64, 16384},
	{"eal.memory_mb", BASE "eal:\n  memory_mb: ", "\n",
	 FIELD(eal.memory_mb), 16, 1048576},
	{"rpc.udp_ports", BASE "rpc:\n  udp_ports: [", "]\n",
	 FIELD(rpc.udp_ports[0]), 1, 65535},
	{"ports.uplink.queue", "ports:\n  uplink: { port: a, queue: ",
	 " }\n  targets: [ { core: 0, port: b } ]\n", FIELD(ports.uplink.queue),
	 0, 65535},
	{"policy.d", BASE "policy:\n  d: ", "\n", FIELD(policy.params.d), 2,
	 16},
	{"policy.k", BASE "policy:\n  k: ", "\n", FIELD(policy.params.k), 1,
	 65535},
	{"fifo.capacity", BASE "fifo:\n  capacity: ", "\n",
	 FIELD(fifo.capacity), 0, 1048576},
	{"affinity.entries", BASE "affinity:\n  entries: ", "\n",
	 FIELD(affinity.entries), 16, 1048576},
	{"affinity.timeout_us", BASE "affinity:\n  timeout_us: ", "\n",
	 FIELD(affinity.timeout_us), 1, 10000000},
	{"host.ring_size", BASE "host:\n  ring_size: ", "\n",
	 FIELD(host.ring_size), 16, TLB_CR_MAX_RING},
	{"host.stale_timeout_us", BASE "host:\n  stale_timeout_us: ", "\n",
	 FIELD(host.stale_timeout_us), 100, 60000000},
	{"kick.min_interval_us", BASE "kick:\n  min_interval_us: ", "\n",
	 FIELD(kick.min_interval_us), 1, 1000000},
	{"kick.stall_us", BASE "kick:\n  stall_us: ", "\n",
	 FIELD(kick.stall_us), 0, 10000000},
};

/* Loads one value of a case; returns the error count, and the field. */
static int
load_case(const struct range_case *rc, uint64_t v, uint64_t *got)
{
	struct tlb_config cfg;
	char num[32], *text, *msgs;
	uint16_t u16;
	uint32_t u32;
	int n;

	snprintf(num, sizeof(num), "%" PRIu64, v);
	text = concat3(rc->prefix, num, rc->suffix);
	n = load_text(text, &cfg, &msgs);
	if (rc->size == 2) {
		memcpy(&u16, (char *)&cfg + rc->off, 2);
		*got = u16;
	} else {
		memcpy(&u32, (char *)&cfg + rc->off, 4);
		*got = u32;
	}
	tlb_config_free(&cfg);
	free(msgs);
	free(text);
	return n;
}

static void
test_boundaries(void **state)
{
	const struct range_case *rc;
	uint64_t got;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(range_cases) / sizeof(range_cases[0]); i++) {
		rc = &range_cases[i];
		if (load_case(rc, rc->min, &got) != 0 || got != rc->min)
			fail_msg("%s: min %" PRIu64 " rejected", rc->name,
				 rc->min);
		if (load_case(rc, rc->max, &got) != 0 || got != rc->max)
			fail_msg("%s: max %" PRIu64 " rejected", rc->name,
				 rc->max);
		if (rc->min > 0 && load_case(rc, rc->min - 1, &got) != 1)
			fail_msg("%s: min-1 accepted", rc->name);
		if (load_case(rc, rc->max + 1, &got) != 1)
			fail_msg("%s: max+1 accepted", rc->name);
	}

	/* mbufs: 0 (automatic) or 1024..16777216 */
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 0\n"), 0);
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 1\n"), 1);
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 1023\n"), 1);
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 1024\n"), 0);
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 16777216\n"),
			 0);
	assert_int_equal(count_errors(BASE "datapath:\n  mbufs: 16777217\n"),
			 1);
	/* powers of two only, in range */
	assert_int_equal(count_errors(BASE "host:\n  ring_size: 48\n"), 1);
	assert_int_equal(count_errors(BASE "affinity:\n  entries: 4095\n"), 1);
	assert_int_equal(count_errors(BASE "affinity:\n  entries: 0x1000\n"),
			 0);
}

/* ---- rpc.ports ---- */

static void
test_rpc_ports(void **state)
{
	struct tlb_config cfg;
	char *msgs;

	(void)state;
	assert_int_equal(load_text(BASE "rpc:\n  ports: [ {port: 9000, "
					"protocol: turbolb}, {port: 53, "
					"protocol: dns},\n    {port: 11211, "
					"protocol: memcached}, {port: 7000, "
					"protocol: udp} ]\n",
				   &cfg, &msgs),
			 0);
	assert_int_equal(cfg.rpc.n_udp_ports, 4);
	assert_int_equal(cfg.rpc.udp_ports[0], 9000);
	assert_int_equal(cfg.rpc.port_proto[0], TLB_PROTO_TURBOLB);
	assert_int_equal(cfg.rpc.udp_ports[1], 53);
	assert_int_equal(cfg.rpc.port_proto[1], TLB_PROTO_DNS);
	assert_int_equal(cfg.rpc.udp_ports[2], 11211);
	assert_int_equal(cfg.rpc.port_proto[2], TLB_PROTO_MEMCACHED);
	assert_int_equal(cfg.rpc.udp_ports[3], 7000);
	assert_int_equal(cfg.rpc.port_proto[3], TLB_PROTO_UDP);
	tlb_config_free(&cfg);
	free(msgs);

	/* the short form: turbolb ports */
	assert_int_equal(
		load_text(BASE "rpc:\n  udp_ports: [53]\n", &cfg, &msgs), 0);
	assert_int_equal(cfg.rpc.n_udp_ports, 1);
	assert_int_equal(cfg.rpc.port_proto[0], TLB_PROTO_TURBOLB);
	tlb_config_free(&cfg);
	free(msgs);

	/* an unknown protocol, at its value, naming the known ones */
	assert_int_equal(load_text(BASE "rpc:\n  ports:\n"
					"    - {port: 53, protocol: dnss}\n",
				   &cfg, &msgs),
			 1);
	assert_non_null(strstr(msgs, "t.yaml:6:28: rpc.ports[0].protocol: "
				     "unknown protocol 'dnss' (one of: "
				     "turbolb, dns, memcached, udp)"));
	tlb_config_free(&cfg);
	free(msgs);

	/* both forms */
	assert_int_equal(load_text(BASE
				   "rpc:\n  udp_ports: [9000]\n"
				   "  ports: [ {port: 53, protocol: dns} ]\n",
				   &cfg, &msgs),
			 1);
	assert_non_null(strstr(msgs, "t.yaml:6:10: rpc.ports: "
				     "rpc.udp_ports is given too"));
	tlb_config_free(&cfg);
	free(msgs);

	/* a port twice, a missing key, a port out of range, no items,
	 * too many, not a mapping */
	assert_int_equal(load_text(BASE "rpc:\n  ports: [ {port: 53, "
					"protocol: dns},\n"
					"    {port: 53, protocol: udp} ]\n",
				   &cfg, &msgs),
			 1);
	assert_non_null(strstr(msgs, "t.yaml:6:12: rpc.ports[1].port: "
				     "duplicate port 53 (first at 5:19)"));
	tlb_config_free(&cfg);
	free(msgs);
	assert_int_equal(count_errors(BASE "rpc:\n  ports: [ {port: 53} ]\n"),
			 1);
	assert_int_equal(count_errors(BASE "rpc:\n  ports: [ {port: 0, "
					   "protocol: dns} ]\n"),
			 1);
	assert_int_equal(count_errors(BASE "rpc:\n  ports: []\n"), 1);
	assert_int_equal(count_errors(BASE
				      "rpc:\n  ports: [ {port: 1, "
				      "protocol: udp}, {port: 2, protocol: "
				      "udp}, {port: 3, protocol: udp}, "
				      "{port: 4, protocol: udp}, {port: 5, "
				      "protocol: udp}, {port: 6, protocol: "
				      "udp}, {port: 7, protocol: udp}, "
				      "{port: 8, protocol: udp}, {port: 9, "
				      "protocol: udp} ]\n"),
			 1);
	assert_int_equal(count_errors(BASE "rpc:\n  ports: [ 53 ]\n"), 1);
}

/* ---- lists, targets, strings ---- */

static void
test_lists(void **state)
{
	struct tlb_config cfg;
	char text[4096], *msgs;
	unsigned int i;
	size_t pos;

	(void)state;
	/* a list replaces the default */
	assert_int_equal(load_text(BASE "rpc:\n  udp_ports: [7000, 0x1f90]\n"
					"datapath:\n  lcores: [3, 2]\n",
				   &cfg, &msgs),
			 0);
	assert_int_equal(cfg.rpc.n_udp_ports, 2);
	assert_int_equal(cfg.rpc.udp_ports[0], 7000);
	assert_int_equal(cfg.rpc.udp_ports[1], 8080);
	assert_int_equal(cfg.datapath.n_lcores, 2);
	assert_int_equal(cfg.datapath.lcores[0], 3);
	assert_int_equal(cfg.datapath.lcores[1], 2);
	tlb_config_free(&cfg);
	free(msgs);

	/* empty where at least one is needed; empty where none is */
	assert_int_equal(count_errors(BASE "datapath:\n  lcores: []\n"), 1);
	assert_int_equal(count_errors(BASE "rpc:\n  udp_ports: []\n"), 1);
	assert_int_equal(count_errors(BASE "eal:\n  vdevs: []\n  args:\n"), 0);
	/* too many */
	assert_int_equal(count_errors(BASE "rpc:\n  udp_ports: "
					   "[1,2,3,4,5,6,7,8,9]\n"),
			 1);
	assert_int_equal(count_errors(BASE "datapath:\n  lcores: [1, 1]\n"), 1);
	/* the default main lcore 0 against a datapath lcore */
	assert_int_equal(count_errors(BASE "datapath:\n  lcores: [0]\n"), 1);
	/* the default datapath lcore 1 against a main lcore */
	assert_int_equal(count_errors(BASE "eal:\n  main_lcore: 1\n"), 1);
	assert_int_equal(count_errors(BASE "eal:\n  vdevs: [\"\"]\n"), 1);

	/* 33 vdevs: 32 kept and freed, the 33rd an error; and a later error
	 * must not leak the kept ones (LeakSanitizer watches) */
	pos = (size_t)snprintf(text, sizeof(text), "%seal:\n  vdevs:\n", BASE);
	for (i = 0; i <= TLB_CFG_MAX_VDEVS; i++)
		pos += (size_t)snprintf(text + pos, sizeof(text) - pos,
					"    - net_null%u\n", i);
	snprintf(text + pos, sizeof(text) - pos, "  bogus: 1\n");
	assert_int_equal(load_text(text, &cfg, &msgs), 2);
	assert_int_equal(cfg.eal.n_vdevs, TLB_CFG_MAX_VDEVS);
	assert_string_equal(cfg.eal.vdevs[31], "net_null31");
	assert_non_null(strstr(msgs, "eal.vdevs[32]: too many items"));
	tlb_config_free(&cfg);
	free(msgs);
}

static void
test_targets(void **state)
{
	struct tlb_config cfg;
	char *msgs;

	(void)state;
	/* stored by core id, whatever the order in the file */
	assert_int_equal(
		load_text("ports:\n"
			  "  uplink: { port: up }\n"
			  "  default_target: { port: slow, queue: 7 }\n"
			  "  targets:\n"
			  "    - { core: 2, port: c, queue: 5 }\n"
			  "    - { core: 0, port: a }\n"
			  "    - core: 1\n"
			  "      port: b\n"
			  "      queue: 3\n",
			  &cfg, &msgs),
		0);
	assert_int_equal(cfg.ports.n_targets, 3);
	assert_string_equal(cfg.ports.targets[0].ref.port, "a");
	assert_int_equal(cfg.ports.targets[0].ref.queue, 0);
	assert_string_equal(cfg.ports.targets[1].ref.port, "b");
	assert_int_equal(cfg.ports.targets[1].ref.queue, 3);
	assert_int_equal(cfg.ports.targets[2].core, 2);
	assert_string_equal(cfg.ports.targets[2].ref.port, "c");
	assert_int_equal(cfg.ports.targets[2].ref.queue, 5);
	assert_true(cfg.ports.has_default_target);
	assert_string_equal(cfg.ports.default_target.port, "slow");
	assert_int_equal(cfg.ports.default_target.queue, 7);
	tlb_config_free(&cfg);
	free(msgs);

	/* each bad item is reported once */
	assert_int_equal(count_errors("ports:\n  uplink: { port: u }\n"
				      "  targets: []\n"),
			 1);
	assert_int_equal(count_errors("ports:\n  uplink: { port: u }\n"
				      "  targets: [ { port: a } ]\n"),
			 1);
	assert_int_equal(count_errors("ports:\n  uplink: { port: u }\n"
				      "  targets: [ { core: 0 } ]\n"),
			 1);
	assert_int_equal(count_errors("ports:\n  uplink: { port: u }\n"
				      "  targets: [ a, b ]\n"),
			 2);
	assert_int_equal(
		count_errors("ports:\n  uplink: { port: u }\n"
			     "  targets: [ { core: 256, port: a } ]\n"),
		1);
	assert_int_equal(count_errors("ports:\n  uplink: { port: u }\n"
				      "  targets: [ { core: 0, port: a },\n"
				      "    { core: 0, port: b },\n"
				      "    { core: 3, port: c } ]\n"),
			 2);
	assert_int_equal(count_errors("ports:\n  uplink: { port: \"\" }\n"
				      "  targets: [ { core: 0, port: a } ]\n"),
			 1);
	assert_int_equal(count_errors("ports:\n  uplink: {}\n"
				      "  targets: [ { core: 0, port: a } ]\n"),
			 1);
}

static void
test_string_limits(void **state)
{
	char longest[TLB_CFG_STR_MAX + 1], ring[TLB_CR_NAME_MAX + 1];
	char *text;

	(void)state;
	memset(longest, 'p', sizeof(longest));
	longest[TLB_CFG_STR_MAX - 1] = '\0';
	text = concat3("ports:\n  uplink: { port: ", longest,
		       " }\n  targets: [ { core: 0, port: a } ]\n");
	assert_int_equal(count_errors(text), 0);
	free(text);
	longest[TLB_CFG_STR_MAX - 1] = 'p';
	longest[TLB_CFG_STR_MAX] = '\0';
	text = concat3("ports:\n  uplink: { port: ", longest,
		       " }\n  targets: [ { core: 0, port: a } ]\n");
	assert_int_equal(count_errors(text), 1);
	free(text);

	memset(ring, 'r', sizeof(ring));
	ring[0] = '/';
	ring[TLB_CR_NAME_MAX - 1] = '\0';
	text = concat3(BASE "host:\n  credit_ring: ", ring, "\n");
	assert_int_equal(count_errors(text), 0);
	free(text);
	ring[TLB_CR_NAME_MAX - 1] = 'r';
	ring[TLB_CR_NAME_MAX] = '\0';
	text = concat3(BASE "host:\n  credit_ring: ", ring, "\n");
	assert_int_equal(count_errors(text), 1);
	free(text);

	assert_int_equal(count_errors(BASE "host:\n  credit_ring: /\n"), 1);
	assert_int_equal(count_errors(BASE "host:\n  credit_ring: /a/b\n"), 1);
	assert_int_equal(count_errors(BASE "host:\n  group: \"\"\n"), 0);
	assert_int_equal(count_errors(BASE "policy:\n  name: pod\n"), 0);
	assert_int_equal(count_errors(BASE "policy:\n  name: JSQ\n"), 1);
}

static void
test_summary_and_names(void **state)
{
	struct tlb_config cfg;
	char buf[256], *msgs;

	(void)state;
	assert_int_equal(load_text(BASE "policy:\n  name: jbsq\n  k: 4\n"
					"host:\n  credits: inband\n"
					"datapath:\n  lcores: [1, 2]\n",
				   &cfg, &msgs),
			 0);
	tlb_config_summary(&cfg, buf, sizeof(buf));
	assert_string_equal(buf, "policy jbsq (k=4), 1 target, uplink up0, "
				 "2 datapath lcores, credits inband");
	tlb_config_free(&cfg);
	free(msgs);

	assert_int_equal(
		load_text(BASE "policy: { name: pod, d: 3 }\n", &cfg, &msgs),
		0);
	tlb_config_summary(&cfg, buf, sizeof(buf));
	assert_non_null(strstr(buf, "policy pod (d=3), "));
	/* a short buffer is cut, still terminated */
	tlb_config_summary(&cfg, buf, 8);
	assert_string_equal(buf, "policy ");
	tlb_config_free(&cfg);
	free(msgs);

	/* Without host memory: in-band credits, said in the summary. */
	assert_int_equal(load_text(BASE "host:\n  transport: none\n"
					"  credits: inband\n",
				   &cfg, &msgs),
			 0);
	assert_int_equal(cfg.host.transport, TLB_TRANSPORT_NONE);
	tlb_config_summary(&cfg, buf, sizeof(buf));
	assert_non_null(strstr(buf, "credits inband (transport none)"));
	tlb_config_free(&cfg);
	free(msgs);
	assert_int_equal(load_text(BASE, &cfg, &msgs), 0);
	assert_int_equal(cfg.host.transport, TLB_TRANSPORT_SHM);
	tlb_config_free(&cfg);
	free(msgs);
	/* Both conflicts, each at the transport key. */
	assert_int_equal(load_text(BASE "host:\n  transport: none\n"
					"kick: { enabled: true }\n",
				   &cfg, &msgs),
			 2);
	assert_non_null(strstr(msgs, "t.yaml:5:14: host.transport: none has "
				     "no credit ring"));
	assert_non_null(strstr(msgs, "t.yaml:5:14: host.transport: none has "
				     "no doorbell"));
	tlb_config_free(&cfg);
	free(msgs);
	assert_int_equal(
		load_text(BASE "host:\n  transport: dma\n", &cfg, &msgs), 1);
	assert_non_null(strstr(msgs, "t.yaml:5:14: "));
	tlb_config_free(&cfg);
	free(msgs);
	assert_string_equal(tlb_transport_kind_str(TLB_TRANSPORT_SHM), "shm");
	assert_string_equal(tlb_transport_kind_str(TLB_TRANSPORT_NONE), "none");

	assert_string_equal(tlb_credit_mode_str(TLB_CREDITS_RING), "ring");
	assert_string_equal(tlb_credit_mode_str(TLB_CREDITS_INBAND), "inband");
	assert_string_equal(tlb_log_level_str(TLB_LOG_EMERG), "emerg");
	assert_string_equal(tlb_log_level_str(TLB_LOG_WARNING), "warning");
	assert_string_equal(tlb_log_level_str(TLB_LOG_DEBUG), "debug");
}

/* ---- the reload ---- */

/* Every key of the real schema says whether a reload can change it. */
static void
test_schema_reload_flags(void **state)
{
	(void)state;
	assert_int_equal(tlb_cfg_schema_check(tlb_cfg_root_keys, "", stderr),
			 0);
}

static void
custom_parse(struct cfg_ctx *ctx, const struct cfg_key *key,
	     const yaml_node_t *node, const char *path, void *field)
{
	(void)ctx;
	(void)key;
	(void)node;
	(void)path;
	(void)field;
}

/* A key added without the flag, or with both, is caught, and named. */
static void
test_schema_check_catches(void **state)
{
	struct toy {
		uint32_t a, b, c;
		bool d;
	};
	static const struct cfg_key inner[] = {
		KEY_UINT("fine", struct toy, a, 0, 9, CFG_RESTART),
		KEY_BOOL("forgot", struct toy, d, 0),
		KEY_END,
	};
	static const struct cfg_key keys[] = {
		KEY_UINT("reloads", struct toy, a, 0, 9, CFG_RELOAD),
		KEY_UINT("restarts", struct toy, b, 0, 9, CFG_RESTART),
		KEY_UINT("new_key", struct toy, c, 0, 9, 0),
		KEY_UINT("both", struct toy, c, 0, 9, CFG_RELOAD | CFG_RESTART),
		{.name = "custom",
		 .kind = CFG_CUSTOM,
		 .flags = CFG_RESTART,
		 .parse = custom_parse},
		KEY_MAP("flagged_map", 0, inner, CFG_RESTART, NULL),
		KEY_END,
	};
	static const struct cfg_key good[] = {
		KEY_UINT("reloads", struct toy, a, 0, 9, CFG_RELOAD),
		KEY_MAP("map", 0, inner, 0, NULL),
		KEY_END,
	};
	char *msgs = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	f = open_memstream(&msgs, &len);
	assert_non_null(f);
	/* new_key, both, custom, flagged_map and flagged_map.forgot */
	assert_int_equal(tlb_cfg_schema_check(keys, "toy", f), 5);
	fclose(f);
	assert_non_null(strstr(msgs, "toy.new_key: says neither"));
	assert_non_null(strstr(msgs, "toy.both: says both"));
	assert_non_null(strstr(msgs, "toy.custom: needs a restart"));
	assert_non_null(strstr(msgs, "toy.flagged_map: a mapping"));
	assert_non_null(strstr(msgs, "toy.flagged_map.forgot: says neither"));
	assert_null(strstr(msgs, "reloads"));
	assert_null(strstr(msgs, "restarts"));
	assert_null(strstr(msgs, ".fine"));
	free(msgs);
	/* one bad key under a good mapping still counts */
	assert_int_equal(tlb_cfg_schema_check(good, "", NULL), 1);
}

/* What a reload from BASE to BASE + extra says: NULL (reloadable) or the
 * section that needs a restart. */
static void
expect_reload(const char *extra, const char *want)
{
	struct tlb_config a, b;
	char *text = concat3(BASE, extra, "");
	char buf[128];
	const char *got;

	assert_int_equal(
		tlb_config_load_buffer("a", BASE, strlen(BASE), &a, stderr), 0);
	assert_int_equal(
		tlb_config_load_buffer("b", text, strlen(text), &b, stderr), 0);
	got = tlb_config_needs_restart(&a, &b, buf, sizeof(buf));
	if (want == NULL && got != NULL)
		fail_msg("%s: needs a restart (%s)", extra, got);
	if (want != NULL && (got == NULL || strcmp(got, want) != 0))
		fail_msg("%s: '%s', expected '%s'", extra,
			 got ? got : "(reloadable)", want);
	/* the other way round, the same */
	got = tlb_config_needs_restart(&b, &a, buf, sizeof(buf));
	assert_true((got == NULL) == (want == NULL));
	tlb_config_free(&a);
	tlb_config_free(&b);
	free(text);
}

static void
test_needs_restart(void **state)
{
	(void)state;
	expect_reload("", NULL);
	expect_reload("policy: { name: jbsq, k: 4, d: 3, seed: 7, "
		      "prefer_running: true }\n",
		      NULL);
	expect_reload("fifo: { capacity: 16 }\n", NULL);
	expect_reload("host: { stale_timeout_us: 500, write_off_us: 7 }\n",
		      NULL);
	expect_reload("log: { level: debug }\n", NULL);
	expect_reload("eal: { vdevs: [ net_null0 ] }\n", "eal");
	expect_reload("eal: { main_lcore: 3 }\n", "eal");
	expect_reload("datapath: { burst: 16 }\n", "datapath");
	expect_reload("datapath: { lcores: [ 1, 2 ] }\n", "datapath");
	expect_reload("rpc: { udp_ports: [ 9001 ] }\n", "rpc");
	expect_reload("affinity: { timeout_us: 5 }\n", "affinity");
	expect_reload("host: { ring_size: 64 }\n",
		      "host (only host.stale_timeout_us and "
		      "host.write_off_us can be reloaded)");
	expect_reload("kick: { enabled: true }\n", "kick");
	expect_reload("telemetry: { enabled: false }\n", "telemetry");
	expect_reload("metrics: { listen: \"127.0.0.1:9100\" }\n", "metrics");
}

/* The ports section is BASE's own: another target, another uplink. */
static void
test_needs_restart_ports(void **state)
{
	static const char *const other[] = {
		"ports:\n  uplink: { port: up0 }\n"
		"  targets: [ { core: 0, port: host1 } ]\n",
		"ports:\n  uplink: { port: up1 }\n"
		"  targets: [ { core: 0, port: host0 } ]\n",
		"ports:\n  uplink: { port: up0 }\n"
		"  default_target: { port: slow0 }\n"
		"  targets: [ { core: 0, port: host0 } ]\n",
		"ports:\n  uplink: { port: up0 }\n"
		"  targets: [ { core: 0, port: host0 },\n"
		"             { core: 1, port: host1 } ]\n",
	};
	struct tlb_config a, b;
	char buf[128];

	(void)state;
	assert_int_equal(
		tlb_config_load_buffer("a", BASE, strlen(BASE), &a, stderr), 0);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		assert_int_equal(tlb_config_load_buffer("b", other[i],
							strlen(other[i]), &b,
							stderr),
				 0);
		assert_string_equal(
			tlb_config_needs_restart(&a, &b, buf, sizeof(buf)),
			"ports");
		tlb_config_free(&b);
	}
	tlb_config_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_bluefield_config),
		cmocka_unit_test(test_defaults_when_omitted),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_three_errors),
		cmocka_unit_test(test_removed_tx_flush_us),
		cmocka_unit_test(test_load_buffer_name),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_structure_errors),
		cmocka_unit_test(test_strict_integers),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_rpc_ports),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_string_limits),
		cmocka_unit_test(test_summary_and_names),
		cmocka_unit_test(test_schema_reload_flags),
		cmocka_unit_test(test_schema_check_catches),
		cmocka_unit_test(test_needs_restart),
		cmocka_unit_test(test_needs_restart_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
