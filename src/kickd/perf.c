/* SPDX-License-Identifier: BSD-3-Clause
 * turbolb-kickd's perf reader: a software event on each core's thread
 * that records only its context switches, into a ring read in place
 * without a system call; kick_perf_scan (kick.c) parses what it holds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "kickd.h"

#define PERF_DATA_PAGES 8u /* ring buffer per thread: 32 KiB */

static bool perf_warned;
static size_t page_size;

void
perf_close(struct kd_core *c)
{
	if (c->perf_map != NULL)
		munmap(c->perf_map, c->perf_len);
	if (c->perf_fd >= 0)
		close(c->perf_fd);
	c->perf_map = NULL;
	c->perf_fd = -1;
	c->perf.where = KICK_CPU_UNKNOWN;
	c->perf.cpu = -1;
}

/* A dummy software event on the thread alone (any CPU), recording only
 * its context switches into a ring we read in place. */
void
perf_open(struct kd_core *c, uint32_t core)
{
	struct perf_event_attr a;
	void *m;
	int fd;

	c->perf.where = KICK_CPU_UNKNOWN;
	c->perf.cpu = -1;
	if (!conf.sched_watch)
		return;
	if (page_size == 0)
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	/* Each switch record says on which CPU: a newer boost can then
	 * tell which boosted thread holds the CPU it waits for. */
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_CPU;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)c->tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (!perf_warned)
			kd_log("core %u: perf_event_open on thread %u: %s; "
			       "this thread's preemption is not watched (needs "
			       "CAP_PERFMON, or perf_event_paranoid <= 2 and "
			       "the same user)",
			       core, c->tid, strerror(errno));
		perf_warned = true;
		return;
	}
	c->perf_len = page_size * (1 + PERF_DATA_PAGES);
	m = mmap(NULL, c->perf_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		if (!perf_warned)
			kd_log("core %u: mmap of the perf ring: %s", core,
			       strerror(errno));
		perf_warned = true;
		close(fd);
		return;
	}
	c->perf_fd = fd;
	c->perf_map = m;
	c->perf_tail = 0;
}

void
perf_poll(struct kd_core *c)
{
	struct perf_event_mmap_page *mp;
	uint64_t head;

	if (c->perf_map == NULL)
		return;
	mp = (struct perf_event_mmap_page *)c->perf_map;
	/* Acquire: the records are written before data_head moves. */
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	if (head == c->perf_tail)
		return;
	kick_perf_scan(c->perf_map + page_size,
		       (uint64_t)page_size * PERF_DATA_PAGES, &c->perf_tail,
		       head, &c->perf);
	/* Release: we are done reading what the kernel may now reuse. */
	__atomic_store_n(&mp->data_tail, c->perf_tail, __ATOMIC_RELEASE);
}
