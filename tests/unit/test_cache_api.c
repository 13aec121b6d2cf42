/* The public disk cache API, called as a user would (public header, shared
 * library; offline contexts, no GPU, temporary directories):
 *   jg_gemm_kernel_id, jg_grouped_kernel_id  the plan's kernel, nothing built
 *   jg_cache_dir, jg_context_get_cache_dir  where the cache is, refusals
 *   jg_context_cache_entry                  one kernel's entry: whole, missing,
 *                                           damaged
 *   jg_cache_list                           every entry, in order, damage seen
 *                                           (payload only with JG_CACHE_VERIFY),
 *                                           access times left alone
 *   jg_cache_prune                          damage, old formats, stale temp and
 *                                           lock files; by age; by size, least
 *                                           recently used first
 * Three small kernels are compiled once (~1-2 s); every case works on copies. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitgemm/jitgemm.h"
#include "jg_test.h"

#define ARCH "sm_90a"
#define NKERNELS 3
#define DAY (24 * 3600)

static char base[] = "/tmp/jg_cache_api_XXXXXX";
static char warm[4096]; /* the three compiled entries */
static jg_kernel_id kernels[NKERNELS];

/* ---- helpers -------------------------------------------------------------- */

static void path_in(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", base, name);
}

static jg_gemm_problem problem(int i)
{
    static const int64_t shapes[NKERNELS][3] = {{128, 256, 256}, {64, 512, 128}, {128, 128, 512}};
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = p.d_type = JG_BF16;
    p.m = shapes[i][0];
    p.n = shapes[i][1];
    p.k = shapes[i][2];
    return p;
}

/* Refusals warn: the log keeps them off the test's output. */
static jg_context *offline(const char *dir, jg_cache_mode mode)
{
    static captured log;
    return jg_test_offline_cache(dir, mode, &log);
}

static void entry_path(const char *dir, const uint64_t key[2], char *out, size_t len)
{
    snprintf(out, len, "%s/" ARCH "/%016llx%016llx.cubin", dir, (unsigned long long)key[1],
             (unsigned long long)key[0]);
}

static bool exists(const char *path) { return access(path, F_OK) == 0; }

static void touch(const char *path, time_t atime, time_t mtime)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(fd >= 0, "create %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    struct timespec t[2] = {{atime, 0}, {mtime, 0}};
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat %s: %s", path, strerror(errno));
}

static void set_atime(const char *path, time_t atime)
{
    struct timespec t[2] = {{atime, 0}, {0, UTIME_OMIT}};
    CHECK(utimensat(AT_FDCWD, path, t, 0) == 0, "utimensat %s: %s", path, strerror(errno));
}

static time_t atime_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_atime : (time_t)-1;
}

static long long size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* Overwrites bytes of a file at off (off < 0: from its end). */
static void patch(const char *path, long off, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL, "open %s: %s", path, strerror(errno));
    if (!f)
        return;
    CHECK(fseek(f, off, off < 0 ? SEEK_END : SEEK_SET) == 0 && fwrite(bytes, 1, len, f) == len,
          "patch %s", path);
    fclose(f);
}

/* One bit of the cubin: only the payload's checksum sees it. */
static void flip_payload(const char *path)
{
    FILE *f = fopen(path, "r+b");
    int c = EOF;
    if (f && fseek(f, -1, SEEK_END) == 0)
        c = fgetc(f);
    CHECK(c != EOF, "read %s", path);
    if (c != EOF) {
        unsigned char b = (unsigned char)(c ^ 1);
        CHECK(fseek(f, -1, SEEK_END) == 0 && fwrite(&b, 1, 1, f) == 1, "flip %s", path);
    }
    if (f)
        fclose(f);
}

static void set_format(const char *path, uint32_t v) { patch(path, 8, &v, sizeof v); }

