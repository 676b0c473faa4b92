/* The spatial index, distances and hulls of geo/: every answer of the k-d
 * tree against a scan of all points. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check_run.h"
#include "geo/geo.h"

static uint64_t rnd(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The nearest point by a scan: lowest number among equals. */
static void scan(const int32_t *x, const int32_t *y, uint32_t n, double lon, double lat,
                 uint32_t *best, double *best_m)
{
        *best_m = INFINITY;
        for (uint32_t i = 0; i < n; i++) {
                double m = ss_geo_distance_m(lon, lat, x[i] / 1e6, y[i] / 1e6);
                if (m < *best_m) {
                        *best_m = m;
                        *best = i;
                }
        }
}

START_TEST(distances)
{
        /* A degree of latitude, a quarter of the equator, antipodes. */
        const double r = SS_GEO_EARTH_RADIUS_M;
        ck_assert_double_eq_tol(ss_geo_distance_m(0, 0, 0, 1), r * M_PI / 180, 1e-6);
        ck_assert_double_eq_tol(ss_geo_distance_m(0, 0, 90, 0), r * M_PI / 2, 1e-6);
        ck_assert_double_eq_tol(ss_geo_distance_m(0, 0, 180, 0), r * M_PI, 1e-6);
        ck_assert_double_eq_tol(ss_geo_distance_m(10, 90, -170, 90), 0, 1e-6);
        /* Across the antimeridian: 0.2 degrees of longitude at the equator. */
        ck_assert_double_eq_tol(ss_geo_distance_m(179.9, 0, -179.9, 0), r * M_PI / 900, 1e-6);
        /* New York to Los Angeles, about 3,936 km. */
        ck_assert_double_eq_tol(ss_geo_distance_m(-73.9857, 40.7484, -118.2437, 34.0522) / 1e3,
                                3936, 10);
}
END_TEST

/* Random points in an area (a city, a continent, the whole globe, around a
 * pole, across the antimeridian), random queries in and around it. */
static void check_area(uint32_t n, double lon0, double lat0, double span_lon, double span_lat,
                       uint64_t seed, unsigned threads)
{
        int32_t *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
        uint64_t s = seed;
        for (uint32_t i = 0; i < n; i++) {
                double lon = lon0 + span_lon * ((double)(rnd(&s) % 1000001) / 1e6 - 0.5);
                double lat = lat0 + span_lat * ((double)(rnd(&s) % 1000001) / 1e6 - 0.5);
                lon = lon > 180 ? lon - 360 : lon < -180 ? lon + 360 : lon;
                lat = lat > 90 ? 90 : lat < -90 ? -90 : lat;
                x[i] = (int32_t)lrint(lon * 1e6);
                y[i] = (int32_t)lrint(lat * 1e6);
                if (i % 7 == 3) { /* duplicates: the lowest number wins */
                        x[i] = x[i / 2];
                        y[i] = y[i / 2];
                }
        }
        struct ss_geo_index *ix;
        struct ss_err err;
        ck_assert_int_eq(ss_geo_index_build(x, y, n, threads, &ix, &err), SS_OK);
        ck_assert_uint_ge(ss_geo_index_bytes(ix), 17ull * n);
        for (int q = 0; q < 400; q++) {
                double lon = lon0 + 1.2 * span_lon * ((double)(rnd(&s) % 1000001) / 1e6 - 0.5);
                double lat = lat0 + 1.2 * span_lat * ((double)(rnd(&s) % 1000001) / 1e6 - 0.5);
                lon = lon > 180 ? lon - 360 : lon < -180 ? lon + 360 : lon;
                lat = lat > 90 ? 90 : lat < -90 ? -90 : lat;
                if (q % 5 == 1) { /* anywhere on the globe, mostly far from the points */
                        lon = (double)(rnd(&s) % 360000001) / 1e6 - 180;
                        lat = (double)(rnd(&s) % 180000001) / 1e6 - 90;
                }
                if (q % 10 == 0) { /* exactly on a point */
                        uint32_t i = (uint32_t)(rnd(&s) % n);
                        lon = x[i] / 1e6;
                        lat = y[i] / 1e6;
                }
                uint32_t got, want = 0;
                double got_m, want_m;
                ss_geo_nearest(ix, lon, lat, &got, &got_m);
                scan(x, y, n, lon, lat, &want, &want_m);
                ck_assert_msg(got == want && got_m == want_m,
                              "(%f, %f): index %u at %.3f m, scan %u at %.3f m", lon, lat, got,
                              got_m, want, want_m);
        }
        ss_geo_index_free(ix);
        free(x);
        free(y);
}

