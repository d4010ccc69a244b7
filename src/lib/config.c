/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbd's YAML configuration, read with libyaml's document API.
 *
 * The schema is a set of key tables (struct cfg_key, config_schema.h):
 * each key says what kind of value it takes, where it lands in struct
 * tlb_config, what range it must be in and whether a reload can change
 * it. One generic walker applies the tables and another compares two
 * configurations for the reload, so adding a key is the steps of
 * docs/architecture.md, "Adding a config key". The policies' parameters
 * are the policies' own tables (turbolb/policy.h), read here as keys of
 * the policy section. The few rules that span keys (target core ids, main
 * lcore versus datapath lcores, transport versus credits) are small
 * hooks.
 *
 * libyaml accepts duplicate keys and has no notion of types, so both are
 * checked here. Errors never stop the walk: the user gets every problem of
 * the file in one run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <bsd/string.h>
#include <yaml.h>

#include "turbolb/config.h"
#include "config_schema.h"

#define CFG_PATH_MAX  128         /* "ports.targets[255].queue" and the like */
#define CFG_NODES_MAX 8           /* keys with CFG_NODE */
#define CFG_FILE_MAX  (16u << 20) /* larger is surely not a config file */

struct cfg_ctx {
	const char *name; /* FILE in messages, as the caller gave it */
	FILE *errs;
	int n_errors;
	struct tlb_config *cfg;
	yaml_document_t *doc;
	/* The nodes of the keys with CFG_NODE that parsed without error,
	 * for the checks across sections, done at the end */
	struct {
		const void *field;
		const yaml_node_t *node;
	} nodes[CFG_NODES_MAX];
	unsigned int n_nodes;
};

static const struct cfg_enum_name transport_names[] = {
	{"shm", TLB_TRANSPORT_SHM},
	{"none", TLB_TRANSPORT_NONE},
	{"packet", TLB_TRANSPORT_PACKET},
	{NULL, 0},
};

static const struct cfg_enum_name credit_mode_names[] = {
	{"ring", TLB_CREDITS_RING},
	{"inband", TLB_CREDITS_INBAND},
	{NULL, 0},
};

static const struct cfg_enum_name log_level_names[] = {
	{"emerg", TLB_LOG_EMERG},
	{"alert", TLB_LOG_ALERT},
	{"crit", TLB_LOG_CRIT},
	{"err", TLB_LOG_ERR},
	{"warning", TLB_LOG_WARNING},
	{"notice", TLB_LOG_NOTICE},
	{"info", TLB_LOG_INFO},
	{"debug", TLB_LOG_DEBUG},
	{NULL, 0},
};

/* ---- reporting ---- */

