// SPDX-License-Identifier: GPL-2.0
/*
 * bxswitch: a lossless Ethernet switch for the rig's guests, the way a
 * RoCE fabric with PFC behaves.
 *
 *   bxswitch [-b BYTES] SOCKET
 *
 * Every guest's qemu connects to SOCKET with "-netdev stream" (frames
 * prefixed by a 4-byte big-endian length). The switch learns source
 * MACs and forwards each frame to its destination's port, or to every
 * other port for a broadcast or an unknown destination.
 *
 * Nothing is dropped. Each port has an egress buffer of BYTES (default
 * 262144). When a frame's destination buffer is full, the switch stops
 * reading from the frame's ingress port until there is room: a pause,
 * as PFC sends one upstream. Ports are served in turn: room that frees
 * goes to paused ports first, and each pass reads at most BUDGET frames
 * from a port, starting at a different port each time. The sender's qemu then stops draining its
 * guest's transmit ring and the guest's queue stops. vde_switch instead
 * drops a frame whose destination socket is full, which a burst into one
 * guest (an incast) hits first.
 *
 * SIGUSR1 prints one line of counters to stdout: frames, bytes, pauses
 * (an ingress port stopped for a full egress buffer) and the time ports
 * spent paused, per port and in all, since the last SIGUSR1 (bench.sh
 * sends one at each incast setting). SIGTERM prints them and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS	8
/* qemu's largest frame (NET_BUFSIZE) is 4096 + 65536 bytes. */
#define MAX_FRAME	(4096 + 65536)
#define HDR		4
#define BUDGET		8	/* frames read from a port per pass */

struct port {
	int fd;				/* -1: free */
	int used;			/* has been connected: report it */
	uint8_t mac[6];
	int has_mac;
	/* Ingress: one frame being read, header included. */
	uint8_t in[HDR + MAX_FRAME];
	size_t in_len;
	int held;			/* a whole frame waits for room */
	/*
	 * Egress: a ring of buf_bytes holding length-prefixed frames,
	 * out_used bytes from out_head on.
	 */
	uint8_t *out;
	size_t out_head, out_used;
	/* Counters since the last report. */
	uint64_t rx_frames, rx_bytes, pauses;
	uint64_t paused_ns, paused_since;
};

static struct port ports[MAX_PORTS];
static size_t buf_bytes = 262144;
static int dropped;		/* a port closed: retry the held frames */
static volatile sig_atomic_t want_report, want_exit;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		want_report = 1;
	else
		want_exit = 1;
}

static void report(void)
{
	uint64_t t = now_ns(), frames = 0, bytes = 0, pauses = 0, ns = 0;
	int i;

	printf("bxswitch:");
	for (i = 0; i < MAX_PORTS; i++) {
		struct port *p = &ports[i];

		if (!p->used)
			continue;
		if (p->held) {
			p->paused_ns += t - p->paused_since;
			p->paused_since = t;
		}
		printf(" port%d=%02x:rx_frames=%llu,pauses=%llu,paused_ms=%llu",
		       i, p->mac[5], (unsigned long long)p->rx_frames,
		       (unsigned long long)p->pauses,
		       (unsigned long long)(p->paused_ns / 1000000));
		frames += p->rx_frames;
		bytes += p->rx_bytes;
		pauses += p->pauses;
		ns += p->paused_ns;
		p->rx_frames = p->rx_bytes = p->pauses = p->paused_ns = 0;
	}
	printf(" frames=%llu bytes=%llu pauses=%llu paused_ms=%llu\n",
	       (unsigned long long)frames, (unsigned long long)bytes,
	       (unsigned long long)pauses, (unsigned long long)(ns / 1000000));
	fflush(stdout);
}

static void drop_port(struct port *p)
{
	dropped = 1;
	close(p->fd);
	p->fd = -1;
	p->has_mac = 0;
	p->in_len = 0;
	p->held = 0;
	p->out_head = p->out_used = 0;
}

