/* Readers for the DIMACS shortest-path formats (.gr, .co, .ss, .p2p).
 *
 * The input is read through zlib's gz* interface, which inflates gzip files
 * and passes plain files through unchanged, in large chunks into one buffer
 * (gzip input is inflated on a second thread, overlapping the parse). Lines
 * are found with memchr and numbers are parsed by hand: a USA-size file has
 * tens of millions of lines, and a sscanf per line would cost more than the
 * inflate itself.
 *
 * Every check names the file and the line. The buffer bounds every line, so
 * no input can make a reader run past it; a comment line longer than the
 * buffer is skipped piece by piece, any other over-long line is an error.
 */
#include "io/dimacs.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* Largest read buffer, which is also the longest line accepted (comments
 * aside). Small files start with a smaller buffer, grown when a line needs it. */
#define SS__DIMACS_BUF     (4u << 20)
#define SS__DIMACS_BUF_MIN (64u << 10)
/* First allocation for a list whose length comes from a header: a header may
 * lie, so we never trust it for more than this before the lines arrive. */
#define SS__DIMACS_FIRST_CAP (1u << 20)
/* Nodes a .gr file may declare beyond the 2M that its M arcs can touch
 * (dimacs.h). */
#define SS__DIMACS_MAX_ISOLATED (1u << 26)

/* ------------------------------------------------------------------------ */
/* Line reader                                                               */
/* ------------------------------------------------------------------------ */

/* Compressed input is inflated by a second thread while this one parses:
 * inflating costs about as much as parsing, so the two overlap. The thread
 * hands over fixed chunks through a small ring. */
#define SS__INFLATE_CHUNK (256u << 10)
#define SS__INFLATE_SLOTS 8u

struct ss__chunk {
        char *data;
        size_t len; /* bytes of data; 0 marks the end (clean or not) */
        int zerr;   /* gzerror() code at the end, Z_OK for a clean end */
        int sys_errno;
        char zmsg[128];
        int64_t offset; /* compressed bytes consumed, for progress */
};

struct ss__inflater {
        pthread_t thread;
        pthread_mutex_t mu;
        pthread_cond_t cv;
        gzFile gz;
        struct ss__chunk slot[SS__INFLATE_SLOTS];
        uint64_t produced, consumed; /* chunks handed over and given back */
        size_t taken;                /* bytes of the current chunk already copied */
        bool stop;
};

struct ss__reader {
        gzFile gz;
        struct ss__inflater *inf; /* NULL: read gz in this thread */
        const char *path;
        char *buf;
        size_t cap; /* size of buf */
        size_t len; /* bytes in buf */
        size_t pos; /* start of the next line */
        bool eof;
        uint64_t line; /* number of the line last returned, 1-based */
        uint64_t file_size;
        const struct ss_progress *progress;
        int last_percent;
        struct ss_err *err;
        bool compressed;           /* gzip input, not plain text */
        bool stream_failed;        /* the error came from the gzip layer */
        char cause[SS_ERRMSG_MAX]; /* the last error's cause, without FILE:LINE */
};

/* Reads into buf at most want bytes; on a return of 0 or less, records the
 * stream's state in c (zerr Z_OK: a clean end). */
static int gz_read_state(gzFile gz, char *buf, unsigned want, struct ss__chunk *c)
{
        errno = 0;
        int got = gzread(gz, buf, want);
        c->zerr = Z_OK;
        c->zmsg[0] = '\0';
        c->sys_errno = 0;
        if (got <= 0) {
                int e = errno;
                const char *msg = gzerror(gz, &c->zerr);
                if (got < 0 && c->zerr == Z_OK)
                        c->zerr = Z_ERRNO;
                c->sys_errno = e;
                snprintf(c->zmsg, sizeof(c->zmsg), "%s", msg ? msg : "");
        }
        return got;
}

static void *inflate_main(void *arg)
{
        struct ss__inflater *f = arg;
        for (;;) {
                pthread_mutex_lock(&f->mu);
                while (f->produced - f->consumed == SS__INFLATE_SLOTS && !f->stop)
                        pthread_cond_wait(&f->cv, &f->mu);
                bool stop = f->stop;
                pthread_mutex_unlock(&f->mu);
                if (stop)
                        return NULL;
                /* The slot is ours until produced moves past it. */
                struct ss__chunk *c = &f->slot[f->produced % SS__INFLATE_SLOTS];
                int got = gz_read_state(f->gz, c->data, SS__INFLATE_CHUNK, c);
                c->len = got > 0 ? (size_t)got : 0;
                c->offset = (int64_t)gzoffset(f->gz);
                pthread_mutex_lock(&f->mu);
                f->produced++;
                pthread_cond_broadcast(&f->cv);
                pthread_mutex_unlock(&f->mu);
                if (got <= 0)
                        return NULL; /* the end, clean or not, is in the slot */
        }
}

static void inflater_free(struct ss__inflater *f)
{
        for (unsigned i = 0; i < SS__INFLATE_SLOTS; i++)
                free(f->slot[i].data);
        free(f);
}

/* Starts the inflating thread on gz; returns NULL (and the caller reads gz
 * itself) when memory or a thread cannot be had. */
