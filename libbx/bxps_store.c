// SPDX-License-Identifier: LGPL-2.1 OR MIT
/*
 * bxps's default handler (bxps.h): a store of values by key that pushes
 * sum into and pulls read, as ps-lite's KVServerDefaultHandle does, with
 * a length per key. Keys hash into shards, each under its own lock, so
 * that handler threads of one server work side by side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bxps_int.h"

#define NSHARDS		64u

struct entry {
	uint64_t	key;
	uint32_t	len;		/* elements */
	struct entry	*next;
	uint8_t		data[];
};

struct shard {
	pthread_mutex_t	lock;		/* guards the chain heads and data */
	struct entry	**tab;
	uint32_t	size, count;
};

struct bxps_store {
	int		dtype;
	unsigned int	esize;
	struct shard	shard[NSHARDS];
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

int bxps_store_create(struct bxps_store **out, int dtype)
{
	struct bxps_store *st;

	if (!bxps_dtype_size(dtype))
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->dtype = dtype;
	st->esize = bxps_dtype_size(dtype);
	for (unsigned int i = 0; i < NSHARDS; i++)
		pthread_mutex_init(&st->shard[i].lock, NULL);
	*out = st;
	return 0;
}

void bxps_store_destroy(struct bxps_store *st)
{
	if (!st)
		return;
	for (unsigned int i = 0; i < NSHARDS; i++) {
		struct shard *sh = &st->shard[i];

		for (uint32_t b = 0; b < sh->size; b++) {
			struct entry *e = sh->tab[b], *next;

			for (; e; e = next) {
				next = e->next;
				free(e);
			}
		}
		free(sh->tab);
		pthread_mutex_destroy(&sh->lock);
	}
	free(st);
}

static struct shard *shard_of(struct bxps_store *st, uint64_t key)
{
	return &st->shard[mix(key) % NSHARDS];
}

/* @key's entry in @sh (locked), or NULL. */
static struct entry *find(struct shard *sh, uint64_t key)
{
	struct entry *e;

