/* The disk cache: round trips, every kind of damage is a miss that the next
 * write repairs, entries are private (0600 in a 0700 directory), unsafe
 * directories are refused, read-only mode writes nothing, and the per-key
 * lock excludes other holders, in this process and in others. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xxhash.h>

#include "jg_internal.h"
#include "jg_test.h"

#define ARCH "sm_90a"

static char root[] = "/tmp/jg_disk_XXXXXX";

/* ---- helpers ------------------------------------------------------------ */

static void path_in_root(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", root, name);
}

static jg__hash128 test_key(uint64_t i)
{
    jg__hash128 k = {0x1234567890abcdefull ^ i, 0xfedcba0987654321ull + i};
    return k;
}

/* Entries in a directory (without . and ..), and how many are temp files. */
static int count_entries(const char *dir, int *temps)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (temps)
        *temps = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        ++n;
        if (temps && strstr(e->d_name, ".tmp"))
            ++*temps;
    }
    closedir(d);
    return n;
}

static unsigned file_mode(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffffu;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A payload of recognizable bytes. */
static void fill_payload(unsigned char *p, size_t len, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < len; ++i)
        p[i] = (unsigned char)jg_rng_next(&r);
}

/* Reads key and compares with the expected payload; true on an exact hit. */
static bool read_matches(const jg__disk *d, jg__hash128 key, const void *want, size_t len,
                         const jg__log *log)
{
    jg__buf got = {0};
    bool hit = jg__disk_read(d, ARCH, key, &got, log);
    bool same = hit && got.len == len && !memcmp(got.data, want, len);
    CHECK(hit || got.len == 0, "a miss left %zu bytes in the buffer", got.len);
    jg__buf_free(&got);
    return same;
}

/* ---- round trip, permissions, temp files ---------------------------------- */

static void test_round_trip(const jg__disk *d)
{
    unsigned char payload[3000];
    fill_payload(payload, sizeof payload, 1);
    jg__hash128 key = test_key(1);
    captured c;
    jg__log log = log_to(&c);
    CHECK(jg__disk_write(d, ARCH, key, "kernel_one", payload, sizeof payload, &log),
          "write failed: %s", c.text);
    CHECK(read_matches(d, key, payload, sizeof payload, &log), "round trip differs");
    CHECK(!read_matches(d, test_key(99), payload, sizeof payload, &log), "hit on an absent key");
    CHECK(c.warnings == 0, "warnings on a clean round trip: %s", c.text);

    /* An empty payload is an entry too. */
    CHECK(jg__disk_write(d, ARCH, test_key(2), "empty", payload, 0, &log), "empty write");
    CHECK(read_matches(d, test_key(2), payload, 0, &log), "empty round trip");

    char path[4300], arch_dir[4200];
    jg__disk_entry_path(d, ARCH, key, path, sizeof path);
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", d->dir, ARCH);
    CHECK(file_mode(path) == 0600, "entry mode %o", file_mode(path));
    CHECK(file_mode(arch_dir) == 0700, "arch dir mode %o", file_mode(arch_dir));
    CHECK(file_mode(d->dir) == 0700, "cache dir mode %o", file_mode(d->dir));
}

static void test_no_temp_files(const jg__disk *d)
{
    char arch_dir[4200];
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", d->dir, ARCH);
    int temps = 0;
    int n = count_entries(arch_dir, &temps);
    CHECK(n > 0 && temps == 0, "%d temp files left among %d entries", temps, n);
}

/* ---- damage: each kind is a logged miss; the next write repairs it -------- */

static bool patch_file(const char *path, off_t at, const void *bytes, size_t len)
{
    int fd = open(path, O_WRONLY);
    bool ok = fd >= 0 && pwrite(fd, bytes, len, at) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    return ok;
}

static bool flip_byte(const char *path, off_t at)
{
    unsigned char b;
    int fd = open(path, O_RDONLY);
    bool ok = fd >= 0 && pread(fd, &b, 1, at) == 1;
    if (fd >= 0)
        close(fd);
    b ^= 0x5a;
    return ok && patch_file(path, at, &b, 1);
}

static bool damage_name(const char *path) { return flip_byte(path, offsetof(jg__disk_header, name) + 3); }
static bool damage_key(const char *path) { return flip_byte(path, offsetof(jg__disk_header, key_hi)); }
static bool damage_magic(const char *path) { return flip_byte(path, 0); }
static bool damage_payload(const char *path) { return flip_byte(path, sizeof(jg__disk_header) + 1000); }

static bool damage_truncate(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && truncate(path, st.st_size - 1) == 0;
}