/* Destinations of the frame held by @src, as a bitmask of ports. */
static unsigned int dests(const struct port *src)
{
	const uint8_t *dst = src->in + HDR;
	unsigned int m = 0;
	int i;

	if (!(dst[0] & 1))
		for (i = 0; i < MAX_PORTS; i++)
			if (ports[i].fd >= 0 && ports[i].has_mac &&
			    !memcmp(ports[i].mac, dst, 6))
				return &ports[i] == src ? 0 : 1u << i;
	for (i = 0; i < MAX_PORTS; i++)
		if (ports[i].fd >= 0 && &ports[i] != src)
			m |= 1u << i;
	return m;
}

/*
 * Forward @src's whole frame if every destination has room; else keep it
 * and stop reading @src (a pause). Returns 1 if forwarded.
 */
static int forward(struct port *src)
{
	unsigned int m = dests(src);
	int i;

	for (i = 0; i < MAX_PORTS; i++) {
		struct port *d = &ports[i];

		if (!(m & (1u << i)))
			continue;
		if (d->out_used + src->in_len > buf_bytes) {
			if (!src->held) {
				src->held = 1;
				src->pauses++;
				src->paused_since = now_ns();
			}
			return 0;
		}
	}
	for (i = 0; i < MAX_PORTS; i++) {
		struct port *d = &ports[i];
		size_t tail, first;

		if (!(m & (1u << i)))
			continue;
		tail = (d->out_head + d->out_used) % buf_bytes;
		first = buf_bytes - tail;
		if (first > src->in_len)
			first = src->in_len;
		memcpy(d->out + tail, src->in, first);
		memcpy(d->out, src->in + first, src->in_len - first);
		d->out_used += src->in_len;
	}
	if (src->held) {
		src->paused_ns += now_ns() - src->paused_since;
		src->held = 0;
	}
	src->rx_frames++;
	src->rx_bytes += src->in_len - HDR;
	src->in_len = 0;
	return 1;
}

/* Read what @p has sent; forward up to @budget whole frames. */
static void do_read(struct port *p, int budget)
{
	while (!p->held && budget > 0) {
		size_t want = HDR;
		ssize_t r;

		if (p->in_len >= HDR) {
			uint32_t len = (uint32_t)p->in[0] << 24 |
				       (uint32_t)p->in[1] << 16 |
				       (uint32_t)p->in[2] << 8 | p->in[3];

			/* A length we cannot hold ends the port. */
			if (len < 14 || len > MAX_FRAME || HDR + len > buf_bytes) {
				fprintf(stderr, "bxswitch: port %d: frame length %u\n",
					(int)(p - ports), len);
				drop_port(p);
				return;
			}
			want = HDR + len;
		}
		if (p->in_len < want) {
			r = read(p->fd, p->in + p->in_len, want - p->in_len);
			if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
				drop_port(p);
				return;
			}
			if (r < 0)
				return;
			p->in_len += r;
			continue;
		}
		if (!p->has_mac && !(p->in[HDR + 6] & 1)) {
			memcpy(p->mac, p->in + HDR + 6, 6);
			p->has_mac = 1;
		}
		forward(p);
		budget--;
	}
}

/* Frames held for room, in turn from port @first: forward those that fit. */
static void retry_held(int first)
{
	int j;

	dropped = 0;
	for (j = 0; j < MAX_PORTS; j++) {
		struct port *p = &ports[(first + j) % MAX_PORTS];

		if (p->fd >= 0 && p->held)
			forward(p);
	}
}

