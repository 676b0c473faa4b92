/* Table-driven settings: each row names a key, where it lives in struct
 * ss_config, its default, its bounds and how its text is checked. The file
 * parser, the flag parser and --help all walk the same table, so a key is
 * added in one place. */
#include "server/config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "engine/engine.h"
#include "server/cors.h"
#include "server/log_format.h"

enum ss__type { SS__STR, SS__INT, SS__BOOL, SS__LEVEL };

struct ss__key {
        const char *name;
        enum ss__type type;
        size_t offset;
        size_t size; /* strings: buffer size */
        const char *def;
        int64_t min, max;
        int (*check)(const char *value, struct ss_err *err); /* extra validation; may be NULL */
        const char *help;
};

static int ss__check_listen(const char *v, struct ss_err *err)
{
        char host[256];
        uint16_t port;
        return ss_config_split_listen(v, host, sizeof(host), &port, err);
}

static int ss__check_delta(const char *v, struct ss_err *err)
{
        static const char *const rules[] = {"tuned", "median", "mean", "maxw-over-maxdeg"};
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                if (!strcmp(v, rules[i]))
                        return SS_OK;
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (isdigit((unsigned char)v[0]) && !*end && !errno && x >= 1)
                return SS_OK;
        return ss_err_set(err, SS_EINVAL,
                          "gpu_delta: '%s' is not tuned, median, mean, maxw-over-maxdeg or a "
                          "positive integer",
                          v);
}

/* "all" or comma-separated CUDA ids (0..63). */
static int ss__check_devices(const char *v, struct ss_err *err)
{
        int ids[16];
        return ss_config_gpu_devices(v, ids, 16, NULL, err);
}

static int ss__check_partition(const char *v, struct ss_err *err)
{
        int mode;
        return ss_config_gpu_partition(v, &mode, err);
}

static int ss__check_cch(const char *v, struct ss_err *err)
{
        int mode;
        return ss_config_cch(v, &mode, err);
}

static int ss__check_batch(const char *v, struct ss_err *err)
{
        unsigned k;
        return ss_config_gpu_batch(v, &k, err);
}

#define SS__OFF(f)  offsetof(struct ss_config, f)
#define SS__STRF(f) SS__OFF(f), sizeof(((struct ss_config *)0)->f)

