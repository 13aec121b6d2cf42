/* The disk cache under stress, through offline contexts (no GPU):
 *   - 16 processes that plan the same uncached kernel at once compile it
 *     once (the per-key lock); the other 15 load it from disk;
 *   - a writer killed with SIGKILL at random points (0-5 ms after it
 *     starts), 200 times: a reader sees a whole entry or none, never a
 *     partial one, and never an older one than it saw before;
 *   - random byte flips and truncations of a real entry are misses that the
 *     next context recompiles and replaces;
 *   - a read-only cache (options or JITGEMM_CACHE=read) never writes;
 *   - a directory writable by others is refused with a warning;
 *   - a cache copied to another directory is used without recompiling.
 * Everything lives in one fresh 0700 temp directory, removed at the end. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "jg_internal.h"
#include "jg_test.h"

#define ARCH "sm_90a"

static char root[] = "/tmp/jg_procs_XXXXXX";

/* ---- helpers ------------------------------------------------------------ */

static void path_in_root(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", root, name);
}

static bool make_dir(const char *path, unsigned mode)
{
    if (mkdir(path, 0700) != 0 || chmod(path, mode) != 0) {
        CHECK(0, "mkdir %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}


/* Whole-file read into malloc'd memory; NULL on failure. */
static unsigned char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    unsigned char *data = malloc((size_t)st.st_size + 1);
    if (data && !jg__read_all(fd, data, (size_t)st.st_size)) {
        free(data);
        data = NULL;
    }
    close(fd);
    *len = (size_t)st.st_size;
    return data;
}

static bool spit(const char *path, const void *data, size_t len, unsigned mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    bool ok = fd >= 0 && jg__write_all(fd, data, len);
    if (fd >= 0)
        ok = close(fd) == 0 && ok;
    return ok;
}

/* Copies a directory tree (directories and plain files, modes kept): what
 * `cp -a` does for a cache. */
static bool copy_tree(const char *src, const char *dst)
{
    struct stat st;
    if (stat(src, &st) != 0 || mkdir(dst, 0700) != 0 || chmod(dst, st.st_mode & 07777) != 0)
        return false;
    DIR *d = opendir(src);
    if (!d)
        return false;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char s[4400], t[4400];
        snprintf(s, sizeof s, "%s/%s", src, e->d_name);
        snprintf(t, sizeof t, "%s/%s", dst, e->d_name);
        if (lstat(s, &st) != 0)
            ok = false;
        else if (S_ISDIR(st.st_mode))
            ok = copy_tree(s, t);
        else if (S_ISREG(st.st_mode)) {
            size_t len = 0;
            unsigned char *data = slurp(s, &len);
            ok = data && spit(t, data, len, st.st_mode & 07777) && chmod(t, st.st_mode & 07777) == 0;
            free(data);
        }
    }
    closedir(d);
    return ok;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* A listing of everything under a directory that a write would change:
 * path, type, mode, size, inode, mtime and a hash of the contents; sorted. */
#define LISTING_MAX 512
static char listing_lines[LISTING_MAX][600];
static int listing_count;
static size_t listing_root_len;

static int list_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag;
    (void)ftw;
    if (listing_count >= LISTING_MAX)
        return 1;
    uint64_t hash = 0;
    if (S_ISREG(st->st_mode)) {
        size_t len = 0;
        unsigned char *data = slurp(path, &len);
        hash = data ? XXH3_64bits(data, len) : 1;
        free(data);
    }
    snprintf(listing_lines[listing_count++], sizeof listing_lines[0],
             "%s %o %lld %llu %lld.%09ld %016llx", path + listing_root_len,
             (unsigned)st->st_mode, (long long)st->st_size, (unsigned long long)st->st_ino,
             (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, (unsigned long long)hash);
    return 0;
}

static int cmp_lines(const void *a, const void *b) { return strcmp(a, b); }

/* Writes the listing into out (malloc'd, caller frees). */
static char *listing(const char *dir)
{
    listing_count = 0;
    listing_root_len = strlen(dir);
    if (nftw(dir, list_entry, 16, FTW_PHYS) != 0)
        CHECK(0, "listing %s failed (or more than %d entries)", dir, LISTING_MAX);
    qsort(listing_lines, (size_t)listing_count, sizeof listing_lines[0], cmp_lines);
    size_t cap = (size_t)listing_count * sizeof listing_lines[0] + 1;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    out[0] = 0;
    for (int i = 0; i < listing_count; ++i) {
        strcat(out, listing_lines[i]);
        strcat(out, "\n");
    }
    return out;
}

static int count_files(const char *dir, const char *containing)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strstr(e->d_name, containing))
            ++n;
    closedir(d);
    return n;
}