START_TEST(nearest_matches_scan)
{
        check_area(1, -73.9, 40.7, 0.1, 0.1, 1, 1);
        check_area(9, -73.9, 40.7, 0.1, 0.1, 2, 1);
        check_area(5000, -73.9, 40.7, 0.5, 0.4, 3, 1);  /* a city */
        check_area(20000, -96, 38, 60, 25, 4, 4);       /* a continent, four threads */
        check_area(20000, 0, 0, 360, 180, 5, 2);        /* the globe */
        check_area(5000, 0, 89, 360, 2, 6, 1);          /* the north pole */
        check_area(5000, 180, -17, 2, 2, 7, 1);         /* the antimeridian (Fiji) */
        check_area(3000, 10, 50, 0.0001, 0.0001, 8, 1); /* metres apart, many ties */
        /* Large enough for the top levels' selection on several threads
         * (kdtree.c, ss__pselect), with spread points and with ties. */
        check_area(70000, -96, 38, 60, 25, 9, 8);
        check_area(70000, 10, 50, 0.0001, 0.0001, 10, 8);
}
END_TEST

START_TEST(index_errors)
{
        int32_t x[] = {0, 181000000}, y[] = {0, 0};
        struct ss_geo_index *ix = (void *)1;
        struct ss_err err;
        ck_assert_int_eq(ss_geo_index_build(x, y, 0, 1, &ix, &err), SS_EINVAL);
        ck_assert_ptr_null(ix);
        ck_assert_int_eq(ss_geo_index_build(x, y, 2, 1, &ix, &err), SS_EINVAL);
        ck_assert_ptr_nonnull(strstr(err.msg, "node 2"));
}
END_TEST

static bool in_hull(const int32_t *x, const int32_t *y, const uint32_t *h, size_t k, uint32_t p)
{
        for (size_t i = 0; i < k; i++) {
                const uint32_t a = h[i], b = h[(i + 1) % k];
                const int64_t c =
                    (int64_t)(x[b] - x[a]) * (y[p] - y[a]) - (int64_t)(y[b] - y[a]) * (x[p] - x[a]);
                if (c < 0)
                        return false;
        }
        return true;
}

START_TEST(hulls)
{
        /* A square with points inside and on its edges. */
        int32_t x[] = {0, 10, 10, 0, 5, 5, 10, 3};
        int32_t y[] = {0, 0, 10, 10, 5, 0, 5, 7};
        uint32_t pts[] = {4, 0, 5, 1, 6, 2, 3, 7};
        uint32_t *h;
        size_t k;
        ck_assert_int_eq(ss_geo_hull(x, y, pts, 8, &h, &k), SS_OK);
        ck_assert_uint_eq(k, 4);
        ck_assert_uint_eq(h[0], 0); /* lowest x then y first, counter-clockwise */
        ck_assert_uint_eq(h[1], 1);
        ck_assert_uint_eq(h[2], 2);
        ck_assert_uint_eq(h[3], 3);
        free(h);
        /* One point, twice; two points; collinear points. */
        uint32_t one[] = {4, 4};
        ck_assert_int_eq(ss_geo_hull(x, y, one, 2, &h, &k), SS_OK);
        ck_assert_uint_eq(k, 1);
        ck_assert_uint_eq(h[0], 4);
        free(h);
        uint32_t line[] = {0, 5, 1};
        ck_assert_int_eq(ss_geo_hull(x, y, line, 3, &h, &k), SS_OK);
        ck_assert_uint_eq(k, 2);
        ck_assert_uint_eq(h[0], 0);
        ck_assert_uint_eq(h[1], 1);
        free(h);
        ck_assert_int_eq(ss_geo_hull(x, y, pts, 0, &h, &k), SS_EINVAL);
        /* Random clouds: every point inside or on the hull. */
        uint64_t s = 99;
        enum { N = 2000 };
        int32_t *rx = malloc(N * sizeof(*rx)), *ry = malloc(N * sizeof(*ry));
        uint32_t *all = malloc(N * sizeof(*all));
        for (uint32_t i = 0; i < N; i++) {
                rx[i] = (int32_t)(rnd(&s) % 2000001) - 1000000;
                ry[i] = (int32_t)(rnd(&s) % 2000001) - 1000000;
                all[i] = i;
        }
        ck_assert_int_eq(ss_geo_hull(rx, ry, all, N, &h, &k), SS_OK);
        ck_assert_uint_ge(k, 3);
        for (uint32_t i = 0; i < N; i++)
                ck_assert(in_hull(rx, ry, h, k, i));
        free(h);
        free(rx);
        free(ry);
        free(all);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("geo");
        TCase *tc = tcase_create("geo");
        tcase_add_test(tc, distances);
        tcase_add_test(tc, nearest_matches_scan);
        tcase_add_test(tc, index_errors);
        tcase_add_test(tc, hulls);
        tcase_set_timeout(tc, 60);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}