static void do_write(struct port *p)
{
	while (p->out_used) {
		size_t n = buf_bytes - p->out_head;
		ssize_t w;

		if (n > p->out_used)
			n = p->out_used;
		w = write(p->fd, p->out + p->out_head, n);
		if (w < 0) {
			if (errno != EAGAIN && errno != EINTR)
				drop_port(p);
			return;
		}
		p->out_head = (p->out_head + w) % buf_bytes;
		p->out_used -= w;
	}
	p->out_head = 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bxswitch [-b BYTES] SOCKET\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, tmp;
	struct pollfd pfd[MAX_PORTS + 1];
	struct sigaction sact = { .sa_handler = on_signal };
	sigset_t block, unblocked;
	int lfd, c, i, j, rr = 0;

	while ((c = getopt(argc, argv, "b:")) != -1) {
		if (c != 'b')
			usage();
		buf_bytes = strtoul(optarg, NULL, 0);
		if (buf_bytes < HDR + MAX_FRAME || buf_bytes > (64u << 20)) {
			fprintf(stderr, "bxswitch: -b must be %d to %u\n",
				HDR + MAX_FRAME, 64u << 20);
			return 2;
		}
	}
	if (optind != argc - 1 || strlen(argv[optind]) + 5 > sizeof(sa.sun_path))
		usage();
	strcpy(sa.sun_path, argv[optind]);
	/* Listen first, then appear: a client never finds it refusing. */
	tmp = sa;
	strcat(tmp.sun_path, ".tmp");
	unlink(tmp.sun_path);

	/* Signals arrive only inside ppoll(), never between its checks. */
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	sigaction(SIGUSR1, &sact, NULL);
	sigaction(SIGTERM, &sact, NULL);
	sigaction(SIGINT, &sact, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < MAX_PORTS; i++) {
		ports[i].fd = -1;
		ports[i].out = malloc(buf_bytes);
		if (!ports[i].out) {
			perror("bxswitch: malloc");
			return 1;
		}
	}
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&tmp, sizeof(tmp)) ||
	    listen(lfd, MAX_PORTS) || rename(tmp.sun_path, sa.sun_path)) {
		perror("bxswitch: listen");
		return 1;
	}
	while (!want_exit) {
		int n = 0;

		if (want_report) {
			want_report = 0;
			report();
		}
		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < MAX_PORTS; i++) {
			struct port *p = &ports[i];
			short ev = 0;

			/* A held frame is retried below, not read again. */
			if (p->fd >= 0 && !p->held)
				ev |= POLLIN;
			if (p->fd >= 0 && p->out_used)
				ev |= POLLOUT;
			pfd[n++] = (struct pollfd){ .fd = ev ? p->fd : -1,
						    .events = ev };
		}
		if (ppoll(pfd, n, NULL, &unblocked) < 0) {
			if (errno == EINTR)
				continue;
			perror("bxswitch: poll");
			return 1;
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(lfd, NULL, NULL,
					 SOCK_NONBLOCK | SOCK_CLOEXEC);

			for (i = 0; fd >= 0 && i < MAX_PORTS; i++)
				if (ports[i].fd < 0) {
					ports[i].fd = fd;
					ports[i].used = 1;
					fd = -1;
				}
			if (fd >= 0)
				close(fd);	/* no free port */
		}
		for (i = 0; i < MAX_PORTS; i++) {
			struct port *p = &ports[i];
			short re = pfd[i + 1].revents;

			if (p->fd >= 0 && (re & POLLOUT))
				do_write(p);
			/* A closed port with a held frame has nothing to read. */
			if (p->fd >= 0 && p->held && (re & (POLLHUP | POLLERR)))
				drop_port(p);
		}
		/* The room that writes freed goes to the paused ports first. */
		retry_held(rr);
		for (j = 0; j < MAX_PORTS; j++) {
			struct port *p = &ports[(rr + j) % MAX_PORTS];
			short re = pfd[(rr + j) % MAX_PORTS + 1].revents;

			if (p->fd >= 0 && (re & (POLLIN | POLLHUP | POLLERR)))
				do_read(p, BUDGET);
		}
		/* A port closed: frames held for it may go elsewhere now. */
		if (dropped)
			retry_held(rr);
		rr = (rr + 1) % MAX_PORTS;
	}
	report();
	unlink(sa.sun_path);
	return 0;
}
