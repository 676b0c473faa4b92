/* Error codes shared by the engine, the kernels' host side and the tools.
 *
 * Functions return 0 on success or one of the negative codes below, in the
 * libuv style. Where a caller needs more than the class of the failure (a
 * parse error's file and line, the CUDA call that failed), the function also
 * fills a caller-provided `struct ss_err` with a sentence naming the cause.
 * The server maps these codes to HTTP in exactly one place (http_error.c).
 */
#ifndef SS_ERROR_H
#define SS_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ss_status {
        SS_OK = 0,
        SS_ENOMEM = -1,     /* host allocation failed */
        SS_EIO = -2,        /* a file could not be opened, read or written */
        SS_EPARSE = -3,     /* a DIMACS text file is malformed */
        SS_EFORMAT = -4,    /* a snapshot is corrupt, truncated or of another version */
        SS_EINVAL = -5,     /* an argument or option is invalid */
        SS_ERANGE = -6,     /* a node id is outside 1..N */
        SS_ENOROUTE = -7,   /* the target is unreachable from the source */
        SS_ETIMEDOUT = -8,  /* the query passed its deadline and was cancelled */
        SS_EOVERLOAD = -9,  /* the engine queue is full */
        SS_EGPU = -10,      /* a GPU call failed (launch error, fault, no memory) */
        SS_ENOGPU = -11,    /* no usable GPU, or GPU support not built */
        SS_ESHUTDOWN = -12, /* the engine is stopping and takes no new work */
        SS_ETOOBIG = -13,   /* a request exceeds a configured limit */
        SS_EINTERNAL = -14  /* a broken invariant: a bug, never bad input */
};

#define SS_ERRMSG_MAX 512

/* A failure's code together with a human-readable cause. */
struct ss_err {
        int code;
        char msg[SS_ERRMSG_MAX];
};

/* Returns a static, one-line description of a status code (never NULL). */
const char *ss_strerror(int code);

/* Returns the short name of a code ("EPARSE", ...), for logs and metrics. */
const char *ss_errname(int code);

/* Records code and a printf-style message in err (err may be NULL); returns code,
 * so that callers can write `return ss_err_set(err, SS_EIO, "...", ...);`. */
int ss_err_set(struct ss_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears err to SS_OK and an empty message. */
void ss_err_clear(struct ss_err *err);

#ifdef __cplusplus
}
#endif

#endif