static struct ss__inflater *inflater_start(gzFile gz)
{
        struct ss__inflater *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        f->gz = gz;
        for (unsigned i = 0; i < SS__INFLATE_SLOTS; i++) {
                f->slot[i].data = malloc(SS__INFLATE_CHUNK);
                if (!f->slot[i].data) {
                        inflater_free(f);
                        return NULL;
                }
        }
        pthread_mutex_init(&f->mu, NULL);
        pthread_cond_init(&f->cv, NULL);
        if (pthread_create(&f->thread, NULL, inflate_main, f) != 0) {
                pthread_mutex_destroy(&f->mu);
                pthread_cond_destroy(&f->cv);
                inflater_free(f);
                return NULL;
        }
        return f;
}

static void inflater_stop(struct ss__inflater *f)
{
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->cv);
        inflater_free(f);
}

/* Copies up to want bytes from the inflater into out, waiting for a chunk.
 * Returns the count, or 0 at the end with the end's state in *end. */
static size_t inflater_take(struct ss__inflater *f, char *out, size_t want, struct ss__chunk *end)
{
        pthread_mutex_lock(&f->mu);
        while (f->produced == f->consumed)
                pthread_cond_wait(&f->cv, &f->mu);
        pthread_mutex_unlock(&f->mu);
        struct ss__chunk *c = &f->slot[f->consumed % SS__INFLATE_SLOTS];
        end->offset = c->offset;
        if (c->len == 0) {
                *end = *c; /* the end stays in its slot: later calls see it again */
                end->data = NULL;
                return 0;
        }
        size_t k = c->len - f->taken < want ? c->len - f->taken : want;
        memcpy(out, c->data + f->taken, k);
        f->taken += k;
        if (f->taken == c->len) {
                f->taken = 0;
                pthread_mutex_lock(&f->mu);
                f->consumed++;
                pthread_cond_broadcast(&f->cv);
                pthread_mutex_unlock(&f->mu);
        }
        return k;
}

/* Formats an error as "FILE:LINE: cause" and returns code. */
static int __attribute__((format(printf, 3, 4)))
rd_fail(struct ss__reader *r, int code, const char *fmt, ...)
{
        char cause[SS_ERRMSG_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cause, sizeof(cause), fmt, ap);
        va_end(ap);
        snprintf(r->cause, sizeof(r->cause), "%s", cause);
        return ss_err_set(r->err, code, "%s:%" PRIu64 ": %s", r->path, r->line, cause);
}

/* Reports progress at each new percent; offset is the compressed bytes
 * consumed so far (gzoffset), which works for plain and gzip input alike. */
static void rd_progress(struct ss__reader *r, int64_t offset, bool done)
{
        if (!r->progress || !r->progress->fn)
                return;
        double f = 1.0;
        if (!done) {
                if (r->file_size == 0 || offset < 0)
                        return;
                f = (double)offset / (double)r->file_size;
                if (f > 1.0)
                        f = 1.0;
        }
        int percent = (int)(f * 100.0);
        if (percent <= r->last_percent)
                return;
        r->last_percent = percent;
        r->progress->fn(r->progress->arg, r->path, f);
}

static int rd_open(struct ss__reader *r, const char *path, const struct ss_progress *progress,
                   struct ss_err *err)
{
        memset(r, 0, sizeof(*r));
        r->path = path;
        r->err = err;
        r->progress = progress;
        r->last_percent = -1;
        errno = 0;
        r->gz = gzopen(path, "rb");
        if (!r->gz) {
                int e = errno;
                return ss_err_set(err, e ? SS_EIO : SS_ENOMEM, "%s: cannot open: %s", path,
                                  e ? strerror(e) : "out of memory");
        }
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
                r->file_size = (uint64_t)st.st_size;
        gzbuffer(r->gz, 256u << 10);
        /* A plain file needs no more buffer than its size; compressed input
         * of unknown length gets the largest. */
        r->cap = SS__DIMACS_BUF;
        if (gzdirect(r->gz) && r->file_size < SS__DIMACS_BUF)
                r->cap = r->file_size < SS__DIMACS_BUF_MIN ? SS__DIMACS_BUF_MIN
                                                           : (size_t)r->file_size + 1;
        r->compressed = !gzdirect(r->gz);
        if (r->compressed)
                r->inf = inflater_start(r->gz);
        r->buf = malloc(r->cap);
        if (!r->buf) {
                if (r->inf)
                        inflater_stop(r->inf);
                r->inf = NULL;
                gzclose(r->gz);
                r->gz = NULL;
                return ss_err_set(err, SS_ENOMEM, "%s: out of memory for the read buffer", path);
        }
        return SS_OK;
}

static void rd_close(struct ss__reader *r)
{
        if (r->inf)
                inflater_stop(r->inf);
        r->inf = NULL;
        if (r->gz)
                gzclose(r->gz);
        free(r->buf);
        r->gz = NULL;
        r->buf = NULL;
}

/* zlib's messages repeat the path ("PATH: incorrect data check"); ours
 * already start with it. */
