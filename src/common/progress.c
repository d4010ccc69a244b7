/* SPDX-License-Identifier: BSD-3-Clause
 * The progress line (progress.h).
 */
#include <math.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double
cli_progress_eta(unsigned int done, unsigned int n, double elapsed)
{
	if (done == 0 || elapsed < 0.0)
		return -1.0;
	if (done >= n)
		return 0.0;
	return elapsed / (double)done * (double)(n - done);
}

void
cli_progress_secs(char *buf, size_t len, double s)
{
	long long t = s > 0.0 ? llround(s) : 0;

	if (t < 60)
		snprintf(buf, len, "%llds", t);
	else if (t < 3600)
		snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lldh%02lldm", t / 3600, t / 60 % 60);
}

int
cli_progress_format(char *buf, size_t len, const char *what, unsigned int i,
		    unsigned int n, double elapsed)
{
	double left = cli_progress_eta(i, n, elapsed);
	char e[32], l[32];

	cli_progress_secs(e, sizeof(e), elapsed);
	if (left < 0.0)
		return snprintf(buf, len, "%s: step %u/%u, %s elapsed", what,
				i + 1, n, e);
	cli_progress_secs(l, sizeof(l), left);
	return snprintf(buf, len, "%s: step %u/%u, %s elapsed, ~%s left", what,
			i + 1, n, e, l);
}

void
cli_progress_start(struct cli_progress *p, FILE *f, bool quiet,
		   const char *what, unsigned int n)
{
	*p = (struct cli_progress){
		.f = f,
		.on = !quiet && f != NULL && isatty(fileno(f)),
		.what = what,
		.n = n,
		.t0 = now_s(),
	};
}

void
cli_progress_step(struct cli_progress *p, unsigned int i)
{
	char line[160];

	if (!p->on)
		return;
	cli_progress_format(line, sizeof(line), p->what, i, p->n,
			    now_s() - p->t0);
	/* \033[K: erase what a longer line left to the right. */
	fprintf(p->f, "\r%s\033[K", line);
	fflush(p->f);
	p->shown = true;
}

void
cli_progress_clear(struct cli_progress *p)
{
	if (!p->on || !p->shown)
		return;
	fprintf(p->f, "\r\033[K");
	fflush(p->f);
	p->shown = false;
}

void
cli_progress_end(struct cli_progress *p)
{
	cli_progress_clear(p);
	p->on = false;
}
