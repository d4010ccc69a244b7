/* SPDX-License-Identifier: BSD-3-Clause
 * A fresh POSIX shared-memory name per test case, for the tests that
 * create credit rings: setup_name() makes cur_name unique to the process
 * and the case (and removes a leftover under it), unlink_name() removes
 * it in teardown, so a region is not left in /dev/shm even when an
 * assertion fired; nic_create() makes the credit ring under it as the NIC
 * side does, or fails the case. Define SHM_NAME_TAG (a short string naming the
 * test) before including this, after cmocka.h.
 */
#ifndef TURBOLB_TEST_SHM_NAME_H
#define TURBOLB_TEST_SHM_NAME_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "turbolb/credit_ring.h"

#ifndef SHM_NAME_TAG
#error "define SHM_NAME_TAG before including shm_name.h"
/* The NIC side's credit ring under cur_name: n_cores cores of ring_size
 * records, mode 0600. */
static struct tlb_cr *
nic_create(uint32_t n_cores, uint32_t ring_size)
{
	char err[256] = "";
	struct tlb_cr *cr = NULL;

	if (tlb_cr_create(cur_name, n_cores, ring_size, 0600, &cr, err,
			  sizeof(err)) != 0)
		fail_msg("tlb_cr_create: %s", err);
	return cr;
}

#endif

static unsigned int name_seq;
static char cur_name[TLB_CR_NAME_MAX];

static int
setup_name(void **state)
{
	(void)state;
	snprintf(cur_name, sizeof(cur_name), "/tlbtest-" SHM_NAME_TAG "-%d-%u",
		 (int)getpid(), name_seq++);
	shm_unlink(cur_name);
	return 0;
}

static int
unlink_name(void **state)
{
	(void)state;
	shm_unlink(cur_name);
	return 0;
}

/* The NIC side's credit ring under cur_name: n_cores cores of ring_size
 * records, mode 0600. */
static struct tlb_cr *
nic_create(uint32_t n_cores, uint32_t ring_size)
{
	char err[256] = "";
	struct tlb_cr *cr = NULL;

	if (tlb_cr_create(cur_name, n_cores, ring_size, 0600, &cr, err,
			  sizeof(err)) != 0)
		fail_msg("tlb_cr_create: %s", err);
	return cr;
}

#endif
