#include "core/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "core/cancel.h"

int ss_log_threshold = SS_LOG_INFO;

static const char *const ss__level_names[] = {"error", "warn", "info", "debug"};

static _Atomic(ss_log_writer_fn) ss__writer;

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

void ss_log_set_writer(ss_log_writer_fn fn)
{
        atomic_store(&ss__writer, fn);
}

void ss__log(int level, const char *group, const char *fmt, ...)
{
        char msg[1024], stamp[32];
        struct timeval tv;
        struct tm tm;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        ss_log_writer_fn w = atomic_load(&ss__writer);
        if (w) {
                w(level, group, msg);
                return;
        }
        gettimeofday(&tv, NULL);
        gmtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        /* One fprintf per line keeps lines from different threads whole. */
        fprintf(stderr, "%s.%03dZ %-5s [%s] %s\n", stamp, (int)(tv.tv_usec / 1000),
                ss_log_level_name(level), group, msg);
}

/* ------------------------------------------------------------------------
 * Progress
 */

void ss_log_progress_begin(struct ss_log_progress *p, const char *group, const char *fmt, ...)
{
        va_list ap;
        p->group = group;
        va_start(ap, fmt);
        vsnprintf(p->what, sizeof(p->what), fmt, ap);
        va_end(ap);
        p->start_ns = ss_now_ns();
        atomic_store(&p->next_ns, p->start_ns + SS_LOG_PROGRESS_QUIET_MS * 1000000ull);
        atomic_store(&p->printed, 0);
}

void ss_log_progress(struct ss_log_progress *p, double fraction)
{
        if (SS_LOG_INFO > ss_log_threshold)
                return;
        uint64_t now = ss_now_ns(), next = atomic_load(&p->next_ns);
        if (now < next)
                return;
        /* One thread wins each line. */
        if (!atomic_compare_exchange_strong(&p->next_ns, &next,
                                            now + SS_LOG_PROGRESS_EVERY_MS * 1000000ull))
                return;
        atomic_fetch_add(&p->printed, 1);
        const double secs = (double)(now - p->start_ns) / 1e9;
        if (fraction < 0)
                ss__log(SS_LOG_INFO, p->group, "%s: running for %.0f s", p->what, secs);
        else
                ss__log(SS_LOG_INFO, p->group, "%s: %.0f%% (%.0f s)", p->what,
                        100.0 * (fraction > 1 ? 1 : fraction), secs);
}

void ss_log_progress_end(struct ss_log_progress *p)
{
        if (atomic_load(&p->printed) > 0)
                ss_log_info(p->group, "%s: done in %.1f s", p->what,
                            (double)(ss_now_ns() - p->start_ns) / 1e9);
}
