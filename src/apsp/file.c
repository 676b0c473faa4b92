/* The APSP matrix file (layout in apsp.h).
 *
 * The file holds plain distances, row-major without padding, with all bits
 * set for "unreachable"; in memory a computed matrix may be padded and its
 * distances shifted (apsp.h), so the writer converts rows in batches on the
 * way out. A matrix read back has pitch n and shift 0.
 *
 * The reader trusts nothing: the header CRC, the version, the flags and the
 * file size implied by n are checked before anything is allocated, the
 * payload CRC after the read, and every successor is checked to be a node
 * (or none), so a crafted file cannot send a path walk out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "apsp/internal.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the matrix file stores integers as they sit in memory: little-endian hosts only"
#endif

#define SS__APSP_HEADER    64u
#define SS__APSP_FLAG_SUCC 1u
/* Reads, writes and CRCs work in pieces of about this size. */
#define SS__APSP_IO_CHUNK (16u << 20)

static void put32(unsigned char *p, uint32_t v)
{
        memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
        memcpy(p, &v, 8);
}

static uint32_t get32(const unsigned char *p)
{
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
}

static uint64_t get64(const unsigned char *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}

/* zlib's crc32 takes an unsigned length: feed it in pieces. */
static uint32_t crc_bytes(uint32_t crc, const void *p, uint64_t len)
{
        const unsigned char *b = p;
        while (len > 0) {
                uInt piece = len > (1u << 30) ? (1u << 30) : (uInt)len;
                crc = (uint32_t)crc32(crc, b, piece);
                b += piece;
                len -= piece;
        }
        return crc;
}

static int write_all(int fd, const void *p, uint64_t len)
{
        const char *b = p;
        while (len > 0) {
                size_t piece = len > SS__APSP_IO_CHUNK ? SS__APSP_IO_CHUNK : (size_t)len;
                ssize_t k = write(fd, b, piece);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -1;
                }
                b += k;
                len -= (uint64_t)k;
        }
        return 0;
}

static int read_all(int fd, void *p, uint64_t len)
{
        char *b = p;
        while (len > 0) {
                size_t piece = len > SS__APSP_IO_CHUNK ? SS__APSP_IO_CHUNK : (size_t)len;
                ssize_t k = read(fd, b, piece);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -1;
                }
                if (k == 0)
                        return -1;
                b += k;
                len -= (uint64_t)k;
        }
        return 0;
}

/* Payload bytes for n nodes; false when they overflow 64 bits. */
static bool payload_bytes(uint64_t n, unsigned width, bool succ, uint64_t *out)
{
        if (n > UINT32_MAX)
                return false;
        const uint64_t cells = n * n; /* < 2^64 for n < 2^32 */
        const uint64_t per = width + (succ ? 4u : 0u);
        if (cells > (UINT64_MAX - SS__APSP_HEADER) / per)
                return false;
        *out = cells * per;
        return true;
}

/* Converts rows [r0, r0 + rows) of a's distances (or successors) into the
 * file form in buf; returns the bytes written to buf. */
static size_t encode_rows(const struct ss_apsp *a, uint32_t r0, uint32_t rows, bool succ,
                          unsigned char *buf)
{
        const uint64_t p = a->pitch, n = a->n;
        size_t off = 0;
        for (uint32_t r = r0; r < r0 + rows; r++) {
                if (succ) {
                        memcpy(buf + off, a->succ + r * p, n * 4);
                        off += n * 4;
                } else if (a->width == 2) {
                        /* 16-bit matrices are written with 32-bit entries:
                         * the format keeps two widths. */
                        const uint16_t *s = (const uint16_t *)a->dist + r * p;
                        uint32_t *d = (uint32_t *)(buf + off);
                        for (uint64_t j = 0; j < n; j++)
                                d[j] = s[j] == a->inf ? UINT32_MAX : (uint32_t)s[j] >> a->shift;
                        off += n * 4;
                } else if (a->width == 4) {
                        const uint32_t *s = (const uint32_t *)a->dist + r * p;
                        uint32_t *d = (uint32_t *)(buf + off);
                        for (uint64_t j = 0; j < n; j++)
                                d[j] = s[j] == a->inf ? UINT32_MAX : s[j] >> a->shift;
                        off += n * 4;
                } else {
                        const uint64_t *s = (const uint64_t *)a->dist + r * p;
                        uint64_t *d = (uint64_t *)(buf + off);
                        for (uint64_t j = 0; j < n; j++)
                                d[j] = s[j] == a->inf ? UINT64_MAX : s[j] >> a->shift;
                        off += n * 8;
                }
        }
        return off;
}