static const struct ss__key ss__keys[] = {
    {"listen", SS__STR, SS__STRF(listen), "127.0.0.1:8080", 0, 0, ss__check_listen,
     "address to serve HTTP on, HOST:PORT or [V6]:PORT"},
    {"graph", SS__STR, SS__STRF(graph), "", 0, 0, NULL,
     "graph file: DIMACS .gr, .gr.gz or a snapshot"},
    {"coords", SS__STR, SS__STRF(coords), "", 0, 0, NULL,
     "coordinates file (.co, .co.gz); empty for none"},
    {"time_graph", SS__STR, SS__STRF(time_graph), "", 0, 0, NULL,
     "travel times of the same arcs (a DIMACS -t file, .gr, .gr.gz or snapshot), for the "
     "duration of routes; empty for none"},
    {"weights", SS__STR, SS__STRF(weights), "", 0, 0, NULL,
     "weights file (`a U V W` lines, docs/operations.md) applied to the graph at every load "
     "and reload; empty for none"},
    {"weights_queue", SS__INT, SS__OFF(weights_queue), 0, "16", 1, 1024, NULL,
     "POST /weights requests waiting behind the one being applied, at most; more get 503"},
    {"workers", SS__INT, SS__OFF(workers), 0, "0", 0, 1024, NULL,
     "CPU query threads; 0 means one per core"},
    {"http_threads", SS__INT, SS__OFF(http_threads), 0, "0", 0, 64, NULL,
     "threads that read requests and send answers, each with its share of the connections; 0 "
     "means one per two cores (1 to 8)"},
    {"landmarks", SS__INT, SS__OFF(landmarks), 0, "16", 0, 64, NULL,
     "A* landmarks for /route on the CPU; 0 for none"},
    {"cch", SS__STR, SS__STRF(cch), "auto", 0, 0, ss__check_cch,
     "customizable contraction hierarchy for routes and matrices: auto (a prepared "
     "snapshot's, or built at load for graphs of at most 2M nodes), yes (built for any "
     "graph), no"},
    {"apsp_memory_mb", SS__INT, SS__OFF(apsp_memory_mb), 0, "256", 0, 1048576, NULL,
     "all-pairs matrix (with paths) computed in the background for graphs whose matrix "
     "fits this many MiB; then every auto query is a lookup; 0 for none"},
    {"apsp_max_nodes", SS__INT, SS__OFF(apsp_max_nodes), 0, "0", 0, 4294967294, NULL,
     "and only for graphs of at most this many nodes; 0 means the memory alone decides"},
    {"queue_max", SS__INT, SS__OFF(queue_max), 0, "1024", 1, 1000000, NULL,
     "queries waiting for a worker at most; more get 503"},
    {"deadline_ms", SS__INT, SS__OFF(deadline_ms), 0, "5000", 1, 3600000, NULL,
     "time a request may take, queue included; later it gets 504"},
    {"max_sources", SS__INT, SS__OFF(max_sources), 0, "1000", 1, 100000, NULL,
     "source ids per /distances request"},
    {"max_targets", SS__INT, SS__OFF(max_targets), 0, "10000", 1, 10000000, NULL,
     "target ids per /distances request"},
    {"max_matrix", SS__INT, SS__OFF(max_matrix), 0, "1000000", 1, 100000000, NULL,
     "sources x targets per /distances request"},
    {"max_json_nodes", SS__INT, SS__OFF(max_json_nodes), 0, "2000000", 0, 100000000, NULL,
     "one-to-all answered as JSON only for graphs up to this many nodes"},
    {"map_max_nodes", SS__INT, SS__OFF(map_max_nodes), 0, "100000", 1, 100000000, NULL,
     "nodes GET /map (the built-in page's drawing) sends at most: a larger graph is drawn as "
     "a sample of its nodes without roads; roads also need at most 4 times as many arcs"},
    {"max_url", SS__INT, SS__OFF(max_url), 0, "8192", 256, 1048576, NULL,
     "bytes of a request URL, query string included"},
    {"max_body", SS__INT, SS__OFF(max_body), 0, "1048576", 256, 268435456, NULL,
     "bytes of a POST body"},
    {"reuse_port", SS__BOOL, SS__OFF(reuse_port), 0, "no", 0, 0, NULL,
     "yes or no: let other processes bind the same address (SO_REUSEPORT); off, a second "
     "daemon on a busy address exits instead of splitting its requests"},
    {"connections", SS__INT, SS__OFF(connections), 0, "1024", 1, 60000, NULL,
     "open HTTP connections at most"},
    {"idle_timeout_s", SS__INT, SS__OFF(idle_timeout_s), 0, "60", 1, 86400, NULL,
     "idle keep-alive connections are closed after this many seconds"},
    {"request_timeout_s", SS__INT, SS__OFF(request_timeout_s), 0, "10", 1, 3600, NULL,
     "a request's head and body must arrive within this many seconds of their first byte "
     "(of the connection, for its first request); slower clients are disconnected"},
    {"client_connections", SS__INT, SS__OFF(client_connections), 0, "64", 0, 60000, NULL,
     "open HTTP connections from one client address at most; 0 means no limit"},
    {"client_limit_loopback", SS__BOOL, SS__OFF(client_limit_loopback), 0, "no", 0, 0, NULL,
     "yes or no: apply client_connections to loopback clients too (a local proxy makes "
     "every client look like 127.0.0.1)"},
    {"answer_memory_mb", SS__INT, SS__OFF(answer_memory_mb), 0, "1024", 0, 1048576, NULL,
     "MiB of answers built but not yet sent, at most; queries beyond get 503; 0 means no "
     "limit"},
    {"retry_after_s", SS__INT, SS__OFF(retry_after_s), 0, "1", 0, 3600, NULL,
     "Retry-After header of 503 answers"},
    {"shutdown_grace_ms", SS__INT, SS__OFF(shutdown_grace_ms), 0, "2000", 0, 600000, NULL,
     "at SIGTERM, wait deadline_ms plus this for queries in flight"},
    {"gpu", SS__BOOL, SS__OFF(gpu), 0, "yes", 0, 0, NULL,
     "yes or no: serve from a GPU when one is usable (builds with CUDA)"},
    {"gpu_devices", SS__STR, SS__STRF(gpu_devices), "all", 0, 0, ss__check_devices,
     "CUDA devices to serve from: all (every usable one) or a list of ids, e.g. 0,1"},
    {"gpu_partition", SS__STR, SS__STRF(gpu_partition), "auto", 0, 0, ss__check_partition,
     "how several GPUs share the graph: replicate (a whole copy on each), split (one copy "
     "cut over all of them, for graphs no single GPU holds) or auto (replicate, split when "
     "every GPU refused the graph as too large)"},
    {"gpu_streams", SS__INT, SS__OFF(gpu_streams), 0, "4", 1, 64, NULL,
     "CUDA streams per GPU, each with its workspaces: GPU searches at once"},
    {"gpu_batch", SS__STR, SS__STRF(gpu_batch), "auto", 0, 0, ss__check_batch,
     "sources one GPU search takes at most: auto (as many as memory allows, up to 256), "
     "a number, or 0 for no batches"},
    {"batch_wait_us", SS__INT, SS__OFF(batch_wait_us), 0, "500", 0, 100000, NULL,
     "while every other stream is busy, a GPU stream waits this long for a fuller batch"},
    {"gpu_memory_limit_mb", SS__INT, SS__OFF(gpu_memory_limit_mb), 0, "0", 0, 16777216, NULL,
     "device memory the GPU engine may use, in MiB; 0 means all that is free"},
    {"gpu_delta", SS__STR, SS__STRF(gpu_delta), "tuned", 0, 0, ss__check_delta,
     "delta-stepping bucket width: tuned, median, mean, maxw-over-maxdeg or a number"},
    {"log_level", SS__LEVEL, SS__OFF(log_level), 0, "info", 0, 0, NULL,
     "error, warn, info or debug"},
    {"log_format", SS__STR, SS__STRF(log_format), "auto", 0, 0, ss_log_format_check,
     "auto (journal under systemd, else text), text (timestamp, level, group), journal "
     "(syslog priority prefixes, no timestamp) or json (one object a line)"},
    {"access_log", SS__BOOL, SS__OFF(access_log), 0, "yes", 0, 0, NULL,
     "yes or no: one log line per request"},
    {"gzip", SS__BOOL, SS__OFF(gzip), 0, "yes", 0, 0, NULL,
     "yes or no: compress answers (Content-Encoding: gzip) for clients that send "
     "Accept-Encoding: gzip"},
    {"gzip_min_bytes", SS__INT, SS__OFF(gzip_min_bytes), 0, "1024", 0, 1073741824, NULL,
     "answers smaller than this many bytes are sent uncompressed"},
    {"gzip_level", SS__INT, SS__OFF(gzip_level), 0, "1", 1, 9, NULL,
     "zlib compression level: 1 is fastest, 9 smallest"},
    {"cors_origin", SS__STR, SS__STRF(cors_origin), "", 0, 0, ss_cors_check,
     "origins whose pages may call the API from a browser (CORS): empty for none, * for any, "
     "or a comma-separated list like https://maps.example.org"},
};

