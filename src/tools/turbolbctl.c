/* SPDX-License-Identifier: BSD-3-Clause
 * turbolbctl: the operator's view of a running turbolbd.
 *
 * It speaks DPDK's telemetry v2 protocol itself (a SOCK_SEQPACKET unix
 * socket: a JSON hello on connect, then one command string per request
 * and one JSON object {"<command>": value} per answer), so it needs no
 * DPDK library and no Python on the SmartNIC, and keeps working when the
 * daemon is wedged in its datapath: telemetry runs in its own thread.
 *
 * Exit status: 0 done, 1 turbolbd not reachable, 2 usage, 3 turbolbd
 * answered but does not support the command or refused it.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "turbolb/metrics.h"

#ifndef TLB_VERSION
#define TLB_VERSION "unknown"
#endif

#define EXIT_OK          0
#define EXIT_UNREACHABLE 1
#define EXIT_USAGE       2
#define EXIT_UNSUPPORTED 3

#define DEFAULT_PREFIX  "turbolbd"
#define TEL_SOCKET_NAME "dpdk_telemetry.v2"
/* RuntimeDirectory=turbolb of configs/turbolbd.service: systemd hands the
 * daemon RUNTIME_DIRECTORY=/run/turbolb, which DPDK's EAL prefers to its
 * own default, while an operator's shell has no such variable. */
#define SERVICE_RUNTIME_DIR "/run/turbolb"
/* The server reads a request into 1024 bytes and looks commands up only
 * when shorter than 56 (lib/telemetry/telemetry.c, DPDK 22.11): longer
 * ones would be cut or answered as unknown. */
#define TEL_MAX_REQUEST 1023
#define TEL_MAX_CMD     55
#define TEL_HELLO_LEN   1024
#define TEL_MIN_OUTPUT  16384
#define TEL_TIMEOUT_S   5
#define MAX_CANDIDATES  4
#define SUN_PATH_LEN    sizeof(((struct sockaddr_un *)0)->sun_path)

struct opts {
	const char *prefix;
	const char *socket;
	unsigned int instance;
	bool json;
	bool watch;
	bool all;
	double interval;
};

struct tel {
	int fd;
	char path[PATH_MAX];
	long long pid;
	char version[64];
	size_t max_len;
	char *buf;
};

/* One answer: root owns the parsed tree, value points into it. raw is
 * the text, in the connection's buffer or, for answers made of several
 * (the pages of /turbolb/cores), in owned. */
struct answer {
	json_t *root;
	json_t *value;
	const char *raw;
	size_t raw_len;
	char *owned;
};

struct candidate {
	char path[PATH_MAX];
	int err;
};

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* ---- the telemetry connection ---------------------------------------- */

static void
tel_close(struct tel *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	free(t->buf);
	t->buf = NULL;
}

/* Returns 0, or -errno; -EPROTO for a hello that is not telemetry v2. */
/* Connections refused at the client limit are tried again this many
 * times, this far apart. */
#define TEL_BUSY_TRIES   50
#define TEL_BUSY_WAIT_US 20000

