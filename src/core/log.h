/* Leveled logging to stderr, one line per call.
 *
 * Lines look like "2026-11-22T17:03:01.123Z info  [engine] message". The
 * macros test the level before formatting, so a disabled debug line costs
 * one comparison. Safe from any thread: each line is one stdio call.
 */
#ifndef SS_LOG_H
#define SS_LOG_H

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

#ifdef __cplusplus
}
#endif

#endif
