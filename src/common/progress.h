/* SPDX-License-Identifier: BSD-3-Clause
 * One updating progress line for long work made of steps (a sweep's rate
 * points, a search's probes): "what: step 3/10, 1m05s elapsed, ~2m10s
 * left", rewritten in place with '\r'. It is drawn only on a terminal and
 * only when the tool was not asked to be quiet, so that logs and CI
 * output never see it.
 *
 *	struct cli_progress p;
 *
 *	cli_progress_start(&p, stderr, quiet, "sweep", n);
 *	for (i = 0; i < n; i++) {
 *		cli_progress_step(&p, i);   (step i + 1 of n begins)
 *		...
 *		cli_progress_clear(&p);     (before printing anything else)
 *	}
 *	cli_progress_end(&p);
 */
#ifndef TLB_PROGRESS_H
#define TLB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct cli_progress {
	FILE *f;
	bool on;    /* drawing at all */
	bool shown; /* a line is on the screen now */
	const char *what;
	unsigned int n; /* steps in all */
	double t0;      /* monotonic seconds at the start */
};

/* Starts the clock. The line is drawn only when f is a terminal and quiet
 * is false. */
void cli_progress_start(struct cli_progress *p, FILE *f, bool quiet,
			const char *what, unsigned int n);

/* Step i (0-based) begins: i steps are done. Redraws the line. */
void cli_progress_step(struct cli_progress *p, unsigned int i);

/* Erases the line, so that other output starts at column 0; the next
 * cli_progress_step() draws it again. */
void cli_progress_clear(struct cli_progress *p);

/* The work is over: erases the line. */
void cli_progress_end(struct cli_progress *p);

/* Seconds left when done of n equal steps took elapsed seconds: the mean
 * step time times the steps left; negative when nothing is done yet (no
 * estimate). */
double cli_progress_eta(unsigned int done, unsigned int n, double elapsed);

/* A duration for people: "42s", "3m05s", "2h07m". */
void cli_progress_secs(char *buf, size_t len, double s);

/* The line for step i (0-based) of n after elapsed seconds, without '\r':
 * "what: step i+1/n, ELAPSED elapsed, ~LEFT left" (no estimate at the
 * first step). Returns what snprintf returns. */
int cli_progress_format(char *buf, size_t len, const char *what, unsigned int i,
			unsigned int n, double elapsed);

#endif