static void cfg_error(struct cfg_ctx *ctx, const yaml_node_t *node,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void cfg_error_at(struct cfg_ctx *ctx, size_t line, size_t col,
			 const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void
cfg_error_at(struct cfg_ctx *ctx, size_t line, size_t col, const char *fmt,
	     va_list ap)
{
	ctx->n_errors++;
	if (ctx->errs == NULL)
		return;
	fprintf(ctx->errs, "%s:%zu:%zu: ", ctx->name, line, col);
	vfprintf(ctx->errs, fmt, ap);
	fputc('\n', ctx->errs);
}

/* A NULL node stands for the top of the file. */
static void
cfg_error(struct cfg_ctx *ctx, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	/* libyaml counts lines and columns from 0; editors from 1 */
	if (node != NULL)
		cfg_error_at(ctx, node->start_mark.line + 1,
			     node->start_mark.column + 1, fmt, ap);
	else
		cfg_error_at(ctx, 1, 1, fmt, ap);
	va_end(ap);
}

/* A warning: the file loads, but something in it works worse than the
 * user likely expects. Not counted as an error. */
static void cfg_warning(struct cfg_ctx *ctx, const yaml_node_t *node,
			const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
cfg_warning(struct cfg_ctx *ctx, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;

	if (ctx->errs == NULL)
		return;
	va_start(ap, fmt);
	fprintf(ctx->errs, "%s:%zu:%zu: warning: ", ctx->name,
		node != NULL ? node->start_mark.line + 1 : 1,
		node != NULL ? node->start_mark.column + 1 : 1);
	vfprintf(ctx->errs, fmt, ap);
	fputc('\n', ctx->errs);
	va_end(ap);
}

/* ---- node helpers ---- */

static const char *
scalar_str(const yaml_node_t *node)
{
	return (const char *)node->data.scalar.value;
}

static bool
is_plain_scalar(const yaml_node_t *node)
{
	return node->type == YAML_SCALAR_NODE &&
	       node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* "key:" with nothing after it; taken as an empty mapping or list, so a
 * section whose keys are all commented out is still valid. */
static bool
is_null(const yaml_node_t *node)
{
	const char *s;

	if (!is_plain_scalar(node))
		return false;
	s = scalar_str(node);
	return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0;
}

static const char *
node_kind_str(const yaml_node_t *node)
{
	switch (node->type) {
	case YAML_MAPPING_NODE:
		return "a mapping";
	case YAML_SEQUENCE_NODE:
		return "a list";
	case YAML_SCALAR_NODE:
		if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			return "a quoted string";
		return node->data.scalar.length == 0 ? "an empty value"
						     : "a scalar";
	default:
		return "nothing";
	}
}

static bool
scalar_eq(const yaml_node_t *a, const yaml_node_t *b)
{
	return a->data.scalar.length == b->data.scalar.length &&
	       memcmp(a->data.scalar.value, b->data.scalar.value,
		      a->data.scalar.length) == 0;
}

/* Paths only label messages: a cut one ends in "..." and is still
 * useful, so truncation is marked rather than treated as an error. */
static void
mark_truncated(char *buf, size_t len, int written)
{
	if (written >= 0 && (size_t)written >= len && len > 4)
		strlcpy(buf + len - 4, "...", 4);
}

static void
child_path(char *buf, size_t len, const char *parent, const char *name)
{
	if (parent[0] == '\0')
		mark_truncated(buf, len, (int)strlcpy(buf, name, len));
	else
		mark_truncated(buf, len,
			       snprintf(buf, len, "%s.%s", parent, name));
}

static void
item_path(char *buf, size_t len, const char *list, size_t i)
{
	mark_truncated(buf, len, snprintf(buf, len, "%s[%zu]", list, i));
}

/* ---- scalars ---- */

static void
store_uint(void *field, size_t size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	/* memcpy: the field may be an enum or any width of unsigned */
	switch (size) {
	case 1:
		memcpy(field, &u8, 1);
		break;
	case 2:
		memcpy(field, &u16, 2);
		break;
	case 4:
		memcpy(field, &u32, 4);
		break;
	default:
		memcpy(field, &v, 8);
		break;
	}
}

/*
 * Strict unsigned integers: decimal without leading zeros, or 0x hex.
 * strtoull alone would take "  -1" (as 2^64-1), "+5", "010" (octal) and
 * stop silently at "8080abc", so the text is vetted first.
 */
static bool
parse_uint(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	   const struct cfg_key *key, uint64_t *out)
{
	const char *s, *digits;
	unsigned long long v;
	int base = 10;
	size_t i;

	if (!is_plain_scalar(node) || node->data.scalar.length == 0) {
		cfg_error(
			ctx, node,
			"%s: wrong type: expected an unsigned integer, got %s",
			path, node_kind_str(node));
		return false;
	}
	s = scalar_str(node);
	if (s[0] == '-') {
		cfg_error(ctx, node,
			  "%s: negative value '%s' (expected an "
			  "unsigned integer)",
			  path, s);
		return false;
	}
	if (s[0] < '0' || s[0] > '9') {
		cfg_error(ctx, node,
			  "%s: wrong type: expected an unsigned integer, got "
			  "'%s'",
			  path, s);
		return false;
	}
	digits = s;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		digits = s + 2;
	}
	for (i = 0; digits[i] != '\0'; i++) {
		char c = digits[i];
		bool ok = (c >= '0' && c <= '9') ||
			  (base == 16 &&
			   ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
		if (!ok)
			break;
	}
	if (i == 0) {
		cfg_error(ctx, node,
			  "%s: invalid integer '%s': no digits "
			  "after 0x",
			  path, s);
		return false;
	}
	/* compared with the scalar's length: an embedded "\0" is junk too */
	if (i != node->data.scalar.length - (size_t)(digits - s)) {
		cfg_error(ctx, node,
			  "%s: invalid integer '%s': trailing "
			  "characters",
			  path, s);
		return false;
	}
	if (base == 10 && s[0] == '0' && s[1] != '\0') {
		cfg_error(ctx, node,
			  "%s: invalid integer '%s': leading zero "
			  "(use 0x for hex)",
			  path, s);
		return false;
	}
	errno = 0;
	v = strtoull(digits, NULL, base);
	if (errno == ERANGE || v < key->min || v > key->max) {
		if (v == 0 && (key->flags & CFG_ZERO_OK) && errno == 0) {
			*out = 0;
			return true;
		}
		if (key->flags & CFG_ZERO_OK)
			cfg_error(ctx, node,
				  "%s: '%s' out of range: 0 or "
				  "%" PRIu64 "..%" PRIu64,
				  path, s, key->min, key->max);
		else
			cfg_error(ctx, node,
				  "%s: '%s' out of range %" PRIu64 "..%" PRIu64,
				  path, s, key->min, key->max);
		return false;
	}
	if ((key->flags & CFG_POW2) && (v & (v - 1)) != 0) {
		cfg_error(ctx, node, "%s: %llu is not a power of two", path, v);
		return false;
	}
	*out = v;
	return true;
}

/* Copies a scalar into a fixed buffer; libyaml lets "\0" through, which
 * would silently cut the string. */
static bool
parse_str(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	  unsigned int flags, char *dst, size_t size)
{
	const char *s;
	size_t len;

	if (node->type != YAML_SCALAR_NODE) {
		cfg_error(ctx, node,
			  "%s: wrong type: expected a string, got %s", path,
			  node_kind_str(node));
		return false;
	}
	s = scalar_str(node);
	len = node->data.scalar.length;
	if (strlen(s) != len) {
		cfg_error(ctx, node, "%s: string contains a NUL character",
			  path);
		return false;
	}
	if ((flags & CFG_NONEMPTY) && len == 0) {
		cfg_error(ctx, node, "%s: must not be empty", path);
		return false;
	}
	if (len >= size) {
		cfg_error(ctx, node,
			  "%s: string too long (%zu characters, "
			  "max %zu)",
			  path, len, size - 1);
		return false;
	}
	strlcpy(dst, s, size);
	return true;
}

static bool
parse_bool(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	   bool *out)
{
	if (is_plain_scalar(node)) {
		if (strcmp(scalar_str(node), "true") == 0) {
			*out = true;
			return true;
		}
		if (strcmp(scalar_str(node), "false") == 0) {
			*out = false;
			return true;
		}
	}
	if (node->type == YAML_SCALAR_NODE && node->data.scalar.length > 0)
		cfg_error(ctx, node,
			  "%s: wrong type: expected true or false, "
			  "got '%s'",
			  path, scalar_str(node));
	else
		cfg_error(ctx, node,
			  "%s: wrong type: expected true or false, "
			  "got %s",
			  path, node_kind_str(node));
	return false;
}

static bool
parse_enum(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	   const struct cfg_enum_name *names, int *out)
{
	char choices[128] = "";
	unsigned int i;

	if (node->type != YAML_SCALAR_NODE) {
		cfg_error(ctx, node, "%s: wrong type: expected a name, got %s",
			  path, node_kind_str(node));
		return false;
	}
	for (i = 0; names[i].name != NULL; i++) {
		if (strcmp(scalar_str(node), names[i].name) == 0) {
			*out = names[i].value;
			return true;
		}
		if (i > 0)
			strlcat(choices, " ", sizeof(choices));
		strlcat(choices, names[i].name, sizeof(choices));
	}
	cfg_error(ctx, node, "%s: unknown value '%s' (expected one of: %s)",
		  path, scalar_str(node), choices);
	return false;
}

/* ---- lists ---- */

/* Returns the items of a list value, or false after reporting a value
 * that is not a list. A null value is an empty list. */
static bool
get_items(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	  yaml_node_item_t **items, size_t *n)
{
	if (is_null(node)) {
		*items = NULL;
		*n = 0;
		return true;
	}
	if (node->type != YAML_SEQUENCE_NODE) {
		cfg_error(ctx, node, "%s: wrong type: expected a list, got %s",
			  path, node_kind_str(node));
		return false;
	}
	*items = node->data.sequence.items.start;
	*n = (size_t)(node->data.sequence.items.top - *items);
	return true;
}

static bool
check_item_count(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
		 const struct cfg_key *key, size_t n)
{
	if (n < key->min_items) {
		cfg_error(ctx, node, "%s: expected at least %u item%s, got %zu",
			  path, key->min_items, key->min_items == 1 ? "" : "s",
			  n);
		return false;
	}
	return true;
}

static void
parse_str_list(struct cfg_ctx *ctx, const struct cfg_key *key,
	       const yaml_node_t *node, const char *path, void *base)
{
	char **list = (char **)((char *)base + key->off);
	unsigned int *count = (unsigned int *)((char *)base + key->count_off);
	char ipath[CFG_PATH_MAX];
	char buf[TLB_CFG_STR_MAX];
	yaml_node_item_t *items;
	size_t i, n;

	if (!get_items(ctx, node, path, &items, &n) ||
	    !check_item_count(ctx, node, path, key, n))
		return;
	for (i = 0; i < n; i++) {
		const yaml_node_t *item =
			yaml_document_get_node(ctx->doc, items[i]);

		item_path(ipath, sizeof(ipath), path, i);
		if (i >= key->max_items) {
			cfg_error(ctx, item, "%s: too many items (max %u)",
				  ipath, key->max_items);
			return;
		}
		if (!parse_str(ctx, item, ipath, key->flags, buf, sizeof(buf)))
			continue;
		list[*count] = strdup(buf);
		if (list[*count] == NULL) {
			cfg_error(ctx, item, "%s: out of memory", ipath);
			return;
		}
		(*count)++;
	}
}

/* Longest list whose items must be distinct (datapath.lcores). */
#define DISTINCT_MAX 256

static void
parse_uint_list(struct cfg_ctx *ctx, const struct cfg_key *key,
		const yaml_node_t *node, const char *path, void *base)
{
	uint64_t seen_v[DISTINCT_MAX];
	const yaml_node_t *seen_n[DISTINCT_MAX];
	char *array = (char *)base + key->off;
	unsigned int *count = (unsigned int *)((char *)base + key->count_off);
	char ipath[CFG_PATH_MAX];
	yaml_node_item_t *items;
	size_t i, j, n;
	uint64_t v;

	if (!get_items(ctx, node, path, &items, &n) ||
	    !check_item_count(ctx, node, path, key, n))
		return;
	/* the list replaces the default, it does not add to it */
	*count = 0;
	for (i = 0; i < n; i++) {
		const yaml_node_t *item =
			yaml_document_get_node(ctx->doc, items[i]);

		item_path(ipath, sizeof(ipath), path, i);
		if (i >= key->max_items) {
			cfg_error(ctx, item, "%s: too many items (max %u)",
				  ipath, key->max_items);
			return;
		}
		if (!parse_uint(ctx, item, ipath, key, &v))
			continue;
		if (key->flags & CFG_DISTINCT) {
			/* By value, not by spelling: 9000 and 0x2328 are the
			 * same port. */
			for (j = 0; j < *count; j++)
				if (seen_v[j] == v)
					break;
			if (j < *count) {
				cfg_error(ctx, item,
					  "%s: duplicate value %" PRIu64
					  " (also at %zu:%zu)",
					  ipath, v,
					  seen_n[j]->start_mark.line + 1,
					  seen_n[j]->start_mark.column + 1);
				continue;
			}
		}
		if (*count < DISTINCT_MAX) {
			seen_v[*count] = v;
			seen_n[*count] = item;
		}
		store_uint(array + (size_t)*count * key->size, key->size, v);
		(*count)++;
	}
}

/* ---- mappings ---- */

static void parse_value(struct cfg_ctx *ctx, const struct cfg_key *key,
			const yaml_node_t *node, const char *path, void *base);

static const struct cfg_key *
find_key(const struct cfg_key *keys, const char *name)
{
	for (; keys->name != NULL; keys++)
		if (strcmp(keys->name, name) == 0)
			return keys;
	return NULL;
}

static const yaml_node_t *
map_get(yaml_document_t *doc, const yaml_node_t *map, const char *name)
{
	yaml_node_pair_t *p;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		const yaml_node_t *k = yaml_document_get_node(doc, p->key);

		if (k->type == YAML_SCALAR_NODE &&
		    strcmp(scalar_str(k), name) == 0)
			return yaml_document_get_node(doc, p->value);
	}
	return NULL;
}

/*
 * Applies the key table `keys`, then more() for a key not in it, to the
 * mapping `map` (NULL: absent or empty, only the required keys are
 * checked). Fields are at base + key->off.
 */
static void
parse_map(struct cfg_ctx *ctx, const yaml_node_t *map,
	  const struct cfg_key *keys,
	  const struct cfg_key *(*more)(const char *, struct cfg_key *),
	  const char *path, void *base)
{
	char sub_path[CFG_PATH_MAX];
	const struct cfg_key *key;
	struct cfg_key tmp;
	yaml_node_pair_t *p, *q;

	for (p = map ? map->data.mapping.pairs.start : NULL;
	     map != NULL && p < map->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(ctx->doc, p->key);
		const yaml_node_t *v =
			yaml_document_get_node(ctx->doc, p->value);

		if (k->type != YAML_SCALAR_NODE) {
			cfg_error(ctx, k, "%s%skey must be a scalar, got %s",
				  path, path[0] ? ": " : "", node_kind_str(k));
			continue;
		}
		child_path(sub_path, sizeof(sub_path), path, scalar_str(k));
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			const yaml_node_t *prev =
				yaml_document_get_node(ctx->doc, q->key);

			if (prev->type == YAML_SCALAR_NODE &&
			    scalar_eq(prev, k))
				break;
		}
		if (q < p) {
			const yaml_node_t *first =
				yaml_document_get_node(ctx->doc, q->key);

			cfg_error(ctx, k,
				  "%s: duplicate key (first at %zu:%zu)",
				  sub_path, first->start_mark.line + 1,
				  first->start_mark.column + 1);
			continue;
		}
		key = find_key(keys, scalar_str(k));
		if (key == NULL && more != NULL)
			key = more(scalar_str(k), &tmp);
		if (key == NULL) {
			cfg_error(ctx, k, "%s: unknown key", sub_path);
			continue;
		}
		parse_value(ctx, key, v, sub_path, base);
	}

	for (key = keys; key->name != NULL; key++) {
		if (!(key->flags & CFG_REQUIRED))
			continue;
		if (map != NULL && map_get(ctx->doc, map, key->name) != NULL)
			continue;
		child_path(sub_path, sizeof(sub_path), path, key->name);
		/* a missing section: no node to point at but the file */
		if (path[0] == '\0')
			cfg_error(ctx, NULL, "%s: missing required section",
				  sub_path);
		else
			cfg_error(ctx, map, "%s: missing required key",
				  sub_path);
	}
}

static void
parse_value(struct cfg_ctx *ctx, const struct cfg_key *key,
	    const yaml_node_t *node, const char *path, void *base)
{
	void *field = (char *)base + key->off;
	int errors_before = ctx->n_errors;
	uint64_t u;
	bool b;
	int e;

	switch (key->kind) {
	case CFG_UINT:
		if (parse_uint(ctx, node, path, key, &u))
			store_uint(field, key->size, u);
		break;
	case CFG_BOOL:
		if (parse_bool(ctx, node, path, &b))
			*(bool *)field = b;
		break;
	case CFG_STR:
		parse_str(ctx, node, path, key->flags, field, key->size);
		break;
	case CFG_ENUM:
		if (parse_enum(ctx, node, path, key->names, &e))
			store_uint(field, sizeof(int), (uint64_t)e);
		break;
	case CFG_STR_LIST:
		parse_str_list(ctx, key, node, path, base);
		break;
	case CFG_UINT_LIST:
		parse_uint_list(ctx, key, node, path, base);
		break;
	case CFG_MAP:
		if (is_null(node))
			parse_map(ctx, NULL, key->sub, key->more, path, field);
		else if (node->type != YAML_MAPPING_NODE)
			cfg_error(ctx, node,
				  "%s: wrong type: expected a "
				  "mapping, got %s",
				  path, node_kind_str(node));
		else
			parse_map(ctx, node, key->sub, key->more, path, field);
		break;
	case CFG_CUSTOM:
		key->parse(ctx, key, node, path, field);
		break;
	}
	if (ctx->n_errors != errors_before)
		return;
	if (key->done != NULL)
		key->done(ctx, key, node, path, field);
	if ((key->flags & CFG_NODE) && ctx->n_nodes < CFG_NODES_MAX) {
		ctx->nodes[ctx->n_nodes].field = field;
		ctx->nodes[ctx->n_nodes++].node = node;
	}
}

/* The node the value of field came from (a key with CFG_NODE that parsed
 * without error), or NULL. */
static const yaml_node_t *
cfg_node_of(const struct cfg_ctx *ctx, const void *field)
{
	for (unsigned int i = 0; i < ctx->n_nodes; i++)
		if (ctx->nodes[i].field == field)
			return ctx->nodes[i].node;
	return NULL;
}

/* ---- lists of mappings ---- */

/* Parses one item of a list of mappings: map, named path
 * ("ports.targets[2]"), is the item, n the number of items in the list. */
typedef void (*map_item_fn)(struct cfg_ctx *ctx, const yaml_node_t *map,
			    const char *path, size_t n, void *arg);

/*
 * A list of 1 to max mappings, as ports.targets: each() is called, in
 * order, for every item that is a mapping; every other item is an error
 * that names the keys wanted (shape, e.g. "{port, protocol}"). what names
 * an item in the errors about the count ("target"). Returns the number
 * of items, or -1, with each() never called, after reporting a value
 * that is not a list, or one with no item or more than max.
 */
static int
parse_map_list(struct cfg_ctx *ctx, const yaml_node_t *node, const char *path,
	       const char *what, const char *shape, unsigned int max,
	       map_item_fn each, void *arg)
{
	char ipath[CFG_PATH_MAX];
	yaml_node_item_t *items;
	size_t i, n;

	if (!get_items(ctx, node, path, &items, &n))
		return -1;
	if (n == 0) {
		cfg_error(ctx, node, "%s: expected at least 1 %s", path, what);
		return -1;
	}
	if (n > max) {
		cfg_error(ctx, node, "%s: too many %ss (%zu, max %u)", path,
			  what, n, max);
		return -1;
	}
	for (i = 0; i < n; i++) {
		const yaml_node_t *item =
			yaml_document_get_node(ctx->doc, items[i]);

		item_path(ipath, sizeof(ipath), path, i);
		if (item->type != YAML_MAPPING_NODE) {
			cfg_error(ctx, item,
				  "%s: wrong type: expected a "
				  "mapping %s, got %s",
				  ipath, shape, node_kind_str(item));
			continue;
		}
		each(ctx, item, ipath, n, arg);
	}
	return (int)n;
}

/* ---- hooks for rules a table cannot say ---- */

static void
check_policy_name(struct cfg_ctx *ctx, const struct cfg_key *key,
		  const yaml_node_t *node, const char *path, void *field)
{
	(void)key;
	if (tlb_policy_find(field) == NULL)
		cfg_error(ctx, node, "%s: unknown policy '%s'", path,
			  (const char *)field);
}

/* Let the policy veto its parameters too, once they all parsed. */
static void
check_policy_params(struct cfg_ctx *ctx, const struct cfg_key *key,
		    const yaml_node_t *node, const char *path, void *field)
{
	const struct tlb_policy_ops *ops;
	char err[128];

	(void)key;
	(void)field;
	ops = tlb_policy_find(ctx->cfg->policy.name);
	if (ops == NULL)
		return;
	if (tlb_policy_check_params(ops, &ctx->cfg->policy.params, err,
				    sizeof(err)) != 0)
		cfg_error(ctx, node, "%s: %s", path, err);
}

/* shm_open() wants "/name" with no other slash. */
static void
check_shm_name(struct cfg_ctx *ctx, const struct cfg_key *key,
	       const yaml_node_t *node, const char *path, void *field)
{
	const char *s = field;

	(void)key;
	if (s[0] != '/' || s[1] == '\0' || strchr(s + 1, '/') != NULL)
		cfg_error(ctx, node,
			  "%s: invalid shared memory name '%s' "
			  "(must be '/' followed by a name without '/')",
			  path, s);
}

static void
mark_default_target(struct cfg_ctx *ctx, const struct cfg_key *key,
		    const yaml_node_t *node, const char *path, void *field)
{
	(void)key;
	(void)node;
	(void)path;
	(void)field;
	ctx->cfg->ports.has_default_target = true;
}

/* datapath.tx_flush_us bounded nothing a request cares about (a partly
 * filled buffer could wait that long); its two jobs have their own keys.
 * Refused rather than mapped: the old value means neither. */
static void
removed_tx_flush_us(struct cfg_ctx *ctx, const struct cfg_key *key,
		    const yaml_node_t *node, const char *path, void *field)
{
	(void)key;
	(void)field;
	cfg_error(ctx, node,
		  "%s: removed: TX buffers are sent within "
		  "datapath.tx_hold_ns (default %u ns); host state is read "
		  "every datapath.housekeeping_us",
		  path, TLB_CFG_TX_HOLD_NS);
}

/* The first host core port that is an mlx5 representor (a BlueField's
 * Arm side: its host is another machine), or NULL. */
static const char *
representor_target(const struct tlb_config *cfg)
{
	for (unsigned int i = 0; i < cfg->ports.n_targets; i++)
		if (strstr(cfg->ports.targets[i].ref.port, "_representor_") !=
		    NULL)
			return cfg->ports.targets[i].ref.port;
	return NULL;
}

/* Combinations of transport, credits and kick that cannot work: without
 * host memory there is no ring to read credits from and no doorbell to
 * ring; shared memory does not reach the host of representor ports; the
 * kick over the wire leaves by the default target. */
static void
check_transport(struct cfg_ctx *ctx)
{
	const struct tlb_config *cfg = ctx->cfg;
	const yaml_node_t *node = cfg_node_of(ctx, &cfg->host.transport);
	const char *rep;

	switch (cfg->host.transport) {
	case TLB_TRANSPORT_NONE:
		if (cfg->host.credits == TLB_CREDITS_RING)
			cfg_error(ctx, node,
				  "host.transport: none has no credit ring; "
				  "set host.credits: inband, or use "
				  "host.transport: packet");
		if (cfg->kick.enabled)
			cfg_error(ctx, node,
				  "host.transport: none has no doorbell; the "
				  "kick (kick.enabled) needs host.transport: "
				  "shm or packet");
		break;
	case TLB_TRANSPORT_SHM:
		rep = representor_target(cfg);
		if (rep == NULL)
			break;
		if (cfg->host.credits == TLB_CREDITS_RING || cfg->kick.enabled)
			cfg_error(ctx, node,
				  "host.transport: shm (the default) needs the "
				  "host to share memory with turbolbd, and "
				  "host core port '%s' is an mlx5 representor: "
				  "its host is another machine, which cannot "
				  "open the credit ring, so %s; use "
				  "host.transport: packet",
				  rep,
				  cfg->host.credits == TLB_CREDITS_RING
					  ? "with host.credits: ring every "
					    "core would stay offline and every "
					    "request be dropped"
					  : "no doorbell would reach it");
		break;
	case TLB_TRANSPORT_PACKET:
		if (cfg->kick.enabled && !cfg->ports.has_default_target)
			cfg_error(ctx, node,
				  "host.transport: packet rings the doorbell "
				  "with a frame out of the default target; the "
				  "kick (kick.enabled) needs "
				  "ports.default_target");
		break;
	}
}

/* The EAL's main lcore runs control work; a datapath loop there would
 * starve it (and DPDK refuses to launch a worker on it). */
static void
check_lcores(struct cfg_ctx *ctx)
{
	const struct tlb_config *cfg = ctx->cfg;
	const yaml_node_t *lcores = cfg_node_of(ctx, cfg->datapath.lcores);
	yaml_node_item_t *items = NULL;
	unsigned int i;

	if (lcores != NULL && lcores->type == YAML_SEQUENCE_NODE)
		items = lcores->data.sequence.items.start;
	for (i = 0; i < cfg->datapath.n_lcores; i++) {
		if (cfg->datapath.lcores[i] != cfg->eal.main_lcore)
			continue;
		if (items != NULL)
			cfg_error(ctx,
				  yaml_document_get_node(ctx->doc, items[i]),
				  "datapath.lcores[%u]: lcore %u is the EAL "
				  "main lcore",
				  i, cfg->eal.main_lcore);
		else
			cfg_error(ctx, cfg_node_of(ctx, &cfg->eal.main_lcore),
				  "eal.main_lcore: lcore %u is also a datapath "
				  "lcore",
				  cfg->eal.main_lcore);
	}
}

/* Dispatcher d of D owns host cores d, d + D, ...: unequal shares cap
 * the host when the uplink's RSS gives each dispatcher the same part of
 * the wire, since the dispatchers with the smaller share saturate first.
 * A dispatcher without a core is refused when the daemon starts
 * (tlb_dp_init()); the file says so here. */
static void
check_shares(struct cfg_ctx *ctx)
{
	const struct tlb_config *cfg = ctx->cfg;
	const yaml_node_t *node = cfg_node_of(ctx, cfg->datapath.lcores);
	unsigned int n = cfg->ports.n_targets, d = cfg->datapath.n_lcores;
	unsigned int q, r;
	char shares[96] = "";
	size_t off = 0;

	if (d <= 1 || n == 0)
		return;
	if (n < d) {
		cfg_warning(ctx, node,
			    "%u dispatchers for %u host core%s: turbolbd "
			    "refuses to start, each dispatcher needs a host "
			    "core of its own",
			    d, n, n == 1 ? "" : "s");
		return;
	}
	q = n / d;
	r = n % d;
	if (r == 0)
		return;
	if (d <= 16)
		for (unsigned int i = 0; i < d && off < sizeof(shares); i++)
			off += (size_t)snprintf(
				shares + off, sizeof(shares) - off, "%s%u",
				i == 0 ? "" : "/", q + (i < r ? 1 : 0));
	else
		snprintf(shares, sizeof(shares), "%u of %u and %u of %u", r,
			 q + 1, d - r, q);
	cfg_warning(ctx, node,
		    "%u host cores over %u dispatchers: %s; the dispatcher%s "
		    "with %u saturate%s first, at about %u/%u of the others' "
		    "capacity: with the wire spread evenly over the "
		    "dispatchers the host reaches about %u%% of its capacity "
		    "(a multiple of %u host cores divides evenly)",
		    n, d, shares, d - r == 1 ? "" : "s", q,
		    d - r == 1 ? "s" : "", q, q + 1, 100 * d * q / n, d);
}

static const struct cfg_key port_ref_keys[] = {
	KEY_STR("port", struct tlb_port_ref, port,
		CFG_REQUIRED | CFG_NONEMPTY | CFG_RESTART, NULL),
	KEY_UINT("queue", struct tlb_port_ref, queue, 0, UINT16_MAX,
		 CFG_RESTART),
	KEY_END,
};

static const struct cfg_key target_keys[] = {
	KEY_UINT("core", struct tlb_target_cfg, core, 0, TLB_MAX_CORES - 1,
		 CFG_REQUIRED | CFG_RESTART),
	KEY_STR("port", struct tlb_target_cfg, ref.port,
		CFG_REQUIRED | CFG_NONEMPTY | CFG_RESTART, NULL),
	KEY_UINT("queue", struct tlb_target_cfg, ref.queue, 0, UINT16_MAX,
		 CFG_RESTART),
	KEY_END,
};

/*
 * targets: a list of {core, port, queue}, stored at targets[core]. Host
 * core ids index the credit ring and the load view directly, so they must
 * be exactly 0..n-1; any other id is either a duplicate or out of
 * sequence, and a duplicate implies the gap, so one error per bad item.
 * arg: the node of each core id seen so far, by id.
 */
static void
parse_target(struct cfg_ctx *ctx, const yaml_node_t *map, const char *path,
	     size_t n, void *arg)
{
	const yaml_node_t **seen = arg;
	const yaml_node_t *core_node;
	struct tlb_target_cfg t;
	int errors_before;

	/* all of it: same_targets() compares the bytes past the name too */
	memset(&t, 0, sizeof(t));
	errors_before = ctx->n_errors;
	parse_map(ctx, map, target_keys, NULL, path, &t);
	if (ctx->n_errors != errors_before)
		return;
	core_node = map_get(ctx->doc, map, "core");
	if (seen[t.core] != NULL) {
		cfg_error(ctx, core_node,
			  "%s.core: duplicate core id "
			  "%u (first at %zu:%zu)",
			  path, t.core, seen[t.core]->start_mark.line + 1,
			  seen[t.core]->start_mark.column + 1);
		return;
	}
	seen[t.core] = core_node;
	if (t.core >= n) {
		cfg_error(ctx, core_node,
			  "%s.core: core id %u not "
			  "contiguous: %zu targets need ids 0..%zu",
			  path, t.core, n, n - 1);
		return;
	}
	ctx->cfg->ports.targets[t.core] = t;
}

static void
parse_targets(struct cfg_ctx *ctx, const struct cfg_key *key,
	      const yaml_node_t *node, const char *path, void *field)
{
	const yaml_node_t *seen[TLB_MAX_CORES] = {NULL};
	int n;

	(void)key;
	(void)field;
	n = parse_map_list(ctx, node, path, "target", "{core, port, queue}",
			   TLB_MAX_CORES, parse_target, seen);
	if (n >= 0)
		ctx->cfg->ports.n_targets = (unsigned int)n;
}

/* ---- the schema ---- */

/* targets is parsed by parse_targets() into ports.targets and
 * ports.n_targets. */
static bool
same_targets(const struct tlb_config *a, const struct tlb_config *b)
{
	return a->ports.n_targets == b->ports.n_targets &&
	       memcmp(a->ports.targets, b->ports.targets,
		      sizeof(a->ports.targets[0]) * a->ports.n_targets) == 0;
}

/* The policy section's keys past its name: the parameters of the
 * policies, as their tables describe them. Each is a key of any policy
 * (a parameter the chosen policy does not read is accepted and ignored),
 * and a reload applies it with the policy. */
static const struct cfg_key *
policy_param_key(const char *name, struct cfg_key *tmp)
{
	const struct tlb_policy_param *param = tlb_policy_param_find(name);

	if (param == NULL)
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	tmp->name = param->name;
	tmp->kind = param->type == TLB_PARAM_BOOL ? CFG_BOOL : CFG_UINT;
	tmp->flags = CFG_RELOAD;
	tmp->off = offsetof(struct tlb_config, policy.params) + param->off;
	tmp->size = param->size;
	tmp->min = param->min;
	tmp->max = param->max;
	return tmp;
}

#define C       struct tlb_config
#define RELOAD  CFG_RELOAD
#define RESTART CFG_RESTART

static const struct cfg_key eal_keys[] = {
	KEY_UINT("main_lcore", C, eal.main_lcore, 0, UINT32_MAX,
		 RESTART | CFG_NODE),
	KEY_UINT("memory_mb", C, eal.memory_mb, 16, 1048576, RESTART),
	KEY_BOOL("no_huge", C, eal.no_huge, RESTART),
	KEY_BOOL("no_pci", C, eal.no_pci, RESTART),
	KEY_STR("file_prefix", C, eal.file_prefix, CFG_NONEMPTY | RESTART,
		NULL),
	KEY_STR_LIST("vdevs", C, eal.vdevs, eal.n_vdevs, RESTART),
	KEY_STR_LIST("args", C, eal.args, eal.n_args, RESTART),
	KEY_END,
};

static const struct cfg_key datapath_keys[] = {
	KEY_UINT_LIST("lcores", C, datapath.lcores, datapath.n_lcores, 0,
		      UINT32_MAX, 1, CFG_DISTINCT | RESTART | CFG_NODE, NULL),
	KEY_UINT("burst", C, datapath.burst, 1, 512, RESTART),
	KEY_UINT("tx_hold_ns", C, datapath.tx_hold_ns, 0, 1000000, RESTART),
	KEY_UINT("housekeeping_us", C, datapath.housekeeping_us, 1, 10000,
		 RESTART),
	/* refused whatever its value: stores nothing a reload could see */
	{.name = "tx_flush_us",
	 .kind = CFG_CUSTOM,
	 .flags = RELOAD,
	 .parse = removed_tx_flush_us},
	KEY_UINT("idle_sleep_us", C, datapath.idle_sleep_us, 0, 100000,
		 RESTART),
	KEY_UINT("rx_desc", C, datapath.rx_desc, 64, 16384, RESTART),
	KEY_UINT("tx_desc", C, datapath.tx_desc, 64, 16384, RESTART),
	KEY_UINT("mbufs", C, datapath.mbufs, 1024, 16777216,
		 CFG_ZERO_OK | RESTART),
	KEY_END,
};

static const struct cfg_key ports_keys[] = {
	KEY_MAP("uplink", offsetof(C, ports.uplink), port_ref_keys,
		CFG_REQUIRED, NULL),
	KEY_MAP("default_target", offsetof(C, ports.default_target),
		port_ref_keys, 0, mark_default_target),
	{.name = "targets",
	 .kind = CFG_CUSTOM,
	 .flags = CFG_REQUIRED | RESTART,
	 .parse = parse_targets,
	 .same = same_targets},
	KEY_END,
};

/* One item of rpc.ports as it is parsed. */
struct rpc_port_item {
	uint32_t port;
	char protocol[32];
};

static void
check_protocol(struct cfg_ctx *ctx, const struct cfg_key *key,
	       const yaml_node_t *node, const char *path, void *field)
{
	char names[128] = "";

	(void)key;
	if (tlb_proto_find(field) >= 0)
		return;
	for (unsigned int i = 0; i < TLB_PROTO_N; i++) {
		if (i != 0)
			strlcat(names, ", ", sizeof(names));
		strlcat(names, tlb_proto_name(i), sizeof(names));
	}
	cfg_error(ctx, node, "%s: unknown protocol '%s' (one of: %s)", path,
		  (const char *)field, names);
}

static const struct cfg_key rpc_port_keys[] = {
	KEY_UINT("port", struct rpc_port_item, port, 1, UINT16_MAX,
		 CFG_REQUIRED | CFG_RESTART),
	KEY_STR("protocol", struct rpc_port_item, protocol,
		CFG_REQUIRED | CFG_NONEMPTY | CFG_RESTART, check_protocol),
	KEY_END,
};

/* The ports of rpc.ports parsed so far, and the node of each. */
struct rpc_ports_seen {
	const yaml_node_t *node[TLB_RPC_MAX_PORTS];
	unsigned int n;
};

/* One item of rpc.ports, appended to rpc.udp_ports and rpc.port_proto
 * unless its port came before. */
static void
parse_rpc_port(struct cfg_ctx *ctx, const yaml_node_t *map, const char *path,
	       size_t n, void *arg)
{
	struct rpc_ports_seen *seen = arg;
	struct tlb_config *cfg = ctx->cfg;
	const yaml_node_t *port_node;
	struct rpc_port_item it;
	int errors_before;

	(void)n;
	memset(&it, 0, sizeof(it));
	errors_before = ctx->n_errors;
	parse_map(ctx, map, rpc_port_keys, NULL, path, &it);
	if (ctx->n_errors != errors_before)
		return;
	port_node = map_get(ctx->doc, map, "port");
	for (unsigned int j = 0; j < seen->n; j++)
		if (cfg->rpc.udp_ports[j] == it.port) {
			cfg_error(ctx, port_node,
				  "%s.port: duplicate port %u (first "
				  "at %zu:%zu)",
				  path, it.port,
				  seen->node[j]->start_mark.line + 1,
				  seen->node[j]->start_mark.column + 1);
			return;
		}
	seen->node[seen->n] = port_node;
	cfg->rpc.udp_ports[seen->n] = (uint16_t)it.port;
	cfg->rpc.port_proto[seen->n++] = (uint8_t)tlb_proto_find(it.protocol);
}

/*
 * rpc.ports: a list of {port, protocol}, stored in rpc.udp_ports and
 * rpc.port_proto in the order given. Each port once.
 */
static void
parse_rpc_ports(struct cfg_ctx *ctx, const struct cfg_key *key,
		const yaml_node_t *node, const char *path, void *field)
{
	struct rpc_ports_seen seen = {.n = 0};

	(void)key;
	(void)field;
	if (parse_map_list(ctx, node, path, "port", "{port, protocol}",
			   TLB_RPC_MAX_PORTS, parse_rpc_port, &seen) >= 0)
		ctx->cfg->rpc.n_udp_ports = seen.n;
}

static bool
same_rpc_ports(const struct tlb_config *a, const struct tlb_config *b)
{
	return a->rpc.n_udp_ports == b->rpc.n_udp_ports &&
	       memcmp(a->rpc.udp_ports, b->rpc.udp_ports,
		      sizeof(a->rpc.udp_ports[0]) * a->rpc.n_udp_ports) == 0 &&
	       memcmp(a->rpc.port_proto, b->rpc.port_proto,
		      sizeof(a->rpc.port_proto[0]) * a->rpc.n_udp_ports) == 0;
}

/* The short form: every port of rpc.udp_ports speaks turbolb. */
static void
udp_ports_native(struct cfg_ctx *ctx, const struct cfg_key *key,
		 const yaml_node_t *node, const char *path, void *field)
{
	(void)key;
	(void)node;
	(void)path;
	(void)field;
	memset(ctx->cfg->rpc.port_proto, TLB_PROTO_TURBOLB,
	       sizeof(ctx->cfg->rpc.port_proto));
}

/* rpc.udp_ports and rpc.ports write the same list: one or the other. */
static void
check_rpc(struct cfg_ctx *ctx, const struct cfg_key *key,
	  const yaml_node_t *node, const char *path, void *field)
{
	const yaml_node_t *ports;

	(void)key;
	(void)field;
	if (node == NULL || node->type != YAML_MAPPING_NODE)
		return;
	ports = map_get(ctx->doc, node, "ports");
	if (ports != NULL && map_get(ctx->doc, node, "udp_ports") != NULL)
		cfg_error(ctx, ports,
			  "%s.ports: rpc.udp_ports is given too: use one "
			  "(rpc.udp_ports: [P] is short for rpc.ports: "
			  "[{port: P, protocol: turbolb}])",
			  path);
}

static const struct cfg_key rpc_keys[] = {
	KEY_UINT_LIST("udp_ports", C, rpc.udp_ports, rpc.n_udp_ports, 1,
		      UINT16_MAX, 1, CFG_DISTINCT | RESTART, udp_ports_native),
	{.name = "ports",
	 .kind = CFG_CUSTOM,
	 .flags = RESTART,
	 .parse = parse_rpc_ports,
	 .same = same_rpc_ports},
	KEY_END,
};

static const struct cfg_key policy_keys[] = {
	KEY_STR("name", C, policy.name, CFG_NONEMPTY | RELOAD,
		check_policy_name),
	KEY_END,
};

static const struct cfg_key fifo_keys[] = {
	KEY_UINT("capacity", C, fifo.capacity, 0, 1048576, RELOAD),
	KEY_END,
};

static const struct cfg_key affinity_keys[] = {
	KEY_UINT("entries", C, affinity.entries, 16, 1048576,
		 CFG_POW2 | RESTART),
	KEY_UINT("timeout_us", C, affinity.timeout_us, 1, 10000000, RESTART),
	KEY_END,
};

static const struct cfg_key host_keys[] = {
	KEY_ENUM("transport", C, host.transport, transport_names,
		 RESTART | CFG_NODE),
	KEY_ENUM("credits", C, host.credits, credit_mode_names, RESTART),
	KEY_STR("credit_ring", C, host.credit_ring, RESTART, check_shm_name),
	KEY_UINT("ring_size", C, host.ring_size, 16, TLB_CR_MAX_RING,
		 CFG_POW2 | RESTART),
	KEY_UINT("stale_timeout_us", C, host.stale_timeout_us, 100, 60000000,
		 RELOAD),
	KEY_UINT("write_off_us", C, host.write_off_us, 0, 600000000, RELOAD),
	KEY_STR("group", C, host.group, RESTART, NULL),
	KEY_END,
};

static const struct cfg_key kick_keys[] = {
	KEY_BOOL("enabled", C, kick.enabled, RESTART),
	KEY_UINT("min_interval_us", C, kick.min_interval_us, 1, 1000000,
		 RESTART),
	KEY_UINT("stall_us", C, kick.stall_us, 0, 10000000, RESTART),
	KEY_END,
};

static const struct cfg_key telemetry_keys[] = {
	KEY_BOOL("enabled", C, telemetry.enabled, RESTART),
	KEY_END,
};

static void
check_listen(struct cfg_ctx *ctx, const struct cfg_key *key,
	     const yaml_node_t *node, const char *path, void *field)
{
	struct tlb_listen_addr a;
	char err[160];

	(void)key;
	if (*(const char *)field == '\0')
		return;
	if (tlb_listen_addr_parse(field, &a, err, sizeof(err)) != 0)
		cfg_error(ctx, node, "%s: %s", path, err);
}

static const struct cfg_key metrics_keys[] = {
	/* the endpoint is opened once, at start-up */
	KEY_STR("listen", C, metrics.listen, RESTART, check_listen),
	KEY_END,
};

static const struct cfg_key log_keys[] = {
	KEY_ENUM("level", C, log.level, log_level_names, RELOAD),
	KEY_END,
};

/* Sections share the base (the whole config): their tables use offsets
 * into struct tlb_config. */
const struct cfg_key tlb_cfg_root_keys[] = {
	KEY_MAP("eal", 0, eal_keys, 0, NULL),
	KEY_MAP("datapath", 0, datapath_keys, 0, NULL),
	KEY_MAP("ports", 0, ports_keys, CFG_REQUIRED, NULL),
	KEY_MAP("rpc", 0, rpc_keys, 0, check_rpc),
	{.name = "policy",
	 .kind = CFG_MAP,
	 .sub = policy_keys,
	 .more = policy_param_key,
	 .done = check_policy_params},
	KEY_MAP("fifo", 0, fifo_keys, 0, NULL),
	KEY_MAP("affinity", 0, affinity_keys, 0, NULL),
	KEY_MAP("host", 0, host_keys, 0, NULL),
	KEY_MAP("kick", 0, kick_keys, 0, NULL),
	KEY_MAP("telemetry", 0, telemetry_keys, 0, NULL),
	KEY_MAP("metrics", 0, metrics_keys, 0, NULL),
	KEY_MAP("log", 0, log_keys, 0, NULL),
	KEY_END,
};

#undef RESTART
#undef RELOAD
#undef C

/* ---- the reload ---- */

int
tlb_cfg_schema_check(const struct cfg_key *keys, const char *path, FILE *errs)
{
	char sub[CFG_PATH_MAX];
	int bad = 0;

	for (const struct cfg_key *key = keys; key->name != NULL; key++) {
		unsigned int when = key->flags & (CFG_RELOAD | CFG_RESTART);
		const char *why = NULL;

		child_path(sub, sizeof(sub), path, key->name);
		if (key->kind == CFG_MAP) {
			if (when != 0)
				why = "a mapping's keys say whether a reload "
				      "can change them, not the mapping";
			bad += tlb_cfg_schema_check(key->sub, sub, errs);
		} else if (when == 0) {
			why = "says neither CFG_RELOAD nor CFG_RESTART";
		} else if (when == (CFG_RELOAD | CFG_RESTART)) {
			why = "says both CFG_RELOAD and CFG_RESTART";
		} else if (key->kind == CFG_CUSTOM && when == CFG_RESTART &&
			   key->same == NULL) {
			why = "needs a restart but has no .same to compare it";
		}
		if (why == NULL)
			continue;
		bad++;
		if (errs != NULL)
			fprintf(errs, "config schema: %s: %s\n", sub, why);
	}
	return bad;
}

/* Whether key's value (fields at a and b, the bases of its map) is the
 * same in both configurations. */
static bool
key_same(const struct cfg_key *key, const struct tlb_config *ca,
	 const struct tlb_config *cb, const char *a, const char *b)
{
	const char *fa = a + key->off, *fb = b + key->off;
	unsigned int na, nb;

	switch (key->kind) {
	case CFG_UINT:
		return memcmp(fa, fb, key->size) == 0;
	case CFG_BOOL:
		return *(const bool *)fa == *(const bool *)fb;
	case CFG_STR:
		return strncmp(fa, fb, key->size) == 0;
	case CFG_ENUM:
		return memcmp(fa, fb, sizeof(int)) == 0;
	case CFG_STR_LIST:
	case CFG_UINT_LIST:
		memcpy(&na, a + key->count_off, sizeof(na));
		memcpy(&nb, b + key->count_off, sizeof(nb));
		if (na != nb)
			return false;
		if (key->kind == CFG_UINT_LIST)
			return memcmp(fa, fb, (size_t)na * key->size) == 0;
		for (unsigned int i = 0; i < na; i++)
			if (strcmp(((char *const *)(const void *)fa)[i],
				   ((char *const *)(const void *)fb)[i]) != 0)
				return false;
		return true;
	case CFG_CUSTOM:
		return key->same == NULL || key->same(ca, cb);
	case CFG_MAP:
		break;
	}
	return true;
}

/* The first key under keys that needs a restart and differs, or NULL. */
static const struct cfg_key *
restart_key(const struct cfg_key *keys, const struct tlb_config *ca,
	    const struct tlb_config *cb, const char *a, const char *b)
{
	for (const struct cfg_key *key = keys; key->name != NULL; key++) {
		const struct cfg_key *k;

		if (key->kind == CFG_MAP) {
			k = restart_key(key->sub, ca, cb, a + key->off,
					b + key->off);
			if (k != NULL)
				return k;
		} else if ((key->flags & CFG_RESTART) &&
			   !key_same(key, ca, cb, a, b)) {
			return key;
		}
	}
	return NULL;
}

const char *
tlb_config_needs_restart(const struct tlb_config *a, const struct tlb_config *b,
			 char *buf, size_t len)
{
	for (const struct cfg_key *sec = tlb_cfg_root_keys; sec->name != NULL;
	     sec++) {
		const struct cfg_key *reload[8];
		unsigned int n = 0;
		char *at = buf;
		size_t left = len;
		int w;

		if (restart_key(sec->sub, a, b, (const char *)a + sec->off,
				(const char *)b + sec->off) == NULL)
			continue;
		/* the section, and which of its keys a reload can change */
		for (const struct cfg_key *k = sec->sub; k->name != NULL; k++)
			if ((k->flags & CFG_RELOAD) && k->kind != CFG_CUSTOM &&
			    n < sizeof(reload) / sizeof(reload[0]))
				reload[n++] = k;
		w = snprintf(at, left, "%s", sec->name);
		for (unsigned int i = 0; i < n && w >= 0 && (size_t)w < left;
		     i++) {
			at += w;
			left -= (size_t)w;
			w = snprintf(at, left, "%s%s.%s%s",
				     i == 0       ? " (only "
				     : i + 1 == n ? " and "
						  : ", ",
				     sec->name, reload[i]->name,
				     i + 1 == n ? " can be reloaded)" : "");
		}
		return buf;
	}
	return NULL;
}

int
tlb_listen_addr_parse(const char *s, struct tlb_listen_addr *a, char *err,
		      size_t errlen)
{
	const char *colon, *host = s;
	size_t host_len;
	unsigned long port;
	char *end;

	memset(a, 0, sizeof(*a));
	if (strncmp(s, "unix:", 5) == 0) {
		a->is_unix = true;
		if (s[5] != '/') {
			snprintf(err, errlen,
				 "'%s': a unix socket needs an "
				 "absolute path "
				 "(unix:/run/turbolb/metrics.sock)",
				 s);
			return -1;
		}
		if (strlen(s + 5) >= sizeof(a->path)) {
			snprintf(err, errlen,
				 "'%s': unix socket path longer "
				 "than %zu characters",
				 s, sizeof(a->path) - 1);
			return -1;
		}
		strlcpy(a->path, s + 5, sizeof(a->path));
		return 0;
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':') {
			snprintf(err, errlen, "'%s': expected [ADDRESS]:PORT",
				 s);
			return -1;
		}
		host = s + 1;
		host_len = (size_t)(close - host);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s))) {
			snprintf(err, errlen,
				 "'%s': expected HOST:PORT, "
				 "[ADDRESS]:PORT or unix:PATH",
				 s);
			return -1;
		}
		host_len = (size_t)(colon - s);
	}
	if (host_len == 0) {
		snprintf(err, errlen,
			 "'%s': no address before the port (to "
			 "listen everywhere, say 0.0.0.0 or [::])",
			 s);
		return -1;
	}
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *end != '\0' || errno != 0 ||
	    port == 0 || port > 65535) {
		snprintf(err, errlen, "'%s': port must be 1..65535", s);
		return -1;
	}
	memcpy(a->host, host, host_len);
	a->host[host_len] = '\0';
	a->port = (uint16_t)port;
	return 0;
}

