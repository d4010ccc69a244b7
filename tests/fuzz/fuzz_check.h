/* SPDX-License-Identifier: BSD-3-Clause
 * CHECK(cond) for the fuzz targets: a documented contract the target
 * checks on what the code under test did with the input. A violation is
 * said on stderr (file, line and the condition) and aborts, which
 * libFuzzer reports as a crash and keeps the input of.
 */
#ifndef TURBOLB_FUZZ_CHECK_H
#define TURBOLB_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* The file's own name, without the directory the build passed. */
#ifdef __FILE_NAME__
#define FUZZ_CHECK_FILE __FILE_NAME__
#else
#define FUZZ_CHECK_FILE __FILE__
#endif

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			check_failed(FUZZ_CHECK_FILE, __LINE__, #cond);        \
	} while (0)

static void check_failed(const char *file, int line, const char *what)
	__attribute__((noreturn));

static void
check_failed(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: contract violated: %s\n", file, line, what);
	abort();
}

#endif
