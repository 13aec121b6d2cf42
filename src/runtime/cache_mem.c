/* The in-memory cache: a chained hash table of fixed-size byte keys. Lookups
 * take a read lock; a miss is "claimed" so that threads missing on one key
 * build it once while the others wait for the result. Entries carry a count
 * of holders and a use stamp: the least recently used entry that nothing
 * holds is the one evicted (jg__cache_trim, in cache_bound.c, keeps a
 * context within its jg_options.max_kernels). */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "runtime/runtime.h"

enum { ENTRY_BUILDING, ENTRY_READY };

struct jg__table_entry {
    jg__table_entry *next;
    uint64_t hash;
    int state;
    /* Holders (atomic). Taken only under the table's lock, so an entry
     * found with none under the write lock cannot gain one: eviction is
     * safe against the read-locked lookups. Dropped without the lock. 64
     * bits: a program that plans every call and never releases pins once
     * per call. */
    uint64_t holds;
    uint64_t stamp; /* the table's clock at the last find, claim or publish (atomic) */
    void *value;
    unsigned char key[];
};

int jg__table_init(jg__table *t, size_t key_size, uint64_t *clock)
{
    memset(t, 0, sizeof *t);
    t->key_size = key_size;
    t->clock = clock ? clock : &t->own_clock;
    t->nbuckets = 64;
    t->buckets = calloc(t->nbuckets, sizeof *t->buckets);
    if (!t->buckets)
        return -1;
    pthread_rwlock_init(&t->lock, NULL);
    pthread_mutex_init(&t->wait_lock, NULL);
    pthread_cond_init(&t->done, NULL);
    return 0;
}

