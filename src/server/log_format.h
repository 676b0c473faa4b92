/* How the daemon's log lines look (log_format):
 *   text     "2026-11-22T17:03:01.123Z info  [graph] message" (the default
 *            on a terminal or in a file);
 *   journal  "<6>info  [graph] message": a syslog priority prefix that
 *            journald turns into the entry's priority (journalctl -p
 *            warning filters), and no timestamp of ours beside journald's;
 *   json     one JSON object a line: {"time":..., "level":..., "group":...,
 *            "message":...};
 *   auto     journal when stderr is journald's stream (systemd sets
 *            JOURNAL_STREAM to its device and inode), text otherwise. */
#ifndef SS_SERVER_LOG_FORMAT_H
#define SS_SERVER_LOG_FORMAT_H

#include <stdbool.h>

#include "core/error.h"

enum ss_log_format { SS_LOG_FORMAT_TEXT = 0, SS_LOG_FORMAT_JOURNAL, SS_LOG_FORMAT_JSON };

/* Checks a log_format value ("auto", "text", "journal", "json"). */
int ss_log_format_check(const char *value, struct ss_err *err);

/* Whether stderr is the journal's stream (JOURNAL_STREAM matches it). */
bool ss_log_under_journal(void);

/* The format a value stands for here ("auto" resolved). */
enum ss_log_format ss_log_format_resolve(const char *value);

/* Makes the process's log lines use format f (core/log.h's writer). */
void ss_log_format_use(enum ss_log_format f);

/* One line in format f, without its newline, into out (cap bytes): what
 * the writer prints, for the tests. */
void ss_log_format_line(enum ss_log_format f, int level, const char *group, const char *msg,
                        char *out, size_t cap);

#endif
