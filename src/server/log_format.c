#include "server/log_format.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "core/log.h"

int ss_log_format_check(const char *v, struct ss_err *err)
{
        if (!strcmp(v, "auto") || !strcmp(v, "text") || !strcmp(v, "journal") || !strcmp(v, "json"))
                return SS_OK;
        return ss_err_set(err, SS_EINVAL, "log_format: '%s' is not auto, text, journal or json", v);
}

bool ss_log_under_journal(void)
{
        const char *js = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;
        if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0)
                return false;
        return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

enum ss_log_format ss_log_format_resolve(const char *v)
{
        if (!strcmp(v, "journal"))
                return SS_LOG_FORMAT_JOURNAL;
        if (!strcmp(v, "json"))
                return SS_LOG_FORMAT_JSON;
        if (!strcmp(v, "auto") && ss_log_under_journal())
                return SS_LOG_FORMAT_JOURNAL;
        return SS_LOG_FORMAT_TEXT;
}

/* syslog priorities: err, warning, info, debug */
static const int ss__priority[] = {3, 4, 6, 7};

void ss_log_format_line(enum ss_log_format f, int level, const char *group, const char *msg,
                        char *out, size_t cap)
{
        char stamp[40];
        struct timeval tv;
        struct tm tm;
        gettimeofday(&tv, NULL);
        gmtime_r(&tv.tv_sec, &tm);
        size_t at = strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(stamp + at, sizeof(stamp) - at, ".%03dZ", (int)(tv.tv_usec / 1000));
        const int pri = level >= 0 && level < 4 ? ss__priority[level] : 6;
        if (f == SS_LOG_FORMAT_JOURNAL) {
                snprintf(out, cap, "<%d>%-5s [%s] %s", pri, ss_log_level_name(level), group, msg);
                return;
        }
        if (f == SS_LOG_FORMAT_JSON) {
                /* Messages are escaped already (log_text.c): printable ASCII. */
                json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "time", stamp, "level",
                                      ss_log_level_name(level), "group", group, "message", msg);
                char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
                json_decref(o);
                if (s) {
                        snprintf(out, cap, "%s", s);
                        free(s);
                        return;
                }
                /* out of memory, or a message that is not UTF-8: as text */
        }
        snprintf(out, cap, "%s %-5s [%s] %s", stamp, ss_log_level_name(level), group, msg);
}

static enum ss_log_format ss__format;

static void ss__write(int level, const char *group, const char *msg)
{
        char line[1400];
        ss_log_format_line(ss__format, level, group, msg, line, sizeof(line));
        /* One fprintf per line keeps lines from different threads whole. */
        fprintf(stderr, "%s\n", line);
}

void ss_log_format_use(enum ss_log_format f)
{
        ss__format = f;
        ss_log_set_writer(f == SS_LOG_FORMAT_TEXT ? NULL : ss__write);
}
