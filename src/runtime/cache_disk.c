/* The on-disk cache: <dir>/<arch>/<key-hex>.cubin, a checked header and the
 * cubin. Written to a temp file, fsync'd, renamed: readers see a whole entry
 * or none. Damaged entries are misses that the next write replaces. A cubin
 * is code we execute, so the directory must be ours and closed to others. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "runtime/runtime.h"

_Static_assert(sizeof(jg__disk_header) == 208, "the header layout of cache/README.md");

static bool default_dir(char *out, size_t len)
{
    const char *env = getenv("JITGEMM_CACHE_DIR");
    if (env && *env)
        return (size_t)snprintf(out, len, "%s", env) < len;
    env = getenv("XDG_CACHE_HOME");
    if (env && *env)
        return (size_t)snprintf(out, len, "%s/jitgemm", env) < len;
    env = getenv("HOME");
    if (env && *env)
        return (size_t)snprintf(out, len, "%s/.cache/jitgemm", env) < len;
    return false;
}

/* mkdir -p with mode 0700 for the parts we create. */
static int make_dirs(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return -1;
    for (char *p = tmp + 1; *p; ++p) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

/* The directory must be a directory, ours, and not writable by others;
 * why not, into why. */
static bool dir_is_safe(const char *path, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        snprintf(why, len, "cache directory %s: %s", path, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        snprintf(why, len, "cache path %s is not a directory", path);
    else if (st.st_uid != geteuid())
        snprintf(why, len, "cache directory %s is owned by uid %u, not by us (uid %u): refused",
                 path, (unsigned)st.st_uid, (unsigned)geteuid());
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, len,
                 "cache directory %s is writable by group or others (mode %03o): refused", path,
                 (unsigned)(st.st_mode & 0777));
    else
        return true;
    return false;
}

/* dir_opt, else the environment's default, into out; false (why) when none
 * resolves. */
static bool resolve_dir(const char *dir_opt, char *out, size_t len, char *why, size_t why_len)
{
    out[0] = 0;
    if (dir_opt && *dir_opt) {
        if ((size_t)snprintf(out, len, "%s", dir_opt) < len)
            return true;
        snprintf(why, why_len, "cache directory %.64s... is longer than %zu bytes", dir_opt,
                 len - 1);
    } else if (default_dir(out, len)) {
        return true;
    } else {
        snprintf(why, why_len,
                 "no usable cache directory (JITGEMM_CACHE_DIR, XDG_CACHE_HOME and HOME unset, "
                 "or the path longer than %zu bytes)",
                 len - 1);
    }
    out[0] = 0;
    return false;
}

void jg__disk_open(jg__disk *d, const char *dir_opt, jg_cache_mode mode, const jg__log *log)
{
    memset(d, 0, sizeof *d);
    if (mode == JG_CACHE_OFF)
        return;
    char why[sizeof d->dir + 256];
    if (!resolve_dir(dir_opt, d->dir, sizeof d->dir, why, sizeof why)) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "%s; using memory only", why);
        return;
    }
    d->writable = mode == JG_CACHE_READWRITE;
    if (d->writable && make_dirs(d->dir) != 0) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "cannot create cache directory %s: %s", d->dir,
                 strerror(errno));
        return;
    }
    if (!dir_is_safe(d->dir, why, sizeof why)) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "%s; using memory only", why);
        return;
    }
    d->enabled = true;
    jg__logf(log, JG_LOG_INFO, JG_LOGC_CACHE, "disk cache %s (%s)", d->dir,
             d->writable ? "read-write" : "read-only");
}

jg__dir_state jg__disk_locate(const char *dir_opt, char *out, size_t len, char *why,
                              size_t why_len)
{
    struct stat st;
    if (!resolve_dir(dir_opt, out, len, why, why_len))
        return JG_DIR_REFUSED;
    if (stat(out, &st) != 0 && errno == ENOENT)
        return JG_DIR_MISSING;
    return dir_is_safe(out, why, why_len) ? JG_DIR_USABLE : JG_DIR_REFUSED;
}

static void arch_dir(const jg__disk *d, const char *arch, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", d->dir, arch);
}

void jg__disk_entry_path(const jg__disk *d, const char *arch, jg__hash128 key, char *out,
                         size_t len)
{
    char hex[33];
    jg__hash_hex(key, hex);
    snprintf(out, len, "%s/%s/%s.cubin", d->dir, arch, hex);
}

static uint64_t header_checksum(const jg__disk_header *h)
{
    return XXH3_64bits(h, offsetof(jg__disk_header, header_checksum));
}