/* ---- loading ---- */

/* Reader errors (bad UTF-8, a NUL byte) carry only a byte offset; the
 * position is counted here the way libyaml counts marks: characters. */
static void
offset_to_mark(const char *text, size_t len, size_t offset, size_t *line,
	       size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < offset && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;
		}
	}
}

static void
report_parser_error(struct cfg_ctx *ctx, const yaml_parser_t *parser,
		    const char *text, size_t len)
{
	const char *problem = parser->problem ? parser->problem : "error";
	size_t line, col;

	ctx->n_errors++;
	if (ctx->errs == NULL)
		return;
	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		fprintf(ctx->errs, "%s: out of memory\n", ctx->name);
		return;
	case YAML_READER_ERROR:
		offset_to_mark(text, len, parser->problem_offset, &line, &col);
		fprintf(ctx->errs, "%s:%zu:%zu: invalid input: %s\n", ctx->name,
			line, col, problem);
		return;
	default:
		break;
	}
	fprintf(ctx->errs, "%s:%zu:%zu: syntax error: ", ctx->name,
		parser->problem_mark.line + 1, parser->problem_mark.column + 1);
	if (parser->context != NULL)
		fprintf(ctx->errs, "%s (from %zu:%zu): ", parser->context,
			parser->context_mark.line + 1,
			parser->context_mark.column + 1);
	fprintf(ctx->errs, "%s\n", problem);
}

