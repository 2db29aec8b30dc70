// SPDX-License-Identifier: GPL-2.0
/*
 * bx_stress: a short multi-process workload over /dev/bx for fault
 * injection and fuzzing runs.
 *
 *   bx_stress [-p PROCS] [-n ITERS] [-a ERRNO[,ERRNO...]]
 *
 * Every process repeatedly opens /dev/bx, issues commands and closes it.
 * Each call either succeeds or fails with an errno from the allowed list
 * (-a, default ENOMEM); anything else is reported and fails the run.
 * Prints "bx_stress: ok N failed N unexpected N" and exits 0 only when
 * there were no unexpected results.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/bx.h>

struct counts {
	long ok, failed, unexpected;
};

static int allowed[16];
static int nallowed;

static void account(struct counts *c, int ret, const char *what)
{
	if (ret >= 0) {
		c->ok++;
		return;
	}
	for (int i = 0; i < nallowed; i++) {
		if (errno == allowed[i]) {
			c->failed++;
			return;
		}
	}
	c->unexpected++;
	fprintf(stderr, "bx_stress[%d]: %s: unexpected %s\n", getpid(), what,
		strerror(errno));
}

static void worker(int iters, struct counts *c)
{
	for (int i = 0; i < iters; i++) {
		struct bx_info info = { .size = sizeof(info) };
		int fd = open("/dev/bx", O_RDWR | O_CLOEXEC);

		account(c, fd, "open");
		if (fd < 0)
			continue;
		account(c, ioctl(fd, BX_IOC_GET_INFO, &info), "GET_INFO");
		close(fd);
	}
}

int main(int argc, char **argv)
{
	struct counts *shared, total = { 0 };
	int procs = 4, iters = 200, opt;
	char *list = NULL;

	while ((opt = getopt(argc, argv, "p:n:a:")) != -1) {
		switch (opt) {
		case 'p': procs = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'a': list = optarg; break;
		default:
			fprintf(stderr, "usage: bx_stress [-p N] [-n N] [-a ERRNO,...]\n");
			return 2;
		}
	}
	if (list) {
		for (char *t = strtok(list, ","); t && nallowed < 16; t = strtok(NULL, ","))
			allowed[nallowed++] = atoi(t);
	} else {
		allowed[nallowed++] = ENOMEM;
	}
	if (procs < 1 || procs > 64 || iters < 0)
		return 2;

	shared = mmap(NULL, sizeof(*shared) * procs, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return 1;
	memset(shared, 0, sizeof(*shared) * procs);
	for (int p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (!pid) {
			worker(iters, &shared[p]);
			_exit(0);
		}
	}
	for (int p = 0; p < procs; p++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			total.unexpected++;
	}
	for (int p = 0; p < procs; p++) {
		total.ok += shared[p].ok;
		total.failed += shared[p].failed;
		total.unexpected += shared[p].unexpected;
	}
	printf("bx_stress: ok %ld failed %ld unexpected %ld\n", total.ok,
	       total.failed, total.unexpected);
	return total.unexpected ? 1 : 0;
}
