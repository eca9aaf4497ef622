/* json_walk.c: a JSON file under a caller's walk (see parse/json_walk.h). */
#include "parse/json_walk.h"

#include <stdlib.h>

#include "util/clock.h"

static long pull_source(void *ctx, char *buf, size_t cap, hta_error *err)
{
    return hta_source_read(ctx, buf, cap, err);
}

int hta_json_walk_file(const char *path, hta_inflater inflater, double timeout_seconds,
                       hta_json_walk_fn walk, void *ctx, hta_error *err)
{
    hta_source *src;
    if (hta_source_open(path, inflater, &src, err))
        return -1;
    lexer lx = {.pull = pull_source, .pull_ctx = src, .label = path, .err = err,
                .stop_at = NEVER_STOP, .skip_members = js_skipper(JS_SCAN_BEST)};
    if (timeout_seconds > 0) {
        lx.timeout_seconds = timeout_seconds;
        lx.deadline = hta_monotonic_seconds() + timeout_seconds;
    }
    int rc = -1;
    lx.buf = malloc(LX_BUFFER_BYTES + LX_PADDING_BYTES);
    if (!lx.buf)
        hta_fail(err, "%s: out of memory", path);
    else {
        lx.p = lx.end = lx.record_from = lx.buf;
        lx_pad(&lx);
        rc = walk(&lx, ctx);
    }
    lx_free(&lx);
    hta_source_close(src);
    return rc;
}

int hta_json_capture_value(lexer *lx, hta_buf *json, int *complete)
{
    lx_peek_token(lx);
    lx->record = json;
    lx->record_from = lx->p;
    int rc = lx_skip_value(lx);
    lx_flush_record(lx);
    *complete = lx->record != NULL;
    lx->record = NULL;
    return rc;
}