/* ---- contexts ------------------------------------------------------------ */

/* The one problem every section plans: tiny, so that a compile is quick. */
static jg_gemm_problem problem(void)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = p.d_type = JG_BF16;
    p.m = p.n = p.k = 64;
    return p;
}

static jg_context_stats stats_of(const jg_context *ctx)
{
    jg_context_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK(jg_context_get_stats(ctx, &s) == JG_OK, "jg_context_get_stats");
    return s;
}

/* Plans problem() in a fresh context on dir; returns its stats (all ~0 on
 * failure) and the plan's info in *info when given. */
static jg_context_stats plan_once(const char *what, const char *dir, jg_cache_mode mode,
                                  captured *log, jg_plan_info *info)
{
    jg_context_stats s;
    memset(&s, 0xff, sizeof s);
    jg_context *ctx = jg_test_offline_cache(dir, mode, log);
    if (!ctx)
        return s;
    jg_gemm_problem p = problem();
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, &p, &plan);
    CHECK(st == JG_OK && plan, "%s: plan: %s", what, jg_context_last_error(ctx));
    if (plan && info) {
        CHECK(jg_plan_get_info(plan, info) == JG_OK, "%s: info", what);
        CHECK(info->kernel_name && info->kernel_name[0], "%s: no kernel name", what);
        info->kernel_name = NULL; /* owned by the plan, which goes now */
    }
    s = stats_of(ctx);
    jg_context_destroy(ctx);
    return s;
}

/* The entry of problem() (by key) in dir, read as the library would. */
static bool entry_hits(const char *dir, jg__hash128 key)
{
    jg__disk d;
    jg__log quiet = {0};
    jg__disk_open(&d, dir, JG_CACHE_READ, &quiet);
    jg__buf got = {0};
    bool hit = jg__disk_read(&d, ARCH, key, &got, &quiet);
    jg__buf_free(&got);
    return hit;
}

static void entry_path(const char *dir, jg__hash128 key, char *out, size_t len)
{
    jg__disk d;
    memset(&d, 0, sizeof d);
    snprintf(d.dir, sizeof d.dir, "%s", dir);
    jg__disk_entry_path(&d, ARCH, key, out, len);
}

/* ---- a. 16 processes, one compile ------------------------------------------ */

#define NPROCS 16

typedef struct child_result {
    int index;
    int status;      /* jg_status of the plan, or -1000 - step on a setup failure */
    int origin;
    uint64_t compiled, disk, memory, failures;
    uint64_t key[2];
    char kernel[128];
    char error[256];
} child_result;

static _Noreturn void planning_child(int index, const char *dir, int ready_fd, int go_fd, int result_fd)
{
    alarm(120); /* a stuck child dies rather than hanging the suite */
    child_result r;
    memset(&r, 0, sizeof r);
    r.index = index;
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE;
    o.arch = ARCH;
    o.cache_dir = dir;
    o.cache_mode = JG_CACHE_READWRITE;
    jg_context *ctx = NULL;
    r.status = jg_context_create(&o, &ctx);
    if (r.status != JG_OK)
        snprintf(r.error, sizeof r.error, "create: %s", jg_context_last_error(NULL));
    char byte = 'r';
    if (!jg__write_all(ready_fd, &byte, 1))
        r.status = -1001;
    /* The start line: read() returns 0 when the parent closes the pipe,
     * for all children at once. */
    if (read(go_fd, &byte, 1) != 0 && r.status == JG_OK)
        r.status = -1002;
    if (r.status == JG_OK) {
        jg_gemm_problem p = problem();
        jg_plan *plan = NULL;
        r.status = jg_gemm_plan(ctx, &p, &plan);
        if (r.status != JG_OK) {
            snprintf(r.error, sizeof r.error, "%s", jg_context_last_error(ctx));
        } else {
            jg_plan_info info;
            if (jg_plan_get_info(plan, &info) == JG_OK) {
                r.origin = (int)info.origin;
                r.key[0] = info.key_hash[0];
                r.key[1] = info.key_hash[1];
                snprintf(r.kernel, sizeof r.kernel, "%s", info.kernel_name ? info.kernel_name : "");
            }
            jg_context_stats s;
            if (jg_context_get_stats(ctx, &s) == JG_OK) {
                r.compiled = s.plans_compiled;
                r.disk = s.plans_disk;
                r.memory = s.plans_memory;
                r.failures = s.compile_failures;
            }
        }
    }
    jg_context_destroy(ctx);
    /* One write smaller than PIPE_BUF: atomic among the 16 writers. */
    _Static_assert(sizeof r < 4096, "a result fits in one atomic pipe write");
    _exit(jg__write_all(result_fd, &r, sizeof r) ? 0 : 3);
}

