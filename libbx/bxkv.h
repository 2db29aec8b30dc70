/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * bxkv: a key-value layer over bx in the manner of ps-lite, part of
 * libbx (link with -lbx; installed next to libbx.h as <bx/bxkv.h>).
 *
 * Model. Keys are uint64_t. Every key has a value of val_len floats, the
 * same for all keys (fixed at creation, on servers and workers alike),
 * or a length of its own: a server given a table of lengths (cfg.lens)
 * stores each key's, and a worker names them per call (the _lens calls,
 * ps-lite's `lens`). N servers each own a range [begin, end) of keys; a
 * worker knows the N servers' addresses and the partition (by default
 * an even split of [0, key_max)). A call names many keys, strictly
 * ascending (as ps-lite requires), with their values back to back: key
 * keys[i] has values vals[i * val_len .. (i + 1) * val_len), or, with
 * lens, the lens[i] floats after those of keys[0 .. i). A key's length
 * in a call must be the server's for it: a request that says otherwise
 * is refused.
 *
 *   server:  pull: returns the values of the keys asked for;
 *            push: applies the values sent to the stored ones: sums them
 *            (dst[j] += src[j]), or calls cfg->apply (an SGD step, say).
 *   worker:  bxkv_push(w, keys, n, vals), bxkv_pull(w, keys, n, vals)
 *            (and bxkv_push_lens(), bxkv_pull_lens() with lens):
 *            split per server (and, past the message size, per request),
 *            all sent at once, then all their completions reaped.
 *
 * Copies. A server's values live in its bx region: a pull of a run of
 * consecutive keys is answered straight from them, other pulls with one
 * gather into a reply buffer. A pull's answer is the bare values and
 * lands in the caller's @vals directly when @vals is in the worker's
 * region (bxkv_buf_alloc()); otherwise it is copied there once. A push
 * message carries its keys with the values, so the values are copied
 * once into it (a registered buffer), wherever they are.
 *
 * Recovery. Each request is a bx push or pull, with bx's guarantees
 * (Documentation/bx.rst, "Recovery semantics", "Key-value layer"): a
 * push request is applied exactly once across reconnects, or its call
 * fails; bxkv sends one again only when it certainly was not delivered
 * (or the server had no receive buffer posted: ENOBUFS). A pull request
 * is sent again after any connection failure (pulls are idempotent)
 * until the call's deadline. A failed push call may have been applied
 * on some servers (or in part: per request) and not on others: the
 * error's server index says where it failed; the other servers' pushes
 * of the call completed (or were not sent, if they come after the
 * failure).
 *
 * Functions return 0 (or a non-negative count) or a negative errno.
 */
#ifndef LIBBX_BXKV_H
#define LIBBX_BXKV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the largest request or pull answer, unless set (cfg). */
#define BXKV_MSG_MAX_DEFAULT	(1u << 20)

/*
 * The update a push applies to one key: @dst, the server's @len floats,
 * from @src, the pushed ones. Runs in the server's serving thread.
 */
typedef void (*bxkv_apply_fn)(uint64_t key, float *dst, const float *src,
			      uint32_t len, void *arg);

struct bxkv_server;

/**
 * struct bxkv_push - one push request, whole, as a handler gets it
 * @keys:  @nkeys keys, strictly ascending, all in the server's range
 * @lens:  each key's floats (the server's lengths)
 * @vals:  the pushed floats, key after key, @nvals in all
 * The arrays are valid during the call only.
 */
struct bxkv_push {
	const uint64_t	*keys;
	const uint32_t	*lens;
	const float	*vals;
	uint32_t	nkeys;
	uint64_t	nvals;
};

/*
 * A push request's handler (bxkv_server_set_handle()): called once per
 * request, in the serving thread, instead of cfg->apply per key; it
 * updates the store itself (bxkv_server_value()).
 */
typedef void (*bxkv_handle_fn)(struct bxkv_server *s,
			       const struct bxkv_push *p, void *arg);