static void
load_text(struct cfg_ctx *ctx, const char *text, size_t len)
{
	yaml_document_t doc, extra;
	const yaml_node_t *root;
	yaml_parser_t parser;

	if (!yaml_parser_initialize(&parser)) {
		report_parser_error(ctx, &parser, text, len);
		return;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		report_parser_error(ctx, &parser, text, len);
		yaml_parser_delete(&parser);
		return;
	}
	ctx->doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (root != NULL && is_null(root))
		root = NULL;
	if (root != NULL && root->type != YAML_MAPPING_NODE)
		cfg_error(ctx, root,
			  "wrong type: expected a mapping of "
			  "sections at the top, got %s",
			  node_kind_str(root));
	else
		parse_map(ctx, root, tlb_cfg_root_keys, NULL, "", ctx->cfg);
	check_lcores(ctx);
	check_transport(ctx);
	check_shares(ctx);
	ctx->doc = NULL;
	yaml_document_delete(&doc);

	/* A second document would be ignored silently otherwise. */
	if (!yaml_parser_load(&parser, &extra)) {
		report_parser_error(ctx, &parser, text, len);
	} else {
		root = yaml_document_get_root_node(&extra);
		if (root != NULL)
			cfg_error(ctx, root,
				  "only one YAML document is allowed");
		yaml_document_delete(&extra);
	}
	yaml_parser_delete(&parser);
}