/* A fresh copy of the warm cache (its three entries) under base/name. */
static void copy_warm(const char *name, char *out, size_t len)
{
    char arch[4200], from[4400], to[4400];
    path_in(out, len, name);
    snprintf(arch, sizeof arch, "%s/" ARCH, out);
    CHECK(mkdir(out, 0700) == 0 && mkdir(arch, 0700) == 0, "mkdir %s: %s", arch, strerror(errno));
    for (int i = 0; i < NKERNELS; ++i) {
        entry_path(warm, kernels[i].key_hash, from, sizeof from);
        entry_path(out, kernels[i].key_hash, to, sizeof to);
        FILE *in = fopen(from, "rb"), *o = fopen(to, "wb");
        CHECK(in && o, "copy %s to %s", from, to);
        char buf[65536];
        size_t n;
        while (in && o && (n = fread(buf, 1, sizeof buf, in)) > 0)
            CHECK(fwrite(buf, 1, n, o) == n, "write %s", to);
        if (in)
            fclose(in);
        if (o)
            fclose(o);
    }
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* ---- what the callbacks saw ---------------------------------------------- */

#define MAX_SEEN 16

typedef struct listing {
    int n, stop_after; /* stop_after 0: never */
    jg_cache_entry e[MAX_SEEN];
    char path[MAX_SEEN][4400];
} listing;

static int on_entry(void *user, const char *path, const jg_cache_entry *e)
{
    listing *l = user;
    if (l->n < MAX_SEEN) {
        l->e[l->n] = *e;
        snprintf(l->path[l->n], sizeof l->path[0], "%s", path);
    }
    l->n++;
    return l->stop_after && l->n >= l->stop_after;
}

static listing list(const char *dir, uint32_t flags, jg_status want)
{
    listing l;
    memset(&l, 0, sizeof l);
    jg_status st = jg_cache_list(dir, flags, on_entry, &l);
    CHECK(st == want, "jg_cache_list(%s): %s, want %s (%s)", dir, jg_status_name(st),
          jg_status_name(want), jg_context_last_error(NULL));
    return l;
}

typedef struct removal {
    char name[64], reason[64];
    jg_cache_outcome outcome;
    uint64_t bytes;
    bool has_entry;
    jg_cache_state state;
    int error;
} removal;

typedef struct removals {
    int n;
    removal r[MAX_SEEN];
} removals;

static void on_removal(void *user, const jg_cache_removal *rm)
{
    removals *l = user;
    if (l->n < MAX_SEEN) {
        removal *r = &l->r[l->n];
        snprintf(r->name, sizeof r->name, "%s", rm->name);
        snprintf(r->reason, sizeof r->reason, "%s", rm->reason);
        r->outcome = rm->outcome;
        r->bytes = rm->bytes;
        r->has_entry = rm->entry != NULL;
        r->state = rm->entry ? rm->entry->state : JG_CACHE_ENTRY_OK;
        r->error = rm->error;
        CHECK(strstr(rm->path, rm->name) && !strcmp(rm->arch, ARCH), "removal of %s: path %s",
              rm->name, rm->path);
    }
    l->n++;
}

/* The removal of the file whose name starts with prefix, or NULL. */
static const removal *removed(const removals *l, const char *prefix)
{
    for (int i = 0; i < l->n && i < MAX_SEEN; ++i)
        if (!strncmp(l->r[i].name, prefix, strlen(prefix)))
            return &l->r[i];
    return NULL;
}

static void hex_of(const jg_kernel_id *k, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)k->key_hash[1],
             (unsigned long long)k->key_hash[0]);
}

/* ---- jg_gemm_kernel_id, jg_grouped_kernel_id: fills the warm cache -------- */

