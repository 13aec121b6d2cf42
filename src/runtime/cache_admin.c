/* The disk cache seen from outside the compile path (the public jg_cache_*
 * calls, jg_context_get_cache_dir and jg_context_cache_entry): where it is,
 * its entries listed and checked, pruning. Only the library's own files are
 * read or removed: in directories named sm_*, <key>.cubin, <key>.lock and
 * <key>.cubin.tmp.XXXXXX (cache/README.md), so a directory given by mistake
 * loses nothing else. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"

#define TMP_MIN_AGE 60 /* seconds: a younger temp file may be a write in progress */
#define ROOT_LEN 4096  /* as jg__disk.dir */
#define ARCH_DIR_LEN (ROOT_LEN + 16) /* <root>/<arch>, an arch of < 16 bytes */
#define PATH_LEN (ARCH_DIR_LEN + 256) /* and any name a directory holds */

enum file_type { FILE_ENTRY, FILE_LOCK, FILE_TMP };

/* One file the library wrote: <root>/<arch>/<name>. */
typedef struct cache_file {
    char arch[16];
    char name[64];
    enum file_type type;
    struct stat st;
    jg_cache_entry entry; /* FILE_ENTRY, once checked */
    bool gone;            /* removed, or vanished since it was listed */
} cache_file;

typedef struct cache_files {
    cache_file *v;
    size_t n, cap;
} cache_files;

/* ---- finding the files ----------------------------------------------------- */

static bool is_hex32(const char *s)
{
    for (int i = 0; i < 32; ++i)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* <key>.cubin, <key>.lock, <key>.cubin.tmp.XXXXXX (mkstemp's six). */
static bool classify(const char *name, enum file_type *t)
{
    if (strlen(name) < 32 || !is_hex32(name))
        return false;
    const char *rest = name + 32;
    if (!strcmp(rest, ".cubin"))
        *t = FILE_ENTRY;
    else if (!strcmp(rest, ".lock"))
        *t = FILE_LOCK;
    else if (!strncmp(rest, ".cubin.tmp.", 11) && strlen(rest) == 17)
        *t = FILE_TMP;
    else
        return false;
    return true;
}

/* sm_ and lower-case letters or digits, short enough for the header's arch. */
static bool is_arch_name(const char *s)
{
    if (strncmp(s, "sm_", 3) || !s[3] || strlen(s) >= sizeof ((cache_file *)0)->arch)
        return false;
    for (s += 3; *s; ++s)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z')))
            return false;
    return true;
}

static bool add_file(cache_files *out, const char *arch, const char *name, enum file_type t,
                     const struct stat *st)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 64;
        cache_file *v = realloc(out->v, cap * sizeof *v);
        if (!v)
            return false;
        out->v = v;
        out->cap = cap;
    }
    cache_file *f = &out->v[out->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->arch, sizeof f->arch, "%s", arch);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->type = t;
    f->st = *st;
    return true;
}

static void file_path(const char *root, const cache_file *f, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%s", root, f->arch, f->name);
}

/* The library's files of one <root>/<arch>; false when memory runs out. */
static bool collect_arch(const char *root, const char *arch, cache_files *out)
{
    char dir[ARCH_DIR_LEN], path[PATH_LEN];
    snprintf(dir, sizeof dir, "%s/%s", root, arch);
    DIR *d = opendir(dir);
    if (!d) /* removed meanwhile, or not ours to read: nothing of ours there */
        return true;
    struct dirent *e;
    bool ok = true;
    enum file_type t;
    struct stat st;
    while (ok && (e = readdir(d)))
        if (classify(e->d_name, &t)) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
                ok = add_file(out, arch, e->d_name, t, &st);
        }
    closedir(d);
    return ok;
}

static int by_arch_name(const void *a, const void *b)
{
    const cache_file *x = a, *y = b;
    int c = strcmp(x->arch, y->arch);
    return c ? c : strcmp(x->name, y->name);
}

