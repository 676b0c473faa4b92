/* Integration: live weights through the real daemon. POST /weights errors
 * (each named, nothing applied) and success (every answer after it equal
 * to a Dijkstra on the changed graph, with the version it used), updates
 * sent at once, the weights file at startup and at SIGHUP (a bad one
 * keeps the old weights), and an update made while a reload runs, which
 * the reloaded graph keeps. */
#include <check.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cpu/dijkstra.h"
#include "harness.h"
#include "io/load.h"

static const char *road; /* a generated road graph of 3,000 nodes */
static char road_gr[300], road_co[300];

static void setup(void)
{
        road = h_gen_road(3000, 41, "road3k");
        snprintf(road_gr, sizeof(road_gr), "%s.gr", road);
        snprintf(road_co, sizeof(road_co), "%s.co", road);
}

static void sleep_ms(int ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static json_t *parse(const struct resp *r)
{
        json_t *j = json_loads(r->body ? r->body : "", 0, NULL);
        ck_assert_msg(j != NULL, "not JSON: %.200s", r->body ? r->body : "");
        return j;
}

static json_int_t field(json_t *j, const char *key)
{
        json_t *v = json_object_get(j, key);
        ck_assert_msg(json_is_integer(v), "no integer \"%s\"", key);
        return json_integer_value(v);
}

/* The reference: the graph as the daemon loaded it, whose weights the test
 * changes as it asks the daemon to. */
static struct ss_graph *ref_load(void)
{
        struct ss_err err;
        struct ss_graph *g = ss_graph_load(road_gr, road_co, NULL, &err);
        ck_assert_msg(g != NULL, "%s", err.msg);
        return g;
}

/* k random changes of g's arcs (DIMACS ids) applied to g (every parallel
 * arc, as the daemon does), and the JSON body that asks for them; with
 * part >= 0 only arcs whose tail is part modulo 8. */
static char *changes_of(struct ss_graph *g, int k, uint64_t *seed, int part)
{
        size_t cap = 64 + (size_t)k * 64, at = 0;
        char *body = malloc(cap);
        at += (size_t)snprintf(body, cap, "{\"arcs\":[");
        for (int i = 0; i < k; i++) {
                uint64_t e;
                uint32_t u;
                do {
                        e = rnd(seed) % g->m;
                        for (u = 0; g->row[u + 1] <= e; u++)
                                ;
                } while (part >= 0 && u % 8 != (uint32_t)part);
                const uint32_t v = g->col[e];
                const uint32_t w = i % 2 ? g->w[e] * 3 + 7 : g->w[e] / 3;
                for (uint64_t a = g->row[u]; a < g->row[u + 1]; a++)
                        if (g->col[a] == v)
                                g->w[a] = w;
                at +=
                    (size_t)snprintf(body + at, cap - at, "%s{\"from\":%u,\"to\":%u,\"weight\":%u}",
                                     i ? "," : "", u + 1, v + 1, w);
        }
        snprintf(body + at, cap - at, "]}");
        return body;
}

static char *changes(struct ss_graph *g, int k, uint64_t *seed)
{
        return changes_of(g, k, seed, -1);
}

static ss_dist dist(const struct ss_graph *g, uint32_t s, uint32_t t)
{
        struct ss_dijkstra_ws *ws = ss_dijkstra_ws_new(g->n);
        ck_assert_int_eq(ss_dijkstra_run(g, ws, s - 1, t - 1, NULL), SS_OK);
        ss_dist d = ss_dijkstra_dist(ws, t - 1);
        ss_dijkstra_ws_free(ws);
        return d;
}

/* n random routes (auto, and by name) answer as g and name version. */
static void check_routes(const struct daemon *d, const struct ss_graph *g, int n,
                         json_int_t version, uint64_t *seed)
{
        static const char *const algos[] = {"", "&algorithm=dijkstra", "&algorithm=cch",
                                            "&algorithm=astar"};
        for (int i = 0; i < n; i++) {
                const uint32_t s = 1 + (uint32_t)(rnd(seed) % g->n);
                const uint32_t t = 1 + (uint32_t)(rnd(seed) % g->n);
                char path[160];
                snprintf(path, sizeof(path), "/route?from=%u&to=%u%s", s, t, algos[i % 4]);
                struct resp r;
                h_get(d, path, &r);
                ck_assert_msg(r.status == 200, "%s: %ld %s", path, r.status, r.body);
                json_t *j = parse(&r);
                ck_assert_msg(field(j, "distance") == (json_int_t)dist(g, s, t),
                              "%s: %lld, Dijkstra %llu", path, (long long)field(j, "distance"),
                              (unsigned long long)dist(g, s, t));
                ck_assert_int_eq(field(j, "weights_version"), version);
                json_decref(j);
                h_resp_free(&r);
        }
}

static json_t *status_of(const struct daemon *d)
{
        struct resp r;
        h_get(d, "/status", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        h_resp_free(&r);
        return j;
}

static json_int_t weights_version(const struct daemon *d)
{
        json_t *j = status_of(d);
        json_int_t v = field(json_object_get(j, "weights"), "version");
        json_decref(j);
        return v;
}

/* POSTs body and checks the status and that the message holds `says`. */
static void refused(const struct daemon *d, const char *body, long status, const char *says)
{
        struct resp r;
        h_req(d, "POST", "/weights", body, &r);
        ck_assert_msg(r.status == status, "%s -> %ld %s", body, r.status, r.body);
        ck_assert_msg(strstr(r.body, says), "%s -> %s (wanted \"%s\")", body, r.body, says);
        h_resp_free(&r);
}

/* ------------------------------------------------------------------------ */

START_TEST(bad_updates_are_named_and_change_nothing)
{
        struct ss_graph *g = ref_load();
        struct daemon d;
        const char *args[] = {"--graph", road_gr, "--max-body", "2048", NULL};
        h_start(&d, args, true);
        /* an arc that exists and one that does not (1 -> 1: no loops here) */
        char body[300];
        snprintf(body, sizeof(body),
                 "{\"arcs\":[{\"from\":1,\"to\":%u,\"weight\":5},{\"from\":1,\"to\":1,"
                 "\"weight\":5}]}",
                 g->col[g->row[0]] + 1);
        refused(&d, body, 400, "arcs[1]: the graph has no arc from 1 to 1");
        refused(&d, "{\"arcs\":[{\"from\":1,\"to\":3001,\"weight\":5}]}", 400,
                "arcs[0].to: 3001 is outside 1..3000");
        refused(&d, "{\"arcs\":[{\"from\":0,\"to\":2,\"weight\":5}]}", 400, "arcs[0].from");
        refused(&d, "{\"arcs\":[{\"from\":1,\"to\":2,\"weight\":4294967296}]}", 400,
                "arcs[0].weight");
        refused(&d, "{\"arcs\":[{\"from\":1,\"to\":2,\"weight\":1.5}]}", 400,
                "arcs[0].weight: must be an integer");
        refused(&d, "{\"arcs\":[{\"from\":1,\"to\":2}]}", 400,
                "arcs[0]: \\\"weight\\\" is missing");
        refused(&d, "{\"arcs\":[{\"from\":1,\"to\":2,\"weight\":3,\"speed\":4}]}", 400,
                "unknown key");
        refused(&d, "{\"arcs\":[7]}", 400, "arcs[0]: must be an object");
        refused(&d, "{\"edges\":[]}", 400, "InvalidQuery");
        refused(&d, "[1,2]", 400, "InvalidQuery");
        refused(&d, "{\"arcs\":", 400, "not JSON");
        refused(&d, "", 400, "needs a JSON body");
        /* over max_body: 413 */
        char *big = malloc(4096);
        memset(big, ' ', 4095);
        big[4095] = '\0';
        memcpy(big, "{\"arcs\":[]}", 11);
        refused(&d, big, 413, "TooBig");
        free(big);
        struct resp r;
        h_req(&d, "POST", "/weights?from=1", "{\"arcs\":[]}", &r);
        ck_assert_int_eq(r.status, 400);
        h_resp_free(&r);
        h_get(&d, "/weights", &r);
        ck_assert_int_eq(r.status, 405);
        ck_assert_str_eq(r.allow, "POST");
        h_resp_free(&r);
        /* nothing was applied: version 0 and the file's weights */
        ck_assert_int_eq(weights_version(&d), 0);
        uint64_t seed = 3;
        check_routes(&d, g, 12, 0, &seed);
        /* an empty update and one that changes nothing make no version */
        snprintf(body, sizeof(body), "{\"arcs\":[{\"from\":1,\"to\":%u,\"weight\":%u}]}",
                 g->col[g->row[0]] + 1, g->w[g->row[0]]);
        for (int i = 0; i < 2; i++) {
                h_req(&d, "POST", "/weights", i ? body : "{\"arcs\":[]}", &r);
                ck_assert_int_eq(r.status, 200);
                json_t *j = parse(&r);
                ck_assert_int_eq(field(j, "weights_version"), 0);
                ck_assert_int_eq(field(j, "changed"), 0);
                json_decref(j);
                h_resp_free(&r);
        }
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        ss_graph_unref(g);
}
END_TEST

START_TEST(updates_apply_everywhere)
{
        struct ss_graph *g = ref_load();
        struct daemon d;
        const char *args[] = {"--graph", road_gr, "--coords", road_co, "--landmarks", "4", NULL};
        h_start(&d, args, true);
        uint64_t seed = 9;
        check_routes(&d, g, 8, 0, &seed);
        for (int v = 1; v <= 3; v++) {
                char *body = changes(g, 200, &seed);
                struct resp r;
                h_req(&d, "POST", "/weights", body, &r);
                free(body);
                ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
                json_t *j = parse(&r);
                ck_assert_str_eq(json_string_value(json_object_get(j, "code")), "Ok");
                ck_assert_int_eq(field(j, "weights_version"), v);
                ck_assert_int_gt(field(j, "changed"), 100);
                ck_assert(json_is_number(json_object_get(j, "ms")));
                json_decref(j);
                h_resp_free(&r);
                check_routes(&d, g, 30, v, &seed);
        }
        /* distances: a matrix and its version; the header on binary answers */
        struct resp r;
        h_get(&d, "/distances?from=1,2&to=3,2999", &r);
        ck_assert_int_eq(r.status, 200);
        json_t *j = parse(&r);
        ck_assert_int_eq(field(j, "weights_version"), 3);
        json_t *rows = json_object_get(j, "distances");
        ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(rows, 1), 1)),
                         (json_int_t)dist(g, 2, 2999));
        json_decref(j);
        h_resp_free(&r);
        /* /status and /metrics */
        json_t *st = status_of(&d);
        json_t *w = json_object_get(st, "weights");
        ck_assert_int_eq(field(w, "version"), 3);
        ck_assert_int_eq(field(w, "updates"), 3);
        ck_assert(json_is_string(json_object_get(w, "changed_at")));
        ck_assert(json_is_true(json_object_get(w, "cch")));
        json_decref(st);
        h_get(&d, "/metrics", &r);
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_weight_updates_total{result=\"ok\"} 3\n"));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_weights_version 3\n"));
        ck_assert_ptr_nonnull(strstr(r.body, "ssspd_weight_update_seconds_count 3\n"));
        h_resp_free(&r);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        ss_graph_unref(g);
}
END_TEST