void
tlb_config_defaults(struct tlb_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));

	cfg->eal.main_lcore = 0;
	cfg->eal.memory_mb = 256;
	strlcpy(cfg->eal.file_prefix, "turbolbd", sizeof(cfg->eal.file_prefix));

	cfg->datapath.lcores[0] = 1;
	cfg->datapath.n_lcores = 1;
	cfg->datapath.burst = 32;
	cfg->datapath.tx_hold_ns = TLB_CFG_TX_HOLD_NS;
	cfg->datapath.housekeeping_us = 100;
	cfg->datapath.idle_sleep_us = 0;
	cfg->datapath.rx_desc = 1024;
	cfg->datapath.tx_desc = 1024;
	cfg->datapath.mbufs = 0;

	cfg->rpc.udp_ports[0] = 9000;
	cfg->rpc.n_udp_ports = 1;

	strlcpy(cfg->policy.name, "jsq", sizeof(cfg->policy.name));
	tlb_policy_params_default(&cfg->policy.params);

	cfg->fifo.capacity = 4096;

	cfg->affinity.entries = 4096;
	cfg->affinity.timeout_us = 1000;
	cfg->kick.enabled = false;
	cfg->kick.min_interval_us = 100;
	cfg->kick.stall_us = 200;

	cfg->host.transport = TLB_TRANSPORT_SHM;
	cfg->host.credits = TLB_CREDITS_RING;
	strlcpy(cfg->host.credit_ring, "/turbolb-credits",
		sizeof(cfg->host.credit_ring));
	cfg->host.ring_size = 1024;
	cfg->host.stale_timeout_us = 10000;
	cfg->host.write_off_us = 100000;

	cfg->telemetry.enabled = true;
	cfg->log.level = TLB_LOG_INFO;
}

