/* Binary graph snapshots (format in snapshot.h).
 *
 * Header, version 1 (192 bytes, little-endian):
 *     0  magic "SSSPDSNP"             8  u32 version      12  u32 header size
 *    16  u64 N                       24  u64 M           32  u64 flags
 *    40  u32 min_w  44 u32 max_w     48  u32 max_out_degree  52 u32 zero
 *    56  u64 file size
 *    64  five sections {u64 offset, u64 length}: row, col, w, x, y
 *   144  u32 payload CRC-32          148..151 zero
 *   152  u64 CCH section offset      160 u64 CCH section length (version 2;
 *        zero in version 1)          168..187 zero
 *   188  u32 CRC-32 of bytes 0..187
 * Sections start on 64-byte boundaries in the order above; x and y have
 * offset and length 0 when the graph has no coordinates. Version 2 sets
 * flag bit 1 and ends the file with the CCH section (64-byte aligned):
 *
 * CCH section header (128 bytes), offsets from the section's start:
 *     0  magic "SSCCHTOP"             8  u32 section version  12 u32 its header size
 *    16  u64 N                       24  u64 edges (E)
 *    32  three arrays {u64 offset, u64 length}: rank[N], up_first[N+1], up_head[E] (u32)
 *    80  u32 CRC-32 of the arrays    84..123 zero
 *   124  u32 CRC-32 of bytes 0..123
 * Section version 2 carries the metric of the graph's own weights too, so
 * that a load need not customize (seconds on a continent):
 *    32  five arrays {u64 offset, u64 length}: the three above, then
 *        w[2E+2] and middle[2E+2] (u32, as cch/cch.h's metric lays them out,
 *        the last two entries of each all ones)
 *   112  u32 CRC-32 of the arrays    116..123 zero
 *   124  u32 CRC-32 of bytes 0..123
 * The arrays start on 64-byte boundaries; the padding between them is zero
 * and the last ends the file. A section version other than 1 and 2 is
 * skipped (the graph loads without its CCH), so that the layout can change
 * without making the graph unreadable. The payload CRC is
 * zlib's crc32 chained over the sections' bytes (padding excluded, and
 * required to be zero), which is the graph's checksum whether it was parsed
 * from text or read from here.
 *
 * The reader reads the whole file into one 64-byte aligned block that the
 * graph owns, so the arrays point straight into it. It trusts nothing: the
 * header CRC and every size are checked against the file length before the
 * block is allocated, the payload CRC after, and the CSR structure last (a
 * file with a valid CRC can still be crafted, and a bad row offset or head
 * would send a query out of bounds).
 */
#include "io/snapshot.h"

#include "cch/cch.h"
#include "core/cancel.h"
#include "core/log.h"
#include "core/team.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "snapshots store the arrays as they sit in memory: little-endian hosts only"
#endif

#define SS__SNAP_HEADER      192u
#define SS__SNAP_ALIGN       64u
#define SS__SNAP_FLAG_COORDS UINT64_C(1)
#define SS__SNAP_FLAG_CCH    UINT64_C(2)
#define SS__CCH_HEADER       128u
#define SS__SNAP_SECTIONS    5
/* Reads and CRC work in pieces of this size, so progress moves on big files. */
#define SS__SNAP_CHUNK (64u << 20)

enum { SEC_ROW, SEC_COL, SEC_W, SEC_X, SEC_Y };
static const char *const sec_name[SS__SNAP_SECTIONS] = {"row", "col", "w", "x", "y"};

struct ss__snap_header {
        uint32_t version, header_size;
        uint64_t n, m, flags;
        uint32_t min_w, max_w, max_out_degree;
        uint64_t file_size;
        uint64_t off[SS__SNAP_SECTIONS], len[SS__SNAP_SECTIONS];
        uint32_t payload_crc;
        uint64_t cch_off, cch_len; /* version 2 */
};

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

