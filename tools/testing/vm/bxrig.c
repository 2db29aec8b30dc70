// SPDX-License-Identifier: GPL-2.0
/*
 * bxrig: a barrier across the guests of one rig run.
 *
 *   bxrig serve                  run on guest 0 by /init (background)
 *   bxrig barrier NAME [SECS]    block until every guest reached NAME
 *
 * The coordinator listens on BXRIG_COORD (default 192.0.2.1) port 7700 of
 * the guests' own network. A guest sends "NAME ID" (ID: BXRIG_ID) and
 * waits; a barrier completes when BXRIG_N guests wait on the same name,
 * and the coordinator then answers "go" to each of them. A guest that
 * gave up (closed its connection) no longer counts, so a late guest does
 * not pass a barrier the others have left. Clients retry the connection
 * until the deadline, so start order does not matter. On a timeout the
 * client asks "?NAME" and says which guests were waiting with it.
 * Exit status: 0 passed, 1 timeout or error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define PORT		7700
#define MAXWAIT		64
#define NAMELEN		64
#define LINELEN		(NAMELEN + 16)

struct waiter {
	int	fd;
	char	name[NAMELEN];
	char	id[12];
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

static void say(int fd, const char *msg)
{
	if (send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0)
		perror("bxrig serve: send");
}

/* Forget the waiters that gave up: their end closed (or sent more). */
static void drop_gone(struct waiter *w, int *nw)
{
	for (int i = 0; i < *nw;) {
		struct pollfd p = { .fd = w[i].fd, .events = POLLIN | POLLRDHUP };

		if (poll(&p, 1, 0) == 0) {
			i++;
			continue;
		}
		fprintf(stderr, "bxrig serve: guest %s left barrier '%s'\n",
			w[i].id, w[i].name);
		close(w[i].fd);
		w[i] = w[--*nw];
	}
}

/* Answer "?NAME": the ids of the guests waiting on NAME, on one line. */
static void query(int fd, const char *name, struct waiter *w, int nw)
{
	char buf[MAXWAIT * 12 + 16] = "waiting:";
	size_t len = strlen(buf);

	for (int i = 0; i < nw && len + 14 < sizeof(buf); i++)
		if (!strcmp(w[i].name, name))
			len += snprintf(buf + len, sizeof(buf) - len, " %s",
					w[i].id);
	snprintf(buf + len, sizeof(buf) - len, "\n");
	say(fd, buf);
}

static int serve(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	/* A client that connects and says nothing cannot stall the others. */
	struct timeval tmo = { .tv_sec = 5 };
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
		char line[LINELEN], *id;

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
		if (read_line(fd, line, sizeof(line))) {
			close(fd);
			continue;
		}
		drop_gone(w, &nw);
		if (line[0] == '?') {
			query(fd, line + 1, w, nw);
			close(fd);
			continue;
		}
		id = strchr(line, ' ');
		if (id)
			*id++ = '\0';
		if (nw == MAXWAIT || strlen(line) >= NAMELEN) {
			close(fd);
			continue;
		}
		snprintf(w[nw].name, NAMELEN, "%s", line);
		snprintf(w[nw].id, sizeof(w[nw].id), "%s", id ? id : "?");
		w[nw++].fd = fd;
		for (int i = 0; i < nw; i++)
			matched += !strcmp(w[i].name, line);
		if (matched < n)
			continue;
		for (int i = 0; i < nw;) {
			if (strcmp(w[i].name, line)) {
				i++;
				continue;
			}
			say(w[i].fd, "go\n");
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

/* Connect to the coordinator; a connect, like a send, gives up after 5 s. */
static int dial(struct sockaddr_in *sa)
{
	struct timeval tmo = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
	if (connect(fd, (struct sockaddr *)sa, sizeof(*sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* After a timeout: which guests were waiting on @name. */
static void who(struct sockaddr_in *sa, const char *name, char *buf,
		size_t len)
{
	struct timeval tmo = { .tv_sec = 5 };
	int fd = dial(sa);

	snprintf(buf, len, "coordinator unreachable");
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	dprintf(fd, "?%s\n", name);
	if (read_line(fd, buf, len))
		snprintf(buf, len, "coordinator did not answer");
	close(fd);
}

static int barrier(const char *name, double secs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(PORT) };
	const char *id = getenv("BXRIG_ID");
	double start = now(), end = start + secs;
	char buf[LINELEN], seen[MAXWAIT * 12 + 16];

	if (!*name || *name == '?' || strlen(name) >= NAMELEN ||
	    strpbrk(name, "\n ")) {
		fprintf(stderr, "bxrig: bad barrier name\n");
		return 1;
	}
	if (nguests() == 1)
		return 0;
	if (inet_pton(AF_INET, coord(), &sa.sin_addr) != 1) {
		fprintf(stderr, "bxrig: bad BXRIG_COORD\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	while (now() < end) {
		struct pollfd p;
		int fd = dial(&sa);
		double left;

		if (fd < 0) {
			usleep(100 * 1000);
			continue;
		}
		snprintf(buf, sizeof(buf), "%s %s\n", name, id ? id : "?");
		if (write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf)) {
			close(fd);
			continue;
		}
		/* Not a negative timeout: poll() would wait for ever. */
		left = end - now();
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, left > 0 ? (int)(left * 1000) : 0) == 1 &&
		    !read_line(fd, buf, sizeof(buf)) && !strcmp(buf, "go")) {
			close(fd);
			return 0;
		}
		close(fd);
		break;
	}
	who(&sa, name, seen, sizeof(seen));
	fprintf(stderr, "bxrig: barrier '%s' timed out after %.0f s (%s)\n",
		name, now() - start, seen);
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