static void test_kernel_id(void)
{
    path_in(warm, sizeof warm, "warm");
    jg_context *ctx = offline(warm, JG_CACHE_READWRITE);
    if (!ctx)
        return;
    for (int i = 0; i < NKERNELS; ++i) {
        jg_gemm_problem p = problem(i);
        CHECK(jg_gemm_kernel_id(ctx, &p, &kernels[i]) == JG_OK, "kernel id %d: %s", i,
              jg_context_last_error(ctx));
    }
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    char arch[4200];
    snprintf(arch, sizeof arch, "%s/" ARCH, warm);
    CHECK(s.plans_compiled == 0 && !exists(arch), "kernel ids compiled or stored something");
    CHECK(strcmp(kernels[0].name, kernels[1].name) && strcmp(kernels[1].name, kernels[2].name),
          "three problems, names %s, %s, %s", kernels[0].name, kernels[1].name, kernels[2].name);
    for (int i = 0; i < NKERNELS; ++i) { /* the plans' kernels are these */
        jg_gemm_problem p = problem(i);
        jg_plan *plan;
        jg_plan_info info;
        CHECK(jg_gemm_plan(ctx, &p, &plan) == JG_OK && jg_plan_get_info(plan, &info) == JG_OK,
              "plan %d: %s", i, jg_context_last_error(ctx));
        CHECK(!strcmp(info.kernel_name, kernels[i].name) &&
                  info.key_hash[0] == kernels[i].key_hash[0] &&
                  info.key_hash[1] == kernels[i].key_hash[1],
              "plan %d: %s, id %s", i, info.kernel_name, kernels[i].name);
    }
    jg_context_get_stats(ctx, &s);
    CHECK(s.plans_compiled == NKERNELS, "compiled %llu", (unsigned long long)s.plans_compiled);

    /* One M-generic kernel serves two M; the problem is validated. */
    jg_kernel_id a, b, bad;
    jg_gemm_problem p = problem(0), q = problem(0);
    p.flags = q.flags = JG_GEMM_M_GENERIC;
    q.m = 100;
    CHECK(jg_gemm_kernel_id(ctx, &p, &a) == JG_OK && jg_gemm_kernel_id(ctx, &q, &b) == JG_OK &&
              !memcmp(&a, &b, sizeof a) && strstr(a.name, "mX"),
          "M-generic ids differ: %s, %s", a.name, b.name);
    q.n = -1;
    memset(&bad, 0x5a, sizeof bad);
    CHECK(jg_gemm_kernel_id(ctx, &q, &bad) == JG_ERR_INVALID && !bad.name[0] && !bad.key_hash[0],
          "a bad problem: %s", jg_context_last_error(ctx));
    CHECK(jg_gemm_kernel_id(ctx, NULL, &bad) == JG_ERR_NULL_POINTER, "problem NULL");
    CHECK(jg_gemm_kernel_id(ctx, &p, NULL) == JG_ERR_NULL_POINTER, "out NULL");
    CHECK(jg_gemm_kernel_id(NULL, &p, &bad) == JG_ERR_NULL_POINTER, "ctx NULL");

    /* Grouped (list layout): the id, then the plan's kernel, the same. */
    const int64_t rows[2] = {64, 0};
    jg_grouped_problem g;
    memset(&g, 0, sizeof g);
    g.layout = JG_GROUPED_LIST;
    g.a_type = g.b_type = g.d_type = JG_BF16;
    g.groups = 2;
    g.m = rows;
    g.n = 256;
    g.k = 128;
    jg_kernel_id gid;
    jg_plan *plan;
    jg_plan_info info;
    CHECK(jg_grouped_kernel_id(ctx, &g, &gid) == JG_OK && strstr(gid.name, "jg_glist2_"),
          "grouped id %s: %s", gid.name, jg_context_last_error(ctx));
    CHECK(jg_grouped_plan(ctx, &g, &plan) == JG_OK && jg_plan_get_info(plan, &info) == JG_OK &&
              !strcmp(info.kernel_name, gid.name) && info.key_hash[0] == gid.key_hash[0] &&
              info.key_hash[1] == gid.key_hash[1],
          "grouped plan: %s", jg_context_last_error(ctx));
    g.groups = 0;
    CHECK(jg_grouped_kernel_id(ctx, &g, &bad) != JG_OK && !bad.name[0], "0 groups: an id");
    CHECK(jg_grouped_kernel_id(ctx, NULL, &bad) == JG_ERR_NULL_POINTER, "grouped problem NULL");
    jg_context_destroy(ctx);

    /* The grouped entry leaves the warm cache: its three dense entries stay. */
    char path[4400];
    entry_path(warm, gid.key_hash, path, sizeof path);
    CHECK(gid.key_hash[0] && remove(path) == 0, "remove %s: %s", path, strerror(errno));
    printf("kernel ids: %s, %s, %s, %s\n", kernels[0].name, kernels[1].name, kernels[2].name,
           gid.name); /* info's name went with the context */
}