static uint64_t align_up(uint64_t v)
{
        return (v + SS__SNAP_ALIGN - 1) & ~(uint64_t)(SS__SNAP_ALIGN - 1);
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

/* A large span's CRC on every core: zlib's crc32 runs at about 2 GB/s on
 * one, seconds for a continent's snapshot with its CCH. Each part's CRC
 * is taken alone and crc32_combine joins them in order, which gives the
 * CRC of the whole. */
#define SS__CRC_PARTS    64u
#define SS__CRC_PART_MIN (32u << 20)

struct crc_job {
        const unsigned char *p;
        uint64_t len;
        unsigned parts;
        uint32_t crc[SS__CRC_PARTS];
};

static void crc_part(void *arg, unsigned i, unsigned k)
{
        struct crc_job *j = arg;
        for (unsigned q = i; q < j->parts; q += k) {
                uint64_t lo, hi;
                ss_team_share(j->len, q, j->parts, &lo, &hi);
                j->crc[q] = crc_bytes((uint32_t)crc32(0, Z_NULL, 0), j->p + lo, hi - lo);
        }
}

static uint32_t crc_span(uint32_t crc, const void *p, uint64_t len)
{
        uint64_t parts = len / SS__CRC_PART_MIN;
        if (parts > SS__CRC_PARTS)
                parts = SS__CRC_PARTS;
        /* a 32-bit z_off_t cannot give crc32_combine a part's length */
        if (parts < 2 || (sizeof(z_off_t) < sizeof(uint64_t) && len / parts >= INT32_MAX / 2))
                return crc_bytes(crc, p, len);
        struct crc_job j = {.p = p, .len = len, .parts = (unsigned)parts};
        unsigned threads = ss_team_threads(0);
        ss_team_run(threads < j.parts ? threads : j.parts, NULL, crc_part, &j);
        for (unsigned q = 0; q < j.parts; q++) {
                uint64_t lo, hi;
                ss_team_share(len, q, j.parts, &lo, &hi);
                crc = (uint32_t)crc32_combine(crc, j.crc[q], (z_off_t)(hi - lo));
        }
        return crc;
}

static void encode_header(const struct ss__snap_header *h, unsigned char out[SS__SNAP_HEADER])
{
        memset(out, 0, SS__SNAP_HEADER);
        memcpy(out, SS_SNAPSHOT_MAGIC, 8);
        put32(out + 8, h->version);
        put32(out + 12, h->header_size);
        put64(out + 16, h->n);
        put64(out + 24, h->m);
        put64(out + 32, h->flags);
        put32(out + 40, h->min_w);
        put32(out + 44, h->max_w);
        put32(out + 48, h->max_out_degree);
        put64(out + 56, h->file_size);
        for (int i = 0; i < SS__SNAP_SECTIONS; i++) {
                put64(out + 64 + 16 * i, h->off[i]);
                put64(out + 72 + 16 * i, h->len[i]);
        }
        put32(out + 144, h->payload_crc);
        put64(out + 152, h->cch_off);
        put64(out + 160, h->cch_len);
        put32(out + 188, (uint32_t)crc32(0, out, 188));
}

static void decode_header(const unsigned char in[SS__SNAP_HEADER], struct ss__snap_header *h)
{
        h->version = get32(in + 8);
        h->header_size = get32(in + 12);
        h->n = get64(in + 16);
        h->m = get64(in + 24);
        h->flags = get64(in + 32);
        h->min_w = get32(in + 40);
        h->max_w = get32(in + 44);
        h->max_out_degree = get32(in + 48);
        h->file_size = get64(in + 56);
        for (int i = 0; i < SS__SNAP_SECTIONS; i++) {
                h->off[i] = get64(in + 64 + 16 * i);
                h->len[i] = get64(in + 72 + 16 * i);
        }
        h->payload_crc = get32(in + 144);
        h->cch_off = get64(in + 152);
        h->cch_len = get64(in + 160);
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */
/* ------------------------------------------------------------------------ */

static int write_all(int fd, const void *p, uint64_t len)
{
        const char *b = p;
        while (len > 0) {
                size_t piece = len > SS__SNAP_CHUNK ? SS__SNAP_CHUNK : (size_t)len;
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

int ss_snapshot_write(const struct ss_graph *g, const char *path, struct ss_err *err)
{
        if (!g || !g->row || (g->m && (!g->col || !g->w)) || (!g->x != !g->y))
                return ss_err_set(err, SS_EINVAL, "%s: incomplete graph, nothing written", path);

        struct ss__snap_header h = {0};
        h.version = SS_SNAPSHOT_VERSION;
        h.header_size = SS__SNAP_HEADER;
        h.n = g->n;
        h.m = g->m;
        h.flags = g->x ? SS__SNAP_FLAG_COORDS : 0;
        h.min_w = g->min_w;
        h.max_w = g->max_w;
        h.max_out_degree = g->max_out_degree;
        const void *data[SS__SNAP_SECTIONS] = {g->row, g->col, g->w, g->x, g->y};
        h.len[SEC_ROW] = ((uint64_t)g->n + 1) * sizeof(uint64_t);
        h.len[SEC_COL] = g->m * sizeof(uint32_t);
        h.len[SEC_W] = g->m * sizeof(uint32_t);
        h.len[SEC_X] = g->x ? (uint64_t)g->n * sizeof(int32_t) : 0;
        h.len[SEC_Y] = g->y ? (uint64_t)g->n * sizeof(int32_t) : 0;
        uint64_t pos = SS__SNAP_HEADER;
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        for (int i = 0; i < SS__SNAP_SECTIONS; i++) {
                if (i >= SEC_X && !g->x)
                        continue;
                pos = align_up(pos);
                h.off[i] = pos;
                pos += h.len[i];
                crc = crc_bytes(crc, data[i], h.len[i]);
        }
        h.payload_crc = crc;

        /* The CCH section, when g carries one; with the metric of g's
         * weights when g has it in 32 bits. The metric's two end slots are
         * written as all ones, whatever the memory holds. */
        const struct ss_cch *c = ss_cch_of(g);
        const struct ss_cch_metric *m = c ? ss_cch_metric_of(g) : NULL;
        const bool with_metric = m && m->cch == c && !m->wide && m->w32 && m->middle;
        const int narr = with_metric ? 5 : 3;
        static const uint32_t ends[2] = {UINT32_MAX, UINT32_MAX};
        unsigned char cch_hdr[SS__CCH_HEADER];
        const void *cch_data[5] = {NULL, NULL, NULL, NULL, NULL};
        uint64_t cch_aoff[5] = {0}, cch_alen[5] = {0};
        if (c) {
                h.version = SS_SNAPSHOT_VERSION_CCH;
                h.flags |= SS__SNAP_FLAG_CCH;
                cch_data[0] = c->rank;
                cch_data[1] = c->up_first;
                cch_data[2] = c->up_head;
                cch_alen[0] = (uint64_t)c->n * sizeof(uint32_t);
                cch_alen[1] = ((uint64_t)c->n + 1) * sizeof(uint32_t);
                cch_alen[2] = (uint64_t)c->arcs * sizeof(uint32_t);
                if (with_metric) {
                        cch_data[3] = m->w32;
                        cch_data[4] = m->middle;
                        cch_alen[3] = cch_alen[4] = (2 * (uint64_t)c->arcs + 2) * sizeof(uint32_t);
                }
                uint64_t at = SS__CCH_HEADER;
                uint32_t acrc = (uint32_t)crc32(0, Z_NULL, 0);
                for (int i = 0; i < narr; i++) {
                        at = align_up(at);
                        cch_aoff[i] = at;
                        at += cch_alen[i];
                        const uint64_t body = i < 3 ? cch_alen[i] : cch_alen[i] - sizeof(ends);
                        acrc = crc_bytes(acrc, cch_data[i], body);
                        if (i >= 3)
                                acrc = crc_bytes(acrc, ends, sizeof(ends));
                }
                memset(cch_hdr, 0, sizeof(cch_hdr));
                memcpy(cch_hdr, SS_SNAPSHOT_CCH_MAGIC, 8);
                put32(cch_hdr + 8,
                      with_metric ? SS_SNAPSHOT_CCH_VERSION_METRIC : SS_SNAPSHOT_CCH_VERSION);
                put32(cch_hdr + 12, SS__CCH_HEADER);
                put64(cch_hdr + 16, c->n);
                put64(cch_hdr + 24, c->arcs);
                for (int i = 0; i < narr; i++) {
                        put64(cch_hdr + 32 + 16 * i, cch_aoff[i]);
                        put64(cch_hdr + 40 + 16 * i, cch_alen[i]);
                }
                put32(cch_hdr + 32 + 16 * narr, acrc);
                put32(cch_hdr + 124, (uint32_t)crc32(0, cch_hdr, 124));
                pos = align_up(pos);
                h.cch_off = pos;
                h.cch_len = at;
                pos += at;
        }
        h.file_size = pos;

        /* A temporary file in the same directory, renamed over path at the
         * end, so a reader never sees half a snapshot. */
        size_t plen = strlen(path);
        char *tmp = malloc(plen + 16);
        if (!tmp)
                return ss_err_set(err, SS_ENOMEM, "%s: out of memory", path);
        memcpy(tmp, path, plen);
        memcpy(tmp + plen, ".tmp.XXXXXX", 12);
        int fd = mkstemp(tmp);
        if (fd < 0) {
                int e = errno;
                free(tmp);
                return ss_err_set(err, SS_EIO, "%s: cannot create a temporary file: %s", path,
                                  strerror(e));
        }

        unsigned char hdr[SS__SNAP_HEADER];
        encode_header(&h, hdr);
        static const unsigned char zeros[SS__SNAP_ALIGN];
        int rc = write_all(fd, hdr, sizeof(hdr));
        pos = SS__SNAP_HEADER;
        for (int i = 0; i < SS__SNAP_SECTIONS && rc == 0; i++) {
                if (h.off[i] == 0)
                        continue;
                rc = write_all(fd, zeros, h.off[i] - pos);
                if (rc == 0)
                        rc = write_all(fd, data[i], h.len[i]);
                pos = h.off[i] + h.len[i];
        }
        if (c && rc == 0) {
                rc = write_all(fd, zeros, h.cch_off - pos);
                if (rc == 0)
                        rc = write_all(fd, cch_hdr, sizeof(cch_hdr));
                pos = SS__CCH_HEADER;
                for (int i = 0; i < narr && rc == 0; i++) {
                        const uint64_t body = i < 3 ? cch_alen[i] : cch_alen[i] - sizeof(ends);
                        rc = write_all(fd, zeros, cch_aoff[i] - pos);
                        if (rc == 0)
                                rc = write_all(fd, cch_data[i], body);
                        if (rc == 0 && i >= 3)
                                rc = write_all(fd, ends, sizeof(ends));
                        pos = cch_aoff[i] + cch_alen[i];
                }
        }
        if (rc == 0)
                rc = fchmod(fd, 0644);
        if (rc == 0)
                rc = fsync(fd);
        int e = errno;
        if (close(fd) != 0 && rc == 0) {
                rc = -1;
                e = errno;
        }
        if (rc == 0 && rename(tmp, path) != 0) {
                rc = -1;
                e = errno;
        }
        if (rc != 0) {
                unlink(tmp);
                free(tmp);
                return ss_err_set(err, SS_EIO, "%s: cannot write the snapshot: %s", path,
                                  strerror(e));
        }
        free(tmp);
        return SS_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */
/* ------------------------------------------------------------------------ */

bool ss_snapshot_probe(const char *path)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        char magic[8];
        ssize_t k;
        do
                k = pread(fd, magic, sizeof(magic), 0);
        while (k < 0 && errno == EINTR);
        close(fd);
        return k == (ssize_t)sizeof(magic) && memcmp(magic, SS_SNAPSHOT_MAGIC, 8) == 0;
}

/* Checks everything the header claims against itself and the file length,
 * before any of it is used to size an allocation. */
static int check_header(const char *path, const unsigned char *raw, uint64_t size,
                        struct ss__snap_header *h, struct ss_err *err)
{
        if (memcmp(raw, SS_SNAPSHOT_MAGIC, 8) != 0)
                return ss_err_set(err, SS_EFORMAT, "%s: not a snapshot (bad magic)", path);
        decode_header(raw, h);
        if (h->version != SS_SNAPSHOT_VERSION && h->version != SS_SNAPSHOT_VERSION_CCH)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: snapshot format version %" PRIu32
                                  ", but this build reads versions %u to %u",
                                  path, h->version, SS_SNAPSHOT_VERSION, SS_SNAPSHOT_VERSION_CCH);
        if (h->header_size != SS__SNAP_HEADER)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: header size %" PRIu32 ", expected %u for version %" PRIu32,
                                  path, h->header_size, SS__SNAP_HEADER, h->version);
        uint32_t crc = (uint32_t)crc32(0, raw, 188);
        if (crc != get32(raw + 188))
                return ss_err_set(err, SS_EFORMAT, "%s: header checksum mismatch (corrupt header)",
                                  path);
        /* 152..167 hold the CCH section's place, checked below */
        for (int i = 148; i < 188; i++)
                if ((i < 152 || i >= 168) && raw[i])
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: reserved header byte %d is not zero", path, i);
        if (h->file_size != size)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: header gives a file size of %" PRIu64
                                  " bytes, but the file has %" PRIu64 " (%s)",
                                  path, h->file_size, size,
                                  size < h->file_size ? "truncated" : "trailing bytes");
        bool has_cch = h->version == SS_SNAPSHOT_VERSION_CCH;
        uint64_t known = SS__SNAP_FLAG_COORDS | (has_cch ? SS__SNAP_FLAG_CCH : 0);
        if (h->flags & ~known)
                return ss_err_set(err, SS_EFORMAT, "%s: unknown flags 0x%" PRIx64, path, h->flags);
        if (has_cch != !!(h->flags & SS__SNAP_FLAG_CCH))
                return ss_err_set(err, SS_EFORMAT, "%s: version %" PRIu32 " %s a CCH section", path,
                                  h->version, has_cch ? "without" : "with");
        if (h->n == 0 || h->n > SS_MAX_NODES)
                return ss_err_set(err, SS_EFORMAT, "%s: node count %" PRIu64 " out of range", path,
                                  h->n);
        /* Each arc takes 8 bytes of the file, so M is bounded by the size; this
         * also keeps the length products below from overflowing. */
        if (h->m > size / 8)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: arc count %" PRIu64 " cannot fit in %" PRIu64 " bytes", path,
                                  h->m, size);
        bool coords = h->flags & SS__SNAP_FLAG_COORDS;
        uint64_t want[SS__SNAP_SECTIONS] = {(h->n + 1) * 8, h->m * 4, h->m * 4,
                                            coords ? h->n * 4 : 0, coords ? h->n * 4 : 0};
        uint64_t pos = SS__SNAP_HEADER;
        for (int i = 0; i < SS__SNAP_SECTIONS; i++) {
                if (h->len[i] != want[i])
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: section %s has length %" PRIu64 ", expected %" PRIu64
                                          " for N=%" PRIu64 " M=%" PRIu64,
                                          path, sec_name[i], h->len[i], want[i], h->n, h->m);
                if (i >= SEC_X && !coords) {
                        if (h->off[i] != 0)
                                return ss_err_set(err, SS_EFORMAT,
                                                  "%s: section %s present without the "
                                                  "coordinates flag",
                                                  path, sec_name[i]);
                        continue;
                }
                if (h->off[i] < pos || h->off[i] % SS__SNAP_ALIGN != 0 || h->off[i] > size ||
                    h->len[i] > size - h->off[i])
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: section %s at offset %" PRIu64 " (length %" PRIu64
                                          ") is misplaced or beyond the end of the %" PRIu64
                                          "-byte file",
                                          path, sec_name[i], h->off[i], h->len[i], size);
                pos = h->off[i] + h->len[i];
        }
        if (has_cch) {
                if (h->cch_off < pos || h->cch_off % SS__SNAP_ALIGN != 0 || h->cch_off > size ||
                    h->cch_len > size - h->cch_off || h->cch_len < SS__CCH_HEADER)
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: the CCH section at offset %" PRIu64
                                          " (length %" PRIu64 ") is misplaced or beyond the end "
                                          "of the %" PRIu64 "-byte file",
                                          path, h->cch_off, h->cch_len, size);
                pos = h->cch_off + h->cch_len;
        } else if (h->cch_off || h->cch_len) {
                return ss_err_set(err, SS_EFORMAT, "%s: a CCH section in a version 1 header", path);
        }
        /* The writer ends the file with the last section; bytes after it
         * would be covered by neither the CRC nor the padding check. */
        if (pos != size)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: %" PRIu64 " unchecked bytes after the last section", path,
                                  size - pos);
        return SS_OK;
}

