#include "harness.h"
#include "../check_run.h"

#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *h_ssspd, *h_gen;

static char dir[64];

void h_cleanup(void)
{
        char cmd[128];
        if (!dir[0])
                return;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        dir[0] = '\0';
}

const char *h_tmpdir(void)
{
        if (!dir[0]) {
                snprintf(dir, sizeof(dir), "/tmp/ssspd-test-XXXXXX");
                ck_assert_ptr_nonnull(mkdtemp(dir));
        }
        return dir;
}

const char *h_gen_road(uint64_t nodes, uint64_t seed, const char *name)
{
        static char prefix[4][256];
        static int next;
        char *p = prefix[next++ % 4];
        char cmd[1024];
        snprintf(p, 256, "%s/%s", h_tmpdir(), name);
        snprintf(cmd, sizeof(cmd), "'%s' road --nodes %llu --seed %llu --out '%s' --quiet", h_gen,
                 (unsigned long long)nodes, (unsigned long long)seed, p);
        ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
        return p;
}

void h_write_time_graph(const char *from, const char *to, bool shuffle)
{
        FILE *in = fopen(from, "r"), *out = fopen(to, "w");
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(out);
        char line[256];
        unsigned long long k = 0;
        while (fgets(line, sizeof(line), in)) {
                unsigned long long u, v, w;
                if (sscanf(line, "a %llu %llu %llu", &u, &v, &w) == 3) {
                        k++;
                        if (shuffle && k == 5) /* the fifth arc goes elsewhere */
                                v = v % 1000 + 1;
                        fprintf(out, "a %llu %llu %llu\n", u, v, (w * 7 + k) % 1000 + 1);
                } else {
                        fputs(line, out);
                }
        }
        fclose(in);
        ck_assert_int_eq(fclose(out), 0);
}

static uint16_t ss__free_port(void)
{
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof(a);
        ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
        close(s);
        return ntohs(a.sin_port);
}

static void ss__sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

void h_dump_log(const struct daemon *d)
{
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "tail -n 40 '%s' >&2", d->log);
        if (system(cmd) != 0)
                fprintf(stderr, "(no daemon log)\n");
}

char *h_log(const struct daemon *d)
{
        FILE *f = fopen(d->log, "r");
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        ck_assert_ptr_nonnull(m);
        if (f) {
                char chunk[4096];
                size_t k;
                while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
                        fwrite(chunk, 1, k, m);
                fclose(f);
        }
        fclose(m);
        return buf;
}

double h_metric(const struct daemon *d, const char *series)
{
        struct resp r;
        h_get(d, "/metrics", &r);
        ck_assert_int_eq(r.status, 200);
        double v = 0;
        size_t sl = strlen(series);
        for (const char *line = r.body; line && *line;) {
                if (!strncmp(line, series, sl) && line[sl] == ' ')
                        v = strtod(line + sl + 1, NULL);
                const char *nl = strchr(line, '\n');
                line = nl ? nl + 1 : NULL;
        }
        h_resp_free(&r);
        return v;
}

void h_start(struct daemon *d, const char *const *args, bool wait)
{
        static int serial;
        char listen[64];
        const char *argv[64];
        int n = 0;

        memset(d, 0, sizeof(*d));
        d->port = ss__free_port();
        snprintf(listen, sizeof(listen), "127.0.0.1:%u", d->port);
        snprintf(d->log, sizeof(d->log), "%s/daemon-%d-%d.log", h_tmpdir(), (int)getpid(),
                 serial++);
        argv[n++] = h_ssspd;
        bool own_listen = false; /* the test chose the address itself */
        for (int i = 0; args && args[i] && n < 60; i++) {
                if (!strcmp(args[i], "--listen") && args[i + 1]) {
                        const char *colon = strrchr(args[i + 1], ':');
                        d->port = colon ? (uint16_t)atoi(colon + 1) : d->port;
                        own_listen = true;
                }
                argv[n++] = args[i];
        }
        if (!own_listen) {
                argv[n++] = "--listen";
                argv[n++] = listen;
        }
        /* The same tests with several HTTP threads (meson's *-threads). */
        const char *threads = getenv("SS_TEST_HTTP_THREADS");
        if (threads && *threads) {
                argv[n++] = "--http-threads";
                argv[n++] = threads;
        }
        argv[n] = NULL;

        d->pid = fork();
        ck_assert_int_ge(d->pid, 0);
        if (d->pid == 0) {
                /* A failed test must not leave a daemon behind. */
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) {
                        dup2(fd, 2);
                        close(fd);
                }
                execv(h_ssspd, (char *const *)argv);
                _exit(127);
        }
        if (!wait)
                return;
        for (int i = 0; i < 1200; i++) {
                struct resp r;
                h_get(d, "/health", &r);
                long st = r.status;
                h_resp_free(&r);
                if (st == 200)
                        return;
                int status;
                if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
                        h_dump_log(d);
                        ck_abort_msg("ssspd exited during startup (status %d)", status);
                }
                ss__sleep_ms(50);
        }
        h_dump_log(d);
        ck_abort_msg("ssspd did not become healthy within 60 s");
}

int h_stop(struct daemon *d, int sig)
{
        int status = 0;
        if (d->pid <= 0)
                return -1;
        if (sig)
                kill(d->pid, sig);
        ck_assert_int_eq(waitpid(d->pid, &status, 0), d->pid);
        d->pid = 0;
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}

