/* POST /weights bodies and answers without a socket: each kind of bad body
 * with its class and the entry and field it names, good bodies, and the
 * answers (an engine's bad change named as its entry in "arcs"). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "server/http_error.h"
#include "server/weights_json.h"
#include "../check_run.h"

static void bad(const char *body, int code, const char *says)
{
        struct ss_weight_change *c = (void *)1;
        size_t n = 99;
        struct ss_err err = {0};
        ck_assert_int_eq(ss_weights_parse(body, strlen(body), 10, &c, &n, &err), code);
        ck_assert_ptr_null(c);
        ck_assert_uint_eq(n, 0);
        ck_assert_msg(strstr(err.msg, says), "%s: \"%s\" (wanted \"%s\")", body, err.msg, says);
}

START_TEST(bad_bodies)
{
        bad("", SS_EPARSE, "not JSON");
        bad("{\"arcs\": [", SS_EPARSE, "not JSON");
        bad("[]", SS_EPARSE, "must be a JSON object");
        bad("{}", SS_EPARSE, "and nothing else");
        bad("{\"arcs\": {}}", SS_EPARSE, "and nothing else");
        bad("{\"arcs\": [], \"more\": 1}", SS_EPARSE, "and nothing else");
        bad("{\"arcs\": [], \"arcs\": []}", SS_EPARSE, "not JSON"); /* duplicate key */
        bad("{\"arcs\": [1]}", SS_EPARSE, "arcs[0]: must be an object");
        bad("{\"arcs\": [{\"from\":1,\"to\":2,\"weight\":3}, {\"to\":2,\"weight\":3}]}", SS_EPARSE,
            "arcs[1]: \"from\" is missing");
        bad("{\"arcs\": [{\"from\":1,\"to\":2,\"weight\":3,\"w\":3}]}", SS_EPARSE,
            "arcs[0]: unknown key \"w\"");
        bad("{\"arcs\": [{\"from\":\"1\",\"to\":2,\"weight\":3}]}", SS_EINVAL,
            "arcs[0].from: must be an integer");
        bad("{\"arcs\": [{\"from\":1,\"to\":11,\"weight\":3}]}", SS_EINVAL,
            "arcs[0].to: 11 is outside 1..10");
        bad("{\"arcs\": [{\"from\":0,\"to\":1,\"weight\":3}]}", SS_EINVAL,
            "arcs[0].from: 0 is outside 1..10");
        bad("{\"arcs\": [{\"from\":1,\"to\":2,\"weight\":-1}]}", SS_EINVAL,
            "arcs[0].weight: -1 is outside 0..4294967295");
        bad("{\"arcs\": [{\"from\":1,\"to\":2,\"weight\":4294967296}]}", SS_EINVAL,
            "arcs[0].weight");
        bad("{\"arcs\": [{\"from\":1,\"to\":2,\"weight\":2.0}]}", SS_EINVAL, "must be an integer");
}
END_TEST

START_TEST(good_bodies)
{
        const char *body = "{\"arcs\": [{\"weight\": 0, \"to\": 10, \"from\": 1},"
                           " {\"from\": 3, \"to\": 2, \"weight\": 4294967295}]}";
        struct ss_weight_change *c;
        size_t n;
        struct ss_err err;
        ck_assert_int_eq(ss_weights_parse(body, strlen(body), 10, &c, &n, &err), SS_OK);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(c[0].tail, 0);
        ck_assert_uint_eq(c[0].head, 9);
        ck_assert_uint_eq(c[0].w, 0);
        ck_assert_uint_eq(c[1].tail, 2);
        ck_assert_uint_eq(c[1].head, 1);
        ck_assert_uint_eq(c[1].w, UINT32_MAX);
        free(c);
        ck_assert_int_eq(ss_weights_parse("{\"arcs\":[]}", 11, 10, &c, &n, &err), SS_OK);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(c);
}
END_TEST

START_TEST(answers)
{
        struct ss_body b;
        struct ss_weights_result res = {
            .version = 7, .changed = 12, .named = 13, .total_ms = 2.5, .bad = SIZE_MAX};
        struct ss_err err = {0};
        ck_assert_int_eq(ss_weights_answer(SS_OK, &res, &err, &b), SS_OK);
        ck_assert_uint_eq(b.http, 200);
        ck_assert_str_eq(b.data,
                         "{\"code\":\"Ok\",\"weights_version\":7,\"changed\":12,\"named\":13,"
                         "\"landmarks_dropped\":false,\"ms\":2.5}");
        ss_body_free(&b);
        res.bad = 4;
        ss_err_set(&err, SS_EINVAL, "change 4: the graph has no arc from 3 to 9");
        ck_assert_int_eq(ss_weights_answer(SS_EINVAL, &res, &err, &b), SS_OK);
        ck_assert_uint_eq(b.http, 400);
        ck_assert_ptr_nonnull(strstr(b.data, "\"arcs[4]: the graph has no arc from 3 to 9\""));
        ss_body_free(&b);
        res.bad = SIZE_MAX;
        ss_err_set(&err, SS_ESHUTDOWN, "the engine is shutting down");
        ck_assert_int_eq(ss_weights_answer(SS_ESHUTDOWN, &res, &err, &b), SS_OK);
        ck_assert_uint_eq(b.http, 503);
        ss_body_free(&b);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("weights-json");
        TCase *tc = tcase_create("weights-json");
        tcase_add_test(tc, bad_bodies);
        tcase_add_test(tc, good_bodies);
        tcase_add_test(tc, answers);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}
