/* Unit: the pieces behind the daemon's defences against clients: the log's
 * escaping of what clients send, and the per-address connection counts. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <string.h>

#include "../check_run.h"
#include "server/clients.h"
#include "server/log_text.h"

START_TEST(log_text_escapes_control_bytes)
{
        char out[64];
        const char in[] = "GET /a?b=1\r\n\x1b[2J\\\x7f\xc3\xa9\0x";
        size_t n = ss_log_text(out, sizeof(out), in, sizeof(in) - 1);
        ck_assert_str_eq(out, "GET /a?b=1\\x0d\\x0a\\x1b[2J\\x5c\\x7f\\xc3\\xa9\\x00x");
        ck_assert_uint_eq(n, strlen(out));
}
END_TEST

START_TEST(log_text_cuts_with_dots)
{
        char out[12];
        ss_log_text(out, sizeof(out), "0123456789abcdef", 16);
        ck_assert_str_eq(out, "01234567...");
        ss_log_text(out, sizeof(out), "0123456\n89", 10);
        ck_assert_str_eq(out, "0123456...");
        ss_log_text(out, sizeof(out), "short", 5);
        ck_assert_str_eq(out, "short");
        ss_log_text(out, 1, "x", 1);
        ck_assert_str_eq(out, "");
}
END_TEST

static struct sockaddr_in v4(const char *ip)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        inet_pton(AF_INET, ip, &a.sin_addr);
        return a;
}

static struct sockaddr_in6 v6(const char *ip)
{
        struct sockaddr_in6 a = {.sin6_family = AF_INET6};
        inet_pton(AF_INET6, ip, &a.sin6_addr);
        return a;
}

START_TEST(clients_count_per_address)
{
        struct ss_clients *t = ss_clients_new();
        ck_assert_ptr_nonnull(t);
        struct sockaddr_in a = v4("192.0.2.7"), b = v4("192.0.2.8");
        struct sockaddr_in6 a6 = v6("::ffff:192.0.2.7"), c6 = v6("2001:db8::1");
        for (int i = 0; i < 3; i++)
                ck_assert(ss_clients_add(t, (struct sockaddr *)&a));
        ck_assert(ss_clients_add(t, (struct sockaddr *)&a6)); /* the same client */
        ck_assert(ss_clients_add(t, (struct sockaddr *)&c6));
        ck_assert_uint_eq(ss_clients_count(t, (struct sockaddr *)&a), 4);
        ck_assert_uint_eq(ss_clients_count(t, (struct sockaddr *)&b), 0);
        ck_assert_uint_eq(ss_clients_count(t, (struct sockaddr *)&c6), 1);
        for (int i = 0; i < 4; i++)
                ss_clients_remove(t, (struct sockaddr *)&a);
        ck_assert_uint_eq(ss_clients_count(t, (struct sockaddr *)&a), 0);
        ss_clients_remove(t, (struct sockaddr *)&a); /* not there: nothing */
        ck_assert_uint_eq(ss_clients_count(t, (struct sockaddr *)&c6), 1);
        ss_clients_free(t);
}
END_TEST

START_TEST(loopback_addresses)
{
        struct sockaddr_in a = v4("127.0.0.1"), b = v4("127.8.9.10"), c = v4("10.0.0.1");
        struct sockaddr_in6 d = v6("::1"), e = v6("::ffff:127.0.0.1"), f = v6("::2");
        ck_assert(ss_addr_is_loopback((struct sockaddr *)&a));
        ck_assert(ss_addr_is_loopback((struct sockaddr *)&b));
        ck_assert(!ss_addr_is_loopback((struct sockaddr *)&c));
        ck_assert(ss_addr_is_loopback((struct sockaddr *)&d));
        ck_assert(ss_addr_is_loopback((struct sockaddr *)&e));
        ck_assert(!ss_addr_is_loopback((struct sockaddr *)&f));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("server.clients");
        TCase *tc = tcase_create("clients");
        tcase_add_test(tc, log_text_escapes_control_bytes);
        tcase_add_test(tc, log_text_cuts_with_dots);
        tcase_add_test(tc, clients_count_per_address);
        tcase_add_test(tc, loopback_addresses);
        suite_add_tcase(s, tc);
        return ss_check_run(s, false);
}
