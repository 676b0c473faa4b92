/* The daemon's settings: one table of keys (config.c) read from a file and
 * overridden by command-line flags of the same names. */
#ifndef SS_SERVER_CONFIG_H
#define SS_SERVER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

#define SS_CONFIG_PATH_MAX 4096

struct ss_config {
        char listen[256];                    /* HOST:PORT */
        bool reuse_port;                     /* SO_REUSEPORT on the listening socket */
        char graph[SS_CONFIG_PATH_MAX];      /* .gr, .gr.gz or snapshot */
        char coords[SS_CONFIG_PATH_MAX];     /* .co or .co.gz; empty for none */
        char time_graph[SS_CONFIG_PATH_MAX]; /* travel times of the same arcs; empty for none */
        char weights[SS_CONFIG_PATH_MAX];    /* weights file applied at each load; empty for none */
        int64_t weights_queue;               /* POST /weights waiting at most */
        int64_t workers;                     /* CPU worker threads; 0 = one per core */
        int64_t http_threads;                /* HTTP threads; 0 = one per two cores */
        int64_t landmarks;                   /* A* landmarks built at load; 0 = none */
        char cch[8];                         /* "auto", "yes" or "no": the CCH made at load */
        int64_t apsp_memory_mb;              /* the all-pairs matrix's budget; 0 = none */
        int64_t apsp_max_nodes;              /* and its node limit; 0 = the budget alone */
        int64_t queue_max;                   /* queued queries at most */
        int64_t deadline_ms;                 /* per request */
        int64_t max_sources;                 /* `from` ids per request */
        int64_t max_targets;                 /* `to` ids per request */
        int64_t max_matrix;                  /* sources x targets per request */
        int64_t max_json_nodes;              /* one-to-all as JSON up to this many nodes */
        int64_t map_max_nodes;               /* GET /map sends at most this many nodes */
        int64_t max_url;                     /* bytes of request line URL */
        int64_t max_body;                    /* bytes of POST body */
        int64_t connections;                 /* open HTTP connections at most */
        int64_t idle_timeout_s;              /* idle keep-alive connections are closed after */
        int64_t request_timeout_s;           /* a request's head and body must arrive within */
        int64_t client_connections;          /* open connections per client address; 0 = any */
        bool client_limit_loopback;          /* client_connections counts loopback clients too */
        int64_t answer_memory_mb;            /* answers built but not sent, at most; 0 = any */
        int64_t retry_after_s;               /* Retry-After on 503 */
        int64_t shutdown_grace_ms;           /* extra wait for in-flight queries at exit */
        bool gpu;                            /* serve from a GPU when one is usable */
        char gpu_devices[128];               /* "all" or a list of CUDA ids */
        char gpu_partition[16];              /* "auto", "replicate" or "split" */
        int64_t gpu_streams;                 /* CUDA streams per GPU */
        char gpu_batch[16];                  /* "auto" or sources per GPU search */
        int64_t batch_wait_us;               /* a stream's wait for a fuller batch */
        int64_t gpu_memory_limit_mb;         /* device memory the engine may use; 0 = all free */
        char gpu_delta[32];                  /* delta-stepping rule or a number */
        int64_t log_level;                   /* enum ss_log_level */
        char log_format[16];                 /* auto, text, journal or json */
        bool access_log;                     /* one line per request */
        bool gzip;                           /* compress answers for clients that accept gzip */
        int64_t gzip_min_bytes;              /* ... of at least this many bytes */
        int64_t gzip_level;                  /* zlib level 1..9 */
        char cors_origin[1024];              /* "" (off), "*" or a list of origins */
};

/* Fills c with every key's default. */
void ss_config_defaults(struct ss_config *c);

/* Sets key to the text value, validated by the key's row. Returns SS_OK,
 * SS_EPARSE (unknown key) or SS_EINVAL (bad value), with err naming both. */
int ss_config_set(struct ss_config *c, const char *key, const char *value, struct ss_err *err);

/* Reads a config file: `key value` lines, `#` comments, blank lines. Stops
 * at the first bad line. Returns SS_OK, SS_EIO, SS_EPARSE or SS_EINVAL with
 * err of the form "FILE:LINE: cause". */
int ss_config_load(struct ss_config *c, const char *path, struct ss_err *err);

/* Returns true when key names a setting. */
bool ss_config_has(const char *key);

/* Writes one line per key (flag form, default, description) to out. */
void ss_config_usage(FILE *out);

/* Parses gpu_devices: "all" (*count 0) or a comma list of ids 0..63 into
 * ids (at most cap; count may be NULL). Returns SS_OK or SS_EINVAL. */
int ss_config_gpu_devices(const char *v, int *ids, unsigned cap, unsigned *count,
                          struct ss_err *err);
/* Parses gpu_batch: "auto" (0xffffffff) or 0..4096. Returns SS_OK or SS_EINVAL. */
int ss_config_gpu_batch(const char *v, unsigned *out, struct ss_err *err);
/* The gpu_partition key: "auto", "replicate" or "split" into *out
 * (SS_ENGINE_PARTITION_*). */
int ss_config_gpu_partition(const char *v, int *out, struct ss_err *err);
/* The cch key: "auto", "yes" or "no" into *out (SS_ENGINE_CCH_*). */
int ss_config_cch(const char *v, int *out, struct ss_err *err);

/* Splits "HOST:PORT" or "[V6]:PORT" into host (cap bytes) and port. Returns
 * SS_OK or SS_EINVAL with err naming the problem. */
int ss_config_split_listen(const char *s, char *host, size_t cap, uint16_t *port,
                           struct ss_err *err);

#endif
