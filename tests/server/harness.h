/* Integration-test helpers: run the real ssspd binary on a loopback port
 * and talk to it with libcurl. */
#ifndef SS_TEST_HARNESS_H
#define SS_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon {
        pid_t pid;
        uint16_t port;
        char log[256]; /* the daemon's stderr */
};

struct resp {
        long status; /* HTTP status, 0 when the request failed */
        int curl_rc;
        char *body;
        size_t len;
        char retry_after[32];
        char allow[64];
        char ctype[64];
        char encoding[32]; /* Content-Encoding */
        char vary[64];
        char rid[96];   /* X-Request-Id */
        char acao[128]; /* Access-Control-Allow-Origin */
        char acam[64];  /* Access-Control-Allow-Methods */
        char aceh[128]; /* Access-Control-Expose-Headers */
};

struct Suite;

/* The main() of a daemon test: takes argv[1] (the daemon) and argv[2]
 * (ssspd-gen), sets up libcurl, runs the suite that make() builds (without
 * forking when nofork, so that a test can end the process with 77 to skip),
 * and cleans up. Returns the exit status: 0 all passed, 1 a failure, 2 usage. */
int h_main(int argc, char **argv, struct Suite *(*make)(void), bool nofork);

/* Paths given to the test binary: argv[1] the daemon, argv[2] ssspd-gen. */
extern const char *h_ssspd, *h_gen;
/* A fresh temporary directory for this process. */
const char *h_tmpdir(void);
/* Removes the temporary directory and everything in it (at exit). */
void h_cleanup(void);

/* Runs ssspd-gen road --nodes n --seed seed --out DIR/name; returns the prefix. */
const char *h_gen_road(uint64_t nodes, uint64_t seed, const char *name);

/* Writes the travel-time twin of the .gr file from to the file to: the
 * same arcs in the same order with other weights, as a DIMACS -t file;
 * with shuffle, the fifth arc goes to another node (a twin that does not
 * match). */
void h_write_time_graph(const char *from, const char *to, bool shuffle);

/* Starts ssspd with args (NULL-terminated) plus --listen on a free port
 * (unless args name --listen themselves).
 * With wait, returns once /health answers 200 (fails the test after 60 s). */
void h_start(struct daemon *d, const char *const *args, bool wait);
/* Sends sig and waits; returns the exit status (or 128 + signal). */
int h_stop(struct daemon *d, int sig);
/* Prints the daemon's log to stderr (for failures). */
void h_dump_log(const struct daemon *d);
/* The daemon's log so far (malloc'd, NUL-terminated; "" when none). */
char *h_log(const struct daemon *d);
/* The value of the /metrics sample line that starts with `series` (e.g.
 * `ssspd_http_requests_total{endpoint="route",code="200"}`); 0 when absent. */
double h_metric(const struct daemon *d, const char *series);

/* One request; body may be NULL. */
void h_req(const struct daemon *d, const char *method, const char *path, const char *body,
           struct resp *r);
void h_get(const struct daemon *d, const char *path, struct resp *r);
/* h_req() with extra request headers (NULL-terminated "Name: value"
 * lines); the body comes back as sent, never decoded. */
void h_req_h(const struct daemon *d, const char *method, const char *path, const char *body,
             const char *const *headers, struct resp *r);
void h_resp_free(struct resp *r);

/* Raw sockets, for what curl cannot send. h_connect() returns a connected
 * socket to the daemon (fails the test otherwise). h_raw() sends len bytes
 * of req on a new connection and reads the answer until the peer closes,
 * cap-1 bytes arrive or timeout_ms pass; returns the bytes read (0 when
 * nothing came), NUL-terminated in out. */
int h_connect(const struct daemon *d);
size_t h_raw(const struct daemon *d, const char *req, size_t len, int timeout_ms, char *out,
             size_t cap);
/* The daemon's http_inflight from /status (-1 when it does not answer). */
long h_inflight(const struct daemon *d);

#endif