int ss_apsp_write(const struct ss_apsp *a, const char *path, struct ss_err *err)
{
        const bool succ = a->succ != NULL;
        const unsigned width = a->width < 4 ? 4 : a->width; /* in the file */
        uint64_t payload;
        if (!payload_bytes(a->n, width, succ, &payload))
                return ss_err_set(err, SS_EINVAL, "%s: %" PRIu32 " nodes do not fit a file", path,
                                  a->n);
        const uint64_t row_max = (uint64_t)a->n * width;
        uint32_t batch = (uint32_t)(SS__APSP_IO_CHUNK / row_max);
        if (batch == 0)
                batch = 1;
        if (batch > a->n)
                batch = a->n;
        unsigned char *buf = malloc(batch * row_max);
        size_t plen = strlen(path);
        char *tmp = malloc(plen + 16);
        if (!buf || !tmp) {
                free(buf);
                free(tmp);
                return ss_err_set(err, SS_ENOMEM, "%s: out of memory", path);
        }
        /* A temporary file renamed over path at the end, so a reader never
         * sees half a matrix. */
        snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
        int fd = mkstemp(tmp);
        if (fd < 0) {
                int rc = ss_err_set(err, SS_EIO, "%s: cannot create a file next to it: %s", path,
                                    strerror(errno));
                free(buf);
                free(tmp);
                return rc;
        }
        unsigned char h[SS__APSP_HEADER] = {0};
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        int failed = write_all(fd, h, sizeof(h)); /* the real header goes in last */
        for (int part = 0; part < (succ ? 2 : 1) && !failed; part++) {
                for (uint32_t r = 0; r < a->n && !failed; r += batch) {
                        const uint32_t rows = a->n - r < batch ? a->n - r : batch;
                        const size_t len = encode_rows(a, r, rows, part == 1, buf);
                        crc = crc_bytes(crc, buf, len);
                        failed = write_all(fd, buf, len);
                }
        }
        memcpy(h, SS_APSP_MAGIC, 8);
        put32(h + 8, SS_APSP_VERSION);
        put32(h + 12, SS__APSP_HEADER);
        put64(h + 16, a->n);
        put32(h + 24, succ ? SS__APSP_FLAG_SUCC : 0);
        put32(h + 28, width);
        put64(h + 32, a->graph_checksum);
        put64(h + 40, SS__APSP_HEADER + payload);
        put32(h + 48, crc);
        put32(h + 60, (uint32_t)crc32(0, h, 60));
        if (!failed)
                failed = pwrite(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h);
        if (!failed) /* mkstemp makes it 0600; a matrix is read by others (the daemon) */
                failed = fchmod(fd, 0644);
        if (!failed)
                failed = fsync(fd);
        int saved = errno;
        if (close(fd) && !failed) {
                failed = 1;
                saved = errno;
        }
        if (!failed && rename(tmp, path)) {
                failed = 1;
                saved = errno;
        }
        free(buf);
        if (failed) {
                unlink(tmp);
                free(tmp);
                return ss_err_set(err, SS_EIO, "%s: write failed: %s", path, strerror(saved));
        }
        free(tmp);
        return SS_OK;
}

bool ss_apsp_probe(const char *path)
{
        char magic[8];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        const bool ok = read_all(fd, magic, sizeof(magic)) == 0 &&
                        memcmp(magic, SS_APSP_MAGIC, sizeof(magic)) == 0;
        close(fd);
        return ok;
}