#define SS__NKEYS (sizeof(ss__keys) / sizeof(ss__keys[0]))

static const struct ss__key *ss__find(const char *name)
{
        for (size_t i = 0; i < SS__NKEYS; i++)
                if (strcmp(ss__keys[i].name, name) == 0)
                        return &ss__keys[i];
        return NULL;
}

bool ss_config_has(const char *key)
{
        return ss__find(key) != NULL;
}

static int ss__parse_int(const struct ss__key *k, const char *v, int64_t *out, struct ss_err *err)
{
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)v[0]) && v[0] != '-')
                return ss_err_set(err, SS_EINVAL, "%s: '%s' is not an integer", k->name, v);
        long long x = strtoll(v, &end, 10);
        if (errno || *end)
                return ss_err_set(err, SS_EINVAL, "%s: '%s' is not an integer", k->name, v);
        if (x < k->min || x > k->max)
                return ss_err_set(err, SS_EINVAL, "%s: %lld is outside %lld..%lld", k->name, x,
                                  (long long)k->min, (long long)k->max);
        *out = x;
        return SS_OK;
}

static int ss__apply(struct ss_config *c, const struct ss__key *k, const char *v,
                     struct ss_err *err)
{
        char *field = (char *)c + k->offset;
        int rc;

        if (k->check && (rc = k->check(v, err)) != SS_OK)
                return rc;
        switch (k->type) {
        case SS__STR:
                if (strlen(v) >= k->size)
                        return ss_err_set(err, SS_EINVAL, "%s: value longer than %zu bytes",
                                          k->name, k->size - 1);
                strcpy(field, v);
                return SS_OK;
        case SS__INT:
                return ss__parse_int(k, v, (int64_t *)field, err);
        case SS__BOOL:
                if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on"))
                        *(bool *)field = true;
                else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off"))
                        *(bool *)field = false;
                else
                        return ss_err_set(err, SS_EINVAL, "%s: '%s' is not yes or no", k->name, v);
                return SS_OK;
        case SS__LEVEL:
                rc = ss_log_level_parse(v);
                if (rc < 0)
                        return ss_err_set(err, SS_EINVAL,
                                          "%s: '%s' is not error, warn, info or debug", k->name, v);
                *(int64_t *)field = rc;
                return SS_OK;
        }
        return ss_err_set(err, SS_EINTERNAL, "%s: bad table row", k->name);
}