static const char *zmsg_cause(const struct ss__reader *r, const char *msg)
{
        size_t n = strlen(r->path);
        if (strncmp(msg, r->path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
                msg += n + 2;
        return msg[0] ? msg : "read failed";
}

/* Reads more bytes after buf[len]. An empty read is followed by a check of
 * the stream state: zlib reports a truncated gzip stream as end of input and
 * only gzerror() tells it apart from a clean end. */
static int rd_fill(struct ss__reader *r)
{
        size_t want = r->cap - r->len;
        struct ss__chunk st;
        size_t got;
        if (r->inf) {
                got = inflater_take(r->inf, r->buf + r->len, want, &st);
        } else {
                int k = gz_read_state(r->gz, r->buf + r->len, (unsigned)want, &st);
                got = k > 0 ? (size_t)k : 0;
                if (k < 0 && st.zerr == Z_OK)
                        st.zerr = Z_ERRNO;
                st.offset = (int64_t)gzoffset(r->gz);
        }
        if (got == 0 && st.zerr != Z_OK) {
                /* The line being read when the stream broke is the next one. */
                r->line++;
                r->stream_failed = true;
                if (st.zerr == Z_ERRNO)
                        return rd_fail(r, SS_EIO, "read error: %s",
                                       st.sys_errno ? strerror(st.sys_errno)
                                                    : zmsg_cause(r, st.zmsg));
                if (st.zerr == Z_MEM_ERROR)
                        return rd_fail(r, SS_ENOMEM, "out of memory while decompressing");
                if (st.zerr == Z_BUF_ERROR)
                        return rd_fail(r, SS_EPARSE,
                                       "truncated gzip stream (unexpected end of file)");
                return rd_fail(r, SS_EPARSE, "corrupt gzip stream: %s", zmsg_cause(r, st.zmsg));
        }
        if (got == 0)
                r->eof = true;
        r->len += got;
        rd_progress(r, st.offset, false);
        return SS_OK;
}

/* After a parse error in gzip input, reads the stream to its end: corrupt
 * deflate data often inflates to garbled text that fails to parse before zlib
 * reaches the check that names the real cause. If the stream turns out to be
 * damaged, the error says so. Returns the code to report. */
static int rd_recheck(struct ss__reader *r, int rc)
{
        if (rc != SS_EPARSE || !r->compressed || r->stream_failed)
                return rc;
        struct ss__chunk st;
        size_t got;
        do {
                if (r->inf) {
                        got = inflater_take(r->inf, r->buf, r->cap, &st);
                } else {
                        int k = gz_read_state(r->gz, r->buf, (unsigned)r->cap, &st);
                        got = k > 0 ? (size_t)k : 0;
                        if (k < 0 && st.zerr == Z_OK)
                                st.zerr = Z_ERRNO;
                }
        } while (got > 0);
        if (st.zerr == Z_OK || st.zerr == Z_ERRNO || st.zerr == Z_MEM_ERROR)
                return rc;
        char first[sizeof(r->cause)];
        memcpy(first, r->cause, sizeof(first));
        return rd_fail(r, SS_EPARSE, "%s gzip stream (%s); the garbled text first failed here: %s",
                       st.zerr == Z_BUF_ERROR ? "truncated" : "corrupt", zmsg_cause(r, st.zmsg),
                       first);
}

/* Returns 1 with the next line in [*s, *e) (newline excluded), 0 at the end
 * of input, or a negative code with err set. */
static int rd_line(struct ss__reader *r, const char **s, const char **e)
{
        for (;;) {
                char *start = r->buf + r->pos;
                size_t avail = r->len - r->pos;
                char *nl = avail ? memchr(start, '\n', avail) : NULL;
                if (nl) {
                        r->pos += (size_t)(nl - start) + 1;
                        r->line++;
                        *s = start;
                        *e = nl;
                        return 1;
                }
                if (r->eof) {
                        if (avail == 0)
                                return 0;
                        r->pos = r->len; /* last line without a newline */
                        r->line++;
                        *s = start;
                        *e = start + avail;
                        return 1;
                }
                if (r->pos > 0) {
                        memmove(r->buf, start, avail);
                        r->len = avail;
                        r->pos = 0;
                }
                if (r->len == r->cap && r->cap < SS__DIMACS_BUF) {
                        size_t cap = r->cap * 2 < SS__DIMACS_BUF ? r->cap * 2 : SS__DIMACS_BUF;
                        char *b = realloc(r->buf, cap);
                        if (!b) {
                                r->line++;
                                return rd_fail(r, SS_ENOMEM, "out of memory for a long line");
                        }
                        r->buf = b;
                        r->cap = cap;
                }
                if (r->len == r->cap) {
                        /* A full buffer without a newline. A comment may be
                         * any length: keep its 'c' and drop the rest. */
                        size_t i = 0;
                        while (i < r->len && (r->buf[i] == ' ' || r->buf[i] == '\t'))
                                i++;
                        if (i < r->len && r->buf[i] == 'c') {
                                r->buf[0] = 'c';
                                r->len = 1;
                        } else {
                                r->line++;
                                return rd_fail(r, SS_EPARSE, "line longer than %u bytes",
                                               SS__DIMACS_BUF);
                        }
                }
                int rc = rd_fill(r);
                if (rc < 0)
                        return rc;
        }
}

/* ------------------------------------------------------------------------ */
/* Tokens and numbers                                                        */
/* ------------------------------------------------------------------------ */

static inline bool is_blank(char c)
{
        /* \r makes Windows line endings harmless; \v and \f cost nothing. */
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

struct ss__tok {
        const char *s, *e;
};

/* Returns the next blank-separated token of [*p, end), or an empty one. */
static inline struct ss__tok next_tok(const char **p, const char *end)
{
        const char *c = *p;
        while (c < end && is_blank(*c))
                c++;
        struct ss__tok t = {c, c};
        while (c < end && !is_blank(*c))
                c++;
        t.e = c;
        *p = c;
        return t;
}

static inline bool tok_empty(struct ss__tok t)
{
        return t.s == t.e;
}

static bool tok_is(struct ss__tok t, const char *word)
{
        size_t n = strlen(word);
        return (size_t)(t.e - t.s) == n && memcmp(t.s, word, n) == 0;
}

/* Copies a token for a message: at most 32 bytes, non-printable bytes as '?'. */
static const char *tok_show(struct ss__tok t, char out[48])
{
        size_t n = (size_t)(t.e - t.s), k = 0;
        for (size_t i = 0; i < n && i < 32; i++) {
                unsigned char c = (unsigned char)t.s[i];
                out[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
        }
        if (n > 32) {
                memcpy(out + k, "...", 3);
                k += 3;
        }
        out[k] = '\0';
        return out;
}

enum num_status { NUM_OK, NUM_MISSING, NUM_NOT_INT, NUM_NEGATIVE, NUM_OVERFLOW };

/* Parses an unsigned decimal that must not exceed max. A leading '-' before
 * digits is reported as NUM_NEGATIVE so that the caller can say so. */
static enum num_status parse_u64(struct ss__tok t, uint64_t max, uint64_t *out)
{
        const char *c = t.s;
        if (c == t.e)
                return NUM_MISSING;
        bool neg = false;
        if (*c == '-' || *c == '+') {
                neg = *c == '-';
                c++;
                if (c == t.e)
                        return NUM_NOT_INT;
        }
        uint64_t v = 0;
        bool over = false;
        for (; c < t.e; c++) {
                unsigned d = (unsigned)(unsigned char)*c - '0';
                if (d > 9)
                        return NUM_NOT_INT;
                over |= __builtin_mul_overflow(v, 10, &v);
                over |= __builtin_add_overflow(v, d, &v);
        }
        if (neg && (v != 0 || over))
                return NUM_NEGATIVE;
        if (over || v > max)
                return NUM_OVERFLOW;
        *out = v;
        return NUM_OK;
}

/* Parses a signed decimal that fits int32. */
static enum num_status parse_i32(struct ss__tok t, int32_t *out)
{
        if (tok_empty(t))
                return NUM_MISSING;
        bool neg = *t.s == '-';
        struct ss__tok mag = t;
        if (neg || *t.s == '+')
                mag.s++;
        if (tok_empty(mag) || *mag.s == '-' || *mag.s == '+')
                return NUM_NOT_INT;
        uint64_t v;
        enum num_status st = parse_u64(mag, neg ? (uint64_t)INT32_MAX + 1 : INT32_MAX, &v);
        if (st != NUM_OK)
                return st;
        *out = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
        return NUM_OK;
}

/* Turns a failed number into an error message about `what`. */
static int num_fail(struct ss__reader *r, enum num_status st, const char *what, struct ss__tok t,
                    uint64_t max)
{
        char show[48];
        switch (st) {
        case NUM_MISSING:
                return rd_fail(r, SS_EPARSE, "missing %s", what);
        case NUM_NOT_INT:
                return rd_fail(r, SS_EPARSE, "%s \"%s\" is not an integer", what,
                               tok_show(t, show));
        case NUM_NEGATIVE:
                return rd_fail(r, SS_EPARSE, "%s %s is negative", what, tok_show(t, show));
        case NUM_OVERFLOW:
                return rd_fail(r, SS_EPARSE, "%s %s is too large (at most %" PRIu64 ")", what,
                               tok_show(t, show), max);
        default:
                return rd_fail(r, SS_EPARSE, "bad %s", what);
        }
}

/* Parses a 1-based node id in 1..n and returns it 0-based in *v. */
static int parse_node(struct ss__reader *r, const char **p, const char *end, uint32_t n,
                      const char *what, uint32_t *v)
{
        struct ss__tok t = next_tok(p, end);
        uint64_t id;
        enum num_status st = parse_u64(t, UINT64_MAX, &id);
        if (st == NUM_OK && (id == 0 || id > n)) {
                char show[48];
                return rd_fail(r, SS_EPARSE, "%s %s is outside 1..%" PRIu32, what,
                               tok_show(t, show), n);
        }
        if (st == NUM_NEGATIVE || st == NUM_OVERFLOW) {
                char show[48];
                return rd_fail(r, SS_EPARSE, "%s %s is outside 1..%" PRIu32, what,
                               tok_show(t, show), n);
        }
        if (st != NUM_OK)
                return num_fail(r, st, what, t, n);
        *v = (uint32_t)(id - 1);
        return SS_OK;
}

/* Fails when anything but blanks follows on the line. */
static int expect_end(struct ss__reader *r, const char **p, const char *end, const char *after)
{
        struct ss__tok t = next_tok(p, end);
        if (tok_empty(t))
                return SS_OK;
        char show[48];
        return rd_fail(r, SS_EPARSE, "unexpected \"%s\" after the %s", tok_show(t, show), after);
}

/* The kind of a line, from its first token: 'c', 'p', 'a', ..., 0 for a blank
 * line, or -1 for anything else (the token is left in *t for the message). */
static int line_kind(const char **p, const char *end, struct ss__tok *t)
{
        *t = next_tok(p, end);
        if (tok_empty(*t))
                return 0;
        if (*t->s == 'c')
                return 'c';                    /* comments need no blank after the 'c' */
        if (t->e - t->s != 1 || *t->s == '\0') /* a NUL is no blank line */
                return -1;
        return (unsigned char)*t->s;
}

static int unknown_line(struct ss__reader *r, struct ss__tok t, const char *expected)
{
        char show[48];
        return rd_fail(r, SS_EPARSE, "unknown line type \"%s\" (expected %s)", tok_show(t, show),
                       expected);
}

/* Grows a malloc'd array of elem-sized entries from *cap to at least need,
 * doubling, but never past limit (the count a header announced). */
static int grow(void **arr, uint64_t *cap, uint64_t need, uint64_t limit, size_t elem)
{
        if (need <= *cap)
                return SS_OK;
        uint64_t c = *cap ? *cap : 1024;
        while (c < need)
                c *= 2;
        if (c > limit)
                c = limit;
        if (c < need || c > SIZE_MAX / elem)
                return SS_ENOMEM;
        void *p = realloc(*arr, (size_t)(c * elem));
        if (!p)
                return SS_ENOMEM;
        *arr = p;
        *cap = c;
        return SS_OK;
}

/* The first allocation for a list announced as `announced` entries. */
static uint64_t first_cap(uint64_t announced)
{
        return announced < SS__DIMACS_FIRST_CAP ? announced : SS__DIMACS_FIRST_CAP;
}

/* ------------------------------------------------------------------------ */
/* Problem lines                                                             */
/* ------------------------------------------------------------------------ */

/* Parses the rest of a problem line `p [aux] sp WORD COUNT`, where `aux`
 * is optional for auxiliary files (the challenge's own sample .co omits it)
 * and absent for WORD == NULL (`p sp N M`, the graph). */
static int parse_aux_problem(struct ss__reader *r, const char **p, const char *end,
                             const char *word, const char *form, uint64_t max, uint64_t *count)
{
        struct ss__tok t = next_tok(p, end);
        if (tok_is(t, "aux"))
                t = next_tok(p, end);
        if (!tok_is(t, "sp"))
                return rd_fail(r, SS_EPARSE, "problem line must read \"%s\"", form);
        t = next_tok(p, end);
        if (!tok_is(t, word))
                return rd_fail(r, SS_EPARSE, "problem line must read \"%s\"", form);
        t = next_tok(p, end);
        enum num_status st = parse_u64(t, max, count);
        if (st != NUM_OK)
                return num_fail(r, st, "count in the problem line", t, max);
        return expect_end(r, p, end, "problem line");
}

static int dup_problem(struct ss__reader *r, uint64_t first)
{
        return rd_fail(r, SS_EPARSE, "duplicate problem line (the first is on line %" PRIu64 ")",
                       first);
}

static int before_problem(struct ss__reader *r, char kind)
{
        return rd_fail(r, SS_EPARSE, "'%c' line before the problem line", kind);
}

static int no_problem(struct ss__reader *r, const char *form)
{
        if (r->line == 0)
                return rd_fail(r, SS_EPARSE, "empty file: no problem line \"%s\"", form);
        return rd_fail(r, SS_EPARSE, "no problem line \"%s\"", form);
}

/* ------------------------------------------------------------------------ */
/* .gr                                                                       */
/* ------------------------------------------------------------------------ */

/* Grows the arc arrays geometrically, but never past the announced count, so
 * that a truthful header ends with no slack and a lying one costs nothing. */
static int arcs_grow(struct ss_arcs *a, uint64_t limit)
{
        uint64_t c = a->cap < 1024 ? 1024 : a->cap * 2;
        return ss_arcs_reserve(a, c < limit ? c : limit);
}

int ss_dimacs_read_gr(const char *path, struct ss_arcs *out, const struct ss_progress *progress,
                      struct ss_err *err)
{
        static const char form[] = "p sp N M";
        struct ss__reader r;
        memset(out, 0, sizeof(*out));
        int rc = rd_open(&r, path, progress, err);
        if (rc < 0)
                return rc;

        bool have_problem = false;
        uint64_t problem_line = 0, m_announced = 0;
        uint32_t n = 0;
        const char *s, *e;
        while ((rc = rd_line(&r, &s, &e)) > 0) {
                const char *p = s;
                /* Fast path for the common arc line "a U V W". */
                struct ss__tok t;
                int kind =
                    (e - s >= 2 && s[0] == 'a' && s[1] == ' ') ? (p++, 'a') : line_kind(&p, e, &t);
                if (kind == 'a') {
                        if (!have_problem) {
                                rc = before_problem(&r, 'a');
                                break;
                        }
                        uint32_t u, v;
                        if ((rc = parse_node(&r, &p, e, n, "tail node", &u)) < 0 ||
                            (rc = parse_node(&r, &p, e, n, "head node", &v)) < 0)
                                break;
                        struct ss__tok wt = next_tok(&p, e);
                        uint64_t w;
                        enum num_status st = parse_u64(wt, SS_MAX_WEIGHT, &w);
                        if (st == NUM_NEGATIVE) {
                                char show[48];
                                rc = rd_fail(&r, SS_EPARSE,
                                             "negative weight %s: non-negative weights are "
                                             "required",
                                             tok_show(wt, show));
                                break;
                        }
                        if (st != NUM_OK) {
                                rc = num_fail(&r, st, "weight", wt, SS_MAX_WEIGHT);
                                break;
                        }
                        if ((rc = expect_end(&r, &p, e, "arc")) < 0)
                                break;
                        if (out->m == m_announced) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "more arcs than the %" PRIu64
                                             " announced on line %" PRIu64,
                                             m_announced, problem_line);
                                break;
                        }
                        if (out->m == out->cap && arcs_grow(out, m_announced) < 0) {
                                rc = rd_fail(&r, SS_ENOMEM, "out of memory for %" PRIu64 " arcs",
                                             out->m + 1);
                                break;
                        }
                        out->tail[out->m] = u;
                        out->head[out->m] = v;
                        out->w[out->m] = (uint32_t)w;
                        out->m++;
                } else if (kind == 'c' || kind == 0) {
                        continue;
                } else if (kind == 'p') {
                        if (have_problem) {
                                rc = dup_problem(&r, problem_line);
                                break;
                        }
                        t = next_tok(&p, e);
                        if (!tok_is(t, "sp")) {
                                rc = rd_fail(&r, SS_EPARSE, "problem line must read \"%s\"", form);
                                break;
                        }
                        uint64_t nn;
                        t = next_tok(&p, e);
                        enum num_status st = parse_u64(t, SS_MAX_NODES, &nn);
                        if (st != NUM_OK) {
                                rc = num_fail(&r, st, "node count N", t, SS_MAX_NODES);
                                break;
                        }
                        if (nn == 0) {
                                rc = rd_fail(&r, SS_EPARSE, "node count N is 0");
                                break;
                        }
                        t = next_tok(&p, e);
                        st = parse_u64(t, UINT64_MAX / 2, &m_announced);
                        if (st != NUM_OK) {
                                rc = num_fail(&r, st, "arc count M", t, UINT64_MAX / 2);
                                break;
                        }
                        if ((rc = expect_end(&r, &p, e, "problem line")) < 0)
                                break;
                        /* The CSR and every query workspace cost tens of bytes
                         * per node, allocated from N alone; only the arcs are
                         * bounded by the file. Nodes beyond the 2M that arcs
                         * can touch are isolated, so cap those, lest a lying
                         * header ("p sp 4000000000 1") exhaust memory. */
                        if (nn > SS__DIMACS_MAX_ISOLATED && m_announced < nn &&
                            (nn - SS__DIMACS_MAX_ISOLATED + 1) / 2 > m_announced) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "node count N %" PRIu64 " is too large for %" PRIu64
                                             " arcs (at most 2*M + %u nodes)",
                                             nn, m_announced, SS__DIMACS_MAX_ISOLATED);
                                break;
                        }
                        n = (uint32_t)nn;
                        have_problem = true;
                        problem_line = r.line;
                        /* Trust M only up to a first allocation; the arcs grow
                         * the arrays as they come. */
                        if (ss_arcs_init(out, n, first_cap(m_announced)) < 0) {
                                rc = rd_fail(&r, SS_ENOMEM, "out of memory for the arc list");
                                break;
                        }
                } else {
                        rc = unknown_line(&r, t, "c, p or a");
                        break;
                }
        }
        if (rc == 0) {
                if (!have_problem)
                        rc = no_problem(&r, form);
                else if (out->m != m_announced)
                        rc = rd_fail(&r, SS_EPARSE,
                                     "only %" PRIu64 " arcs, but the problem line (line %" PRIu64
                                     ") announces %" PRIu64,
                                     out->m, problem_line, m_announced);
        }
        if (rc == 0)
                rd_progress(&r, 0, true);
        rc = rd_recheck(&r, rc);
        rd_close(&r);
        if (rc < 0) {
                ss_arcs_free(out);
                memset(out, 0, sizeof(*out));
                return rc;
        }
        return SS_OK;
}

