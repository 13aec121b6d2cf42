/* The in-memory cache: a chained hash table of fixed-size byte keys. Lookups
 * take a read lock; a miss is "claimed" so that threads missing on one key
 * build it once while the others wait for the result. */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "runtime/runtime.h"

enum { ENTRY_BUILDING, ENTRY_READY };

struct jg__table_entry {
    jg__table_entry *next;
    uint64_t hash;
    int state;
    void *value;
    unsigned char key[];
};

int jg__table_init(jg__table *t, size_t key_size)
{
    memset(t, 0, sizeof *t);
    t->key_size = key_size;
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

void *jg__table_find(jg__table *t, const void *key)
{
    uint64_t h = XXH3_64bits(key, t->key_size);
    pthread_rwlock_rdlock(&t->lock);
    jg__table_entry *e = lookup(t, key, h);
    void *v = e && e->state == ENTRY_READY ? e->value : NULL;
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

void *jg__table_claim(jg__table *t, const void *key, jg_status *status)
{
    uint64_t h = XXH3_64bits(key, t->key_size);
    *status = JG_OK;
    for (;;) {
        pthread_rwlock_wrlock(&t->lock);
        jg__table_entry *e = lookup(t, key, h);
        if (!e) {
            e = malloc(sizeof *e + t->key_size);
            if (!e) {
                pthread_rwlock_unlock(&t->lock);
                *status = JG_ERR_NO_MEMORY;
                return NULL;
            }
            e->hash = h;
            e->state = ENTRY_BUILDING;
            e->value = NULL;
            memcpy(e->key, key, t->key_size);
            e->next = t->buckets[h & (t->nbuckets - 1)];
            t->buckets[h & (t->nbuckets - 1)] = e;
            if (++t->count > t->nbuckets)
                grow(t);
            pthread_rwlock_unlock(&t->lock);
            return NULL; /* the caller builds it */
        }
        if (e->state == ENTRY_READY) {
            void *v = e->value;
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

static void finish(jg__table *t, const void *key, void *value, bool ok)
{
    uint64_t h = XXH3_64bits(key, t->key_size);
    pthread_rwlock_wrlock(&t->lock);
    jg__table_entry **link = &t->buckets[h & (t->nbuckets - 1)];
    while (*link && !((*link)->hash == h && !memcmp((*link)->key, key, t->key_size)))
        link = &(*link)->next;
    jg__table_entry *e = *link;
    if (e) {
        if (ok) {
            e->value = value;
            e->state = ENTRY_READY;
        } else {
            *link = e->next;
            --t->count;
            free(e);
        }
    }
    pthread_mutex_lock(&t->wait_lock);
    pthread_rwlock_unlock(&t->lock);
    pthread_cond_broadcast(&t->done);
    pthread_mutex_unlock(&t->wait_lock);
}

void jg__table_publish(jg__table *t, const void *key, void *value) { finish(t, key, value, true); }

void jg__table_abandon(jg__table *t, const void *key) { finish(t, key, NULL, false); }
