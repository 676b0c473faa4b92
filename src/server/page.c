#include "server/page.h"

#include <stdlib.h>
#include <string.h>

/* page_html.c, generated at build time from page/index.html. */
extern const unsigned char ss_page_html[];
extern const size_t ss_page_html_len;

int ss_page_index(const struct ss_routes *rt, struct ss_view *v, struct ss_err *err)
{
        (void)rt;
        /* A copy, as a view's text is handed over and freed with the
         * answer; a few KiB per page load. */
        v->text = malloc(ss_page_html_len);
        if (!v->text)
                return ss_err_set(err, SS_ENOMEM, "no memory for the page");
        memcpy(v->text, ss_page_html, ss_page_html_len);
        v->len = ss_page_html_len;
        v->ctype = "text/html; charset=utf-8";
        return SS_OK;
}