/* Moves exactly len bytes, retrying short transfers and EINTR. */
static bool transfer_all(int fd, char *p, size_t len, bool writing)
{
    while (len) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

bool jg__read_all(int fd, void *buf, size_t len) { return transfer_all(fd, buf, len, false); }

bool jg__write_all(int fd, const void *buf, size_t len)
{
    return transfer_all(fd, (char *)buf, len, true);
}

/* Why a header is not usable, or NULL when it is. */
static const char *check_header(const jg__disk_header *h, jg__hash128 key, off_t file_size)
{
    if (memcmp(h->magic, JG_DISK_MAGIC, sizeof h->magic))
        return "bad magic";
    if (h->format != JG_DISK_FORMAT)
        return "other format version";
    if (h->header_size != sizeof *h)
        return "bad header size";
    if (h->header_checksum != header_checksum(h))
        return "header checksum mismatch";
    if (h->key_lo != key.lo || h->key_hi != key.hi)
        return "key mismatch";
    if ((uint64_t)file_size != sizeof *h + h->payload_size)
        return "size mismatch (truncated or extended)";
    return NULL;
}

/* Every check of cache/README.md on the entry open on fd, whose name says
 * `key` (but the payload's checksum when !verify). The payload is appended
 * to `payload` when that is not NULL. Returns NULL when the entry is usable,
 * else why not; *h is what was read. */
static const char *check_entry(int fd, jg__hash128 key, jg__disk_header *h, bool verify,
                               jg__buf *payload)
{
    struct stat st;
    memset(h, 0, sizeof *h);
    if (fstat(fd, &st) != 0 || !jg__read_all(fd, h, sizeof *h))
        return "short header";
    const char *why = check_header(h, key, st.st_size);
    if (why || !verify)
        return why;
    char *data = malloc(h->payload_size ? h->payload_size : 1);
    if (!data || !jg__read_all(fd, data, h->payload_size))
        why = "short payload";
    else if (XXH3_64bits(data, h->payload_size) != h->payload_checksum)
        why = "payload checksum mismatch";
    else if (payload) { /* a failed append sticks in payload->failed for the caller */
        size_t before = payload->len;
        jg__buf_append(payload, data, h->payload_size);
        if (payload->failed)
            payload->len = before;
    }
    free(data);
    return why;
}

bool jg__disk_key_from_path(const char *path, jg__hash128 *key)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strlen(base) != 32 + strlen(".cubin") || strcmp(base + 32, ".cubin"))
        return false;
    uint64_t half[2] = {0, 0}; /* hi first, as jg__hash_hex writes it */
    for (int i = 0; i < 32; ++i) {
        char c = base[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return false;
        half[i / 16] = half[i / 16] << 4 | (uint64_t)v;
    }
    key->hi = half[0];
    key->lo = half[1];
    return true;
}

bool jg__disk_check_file(const char *path, bool verify, jg__disk_header *hdr, const char **why)
{
    jg__hash128 key;
    memset(hdr, 0, sizeof *hdr);
    if (!jg__disk_key_from_path(path, &key)) {
        *why = "file name is not <32 hex digits>.cubin";
        return false;
    }
    /* A check is not a use: the access time stays what loads made it (only
     * the file's owner may ask so; others read as loads do). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = errno == ENOENT ? "missing" : "cannot open";
        return false;
    }
    *why = check_entry(fd, key, hdr, verify, NULL);
    close(fd);
    return *why == NULL;
}

bool jg__disk_read(const jg__disk *d, const char *arch, jg__hash128 key, jg__buf *payload,
                   const jg__log *log)
{
    if (!d->enabled)
        return false;
    char path[4200];
    jg__disk_entry_path(d, arch, key, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        jg__logf(log, JG_LOG_DEBUG, JG_LOGC_CACHE, "disk miss %s", path);
        return false;
    }
    jg__disk_header h;
    const char *why = check_entry(fd, key, &h, true, payload);
    close(fd);
    if (why) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "ignoring damaged cache entry %s: %s", path, why);
        return false;
    }
    jg__logf(log, JG_LOG_INFO, JG_LOGC_CACHE, "disk hit %s (%s)", path, h.name);
    return true;
}

bool jg__disk_write(const jg__disk *d, const char *arch, jg__hash128 key, const char *name,
                    const void *payload, size_t len, const jg__log *log)
{
    if (!d->enabled || !d->writable)
        return false;
    char dir[4200], tmp[4300], path[4200];
    arch_dir(d, arch, dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "cannot create %s: %s", dir, strerror(errno));
        return false;
    }
    jg__disk_entry_path(d, arch, key, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "cannot create %s: %s", tmp, strerror(errno));
        return false;
    }
    jg__disk_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, JG_DISK_MAGIC, sizeof h.magic);
    h.format = JG_DISK_FORMAT;
    h.header_size = sizeof h;
    h.key_lo = key.lo;
    h.key_hi = key.hi;
    h.payload_size = len;
    h.payload_checksum = XXH3_64bits(payload, len);
    h.created_unix = (uint64_t)time(NULL);
    snprintf(h.arch, sizeof h.arch, "%s", arch);
    snprintf(h.name, sizeof h.name, "%s", name);
    h.header_checksum = header_checksum(&h);
    bool ok = jg__write_all(fd, &h, sizeof h) && jg__write_all(fd, payload, len) && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (ok && rename(tmp, path) != 0)
        ok = false;
    if (!ok) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "cannot write cache entry %s: %s", path,
                 strerror(errno));
        unlink(tmp);
        return false;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* make the rename itself durable */
        fsync(dfd);
        close(dfd);
    }
    jg__logf(log, JG_LOG_INFO, JG_LOGC_CACHE, "wrote %s (%s, %zu bytes)", path, name, len);
    return true;
}

int jg__disk_lock(const jg__disk *d, const char *arch, jg__hash128 key, const jg__log *log)
{
    if (!d->enabled || !d->writable)
        return -1;
    char dir[4200], path[4300], hex[33];
    arch_dir(d, arch, dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return -1;
    jg__hash_hex(key, hex);
    snprintf(path, sizeof path, "%s/%s.lock", dir, hex);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE, "cannot open lock %s: %s", path, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

void jg__disk_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}
