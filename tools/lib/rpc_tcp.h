/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rpc_tcp: the kernel-TCP RPC that bxperf and bxps measure bx against,
 * done the way a careful RPC library does it.
 *
 * Framing: every message, request or response, is a u32 length (host
 * order: the programs measure host-local protocols) followed by that
 * many bytes. Each request gets exactly one response, in order.
 *
 * Server (rpc_tcp_serve()): N threads, each with its own epoll instance
 * and its own listening socket on the same port (SO_REUSEPORT: the
 * kernel spreads connections over them). Sockets are non-blocking with
 * TCP_NODELAY. Each connection has a receive buffer (rx_init bytes,
 * grown up to rx_max for a larger message) and a transmit buffer of
 * tx_cap bytes. The handler answers a message with up to two pieces
 * (struct rpc_tcp_resp), e.g. the transmit buffer or a buffer shared by
 * all connections; the length prefix and the pieces leave in one
 * writev(), without a copy. An optional after() hook runs once the
 * response has been handed to the socket (or queued, if it would
 * block), with the request still in place: an acknowledgement can go
 * out before the request is applied. A connection with a response still
 * in flight is not read (its interest switches to EPOLLOUT), which
 * bounds its buffering; pipelined requests wait in the socket.
 *
 * Clients: rpc_tcp_send() and rpc_tcp_recv() on a blocking socket (one
 * request in flight: a writev() of prefix and request, a readv() of
 * prefix and response straight into the caller's buffer), and an
 * asynchronous client (struct rpc_tcp_async) on a non-blocking socket
 * with epoll that keeps several requests pipelined and reads each
 * response with one readv() of its prefix and payload straight into its
 * slot's buffer.
 */
#ifndef RPC_TCP_H
#define RPC_TCP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#define RPC_TCP_PFX	4u	/* the length prefix */

/* A response: up to two pieces, sent after their total length. */
struct rpc_tcp_resp {
	struct iovec	iov[2];
	int		n;
};

struct rpc_tcp_srv_ops {
	/*
	 * Message @msg (@len bytes) arrived on a connection of server thread
	 * @thread. Describe its response in @resp; @tx (@tx_cap bytes) is
	 * the connection's transmit buffer, free to use. <0 drops the
	 * connection (an error).
	 */
	int	(*handle)(void *ctx, int thread, const void *msg, uint32_t len,
			  void *tx, uint32_t tx_cap, struct rpc_tcp_resp *resp);
	/* Optional: the response to @msg went to the socket. */
	void	(*after)(void *ctx, int thread, const void *msg, uint32_t len);
	/* Keep serving? Asked at least every poll_ms. */
	bool	(*running)(void *ctx);
	/* Every thread is listening. */
	void	(*ready)(void *ctx);
};

struct rpc_tcp_srv_cfg {
	const char	*prog;		/* for messages */
	uint32_t	port;
	int		threads;
	int		poll_ms;	/* epoll_wait() timeout */
	uint32_t	min_len;	/* shorter messages are errors */
	uint32_t	rx_init;	/* receive buffer, prefix included */
	uint32_t	rx_max;		/* its limit: larger are errors */
	uint32_t	tx_cap;		/* transmit buffer per connection */
};

/* Totals over the server's threads. */
struct rpc_tcp_srv_stats {
	uint64_t	conns;		/* connections accepted */
	uint64_t	errors;		/* dropped connections, refused accepts */
};

/* Serve until ops->running() says no; 0 or a negative errno (setup). */
int rpc_tcp_serve(const struct rpc_tcp_srv_cfg *cfg,
		  const struct rpc_tcp_srv_ops *ops, void *ctx,
		  struct rpc_tcp_srv_stats *st);

/* ---- clients ----------------------------------------------------------- */

/* @addr (dotted IPv4) and @port into @sa; -EINVAL if @addr is not one. */
int rpc_tcp_addr(const char *addr, uint32_t port, struct sockaddr_in *sa);
/*
 * A connected socket with TCP_NODELAY, or a negative errno. @timeout_ms
 * (>0): send and receive time out (-ETIMEDOUT); @nonblock: set
 * O_NONBLOCK once connected.
 */
int rpc_tcp_connect(const struct sockaddr_in *sa, int timeout_ms,
		    bool nonblock);
/* Blocking: send one message; 0 or a negative errno. */
int rpc_tcp_send(int fd, const void *msg, uint32_t len);
/* Blocking: receive one message into @buf; its length or -errno. */
int rpc_tcp_recv(int fd, void *buf, uint32_t cap);

/* Asynchronous, pipelined: requests in slots 0 .. nslots - 1. */
struct rpc_tcp_async;

/* On connected socket @fd (closed by rpc_tcp_async_close()). */
int rpc_tcp_async_open(int fd, uint32_t nslots, struct rpc_tcp_async **out);
void rpc_tcp_async_close(struct rpc_tcp_async *a);
/*
 * Queue @slot's request, @hlen bytes at @hdr then @plen at @pay (both
 * kept by the caller until the slot completes), and send what the socket
 * takes. Its response must be exactly @want bytes; it goes to @resp.
 */
int rpc_tcp_async_issue(struct rpc_tcp_async *a, uint32_t slot,
			const void *hdr, uint32_t hlen, const void *pay,
			uint32_t plen, void *resp, uint32_t want);
/* Up to @max completed slots; 0 after @timeout_ms; <0 on an error. */
int rpc_tcp_async_reap(struct rpc_tcp_async *a, uint32_t *slots, int max,
		       int timeout_ms);

#endif /* RPC_TCP_H */