void jg__table_destroy(jg__table *t, void (*free_value)(void *))
{
    if (!t->buckets)
        return;
    for (size_t i = 0; i < t->nbuckets; ++i) {
        jg__table_entry *e = t->buckets[i];
        while (e) {
            jg__table_entry *next = e->next;
            if (e->state == ENTRY_READY && free_value)
                free_value(e->value);
            free(e);
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = NULL;
    pthread_rwlock_destroy(&t->lock);
    pthread_mutex_destroy(&t->wait_lock);
    pthread_cond_destroy(&t->done);
}

static jg__table_entry *lookup(const jg__table *t, const void *key, uint64_t h)
{
    for (jg__table_entry *e = t->buckets[h & (t->nbuckets - 1)]; e; e = e->next)
        if (e->hash == h && !memcmp(e->key, key, t->key_size))
            return e;
    return NULL;
}

/* Makes e the most recently used. An entry used again before any other
 * already holds the newest stamp: the common repeated hit writes nothing
 * shared. Stamps are unique, so the order is exact. */
static void touch(jg__table *t, jg__table_entry *e)
{
    if (__atomic_load_n(&e->stamp, __ATOMIC_RELAXED) != __atomic_load_n(t->clock, __ATOMIC_RELAXED))
        __atomic_store_n(&e->stamp, __atomic_add_fetch(t->clock, 1, __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
}

/* A ready entry's value, with a hold for the caller. */
static void *take(jg__table *t, jg__table_entry *e, jg__table_entry **entry)
{
    __atomic_add_fetch(&e->holds, 1, __ATOMIC_RELAXED);
    touch(t, e);
    *entry = e;
    return e->value;
}

void *jg__table_find(jg__table *t, const void *key, jg__table_entry **entry)
{
    uint64_t h = XXH3_64bits(key, t->key_size);
    void *v = NULL;
    *entry = NULL;
    pthread_rwlock_rdlock(&t->lock);
    jg__table_entry *e = lookup(t, key, h);
    if (e && e->state == ENTRY_READY)
        v = take(t, e, entry);
    pthread_rwlock_unlock(&t->lock);
    return v;
}

/* Doubles the bucket array at load factor 1; keeps the old one on failure. */
static void grow(jg__table *t)
{
    size_t n = t->nbuckets * 2;
    jg__table_entry **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < t->nbuckets; ++i) {
        jg__table_entry *e = t->buckets[i];
        while (e) {
            jg__table_entry *next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

void *jg__table_claim(jg__table *t, const void *key, jg__table_entry **entry, jg_status *status)
{
    uint64_t h = XXH3_64bits(key, t->key_size);
    *status = JG_OK;
    *entry = NULL;
    for (;;) {
        pthread_rwlock_wrlock(&t->lock);
        jg__table_entry *e = lookup(t, key, h);
        if (!e) {
            e = calloc(1, sizeof *e + t->key_size);
            if (!e) {
                pthread_rwlock_unlock(&t->lock);
                *status = JG_ERR_NO_MEMORY;
                return NULL;
            }
            e->hash = h;
            e->state = ENTRY_BUILDING;
            memcpy(e->key, key, t->key_size);
            e->next = t->buckets[h & (t->nbuckets - 1)];
            t->buckets[h & (t->nbuckets - 1)] = e;
            __atomic_store_n(&t->count, t->count + 1, __ATOMIC_RELAXED);
            if (t->count > t->nbuckets)
                grow(t);
            pthread_rwlock_unlock(&t->lock);
            *entry = e;
            return NULL; /* the caller builds it */
        }
        if (e->state == ENTRY_READY) {
            void *v = take(t, e, entry);
            pthread_rwlock_unlock(&t->lock);
            return v;
        }
        /* Someone builds it: wait for publish or abandon, then look again.
         * wait_lock is taken before the table lock is released, and publish
         * and abandon broadcast under wait_lock, so no wake-up is lost. */
        pthread_mutex_lock(&t->wait_lock);
        pthread_rwlock_unlock(&t->lock);
        pthread_cond_wait(&t->done, &t->wait_lock);
        pthread_mutex_unlock(&t->wait_lock);
    }
}

/* Releases the write lock and wakes the threads waiting in claim. */
static void unlock_and_wake(jg__table *t)
{
    pthread_mutex_lock(&t->wait_lock);
    pthread_rwlock_unlock(&t->lock);
    pthread_cond_broadcast(&t->done);
    pthread_mutex_unlock(&t->wait_lock);
}

void jg__table_publish(jg__table *t, jg__table_entry *e, void *value)
{
    pthread_rwlock_wrlock(&t->lock);
    e->value = value;
    e->state = ENTRY_READY;
    __atomic_store_n(&e->holds, 1, __ATOMIC_RELAXED); /* the builder's */
    __atomic_store_n(&e->stamp, __atomic_add_fetch(t->clock, 1, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    unlock_and_wake(t);
}

/* The link that points at e in its bucket (e must be in the table). */
static jg__table_entry **link_of(jg__table *t, const jg__table_entry *e)
{
    jg__table_entry **link = &t->buckets[e->hash & (t->nbuckets - 1)];
    while (*link != e)
        link = &(*link)->next;
    return link;
}

void jg__table_abandon(jg__table *t, jg__table_entry *e)
{
    pthread_rwlock_wrlock(&t->lock);
    jg__table_entry **link = link_of(t, e);
    *link = e->next;
    __atomic_store_n(&t->count, t->count - 1, __ATOMIC_RELAXED);
    free(e);
    unlock_and_wake(t);
}

bool jg__table_release(jg__table_entry *e)
{
    uint64_t n = __atomic_load_n(&e->holds, __ATOMIC_RELAXED);
    do {
        if (!n)
            return false;
    } while (!__atomic_compare_exchange_n(&e->holds, &n, n - 1, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
    return true;
}

size_t jg__table_count(const jg__table *t) { return __atomic_load_n(&t->count, __ATOMIC_RELAXED); }

/* The ready entry with no holder and the oldest stamp, with the link that
 * points at it; NULL when every entry is held or being built. Under a lock. */
static jg__table_entry *oldest_free(jg__table *t, jg__table_entry ***link_out)
{
    jg__table_entry *best = NULL, **best_link = NULL;
    for (size_t i = 0; i < t->nbuckets; ++i)
        for (jg__table_entry **link = &t->buckets[i]; *link; link = &(*link)->next) {
            jg__table_entry *e = *link;
            if (e->state != ENTRY_READY || __atomic_load_n(&e->holds, __ATOMIC_ACQUIRE))
                continue;
            if (!best || __atomic_load_n(&e->stamp, __ATOMIC_RELAXED) <
                             __atomic_load_n(&best->stamp, __ATOMIC_RELAXED)) {
                best = e;
                best_link = link;
            }
        }
    if (link_out)
        *link_out = best_link;
    return best;
}

uint64_t jg__table_lru_stamp(jg__table *t)
{
    pthread_rwlock_rdlock(&t->lock);
    const jg__table_entry *e = oldest_free(t, NULL);
    uint64_t stamp = e ? __atomic_load_n(&e->stamp, __ATOMIC_RELAXED) : UINT64_MAX;
    pthread_rwlock_unlock(&t->lock);
    return stamp;
}

void *jg__table_evict(jg__table *t)
{
    pthread_rwlock_wrlock(&t->lock);
    jg__table_entry **link;
    jg__table_entry *e = oldest_free(t, &link);
    void *v = NULL;
    if (e) {
        *link = e->next;
        __atomic_store_n(&t->count, t->count - 1, __ATOMIC_RELAXED);
        v = e->value;
        free(e);
    }
    pthread_rwlock_unlock(&t->lock);
    return v;
}

size_t jg__table_held(jg__table *t)
{
    size_t n = 0;
    pthread_rwlock_rdlock(&t->lock);
    for (size_t i = 0; i < t->nbuckets; ++i)
        for (const jg__table_entry *e = t->buckets[i]; e; e = e->next)
            n += e->state == ENTRY_READY && __atomic_load_n(&e->holds, __ATOMIC_RELAXED);
    pthread_rwlock_unlock(&t->lock);
    return n;
}