/* Checks the CSR structure and recomputes the statistics the header claims. */
static int check_graph(const char *path, const struct ss_graph *g, const struct ss__snap_header *h,
                       struct ss_err *err)
{
        if (g->row[0] != 0 || g->row[g->n] != g->m)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: row offsets do not span the %" PRIu64 " arcs", path, g->m);
        uint64_t max_deg = 0;
        for (uint32_t v = 0; v < g->n; v++) {
                if (g->row[v + 1] < g->row[v])
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: row offsets decrease at node %" PRIu64, path,
                                          (uint64_t)v + 1);
                uint64_t d = g->row[v + 1] - g->row[v];
                if (d > max_deg)
                        max_deg = d;
        }
        uint32_t min_w = UINT32_MAX, max_w = 0, bad = 0;
        for (uint64_t i = 0; i < g->m; i++) {
                bad |= g->col[i] >= g->n;
                min_w = g->w[i] < min_w ? g->w[i] : min_w;
                max_w = g->w[i] > max_w ? g->w[i] : max_w;
        }
        if (bad)
                return ss_err_set(err, SS_EFORMAT, "%s: an arc head is outside 1..%" PRIu32, path,
                                  g->n);
        if (g->m == 0)
                min_w = 0; /* ss_graph_finish's convention for a graph without arcs */
        if (min_w != h->min_w || max_w != h->max_w || max_deg != h->max_out_degree)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: header statistics (weights %" PRIu32 "..%" PRIu32
                                  ", max degree %" PRIu32 ") disagree with the arrays",
                                  path, h->min_w, h->max_w, h->max_out_degree);
        return SS_OK;
}