struct post {
        const struct daemon *d;
        char *body;
        struct resp r;
};

static void *post_main(void *arg)
{
        struct post *p = arg;
        h_req(p->d, "POST", "/weights", p->body, &p->r);
        return NULL;
}

/* Eight updates at once are applied one after the other, none lost. */
START_TEST(updates_at_once_are_all_applied)
{
        struct ss_graph *g = ref_load();
        struct daemon d;
        const char *args[] = {"--graph", road_gr, NULL};
        h_start(&d, args, true);
        uint64_t seed = 77;
        struct post p[8];
        pthread_t th[8];
        for (int i = 0; i < 8; i++) {
                /* each its own arcs: the end state does not depend on the order */
                p[i] = (struct post){.d = &d, .body = changes_of(g, 40, &seed, i)};
                ck_assert_int_eq(pthread_create(&th[i], NULL, post_main, &p[i]), 0);
        }
        bool seen[9] = {false};
        for (int i = 0; i < 8; i++) {
                pthread_join(th[i], NULL);
                ck_assert_msg(p[i].r.status == 200, "%ld %s", p[i].r.status, p[i].r.body);
                json_t *j = parse(&p[i].r);
                json_int_t v = field(j, "weights_version");
                ck_assert(v >= 1 && v <= 8 && !seen[v]);
                seen[v] = true;
                json_decref(j);
                h_resp_free(&p[i].r);
                free(p[i].body);
        }
        check_routes(&d, g, 30, 8, &seed);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        ss_graph_unref(g);
}
END_TEST

