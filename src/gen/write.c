/* Ordered, parallel streaming of generated text to a file.
 *
 * Each worker thread formats whole chunks into its own buffer, then waits
 * for its turn (chunks are written strictly in order) and writes them. So
 * formatting runs in parallel with writing, and the file's bytes never
 * depend on the number of threads.
 *
 * With gzip, each worker also deflates its chunk as raw deflate data ended
 * by a sync flush (which leaves the stream byte-aligned and needs no state
 * from the chunk before), as pigz does; the writer wraps the joined pieces
 * in one gzip header and trailer, combining the chunks' CRC-32s. The result
 * is a single ordinary gzip member that every reader accepts.
 */
#include "gen/gen.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

const char ss__gen_digit_pairs[201] = "00010203040506070809"
                                      "10111213141516171819"
                                      "20212223242526272829"
                                      "30313233343536373839"
                                      "40414243444546474849"
                                      "50515253545556575859"
                                      "60616263646566676869"
                                      "70717273747576777879"
                                      "80818283848586878889"
                                      "90919293949596979899";

char *ss__gen_path(const char *prefix, const char *suffix, bool gzip)
{
        size_t a = strlen(prefix), b = strlen(suffix);
        char *p = malloc(a + b + 4);
        if (!p)
                return NULL;
        memcpy(p, prefix, a);
        memcpy(p + a, suffix, b);
        memcpy(p + a + b, gzip ? ".gz" : "", gzip ? 4 : 1);
        return p;
}

/* ------------------------------------------------------------------------ */
/* Shared state                                                              */
/* ------------------------------------------------------------------------ */

struct writer {
        const char *path;
        int fd;
        bool gzip;
        int level;
        bool progress;
        uint64_t nchunks;
        size_t cap;
        unsigned threads;
        ss__gen_chunk_fn fn;
        void *ctx;

        pthread_mutex_t mu;
        pthread_cond_t turn;
        uint64_t next;   /* the chunk whose turn it is to be written */
        uint32_t crc;    /* CRC-32 of the uncompressed bytes so far */
        uint64_t in_len; /* uncompressed bytes so far */
        int last_tenth;  /* progress printed so far */
        int status;      /* first failure, or SS_OK */
        struct ss_err err;
};

struct worker {
        struct writer *w;
        unsigned index;
        pthread_t tid;
};

/* Records the first failure; later ones are consequences. Call with mu held. */
static void fail_locked(struct writer *w, int code, const struct ss_err *err)
{
        if (w->status == SS_OK) {
                w->status = code;
                w->err = *err;
        }
        pthread_cond_broadcast(&w->turn);
}

static int write_all(int fd, const char *path, const void *data, size_t len, struct ss_err *err)
{
        const char *p = data;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return ss_err_set(err, SS_EIO, "%s: write failed: %s", path,
                                          strerror(errno));
                }
                p += n;
                len -= (size_t)n;
        }
        return SS_OK;
}

/* Deflates len bytes as raw deflate data ending in a sync flush (or, with
 * finish, in the final block). Returns the compressed size, or 0 on failure. */
static size_t deflate_piece(z_stream *zs, const char *in, size_t len, unsigned char *out,
                            size_t out_cap, bool finish)
{
        if (deflateReset(zs) != Z_OK)
                return 0;
        zs->next_in = (unsigned char *)in;
        zs->avail_in = (uInt)len;
        zs->next_out = out;
        zs->avail_out = (uInt)out_cap;
        int rc = deflate(zs, finish ? Z_FINISH : Z_SYNC_FLUSH);
        if (finish ? rc != Z_STREAM_END : (rc != Z_OK || zs->avail_in != 0))
                return 0;
        return out_cap - zs->avail_out;
}