/* Leaves the compiled entry in dir; returns its key. */
static jg__hash128 test_many_processes(const char *dir)
{
    jg__hash128 key = {0, 0};
    int ready[2], go[2], result[2];
    if (pipe(ready) || pipe(go) || pipe(result)) {
        CHECK(0, "pipe: %s", strerror(errno));
        return key;
    }
    double t0 = now_s();
    pid_t pids[NPROCS];
    int started = 0;
    for (int i = 0; i < NPROCS; ++i) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(ready[0]);
            close(go[1]);
            close(result[0]);
            planning_child(i, dir, ready[1], go[0], result[1]);
        }
        if (pid < 0) {
            CHECK(0, "fork: %s", strerror(errno));
            break;
        }
        pids[started++] = pid;
    }
    close(ready[1]);
    close(go[0]);
    close(result[1]);
    /* Every child has made its context and waits at the line: go. */
    char bytes[NPROCS];
    CHECK(jg__read_all(ready[0], bytes, (size_t)started), "children did not all report ready");
    close(go[1]);

    child_result r[NPROCS];
    int got = 0;
    for (; got < started; ++got)
        if (!jg__read_all(result[0], &r[got], sizeof r[got]))
            break;
    close(ready[0]);
    close(result[0]);
    for (int i = 0; i < started; ++i) {
        int status = 0;
        CHECK(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0,
              "child %d ended with wait status 0x%x", i, status);
    }
    CHECK(started == NPROCS && got == NPROCS, "%d children started, %d results", started, got);

    uint64_t compiled = 0, disk = 0;
    int compilers = 0, loaders = 0;
    for (int i = 0; i < got; ++i) {
        CHECK(r[i].status == JG_OK, "child %d: %s (%d): %s", r[i].index,
              jg_status_name((jg_status)r[i].status), r[i].status, r[i].error);
        if (r[i].status != JG_OK)
            continue;
        compiled += r[i].compiled;
        disk += r[i].disk;
        CHECK(r[i].kernel[0] && !strcmp(r[i].kernel, r[0].kernel), "child %d: kernel \"%s\" vs \"%s\"",
              r[i].index, r[i].kernel, r[0].kernel);
        CHECK(r[i].key[0] == r[0].key[0] && r[i].key[1] == r[0].key[1], "child %d: another key",
              r[i].index);
        CHECK(r[i].failures == 0 && r[i].memory == 0, "child %d: %llu compile failures, %llu memory hits",
              r[i].index, (unsigned long long)r[i].failures, (unsigned long long)r[i].memory);
        if (r[i].compiled == 1 && r[i].disk == 0 && r[i].origin == JG_ORIGIN_COMPILED)
            ++compilers;
        else if (r[i].compiled == 0 && r[i].disk == 1 && r[i].origin == JG_ORIGIN_DISK)
            ++loaders;
        else
            CHECK(0, "child %d: compiled %llu, disk %llu, origin %d", r[i].index,
                  (unsigned long long)r[i].compiled, (unsigned long long)r[i].disk, r[i].origin);
    }
    CHECK(compiled == 1 && compilers == 1 && loaders == NPROCS - 1,
          "%d processes: %llu compiles (want 1), %d compiled, %d loaded from disk (want %d)", got,
          (unsigned long long)compiled, compilers, loaders, NPROCS - 1);
    printf("a. %d processes at once: %llu compile, %llu disk loads, %.2f s\n", got,
           (unsigned long long)compiled, (unsigned long long)disk, now_s() - t0);

    if (got > 0) {
        key.lo = r[0].key[0];
        key.hi = r[0].key[1];
    }
    CHECK(entry_hits(dir, key), "no good entry after the 16 processes");
    char arch_dir[4400];
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", dir, ARCH);
    CHECK(count_files(arch_dir, ".tmp") == 0, "temp files left behind");
    CHECK(count_files(arch_dir, ".cubin") == 1, "%d entries, want 1", count_files(arch_dir, ".cubin"));
    return key;
}