/* Every file of ours under root, sorted by arch and name. */
static jg_status collect(const char *root, cache_files *out)
{
    DIR *d = opendir(root);
    if (!d)
        return jg__fail(NULL, JG_ERR_CACHE, "cannot read %s: %s", root, strerror(errno));
    struct dirent *e;
    bool ok = true;
    char path[PATH_LEN];
    struct stat st;
    while (ok && (e = readdir(d))) {
        snprintf(path, sizeof path, "%s/%s", root, e->d_name);
        if (is_arch_name(e->d_name) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            ok = collect_arch(root, e->d_name, out);
    }
    closedir(d);
    if (!ok)
        return jg__fail(NULL, JG_ERR_NO_MEMORY, "listing %s", root);
    if (out->n)
        qsort(out->v, out->n, sizeof *out->v, by_arch_name);
    return JG_OK;
}

/* The directory dir resolves to, into root; *exists false when it is not
 * there yet (nothing to list or prune). */
static jg_status open_root(const char *dir, char root[ROOT_LEN], bool *exists)
{
    char why[ROOT_LEN + 256];
    jg__dir_state s = jg__disk_locate(dir, root, ROOT_LEN, why, sizeof why);
    *exists = s == JG_DIR_USABLE;
    return s == JG_DIR_REFUSED ? jg__fail(NULL, JG_ERR_CACHE, "%s", why) : JG_OK;
}

/* The files of the cache in dir (none when it is not there yet). */
static jg_status open_files(const char *dir, char root[ROOT_LEN], cache_files *files)
{
    bool exists;
    memset(files, 0, sizeof *files);
    jg_status st = open_root(dir, root, &exists);
    return st != JG_OK || !exists ? st : collect(root, files);
}

/* ---- checking entries ---------------------------------------------------------- */

/* The entry at path, found as st, checked (the payload's checksum too when
 * verify). False when the file is gone. */
static bool entry_fill(const char *path, const char *arch, const struct stat *st, bool verify,
                       jg_cache_entry *e)
{
    jg__disk_header h;
    jg__hash128 key = {0, 0};
    const char *why;
    memset(e, 0, sizeof *e);
    bool ok = jg__disk_check_file(path, verify, &h, &why);
    if (!ok && !strcmp(why, "missing"))
        return false;
    jg__disk_key_from_path(path, &key);
    e->key_hash[0] = key.lo;
    e->key_hash[1] = key.hi;
    snprintf(e->arch, sizeof e->arch, "%s", arch);
    e->bytes = (uint64_t)st->st_size;
    e->used_unix = (int64_t)st->st_atime;
    e->format = h.format;
    e->problem = ok ? "" : why;
    if (ok) {
        e->state = JG_CACHE_ENTRY_OK;
        /* read from a file: trust no terminator */
        snprintf(e->kernel_name, sizeof e->kernel_name, "%.*s", (int)sizeof h.name - 1, h.name);
        e->created_unix = (int64_t)h.created_unix;
    } else {
        const bool ours = !memcmp(h.magic, JG_DISK_MAGIC, sizeof h.magic);
        e->state = ours && h.format != JG_DISK_FORMAT ? JG_CACHE_ENTRY_OTHER_FORMAT
                                                      : JG_CACHE_ENTRY_DAMAGED;
        e->created_unix = (int64_t)st->st_mtime;
    }
    return true;
}

jg_status jg_cache_dir(const char *dir, char *out, size_t len)
{
    if (!out)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "out is NULL");
    char root[ROOT_LEN];
    bool exists;
    jg_status st = open_root(dir, root, &exists);
    if (strlen(root) >= len) {
        if (len)
            out[0] = 0;
        return jg__fail(NULL, JG_ERR_INVALID, "out holds %zu bytes; the directory needs %zu",
                        len, strlen(root) + 1);
    }
    memcpy(out, root, strlen(root) + 1);
    return st;
}

jg_status jg_context_get_cache_dir(const jg_context *ctx, const char **dir,
                                   jg_cache_mode *mode)
{
    if (!ctx)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "ctx is NULL");
    if (dir)
        *dir = ctx->disk.enabled ? ctx->disk.dir : "";
    if (mode)
        *mode = !ctx->disk.enabled   ? JG_CACHE_OFF
                : ctx->disk.writable ? JG_CACHE_READWRITE
                                     : JG_CACHE_READ;
    return JG_OK;
}

