#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

int ss_log_threshold = SS_LOG_INFO;

static const char *const ss__level_names[] = {"error", "warn", "info", "debug"};

int ss_log_level_parse(const char *name)
{
        for (int i = 0; i < 4; i++)
                if (strcmp(name, ss__level_names[i]) == 0)
                        return i;
        return -1;
}

const char *ss_log_level_name(int level)
{
        return (level >= 0 && level < 4) ? ss__level_names[level] : "?";
}

void ss_log_set_level(int level)
{
        ss_log_threshold = level;
}

void ss__log(int level, const char *group, const char *fmt, ...)
{
        char msg[1024], stamp[32];
        struct timeval tv;
        struct tm tm;
        va_list ap;

        gettimeofday(&tv, NULL);
        gmtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* One fprintf per line keeps lines from different threads whole. */
        fprintf(stderr, "%s.%03dZ %-5s [%s] %s\n", stamp, (int)(tv.tv_usec / 1000),
                ss_log_level_name(level), group, msg);
}
