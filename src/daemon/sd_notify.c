/* SPDX-License-Identifier: BSD-3-Clause
 * sd_notify without libsystemd: the protocol is one datagram on a unix
 * socket, which is less code than a dependency to carry onto the DPU.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "sd_notify.h"

/* systemd reads its notify socket from its main loop; a manager too busy
 * to drain it must not stall the daemon's main lcore for ever. */
#define NOTIFY_SEND_TIMEOUT_S 5

/* Fills sun from $NOTIFY_SOCKET; returns the address length or -errno. */
static int
notify_address(const char *path, struct sockaddr_un *sun)
{
	size_t len = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (path[0] == '@') {
		/* Abstract: a leading NUL, then the name; no terminator, the
		 * length says where it ends. */
		if (len > sizeof(sun->sun_path))
			return -EINVAL;
		memcpy(sun->sun_path + 1, path + 1, len - 1);
		return (int)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	if (path[0] != '/')
		return -EAFNOSUPPORT; /* e.g. systemd's vsock: addresses */
	if (len >= sizeof(sun->sun_path))
		return -EINVAL;
	memcpy(sun->sun_path, path, len + 1);
	return (int)(offsetof(struct sockaddr_un, sun_path) + len + 1);
}

int
tlb_sd_notify(const char *msg)
{
	struct timeval tv = {.tv_sec = NOTIFY_SEND_TIMEOUT_S};
	struct sockaddr_un sun;
	const char *path;
	size_t len;
	ssize_t n;
	int fd, alen, rc;

	if (msg == NULL || msg[0] == '\0')
		return -EINVAL;
	path = getenv("NOTIFY_SOCKET");
	if (path == NULL || path[0] == '\0')
		return 0;
	alen = notify_address(path, &sun);
	if (alen < 0)
		return alen;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	len = strlen(msg);
	do {
		n = sendto(fd, msg, len, MSG_NOSIGNAL,
			   (const struct sockaddr *)&sun, (socklen_t)alen);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
	else
		rc = (size_t)n == len ? 0 : -EMSGSIZE;
	close(fd);
	return rc;
}

int
tlb_sd_notifyf(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	rc = tlb_sd_notify(msg);
	free(msg);
	return rc;
}

/* Strict decimal: digits only, no sign, no blanks, no overflow. */
static int
parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

bool
tlb_sd_watchdog_enabled(uint64_t *usec)
{
	const char *pid_s = getenv("WATCHDOG_PID");
	uint64_t timeout, pid;

	if (parse_u64(getenv("WATCHDOG_USEC"), &timeout) != 0 || timeout == 0)
		return false;
	/* The variables are inherited: a child (or a process exec'd by a
	 * wrapper) must not answer for the service's main process. */
	if (pid_s != NULL) {
		if (parse_u64(pid_s, &pid) != 0 || pid == 0 ||
		    pid != (uint64_t)getpid())
			return false;
	}
	if (usec != NULL)
		*usec = timeout;
	return true;
}
