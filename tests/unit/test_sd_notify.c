/* SPDX-License-Identifier: BSD-3-Clause
 * sd_notify tests: the test plays the service manager, binding its own
 * datagram socket (a file and an abstract name) and pointing
 * $NOTIFY_SOCKET at it; messages must arrive byte for byte, with our pid
 * in the credentials (what systemd's NotifyAccess=main checks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sd_notify.h"

#define RECV_TIMEOUT_MS 2000

struct rx {
	int fd;
	char dir[64];
	char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
};

static void
rx_bind(struct rx *r, const char *name)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	size_t len = strlen(name);
	socklen_t alen;
	int one = 1;

	assert_true(len < sizeof(r->name));
	memcpy(r->name, name, len + 1);
	if (name[0] == '@') {
		memcpy(sun.sun_path + 1, name + 1, len - 1);
		alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				   len);
	} else {
		memcpy(sun.sun_path, name, len + 1);
		alen = (socklen_t)sizeof(sun);
	}
	r->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(r->fd >= 0);
	assert_int_equal(
		setsockopt(r->fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)),
		0);
	assert_int_equal(bind(r->fd, (struct sockaddr *)&sun, alen), 0);
	assert_int_equal(setenv("NOTIFY_SOCKET", name, 1), 0);
}

static void
rx_open_path(struct rx *r)
{
	char path[128];

	snprintf(r->dir, sizeof(r->dir), "/tmp/tlb-sd-notify-XXXXXX");
	assert_non_null(mkdtemp(r->dir));
	snprintf(path, sizeof(path), "%s/notify", r->dir);
	rx_bind(r, path);
}

static void
rx_open_abstract(struct rx *r)
{
	static unsigned int seq;
	char name[96];

	r->dir[0] = '\0';
	/* Abstract names are global to the network namespace: make this
	 * one ours alone, as parallel test runs share the namespace. */
	snprintf(name, sizeof(name), "@tlb-sd-notify-test-%ld-%u",
		 (long)getpid(), seq++);
	rx_bind(r, name);
}

static void
rx_close(struct rx *r)
{
	close(r->fd);
	if (r->dir[0] != '\0') {
		unlink(r->name);
		rmdir(r->dir);
	}
	unsetenv("NOTIFY_SOCKET");
}

/* Receives one datagram, checks it is exactly want and came from us. */
static void
rx_expect(struct rx *r, const char *want)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
	static char buf[65536];
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	bool cred = false;
	ssize_t n;

	assert_int_equal(poll(&pfd, 1, RECV_TIMEOUT_MS), 1);
	n = recvmsg(r->fd, &mh, MSG_DONTWAIT);
	assert_true(n >= 0);
	assert_false(mh.msg_flags & MSG_TRUNC);
	assert_int_equal((size_t)n, strlen(want));
	assert_memory_equal(buf, want, (size_t)n);
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			assert_int_equal(uc.pid, getpid());
			cred = true;
		}
	}
	assert_true(cred);
}

static void
rx_expect_nothing(struct rx *r)
{
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};

	assert_int_equal(poll(&pfd, 1, 0), 0);
}

static void
test_unset_is_noop(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(tlb_sd_notify("READY=1"), 0);
	assert_int_equal(tlb_sd_notifyf("STATUS=%d cores", 4), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(tlb_sd_notify("READY=1"), 0);
	unsetenv("NOTIFY_SOCKET");
}

static void
test_path_socket(void **state)
{
	struct rx r;

	(void)state;
	rx_open_path(&r);
	assert_int_equal(tlb_sd_notify("READY=1"), 0);
	rx_expect(&r, "READY=1");
	assert_int_equal(tlb_sd_notify("STATUS=running: policy jsq\n"
				       "WATCHDOG=1"),
			 0);
	rx_expect(&r, "STATUS=running: policy jsq\nWATCHDOG=1");
	rx_expect_nothing(&r);
	rx_close(&r);
}

static void
test_abstract_socket(void **state)
{
	struct rx r;

	(void)state;
	rx_open_abstract(&r);
	assert_int_equal(tlb_sd_notify("READY=1"), 0);
	rx_expect(&r, "READY=1");
	assert_int_equal(tlb_sd_notify("STOPPING=1"), 0);
	rx_expect(&r, "STOPPING=1");
	rx_expect_nothing(&r);
	rx_close(&r);
}

static void
test_notifyf(void **state)
{
	static char big[8193];
	struct rx r;

	(void)state;
	rx_open_path(&r);
	assert_int_equal(tlb_sd_notifyf("STATUS=policy %s, %u cores, %s",
					"jbsq", 4u, "credits ring"),
			 0);
	rx_expect(&r, "STATUS=policy jbsq, 4 cores, credits ring");
	assert_int_equal(tlb_sd_notifyf("MAINPID=%ld", (long)getpid()), 0);
	{
		char want[64];

		snprintf(want, sizeof(want), "MAINPID=%ld", (long)getpid());
		rx_expect(&r, want);
	}
	/* Larger than any single write of a stream: still one datagram. */
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "STATUS=", 7);
	assert_int_equal(tlb_sd_notifyf("%s", big), 0);
	rx_expect(&r, big);
	rx_close(&r);
}

