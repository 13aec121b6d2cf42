/* Statuses and the last-error text. */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

const char *jg_status_name(jg_status status)
{
    switch (status) {
#define JG_STATUS_NAME_(name, value, text)                                                         \
    case JG_##name:                                                                                \
        return "JG_" #name;
        JG_STATUS_LIST(JG_STATUS_NAME_)
#undef JG_STATUS_NAME_
    }
    return "JG_UNKNOWN_STATUS";
}

const char *jg_status_string(jg_status status)
{
    switch (status) {
#define JG_STATUS_TEXT_(name, value, text)                                                         \
    case JG_##name:                                                                                \
        return text;
        JG_STATUS_LIST(JG_STATUS_TEXT_)
#undef JG_STATUS_TEXT_
    }
    return "unknown status";
}

/* Failures of calls that have no context yet (jg_context_create). */
static _Thread_local char thread_error[2048];

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

jg_status jg__fail(jg_context *ctx, jg_status status, const char *fmt, ...)
{
    char msg[8192];
    int n = snprintf(msg, sizeof msg, "%s: ", jg_status_name(status));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    if (!ctx) {
        copy_text(thread_error, sizeof thread_error, msg);
        return status;
    }
    pthread_mutex_lock(&ctx->error_lock);
    copy_text(ctx->last_error, sizeof ctx->last_error, msg);
    pthread_mutex_unlock(&ctx->error_lock);
    jg__logf(&ctx->log, JG_LOG_ERROR, 0, "%s", msg);
    return status;
}

jg_status jg__fail_cu(jg_context *ctx, const char *call, CUresult r)
{
    const char *name = "CUDA_ERROR_UNKNOWN", *text = "";
    if (ctx && ctx->cu) {
        ctx->cu->cuGetErrorName(r, &name);
        ctx->cu->cuGetErrorString(r, &text);
    }
    return jg__fail(ctx, JG_ERR_CUDA, "%s: %s (%s)", call, name ? name : "?", text ? text : "");
}

const char *jg_context_last_error(const jg_context *ctx)
{
    return ctx ? ctx->last_error : thread_error;
}
