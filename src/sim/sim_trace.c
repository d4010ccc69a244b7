/* SPDX-License-Identifier: BSD-3-Clause
 * Arrival traces: one request per line, "ARRIVAL SERVICE" (times in ns, or
 * with a unit as the distribution specs take them). Blank lines and lines
 * starting with '#' are skipped.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_trace.h"

#define SEPARATORS " \t\r\n,"

/* Cuts the next field out of *cursor (in place) and parses it. */
static int
parse_field(char **cursor, double *ns)
{
	char *tok = *cursor + strspn(*cursor, SEPARATORS);
	char *end = tok + strcspn(tok, SEPARATORS);

	if (end == tok)
		return -1;
	*cursor = *end != '\0' ? end + 1 : end;
	*end = '\0';
	return tlb_parse_time_ns(tok, ns);
}

int
tlb_sim_trace_load(const char *path, struct tlb_sim_trace_buf *t, char *err,
		   size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0, alloc = 0;
	unsigned long lineno = 0;
	uint64_t *arr = NULL;
	uint32_t *svc = NULL;
	int rc = -1;

	memset(t, 0, sizeof(*t));
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (getline(&line, &cap, f) >= 0) {
		char *cursor, *first;
		double a, s;

		lineno++;
		first = line + strspn(line, " \t\r\n");
		if (*first == '\0' || *first == '#')
			continue;
		cursor = first;
		if (parse_field(&cursor, &a) != 0 ||
		    parse_field(&cursor, &s) != 0 ||
		    cursor[strspn(cursor, SEPARATORS)] != '\0') {
			snprintf(err, errlen,
				 "%s:%lu: want 'ARRIVAL_NS SERVICE_NS'", path,
				 lineno);
			goto out;
		}
		if (a >= 1.8e19 || s >= 4294967295.0) {
			snprintf(err, errlen, "%s:%lu: time out of range", path,
				 lineno);
			goto out;
		}
		if (n == alloc) {
			size_t na = alloc ? alloc * 2 : 4096;
			uint64_t *aa = realloc(arr, na * sizeof(*aa));

			if (aa != NULL)
				arr = aa;
			uint32_t *ss = realloc(svc, na * sizeof(*ss));

			if (ss != NULL)
				svc = ss;
			if (aa == NULL || ss == NULL) {
				snprintf(err, errlen, "%s: out of memory",
					 path);
				goto out;
			}
			alloc = na;
		}
		arr[n] = (uint64_t)llround(a);
		svc[n] = (uint32_t)llround(s);
		if (n > 0 && arr[n] < arr[n - 1]) {
			snprintf(err, errlen,
				 "%s:%lu: arrival goes back in time", path,
				 lineno);
			goto out;
		}
		n++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no requests", path);
		goto out;
	}
	t->arrival_ns = arr;
	t->service_ns = svc;
	t->trace.arrival_ns = arr;
	t->trace.service_ns = svc;
	t->trace.len = n;
	arr = NULL;
	svc = NULL;
	rc = 0;
out:
	free(arr);
	free(svc);
	free(line);
	fclose(f);
	return rc;
}

void
tlb_sim_trace_free(struct tlb_sim_trace_buf *t)
{
	free(t->arrival_ns);
	free(t->service_ns);
	memset(t, 0, sizeof(*t));
}