/* Bytes from .. to - 1 of block must be zero (padding). */
static bool zero_bytes(const char *path, const unsigned char *block, uint64_t from, uint64_t to,
                       struct ss_err *err)
{
        for (uint64_t at = from; at < to; at++)
                if (block[at] != 0) {
                        ss_err_set(err, SS_EFORMAT, "%s: nonzero padding byte at offset %" PRIu64,
                                   path, at);
                        return false;
                }
        return true;
}

/* ss_cch_metric's give_back for a metric read with the snapshot: lets go
 * of the topology (and so the block) it held. */
static void ss__snap_release(void *owner, void *block)
{
        (void)block;
        ss_graph_topology_release(owner);
}

/* Checks the CCH section at sec (len bytes, inside g's block) and attaches
 * its CCH, and its metric when the section has one, to g; a section of
 * another layout version is skipped. */
static int read_cch(const char *path, struct ss_graph *g, unsigned char *sec, uint64_t len,
                    bool later, struct ss_err *err)
{
        if (memcmp(sec, SS_SNAPSHOT_CCH_MAGIC, 8) != 0)
                return ss_err_set(err, SS_EFORMAT, "%s: the CCH section has a bad magic", path);
        uint32_t version = get32(sec + 8);
        if (version != SS_SNAPSHOT_CCH_VERSION && version != SS_SNAPSHOT_CCH_VERSION_METRIC) {
                ss_log_warn("snapshot",
                            "%s: CCH section version %" PRIu32 " (this build reads %u and %u): "
                            "skipped; the CCH is built again when needed",
                            path, version, SS_SNAPSHOT_CCH_VERSION, SS_SNAPSHOT_CCH_VERSION_METRIC);
                return SS_OK;
        }
        const int narr = version == SS_SNAPSHOT_CCH_VERSION_METRIC ? 5 : 3;
        const int at_crc = 32 + 16 * narr;
        if (get32(sec + 12) != SS__CCH_HEADER || get32(sec + 124) != (uint32_t)crc32(0, sec, 124))
                return ss_err_set(err, SS_EFORMAT, "%s: the CCH section header is corrupt", path);
        uint64_t n = get64(sec + 16), arcs = get64(sec + 24);
        if (n != g->n || arcs >= UINT32_MAX)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: the CCH section is for %" PRIu64 " nodes and %" PRIu64
                                  " edges; the graph has %" PRIu32 " nodes",
                                  path, n, arcs, g->n);
        static const char *const name[5] = {"rank", "up_first", "up_head", "w", "middle"};
        uint64_t want[5] = {n * 4, (n + 1) * 4, arcs * 4, (2 * arcs + 2) * 4, (2 * arcs + 2) * 4};
        uint64_t pos = SS__CCH_HEADER;
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        void *arr[5];
        for (int i = 0; i < narr; i++) {
                uint64_t off = get64(sec + 32 + 16 * i), alen = get64(sec + 40 + 16 * i);
                if (alen != want[i] || off < pos || off % SS__SNAP_ALIGN != 0 || off > len ||
                    alen > len - off)
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: the CCH array %s (offset %" PRIu64
                                          ", length %" PRIu64 ") is misplaced or of the wrong size",
                                          path, name[i], off, alen);
                for (uint64_t at = pos; at < off; at++)
                        if (sec[at] != 0)
                                return ss_err_set(err, SS_EFORMAT,
                                                  "%s: nonzero padding in the CCH section", path);
                arr[i] = sec + off;
                crc = crc_span(crc, sec + off, alen);
                pos = off + alen;
        }
        if (pos != len)
                return ss_err_set(err, SS_EFORMAT,
                                  "%s: %" PRIu64 " unchecked bytes after the CCH arrays", path,
                                  len - pos);
        for (int i = at_crc + 4; i < 124; i++)
                if (sec[i] != 0)
                        return ss_err_set(err, SS_EFORMAT,
                                          "%s: nonzero reserved bytes in the CCH header", path);
        if (crc != get32(sec + at_crc))
                return ss_err_set(err, SS_EFORMAT, "%s: CCH checksum mismatch: the file is corrupt",
                                  path);
        struct ss_cch *c = NULL;
        struct ss_err cerr;
        int rc = later ? ss_cch_from_arrays_later(g, (uint32_t)arcs, arr[0], arr[1], arr[2], true,
                                                  0, &c, &cerr)
                       : ss_cch_from_arrays(g, (uint32_t)arcs, arr[0], arr[1], arr[2], true, 0, &c,
                                            &cerr);
        if (rc != SS_OK)
                return ss_err_set(err, rc == SS_ENOMEM ? SS_ENOMEM : SS_EFORMAT, "%s: %s", path,
                                  cerr.msg);
        ss_cch_attach(g, c);
        if (narr == 3) {
                ss_cch_checks_start(c, 0);
                return SS_OK;
        }
        /* The metric's arrays stay in the block, which the metric holds
         * (a GPU handle may keep the metric past the graph). */
        struct ss_cch_metric *m = NULL;
        struct ss_graph *owner = ss_graph_topology_hold(g);
        rc = later ? ss_cch_metric_stored_later(c, arr[3], arr[4], 0, ss__snap_release, owner, &m,
                                                &cerr)
                   : ss_cch_metric_stored(c, arr[3], arr[4], 0, ss__snap_release, owner, &m, &cerr);
        if (rc != SS_OK) {
                ss_graph_topology_release(owner);
                return ss_err_set(err, rc == SS_ENOMEM ? SS_ENOMEM : SS_EFORMAT, "%s: %s", path,
                                  cerr.msg);
        }
        ss_cch_attach_metric(g, m);
        /* The checks left for later start now, with the metric's corners. */
        ss_cch_checks_start(c, 0);
        return SS_OK;
}