static bool damage_extend(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && patch_file(path, st.st_size, "x", 1);
}

/* A header that is whole and self-consistent except for its format version:
 * the checksum is recomputed so that only the version can cause the miss. */
static bool damage_version(const char *path)
{
    jg__disk_header h;
    int fd = open(path, O_RDONLY);
    bool ok = fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    if (fd >= 0)
        close(fd);
    h.format = JG_DISK_FORMAT + 1;
    h.header_checksum = XXH3_64bits(&h, offsetof(jg__disk_header, header_checksum));
    return ok && patch_file(path, 0, &h, sizeof h);
}

static const struct {
    const char *name;
    bool (*apply)(const char *path);
    const char *reason; /* what the warning must say */
} damages[] = {
    {"flipped name byte", damage_name, "header checksum"},
    {"flipped key byte", damage_key, "header checksum"},
    {"flipped magic byte", damage_magic, "magic"},
    {"flipped payload byte", damage_payload, "payload checksum"},
    {"truncated payload", damage_truncate, "size mismatch"},
    {"extended file", damage_extend, "size mismatch"},
    {"other format version", damage_version, "format version"},
};

static void test_damage(const jg__disk *d)
{
    unsigned char payload[2048];
    fill_payload(payload, sizeof payload, 7);
    for (size_t i = 0; i < JG_ARRAY_LEN(damages); ++i) {
        jg__hash128 key = test_key(100 + i);
        char path[4300];
        jg__disk_entry_path(d, ARCH, key, path, sizeof path);
        captured c;
        jg__log log = log_to(&c);
        CHECK(jg__disk_write(d, ARCH, key, "damaged_kernel", payload, sizeof payload, &log),
              "%s: first write", damages[i].name);
        CHECK(damages[i].apply(path), "%s: could not damage %s", damages[i].name, path);
        CHECK(!read_matches(d, key, payload, sizeof payload, &log), "%s: still a hit",
              damages[i].name);
        CHECK(c.warnings == 1 && strstr(c.text, path) && strstr(c.text, damages[i].reason),
              "%s: expected one warning naming the file and \"%s\", got: %s", damages[i].name,
              damages[i].reason, c.text);
        CHECK(jg__disk_write(d, ARCH, key, "damaged_kernel", payload, sizeof payload, &log),
              "%s: rewrite", damages[i].name);
        CHECK(read_matches(d, key, payload, sizeof payload, &log), "%s: no hit after rewrite",
              damages[i].name);
    }
}

/* ---- read-only mode --------------------------------------------------------- */

static void test_read_only(const jg__disk *rw)
{
    captured c;
    jg__log log = log_to(&c);
    jg__disk ro;
    jg__disk_open(&ro, rw->dir, JG_CACHE_READ, &log);
    CHECK(ro.enabled && !ro.writable, "read-only open: enabled %d writable %d", ro.enabled,
          ro.writable);
    char arch_dir[4200];
    snprintf(arch_dir, sizeof arch_dir, "%s/%s", rw->dir, ARCH);
    int before_root = count_entries(rw->dir, NULL), before_arch = count_entries(arch_dir, NULL);
    unsigned char payload[64] = {1, 2, 3};
    CHECK(!jg__disk_write(&ro, ARCH, test_key(500), "ro", payload, sizeof payload, &log),
          "read-only write succeeded");
    CHECK(!jg__disk_write(&ro, "sm_100a", test_key(501), "ro", payload, sizeof payload, &log),
          "read-only write to a new arch succeeded");
    CHECK(jg__disk_lock(&ro, "sm_100a", test_key(501), &log) < 0, "read-only lock succeeded");
    CHECK(count_entries(rw->dir, NULL) == before_root && count_entries(arch_dir, NULL) == before_arch,
          "read-only mode created files");

    /* What exists can still be read. */
    unsigned char first[3000];
    fill_payload(first, sizeof first, 1);
    CHECK(read_matches(&ro, test_key(1), first, sizeof first, &log), "read-only read missed");

    /* A read-only cache never creates its directory. */
    char missing[4200];
    path_in_root(missing, sizeof missing, "never_created");
    jg__disk_open(&ro, missing, JG_CACHE_READ, &log);
    CHECK(!ro.enabled && file_mode(missing) == 0xffffu, "read-only open created %s", missing);
}

/* ---- directories we must refuse ------------------------------------------- */

/* Opens a fresh directory of the given mode (and owner) read-write and
 * expects a refusal with a warning that names it. */