/* ------------------------------------------------------------------------ */
/* .co                                                                       */
/* ------------------------------------------------------------------------ */

static int coord_fail(struct ss__reader *r, enum num_status st, const char *axis, struct ss__tok t)
{
        char show[48];
        if (st == NUM_MISSING)
                return rd_fail(r, SS_EPARSE, "missing coordinate %s", axis);
        if (st == NUM_NOT_INT)
                return rd_fail(r, SS_EPARSE, "coordinate %s \"%s\" is not an integer", axis,
                               tok_show(t, show));
        return rd_fail(r, SS_EPARSE, "coordinate %s %s does not fit in 32 bits", axis,
                       tok_show(t, show));
}

int ss_dimacs_read_co(const char *path, uint32_t n, int32_t **x, int32_t **y,
                      const struct ss_progress *progress, struct ss_err *err)
{
        static const char form[] = "p aux sp co N";
        struct ss__reader r;
        *x = NULL;
        *y = NULL;
        if (n == 0 || n > SS_MAX_NODES)
                return ss_err_set(err, SS_EINVAL, "%s: bad node count %" PRIu32, path, n);
        int rc = rd_open(&r, path, progress, err);
        if (rc < 0)
                return rc;

        int32_t *xs = malloc((size_t)n * sizeof(*xs));
        int32_t *ys = malloc((size_t)n * sizeof(*ys));
        /* One bit per node: coordinates are any int32, so no value can mark "unset". */
        uint64_t *seen = calloc(((size_t)n + 63) / 64, sizeof(*seen));
        if (!xs || !ys || !seen) {
                rc = ss_err_set(err, SS_ENOMEM, "%s: out of memory for %" PRIu32 " coordinates",
                                path, n);
                goto out;
        }

        bool have_problem = false;
        uint64_t problem_line = 0, count = 0;
        const char *s, *e;
        while ((rc = rd_line(&r, &s, &e)) > 0) {
                const char *p = s;
                struct ss__tok t;
                int kind = line_kind(&p, e, &t);
                if (kind == 'v') {
                        if (!have_problem) {
                                rc = before_problem(&r, 'v');
                                break;
                        }
                        uint32_t id;
                        if ((rc = parse_node(&r, &p, e, n, "node", &id)) < 0)
                                break;
                        int32_t cx, cy;
                        struct ss__tok tx = next_tok(&p, e);
                        enum num_status st = parse_i32(tx, &cx);
                        if (st != NUM_OK) {
                                rc = coord_fail(&r, st, "X", tx);
                                break;
                        }
                        struct ss__tok ty = next_tok(&p, e);
                        st = parse_i32(ty, &cy);
                        if (st != NUM_OK) {
                                rc = coord_fail(&r, st, "Y", ty);
                                break;
                        }
                        if ((rc = expect_end(&r, &p, e, "coordinates")) < 0)
                                break;
                        uint64_t bit = UINT64_C(1) << (id % 64);
                        if (seen[id / 64] & bit) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "coordinates for node %" PRIu64 " given twice",
                                             (uint64_t)id + 1);
                                break;
                        }
                        seen[id / 64] |= bit;
                        xs[id] = cx;
                        ys[id] = cy;
                        count++;
                } else if (kind == 'c' || kind == 0) {
                        continue;
                } else if (kind == 'p') {
                        if (have_problem) {
                                rc = dup_problem(&r, problem_line);
                                break;
                        }
                        uint64_t nn;
                        if ((rc = parse_aux_problem(&r, &p, e, "co", form, SS_MAX_NODES, &nn)) < 0)
                                break;
                        if (nn != n) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "coordinates for %" PRIu64
                                             " nodes, but the graph has %" PRIu32,
                                             nn, n);
                                break;
                        }
                        have_problem = true;
                        problem_line = r.line;
                } else {
                        rc = unknown_line(&r, t, "c, p or v");
                        break;
                }
        }
        if (rc == 0 && !have_problem)
                rc = no_problem(&r, form);
        if (rc == 0 && count != n) {
                uint32_t first = 0;
                while (seen[first / 64] & (UINT64_C(1) << (first % 64)))
                        first++;
                rc = rd_fail(&r, SS_EPARSE,
                             "no coordinates for node %" PRIu64 " (%" PRIu64 " of %" PRIu32
                             " nodes missing)",
                             (uint64_t)first + 1, (uint64_t)n - count, n);
        }
        if (rc == 0)
                rd_progress(&r, 0, true);