/* ------------------------------------------------------------------------
 * HTTP
 */

static size_t ss__write(char *data, size_t size, size_t n, void *arg)
{
        struct resp *r = arg;
        size_t len = size * n;
        char *nb = realloc(r->body, r->len + len + 1);
        if (!nb)
                return 0;
        memcpy(nb + r->len, data, len);
        r->body = nb;
        r->len += len;
        r->body[r->len] = '\0';
        return len;
}

static void ss__copy_header(const char *line, size_t len, const char *name, char *dst, size_t cap)
{
        size_t nl = strlen(name);
        if (len <= nl || strncasecmp(line, name, nl) != 0)
                return;
        line += nl;
        len -= nl;
        while (len && (*line == ' '))
                line++, len--;
        while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
                len--;
        if (len >= cap)
                len = cap - 1;
        memcpy(dst, line, len);
        dst[len] = '\0';
}

static size_t ss__header(char *line, size_t size, size_t n, void *arg)
{
        struct resp *r = arg;
        size_t len = size * n;
        ss__copy_header(line, len, "Retry-After:", r->retry_after, sizeof(r->retry_after));
        ss__copy_header(line, len, "Allow:", r->allow, sizeof(r->allow));
        ss__copy_header(line, len, "Content-Type:", r->ctype, sizeof(r->ctype));
        ss__copy_header(line, len, "Content-Encoding:", r->encoding, sizeof(r->encoding));
        ss__copy_header(line, len, "Vary:", r->vary, sizeof(r->vary));
        ss__copy_header(line, len, "X-Request-Id:", r->rid, sizeof(r->rid));
        ss__copy_header(line, len, "Access-Control-Allow-Origin:", r->acao, sizeof(r->acao));
        ss__copy_header(line, len, "Access-Control-Allow-Methods:", r->acam, sizeof(r->acam));
        ss__copy_header(line, len, "Access-Control-Expose-Headers:", r->aceh, sizeof(r->aceh));
        return len;
}

void h_req(const struct daemon *d, const char *method, const char *path, const char *body,
           struct resp *r)
{
        h_req_h(d, method, path, body, NULL, r);
}

void h_req_h(const struct daemon *d, const char *method, const char *path, const char *body,
             const char *const *headers, struct resp *r)
{
        char url[1 << 16];
        memset(r, 0, sizeof(*r));
        snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", d->port, path);
        CURL *c = curl_easy_init();
        ck_assert_ptr_nonnull(c);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ss__write);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, ss__header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        struct curl_slist *hdr = NULL;
        for (size_t i = 0; headers && headers[i]; i++)
                hdr = curl_slist_append(hdr, headers[i]);
        if (!strcmp(method, "HEAD"))
                curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        if (body)
                hdr = curl_slist_append(hdr, "Content-Type: application/json");
        if (hdr)
                curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
        if (body) {
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        }
        r->curl_rc = curl_easy_perform(c);
        if (r->curl_rc == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
        curl_slist_free_all(hdr);
        curl_easy_cleanup(c);
}

void h_get(const struct daemon *d, const char *path, struct resp *r)
{
        h_req(d, "GET", path, NULL, r);
}

void h_resp_free(struct resp *r)
{
        free(r->body);
        r->body = NULL;
}

int h_main(int argc, char **argv, Suite *(*make)(void), bool nofork)
{
        if (argc < 3) {
                fprintf(stderr, "usage: %s SSSPD SSSPD-GEN\n", argv[0]);
                return 2;
        }
        h_ssspd = argv[1];
        h_gen = argv[2];
        curl_global_init(CURL_GLOBAL_DEFAULT);
        const int status = ss_check_run(make(), nofork);
        h_cleanup();
        curl_global_cleanup();
        return status;
}

int h_connect(const struct daemon *d)
{
        int s = socket(AF_INET, SOCK_STREAM, 0);
        ck_assert_int_ge(s, 0);
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons(d->port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        ck_assert_msg(connect(s, (struct sockaddr *)&a, sizeof(a)) == 0, "connect: %s",
                      strerror(errno));
        return s;
}

size_t h_raw(const struct daemon *d, const char *req, size_t len, int timeout_ms, char *out,
             size_t cap)
{
        int s = h_connect(d);
        size_t sent = 0;
        while (sent < len) {
                ssize_t k = send(s, req + sent, len - sent, MSG_NOSIGNAL);
                if (k <= 0)
                        break;
                sent += (size_t)k;
        }
        size_t got = 0;
        struct pollfd p = {.fd = s, .events = POLLIN};
        while (got + 1 < cap && poll(&p, 1, timeout_ms) == 1) {
                ssize_t k = recv(s, out + got, cap - 1 - got, 0);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        out[got] = '\0';
        close(s);
        return got;
}

long h_inflight(const struct daemon *d)
{
        struct resp r;
        h_get(d, "/status", &r);
        long v = -1;
        const char *at = r.status == 200 && r.body ? strstr(r.body, "\"http_inflight\":") : NULL;
        if (at)
                v = strtol(at + strlen("\"http_inflight\":"), NULL, 10);
        h_resp_free(&r);
        return v;
}
