/* SPDX-License-Identifier: BSD-3-Clause
 * The Prometheus endpoint (metrics.h). The socket, the event base and the
 * HTTP server are made on the main thread, so that a bad address fails
 * the start-up with its reason; from then on only the metrics thread
 * touches them (libevent without its locking) until tlb_metrics_stop()
 * has joined it. A request reads the counters the way the telemetry
 * callbacks do (relaxed loads, telemetry.h): the datapath never waits for
 * it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include <rte_lcore.h>

#include "turbolb/metrics.h"
#include "turbolb/telemetry_cores.h"
#include "dp.h"
#include "log.h"
#include "metrics.h"
#include "telemetry.h"

RTE_LOG_REGISTER(tlb_logtype_metrics, turbolb.metrics, INFO);

/* Keys of /turbolb/stats: the counters, the parse errors and a few
 * more; tlb_telemetry_stats() handing more is a bug the endpoint
 * reports as a 500, not a truncated answer. */
#define MAX_SAMPLES 128
/* How often the thread looks whether it is asked to stop. */
#define STOP_POLL_MS 100

static struct {
	bool started;
	pthread_t thread;
	struct event_base *base;
	struct evhttp *http;
	struct event *stop_timer;
	bool stop; /* main: wo, metrics thread: ro (atomic) */
	char unix_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} m;

struct collect {
	struct tlb_metric_sample s[MAX_SAMPLES];
	size_t n;
	bool overflow;
};

static void
collect_u64(void *arg, const char *name, uint64_t v)
{
	struct collect *c = arg;

	if (c->n == MAX_SAMPLES) {
		c->overflow = true;
		return;
	}
	snprintf(c->s[c->n].key, sizeof(c->s[c->n].key), "%s", name);
	c->s[c->n].value = v;
	c->n++;
}

static void
collect_str(void *arg, const char *name, const char *v)
{
	(void)arg;
	(void)name;
	(void)v;
}

/* The text of every counter now, in a malloc'ed buffer; NULL on failure
 * (out of memory, or more keys than MAX_SAMPLES). */
static char *
render(size_t *len)
{
	struct tlb_tel_sink sink = {.u64 = collect_u64, .str = collect_str};
	struct tlb_metric_core *cores = NULL;
	struct tlb_metric_hist residence;
	struct tlb_tel_core row;
	struct collect *c;
	size_t n_cores = 0, k = 0;
	char *text = NULL;
	FILE *f;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	sink.arg = c;
	tlb_telemetry_stats(&sink);
	for (unsigned int d = 0; d < tlb_n_dps; d++)
		n_cores += tlb_dps[d]->n_cores;
	cores = calloc(n_cores + 1, sizeof(*cores));
	if (c->overflow || cores == NULL)
		goto out;
	for (unsigned int d = 0; d < tlb_n_dps; d++)
		for (uint32_t i = 0; i < tlb_dps[d]->n_cores; i++, k++) {
			tlb_telemetry_read_core(d, i, &row);
			cores[k].id = row.id;
			cores[k].dispatcher = row.dispatcher;
			cores[k].sent = row.sent;
			cores[k].completed = row.completed;
			cores[k].outstanding = row.outstanding;
			cores[k].outstanding_work_ns = row.outstanding_work_ns;
			cores[k].stale_events = row.stale_events;
			cores[k].written_off = row.written_off;
			snprintf(cores[k].state, sizeof(cores[k].state), "%s",
				 row.state);
		}
	f = open_memstream(&text, len);
	if (f == NULL)
		goto out;
	tlb_telemetry_residence(&residence);
	tlb_metrics_write(f, c->s, c->n, cores, n_cores, &residence);
	if (fclose(f) != 0) {
		free(text);
		text = NULL;
	}
out:
	free(cores);
	free(c);
	return text;
}

static void
on_request(struct evhttp_request *req, void *arg)
{
	const char *path =
		evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	size_t len = 0;
	char *text;

	(void)arg;
	if (path == NULL || strcmp(path, "/metrics") != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND,
				  "Not Found: the metrics are at /metrics");
		return;
	}
	text = render(&len);
	if (text == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	evbuffer_add(out, text, len);
	free(text);
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", TLB_METRICS_CONTENT_TYPE);
	evhttp_send_reply(req, HTTP_OK, "OK", out);
}