/* ------------------------------------------------------------------------
 * The weights file and reloads
 */

/* Writes k changes of g (applied to g) as a weights file. */
static void write_weights(const char *path, struct ss_graph *g, int k, uint64_t *seed)
{
        char *body = changes(g, k, seed);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "c new weights for the test\n");
        /* the body lists {"from":U,"to":V,"weight":W}: the same as a lines */
        for (char *p = strstr(body, "{\"from\":"); p; p = strstr(p + 1, "{\"from\":")) {
                unsigned u, v, w;
                ck_assert_int_eq(sscanf(p, "{\"from\":%u,\"to\":%u,\"weight\":%u}", &u, &v, &w), 3);
                fprintf(f, "a %u %u %u\n", u, v, w);
        }
        ck_assert_int_eq(fclose(f), 0);
        free(body);
}

static json_t *wait_reload(const struct daemon *d, const char *key, int want)
{
        for (int i = 0; i < 1000; i++) {
                json_t *j = status_of(d);
                if (field(json_object_get(j, "reloads"), key) == want)
                        return j;
                json_decref(j);
                sleep_ms(20);
        }
        ck_abort_msg("no reload %s after 20 s", key);
        return NULL;
}

START_TEST(weights_file_at_start_and_reload)
{
        struct ss_graph *g = ref_load();
        char wfile[400], tmp[420];
        snprintf(wfile, sizeof(wfile), "%s/live.weights", h_tmpdir());
        snprintf(tmp, sizeof(tmp), "%s.tmp", wfile);
        uint64_t seed = 5;
        write_weights(wfile, g, 300, &seed);
        struct daemon d;
        const char *args[] = {"--graph", road_gr, "--weights", wfile, NULL};
        h_start(&d, args, true);
        /* the file's weights are the graph's as loaded: version 0 */
        check_routes(&d, g, 20, 0, &seed);
        json_t *st = status_of(&d);
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(st, "weights"), "file")),
                         "live.weights");
        json_decref(st);

        /* An update, then the file rewritten and SIGHUP: the reload starts
         * again from the files (the update was made before it began). */
        char *body = changes(g, 50, &seed);
        struct resp r;
        h_req(&d, "POST", "/weights", body, &r);
        free(body);
        ck_assert_int_eq(r.status, 200);
        h_resp_free(&r);
        check_routes(&d, g, 10, 1, &seed);
        struct ss_graph *fresh = ref_load(); /* the graph file's own weights */
        write_weights(tmp, fresh, 300, &seed);
        ck_assert_int_eq(rename(tmp, wfile), 0);
        kill(d.pid, SIGHUP);
        json_decref(wait_reload(&d, "ok", 1));
        check_routes(&d, fresh, 20, 0, &seed);

        /* A bad file (an arc the graph lacks): the reload fails and names
         * it; the weights in force stay. */
        FILE *f = fopen(tmp, "w");
        ck_assert_ptr_nonnull(f);
        fprintf(f, "c bad\na 1 %u 10\na 1 1 10\n", g->col[g->row[0]] + 1);
        fclose(f);
        ck_assert_int_eq(rename(tmp, wfile), 0);
        kill(d.pid, SIGHUP);
        st = wait_reload(&d, "failed", 1);
        const char *why =
            json_string_value(json_object_get(json_object_get(st, "reloads"), "last_error"));
        ck_assert_msg(why && strstr(why, "live.weights: arc line 2 of the file") &&
                          strstr(why, "no arc from 1 to 1"),
                      "%s", why ? why : "(none)");
        json_decref(st);
        check_routes(&d, fresh, 10, 0, &seed);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);

        /* A bad file at startup stops the daemon with the reason. */
        const char *bad[] = {"--graph", road_gr, "--weights", wfile, NULL};
        h_start(&d, bad, false);
        ck_assert_int_eq(h_stop(&d, 0), 1);
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "grep -q 'no arc from 1 to 1' '%s'", d.log);
        ck_assert_msg(system(cmd) == 0, "the log does not name the bad arc");
        ss_graph_unref(fresh);
        ss_graph_unref(g);
}
END_TEST