int ss_apsp_read(const char *path, struct ss_apsp **out, struct ss_err *err)
{
        *out = NULL;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return ss_err_set(err, SS_EIO, "%s: %s", path, strerror(errno));
        struct stat st;
        unsigned char h[SS__APSP_HEADER];
        int rc = SS_OK;
        struct ss_apsp *a = NULL;
        if (fstat(fd, &st) != 0) {
                rc = ss_err_set(err, SS_EIO, "%s: %s", path, strerror(errno));
                goto out;
        }
        if ((uint64_t)st.st_size < SS__APSP_HEADER || read_all(fd, h, sizeof(h))) {
                rc = ss_err_set(err, SS_EFORMAT,
                                "%s: too short for a matrix header (%" PRIu64 " bytes)", path,
                                (uint64_t)st.st_size);
                goto out;
        }
        if (memcmp(h, SS_APSP_MAGIC, 8) != 0) {
                rc = ss_err_set(err, SS_EFORMAT, "%s: not an all-pairs matrix file (bad magic)",
                                path);
                goto out;
        }
        if (get32(h + 60) != (uint32_t)crc32(0, h, 60)) {
                rc = ss_err_set(err, SS_EFORMAT, "%s: header checksum mismatch", path);
                goto out;
        }
        const uint32_t version = get32(h + 8), hsize = get32(h + 12), flags = get32(h + 24);
        const uint32_t width = get32(h + 28);
        const uint64_t n = get64(h + 16), fsize = get64(h + 40);
        if (version != SS_APSP_VERSION || hsize != SS__APSP_HEADER) {
                rc = ss_err_set(err, SS_EFORMAT,
                                "%s: format version %" PRIu32 " (header %" PRIu32
                                " bytes); this build reads version %u",
                                path, version, hsize, SS_APSP_VERSION);
                goto out;
        }
        if ((flags & ~SS__APSP_FLAG_SUCC) || (width != 4 && width != 8) || get32(h + 52) ||
            get32(h + 56)) {
                rc = ss_err_set(err, SS_EFORMAT,
                                "%s: unknown flags 0x%" PRIx32 " or distance width %" PRIu32, path,
                                flags, width);
                goto out;
        }
        const bool succ = flags & SS__APSP_FLAG_SUCC;
        uint64_t payload;
        if (n == 0 || n > SS_MAX_NODES || !payload_bytes(n, width, succ, &payload) ||
            fsize != SS__APSP_HEADER + payload || (uint64_t)st.st_size != fsize) {
                rc = ss_err_set(err, SS_EFORMAT,
                                "%s: %" PRIu64 " bytes, but %" PRIu64 " nodes need %" PRIu64
                                " (the header says %" PRIu64 ")",
                                path, (uint64_t)st.st_size, n,
                                payload_bytes(n, width, succ, &payload) ? SS__APSP_HEADER + payload
                                                                        : UINT64_MAX,
                                fsize);
                goto out;
        }
        a = calloc(1, sizeof(*a));
        if (!a) {
                rc = ss_err_set(err, SS_ENOMEM, "%s: out of memory", path);
                goto out;
        }
        a->n = (uint32_t)n;
        a->pitch = (uint32_t)n;
        a->width = width;
        a->shift = 0;
        a->inf = width == 4 ? UINT32_MAX : UINT64_MAX;
        a->graph_checksum = get64(h + 32);
        const uint64_t cells = n * n;
        a->dist = malloc(cells * width);
        a->succ = succ ? malloc(cells * 4) : NULL;
        if (!a->dist || (succ && !a->succ)) {
                rc = ss_err_set(err, SS_ENOMEM, "%s: no memory for %" PRIu64 " bytes", path,
                                payload);
                goto out;
        }
        errno = 0;
        if (read_all(fd, a->dist, cells * width) || (succ && read_all(fd, a->succ, cells * 4))) {
                rc = ss_err_set(err, SS_EIO, "%s: read failed: %s", path,
                                errno ? strerror(errno) : "short file");
                goto out;
        }
        uint32_t crc = crc_bytes((uint32_t)crc32(0, Z_NULL, 0), a->dist, cells * width);
        if (succ)
                crc = crc_bytes(crc, a->succ, cells * 4);
        if (crc != get32(h + 48)) {
                rc = ss_err_set(err, SS_EFORMAT, "%s: payload checksum mismatch (corrupt file)",
                                path);
                goto out;
        }
        for (uint64_t i = 0; succ && i < cells; i++) {
                if (a->succ[i] >= n && a->succ[i] != SS_NO_NODE) {
                        rc = ss_err_set(err, SS_EFORMAT,
                                        "%s: successor of (%" PRIu64 ", %" PRIu64 ") is %" PRIu32
                                        ", not a node",
                                        path, i / n, i % n, a->succ[i]);
                        goto out;
                }
        }
        a->info.plan.method = SS_APSP_AUTO;
        a->info.plan.width = width;
        a->info.plan.pitch = (uint32_t)n;
out:
        close(fd);
        if (rc) {
                ss_apsp_free(a);
                return rc;
        }
        *out = a;
        return SS_OK;
}