/* ---- jg_cache_dir, jg_context_get_cache_dir ------------------------------ */

static void test_dir(void)
{
    char dir[4096], out[4096], open_dir[4096], missing[4096];
    path_in(dir, sizeof dir, "dir");
    path_in(open_dir, sizeof open_dir, "open");
    path_in(missing, sizeof missing, "not/yet");
    CHECK(mkdir(dir, 0700) == 0 && mkdir(open_dir, 0700) == 0 && chmod(open_dir, 0777) == 0,
          "mkdir: %s", strerror(errno));

    CHECK(jg_cache_dir(dir, out, sizeof out) == JG_OK && !strcmp(out, dir), "own dir: %s", out);
    CHECK(jg_cache_dir(missing, out, sizeof out) == JG_OK && !strcmp(out, missing) &&
              !exists(missing),
          "a directory not there yet: %s (%s)", out, jg_context_last_error(NULL));
    CHECK(jg_cache_dir(open_dir, out, sizeof out) == JG_ERR_CACHE && !strcmp(out, open_dir) &&
              strstr(jg_context_last_error(NULL), "writable by group or others"),
          "a 0777 directory: %s", jg_context_last_error(NULL));

    /* NULL: the environment, in its order. */
    char xdg[4096], want[4200];
    path_in(xdg, sizeof xdg, "xdg");
    setenv("JITGEMM_CACHE_DIR", dir, 1);
    CHECK(jg_cache_dir(NULL, out, sizeof out) == JG_OK && !strcmp(out, dir), "env: %s", out);
    CHECK(jg_cache_dir("", out, sizeof out) == JG_OK && !strcmp(out, dir), "\"\": %s", out);
    unsetenv("JITGEMM_CACHE_DIR");
    setenv("XDG_CACHE_HOME", xdg, 1);
    snprintf(want, sizeof want, "%s/jitgemm", xdg);
    CHECK(jg_cache_dir(NULL, out, sizeof out) == JG_OK && !strcmp(out, want), "XDG: %s", out);
    unsetenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    unsetenv("HOME");
    CHECK(jg_cache_dir(NULL, out, sizeof out) == JG_ERR_CACHE && !out[0] &&
              strstr(jg_context_last_error(NULL), "no usable cache directory"),
          "nothing set: %s", jg_context_last_error(NULL));
    if (saved)
        setenv("HOME", saved, 1);
    free(saved);

    char small[8];
    CHECK(jg_cache_dir(dir, small, sizeof small) == JG_ERR_INVALID && !small[0], "small out");
    CHECK(jg_cache_dir(dir, NULL, 0) == JG_ERR_NULL_POINTER, "out NULL");

    /* Contexts: read-write, read-only, off, refused. */
    static const struct {
        const char *dir;
        jg_cache_mode mode, want;
    } cases[] = {{"dir", JG_CACHE_READWRITE, JG_CACHE_READWRITE},
                 {"dir", JG_CACHE_READ, JG_CACHE_READ},
                 {"dir", JG_CACHE_OFF, JG_CACHE_OFF},
                 {"open", JG_CACHE_READWRITE, JG_CACHE_OFF}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        path_in(out, sizeof out, cases[i].dir);
        jg_context *ctx = offline(out, cases[i].mode);
        const char *got = NULL;
        jg_cache_mode mode = (jg_cache_mode)99;
        CHECK(ctx && jg_context_get_cache_dir(ctx, &got, &mode) == JG_OK && mode == cases[i].want &&
                  !strcmp(got, cases[i].want == JG_CACHE_OFF ? "" : out),
              "context case %zu: dir '%s', mode %d", i, got ? got : "(null)", (int)mode);
        CHECK(!ctx || jg_context_get_cache_dir(ctx, NULL, NULL) == JG_OK, "NULL outputs");
        jg_context_destroy(ctx);
    }
    CHECK(jg_context_get_cache_dir(NULL, NULL, NULL) == JG_ERR_NULL_POINTER, "ctx NULL");
}

