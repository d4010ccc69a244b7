/* SPDX-License-Identifier: BSD-3-Clause
 * Internal: the configuration schema of src/lib/config.c, tables of struct
 * cfg_key. Each key says what kind of value it takes, where it lands in
 * struct tlb_config, its range, and whether a reload can change it
 * (CFG_RELOAD) or only a restart (CFG_RESTART). The loader, the reload
 * check (tlb_config_needs_restart()) and tlb_cfg_schema_check() walk the
 * same tables. Here so that the unit test can check a table of its own.
 */
#ifndef TURBOLB_CONFIG_SCHEMA_H
#define TURBOLB_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <yaml.h>

#include "turbolb/config.h"

enum cfg_kind {
	CFG_UINT, /* unsigned integer field of .size bytes */
	CFG_BOOL,
	CFG_STR,       /* char[.size] */
	CFG_ENUM,      /* int-sized enum, spelled as in .names */
	CFG_STR_LIST,  /* char *[.max_items], strdup'ed */
	CFG_UINT_LIST, /* array of .size-byte unsigned integers */
	CFG_MAP,       /* nested mapping described by .sub (and .more) */
	CFG_CUSTOM,    /* parsed by .parse */
};

#define CFG_REQUIRED 0x1u  /* missing key is an error */
#define CFG_POW2     0x2u  /* value must be a power of two */
#define CFG_DISTINCT 0x4u  /* list items must all differ */
#define CFG_NONEMPTY 0x8u  /* "" is not a valid string */
#define CFG_ZERO_OK  0x10u /* 0 is accepted besides min..max (auto) */
/* Every key but a mapping carries exactly one of these two; a mapping
 * carries neither, its keys say (tlb_cfg_schema_check()). */
#define CFG_RELOAD  0x20u /* a reload applies a new value */
#define CFG_RESTART 0x40u /* a new value needs a restart: reload refused */
/* Its node is kept (cfg_node_of()) for the checks across sections. */
#define CFG_NODE 0x80u

struct cfg_enum_name {
	const char *name;
	int value;
};

struct cfg_ctx;
struct cfg_key;

typedef void (*cfg_hook_fn)(struct cfg_ctx *ctx, const struct cfg_key *key,
			    const yaml_node_t *node, const char *path,
			    void *field);

struct cfg_key {
	const char *name;
	enum cfg_kind kind;
	unsigned int flags;
	size_t off;  /* of the field, from the base of the enclosing map */
	size_t size; /* UINT: field width; STR: buffer; UINT_LIST: item */
	uint64_t min, max;                 /* UINT, UINT_LIST items */
	size_t count_off;                  /* lists: their unsigned int count */
	unsigned int min_items, max_items; /* lists */
	const struct cfg_enum_name *names; /* ENUM: NULL-terminated */
	const struct cfg_key *sub;         /* MAP: NULL-terminated */
	/* MAP, optional: the keys that are not in .sub, described elsewhere
	 * (the policies' parameters): fills *tmp for name and returns it,
	 * or NULL for an unknown key. */
	const struct cfg_key *(*more)(const char *name, struct cfg_key *tmp);
	cfg_hook_fn parse; /* CUSTOM */
	/* CUSTOM with CFG_RESTART: whether a and b hold the same value */
	bool (*same)(const struct tlb_config *a, const struct tlb_config *b);
	/* Runs after the value parsed without error: checks that need the
	 * parsed value. */
	cfg_hook_fn done;
};

#define FIELD_SIZE(type, f) sizeof(((type *)0)->f)
#define ARRAY_LEN(type, f)  (FIELD_SIZE(type, f) / FIELD_SIZE(type, f[0]))

#define KEY_UINT_HOOK(n, type, f, lo, hi, fl, hook)                            \
	{                                                                      \
		.name = n, .kind = CFG_UINT, .flags = fl,                      \
		.off = offsetof(type, f), .size = FIELD_SIZE(type, f),         \
		.min = lo, .max = hi, .done = hook                             \
	}
#define KEY_UINT(n, type, f, lo, hi, fl)                                       \
	KEY_UINT_HOOK(n, type, f, lo, hi, fl, NULL)
#define KEY_BOOL(n, type, f, fl)                                               \
	{                                                                      \
		.name = n, .kind = CFG_BOOL, .flags = fl,                      \
		.off = offsetof(type, f)                                       \
	}
#define KEY_STR(n, type, f, fl, hook)                                          \
	{                                                                      \
		.name = n, .kind = CFG_STR, .flags = fl,                       \
		.off = offsetof(type, f), .size = FIELD_SIZE(type, f),         \
		.done = hook                                                   \
	}
#define KEY_ENUM(n, type, f, tbl, fl)                                          \
	{                                                                      \
		.name = n, .kind = CFG_ENUM, .flags = fl,                      \
		.off = offsetof(type, f), .names = tbl                         \
	}
#define KEY_STR_LIST(n, type, f, cnt, fl)                                      \
	{                                                                      \
		.name = n, .kind = CFG_STR_LIST, .flags = CFG_NONEMPTY | (fl), \
		.off = offsetof(type, f), .count_off = offsetof(type, cnt),    \
		.max_items = ARRAY_LEN(type, f)                                \
	}
#define KEY_UINT_LIST(n, type, f, cnt, lo, hi, nmin, fl, hook)                 \
	{                                                                      \
		.name = n, .kind = CFG_UINT_LIST, .flags = fl,                 \
		.off = offsetof(type, f), .size = FIELD_SIZE(type, f[0]),      \
		.min = lo, .max = hi, .count_off = offsetof(type, cnt),        \
		.min_items = nmin, .max_items = ARRAY_LEN(type, f),            \
		.done = hook                                                   \
	}
#define KEY_MAP(n, off_, keys, fl, hook)                                       \
	{                                                                      \
		.name = n, .kind = CFG_MAP, .flags = fl, .off = off_,          \
		.sub = keys, .done = hook                                      \
	}
#define KEY_END                                                                \
	{                                                                      \
		.name = NULL                                                   \
	}

/* The top of the schema: the sections of struct tlb_config. */
extern const struct cfg_key tlb_cfg_root_keys[];

/* Checks the table keys and every table under it: each key carries
 * exactly one of CFG_RELOAD and CFG_RESTART (a mapping neither), and a
 * custom key that needs a restart can be compared (.same). Returns the
 * number of bad entries, each named on errs (may be NULL) by its dotted
 * path under path. */
int tlb_cfg_schema_check(const struct cfg_key *keys, const char *path,
			 FILE *errs);

#endif /* TURBOLB_CONFIG_SCHEMA_H */