void ss_config_defaults(struct ss_config *c)
{
        memset(c, 0, sizeof(*c));
        for (size_t i = 0; i < SS__NKEYS; i++) {
                int rc = ss__apply(c, &ss__keys[i], ss__keys[i].def, NULL);
                (void)rc; /* the defaults are checked by the unit tests */
        }
}

int ss_config_set(struct ss_config *c, const char *key, const char *value, struct ss_err *err)
{
        const struct ss__key *k = ss__find(key);
        if (!k)
                return ss_err_set(err, SS_EPARSE, "unknown key '%s'", key);
        return ss__apply(c, k, value, err);
}

static char *ss__trim(char *s)
{
        while (isspace((unsigned char)*s))
                s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
                *--e = '\0';
        return s;
}

int ss_config_load(struct ss_config *c, const char *path, struct ss_err *err)
{
        FILE *f = fopen(path, "r");
        if (!f)
                return ss_err_set(err, SS_EIO, "%s: cannot open: %s", path, strerror(errno));
        char line[8192];
        struct ss_err e;
        int rc = SS_OK;
        for (unsigned lineno = 1; fgets(line, sizeof(line), f); lineno++) {
                if (!strchr(line, '\n') && !feof(f)) {
                        rc = ss_err_set(err, SS_EPARSE, "%s:%u: line longer than %zu bytes", path,
                                        lineno, sizeof(line) - 2);
                        break;
                }
                char *hash = strchr(line, '#');
                if (hash)
                        *hash = '\0';
                char *key = ss__trim(line);
                if (!*key)
                        continue;
                char *val = key;
                while (*val && !isspace((unsigned char)*val))
                        val++;
                if (*val)
                        *val++ = '\0';
                val = ss__trim(val);
                /* Values are single words, optionally in double quotes (for paths with spaces). */
                size_t vl = strlen(val);
                if (vl >= 2 && val[0] == '"' && val[vl - 1] == '"') {
                        val[vl - 1] = '\0';
                        val++;
                }
                rc = ss_config_set(c, key, val, &e);
                if (rc != SS_OK) {
                        ss_err_set(err, rc, "%s:%u: %s", path, lineno, e.msg);
                        break;
                }
        }
        if (rc == SS_OK && ferror(f))
                rc = ss_err_set(err, SS_EIO, "%s: read error", path);
        fclose(f);
        return rc;
}

void ss_config_usage(FILE *out)
{
        for (size_t i = 0; i < SS__NKEYS; i++) {
                char flag[64];
                snprintf(flag, sizeof(flag), "--%s", ss__keys[i].name);
                for (char *p = flag + 2; *p; p++)
                        if (*p == '_')
                                *p = '-';
                fprintf(out, "  %-22s %s (default: %s)\n", flag, ss__keys[i].help,
                        ss__keys[i].def[0] ? ss__keys[i].def : "none");
        }
}

