// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the rig's lossless switch (tools/testing/vm/bxswitch.c),
 * run as a child process built with ASan and UBSan (bxswitch next to
 * this binary): MAC learning and flooding, no frame lost to a port that
 * does not read (the senders are paused, the pauses counted, and served
 * in turn once it reads), and a port that sends a bad length cut off
 * without harm to the others.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"

#define FRAME	1514

static pid_t sw_pid;
static int sw_out = -1;			/* the switch's stdout */
static char sw_path[108];

static void sw_stop(void)
{
	if (sw_pid > 0) {
		kill(sw_pid, SIGKILL);
		waitpid(sw_pid, NULL, 0);
		sw_pid = 0;
	}
	if (sw_out >= 0)
		close(sw_out);
	sw_out = -1;
	unlink(sw_path);
}

/* Start bxswitch [-b BYTES] on a fresh socket; 0 on success. */
static int sw_start(const char *bytes)
{
	char exe[PATH_MAX], bin[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int out[2], k;

	sw_stop();
	if (n <= 0 || pipe2(out, O_CLOEXEC))
		return -1;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;
	snprintf(bin, sizeof(bin), "%s/bxswitch", exe);
	snprintf(sw_path, sizeof(sw_path), "/tmp/bxswitch-test.%d", getpid());
	unlink(sw_path);
	sw_pid = fork();
	if (sw_pid < 0)
		return -1;
	if (!sw_pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], 1);
		if (bytes)
			execl(bin, bin, "-b", bytes, sw_path, (char *)NULL);
		else
			execl(bin, bin, sw_path, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	sw_out = out[0];
	for (k = 0; k < 200 && access(sw_path, F_OK); k++)
		usleep(10000);
	return access(sw_path, F_OK);
}

static int port_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	strcpy(sa.sun_path, sw_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void mac(uint8_t *m, int who)
{
	if (who < 0) {
		memset(m, 0xff, 6);
		return;
	}
	memcpy(m, "\x52\x54\x00\xb0\x00", 5);
	m[5] = who;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w <= 0)
			return -1;
		p += w;
		len -= w;
	}
	return 0;
}

/* Send a frame from @src to @dst (-1: broadcast), @seq in its payload. */
static int send_frame(int fd, int src, int dst, uint32_t seq, size_t len)
{
	uint8_t f[4 + FRAME] = { 0 };

	f[0] = len >> 24;
	f[1] = len >> 16;
	f[2] = len >> 8;
	f[3] = len;
	mac(f + 4, dst);
	mac(f + 10, src);
	f[16] = 0x88;
	f[17] = 0xb5;			/* local experimental ethertype */
	memcpy(f + 18, &seq, sizeof(seq));
	memset(f + 22, seq & 0xff, len - 18);
	return write_all(fd, f, 4 + len);
}

/* Read one frame within @ms; its source and seq. 0, or -1 on timeout. */
static int recv_frame(int fd, int ms, int *src, uint32_t *seq, size_t *lenp)
{
	uint8_t f[4 + FRAME];
	size_t got = 0, want = 4, len = 0;

	while (got < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, ms) != 1)
			return -1;
		r = read(fd, f + got, want - got);
		if (r <= 0)
			return -1;
		got += r;
		if (got == 4) {
			len = (size_t)f[0] << 24 | f[1] << 16 | f[2] << 8 | f[3];
			if (len < 22 || len > FRAME)
				return -1;
			want = 4 + len;
		}
	}
	*src = f[4 + 11];
	memcpy(seq, f + 4 + 14, sizeof(*seq));
	if (lenp)
		*lenp = len;
	for (size_t i = 22; i < len; i++)
		if (f[4 + i] != (*seq & 0xff))
			return -1;
	return 0;
}

static int quiet(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

/* A counters line of the switch's (after SIGUSR1) into @buf. */
static int sw_report(char *buf, size_t len)
{
	size_t got = 0;

	kill(sw_pid, SIGUSR1);
	while (got < len - 1) {
		struct pollfd p = { .fd = sw_out, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 5000) != 1)
			return -1;
		r = read(sw_out, buf + got, len - 1 - got);
		if (r <= 0)
			return -1;
		got += r;
		buf[got] = 0;
		if (strchr(buf, '\n'))
			return 0;
	}
	return -1;
}

static long long counter(const char *line, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=", name);
	p = strstr(line, key);
	return p ? atoll(p + strlen(key)) : -1;
}

/* Ports 1..n connected, each known to the switch by its MAC. */
static int ports_up(int *fd, int n)
{
	int src, i, j;
	uint32_t seq;

	char line[1024], port[16];

	for (i = 1; i <= n; i++) {
		fd[i] = port_open();
		if (fd[i] < 0)
			return -1;
	}
	/* Until the switch has taken them all: its report lists them. */
	snprintf(port, sizeof(port), " port%d=", n - 1);
	for (i = 0; i < 500; i++) {
		if (sw_report(line, sizeof(line)))
			return -1;
		if (strstr(line, port))
			break;
		usleep(10000);
	}
	/* A broadcast from each: learnt, and every other port gets it. */
	for (i = 1; i <= n; i++) {
		if (send_frame(fd[i], i, -1, 100 + i, 64))
			return -1;
		for (j = 1; j <= n; j++) {
			if (j == i)
				continue;
			if (recv_frame(fd[j], 5000, &src, &seq, NULL) ||
			    src != i || seq != 100u + i)
				return -1;
		}
	}
	return 0;
}

