/* Leveled logging to stderr, one line per call.
 *
 * Lines look like "2026-11-22T17:03:01.123Z info  [engine] message". The
 * macros test the level before formatting, so a disabled debug line costs
 * one comparison. Safe from any thread: each line is one stdio call.
 *
 * A program may take the lines over (ss_log_set_writer): the daemon writes
 * them for the journal or as JSON (server/log_format.c).
 */
#ifndef SS_LOG_H
#define SS_LOG_H

#include <stdint.h>

#include "core/atomic_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ss_log_level { SS_LOG_ERROR = 0, SS_LOG_WARN, SS_LOG_INFO, SS_LOG_DEBUG };

extern int ss_log_threshold;

/* Parses "error", "warn", "info" or "debug"; returns the level or -1. */
int ss_log_level_parse(const char *name);
/* Returns the name of a level. */
const char *ss_log_level_name(int level);
/* Sets the most verbose level that is printed. */
void ss_log_set_level(int level);

/* Writes one formatted line (msg without its newline); called from any
 * thread, at most one line per call. NULL restores the default writer. */
typedef void (*ss_log_writer_fn)(int level, const char *group, const char *msg);
void ss_log_set_writer(ss_log_writer_fn fn);

void ss__log(int level, const char *group, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define ss_log(level, group, ...)                                                                  \
        do {                                                                                       \
                if ((level) <= ss_log_threshold)                                                   \
                        ss__log((level), (group), __VA_ARGS__);                                    \
        } while (0)
#define ss_log_error(group, ...) ss_log(SS_LOG_ERROR, group, __VA_ARGS__)
#define ss_log_warn(group, ...)  ss_log(SS_LOG_WARN, group, __VA_ARGS__)
#define ss_log_info(group, ...)  ss_log(SS_LOG_INFO, group, __VA_ARGS__)
#define ss_log_debug(group, ...) ss_log(SS_LOG_DEBUG, group, __VA_ARGS__)

/* Progress of a long step, as info lines: nothing while the step is
 * younger than SS_LOG_PROGRESS_QUIET_MS (a fast load prints no progress at
 * all), then "WHAT: 40% (7 s)" at most once every SS_LOG_PROGRESS_EVERY_MS,
 * and "WHAT: done in 17 s" at the end when a line was printed before.
 * ss_log_progress() may be called from several threads at once. */
#ifndef __cplusplus
#define SS_LOG_PROGRESS_QUIET_MS 2000u
#define SS_LOG_PROGRESS_EVERY_MS 5000u
struct ss_log_progress {
        const char *group;
        char what[192];
        uint64_t start_ns;
        _Atomic uint64_t next_ns; /* the earliest time of the next line */
        ss_atomic_int printed;    /* lines printed so far */
};
/* Starts a step named what (printf-style), timed from now. */
void ss_log_progress_begin(struct ss_log_progress *p, const char *group, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports the fraction done (0..1; below 0: unknown, only the time). */
void ss_log_progress(struct ss_log_progress *p, double fraction);
/* Ends the step. */
void ss_log_progress_end(struct ss_log_progress *p);
#endif

#ifdef __cplusplus
}
#endif

#endif