out:
        rc = rd_recheck(&r, rc);
        rd_close(&r);
        free(seen);
        if (rc < 0) {
                free(xs);
                free(ys);
                return rc;
        }
        *x = xs;
        *y = ys;
        return SS_OK;
}

/* ------------------------------------------------------------------------ */
/* .ss and .p2p                                                              */
/* ------------------------------------------------------------------------ */

/* Reads a list of K lines `KIND ID...` with `per` node ids each. */
static int read_node_lines(const char *path, uint32_t n, const char *word, char kind_ch,
                           unsigned per, const char *form, uint32_t **ids, size_t *count,
                           struct ss_err *err)
{
        struct ss__reader r;
        *ids = NULL;
        *count = 0;
        int rc = rd_open(&r, path, NULL, err);
        if (rc < 0)
                return rc;

        uint32_t *list = NULL;
        uint64_t cap = 0, k = 0, announced = 0, problem_line = 0;
        bool have_problem = false;
        static const char *const names[2] = {"source node", "target node"};
        char expected[16];
        snprintf(expected, sizeof(expected), "c, p or %c", kind_ch);
        const char *s, *e;
        while ((rc = rd_line(&r, &s, &e)) > 0) {
                const char *p = s;
                struct ss__tok t;
                int kind = line_kind(&p, e, &t);
                if (kind == kind_ch) {
                        if (!have_problem) {
                                rc = before_problem(&r, kind_ch);
                                break;
                        }
                        if (k == announced) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "more '%c' lines than the %" PRIu64
                                             " announced on line %" PRIu64,
                                             kind_ch, announced, problem_line);
                                break;
                        }
                        if ((k + 1) * per > cap && grow((void **)&list, &cap, (k + 1) * per,
                                                        announced * per, sizeof(*list)) < 0) {
                                rc = rd_fail(&r, SS_ENOMEM, "out of memory");
                                break;
                        }
                        rc = SS_OK;
                        for (unsigned i = 0; i < per && rc == 0; i++)
                                rc = parse_node(&r, &p, e, n, per == 1 ? "node" : names[i],
                                                &list[k * per + i]);
                        if (rc < 0 || (rc = expect_end(&r, &p, e, "node ids")) < 0)
                                break;
                        k++;
                } else if (kind == 'c' || kind == 0) {
                        continue;
                } else if (kind == 'p') {
                        if (have_problem) {
                                rc = dup_problem(&r, problem_line);
                                break;
                        }
                        if ((rc = parse_aux_problem(&r, &p, e, word, form, UINT32_MAX,
                                                    &announced)) < 0)
                                break;
                        have_problem = true;
                        problem_line = r.line;
                        if (grow((void **)&list, &cap, first_cap(announced) * per + 1,
                                 announced * per + 1, sizeof(*list)) < 0) {
                                rc = rd_fail(&r, SS_ENOMEM, "out of memory");
                                break;
                        }
                } else {
                        rc = unknown_line(&r, t, expected);
                        break;
                }
        }
        if (rc == 0 && !have_problem)
                rc = no_problem(&r, form);
        if (rc == 0 && k != announced)
                rc = rd_fail(&r, SS_EPARSE,
                             "only %" PRIu64 " '%c' lines, but the problem line (line %" PRIu64
                             ") announces %" PRIu64,
                             k, kind_ch, problem_line, announced);
        rc = rd_recheck(&r, rc);
        rd_close(&r);
        if (rc < 0) {
                free(list);
                return rc;
        }
        *ids = list;
        *count = (size_t)k;
        return SS_OK;
}