int
tlb_config_load_buffer(const char *name, const char *text, size_t len,
		       struct tlb_config *cfg, FILE *errs)
{
	struct cfg_ctx ctx = {.name = name, .errs = errs, .cfg = cfg};

	tlb_config_defaults(cfg);
	strlcpy(cfg->path, name, sizeof(cfg->path));
	load_text(&ctx, text, len);
	return ctx.n_errors;
}

/* Reads all of f; a configuration is small, and having the text lets
 * reader errors be given a line and column. */
static char *
read_all(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap), *bigger;

	while (buf != NULL) {
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap) {
			if (ferror(f)) {
				free(buf);
				return NULL;
			}
			*len = n;
			return buf;
		}
		if (cap >= CFG_FILE_MAX) {
			free(buf);
			errno = EFBIG;
			return NULL;
		}
		cap *= 2;
		bigger = realloc(buf, cap);
		if (bigger == NULL)
			free(buf);
		buf = bigger;
	}
	errno = ENOMEM;
	return NULL;
}

int
tlb_config_load(const char *path, struct tlb_config *cfg, FILE *errs)
{
	struct cfg_ctx ctx = {.name = path, .errs = errs, .cfg = cfg};
	const char *what = "cannot open";
	char *text = NULL;
	struct stat st;
	size_t len = 0;
	FILE *f;

	tlb_config_defaults(cfg);
	strlcpy(cfg->path, path, sizeof(cfg->path));
	f = fopen(path, "r");
	if (f != NULL && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		/* fopen() opens a directory; only reading it fails */
		errno = EISDIR;
	} else if (f != NULL) {
		what = "cannot read";
		text = read_all(f, &len);
	}
	if (text == NULL) {
		if (errs != NULL)
			fprintf(errs, "%s: %s: %s\n", path, what,
				strerror(errno));
		if (f != NULL)
			fclose(f);
		return 1;
	}
	fclose(f);
	load_text(&ctx, text, len);
	free(text);
	return ctx.n_errors;
}