static void
on_stop_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	if (__atomic_load_n(&m.stop, __ATOMIC_ACQUIRE))
		event_base_loopbreak(m.base);
}

static void *
metrics_thread(void *arg)
{
	(void)arg;
	event_base_dispatch(m.base);
	return NULL;
}

/* A listening unix socket at path, non-blocking. A socket file left at
 * path (a daemon that was killed) is replaced; any other file is not. */
static int
listen_unix(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			TLB_LOG(ERR, metrics,
				"metrics.listen: %s exists and "
				"is not a socket",
				path);
			return -1;
		}
		unlink(path);
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 ||
	    listen(fd, 16) != 0) {
		TLB_LOG(ERR, metrics, "metrics.listen: unix:%s: %s", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int
tlb_metrics_start(const struct tlb_config *cfg)
{
	struct tlb_listen_addr a;
	struct timeval tv = {.tv_usec = STOP_POLL_MS * 1000};
	char err[160];
	int fd;

	if (cfg->metrics.listen[0] == '\0')
		return 0;
	/* --check-config and the loader have checked it already. */
	if (tlb_listen_addr_parse(cfg->metrics.listen, &a, err, sizeof(err)) !=
	    0) {
		TLB_LOG(ERR, metrics, "metrics.listen: %s", err);
		return -1;
	}
	m.base = event_base_new();
	m.http = m.base != NULL ? evhttp_new(m.base) : NULL;
	m.stop_timer = m.base != NULL ? event_new(m.base, -1, EV_PERSIST,
						  on_stop_timer, NULL)
				      : NULL;
	if (m.http == NULL || m.stop_timer == NULL) {
		TLB_LOG(ERR, metrics, "cannot set up libevent");
		goto fail;
	}
	evhttp_set_allowed_methods(m.http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_gencb(m.http, on_request, NULL);
	if (a.is_unix) {
		fd = listen_unix(a.path);
		if (fd < 0)
			goto fail;
		if (evhttp_accept_socket_with_handle(m.http, fd) == NULL) {
			close(fd);
			TLB_LOG(ERR, metrics,
				"metrics.listen: unix:%s: "
				"libevent refused the socket",
				a.path);
			goto fail;
		}
		snprintf(m.unix_path, sizeof(m.unix_path), "%s", a.path);
	} else if (evhttp_bind_socket_with_handle(m.http, a.host, a.port) ==
		   NULL) {
		TLB_LOG(ERR, metrics, "metrics.listen: cannot listen on %s: %s",
			cfg->metrics.listen, strerror(errno));
		goto fail;
	}
	event_add(m.stop_timer, &tv);
	m.stop = false;
	if (rte_ctrl_thread_create(&m.thread, "tlb-metrics", NULL,
				   metrics_thread, NULL) != 0) {
		TLB_LOG(ERR, metrics, "cannot start the metrics thread");
		goto fail;
	}
	m.started = true;
	TLB_LOG(INFO, metrics, "metrics: http://%s/metrics",
		cfg->metrics.listen);
	return 0;
fail:
	if (m.unix_path[0] != '\0')
		unlink(m.unix_path);
	m.unix_path[0] = '\0';
	if (m.stop_timer != NULL)
		event_free(m.stop_timer);
	if (m.http != NULL)
		evhttp_free(m.http);
	if (m.base != NULL)
		event_base_free(m.base);
	m.stop_timer = NULL;
	m.http = NULL;
	m.base = NULL;
	return -1;
}

void
tlb_metrics_stop(void)
{
	if (!m.started)
		return;
	__atomic_store_n(&m.stop, true, __ATOMIC_RELEASE);
	pthread_join(m.thread, NULL);
	m.started = false;
	event_free(m.stop_timer);
	evhttp_free(m.http);
	event_base_free(m.base);
	m.stop_timer = NULL;
	m.http = NULL;
	m.base = NULL;
	if (m.unix_path[0] != '\0')
		unlink(m.unix_path);
	m.unix_path[0] = '\0';
}