static void
test_errors(void **state)
{
	char longpath[200];
	struct rx r;

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(tlb_sd_notify(NULL), -EINVAL);
	assert_int_equal(tlb_sd_notify(""), -EINVAL);

	setenv("NOTIFY_SOCKET", "relative/notify", 1);
	assert_int_equal(tlb_sd_notify("READY=1"), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(tlb_sd_notify("READY=1"), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "/nonexistent/turbolb/notify", 1);
	assert_int_equal(tlb_sd_notify("READY=1"), -ENOENT);

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longpath, 1);
	assert_int_equal(tlb_sd_notify("READY=1"), -EINVAL);
	longpath[0] = '@';
	assert_int_equal(tlb_sd_notify("READY=1"), -EINVAL);

	/* A socket file whose manager has gone. */
	rx_open_path(&r);
	close(r.fd);
	assert_int_equal(tlb_sd_notify("READY=1"), -ECONNREFUSED);
	unlink(r.name);
	rmdir(r.dir);

	/* An abstract name nobody holds. */
	setenv("NOTIFY_SOCKET", "@tlb-sd-notify-test-nobody-here", 1);
	assert_int_equal(tlb_sd_notify("READY=1"), -ECONNREFUSED);
	unsetenv("NOTIFY_SOCKET");
}

static void
set_watchdog(const char *usec, const char *pid)
{
	if (usec != NULL)
		setenv("WATCHDOG_USEC", usec, 1);
	else
		unsetenv("WATCHDOG_USEC");
	if (pid != NULL)
		setenv("WATCHDOG_PID", pid, 1);
	else
		unsetenv("WATCHDOG_PID");
}

static void
test_watchdog(void **state)
{
	static const char *const bad_usec[] = {
		"",
		"0",
		"-5",
		"+5",
		" 5",
		"5 ",
		"5s",
		"0x10",
		"1.5",
		"18446744073709551616",
		"99999999999999999999",
	};
	char self[32], other[32];
	uint64_t usec;

	(void)state;
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	snprintf(other, sizeof(other), "%ld", (long)getpid() + 1);

	set_watchdog(NULL, NULL);
	assert_false(tlb_sd_watchdog_enabled(&usec));

	usec = 0;
	set_watchdog("20000000", NULL);
	assert_true(tlb_sd_watchdog_enabled(&usec));
	assert_int_equal(usec, 20000000);
	assert_true(tlb_sd_watchdog_enabled(NULL));

	usec = 0;
	set_watchdog("18446744073709551615", self);
	assert_true(tlb_sd_watchdog_enabled(&usec));
	assert_true(usec == UINT64_MAX);

	/* Meant for another process: the variables leak to children. */
	usec = 7;
	set_watchdog("20000000", other);
	assert_false(tlb_sd_watchdog_enabled(&usec));
	assert_int_equal(usec, 7);
	set_watchdog("20000000", "");
	assert_false(tlb_sd_watchdog_enabled(&usec));
	set_watchdog("20000000", "0");
	assert_false(tlb_sd_watchdog_enabled(&usec));
	set_watchdog("20000000", "12ab");
	assert_false(tlb_sd_watchdog_enabled(&usec));
	set_watchdog(NULL, self);
	assert_false(tlb_sd_watchdog_enabled(&usec));

	for (size_t i = 0; i < sizeof(bad_usec) / sizeof(bad_usec[0]); i++) {
		set_watchdog(bad_usec[i], self);
		if (tlb_sd_watchdog_enabled(&usec))
			fail_msg("WATCHDOG_USEC='%s' accepted", bad_usec[i]);
	}
	set_watchdog(NULL, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset_is_noop),
		cmocka_unit_test(test_path_socket),
		cmocka_unit_test(test_abstract_socket),
		cmocka_unit_test(test_notifyf),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_watchdog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