static int
tel_connect(struct tel *t, const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = TEL_TIMEOUT_S};
	char hello[TEL_HELLO_LEN + 1];
	json_error_t jerr;
	json_t *root, *v;
	ssize_t n;
	int rc;

	t->fd = -1;
	t->buf = NULL;
	if (strlen(path) >= SUN_PATH_LEN)
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	snprintf(t->path, sizeof(t->path), "%s", path);

	t->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (t->fd < 0)
		return -errno;
	/* A daemon that accepts but never answers must not hang a script. */
	setsockopt(t->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(t->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(t->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		rc = -errno;
		goto fail;
	}
	n = recv(t->fd, hello, TEL_HELLO_LEN, 0);
	if (n < 0) {
		rc = -errno;
		goto fail;
	}
	if (n == 0) {
		/* The server accepts and closes at once past its client
		 * limit (10 in DPDK 22.11). */
		rc = -ECONNRESET;
		goto fail;
	}
	root = json_loadb(hello, (size_t)n, 0, &jerr);
	v = json_object_get(root, "max_output_len");
	if (!json_is_integer(v) || json_integer_value(v) <= 0) {
		json_decref(root);
		rc = -EPROTO;
		goto fail;
	}
	t->max_len = (size_t)json_integer_value(v);
	if (t->max_len < TEL_MIN_OUTPUT)
		t->max_len = TEL_MIN_OUTPUT;
	v = json_object_get(root, "pid");
	t->pid = json_is_integer(v) ? json_integer_value(v) : -1;
	v = json_object_get(root, "version");
	snprintf(t->version, sizeof(t->version), "%s",
		 json_is_string(v) ? json_string_value(v) : "?");
	json_decref(root);
	t->buf = malloc(t->max_len + 1);
	if (t->buf == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	tel_close(t);
	return rc;
}

static const char *
connect_strerror(int err)
{
	switch (err) {
	case ECONNRESET:
		return "closed the connection at once (too many telemetry "
		       "clients?)";
	case EPROTO:
		return "not a DPDK telemetry v2 socket";
	case ECONNREFUSED:
		return "connection refused (stale socket: turbolbd is gone)";
	case EAGAIN:
		return "no answer in time";
	default:
		return strerror(err);
	}
}

static void
add_candidate(struct candidate *c, unsigned int *n, const char *dir,
	      const struct opts *o)
{
	char path[PATH_MAX];
	int len;

	if (o->instance > 0)
		len = snprintf(path, sizeof(path), "%s/dpdk/%s/%s:%u", dir,
			       o->prefix, TEL_SOCKET_NAME, o->instance);
	else
		len = snprintf(path, sizeof(path), "%s/dpdk/%s/%s", dir,
			       o->prefix, TEL_SOCKET_NAME);
	if (len < 0 || (size_t)len >= sizeof(path) || *n >= MAX_CANDIDATES)
		return;
	for (unsigned int i = 0; i < *n; i++)
		if (strcmp(c[i].path, path) == 0)
			return;
	memcpy(c[*n].path, path, (size_t)len + 1);
	c[*n].err = 0;
	(*n)++;
}

/* The places DPDK 22.11's eal_create_runtime_dir() may have used, in its
 * own order, then the systemd unit's. It tests getuid(), not geteuid(). */
static unsigned int
socket_candidates(const struct opts *o, struct candidate *c)
{
	const char *env = getenv("RUNTIME_DIRECTORY");
	unsigned int n = 0;

	if (o->socket != NULL) {
		snprintf(c[0].path, sizeof(c[0].path), "%s", o->socket);
		c[0].err = 0;
		return 1;
	}
	if (env != NULL && env[0] != '\0')
		add_candidate(c, &n, env, o);
	if (getuid() == 0) {
		add_candidate(c, &n, "/var/run", o);
	} else {
		env = getenv("XDG_RUNTIME_DIR");
		add_candidate(c, &n, env != NULL ? env : "/tmp", o);
	}
	add_candidate(c, &n, SERVICE_RUNTIME_DIR, o);
	return n;
}

/* Connects to the first candidate that answers; quiet says whether to
 * leave the explanation to the caller (--watch retries). */
static int
tel_open(struct tel *t, const struct opts *o, bool quiet)
{
	struct candidate c[MAX_CANDIDATES];
	unsigned int n = socket_candidates(o, c);

	for (unsigned int i = 0; i < n; i++) {
		/* ECONNRESET: the daemon is at its telemetry client limit
		 * while earlier clients' handler threads wind down; one of
		 * them soon frees a slot. */
		for (unsigned int try = 0; try < TEL_BUSY_TRIES; try++) {
			c[i].err = -tel_connect(t, c[i].path);
			if (c[i].err != ECONNRESET)
				break;
			usleep(TEL_BUSY_WAIT_US);
		}
		if (c[i].err == 0)
			return 0;
	}
	if (quiet)
		return -1;
	if (n == 1) {
		fprintf(stderr, "turbolbctl: cannot reach turbolbd at %s: %s\n",
			c[0].path, connect_strerror(c[0].err));
	} else {
		fprintf(stderr,
			"turbolbctl: cannot reach turbolbd "
			"(file prefix \"%s\"); tried:\n",
			o->prefix);
		for (unsigned int i = 0; i < n; i++)
			fprintf(stderr, "  %s: %s\n", c[i].path,
				connect_strerror(c[i].err));
	}
	if (o->socket == NULL)
		fprintf(stderr,
			"turbolbctl: is turbolbd running with "
			"eal.file_prefix \"%s\" and telemetry.enabled "
			"true? (-f PREFIX, -s PATH)\n",
			o->prefix);
	return -1;
}

/* Turns integers past INT64_MAX (a u64 seed, say) into strings, which
 * jansson would otherwise refuse whole: the text is kept exact. */
static char *
quote_big_integers(const char *in, size_t len, size_t *out_len)
{
	char *out = malloc(len * 2 + 1);
	size_t o = 0, i = 0;
	bool in_str = false;

	if (out == NULL)
		return NULL;
	while (i < len) {
		char ch = in[i];

		if (in_str) {
			out[o++] = ch;
			if (ch == '\\' && i + 1 < len)
				out[o++] = in[++i];
			else if (ch == '"')
				in_str = false;
			i++;
			continue;
		}
		if (ch == '"') {
			in_str = true;
			out[o++] = in[i++];
			continue;
		}
		/* Only a number standing alone as a value: not the digits
		 * of a fraction or an exponent. */
		if (ch >= '0' && ch <= '9' &&
		    (i == 0 || strchr(":[, \t\r\n", in[i - 1]) != NULL)) {
			size_t j = i;

			while (j < len && in[j] >= '0' && in[j] <= '9')
				j++;
			bool plain = j >= len || (in[j] != '.' &&
						  in[j] != 'e' && in[j] != 'E');
			/* 19 digits may still fit; 20 never do. */
			bool big = j - i > 19 ||
				   (j - i == 19 &&
				    strncmp(in + i, "9223372036854775807", 19) >
					    0);
			if (plain && big)
				out[o++] = '"';
			memcpy(out + o, in + i, j - i);
			o += j - i;
			if (plain && big)
				out[o++] = '"';
			i = j;
			continue;
		}
		out[o++] = in[i++];
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

static json_t *
parse_json(const char *buf, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(buf, len, 0, &jerr);
	size_t qlen;
	char *q;

	if (root != NULL || strstr(jerr.text, "too big integer") == NULL)
		return root;
	q = quote_big_integers(buf, len, &qlen);
	if (q == NULL)
		return NULL;
	root = json_loadb(q, qlen, 0, &jerr);
	free(q);
	return root;
}

/* Sends req and reads its answer. Returns 0, or -errno with the
 * connection closed (-EPROTO: the answer is not what DPDK sends). */
static int
tel_request(struct tel *t, const char *req, struct answer *a)
{
	char cmd[TEL_MAX_CMD + 1];
	size_t cmd_len = strcspn(req, ",");
	ssize_t n;
	int rc;

	memset(a, 0, sizeof(*a));
	if (send(t->fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		rc = -errno;
		goto fail;
	}
	/* MSG_TRUNC: a longer answer than we have room for is reported
	 * rather than parsed half. */
	n = recv(t->fd, t->buf, t->max_len + 1, MSG_TRUNC);
	if (n < 0) {
		rc = -errno;
		goto fail;
	}
	if (n == 0) {
		rc = -ECONNRESET;
		goto fail;
	}
	if ((size_t)n > t->max_len) {
		rc = -EMSGSIZE;
		goto fail;
	}
	t->buf[n] = '\0';
	a->raw = t->buf;
	a->raw_len = (size_t)n;
	a->root = parse_json(t->buf, (size_t)n);
	if (!json_is_object(a->root)) {
		rc = -EPROTO;
		goto fail;
	}
	if (cmd_len > TEL_MAX_CMD)
		cmd_len = TEL_MAX_CMD;
	memcpy(cmd, req, cmd_len);
	cmd[cmd_len] = '\0';
	a->value = json_object_get(a->root, cmd);
	if (a->value == NULL && json_object_size(a->root) == 1) {
		void *it = json_object_iter(a->root);

		a->value = json_object_iter_value(it);
	}
	if (a->value == NULL) {
		rc = -EPROTO;
		goto fail;
	}
	return 0;
fail:
	json_decref(a->root);
	memset(a, 0, sizeof(*a));
	tel_close(t);
	return rc;
}

static void
answer_free(struct answer *a)
{
	json_decref(a->root);
	free(a->owned);
	memset(a, 0, sizeof(*a));
}

/* Whether key is a host core's id: decimal digits only. */
static bool
is_core_key(const char *key)
{
	return key[0] != '\0' && strspn(key, "0123456789") == strlen(key);
}

/* Copies the cores of one page of /turbolb/cores into merged, and its
 * "next" into *next (-1: none). Returns 0, or -1 when value is not a
 * page (null: the daemon refused it; "next" not a host core id). */
static int
merge_core_page(json_t *merged, json_t *value, json_int_t *next)
{
	const char *key;
	json_t *v;

	*next = -1;
	if (!json_is_object(value))
		return -1;
	json_object_foreach(value, key, v)
	{
		if (is_core_key(key)) {
			if (json_object_set(merged, key, v) != 0)
				return -1;
		} else if (strcmp(key, "next") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > UINT32_MAX)
				return -1;
			*next = json_integer_value(v);
		}
	}
	return 0;
}

/* /turbolb/cores answers in pages (docs/architecture.md, "Telemetry"):
 * the bare command gives the first, and while an answer names a "next",
 * /turbolb/cores,NEXT gives the one after. Their cores go into *a, one
 * answer of the bare command's shape: every core under its id, no "next"
 * (integers past INT64_MAX, which parse_json() keeps as strings, stay
 * strings in its text). A single page is kept as the daemon sent it, and
 * so is a null answer; a turbolbd without pages answers once.
 * Returns as tel_request() does, 0 or -errno with the connection closed;
 * -EBADMSG: a later page failed, or its "next" does not move on. */
static int
request_cores(struct tel *t, const char *req, struct answer *a)
{
	char page_req[64];
	struct answer page;
	json_int_t first = 0, next;
	json_t *merged, *root;
	int rc;

	rc = tel_request(t, req, a);
	if (rc != 0 || !json_is_integer(json_object_get(a->value, "next")))
		return rc;
	merged = json_object();
	root = json_object();
	if (merged == NULL || root == NULL ||
	    json_object_set(root, req, merged) != 0) {
		rc = -ENOMEM;
		goto fail;
	}
	if (merge_core_page(merged, a->value, &next) != 0) {
		rc = -EBADMSG;
		goto fail;
	}
	answer_free(a);
	/* Each page starts past the last one: at most 2^32 of them. */
	while (next >= 0) {
		if (next <= first) {
			rc = -EBADMSG;
			goto fail;
		}
		first = next;
		snprintf(page_req, sizeof(page_req), "%s,%" JSON_INTEGER_FORMAT,
			 req, first);
		rc = tel_request(t, page_req, &page);
		if (rc != 0)
			goto fail;
		rc = merge_core_page(merged, page.value, &next) != 0 ? -EBADMSG
								     : 0;
		answer_free(&page);
		if (rc != 0)
			goto fail;
	}
	a->owned = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (a->owned == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	a->root = root;
	a->value = merged;
	a->raw = a->owned;
	a->raw_len = strlen(a->owned);
	json_decref(merged); /* root holds it */
	return 0;
fail:
	answer_free(a);
	json_decref(merged);
	json_decref(root);
	tel_close(t);
	return rc;
}

static void
report_request_error(const struct tel *t, const char *req, int err)
{
	const char *why;

	switch (err) {
	case ECONNRESET:
	case EPIPE:
		why = "turbolbd closed the connection";
		break;
	case EAGAIN:
		why = "no answer in time";
		break;
	case EMSGSIZE:
		why = "the answer is larger than the daemon announced";
		break;
	case EPROTO:
		why = "the answer is not the JSON DPDK telemetry sends";
		break;
	case EBADMSG:
		why = "a page of the answer failed, or its \"next\" does "
		      "not move on";
		break;
	default:
		why = strerror(err);
		break;
	}
	fprintf(stderr, "turbolbctl: %s via %s: %s\n", req, t->path, why);
}

/* Whether the daemon registered cmd: a null answer means either an
 * unknown command or a callback that failed, and only "/" tells which. */
static int
has_command(struct tel *t, const char *cmd)
{
	struct answer a;
	size_t i;
	json_t *v;
	int found = 0;

	if (tel_request(t, "/", &a) != 0)
		return -1;
	json_array_foreach(a.value, i, v) if (json_is_string(v) &&
					      strcmp(json_string_value(v),
						     cmd) == 0) found = 1;
	answer_free(&a);
	return found;
}

/* ---- formatting ------------------------------------------------------ */

static void
fmt_value(const json_t *v, char *buf, size_t len)
{
	char *s;

	switch (json_typeof(v)) {
	case JSON_INTEGER:
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		snprintf(buf, len, "%g", json_real_value(v));
		break;
	case JSON_STRING:
		snprintf(buf, len, "%s", json_string_value(v));
		break;
	case JSON_TRUE:
		snprintf(buf, len, "true");
		break;
	case JSON_FALSE:
		snprintf(buf, len, "false");
		break;
	case JSON_NULL:
		snprintf(buf, len, "-");
		break;
	default:
		s = json_dumps(v, JSON_COMPACT);
		snprintf(buf, len, "%s", s != NULL ? s : "?");
		free(s);
		break;
	}
}

/* Nanoseconds of outstanding work, short enough for a table column. */
static void
fmt_ns(long long ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lldns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
}

static long long
int_of(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? json_integer_value(v) : 0;
}

/* ---- stats ----------------------------------------------------------- */

enum stats_group { GROUP_TRAFFIC, GROUP_DROPS, GROUP_STATE };

static enum stats_group
stats_group_of(const char *key, const json_t *v)
{
	if (strncmp(key, "drop_", 5) == 0)
		return GROUP_DROPS;
	/* fifo_depth is a level and loops a heartbeat, not traffic. */
	if (strcmp(key, "fifo_depth") == 0 || strcmp(key, "loops") == 0 ||
	    !json_is_integer(v))
		return GROUP_STATE;
	return GROUP_TRAFFIC;
}

/* One row; with a previous sample (--watch) a counter also gets its rate,
 * but a level (fifo_depth) has none. */
static void
stats_line(const char *label, const char *key, const json_t *v,
	   const json_t *prev, double dt)
{
	const json_t *p = prev != NULL ? json_object_get(prev, key) : NULL;
	char val[64];

	fmt_value(v, val, sizeof(val));
	if (dt > 0 && strcmp(key, "fifo_depth") != 0 && json_is_integer(v) &&
	    json_is_integer(p) &&
	    json_integer_value(v) >= json_integer_value(p))
		printf("  %-28s %16s %12.0f/s\n", label, val,
		       (double)(json_integer_value(v) - json_integer_value(p)) /
			       dt);
	else
		printf("  %-28s %16s\n", label, val);
}

static int
show_stats(const json_t *v, const json_t *prev, double dt, const struct opts *o)
{
	unsigned int zero = 0, listed = 0;
	const char *key;
	json_t *val;

	if (!json_is_object(v)) {
		fprintf(stderr, "turbolbctl: /turbolb/stats: not an object\n");
		return EXIT_UNSUPPORTED;
	}
	printf("traffic\n");
	json_object_foreach((json_t *)v, key,
			    val) if (strcmp(key, "drops") != 0 &&
				     stats_group_of(key, val) == GROUP_TRAFFIC)
		stats_line(key, key, val, prev, dt);

	printf("drops\n");
	val = json_object_get(v, "drops");
	if (val != NULL)
		stats_line("total", "drops", val, prev, dt);
	json_object_foreach((json_t *)v, key, val)
	{
		if (stats_group_of(key, val) != GROUP_DROPS)
			continue;
		if (!o->all && json_is_integer(val) &&
		    json_integer_value(val) == 0) {
			zero++;
			continue;
		}
		stats_line(key, key, val, prev, dt);
		listed++;
	}
	if (zero > 0)
		printf("  (%u %sreason%s at 0%s)\n", zero,
		       listed > 0 ? "other " : "", zero == 1 ? "" : "s",
		       o->watch ? "" : "; -a lists them");

	printf("dispatcher\n");
	json_object_foreach((json_t *)v, key,
			    val) if (strcmp(key, "drops") != 0 &&
				     stats_group_of(key, val) == GROUP_STATE)
		stats_line(key, key, val, prev, dt);
	return EXIT_OK;
}

/* ---- cores ----------------------------------------------------------- */

struct core_row {
	unsigned long id;
	const char *key;
	const json_t *v;
};

static int
core_row_cmp(const void *a, const void *b)
{
	const struct core_row *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int
show_cores(const json_t *v)
{
	size_t n = 0, i = 0;
	long long out = 0, work = 0, sent = 0, done = 0;
	struct core_row *rows;
	char wbuf[32];
	const char *key;
	json_t *c;

	if (!json_is_object(v)) {
		fprintf(stderr, "turbolbctl: /turbolb/cores: not an object\n");
		return EXIT_UNSUPPORTED;
	}
	json_object_foreach((json_t *)v, key, c) n += is_core_key(key);
	if (n == 0) {
		printf("no host cores (no dispatcher running yet)\n");
		return EXIT_OK;
	}
	rows = calloc(n, sizeof(*rows));
	if (rows == NULL) {
		fprintf(stderr, "turbolbctl: out of memory\n");
		return EXIT_UNREACHABLE;
	}
	/* Keys are core ids as text: sort them as numbers, 10 after 9. */
	json_object_foreach((json_t *)v, key, c)
	{
		if (!is_core_key(key))
			continue;
		rows[i].id = strtoul(key, NULL, 10);
		rows[i].key = key;
		rows[i].v = c;
		i++;
	}
	qsort(rows, n, sizeof(*rows), core_row_cmp);

	printf("%-5s %-8s %11s %10s %14s %14s\n", "core", "state",
	       "outstanding", "work", "sent", "completed");
	for (i = 0; i < n; i++) {
		const json_t *s = json_object_get(rows[i].v, "state");
		long long o_i = int_of(rows[i].v, "outstanding");
		long long w_i = int_of(rows[i].v, "outstanding_work_ns");
		long long s_i = int_of(rows[i].v, "sent");
		long long d_i = int_of(rows[i].v, "completed");

		fmt_ns(w_i, wbuf, sizeof(wbuf));
		printf("%-5s %-8s %11lld %10s %14lld %14lld\n", rows[i].key,
		       json_is_string(s) ? json_string_value(s) : "?", o_i,
		       wbuf, s_i, d_i);
		out += o_i;
		work += w_i;
		sent += s_i;
		done += d_i;
	}
	fmt_ns(work, wbuf, sizeof(wbuf));
	printf("%-5s %-8s %11lld %10s %14lld %14lld\n", "all", "", out, wbuf,
	       sent, done);
	free(rows);
	return EXIT_OK;
}

/* ---- config and policy ----------------------------------------------- */

static int
show_config(const json_t *v)
{
	char val[512];
	const char *key;
	json_t *x;

	if (!json_is_object(v)) {
		fprintf(stderr, "turbolbctl: /turbolb/config: not an "
				"object\n");
		return EXIT_UNSUPPORTED;
	}
	if (json_object_size(v) == 0) {
		printf("no dispatcher running yet\n");
		return EXIT_OK;
	}
	json_object_foreach((json_t *)v, key, x)
	{
		fmt_value(x, val, sizeof(val));
		printf("%-20s %s\n", key, val);
	}
	return EXIT_OK;
}

/* The policy and only the parameters it reads: those the daemon names in
 * "policy_params", from the policy's own table. */
static int
show_policy(const json_t *cfg)
{
	const json_t *name = json_object_get(cfg, "policy");
	const json_t *reads = json_object_get(cfg, "policy_params");
	const char *list =
		json_is_string(reads) ? json_string_value(reads) : "";
	const char *sep = " (";
	char val[64], param[64];

	if (!json_is_string(name)) {
		fprintf(stderr, "turbolbctl: turbolbd reports no policy (no "
				"dispatcher running yet?)\n");
		return EXIT_UNSUPPORTED;
	}
	printf("%s", json_string_value(name));
	for (size_t len; *list != '\0'; list += len + (list[len] == ' ')) {
		const json_t *p;

		len = strcspn(list, " ");
		snprintf(param, sizeof(param), "%.*s", (int)len, list);
		p = json_object_get(cfg, param);
		if (p == NULL)
			continue;
		fmt_value(p, val, sizeof(val));
		printf("%s%s=%s", sep, param, val);
		sep = ", ";
	}
	printf("%s\n", sep[0] == ',' ? ")" : "");
	return EXIT_OK;
}

/* "NAME[:PARAM]": letters, digits and a few separators, no ',' (the
 * telemetry parameter separator) and nothing a shell would mangle. */
static bool
valid_policy_arg(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");

	if (n == 0 || n > 32)
		return false;
	if (s[n] == '\0')
		return true;
	if (s[n] != ':' || s[n + 1] == '\0')
		return false;
	s += n + 1;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.=+-") ==
		       strlen(s) &&
	       strlen(s) <= 64;
}

static void
print_answer_value(const json_t *v)
{
	char val[512];
	const char *key;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, x)
		{
			fmt_value(x, val, sizeof(val));
			printf("%-20s %s\n", key, val);
		}
	} else {
		fmt_value(v, val, sizeof(val));
		printf("%s\n", val);
	}
}

/* A command the daemon will have later (policy switching, reload): say
 * plainly when this turbolbd has not got it. */
static int
run_action(struct tel *t, const char *cmd, const char *req, const char *what,
	   const struct opts *o)
{
	struct answer a;
	int rc;

	rc = tel_request(t, req, &a);
	if (rc != 0) {
		report_request_error(t, req, -rc);
		return EXIT_UNREACHABLE;
	}
	if (!json_is_null(a.value)) {
		const json_t *ok = json_object_get(a.value, "ok");
		const json_t *msg = json_object_get(a.value, "message");
		bool refused =
			json_is_false(ok) ||
			(json_is_integer(ok) && json_integer_value(ok) == 0);

		if (o->json)
			printf("%.*s\n", (int)a.raw_len, a.raw);
		else if (refused)
			fprintf(stderr, "turbolbctl: turbolbd refused %s: %s\n",
				what,
				json_is_string(msg) ? json_string_value(msg)
						    : "no reason given");
		else if (json_is_string(msg))
			printf("%s\n", json_string_value(msg));
		else
			print_answer_value(a.value);
		answer_free(&a);
		return refused ? EXIT_UNSUPPORTED : EXIT_OK;
	}
	answer_free(&a);
	rc = has_command(t, cmd);
	if (rc == 0)
		fprintf(stderr,
			"turbolbctl: this turbolbd (pid %lld, %s) "
			"does not support %s yet: it has no %s "
			"command\n",
			t->pid, t->version, what, cmd);
	else
		fprintf(stderr,
			"turbolbctl: turbolbd refused %s (%s); see "
			"its log\n",
			what, req);
	return EXIT_UNSUPPORTED;
}

/* ---- metrics --------------------------------------------------------- */

/* A counter of the JSON: an integer, or the text of one past INT64_MAX
 * (quote_big_integers()). false for anything else. */
static bool
u64_of(const json_t *v, uint64_t *out)
{
	const char *s;
	char *end;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (uint64_t)json_integer_value(v);
		return true;
	}
	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	if (s[0] < '0' || s[0] > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* The answers of /turbolb/stats and /turbolb/cores (every page) as the
 * daemon's endpoint writes them: the same formatter
 * (include/turbolb/metrics.h). */
/* The answer of /turbolb/residence into h; false when it has none (an
 * older turbolbd). */
static bool
residence_of(const json_t *v, struct tlb_metric_hist *h)
{
	char key[32];
	bool ok;

	if (!json_is_object(v))
		return false;
	ok = u64_of(json_object_get(v, "sum_ns"), &h->sum_ns);
	for (unsigned int b = 0; b < TLB_RESIDENCE_BUCKETS; b++) {
		if (b < TLB_RESIDENCE_BUCKETS - 1)
			snprintf(key, sizeof(key), "bucket_le_%" PRIu64,
				 tlb_residence_le_ns[b]);
		else
			snprintf(key, sizeof(key), "bucket_inf");
		ok = ok && u64_of(json_object_get(v, key), &h->count[b]);
	}
	return ok;
}

static int
print_metrics(const json_t *stats, const json_t *cores, const json_t *residence)
{
	struct tlb_metric_hist hist;
	bool has_hist = residence_of(residence, &hist);
	struct tlb_metric_sample *s;
	struct tlb_metric_core *c;
	size_t ns = 0, nc = 0;
	unsigned int unknown;
	const char *key;
	json_t *v;
	int rc = EXIT_OK;

	if (!json_is_object(stats) || !json_is_object(cores)) {
		fprintf(stderr, "turbolbctl: this turbolbd does not answer "
				"/turbolb/stats and /turbolb/cores\n");
		return EXIT_UNSUPPORTED;
	}
	s = calloc(json_object_size(stats) + 1, sizeof(*s));
	c = calloc(json_object_size(cores) + 1, sizeof(*c));
	if (s == NULL || c == NULL) {
		free(s);
		free(c);
		fprintf(stderr, "turbolbctl: out of memory\n");
		return EXIT_UNREACHABLE;
	}
	json_object_foreach((json_t *)stats, key, v)
	{
		if (!u64_of(v, &s[ns].value) ||
		    strlen(key) >= sizeof(s[ns].key))
			continue;
		memcpy(s[ns].key, key, strlen(key) + 1);
		ns++;
	}
	json_object_foreach((json_t *)cores, key, v)
	{
		const json_t *st = json_object_get(v, "state");
		uint64_t disp = 0;

		if (!is_core_key(key) || !json_is_object(v))
			continue;
		c[nc].id = (uint32_t)strtoul(key, NULL, 10);
		u64_of(json_object_get(v, "dispatcher"), &disp);
		c[nc].dispatcher = (uint32_t)disp;
		u64_of(json_object_get(v, "sent"), &c[nc].sent);
		u64_of(json_object_get(v, "completed"), &c[nc].completed);
		u64_of(json_object_get(v, "outstanding"), &c[nc].outstanding);
		u64_of(json_object_get(v, "outstanding_work_ns"),
		       &c[nc].outstanding_work_ns);
		u64_of(json_object_get(v, "stale_events"), &c[nc].stale_events);
		u64_of(json_object_get(v, "written_off"), &c[nc].written_off);
		snprintf(c[nc].state, sizeof(c[nc].state), "%s",
			 json_is_string(st) ? json_string_value(st) : "?");
		nc++;
	}
	unknown = tlb_metrics_write(stdout, s, ns, c, nc,
				    has_hist ? &hist : NULL);
	if (unknown > 0)
		fprintf(stderr,
			"turbolbctl: %u key%s of /turbolb/stats left "
			"out: this turbolbctl has no description of "
			"them (a newer turbolbd?)\n",
			unknown, unknown == 1 ? "" : "s");
	if (fflush(stdout) != 0)
		rc = EXIT_UNREACHABLE;
	free(s);
	free(c);
	return rc;
}

static int
run_metrics(const struct opts *o)
{
	struct answer st, co, re;
	struct tel t;
	int rc;

	if (tel_open(&t, o, false) != 0)
		return EXIT_UNREACHABLE;
	rc = tel_request(&t, "/turbolb/stats", &st);
	if (rc != 0) {
		report_request_error(&t, "/turbolb/stats", -rc);
		return EXIT_UNREACHABLE;
	}
	rc = request_cores(&t, "/turbolb/cores", &co);
	if (rc != 0) {
		report_request_error(&t, "/turbolb/cores", -rc);
		answer_free(&st);
		return EXIT_UNREACHABLE;
	}
	/* An older turbolbd has no histogram: the rest is still printed. */
	if (tel_request(&t, "/turbolb/residence", &re) != 0)
		re.value = NULL;
	rc = print_metrics(st.value, co.value, re.value);
	answer_free(&re);
	answer_free(&st);
	answer_free(&co);
	tel_close(&t);
	return rc;
}

/* ---- commands -------------------------------------------------------- */

enum cmd_kind { CMD_STATS, CMD_CORES, CMD_CONFIG, CMD_POLICY, CMD_RAW };

struct view {
	enum cmd_kind kind;
	const char *req;
	json_t *prev; /* stats: the previous sample, for rates */
	struct timespec prev_ts;
};

static double
seconds_since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Prints one answer of a view; returns the exit status it deserves. */
static int
show(struct view *w, const struct answer *a, const struct opts *o)
{
	struct timespec now;
	char *s;
	int rc = EXIT_OK;

	if (o->json) {
		printf("%.*s\n", (int)a->raw_len, a->raw);
		return json_is_null(a->value) ? EXIT_UNSUPPORTED : EXIT_OK;
	}
	if (json_is_null(a->value) && w->kind != CMD_RAW) {
		fprintf(stderr,
			"turbolbctl: this turbolbd does not answer "
			"%s\n",
			w->req);
		return EXIT_UNSUPPORTED;
	}
	switch (w->kind) {
	case CMD_STATS:
		clock_gettime(CLOCK_MONOTONIC, &now);
		rc = show_stats(
			a->value, w->prev,
			w->prev != NULL ? seconds_since(&w->prev_ts, &now) : 0,
			o);
		if (o->watch) {
			json_decref(w->prev);
			w->prev = json_deep_copy(a->value);
			w->prev_ts = now;
		}
		break;
	case CMD_CORES:
		rc = show_cores(a->value);
		break;
	case CMD_CONFIG:
		rc = show_config(a->value);
		break;
	case CMD_POLICY:
		rc = show_policy(a->value);
		break;
	case CMD_RAW:
		s = json_dumps(a->root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", s != NULL ? s : "?");
		free(s);
		if (json_is_null(a->value)) {
			fprintf(stderr, "turbolbctl: null answer: unknown "
					"command, or it failed\n");
			rc = EXIT_UNSUPPORTED;
		}
		break;
	}
	return rc;
}

/* Asks for w's answer: every page of it, for cores. */
static int
view_request(struct tel *t, const struct view *w, struct answer *a)
{
	if (w->kind == CMD_CORES)
		return request_cores(t, w->req, a);
	return tel_request(t, w->req, a);
}

static int
run_once(struct view *w, const struct opts *o)
{
	struct answer a;
	struct tel t;
	int rc;

	if (tel_open(&t, o, false) != 0)
		return EXIT_UNREACHABLE;
	rc = view_request(&t, w, &a);
	if (rc != 0) {
		report_request_error(&t, w->req, -rc);
		return EXIT_UNREACHABLE;
	}
	rc = show(w, &a, o);
	answer_free(&a);
	tel_close(&t);
	return rc;
}

static void
sleep_interval(double secs)
{
	struct timespec ts = {
		.tv_sec = (time_t)secs,
		.tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9),
	};

	/* A signal ends the wait early: nanosleep is never restarted. */
	nanosleep(&ts, NULL);
}

/* Keeps one connection across refreshes (the server takes only ten
 * clients) and reconnects when the daemon restarts. */
static int
run_watch(struct view *w, const struct opts *o)
{
	bool tty = isatty(STDOUT_FILENO) && !o->json;
	bool connected = false, lost = false;
	struct answer a;
	struct tel t = {.fd = -1};
	char stamp[32];
	time_t now;
	int rc;

	while (!quit) {
		if (!connected)
			connected = tel_open(&t, o, true) == 0;
		if (connected) {
			rc = view_request(&t, w, &a);
			connected = rc == 0;
		}
		now = time(NULL);
		strftime(stamp, sizeof(stamp), "%H:%M:%S", localtime(&now));
		if (o->json) {
			/* JSON lines for a log: the state changes go to
			 * stderr, once each. */
			if (connected) {
				printf("%.*s\n", (int)a.raw_len, a.raw);
				answer_free(&a);
			} else if (!lost) {
				fprintf(stderr,
					"turbolbctl: %s turbolbd not "
					"reachable; retrying\n",
					stamp);
			}
			lost = !connected;
			fflush(stdout);
			sleep_interval(o->interval);
			continue;
		}
		if (tty)
			printf("\033[H\033[2J");
		else
			printf("\n");
		if (connected) {
			printf("turbolbctl %s  %s  pid %lld  %s  every %gs\n\n",
			       w->req, stamp, t.pid, t.path, o->interval);
			show(w, &a, o);
			answer_free(&a);
		} else {
			printf("turbolbctl %s  %s  turbolbd not reachable "
			       "(prefix \"%s\"); retrying\n",
			       w->req, stamp,
			       o->socket != NULL ? o->socket : o->prefix);
			json_decref(w->prev);
			w->prev = NULL;
		}
		fflush(stdout);
		sleep_interval(o->interval);
	}
	tel_close(&t);
	json_decref(w->prev);
	return EXIT_OK;
}

static int
run_view(struct view *w, const struct opts *o)
{
	struct sigaction sa = {.sa_handler = on_signal};

	if (!o->watch)
		return run_once(w, o);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run_watch(w, o);
}

static int
run_simple_action(const struct opts *o, const char *cmd, const char *req,
		  const char *what)
{
	struct tel t;
	int rc;

	if (tel_open(&t, o, false) != 0)
		return EXIT_UNREACHABLE;
	rc = run_action(&t, cmd, req, what, o);
	tel_close(&t);
	return rc;
}

static const struct cli_spec spec;

/* A usage error found by a command: reported, then exit status 2. */
#define USAGE_ERROR(...) (cli_usage_error(&spec, __VA_ARGS__), EXIT_USAGE)

/* A view: data is its struct view template. */
static int
cmd_view(const struct cli_cmd *cmd, const char *arg, void *ctx)
{
	struct view w = *(const struct view *)cmd->data;

	(void)arg;
	return run_view(&w, ctx);
}

static int
cmd_policy(const struct cli_cmd *cmd, const char *arg, void *ctx)
{
	const struct opts *o = ctx;
	char req[TEL_MAX_REQUEST + 2];

	if (arg == NULL)
		return cmd_view(cmd, arg, ctx);
	if (o->watch)
		return USAGE_ERROR("%s", "--watch only shows; it "
					 "cannot switch a policy");
	if (!valid_policy_arg(arg))
		return USAGE_ERROR("bad policy '%s': want NAME or "
				   "NAME:PARAM, e.g. jbsq:4",
				   arg);
	snprintf(req, sizeof(req), "/turbolb/policy,%s", arg);
	return run_simple_action(o, "/turbolb/policy", req,
				 "switching the policy");
}

static int
cmd_reload(const struct cli_cmd *cmd, const char *arg, void *ctx)
{
	const struct opts *o = ctx;

	(void)cmd;
	(void)arg;
	if (o->watch)
		return USAGE_ERROR("%s", "reload takes no argument "
					 "and no --watch");
	return run_simple_action(o, "/turbolb/reload", "/turbolb/reload",
				 "reloading its configuration");
}

static int
cmd_raw(const struct cli_cmd *cmd, const char *arg, void *ctx)
{
	struct view w = {.kind = CMD_RAW, .req = arg};

	(void)cmd;
	if (arg[0] != '/' || strcspn(arg, ",") > TEL_MAX_CMD ||
	    strlen(arg) > TEL_MAX_REQUEST)
		return USAGE_ERROR("bad telemetry command '%s': "
				   "/NAME[,PARAMS], name under 56 "
				   "bytes, all under 1024",
				   arg);
	return run_view(&w, ctx);
}

static int
cmd_metrics(const struct cli_cmd *cmd, const char *arg, void *ctx)
{
	const struct opts *o = ctx;

	(void)cmd;
	(void)arg;
	if (o->watch || o->json)
		return USAGE_ERROR("%s", "metrics prints "
					 "Prometheus text once: no --watch, "
					 "no --json");
	return run_metrics(o);
}

static const struct view v_stats = {.kind = CMD_STATS, .req = "/turbolb/stats"};
static const struct view v_cores = {.kind = CMD_CORES, .req = "/turbolb/cores"};
static const struct view v_config = {.kind = CMD_CONFIG,
				     .req = "/turbolb/config"};
static const struct view v_policy = {.kind = CMD_POLICY,
				     .req = "/turbolb/config"};

static const struct cli_cmd cmds[] = {
	{.name = "stats",
	 .run = cmd_view,
	 .data = &v_stats,
	 .help = "counters, drops grouped by reason"},
	{.name = "cores",
	 .run = cmd_view,
	 .data = &v_cores,
	 .help = "per host core: state, outstanding, sent, completed\n"
		 "(every core: all the daemon's pages)"},
	{.name = "config",
	 .run = cmd_view,
	 .data = &v_config,
	 .help = "the active policy and parameters"},
	{.name = "policy",
	 .takes = CLI_CMD_OPT_ARG,
	 .arg = "NAME[:PARAM]",
	 .run = cmd_policy,
	 .data = &v_policy,
	 .help = "the active policy",
	 .arg_help = "switch to policy NAME (e.g. jbsq:4)"},
	{.name = "reload",
	 .run = cmd_reload,
	 .help = "reload the configuration file"},
	{.name = "raw",
	 .takes = CLI_CMD_ARG,
	 .arg = "CMD[,PARAMS]",
	 .run = cmd_raw,
	 .help = "send any telemetry command, e.g. /ethdev/list"},
	{.name = "metrics",
	 .run = cmd_metrics,
	 .help = "stats and cores as Prometheus text (the daemon's\n"
		 "metrics endpoint's), e.g. for node_exporter's\n"
		 "textfile collector"},
	{.name = NULL},
};

static struct opts O = {.prefix = DEFAULT_PREFIX};

static int
prefix_fn(const struct cli_opt *opt, const char *arg, char *err, size_t errlen)
{
	(void)opt;
	if (arg[0] == '\0' || strchr(arg, '/') != NULL) {
		snprintf(err, errlen, "want a file prefix, no '/'");
		return -1;
	}
	O.prefix = arg;
	return 0;
}

static const struct cli_opt opts[] = {
	{.name = "file-prefix",
	 .letter = 'f',
	 .kind = CLI_FN,
	 .fn = prefix_fn,
	 .arg = "P",
	 .help = "EAL file prefix of the daemon (default " DEFAULT_PREFIX ")"},
	{.name = "instance",
	 .letter = 'i',
	 .kind = CLI_UINT,
	 CLI_DEST(O.instance),
	 .hi = 32767,
	 .arg = "N",
	 .help = "telemetry socket instance N (dpdk_telemetry.v2:N)"},
	{.name = "socket",
	 .letter = 's',
	 .kind = CLI_STRING,
	 CLI_DEST(O.socket),
	 .arg = "PATH",
	 .help = "telemetry socket to use, instead of looking for it"},
	{.name = "json",
	 .letter = 'j',
	 .kind = CLI_FLAG,
	 CLI_DEST(O.json),
	 .help = "print the daemon's JSON answer"},
	{.name = "watch",
	 .letter = 'w',
	 .kind = CLI_FLAG,
	 CLI_DEST(O.watch),
	 .help = "refresh every second until Ctrl-C"},
	{.name = "interval",
	 .letter = 'n',
	 .kind = CLI_DURATION,
	 CLI_DEST(O.interval),
	 .unit_ns = 1e9,
	 .dlo = 0.1,
	 .dhi = 3600,
	 .def = "1",
	 .arg = "SECS",
	 .help = "refresh period of --watch: 0.1 to 3600 seconds,\n"
		 "or with a unit (250ms)"},
	{.name = "all",
	 .letter = 'a',
	 .kind = CLI_FLAG,
	 CLI_DEST(O.all),
	 .help = "stats: list drop reasons that are 0 too"},
	CLI_OPT_HELP('h'),
	CLI_OPT_VERSION('V'),
	{.kind = CLI_END},
};

static const struct cli_spec spec = {
	.prog = "turbolbctl",
	.usage = "[OPTIONS] COMMAND [ARG]",
	.about = "Shows and steers a running turbolbd through DPDK telemetry.",
	.cmds = cmds,
	.opts = opts,
	.epilog = "The socket is <runtime dir>/dpdk/<prefix>/" TEL_SOCKET_NAME
		  ", tried in\n"
		  "$RUNTIME_DIRECTORY, then DPDK's default (/var/run as root, "
		  "else\n"
		  "$XDG_RUNTIME_DIR or /tmp), then " SERVICE_RUNTIME_DIR
		  " (the systemd unit).\n"
		  "\n"
		  "Exit status: 0 ok, 1 turbolbd not reachable, 2 usage, "
		  "3 command not\n"
		  "supported or refused by turbolbd.",
	.version = TLB_VERSION,
};

int
main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	int first;

	switch (cli_parse(&spec, argc, argv, &first)) {
	case CLI_DONE:
		return EXIT_OK;
	case CLI_ERROR:
		return EXIT_USAGE;
	default:
		break;
	}
	cmd = cli_cmd_pick(&spec, argc - first, argv + first);
	if (cmd == NULL)
		return EXIT_USAGE;
	return cmd->run(cmd, first + 1 < argc ? argv[first + 1] : NULL, &O);
}
