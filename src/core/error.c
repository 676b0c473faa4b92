#include "core/error.h"

#include <stdio.h>
#include <string.h>

static const struct {
        int code;
        const char *name;
        const char *text;
} ss__errors[] = {
    {SS_OK, "OK", "success"},
    {SS_ENOMEM, "ENOMEM", "out of memory"},
    {SS_EIO, "EIO", "input/output error"},
    {SS_EPARSE, "EPARSE", "malformed graph file"},
    {SS_EFORMAT, "EFORMAT", "corrupt or incompatible snapshot"},
    {SS_EINVAL, "EINVAL", "invalid argument"},
    {SS_ERANGE, "ERANGE", "node id out of range"},
    {SS_ENOROUTE, "ENOROUTE", "no route between the nodes"},
    {SS_ETIMEDOUT, "ETIMEDOUT", "query deadline exceeded"},
    {SS_EOVERLOAD, "EOVERLOAD", "query queue is full"},
    {SS_EGPU, "EGPU", "GPU error"},
    {SS_ENOGPU, "ENOGPU", "no usable GPU"},
    {SS_ESHUTDOWN, "ESHUTDOWN", "engine is shutting down"},
    {SS_ETOOBIG, "ETOOBIG", "request exceeds a configured limit"},
    {SS_EINTERNAL, "EINTERNAL", "internal error"},
};

static int ss__find(int code)
{
        for (size_t i = 0; i < sizeof(ss__errors) / sizeof(ss__errors[0]); i++)
                if (ss__errors[i].code == code)
                        return (int)i;
        return -1;
}

const char *ss_strerror(int code)
{
        int i = ss__find(code);
        return i < 0 ? "unknown error" : ss__errors[i].text;
}

const char *ss_errname(int code)
{
        int i = ss__find(code);
        return i < 0 ? "EUNKNOWN" : ss__errors[i].name;
}

int ss_err_set(struct ss_err *err, int code, const char *fmt, ...)
{
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                err->code = code;
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
        }
        return code;
}

void ss_err_clear(struct ss_err *err)
{
        if (err) {
                err->code = SS_OK;
                err->msg[0] = '\0';
        }
}