int ss_config_split_listen(const char *s, char *host, size_t cap, uint16_t *port,
                           struct ss_err *err)
{
        const char *colon, *h = s;
        size_t hl;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close[1] != ':')
                        return ss_err_set(err, SS_EINVAL, "listen: '%s' is not [ADDR]:PORT", s);
                h = s + 1;
                hl = (size_t)(close - h);
                colon = close + 1;
        } else {
                colon = strrchr(s, ':');
                if (!colon)
                        return ss_err_set(err, SS_EINVAL, "listen: '%s' is not HOST:PORT", s);
                hl = (size_t)(colon - s);
        }
        if (hl == 0 || hl >= cap)
                return ss_err_set(err, SS_EINVAL, "listen: '%s' has no usable host", s);
        char *end;
        errno = 0;
        long p = strtol(colon + 1, &end, 10);
        if (!isdigit((unsigned char)colon[1]) || *end || errno || p < 1 || p > 65535)
                return ss_err_set(err, SS_EINVAL, "listen: port '%s' is not in 1..65535",
                                  colon + 1);
        memcpy(host, h, hl);
        host[hl] = '\0';
        *port = (uint16_t)p;
        return SS_OK;
}

int ss_config_gpu_devices(const char *v, int *ids, unsigned cap, unsigned *count,
                          struct ss_err *err)
{
        unsigned n = 0;
        if (!strcmp(v, "all")) {
                if (count)
                        *count = 0;
                return SS_OK;
        }
        const char *p = v;
        for (;;) {
                char *end;
                errno = 0;
                long x = strtol(p, &end, 10);
                if (!isdigit((unsigned char)*p) || errno || x > 63 || end == p ||
                    (*end && *end != ','))
                        return ss_err_set(err, SS_EINVAL,
                                          "gpu_devices: '%s' is not 'all' or a list of device "
                                          "ids 0..63 like 0,1",
                                          v);
                if (n == cap)
                        return ss_err_set(err, SS_EINVAL, "gpu_devices: more than %u devices", cap);
                for (unsigned i = 0; i < n; i++)
                        if (ids[i] == (int)x)
                                return ss_err_set(err, SS_EINVAL,
                                                  "gpu_devices: device %ld is listed twice", x);
                ids[n++] = (int)x;
                if (!*end)
                        break;
                p = end + 1;
        }
        if (count)
                *count = n;
        return SS_OK;
}

int ss_config_gpu_batch(const char *v, unsigned *out, struct ss_err *err)
{
        if (!strcmp(v, "auto")) {
                *out = 0xffffffffu;
                return SS_OK;
        }
        char *end;
        errno = 0;
        unsigned long x = strtoul(v, &end, 10);
        if (!isdigit((unsigned char)v[0]) || *end || errno || x > 4096)
                return ss_err_set(err, SS_EINVAL,
                                  "gpu_batch: '%s' is not auto or a number of sources 0..4096", v);
        *out = (unsigned)x;
        return SS_OK;
}

int ss_config_gpu_partition(const char *v, int *out, struct ss_err *err)
{
        if (!strcmp(v, "auto"))
                *out = SS_ENGINE_PARTITION_AUTO;
        else if (!strcmp(v, "replicate"))
                *out = SS_ENGINE_PARTITION_REPLICATE;
        else if (!strcmp(v, "split"))
                *out = SS_ENGINE_PARTITION_SPLIT;
        else
                return ss_err_set(err, SS_EINVAL,
                                  "gpu_partition: '%s' is not auto, replicate or split", v);
        return SS_OK;
}

int ss_config_cch(const char *v, int *out, struct ss_err *err)
{
        if (!strcmp(v, "auto"))
                *out = SS_ENGINE_CCH_AUTO;
        else if (!strcmp(v, "yes"))
                *out = SS_ENGINE_CCH_ON;
        else if (!strcmp(v, "no"))
                *out = SS_ENGINE_CCH_OFF;
        else
                return ss_err_set(err, SS_EINVAL, "cch: '%s' is not auto, yes or no", v);
        return SS_OK;
}