static void snap_progress(const struct ss_progress *progress, const char *path, uint64_t done,
                          uint64_t size, int *last)
{
        if (!progress || !progress->fn || size == 0)
                return;
        double f = (double)done / (double)size;
        int percent = (int)(f * 100.0);
        if (percent <= *last)
                return;
        *last = percent;
        progress->fn(progress->arg, path, f);
}

/* Readers of one file at most: into fresh memory the kernel zeroes each
 * page before it copies into it, about 1-2 GB/s on one thread, and a
 * continent's snapshot with its CCH and metric is 4 GB. */
#define SS__SNAP_READERS 16u

struct read_job {
        int fd;
        unsigned char *block;
        uint64_t size;
        atomic_uint_fast64_t done;
        atomic_int fail; /* errno of the first failure, -1 for a short file; 0 when none */
        const struct ss_progress *progress;
        const char *path;
        int last; /* thread 0's progress */
};

/* Reader i of k: the pieces of SS__SNAP_CHUNK bytes i, i + k, ... Thread
 * 0 reports the progress of all of them. */
static void read_part(void *arg, unsigned i, unsigned k)
{
        struct read_job *rj = arg;
        for (uint64_t at = (uint64_t)i * SS__SNAP_CHUNK; at < rj->size && !atomic_load(&rj->fail);
             at += (uint64_t)k * SS__SNAP_CHUNK) {
                const uint64_t end =
                    rj->size - at > SS__SNAP_CHUNK ? at + SS__SNAP_CHUNK : rj->size;
                uint64_t pos = at;
                while (pos < end) {
                        const ssize_t r =
                            pread(rj->fd, rj->block + pos, (size_t)(end - pos), (off_t)pos);
                        if (r < 0 && errno == EINTR)
                                continue;
                        if (r <= 0) {
                                int expected = 0;
                                atomic_compare_exchange_strong(&rj->fail, &expected,
                                                               r == 0 ? -1 : errno);
                                return;
                        }
                        pos += (uint64_t)r;
                }
                const uint64_t done = atomic_fetch_add(&rj->done, end - at) + (end - at);
                if (i == 0)
                        snap_progress(rj->progress, rj->path, done, rj->size, &rj->last);
        }
}