static void expect_refused(const char *name, unsigned mode, int uid, const char *why)
{
    char dir[4200];
    path_in_root(dir, sizeof dir, name);
    if (mkdir(dir, 0700) != 0 || chmod(dir, mode) != 0 || (uid >= 0 && chown(dir, (uid_t)uid, 0))) {
        CHECK(0, "%s: setting up %s: %s", name, dir, strerror(errno));
        return;
    }
    captured c;
    jg__log log = log_to(&c);
    jg__disk d;
    jg__disk_open(&d, dir, JG_CACHE_READWRITE, &log);
    CHECK(!d.enabled, "%s: unsafe directory accepted", name);
    CHECK(c.warnings >= 1 && strstr(c.text, dir) && strstr(c.text, why),
          "%s: expected a warning naming %s and \"%s\", got: %s", name, dir, why, c.text);
    CHECK(!jg__disk_write(&d, ARCH, test_key(1), "x", "x", 1, &log), "%s: write went through",
          name);
    CHECK(count_entries(dir, NULL) == 0, "%s: files created in a refused directory", name);
}

static void test_unsafe_dirs(void)
{
    expect_refused("mode0777", 0777, -1, "writable by group or others");
    expect_refused("mode0770", 0770, -1, "writable by group or others");
    expect_refused("mode0702", 0702, -1, "writable by group or others");
    if (geteuid() == 0)
        expect_refused("other_uid", 0700, 65534, "owned by uid 65534");
    else
        printf("note: not root, skipping the directory owned by another uid\n");

    /* Readable by others is fine: only writes by others could plant code. */
    char dir[4200];
    path_in_root(dir, sizeof dir, "mode0755");
    mkdir(dir, 0700);
    chmod(dir, 0755);
    captured c;
    jg__log log = log_to(&c);
    jg__disk d;
    jg__disk_open(&d, dir, JG_CACHE_READWRITE, &log);
    CHECK(d.enabled && c.warnings == 0, "0755 directory refused: %s", c.text);

    /* A file where the directory should be. */
    path_in_root(dir, sizeof dir, "plain_file");
    FILE *f = fopen(dir, "w");
    if (f)
        fclose(f);
    jg__disk_open(&d, dir, JG_CACHE_READWRITE, &log);
    CHECK(!d.enabled, "a plain file accepted as cache directory");
}

/* ---- the per-key lock -------------------------------------------------------- */

/* Whether a non-blocking exclusive flock on path is refused as busy. */
static bool lock_is_busy(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

/* The same question asked by a child process: exit 0 when busy. */
static bool lock_is_busy_in_child(const char *path)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(lock_is_busy(path) ? 0 : 1);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_lock(const jg__disk *d)
{
    captured c;
    jg__log log = log_to(&c);
    jg__hash128 key = test_key(7);
    char hex[33], path[4300];
    jg__hash_hex(key, hex);
    snprintf(path, sizeof path, "%s/%s/%s.lock", d->dir, ARCH, hex);

    int fd = jg__disk_lock(d, ARCH, key, &log);
    CHECK(fd >= 0, "jg__disk_lock: %d (%s)", fd, c.text);
    if (fd < 0)
        return;
    CHECK(file_mode(path) == 0600, "lock file %s mode %o", path, file_mode(path));
    CHECK(lock_is_busy(path), "a second open of the lock got it while held");
    CHECK(lock_is_busy_in_child(path), "another process got the lock while held");
    jg__disk_unlock(fd);
    CHECK(!lock_is_busy(path), "lock still held after unlock");
    CHECK(!lock_is_busy_in_child(path), "lock still held (for others) after unlock");
}

/* ---- main ------------------------------------------------------------------- */

int main(void)
{
    if (!mkdtemp(root) || chmod(root, 0700) != 0) {
        perror("mkdtemp");
        return 1;
    }
    char cache_dir[4200];
    path_in_root(cache_dir, sizeof cache_dir, "cache/nested");
    captured c;
    jg__log log = log_to(&c);
    jg__disk d;
    jg__disk_open(&d, cache_dir, JG_CACHE_OFF, &log);
    CHECK(!d.enabled && file_mode(cache_dir) == 0xffffu, "cache off still opened a directory");
    jg__disk_open(&d, cache_dir, JG_CACHE_READWRITE, &log);
    CHECK(d.enabled && d.writable, "read-write open failed: %s", c.text);
    if (d.enabled) {
        test_round_trip(&d);
        test_damage(&d);
        test_no_temp_files(&d);
        test_read_only(&d);
        test_lock(&d);
    }
    test_unsafe_dirs();
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    CHECK(file_mode(root) == 0xffffu, "could not remove %s", root);
    return jg_test_result("test_cache_disk");
}