/* ---- jg_context_cache_entry ------------------------------------------------ */

static void test_cache_entry(void)
{
    char dir[4096], path[4400];
    copy_warm("entry", dir, sizeof dir);
    jg_context *ctx = offline(dir, JG_CACHE_READ);
    if (!ctx)
        return;
    const time_t now = time(NULL);
    jg_cache_entry e;
    CHECK(jg_context_cache_entry(ctx, kernels[0].key_hash, &e) == JG_OK &&
              e.state == JG_CACHE_ENTRY_OK && !e.problem[0] &&
              !strcmp(e.kernel_name, kernels[0].name) && !strcmp(e.arch, ARCH) &&
              e.key_hash[0] == kernels[0].key_hash[0] && e.format == JG_CACHE_FORMAT,
          "a whole entry: state %d (%s), %s", (int)e.state, e.problem, e.kernel_name);
    entry_path(dir, kernels[0].key_hash, path, sizeof path);
    CHECK((long long)e.bytes == size_of(path) && e.bytes > 208, "bytes %llu",
          (unsigned long long)e.bytes);
    CHECK(e.created_unix <= now && e.created_unix > now - 600, "created %lld, now %lld",
          (long long)e.created_unix, (long long)now);

    const uint64_t none[2] = {1, 2};
    CHECK(jg_context_cache_entry(ctx, none, &e) == JG_OK && e.state == JG_CACHE_ENTRY_MISSING,
          "a key without entry: state %d", (int)e.state);
    flip_payload(path);
    CHECK(jg_context_cache_entry(ctx, kernels[0].key_hash, &e) == JG_OK &&
              e.state == JG_CACHE_ENTRY_DAMAGED && strstr(e.problem, "payload checksum") &&
              !e.kernel_name[0],
          "a damaged cubin: state %d (%s)", (int)e.state, e.problem);
    CHECK(jg_context_cache_entry(ctx, NULL, &e) == JG_ERR_NULL_POINTER, "key NULL");
    CHECK(jg_context_cache_entry(ctx, none, NULL) == JG_ERR_NULL_POINTER, "out NULL");
    jg_context_destroy(ctx);
    ctx = offline(dir, JG_CACHE_OFF);
    CHECK(ctx && jg_context_cache_entry(ctx, none, &e) == JG_ERR_CACHE, "memory-only context");
    jg_context_destroy(ctx);
}

/* ---- jg_cache_list -------------------------------------------------------- */