static int init_deflate(z_stream *zs, int level)
{
        memset(zs, 0, sizeof *zs);
        /* Negative window bits: raw deflate, the writer adds the gzip framing. */
        return deflateInit2(zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                   */
/* ------------------------------------------------------------------------ */

static void *worker_main(void *arg)
{
        struct worker *self = arg;
        struct writer *w = self->w;
        struct ss_err err;
        ss_err_clear(&err);
        struct ss__gen_buf buf = {0};
        unsigned char *zbuf = NULL;
        size_t zcap = 0;
        z_stream zs;
        bool zinit = false;
        int rc = SS_OK;

        if (w->path) {
                buf.cap = w->cap;
                buf.p = malloc(buf.cap);
                if (!buf.p) {
                        rc = ss_err_set(&err, SS_ENOMEM, "out of memory for a %zu-byte buffer",
                                        w->cap);
                        goto out;
                }
        }
        if (w->path && w->gzip) {
                if (init_deflate(&zs, w->level) != 0) {
                        rc = ss_err_set(&err, SS_ENOMEM, "cannot initialise zlib");
                        goto out;
                }
                zinit = true;
                zcap = deflateBound(&zs, w->cap) + 64;
                zbuf = malloc(zcap);
                if (!zbuf) {
                        rc = ss_err_set(&err, SS_ENOMEM, "out of memory for a %zu-byte buffer",
                                        zcap);
                        goto out;
                }
        }

        for (uint64_t c = self->index; c < w->nchunks; c += w->threads) {
                pthread_mutex_lock(&w->mu);
                bool stop = w->status != SS_OK;
                pthread_mutex_unlock(&w->mu);
                if (stop)
                        break;

                buf.len = 0;
                rc = w->fn(w->ctx, c, w->path ? &buf : NULL, &err);
                if (rc != SS_OK)
                        goto out;
                if (!w->path)
                        continue;
                if (buf.len > buf.cap) {
                        /* The chunk's bound was wrong: memory is already
                         * corrupt, so stop at once rather than go on. */
                        fprintf(stderr, "ssspd-gen: internal error: chunk overflowed its buffer\n");
                        abort();
                }

                const void *out = buf.p;
                size_t out_len = buf.len;
                uint32_t crc = 0;
                if (w->gzip) {
                        crc = (uint32_t)crc32(0, (const unsigned char *)buf.p, (uInt)buf.len);
                        out_len = deflate_piece(&zs, buf.p, buf.len, zbuf, zcap, false);
                        if (out_len == 0) {
                                rc = ss_err_set(&err, SS_EIO, "%s: zlib deflate failed", w->path);
                                goto out;
                        }
                        out = zbuf;
                }

                pthread_mutex_lock(&w->mu);
                while (w->next != c && w->status == SS_OK)
                        pthread_cond_wait(&w->turn, &w->mu);
                if (w->status != SS_OK) {
                        pthread_mutex_unlock(&w->mu);
                        break;
                }
                rc = write_all(w->fd, w->path, out, out_len, &err);
                if (rc != SS_OK) {
                        fail_locked(w, rc, &err);
                        pthread_mutex_unlock(&w->mu);
                        rc = SS_OK; /* already recorded */
                        break;
                }
                if (w->gzip)
                        w->crc = (uint32_t)crc32_combine(w->crc, crc, (z_off_t)buf.len);
                w->in_len += buf.len;
                w->next++;
                if (w->progress) {
                        int tenth = (int)(w->next * 10 / w->nchunks);
                        if (tenth > w->last_tenth) {
                                w->last_tenth = tenth;
                                fprintf(stderr, "ssspd-gen: writing %s: %d%%\n", w->path,
                                        tenth * 10);
                        }
                }
                pthread_cond_broadcast(&w->turn);
                pthread_mutex_unlock(&w->mu);
        }

out:
        if (rc != SS_OK) {
                pthread_mutex_lock(&w->mu);
                fail_locked(w, rc, &err);
                pthread_mutex_unlock(&w->mu);
        }
        if (zinit)
                deflateEnd(&zs);
        free(zbuf);
        free(buf.p);
        return NULL;
}

/* ------------------------------------------------------------------------ */
/* The gzip framing                                                          */
/* ------------------------------------------------------------------------ */

static int write_gzip_header(struct writer *w, const char *header, struct ss_err *err)
{
        /* Magic, deflate, no flags, no time, no extra flags, unknown OS. */
        static const unsigned char magic[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
        int rc = write_all(w->fd, w->path, magic, sizeof magic, err);
        if (rc != SS_OK)
                return rc;
        size_t len = strlen(header);
        z_stream zs;
        if (init_deflate(&zs, w->level) != 0)
                return ss_err_set(err, SS_ENOMEM, "cannot initialise zlib");
        size_t cap = deflateBound(&zs, len) + 64;
        unsigned char *out = malloc(cap);
        if (!out) {
                deflateEnd(&zs);
                return ss_err_set(err, SS_ENOMEM, "out of memory");
        }
        size_t n = deflate_piece(&zs, header, len, out, cap, false);
        if (n == 0)
                rc = ss_err_set(err, SS_EIO, "%s: zlib deflate failed", w->path);
        else
                rc = write_all(w->fd, w->path, out, n, err);
        deflateEnd(&zs);
        free(out);
        w->crc = (uint32_t)crc32(0, (const unsigned char *)header, (uInt)len);
        w->in_len = len;
        return rc;
}

static int write_gzip_trailer(struct writer *w, struct ss_err *err)
{
        /* An empty final block ends the deflate data after the last sync flush. */
        z_stream zs;
        unsigned char tail[64];
        if (init_deflate(&zs, w->level) != 0)
                return ss_err_set(err, SS_ENOMEM, "cannot initialise zlib");
        size_t n = deflate_piece(&zs, "", 0, tail, sizeof tail - 8, true);
        deflateEnd(&zs);
        if (n == 0)
                return ss_err_set(err, SS_EIO, "%s: zlib deflate failed", w->path);
        uint32_t crc = w->crc, isize = (uint32_t)w->in_len; /* ISIZE is the length mod 2^32 */
        for (int i = 0; i < 4; i++)
                tail[n + i] = (unsigned char)(crc >> (8 * i));
        for (int i = 0; i < 4; i++)
                tail[n + 4 + i] = (unsigned char)(isize >> (8 * i));
        return write_all(w->fd, w->path, tail, n + 8, err);
}

/* ------------------------------------------------------------------------ */
/* Entry point                                                               */
/* ------------------------------------------------------------------------ */

int ss__gen_write_chunks(const char *path, bool gzip, int gzip_level, bool progress,
                         const char *header, uint64_t nchunks, size_t chunk_cap, unsigned threads,
                         ss__gen_chunk_fn fn, void *ctx, struct ss_err *err)
{
        struct writer w = {
            .path = path,
            .fd = -1,
            .gzip = gzip,
            .level = gzip_level,
            .progress = progress && nchunks >= 64, /* small files need no progress */
            .nchunks = nchunks,
            .cap = chunk_cap,
            .threads = threads ? threads : 1,
            .fn = fn,
            .ctx = ctx,
            .last_tenth = 0,
        };
        ss_err_clear(&w.err);
        if (w.threads > nchunks && nchunks > 0)
                w.threads = (unsigned)nchunks;
        if (gzip && (gzip_level < 1 || gzip_level > 9))
                return ss_err_set(err, SS_EINVAL, "gzip level %d is not in 1..9", gzip_level);

        char *tmp = NULL;
        int rc = SS_OK;
        if (path) {
                size_t len = strlen(path) + 32;
                tmp = malloc(len);
                if (!tmp)
                        return ss_err_set(err, SS_ENOMEM, "out of memory");
                snprintf(tmp, len, "%s.tmp%ld", path, (long)getpid());
                w.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (w.fd < 0) {
                        rc =
                            ss_err_set(err, SS_EIO, "%s: cannot create: %s", path, strerror(errno));
                        free(tmp);
                        return rc;
                }
                rc = gzip ? write_gzip_header(&w, header, err)
                          : write_all(w.fd, path, header, strlen(header), err);
                if (rc != SS_OK)
                        goto fail;
        }

        pthread_mutex_init(&w.mu, NULL);
        pthread_cond_init(&w.turn, NULL);
        struct worker *workers = calloc(w.threads, sizeof *workers);
        if (!workers) {
                rc = ss_err_set(err, SS_ENOMEM, "out of memory");
                goto fail_sync;
        }
        unsigned started = 0;
        for (unsigned t = 0; t < w.threads; t++) {
                workers[t].w = &w;
                workers[t].index = t;
                if (pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]) != 0) {
                        struct ss_err e;
                        ss_err_set(&e, SS_ENOMEM, "cannot start a thread");
                        pthread_mutex_lock(&w.mu);
                        fail_locked(&w, SS_ENOMEM, &e);
                        pthread_mutex_unlock(&w.mu);
                        break;
                }
                started++;
        }
        for (unsigned t = 0; t < started; t++)
                pthread_join(workers[t].tid, NULL);
        free(workers);
        if (w.status != SS_OK) {
                rc = w.status;
                if (err)
                        *err = w.err;
                goto fail_sync;
        }
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.turn);

        if (!path)
                return SS_OK;
        if (gzip && (rc = write_gzip_trailer(&w, err)) != SS_OK)
                goto fail;
        if (close(w.fd) != 0) {
                w.fd = -1;
                rc = ss_err_set(err, SS_EIO, "%s: write failed: %s", path, strerror(errno));
                goto fail;
        }
        w.fd = -1;
        if (rename(tmp, path) != 0) {
                rc = ss_err_set(err, SS_EIO, "%s: cannot rename into place: %s", path,
                                strerror(errno));
                goto fail;
        }
        free(tmp);
        return SS_OK;

fail_sync:
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.turn);
fail:
        if (w.fd >= 0)
                close(w.fd);
        if (tmp) {
                unlink(tmp);
                free(tmp);
        }
        return rc;
}