/* ---- b. writers killed with SIGKILL -------------------------------------------- */

#define KILL_ROUNDS 200
#define KILL_KEYS 3
#define KILL_PAYLOAD (256u * 1024u)
#define KILL_MAX_DELAY_US 5000

static jg__hash128 kill_key(int i)
{
    jg__hash128 k = {0x6b696c6c00000000ull + (uint64_t)i, 0x5349474b494c4cull * (uint64_t)(i + 1)};
    return k;
}

/* The payload of (key, generation): the generation and the key's index in
 * the first 16 bytes, then bytes from an RNG seeded with both. */
static void kill_payload(unsigned char *p, int key_index, uint64_t gen)
{
    uint64_t ki = (uint64_t)key_index;
    memcpy(p, &gen, 8);
    memcpy(p + 8, &ki, 8);
    jg_rng r;
    jg_rng_seed(&r, gen * 0x9e3779b97f4a7c15ull ^ (ki + 1) * 0xd1b54a32d192ed03ull);
    for (size_t i = 16; i < KILL_PAYLOAD; i += 8) {
        uint64_t v = jg_rng_next(&r);
        memcpy(p + i, &v, 8);
    }
}

/* Writes generation after generation of every key until killed. It says
 * "ready" before its first write, or (ready_after_write) after it: those
 * rounds leave an entry however slow the disk, so the reads below always
 * meet some whole entries to check. */
static _Noreturn void writer_child(const char *dir, int round, int ready_fd, bool ready_after_write)
{
    alarm(30);
    jg__disk d;
    jg__log quiet = {0};
    jg__disk_open(&d, dir, JG_CACHE_READWRITE, &quiet);
    unsigned char *buf = malloc(KILL_PAYLOAD);
    if (!d.enabled || !buf)
        _exit(2);
    char byte = 'r';
    if (!ready_after_write && !jg__write_all(ready_fd, &byte, 1))
        _exit(2);
    for (uint64_t i = 0;; ++i) {
        uint64_t gen = ((uint64_t)round << 32) | i;
        for (int k = 0; k < KILL_KEYS; ++k) {
            kill_payload(buf, k, gen);
            if (!jg__disk_write(&d, ARCH, kill_key(k), "killed_writer", buf, KILL_PAYLOAD, &quiet))
                _exit(3);
            if (ready_after_write && i == 0 && k == 0 && !jg__write_all(ready_fd, &byte, 1))
                _exit(2);
        }
    }
}

