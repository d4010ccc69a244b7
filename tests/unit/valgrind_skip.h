/* SPDX-License-Identifier: BSD-3-Clause
 * skip_under_valgrind(): valgrind does not return from a SIGBUS handler
 * into the access that faulted, so the cases that truncate a mapped ring
 * run in the plain and the ASan+UBSan builds, and are skipped, and said to
 * be, under memcheck. Include after cmocka.h.
 */
#ifndef TURBOLB_TEST_VALGRIND_SKIP_H
#define TURBOLB_TEST_VALGRIND_SKIP_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TLB_UNDER_VALGRIND() (RUNNING_ON_VALGRIND != 0)
#endif
#endif
#ifndef TLB_UNDER_VALGRIND
#define TLB_UNDER_VALGRIND() 0
#endif

static inline void
skip_under_valgrind(void)
{
	if (TLB_UNDER_VALGRIND()) {
		print_message("skipped under valgrind: it cannot resume an "
			      "access after a SIGBUS handler\n");
		skip();
	}
}

#endif