/**
 * struct bxkv_server_cfg - a server's key range and resources
 * @begin, @end: the keys served: [begin, end), end > begin
 * @val_len:     floats per key (>= 1), or 0 with @lens
 * @service:     pulls come to @service, pushes to @service + 1 (bound
 *               here; not 0)
 * @msg_max:     bytes of the largest push request and list-pull answer;
 *               the workers' must be the same. 0: BXKV_MSG_MAX_DEFAULT
 * @nrecv:       pull request buffers posted (4 KiB each); 0: 64
 * @npush:       push buffers posted (@msg_max each); 0: 8
 * @nreply:      reply buffers (@msg_max each); 0: 8
 * @apply:       the push's update; NULL: sum
 * @apply_arg:   passed to @apply
 * @lens:        NULL, or end - begin lengths (each >= 1): key begin + i
 *               has lens[i] floats (copied; then @val_len must be 0)
 */
struct bxkv_server_cfg {
	uint64_t	begin, end;
	uint32_t	val_len;
	uint32_t	service;
	uint32_t	msg_max;
	uint32_t	nrecv;
	uint32_t	npush;
	uint32_t	nreply;
	bxkv_apply_fn	apply;
	void		*apply_arg;
	const uint32_t	*lens;
};

/**
 * bxkv_server_create() - open /dev/bx, set up a region that holds the
 * values (all 0) and the buffers, bind the services, post the receive
 * buffers. Serving starts with bxkv_server_start() or _poll().
 * Return: 0; -EINVAL; -ENOMEM; bx_open(), bx_setup(), bx_bind() errors.
 */
int bxkv_server_create(struct bxkv_server **out,
		       const struct bxkv_server_cfg *cfg);

/**
 * bxkv_server_set_handle() - hand each push request whole to @fn (with
 * @arg) instead of applying it key by key; NULL: cfg->apply (or the sum)
 * again. Not while serving.
 * Return: 0; -EBUSY while the serving thread runs; -ENOMEM.
 */
int bxkv_server_set_handle(struct bxkv_server *s, bxkv_handle_fn fn,
			   void *arg);

/** bxkv_server_destroy() - stop, unbind, free (NULL is ignored). */
void bxkv_server_destroy(struct bxkv_server *s);

/**
 * bxkv_server_value() - @key's floats in the store (to set the initial
 * values before serving, or to read them); NULL outside the range. Not
 * synchronized with serving. The keys' values are back to back in key
 * order: the value of @begin is the whole store.
 */
float *bxkv_server_value(struct bxkv_server *s, uint64_t key);

/** bxkv_server_value_len() - how many floats @key has; 0 outside. */
uint32_t bxkv_server_value_len(struct bxkv_server *s, uint64_t key);

/**
 * bxkv_server_poll() - serve what has arrived, waiting up to @timeout_ms
 * (-1: until something completes) for it. Callers are serialized.
 * Return: completions handled (0 on timeout); -EBUSY while the serving
 * thread runs.
 */
int bxkv_server_poll(struct bxkv_server *s, int timeout_ms);

/** bxkv_server_start() - serve from a thread of its own. -EBUSY: runs. */
int bxkv_server_start(struct bxkv_server *s);

/** bxkv_server_stop() - end the serving thread (0 also if none ran). */
int bxkv_server_stop(struct bxkv_server *s);

/**
 * struct bxkv_server_stats - a server's counters
 * @pulls, @pushes:	requests served
 * @keys_pulled, @keys_pushed: keys in them
 * @zero_copy:		pulls answered straight from the store
 * @parked:		pulls that waited for a reply buffer
 * @bad:		requests refused (kv_decode(): malformed, keys out of
 *			range, answer too large); refused pulls get an empty
 *			answer
 * @errors:		failed receives and replies (a requester gone)
 */
struct bxkv_server_stats {
	uint64_t	pulls, pushes;
	uint64_t	keys_pulled, keys_pushed;
	uint64_t	zero_copy, parked;
	uint64_t	bad, errors;
};

/** bxkv_server_stats() - a snapshot of the counters. */
void bxkv_server_stats(struct bxkv_server *s, struct bxkv_server_stats *st);

struct bxkv_worker;