static void test_killed_writers(const char *dir)
{
    double t0 = now_s();
    jg_rng rng;
    jg_rng_seed(&rng, 20240501);
    unsigned char *want = malloc(KILL_PAYLOAD);
    if (!want) {
        CHECK(0, "malloc");
        return;
    }
    jg__disk d;
    captured c;
    jg__log log = log_to(&c);
    jg__disk_open(&d, dir, JG_CACHE_READ, &log);
    CHECK(d.enabled, "cannot open %s: %s", dir, c.text);
    uint64_t last_gen[KILL_KEYS] = {0};
    bool seen[KILL_KEYS] = {false};
    int hits = 0, misses = 0, bad = 0, not_killed = 0;
    for (int round = 0; round < KILL_ROUNDS && bad < 5 && not_killed < 5; ++round) {
        int ready[2];
        if (pipe(ready)) {
            CHECK(0, "pipe: %s", strerror(errno));
            break;
        }
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            close(ready[0]);
            writer_child(dir, round, ready[1], round % 10 == 9);
        }
        close(ready[1]);
        if (pid < 0) {
            close(ready[0]);
            CHECK(0, "fork: %s", strerror(errno));
            break;
        }
        char byte;
        bool ready_ok = jg__read_all(ready[0], &byte, 1);
        close(ready[0]);
        if (ready_ok)
            sleep_us((long)jg_rng_below(&rng, KILL_MAX_DELAY_US + 1));
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
            ++not_killed;
            CHECK(0, "round %d: the writer ended by itself (wait status 0x%x)", round, status);
        }
        for (int k = 0; k < KILL_KEYS; ++k) {
            jg__buf got = {0};
            c.warnings = 0;
            c.text[0] = 0;
            if (!jg__disk_read(&d, ARCH, kill_key(k), &got, &log)) {
                ++misses;
                CHECK(got.len == 0, "round %d key %d: a miss left %zu bytes", round, k, got.len);
                /* Only "no entry yet" is a miss here: a damaged one is a bug. */
                CHECK(!seen[k], "round %d key %d: the entry was there and is gone", round, k);
                CHECK(c.warnings == 0, "round %d key %d: %s", round, k, c.text);
                jg__buf_free(&got);
                continue;
            }
            ++hits;
            uint64_t gen = 0, ki = 99;
            if (got.len >= 16) {
                memcpy(&gen, got.data, 8);
                memcpy(&ki, got.data + 8, 8);
            }
            bool ok = got.len == KILL_PAYLOAD && ki == (uint64_t)k && (gen >> 32) <= (uint64_t)round;
            if (ok) {
                kill_payload(want, k, gen);
                ok = !memcmp(got.data, want, KILL_PAYLOAD);
            }
            if (!ok)
                ++bad;
            CHECK(ok, "round %d key %d: a hit of %zu bytes (key index %llu, generation %llu:%llu) "
                      "differs from every whole payload",
                  round, k, got.len, (unsigned long long)ki, (unsigned long long)(gen >> 32),
                  (unsigned long long)(gen & 0xffffffffu));
            CHECK(!seen[k] || gen >= last_gen[k], "round %d key %d: generation went back", round, k);
            seen[k] = true;
            last_gen[k] = gen;
            jg__buf_free(&got);
        }
    }
    free(want);
    char arch_dir[4400];
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", dir, ARCH);
    int entries = count_files(arch_dir, ".cubin") - count_files(arch_dir, ".tmp");
    int temps = count_files(arch_dir, ".tmp");
    CHECK(entries <= KILL_KEYS, "%d entries for %d keys", entries, KILL_KEYS);
    CHECK(hits > 0, "no read ever hit: the writers never finished a write");
    printf("b. %d writers killed: %d hits, %d misses, %d bad; %d temp files left; %.2f s\n",
           KILL_ROUNDS, hits, misses, bad, temps, now_s() - t0);
}

/* ---- c. byte flips and truncations of a real entry ------------------------------ */

#define FLIPS 50
#define TRUNCATIONS 20