UNIT_TEST(learn_and_forward)
{
	int fd[4], src;
	uint32_t seq;

	CHECK_EQ(sw_start(NULL), 0);
	CHECK_EQ(ports_up(fd, 3), 0);
	/* Unicast goes to its destination only, and back. */
	CHECK_EQ(send_frame(fd[1], 1, 2, 7, 1000), 0);
	CHECK_EQ(recv_frame(fd[2], 5000, &src, &seq, NULL), 0);
	CHECK_EQ(src, 1);
	CHECK_EQ(seq, 7);
	CHECK_EQ(send_frame(fd[2], 2, 1, 8, FRAME), 0);
	CHECK_EQ(recv_frame(fd[1], 5000, &src, &seq, NULL), 0);
	CHECK_EQ(seq, 8);
	CHECK(quiet(fd[3], 200));
	/* An unknown destination floods. */
	CHECK_EQ(send_frame(fd[3], 3, 9, 9, 64), 0);
	CHECK_EQ(recv_frame(fd[1], 5000, &src, &seq, NULL), 0);
	CHECK_EQ(recv_frame(fd[2], 5000, &src, &seq, NULL), 0);
	CHECK_EQ(seq, 9);
	for (int i = 1; i <= 3; i++)
		close(fd[i]);
	sw_stop();
}

/*
 * Two senders fill a port that does not read: nothing is lost, they are
 * paused instead, and every frame arrives in order once it reads, both
 * senders' in turn (when one has sent everything, the other has sent
 * at least half).
 */
UNIT_TEST(lossless_pause)
{
	/* 4.5 MB each: far more than the switch's and the sockets' buffers. */
	enum { N = 3000 };
	uint32_t next[3] = { 0 }, seq, other = 0;
	int fd[4], src, i, st;
	pid_t kid[3];
	char line[1024];
	size_t len;

	CHECK_EQ(sw_start("131072"), 0);
	CHECK_EQ(ports_up(fd, 3), 0);
	for (i = 1; i <= 2; i++) {
		kid[i] = fork();
		CHECK(kid[i] >= 0);
		if (!kid[i]) {
			for (uint32_t q = 0; q < N; q++)
				if (send_frame(fd[i], i, 3, q, FRAME))
					_exit(1);
			_exit(0);
		}
	}
	usleep(500000);
	/* The senders block: the switch stopped reading them. */
	CHECK_EQ(waitpid(kid[1], &st, WNOHANG), 0);
	CHECK_EQ(waitpid(kid[2], &st, WNOHANG), 0);
	CHECK_EQ(sw_report(line, sizeof(line)), 0);
	CHECK(counter(line, "pauses") >= 1);
	while (next[1] + next[2] < 2 * N) {
		CHECK_EQ(recv_frame(fd[3], 5000, &src, &seq, &len), 0);
		CHECK(src == 1 || src == 2);
		CHECK_EQ(seq, next[src]);
		CHECK_EQ(len, FRAME);
		next[src]++;
		if (next[src] == N && !other)
			other = next[3 - src];
	}
	printf("# when one sender was done the other had sent %u of %d\n",
	       other, N);
	CHECK(other >= N / 2);
	CHECK(quiet(fd[3], 200));
	for (i = 1; i <= 2; i++) {
		CHECK_EQ(waitpid(kid[i], &st, 0), kid[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	for (i = 1; i <= 3; i++)
		close(fd[i]);
	sw_stop();
}

/* A length the switch cannot hold ends that port only. */
UNIT_TEST(bad_length)
{
	uint8_t bad[4] = { 0xff, 0xff, 0xff, 0xff };
	int fd[4], src;
	uint32_t seq;

	CHECK_EQ(sw_start(NULL), 0);
	CHECK_EQ(ports_up(fd, 3), 0);
	CHECK_EQ(write_all(fd[3], bad, sizeof(bad)), 0);
	CHECK_EQ(recv_frame(fd[3], 5000, &src, &seq, NULL), -1);
	CHECK_EQ(send_frame(fd[1], 1, 2, 11, 600), 0);
	CHECK_EQ(recv_frame(fd[2], 5000, &src, &seq, NULL), 0);
	CHECK_EQ(seq, 11);
	/* A frame shorter than an Ethernet header, likewise. */
	bad[0] = bad[1] = bad[2] = 0;
	bad[3] = 4;
	CHECK_EQ(write_all(fd[2], bad, sizeof(bad)), 0);
	CHECK_EQ(recv_frame(fd[2], 5000, &src, &seq, NULL), -1);
	CHECK_EQ(send_frame(fd[1], 1, -1, 12, 64), 0);
	CHECK(quiet(fd[1], 100));
	for (int i = 1; i <= 3; i++)
		close(fd[i]);
	sw_stop();
}

int main(void)
{
	int rc;

	signal(SIGPIPE, SIG_IGN);
	rc = unit_run();
	sw_stop();
	return rc;
}
