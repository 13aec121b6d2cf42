/* Logging: to the user's callback, or to stderr when JITGEMM_LOG asks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const struct {
    const char *word;
    uint32_t bit;
} log_words[] = {
    {"plan", JG_LOGC_PLAN},     {"cache", JG_LOGC_CACHE}, {"compile", JG_LOGC_COMPILE},
    {"launch", JG_LOGC_LAUNCH}, {"all", JG_LOGC_ALL},     {"1", JG_LOGC_ALL},
};

bool jg__log_env_mask(uint32_t *mask)
{
    const char *env = getenv("JITGEMM_LOG");
    if (!env || !*env)
        return false;
    uint32_t m = 0;
    char word[32];
    for (const char *p = env; *p;) {
        size_t n = strcspn(p, ",");
        if (n < sizeof word) {
            memcpy(word, p, n);
            word[n] = 0;
            for (size_t i = 0; i < JG_ARRAY_LEN(log_words); ++i)
                if (!strcmp(word, log_words[i].word))
                    m |= log_words[i].bit;
        }
        p += n;
        if (*p == ',')
            ++p;
    }
    *mask = m; /* unknown words leave warnings and errors on */
    return true;
}

static const char *category_name(uint32_t c)
{
    switch (c) {
    case JG_LOGC_PLAN:
        return "plan";
    case JG_LOGC_CACHE:
        return "cache";
    case JG_LOGC_COMPILE:
        return "compile";
    case JG_LOGC_LAUNCH:
        return "launch";
    }
    return "general";
}

void jg__log_stderr(void *user, jg_log_level level, const char *category, const char *msg)
{
    static const char *levels[] = {"error", "warn", "info", "debug"};
    (void)user;
    fprintf(stderr, "jitgemm %s [%s]: %s\n", levels[level & 3], category, msg);
}

bool jg__log_on(const jg__log *log, uint32_t category) { return log->fn && (log->mask & category); }

void jg__logf(const jg__log *log, jg_log_level level, uint32_t category, const char *fmt, ...)
{
    if (!log->fn || (level > JG_LOG_WARN && !(log->mask & category)))
        return;
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log->fn(log->user, level, category_name(category), msg);
}