jg_status jg_cache_list(const char *dir, uint32_t flags, jg_cache_entry_fn fn, void *user)
{
    if (!fn)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "fn is NULL");
    if (flags & ~(uint32_t)JG_CACHE_VERIFY)
        return jg__fail(NULL, JG_ERR_INVALID, "flags 0x%x: unknown bits", flags);
    char root[ROOT_LEN], path[PATH_LEN];
    cache_files files;
    jg_status st = open_files(dir, root, &files);
    for (size_t i = 0; st == JG_OK && i < files.n; ++i) {
        cache_file *f = &files.v[i];
        if (f->type != FILE_ENTRY)
            continue;
        file_path(root, f, path, sizeof path);
        if (entry_fill(path, f->arch, &f->st, flags & JG_CACHE_VERIFY, &f->entry) &&
            fn(user, path, &f->entry) != 0)
            break;
    }
    free(files.v);
    return st;
}

jg_status jg_context_cache_entry(jg_context *ctx, const uint64_t key_hash[2], jg_cache_entry *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ctx || !key_hash || !out)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL",
                        !ctx ? "ctx" : !key_hash ? "key_hash" : "out");
    if (!ctx->disk.enabled)
        return jg__fail(ctx, JG_ERR_CACHE, "the context has no disk cache (memory only)");
    const jg__hash128 key = {key_hash[0], key_hash[1]};
    char path[PATH_LEN];
    struct stat st;
    jg__disk_entry_path(&ctx->disk, ctx->arch, key, path, sizeof path);
    if (stat(path, &st) != 0 || !entry_fill(path, ctx->arch, &st, true, out)) {
        memset(out, 0, sizeof *out);
        out->state = JG_CACHE_ENTRY_MISSING;
        out->problem = "missing";
        snprintf(out->arch, sizeof out->arch, "%s", ctx->arch);
        out->key_hash[0] = key.lo;
        out->key_hash[1] = key.hi;
    }
    return JG_OK;
}

/* ---- pruning --------------------------------------------------------------- */

typedef struct prune_run {
    const char *root;
    jg_cache_removal_fn fn;
    void *user;
    jg_status status; /* the first failure */
} prune_run;

/* Unlinks a file; a lock file only when nobody holds it, since a held one
 * is a compile in progress whose entry is about to appear. *gone: it was
 * not there any more. */
static jg_cache_outcome remove_file(const char *path, bool is_lock, int *error, bool *gone)
{
    int fd = -1;
    *error = 0;
    *gone = false;
    if (is_lock) {
        fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            *gone = errno == ENOENT;
            *error = errno;
            return *gone ? JG_CACHE_REMOVED : JG_CACHE_FAILED;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            close(fd);
            return JG_CACHE_BUSY;
        }
    }
    jg_cache_outcome r = JG_CACHE_REMOVED;
    if (unlink(path) != 0) {
        *gone = errno == ENOENT;
        *error = *gone ? 0 : errno;
        r = *gone ? JG_CACHE_REMOVED : JG_CACHE_FAILED;
    }
    if (fd >= 0)
        close(fd); /* releases the lock */
    return r;
}

/* Removes one file and reports it (not when another process was first). */
static void prune_file(prune_run *r, cache_file *f, const char *reason)
{
    char path[PATH_LEN];
    file_path(r->root, f, path, sizeof path);
    bool gone;
    jg_cache_removal rm = {.path = path, .arch = f->arch, .name = f->name, .reason = reason,
                           .entry = f->type == FILE_ENTRY ? &f->entry : NULL,
                           .bytes = (uint64_t)f->st.st_size};
    rm.outcome = remove_file(path, f->type == FILE_LOCK, &rm.error, &gone);
    f->gone = rm.outcome == JG_CACHE_REMOVED;
    if (rm.outcome == JG_CACHE_FAILED && r->status == JG_OK)
        r->status = jg__fail(NULL, JG_ERR_CACHE, "cannot remove %s: %s", path, strerror(rm.error));
    if (r->fn && !gone)
        r->fn(r->user, &rm);
}

/* Least recently used first: used, then created, then name. */
static int by_use(const void *a, const void *b)
{
    const cache_file *x = *(cache_file *const *)a, *y = *(cache_file *const *)b;
    if (x->entry.used_unix != y->entry.used_unix)
        return x->entry.used_unix < y->entry.used_unix ? -1 : 1;
    if (x->entry.created_unix != y->entry.created_unix)
        return x->entry.created_unix < y->entry.created_unix ? -1 : 1;
    return by_arch_name(x, y);
}