	if (!sh->size)
		return NULL;
	for (e = sh->tab[(mix(key) >> 8) % sh->size]; e; e = e->next)
		if (e->key == key)
			return e;
	return NULL;
}

static int insert(struct shard *sh, struct entry *e)
{
	if (sh->count >= sh->size) {
		uint32_t size = sh->size ? sh->size * 2 : 64;
		struct entry **tab = calloc(size, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (uint32_t b = 0; b < sh->size; b++) {
			struct entry *x = sh->tab[b], *next;

			for (; x; x = next) {
				uint32_t h = (uint32_t)((mix(x->key) >> 8) % size);

				next = x->next;
				x->next = tab[h];
				tab[h] = x;
			}
		}
		free(sh->tab);
		sh->tab = tab;
		sh->size = size;
	}
	e->next = sh->tab[(mix(e->key) >> 8) % sh->size];
	sh->tab[(mix(e->key) >> 8) % sh->size] = e;
	sh->count++;
	return 0;
}

/* Key @i's length in @kv (elements); -1: the values do not split evenly. */
static int64_t key_len(const struct bxps_kv *kv, uint32_t i, unsigned int esize,
		       bool have_vals)
{
	if (kv->lens)
		return kv->lens[i];
	if (!have_vals)
		return -2;	/* not said: as stored (or 1) */
	if (!kv->nkeys || kv->val_bytes % ((uint64_t)kv->nkeys * esize))
		return -1;
	return (int64_t)(kv->val_bytes / esize / kv->nkeys);
}

static int push(struct bxps_store *st, const struct bxps_kv *kv)
{
	const uint8_t *src = kv->vals;
	unsigned int es = st->esize;

	/* Every length first, so that a refused push changes nothing. */
	for (uint32_t i = 0; i < kv->nkeys; i++) {
		int64_t l = key_len(kv, i, es, true);
		struct shard *sh = shard_of(st, kv->keys[i]);
		struct entry *e;

		if (l < 0)
			return -EINVAL;
		pthread_mutex_lock(&sh->lock);
		e = find(sh, kv->keys[i]);
		pthread_mutex_unlock(&sh->lock);
		if (e && e->len != l)
			return -EINVAL;
	}
	for (uint32_t i = 0; i < kv->nkeys; i++) {
		uint32_t l = (uint32_t)key_len(kv, i, es, true);
		struct shard *sh = shard_of(st, kv->keys[i]);
		struct entry *e;
		int ret = 0;

		pthread_mutex_lock(&sh->lock);
		e = find(sh, kv->keys[i]);
		if (e && e->len == l) {
			psw_sum((unsigned int)st->dtype, e->data, src,
				(uint64_t)l);
		} else if (!e) {
			e = malloc(sizeof(*e) + (size_t)l * es);
			if (e) {
				e->key = kv->keys[i];
				e->len = l;
				memcpy(e->data, src, (size_t)l * es);
				ret = insert(sh, e);
				if (ret)
					free(e);
			} else {
				ret = -ENOMEM;
			}
		} else {
			ret = -EINVAL;	/* raced: another length meanwhile */
		}
		pthread_mutex_unlock(&sh->lock);
		if (ret)
			return ret;
		src += (size_t)l * es;
	}
	return 0;
}

/* Read @kv's keys into a new buffer *@vals, their lengths into *@lens. */
static int pull(struct bxps_store *st, const struct bxps_kv *kv, void **vals,
		uint64_t *bytes, int32_t **lens)
{
	unsigned int es = st->esize;
	uint64_t total = 0, off = 0;
	int32_t *l = calloc(kv->nkeys ? kv->nkeys : 1, sizeof(*l));
	uint8_t *v;

	if (!l)
		return -ENOMEM;
	for (uint32_t i = 0; i < kv->nkeys; i++) {
		struct shard *sh = shard_of(st, kv->keys[i]);
		int64_t want = kv->lens ? kv->lens[i] : -2;
		struct entry *e;

		pthread_mutex_lock(&sh->lock);
		e = find(sh, kv->keys[i]);
		l[i] = e ? (int32_t)e->len : want >= 0 ? (int32_t)want : 1;
		pthread_mutex_unlock(&sh->lock);
		if (want >= 0 && l[i] != want) {
			free(l);
			return -EINVAL;
		}
		total += (uint64_t)l[i] * es;
	}
	v = calloc(1, total ? total : 1);
	if (!v) {
		free(l);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < kv->nkeys; i++) {
		struct shard *sh = shard_of(st, kv->keys[i]);
		struct entry *e;

		pthread_mutex_lock(&sh->lock);
		e = find(sh, kv->keys[i]);
		/* A length that changed since: the answer keeps the first. */
		if (e && e->len == (uint32_t)l[i])
			memcpy(v + off, e->data, (size_t)l[i] * es);
		pthread_mutex_unlock(&sh->lock);
		off += (uint64_t)l[i] * es;
	}
	*vals = v;
	*bytes = total;
	*lens = l;
	return 0;
}

int bxps_store_handle(struct bxps *n, struct bxps_store *st,
		      const struct bxps_req *req)
{
	struct bxps_kv res = { .keys = req->kv.keys, .nkeys = req->kv.nkeys };
	void *vals = NULL;
	int32_t *lens = NULL;
	int ret = 0;

	if (req->simple || (req->dtype && req->dtype != st->dtype))
		ret = -EINVAL;
	if (!ret && req->push)
		ret = push(st, &req->kv);
	if (!ret && req->pull) {
		struct bxps_kv ask = req->kv;

		/* A push-pull answers with the lengths it pushed. */
		if (req->push && !ask.lens)
			ask.lens = NULL;
		ret = pull(st, &ask, &vals, &res.val_bytes, &lens);
		res.vals = vals;
		res.lens = lens;
	}
	if (ret)
		ret = bxps_respond_err(n, req, ret);
	else
		ret = bxps_respond(n, req, req->pull ? &res : NULL, NULL, 0);
	free(vals);
	free(lens);
	return ret;
}

void bxps_handle_sum(struct bxps *n, const struct bxps_req *req, void *arg)
{
	bxps_store_handle(n, arg, req);
	bxps_req_release(n, req->buf);
}