static void test_list(void)
{
    char dir[4096], path[4400], other[4400];
    copy_warm("list", dir, sizeof dir);
    listing l = list(dir, JG_CACHE_VERIFY, JG_OK);
    CHECK(l.n == NKERNELS, "%d entries listed, want %d", l.n, NKERNELS);
    for (int i = 0; i < l.n && i < MAX_SEEN; ++i) {
        CHECK(l.e[i].state == JG_CACHE_ENTRY_OK && l.e[i].kernel_name[0] &&
                  strstr(l.path[i], l.e[i].arch),
              "entry %d: state %d (%s)", i, (int)l.e[i].state, l.e[i].problem);
        if (i)
            CHECK(strcmp(l.path[i - 1], l.path[i]) < 0, "not in file-name order");
    }

    /* Not the library's: ignored. Damage: seen, the payload's only when verifying. */
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    touch(path, time(NULL), time(NULL));
    snprintf(path, sizeof path, "%s/other/0123456789abcdef0123456789abcdef.cubin", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    CHECK(mkdir(other, 0700) == 0, "mkdir other");
    touch(path, time(NULL), time(NULL));
    char damaged[33], newer[33];
    hex_of(&kernels[0], damaged);
    hex_of(&kernels[1], newer);
    entry_path(dir, kernels[0].key_hash, path, sizeof path);
    flip_payload(path);
    const time_t old = time(NULL) - 3 * DAY;
    set_atime(path, old);
    entry_path(dir, kernels[1].key_hash, other, sizeof other);
    set_format(other, JG_CACHE_FORMAT + 1);

    l = list(dir, 0, JG_OK);
    CHECK(l.n == NKERNELS, "%d entries listed with damage", l.n);
    for (int i = 0; i < l.n && i < MAX_SEEN; ++i) {
        const jg_cache_entry *e = &l.e[i];
        if (strstr(l.path[i], damaged))
            CHECK(e->state == JG_CACHE_ENTRY_OK, "payload damage seen without JG_CACHE_VERIFY");
        else if (strstr(l.path[i], newer))
            CHECK(e->state == JG_CACHE_ENTRY_OTHER_FORMAT && e->format == JG_CACHE_FORMAT + 1 &&
                      !e->kernel_name[0],
                  "a newer format: state %d, format %u", (int)e->state, e->format);
    }
    l = list(dir, JG_CACHE_VERIFY, JG_OK);
    for (int i = 0; i < l.n && i < MAX_SEEN; ++i)
        if (strstr(l.path[i], damaged))
            CHECK(l.e[i].state == JG_CACHE_ENTRY_DAMAGED &&
                      !strcmp(l.e[i].problem, "payload checksum mismatch"),
                  "verified: state %d (%s)", (int)l.e[i].state, l.e[i].problem);
    CHECK(atime_of(path) == old, "listing read the entry as a use: atime %lld, was %lld",
          (long long)atime_of(path), (long long)old);

    l.stop_after = 1;
    l.n = 0;
    CHECK(jg_cache_list(dir, 0, on_entry, &l) == JG_OK && l.n == 1, "stop after 1: %d", l.n);

    char missing[4096], open_dir[4096];
    path_in(missing, sizeof missing, "list-missing");
    l = list(missing, 0, JG_OK);
    CHECK(l.n == 0 && !exists(missing), "a missing directory listed %d", l.n);
    path_in(open_dir, sizeof open_dir, "open");
    list(open_dir, 0, JG_ERR_CACHE);
    CHECK(jg_cache_list(dir, 0, NULL, NULL) == JG_ERR_NULL_POINTER, "fn NULL");
    CHECK(jg_cache_list(dir, 0x10, on_entry, &l) == JG_ERR_INVALID, "unknown flags");
}

/* ---- jg_cache_prune ----------------------------------------------------- */

static removals prune(const char *dir, const jg_cache_prune_options *o, jg_status want)
{
    removals r;
    memset(&r, 0, sizeof r);
    jg_status st = jg_cache_prune(dir, o, on_removal, &r);
    CHECK(st == want, "jg_cache_prune(%s): %s, want %s (%s)", dir, jg_status_name(st),
          jg_status_name(want), jg_context_last_error(NULL));
    return r;
}

/* What is always removed, and what never is. */
static void test_prune_damage(void)
{
    char dir[4096], path[4400], lock[4400], held[4400], stale[4400], fresh[4400], notes[4400];
    copy_warm("prune", dir, sizeof dir);
    const time_t now = time(NULL);
    char hex[3][33];
    for (int i = 0; i < NKERNELS; ++i)
        hex_of(&kernels[i], hex[i]);
    entry_path(dir, kernels[0].key_hash, path, sizeof path);
    flip_payload(path); /* payload damage: only with JG_CACHE_VERIFY */
    entry_path(dir, kernels[1].key_hash, path, sizeof path);
    set_format(path, JG_CACHE_FORMAT + 1); /* a newer library's: kept */
    snprintf(lock, sizeof lock, "%s/" ARCH "/fedcba9876543210fedcba9876543210.lock", dir);
    snprintf(held, sizeof held, "%s/" ARCH "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.lock", dir);
    snprintf(stale, sizeof stale, "%s/" ARCH "/0123456789abcdef0123456789abcdef.cubin.tmp.AbC123",
             dir);
    snprintf(fresh, sizeof fresh, "%s/" ARCH "/0123456789abcdef0123456789abcdef.cubin.tmp.XyZ789",
             dir);
    snprintf(notes, sizeof notes, "%s/" ARCH "/notes.txt", dir);
    touch(lock, now, now);
    touch(held, now, now);
    touch(stale, now - 120, now - 120);
    touch(fresh, now, now);
    touch(notes, now - 9 * DAY, now - 9 * DAY);
    int held_fd = open(held, O_RDWR | O_CLOEXEC);
    CHECK(held_fd >= 0 && flock(held_fd, LOCK_EX) == 0, "hold %s", held);

    removals r = prune(dir, NULL, JG_OK);
    CHECK(r.n == 3, "%d removals reported, want 3 (orphan lock, held lock, stale temp)", r.n);
    const removal *x = removed(&r, "fedcba98");
    CHECK(x && x->outcome == JG_CACHE_REMOVED && !strcmp(x->reason, "lock file without an entry") &&
              !x->has_entry && !exists(lock),
          "the orphan lock");
    x = removed(&r, "aaaaaaaa");
    CHECK(x && x->outcome == JG_CACHE_BUSY && exists(held), "the held lock");
    x = removed(&r, "0123456789abcdef0123456789abcdef.cubin.tmp.AbC");
    CHECK(x && x->outcome == JG_CACHE_REMOVED && strstr(x->reason, "temp file") && !exists(stale),
          "the stale temp file");
    CHECK(exists(fresh) && exists(notes), "a fresh temp file, or a file not ours, removed");
    CHECK(!removed(&r, hex[0]) && !removed(&r, hex[1]), "a whole-header or newer entry removed");

    r = prune(dir, &(jg_cache_prune_options){.flags = JG_CACHE_VERIFY}, JG_OK);
    x = removed(&r, hex[0]);
    CHECK(r.n == 2 && x && x->has_entry && x->state == JG_CACHE_ENTRY_DAMAGED &&
              !strcmp(x->reason, "damaged entry") && x->bytes > 208,
          "verified: %d removals, the damaged cubin %s", r.n, x ? x->reason : "kept");
    entry_path(dir, kernels[0].key_hash, path, sizeof path);
    CHECK(!exists(path), "the damaged entry is still there");
    flock(held_fd, LOCK_UN);
    close(held_fd);

    /* An older format goes; so does a truncated entry. */
    entry_path(dir, kernels[1].key_hash, path, sizeof path);
    set_format(path, 0);
    entry_path(dir, kernels[2].key_hash, path, sizeof path);
    CHECK(truncate(path, 100) == 0, "truncate");
    r = prune(dir, NULL, JG_OK);
    x = removed(&r, hex[1]);
    CHECK(x && !strcmp(x->reason, "older format version") &&
              x->state == JG_CACHE_ENTRY_OTHER_FORMAT,
          "an older format: %s", x ? x->reason : "kept");
    x = removed(&r, hex[2]);
    CHECK(x && !strcmp(x->reason, "damaged entry"), "a truncated entry: %s",
          x ? x->reason : "kept");
    CHECK(removed(&r, "aaaaaaaa") != NULL, "a lock no longer held, without entry, kept");
    listing l = list(dir, JG_CACHE_VERIFY, JG_OK);
    CHECK(l.n == 0, "%d entries left", l.n);

    if (geteuid() != 0) { /* root removes files from a read-only directory */
        copy_warm("prune-ro", dir, sizeof dir);
        entry_path(dir, kernels[0].key_hash, path, sizeof path);
        flip_payload(path);
        char arch[4200];
        snprintf(arch, sizeof arch, "%s/" ARCH, dir);
        chmod(arch, 0500);
        r = prune(dir, &(jg_cache_prune_options){.flags = JG_CACHE_VERIFY}, JG_ERR_CACHE);
        CHECK(r.n == 1 && r.r[0].outcome == JG_CACHE_FAILED && r.r[0].error == EACCES &&
                  strstr(jg_context_last_error(NULL), "cannot remove"),
              "a file that cannot go: %d removals", r.n);
        chmod(arch, 0700);
    }
    CHECK(jg_cache_prune(dir, &(jg_cache_prune_options){.flags = 0x10}, NULL, NULL) ==
              JG_ERR_INVALID,
          "unknown flags");
    CHECK(jg_cache_prune(dir, &(jg_cache_prune_options){.max_age_s = -1}, NULL, NULL) ==
              JG_ERR_INVALID,
          "negative age");
    char open_dir[4096], missing[4096];
    path_in(open_dir, sizeof open_dir, "open");
    path_in(missing, sizeof missing, "prune-missing");
    prune(open_dir, NULL, JG_ERR_CACHE);
    r = prune(missing, NULL, JG_OK);
    CHECK(r.n == 0 && !exists(missing), "a missing directory");
}

/* By age, then by size: least recently used first. */
static void test_prune_limits(void)
{
    char dir[4096], path[NKERNELS][4400], hex[NKERNELS][33];
    copy_warm("limits", dir, sizeof dir);
    const time_t now = time(NULL);
    /* kernel 0 used 10 days ago, kernel 1 2 days ago, kernel 2 just now */
    static const int days[NKERNELS] = {10, 2, 0};
    for (int i = 0; i < NKERNELS; ++i) {
        entry_path(dir, kernels[i].key_hash, path[i], sizeof path[i]);
        hex_of(&kernels[i], hex[i]);
        set_atime(path[i], now - days[i] * DAY);
    }
    removals r = prune(dir, &(jg_cache_prune_options){.max_age_s = 5 * DAY}, JG_OK);
    const removal *x = removed(&r, hex[0]);
    CHECK(r.n == 1 && x && !strcmp(x->reason, "not used within the age limit") &&
              x->state == JG_CACHE_ENTRY_OK && !exists(path[0]) && exists(path[1]),
          "max_age_s of 5 days: %d removals", r.n);

    /* Room for the newest only: the one used two days ago goes. */
    const uint64_t newest = (uint64_t)size_of(path[2]);
    r = prune(dir, &(jg_cache_prune_options){.max_bytes = newest}, JG_OK);
    x = removed(&r, hex[1]);
    CHECK(r.n == 1 && x && !strcmp(x->reason, "least recently used, over the size limit") &&
              !exists(path[1]) && exists(path[2]),
          "max_bytes %llu: %d removals", (unsigned long long)newest, r.n);
    r = prune(dir, &(jg_cache_prune_options){.max_bytes = newest}, JG_OK);
    CHECK(r.n == 0 && exists(path[2]), "at the limit: %d removals", r.n);
    r = prune(dir, &(jg_cache_prune_options){.max_bytes = 1}, JG_OK);
    CHECK(r.n == 1 && !exists(path[2]), "1 byte: %d removals", r.n);

    /* Used alike: the earliest created goes first (then the first name);
     * both limits at once. */
    copy_warm("limits2", dir, sizeof dir);
    uint64_t total = 0;
    for (int i = 0; i < NKERNELS; ++i) {
        entry_path(dir, kernels[i].key_hash, path[i], sizeof path[i]);
        set_atime(path[i], now - DAY);
        total += (uint64_t)size_of(path[i]);
    }
    listing l = list(dir, 0, JG_OK); /* in name order */
    int first = 0;
    for (int i = 1; i < l.n && i < MAX_SEEN; ++i)
        if (l.e[i].created_unix < l.e[first].created_unix)
            first = i;
    r = prune(dir, &(jg_cache_prune_options){.max_age_s = 7 * DAY, .max_bytes = total - 1},
              JG_OK);
    CHECK(r.n == 1 && strstr(l.path[first], r.r[0].name), "ties: %d removals, %s (want %s)", r.n,
          r.r[0].name, l.path[first]);
    l = list(dir, 0, JG_OK);
    CHECK(l.n == NKERNELS - 1, "ties: %d left", l.n);
}

int main(void)
{
    CHECK(mkdtemp(base) != NULL, "mkdtemp: %s", strerror(errno));
    unsetenv("JITGEMM_LOG");
    test_kernel_id();
    test_dir();
    test_cache_entry();
    test_list();
    test_prune_damage();
    test_prune_limits();
    nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return jg_test_result("test_cache_api");
}