static void test_damage(const char *warm_dir, jg__hash128 key)
{
    double t0 = now_s();
    char dir[4200], path[4400];
    path_in_root(dir, sizeof dir, "damage");
    if (!copy_tree(warm_dir, dir)) {
        CHECK(0, "copying %s to %s", warm_dir, dir);
        return;
    }
    entry_path(dir, key, path, sizeof path);
    size_t good_len = 0;
    unsigned char *good = slurp(path, &good_len);
    CHECK(good && good_len > sizeof(jg__disk_header), "no good entry at %s", path);
    if (!good || good_len <= sizeof(jg__disk_header)) {
        free(good);
        return;
    }
    unsigned char *bad = malloc(good_len);
    jg_rng rng;
    jg_rng_seed(&rng, 77);
    int header_flips = 0, recompiles = 0;
    for (int i = 0; bad && i < FLIPS + TRUNCATIONS; ++i) {
        char what[128];
        size_t len = good_len;
        memcpy(bad, good, good_len);
        if (i < FLIPS) {
            /* Alternate header and payload, so that both are hit often. */
            size_t at = i % 2 ? sizeof(jg__disk_header) +
                                    (size_t)jg_rng_below(&rng, good_len - sizeof(jg__disk_header))
                              : (size_t)jg_rng_below(&rng, sizeof(jg__disk_header));
            unsigned char x = (unsigned char)(1 + jg_rng_below(&rng, 255));
            bad[at] ^= x;
            header_flips += at < sizeof(jg__disk_header);
            snprintf(what, sizeof what, "flip %d (byte %zu ^= 0x%02x)", i, at, x);
        } else {
            len = (size_t)jg_rng_below(&rng, good_len);
            snprintf(what, sizeof what, "truncation %d (to %zu of %zu bytes)", i - FLIPS, len, good_len);
        }
        if (!spit(path, bad, len, 0600)) {
            CHECK(0, "%s: writing %s", what, path);
            break;
        }
        CHECK(!entry_hits(dir, key), "%s: still a hit", what);

        captured c;
        jg_context_stats s = plan_once(what, dir, JG_CACHE_READWRITE, &c, NULL);
        CHECK(s.plans_compiled == 1 && s.plans_disk == 0, "%s: compiled %llu, disk %llu", what,
              (unsigned long long)s.plans_compiled, (unsigned long long)s.plans_disk);
        CHECK(c.warnings >= 1 && strstr(c.text, "damaged") && strstr(c.text, path),
              "%s: no warning naming the damaged entry: %s", what, c.text);
        recompiles += s.plans_compiled == 1;
        CHECK(entry_hits(dir, key), "%s: no good entry after the recompile", what);
        s = plan_once(what, dir, JG_CACHE_READWRITE, &c, NULL);
        CHECK(s.plans_disk == 1 && s.plans_compiled == 0 && c.warnings == 0,
              "%s: the next context: disk %llu, compiled %llu, warnings: %s", what,
              (unsigned long long)s.plans_disk, (unsigned long long)s.plans_compiled, c.text);
    }
    char arch_dir[4400];
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", dir, ARCH);
    CHECK(count_files(arch_dir, ".tmp") == 0, "temp files left behind");
    printf("c. %d flips (%d in the header), %d truncations: %d recompiles; %.2f s\n", FLIPS,
           header_flips, TRUNCATIONS, recompiles, now_s() - t0);
    free(bad);
    free(good);
}

/* ---- d. read-only caches never write ----------------------------------------------- */

/* Plans in a read-only context on dir; the tree must be byte-for-byte the
 * same afterwards. */
static void expect_read_only(const char *what, const char *dir, jg_cache_mode mode,
                             uint64_t want_compiled, uint64_t want_disk)
{
    char *before = listing(dir);
    captured c;
    jg_context_stats s = plan_once(what, dir, mode, &c, NULL);
    CHECK(s.plans_compiled == want_compiled && s.plans_disk == want_disk,
          "%s: compiled %llu (want %llu), disk %llu (want %llu)", what,
          (unsigned long long)s.plans_compiled, (unsigned long long)want_compiled,
          (unsigned long long)s.plans_disk, (unsigned long long)want_disk);
    char *after = listing(dir);
    CHECK(before && after && !strcmp(before, after), "%s: the cache changed:\nbefore:\n%safter:\n%s",
          what, before ? before : "?", after ? after : "?");
    free(before);
    free(after);
}

static void test_read_only(const char *warm_dir, jg__hash128 key)
{
    double t0 = now_s();
    char empty[4200], warm[4200], damaged[4200], path[4400];
    path_in_root(empty, sizeof empty, "ro_empty");
    path_in_root(warm, sizeof warm, "ro_warm");
    path_in_root(damaged, sizeof damaged, "ro_damaged");
    if (!make_dir(empty, 0700) || !make_dir(warm, 0700) || !make_dir(damaged, 0700))
        return;
    /* Only the entry, no lock file: a read-only context must not make one. */
    char src[4400], dst[4400];
    entry_path(warm_dir, key, src, sizeof src);
    size_t len = 0;
    unsigned char *entry = slurp(src, &len);
    CHECK(entry != NULL, "no entry at %s", src);
    if (!entry)
        return;
    snprintf(dst, sizeof dst, "%s/%s", warm, ARCH);
    mkdir(dst, 0700);
    entry_path(warm, key, path, sizeof path);
    CHECK(spit(path, entry, len, 0600), "writing %s", path);
    snprintf(dst, sizeof dst, "%s/%s", damaged, ARCH);
    mkdir(dst, 0700);
    entry_path(damaged, key, path, sizeof path);
    entry[len - 1] ^= 0x40;
    CHECK(spit(path, entry, len, 0600), "writing %s", path);
    free(entry);

    expect_read_only("read-only (options), empty", empty, JG_CACHE_READ, 1, 0);
    expect_read_only("read-only (options), warm", warm, JG_CACHE_READ, 0, 1);
    expect_read_only("read-only (options), damaged entry", damaged, JG_CACHE_READ, 1, 0);

    /* The same through the environment, with cache_mode DEFAULT. meson runs
     * the unit suite with JITGEMM_CACHE=off: override it here. */
    const char *old = getenv("JITGEMM_CACHE");
    char *saved = old ? strdup(old) : NULL;
    setenv("JITGEMM_CACHE", "read", 1);
    expect_read_only("JITGEMM_CACHE=read, empty", empty, JG_CACHE_DEFAULT, 1, 0);
    expect_read_only("JITGEMM_CACHE=read, warm", warm, JG_CACHE_DEFAULT, 0, 1);
    if (saved)
        setenv("JITGEMM_CACHE", saved, 1);
    else
        unsetenv("JITGEMM_CACHE");
    free(saved);
    CHECK(count_files(empty, "") == 0, "the empty read-only cache has files");
    printf("d. read-only caches: unchanged; %.2f s\n", now_s() - t0);
}

