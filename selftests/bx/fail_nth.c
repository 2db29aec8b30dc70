// SPDX-License-Identifier: GPL-2.0
/*
 * fail_nth N MODULE.ko: load a module with the N-th fault-injection site
 * consulted by this thread failing (/proc/thread-self/fail-nth, see
 * Documentation/fault-injection/fault-injection.rst), and report whether
 * the fault was reached.
 *
 * Output: "injected <errno|0>" when the N-th site was reached (the load
 * then either failed with that errno or recovered and returned 0), or
 * "unreached <errno|0>" when the load consulted fewer than N sites: a
 * sweep over N = 1, 2, ... is complete at the first "unreached".
 * Exit status 0 unless the helper itself failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[32];
	int fd, nth, ko, rc, err;
	ssize_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N MODULE.ko\n", argv[0]);
		return 2;
	}
	nth = atoi(argv[1]);
	ko = open(argv[2], O_RDONLY | O_CLOEXEC);
	if (ko < 0) {
		perror(argv[2]);
		return 2;
	}
	fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("fail-nth");
		return 2;
	}
	snprintf(buf, sizeof(buf), "%d", nth);
	if (write(fd, buf, strlen(buf)) < 0) {
		perror("write fail-nth");
		return 2;
	}
	rc = syscall(SYS_finit_module, ko, "", 0);
	err = rc ? errno : 0;
	/* What is left of the countdown: 0 once it fired. */
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0 || pwrite(fd, "0", 1, 0) < 0) {
		perror("fail-nth");
		return 2;
	}
	buf[n] = 0;
	printf("%s %d\n", atoi(buf) ? "unreached" : "injected", err);
	return 0;
}