int ss_dimacs_read_ss(const char *path, uint32_t n, uint32_t **sources, size_t *count,
                      struct ss_err *err)
{
        return read_node_lines(path, n, "ss", 's', 1, "p aux sp ss K", sources, count, err);
}

int ss_dimacs_read_p2p(const char *path, uint32_t n, uint32_t **pairs, size_t *count,
                       struct ss_err *err)
{
        return read_node_lines(path, n, "p2p", 'q', 2, "p aux sp p2p K", pairs, count, err);
}

/* ------------------------------------------------------------------------ */
/* Weights files                                                             */
/* ------------------------------------------------------------------------ */

/* Parses the weight of an arc line. */
static int parse_weight(struct ss__reader *r, const char **p, const char *end, uint32_t *w)
{
        struct ss__tok t = next_tok(p, end);
        uint64_t v;
        enum num_status st = parse_u64(t, SS_MAX_WEIGHT, &v);
        if (st == NUM_NEGATIVE) {
                char show[48];
                return rd_fail(r, SS_EPARSE,
                               "negative weight %s: non-negative weights are required",
                               tok_show(t, show));
        }
        if (st != NUM_OK)
                return num_fail(r, st, "weight", t, SS_MAX_WEIGHT);
        *w = (uint32_t)v;
        return SS_OK;
}