struct ss_graph *ss_snapshot_read(const char *path, const struct ss_progress *progress,
                                  struct ss_err *err)
{
        return ss_snapshot_read_flags(path, progress, 0, err);
}

struct ss_graph *ss_snapshot_read_flags(const char *path, const struct ss_progress *progress,
                                        unsigned flags, struct ss_err *err)
{
        unsigned char *block = NULL;
        struct ss_graph *g = NULL;
        struct ss__snap_header h = {0};
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                ss_err_set(err, SS_EIO, "%s: cannot open: %s", path, strerror(errno));
                return NULL;
        }
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
                ss_err_set(err, SS_EIO, "%s: not a regular file", path);
                goto fail;
        }
        uint64_t size = (uint64_t)st.st_size;
        if (size < SS__SNAP_HEADER) {
                if (size >= 8) {
                        unsigned char magic[8];
                        if (pread(fd, magic, 8, 0) == 8 &&
                            memcmp(magic, SS_SNAPSHOT_MAGIC, 8) != 0) {
                                ss_err_set(err, SS_EFORMAT, "%s: not a snapshot (bad magic)", path);
                                goto fail;
                        }
                }
                ss_err_set(err, SS_EFORMAT,
                           "%s: truncated: %" PRIu64 " bytes, smaller than the %u-byte header",
                           path, size, SS__SNAP_HEADER);
                goto fail;
        }

        unsigned char raw[SS__SNAP_HEADER];
        ssize_t k;
        do
                k = pread(fd, raw, sizeof(raw), 0);
        while (k < 0 && errno == EINTR);
        if (k != (ssize_t)sizeof(raw)) {
                ss_err_set(err, SS_EIO, "%s: cannot read the header: %s", path,
                           k < 0 ? strerror(errno) : "short read");
                goto fail;
        }
        if (check_header(path, raw, size, &h, err) < 0)
                goto fail;

        if (size > SIZE_MAX || posix_memalign((void **)&block, SS__SNAP_ALIGN, (size_t)size) != 0) {
                block = NULL;
                ss_err_set(err, SS_ENOMEM, "%s: out of memory for %" PRIu64 " bytes", path, size);
                goto fail;
        }

        /* The file in pieces on several threads, then the payload CRC over
         * the sections (padding excluded), on several threads too. */
        struct read_job rj = {
            .fd = fd, .block = block, .size = size, .progress = progress, .path = path, .last = -1};
        atomic_init(&rj.done, 0);
        atomic_init(&rj.fail, 0);
        unsigned threads = ss_team_threads(0);
        if (threads > SS__SNAP_READERS)
                threads = SS__SNAP_READERS;
        if (size < 4 * (uint64_t)SS__SNAP_CHUNK)
                threads = 1;
        const uint64_t t0 = ss_now_ns();
        ss_team_run(threads, NULL, read_part, &rj);
        const uint64_t t1 = ss_now_ns();
        const int fail = atomic_load(&rj.fail);
        if (fail) {
                if (fail < 0)
                        ss_err_set(err, SS_EFORMAT, "%s: truncated while reading (file shrank)",
                                   path);
                else
                        ss_err_set(err, SS_EIO, "%s: read error: %s", path, strerror(fail));
                goto fail;
        }
        uint32_t crc = (uint32_t)crc32(0, Z_NULL, 0);
        bool coords = h.flags & SS__SNAP_FLAG_COORDS;
        int nsec = coords ? SS__SNAP_SECTIONS : SEC_X;
        for (int i = 0; i < nsec; i++)
                crc = crc_span(crc, block + h.off[i], h.len[i]);
        int last = rj.last;
        if (crc != h.payload_crc) {
                ss_err_set(err, SS_EFORMAT,
                           "%s: payload checksum mismatch (stored %08" PRIx32
                           ", computed %08" PRIx32 "): the file is corrupt",
                           path, h.payload_crc, crc);
                goto fail;
        }
        /* The CRC skips the alignment padding; require it to be zero, so that
         * no byte of the file goes unchecked. */
        uint64_t pad_from = SS__SNAP_HEADER;
        for (int i = 0; i < nsec; i++) {
                for (uint64_t at = pad_from; at < h.off[i]; at++) {
                        if (block[at] != 0) {
                                ss_err_set(err, SS_EFORMAT,
                                           "%s: nonzero padding byte at offset %" PRIu64, path, at);
                                goto fail;
                        }
                }
                pad_from = h.off[i] + h.len[i];
        }
        if (h.flags & SS__SNAP_FLAG_CCH && !zero_bytes(path, block, pad_from, h.cch_off, err))
                goto fail;

        g = calloc(1, sizeof(*g));
        if (!g) {
                ss_err_set(err, SS_ENOMEM, "%s: out of memory", path);
                goto fail;
        }
        g->n = (uint32_t)h.n;
        g->m = h.m;
        g->row = (uint64_t *)(void *)(block + h.off[SEC_ROW]);
        g->col = (uint32_t *)(void *)(block + h.off[SEC_COL]);
        g->w = (uint32_t *)(void *)(block + h.off[SEC_W]);
        g->x = coords ? (int32_t *)(void *)(block + h.off[SEC_X]) : NULL;
        g->y = coords ? (int32_t *)(void *)(block + h.off[SEC_Y]) : NULL;
        g->min_w = h.min_w;
        g->max_w = h.max_w;
        g->max_out_degree = h.max_out_degree;
        g->checksum = crc;
        if (check_graph(path, g, &h, err) < 0)
                goto fail;
        g->block = block;
        atomic_init(&g->refs, 1u);
        close(fd);
        const uint64_t t2 = ss_now_ns();
        if (h.flags & SS__SNAP_FLAG_CCH && read_cch(path, g, block + h.cch_off, h.cch_len,
                                                    flags & SS_SNAPSHOT_CHECK_LATER, err) < 0) {
                ss_graph_unref(g);
                return NULL;
        }
        ss_log_debug("snapshot",
                     "%s: %.0f MB read in %.0f ms on %u threads, the graph checked in %.0f ms, "
                     "the CCH in %.0f ms",
                     path, size / 1e6, (t1 - t0) / 1e6, threads, (t2 - t1) / 1e6,
                     (ss_now_ns() - t2) / 1e6);
        snap_progress(progress, path, size, size, &last);
        return g;

fail:
        free(g);
        free(block);
        close(fd);
        return NULL;
}