/* The coordinates come from a FIFO, so a reload waits for the test to feed
 * it: an update made meanwhile goes to the old graph at once, and the
 * reloaded graph serves with it too. */
START_TEST(update_during_reload_is_kept)
{
        struct ss_graph *g = ref_load();
        char fifo[300];
        snprintf(fifo, sizeof(fifo), "%s/reload.fifo", h_tmpdir());
        unlink(fifo);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        struct daemon d;
        const char *args[] = {"--graph", road_gr, "--coords", fifo, NULL};
        h_start(&d, args, false);
        char cmd[700];
        snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", road_co, fifo);
        ck_assert_int_eq(system(cmd), 0);
        long health = 0;
        for (int i = 0; i < 500 && health != 200; i++) {
                struct resp r;
                h_get(&d, "/health", &r);
                health = r.status;
                h_resp_free(&r);
                sleep_ms(20);
        }
        ck_assert_int_eq(health, 200);

        kill(d.pid, SIGHUP); /* the reload now waits for the coordinates */
        json_t *st = NULL;
        for (int i = 0; i < 500; i++) {
                st = status_of(&d);
                if (json_is_true(json_object_get(json_object_get(st, "reloads"), "in_progress")))
                        break;
                json_decref(st);
                st = NULL;
                sleep_ms(20);
        }
        ck_assert_ptr_nonnull(st);
        json_decref(st);
        uint64_t seed = 13;
        char *body = changes(g, 100, &seed);
        struct resp r;
        h_req(&d, "POST", "/weights", body, &r);
        free(body);
        ck_assert_int_eq(r.status, 200);
        h_resp_free(&r);
        check_routes(&d, g, 10, 1, &seed); /* the old graph, updated */
        ck_assert_int_eq(system(cmd), 0);
        json_decref(wait_reload(&d, "ok", 1));
        /* the reloaded graph, with the update applied again */
        check_routes(&d, g, 20, 1, &seed);
        ck_assert_int_eq(h_stop(&d, SIGTERM), 0);
        ss_graph_unref(g);
}
END_TEST

static Suite *weights_suite(void)
{
        Suite *s = suite_create("server.weights");
        TCase *tc = tcase_create("weights");
        tcase_add_unchecked_fixture(tc, setup, NULL);
        tcase_set_timeout(tc, 90);
        tcase_add_test(tc, bad_updates_are_named_and_change_nothing);
        tcase_add_test(tc, updates_apply_everywhere);
        tcase_add_test(tc, updates_at_once_are_all_applied);
        tcase_add_test(tc, weights_file_at_start_and_reload);
        tcase_add_test(tc, update_during_reload_is_kept);
        suite_add_tcase(s, tc);
        return s;
}

int main(int argc, char **argv)
{
        return h_main(argc, argv, weights_suite, false);
}
