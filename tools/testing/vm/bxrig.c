// SPDX-License-Identifier: GPL-2.0
/*
 * bxrig: a barrier across the guests of one rig run.
 *
 *   bxrig serve                  run on guest 0 by /init (background)
 *   bxrig barrier NAME [SECS]    block until every guest reached NAME
 *
 * The coordinator listens on BXRIG_COORD (default 192.0.2.1) port 7700 of
 * the guests' own network. A barrier completes when BXRIG_N guests have
 * sent the same name; the coordinator then answers "go" to each of them.
 * Clients retry the connection until the deadline, so start order does
 * not matter. Exit status: 0 passed, 1 timeout or error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PORT		7700
#define MAXWAIT		64
#define NAMELEN		64

struct waiter {
	int	fd;
	char	name[NAMELEN];
};

static int nguests(void)
{
	const char *s = getenv("BXRIG_N");
	int n = s ? atoi(s) : 0;

	return n > 0 ? n : 1;
}

static const char *coord(void)
{
	const char *s = getenv("BXRIG_COORD");

	return s ? s : "192.0.2.1";
}

static int read_line(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

static int serve(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	struct waiter w[MAXWAIT];
	int nw = 0, n = nguests(), one = 1, lfd;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				  sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64)) {
		perror("bxrig serve");
		return 1;
	}
	for (;;) {
		int fd = accept(lfd, NULL, NULL), matched = 0;
		char name[NAMELEN];

		if (fd < 0)
			continue;
		if (read_line(fd, name, sizeof(name)) || nw == MAXWAIT) {
			close(fd);
			continue;
		}
		snprintf(w[nw].name, NAMELEN, "%s", name);
		w[nw++].fd = fd;
		for (int i = 0; i < nw; i++)
			matched += !strcmp(w[i].name, name);
		if (matched < n)
			continue;
		for (int i = 0; i < nw;) {
			if (strcmp(w[i].name, name)) {
				i++;
				continue;
			}
			if (write(w[i].fd, "go\n", 3) != 3)
				perror("bxrig serve: write");
			close(w[i].fd);
			w[i] = w[--nw];
		}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int barrier(const char *name, double secs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	double end = now() + secs;
	char buf[NAMELEN + 2];

	if (strlen(name) >= NAMELEN || strchr(name, '\n')) {
		fprintf(stderr, "bxrig: bad barrier name\n");
		return 1;
	}
	if (nguests() == 1)
		return 0;
	if (inet_pton(AF_INET, coord(), &sa.sin_addr) != 1) {
		fprintf(stderr, "bxrig: bad BXRIG_COORD\n");
		return 1;
	}
	while (now() < end) {
		struct pollfd p;
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return 1;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			usleep(100 * 1000);
			continue;
		}
		snprintf(buf, sizeof(buf), "%s\n", name);
		if (write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) {
			close(fd);
			continue;
		}
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, (int)((end - now()) * 1000)) == 1 &&
		    !read_line(fd, buf, sizeof(buf)) && !strcmp(buf, "go")) {
			close(fd);
			return 0;
		}
		close(fd);
		break;
	}
	fprintf(stderr, "bxrig: barrier '%s' timed out\n", name);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "barrier"))
		return barrier(argv[2], argc == 4 ? atof(argv[3]) : 120);
	fprintf(stderr, "usage: bxrig serve | bxrig barrier NAME [SECS]\n");
	return 2;
}