/* Then, of the whole entries left, the least recently used until they take
 * at most max_bytes. */
static jg_status prune_to_size(prune_run *r, cache_files *files, uint64_t max_bytes)
{
    cache_file **live = malloc((files->n ? files->n : 1) * sizeof *live);
    if (!live)
        return jg__fail(NULL, JG_ERR_NO_MEMORY, "pruning %s", r->root);
    size_t n = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < files->n; ++i) {
        cache_file *f = &files->v[i];
        if (f->type == FILE_ENTRY && !f->gone && f->entry.state == JG_CACHE_ENTRY_OK) {
            live[n++] = f;
            total += f->entry.bytes;
        }
    }
    qsort(live, n, sizeof *live, by_use);
    for (size_t i = 0; i < n && total > max_bytes; ++i) {
        prune_file(r, live[i], "least recently used, over the size limit");
        total -= live[i]->gone ? live[i]->entry.bytes : 0;
    }
    free(live);
    return JG_OK;
}

/* Entries: checked, then removed when damaged, of an older format, or (with
 * max_age_s) unused too long. */
static void prune_entries(prune_run *r, cache_files *files, const jg_cache_prune_options *o,
                          time_t now)
{
    char path[PATH_LEN];
    for (size_t i = 0; i < files->n; ++i) {
        cache_file *f = &files->v[i];
        if (f->type != FILE_ENTRY)
            continue;
        file_path(r->root, f, path, sizeof path);
        if (!entry_fill(path, f->arch, &f->st, o->flags & JG_CACHE_VERIFY, &f->entry)) {
            f->gone = true;
            continue;
        }
        const jg_cache_entry *e = &f->entry;
        if (e->state == JG_CACHE_ENTRY_DAMAGED)
            prune_file(r, f, "damaged entry");
        else if (e->state == JG_CACHE_ENTRY_OTHER_FORMAT && e->format < JG_DISK_FORMAT)
            prune_file(r, f, "older format version"); /* a newer library's: not ours to remove */
        else if (e->state == JG_CACHE_ENTRY_OK && o->max_age_s > 0 &&
                 (int64_t)now - e->used_unix > o->max_age_s)
            prune_file(r, f, "not used within the age limit");
    }
}

/* Lock files without an entry (after the entries, whose fate decides it),
 * then temp files of writers killed mid-write. */
static void prune_others(prune_run *r, cache_files *files, time_t now)
{
    char entry[PATH_LEN];
    for (size_t i = 0; i < files->n; ++i) {
        cache_file *f = &files->v[i];
        if (f->type != FILE_LOCK)
            continue;
        snprintf(entry, sizeof entry, "%s/%s/%.32s.cubin", r->root, f->arch, f->name);
        if (access(entry, F_OK) != 0)
            prune_file(r, f, "lock file without an entry");
    }
    for (size_t i = 0; i < files->n; ++i) {
        cache_file *f = &files->v[i];
        if (f->type == FILE_TMP && (int64_t)now - (int64_t)f->st.st_mtime >= TMP_MIN_AGE)
            prune_file(r, f, "temp file left by an interrupted write");
    }
}

jg_status jg_cache_prune(const char *dir, const jg_cache_prune_options *opt,
                         jg_cache_removal_fn fn, void *user)
{
    jg_cache_prune_options o;
    memset(&o, 0, sizeof o);
    if (opt)
        o = *opt;
    if (o.flags & ~(uint32_t)JG_CACHE_VERIFY)
        return jg__fail(NULL, JG_ERR_INVALID, "opt.flags 0x%x: unknown bits", o.flags);
    if (o.max_age_s < 0)
        return jg__fail(NULL, JG_ERR_INVALID, "opt.max_age_s %lld < 0", (long long)o.max_age_s);
    char root[ROOT_LEN];
    cache_files files;
    jg_status st = open_files(dir, root, &files);
    prune_run r = {root, fn, user, JG_OK};
    const time_t now = time(NULL);
    if (st == JG_OK) {
        prune_entries(&r, &files, &o, now);
        if (o.max_bytes)
            st = prune_to_size(&r, &files, o.max_bytes);
        prune_others(&r, &files, now);
    }
    free(files.v);
    return st != JG_OK ? st : r.status;
}