/**
 * struct bxkv_worker_cfg - the servers and the partition
 * @servers:     @nservers addresses (text, IPv4 or IPv6), server 0 first
 * @nservers:    >= 1
 * @key_max:     with @bounds NULL: server s owns the s-th of @nservers
 *               even parts of [0, key_max) (the first key_max % nservers
 *               parts one key larger)
 * @bounds:      or @nservers + 1 ascending keys: server s owns
 *               [bounds[s], bounds[s + 1]) (copied)
 * @val_len:     floats per key, the servers'; 0 if every call has lens
 * @service:     the servers' (pulls: @service, pushes: @service + 1)
 * @msg_max:     the servers'; 0: BXKV_MSG_MAX_DEFAULT
 * @timeout_ms:  each call's deadline; 0: 30000
 * @max_inflight: requests in flight per server; 0: 8 (at most the
 *               server's npush, else pushes may find no buffer and wait)
 * @region_size: bytes of the worker's bx region; 0: 64 MiB
 */
struct bxkv_worker_cfg {
	const char *const	*servers;
	unsigned int		nservers;
	uint64_t		key_max;
	const uint64_t		*bounds;
	uint32_t		val_len;
	uint32_t		service;
	uint32_t		msg_max;
	int			timeout_ms;
	uint32_t		max_inflight;
	uint64_t		region_size;
};

/** bxkv_worker_create() - open /dev/bx, set up a region, resolve peers. */
int bxkv_worker_create(struct bxkv_worker **out,
		       const struct bxkv_worker_cfg *cfg);

/** bxkv_worker_destroy() - free (NULL is ignored); no call may run. */
void bxkv_worker_destroy(struct bxkv_worker *w);

/**
 * bxkv_buf_alloc() - a buffer in the worker's region (bx_buf_alloc()):
 * pulls into it need no copy. bxkv_buf_free() frees it.
 */
int bxkv_buf_alloc(struct bxkv_worker *w, size_t size, void **out);
int bxkv_buf_free(struct bxkv_worker *w, void *buf);

/**
 * bxkv_push() - apply @vals (@nkeys * val_len floats) to @keys
 * bxkv_pull() - fetch the values of @keys into @vals
 * @keys: strictly ascending, each in the partition's range
 *
 * Calls on one worker are serialized. Return: 0; -EINVAL (keys not
 * ascending), -ERANGE (a key outside the partition), -EMSGSIZE (val_len
 * too large for msg_max); or the error of a request to a server: the
 * bx errno (-ETIMEDOUT at the deadline, -ECONNRESET, -EHOSTDOWN: a push
 * of unknown outcome), -EREMOTEIO (the server refused it), -EPROTO (an
 * answer of the wrong size). bxkv_last_error() tells which server.
 */
int bxkv_push(struct bxkv_worker *w, const uint64_t *keys, size_t nkeys,
	      const float *vals);
int bxkv_pull(struct bxkv_worker *w, const uint64_t *keys, size_t nkeys,
	      float *vals);

/**
 * bxkv_push_lens() - bxkv_push() with each key's length: @vals holds
 * lens[0] + ... + lens[nkeys - 1] floats, key i's after key i - 1's
 * bxkv_pull_lens() - bxkv_pull() likewise
 * @lens: @nkeys lengths, each >= 1 (-EINVAL otherwise), each the server's
 *        for its key: else the server refuses the request (a pull:
 *        -EREMOTEIO; a push is dropped and counted in its stats' bad)
 */
int bxkv_push_lens(struct bxkv_worker *w, const uint64_t *keys,
		   size_t nkeys, const float *vals, const uint32_t *lens);
int bxkv_pull_lens(struct bxkv_worker *w, const uint64_t *keys,
		   size_t nkeys, float *vals, const uint32_t *lens);

/**
 * bxkv_last_error() - the last call's return value, and in *@server
 * (if not NULL) the index of the server whose request failed (-1: none,
 * or a failure of no server's: bad arguments, no memory).
 */
int bxkv_last_error(struct bxkv_worker *w, int *server);

#ifdef __cplusplus
}
#endif

#endif /* LIBBX_BXKV_H */