void
tlb_config_free(struct tlb_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->eal.n_vdevs; i++) {
		free(cfg->eal.vdevs[i]);
		cfg->eal.vdevs[i] = NULL;
	}
	cfg->eal.n_vdevs = 0;
	for (i = 0; i < cfg->eal.n_args; i++) {
		free(cfg->eal.args[i]);
		cfg->eal.args[i] = NULL;
	}
	cfg->eal.n_args = 0;
}

static const char *
enum_name(const struct cfg_enum_name *names, int value)
{
	for (; names->name != NULL; names++)
		if (names->value == value)
			return names->name;
	return "?";
}

const char *
tlb_credit_mode_str(enum tlb_credit_mode m)
{
	return enum_name(credit_mode_names, (int)m);
}

const char *
tlb_transport_kind_str(enum tlb_transport_kind k)
{
	return enum_name(transport_names, (int)k);
}

const char *
tlb_log_level_str(enum tlb_log_level l)
{
	return enum_name(log_level_names, (int)l);
}

void
tlb_config_summary(const struct tlb_config *cfg, char *buf, size_t len)
{
	const struct tlb_policy_ops *ops = tlb_policy_find(cfg->policy.name);
	char param[48] = "";

	/* the parameter of the policy's NAME:VALUE spec, where it has one */
	if (ops != NULL && ops->spec_param != NULL)
		snprintf(param, sizeof(param), " (%s=%" PRIu64 ")",
			 ops->spec_param->name,
			 tlb_policy_param_get(ops->spec_param,
					      &cfg->policy.params));
	snprintf(buf, len,
		 "policy %s%s, %u target%s, uplink %s, %u datapath lcore%s, "
		 "credits %s%s",
		 cfg->policy.name, param, cfg->ports.n_targets,
		 cfg->ports.n_targets == 1 ? "" : "s",
		 cfg->ports.uplink.port[0] ? cfg->ports.uplink.port : "(none)",
		 cfg->datapath.n_lcores, cfg->datapath.n_lcores == 1 ? "" : "s",
		 tlb_credit_mode_str(cfg->host.credits),
		 cfg->host.transport == TLB_TRANSPORT_NONE ? " (transport none)"
							   : "");
}