/* The optional problem line of a weights file: `p sp N M` with N the
 * graph's node count; M, the arcs that follow, is returned in *m. */
static int parse_weights_problem(struct ss__reader *r, const char **p, const char *end, uint32_t n,
                                 uint64_t *m)
{
        struct ss__tok t = next_tok(p, end);
        if (!tok_is(t, "sp"))
                return rd_fail(r, SS_EPARSE, "problem line must read \"p sp N M\"");
        uint64_t nn;
        t = next_tok(p, end);
        enum num_status st = parse_u64(t, SS_MAX_NODES, &nn);
        if (st != NUM_OK)
                return num_fail(r, st, "node count N", t, SS_MAX_NODES);
        if (nn != n)
                return rd_fail(r, SS_EPARSE,
                               "node count N %" PRIu64 " is not the graph's (%" PRIu32 ")", nn, n);
        t = next_tok(p, end);
        st = parse_u64(t, UINT64_MAX / 2, m);
        if (st != NUM_OK)
                return num_fail(r, st, "arc count M", t, UINT64_MAX / 2);
        return expect_end(r, p, end, "problem line");
}

int ss_dimacs_read_weights(const char *path, uint32_t n, struct ss_weight_change **out,
                           size_t *count, struct ss_err *err)
{
        struct ss__reader r;
        *out = NULL;
        *count = 0;
        int rc = rd_open(&r, path, NULL, err);
        if (rc < 0)
                return rc;
        struct ss_weight_change *list = NULL;
        uint64_t cap = 0, k = 0, announced = UINT64_MAX, problem_line = 0;
        const char *s, *e;
        while ((rc = rd_line(&r, &s, &e)) > 0) {
                const char *p = s;
                struct ss__tok t;
                int kind = line_kind(&p, e, &t);
                if (kind == 'a') {
                        struct ss_weight_change c;
                        if ((rc = parse_node(&r, &p, e, n, "tail node", &c.tail)) < 0 ||
                            (rc = parse_node(&r, &p, e, n, "head node", &c.head)) < 0 ||
                            (rc = parse_weight(&r, &p, e, &c.w)) < 0 ||
                            (rc = expect_end(&r, &p, e, "arc")) < 0)
                                break;
                        if (k == announced) {
                                rc = rd_fail(&r, SS_EPARSE,
                                             "more arcs than the %" PRIu64
                                             " announced on line %" PRIu64,
                                             announced, problem_line);
                                break;
                        }
                        if (grow((void **)&list, &cap, k + 1, announced, sizeof(*list)) < 0) {
                                rc = rd_fail(&r, SS_ENOMEM, "out of memory for %" PRIu64 " arcs",
                                             k + 1);
                                break;
                        }
                        list[k++] = c;
                } else if (kind == 'c' || kind == 0) {
                        continue;
                } else if (kind == 'p') {
                        if (problem_line) {
                                rc = dup_problem(&r, problem_line);
                                break;
                        }
                        if (k) {
                                rc = rd_fail(&r, SS_EPARSE, "problem line after the first arc");
                                break;
                        }
                        if ((rc = parse_weights_problem(&r, &p, e, n, &announced)) < 0)
                                break;
                        problem_line = r.line;
                } else {
                        rc = unknown_line(&r, t, "c, p or a");
                        break;
                }
        }
        if (rc == 0 && problem_line && k != announced)
                rc = rd_fail(&r, SS_EPARSE,
                             "only %" PRIu64 " arcs, but the problem line (line %" PRIu64
                             ") announces %" PRIu64,
                             k, problem_line, announced);
        rc = rd_recheck(&r, rc);
        rd_close(&r);
        if (rc < 0) {
                free(list);
                return rc;
        }
        *out = list;
        *count = (size_t)k;
        return SS_OK;
}