/* ---- e. a cache copied to another directory ----------------------------------------- */

static void test_copied(const char *warm_dir)
{
    char dir[4200], deeper[4200];
    path_in_root(deeper, sizeof deeper, "copied");
    make_dir(deeper, 0700);
    path_in_root(dir, sizeof dir, "copied/elsewhere");
    if (!copy_tree(warm_dir, dir)) {
        CHECK(0, "copying %s to %s", warm_dir, dir);
        return;
    }
    captured c;
    jg_plan_info info;
    memset(&info, 0, sizeof info);
    jg_context_stats s = plan_once("copied cache", dir, JG_CACHE_READWRITE, &c, &info);
    CHECK(s.plans_disk == 1 && s.plans_compiled == 0 && info.origin == JG_ORIGIN_DISK,
          "copied cache: disk %llu, compiled %llu, origin %d (%s)", (unsigned long long)s.plans_disk,
          (unsigned long long)s.plans_compiled, (int)info.origin, c.text);
    CHECK(c.warnings == 0, "copied cache: warnings: %s", c.text);
    printf("e. copied cache: %llu disk load, %llu compiles\n", (unsigned long long)s.plans_disk,
           (unsigned long long)s.plans_compiled);
}

/* ---- f. a directory writable by others: refused end to end ---------------------------- */

static void test_unsafe_dir(void)
{
    char dir[4200];
    path_in_root(dir, sizeof dir, "mode0777");
    if (!make_dir(dir, 0777))
        return;
    captured c;
    jg_context_stats s = plan_once("0777 cache", dir, JG_CACHE_READWRITE, &c, NULL);
    CHECK(c.warnings >= 1 && strstr(c.text, dir) && strstr(c.text, "writable by group or others") &&
              strstr(c.text, "memory only"),
          "0777 cache: expected a warning naming %s, got: %s", dir, c.text);
    CHECK(s.plans_compiled == 1 && s.plans_disk == 0, "0777 cache: compiled %llu, disk %llu",
          (unsigned long long)s.plans_compiled, (unsigned long long)s.plans_disk);
    CHECK(count_files(dir, "") == 0, "0777 cache: %d files written", count_files(dir, ""));
    printf("f. 0777 cache directory: refused, planned in memory\n");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    if (!mkdtemp(root) || chmod(root, 0700) != 0) {
        perror("mkdtemp");
        return 1;
    }
    char warm[4200], killed[4200];
    path_in_root(warm, sizeof warm, "shared");
    path_in_root(killed, sizeof killed, "killed");
    /* First: the children fork from a process that has not used NVRTC yet. */
    jg__hash128 key = test_many_processes(warm);
    if (make_dir(killed, 0700))
        test_killed_writers(killed);
    if (key.lo || key.hi) {
        test_damage(warm, key);
        test_read_only(warm, key);
        test_copied(warm);
    }
    test_unsafe_dir();
    remove_tree(root);
    CHECK(access(root, F_OK) != 0, "could not remove %s", root);
    return jg_test_result("test_cache_procs");
}
