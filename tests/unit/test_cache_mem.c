/* The memory cache (jg__table): find, claim, publish, abandon, growth,
 * holds and least-recently-used eviction (also while other threads read),
 * and single-flight: threads that miss one key at once build it exactly
 * once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_internal.h"
#include "jg_test.h"

typedef struct key16 {
    uint64_t a, b;
} key16;

static key16 make_key(uint64_t i)
{
    key16 k = {i * 0x9e3779b97f4a7c15ull, ~i};
    return k;
}

/* Distinct non-NULL values without allocating. */
static void *value_of(uint64_t i) { return (void *)(uintptr_t)(0x1000 + 16 * i); }

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int freed;
static void count_free(void *v)
{
    (void)v;
    ++freed;
}

static void test_basic(void)
{
    jg__table t;
    CHECK(jg__table_init(&t, sizeof(key16), NULL) == 0, "init");
    key16 k1 = make_key(1), k2 = make_key(2);
    jg_status st = JG_ERR_INVALID;
    jg__table_entry *e = NULL, *e1 = NULL, *e2 = NULL;
    CHECK(jg__table_find(&t, &k1, &e) == NULL && !e, "find on an empty table");

    CHECK(jg__table_claim(&t, &k1, &e1, &st) == NULL && st == JG_OK && e1,
          "claim of a new key: st %d", st);
    CHECK(jg__table_find(&t, &k1, &e) == NULL, "find sees a key still being built");
    jg__table_publish(&t, e1, value_of(1));
    CHECK(jg__table_find(&t, &k1, &e) == value_of(1) && e == e1, "find after publish");
    CHECK(jg__table_claim(&t, &k1, &e, &st) == value_of(1) && st == JG_OK && e == e1,
          "claim of a built key");
    CHECK(jg__table_find(&t, &k2, &e) == NULL, "find of another key");
    CHECK(jg__table_held(&t) == 1, "held %zu", jg__table_held(&t));
    /* The builder's hold, find's and claim's: three, then none. */
    int released = 0;
    while (jg__table_release(e1))
        ++released;
    CHECK(released == 3, "%d holds released, expected 3", released);
    CHECK(jg__table_held(&t) == 0, "held after the releases: %zu", jg__table_held(&t));

    /* Abandon removes the claim: the next claimer builds again. */
    CHECK(jg__table_claim(&t, &k2, &e2, &st) == NULL && e2, "claim k2");
    jg__table_abandon(&t, e2);
    CHECK(jg__table_find(&t, &k2, &e) == NULL, "find after abandon");
    CHECK(jg__table_count(&t) == 1, "count after abandon: %zu", jg__table_count(&t));
    CHECK(jg__table_claim(&t, &k2, &e2, &st) == NULL, "claim after abandon must build again");
    jg__table_publish(&t, e2, value_of(2));
    CHECK(jg__table_find(&t, &k2, &e) == value_of(2), "find k2");
    CHECK(jg__table_find(&t, &k1, &e) == value_of(1), "k1 survived k2's abandon");

    freed = 0;
    jg__table_destroy(&t, count_free);
    CHECK(freed == 2, "destroy freed %d values, held ones included, expected 2", freed);
}

/* Publishes value_of(i) under make_key(i) and drops the builder's hold. */
static void put(jg__table *t, uint64_t i)
{
    key16 k = make_key(i);
    jg__table_entry *e;
    jg_status st;
    if (jg__table_claim(t, &k, &e, &st) == NULL && e) {
        jg__table_publish(t, e, value_of(i));
        jg__table_release(e);
    }
}

/* A find and its release: the entry becomes the most recently used. */
static void use(jg__table *t, uint64_t i)
{
    key16 k = make_key(i);
    jg__table_entry *e;
    if (jg__table_find(t, &k, &e))
        jg__table_release(e);
}

static void test_growth(void)
{
    enum { N = 10000 };
    jg__table t;
    jg__table_init(&t, sizeof(key16), NULL);
    for (uint64_t i = 0; i < N; ++i)
        put(&t, i);
    CHECK(t.count == N, "count %zu", t.count);
    CHECK(t.nbuckets > 64 && t.nbuckets >= N, "nbuckets %zu did not grow", t.nbuckets);
    int lost = 0;
    jg__table_entry *e;
    for (uint64_t i = 0; i < N; ++i) {
        key16 k = make_key(i);
        lost += jg__table_find(&t, &k, &e) != value_of(i);
    }
    CHECK(lost == 0, "%d of %d keys lost or wrong after growth", lost, N);
    key16 absent = make_key(N + 5);
    CHECK(jg__table_find(&t, &absent, &e) == NULL, "absent key found");
    freed = 0;
    jg__table_destroy(&t, count_free);
    CHECK(freed == N, "destroy freed %d of %d", freed, N);
}

/* ---- least recently used ------------------------------------------------ */

/* Evictions take the least recently used entry nothing holds; a use (find,
 * claim) makes an entry the most recent; held and unbuilt entries stay. */
static void test_lru(void)
{
    jg__table t;
    jg__table_init(&t, sizeof(key16), NULL);
    for (uint64_t i = 0; i < 6; ++i)
        put(&t, i);
    use(&t, 0);
    use(&t, 2);
    use(&t, 0); /* order, oldest first: 1 3 4 5 2 0 */
    key16 k4 = make_key(4);
    jg__table_entry *held, *building;
    jg_status st;
    CHECK(jg__table_find(&t, &k4, &held) == value_of(4), "hold 4");
    key16 k9 = make_key(9);
    CHECK(jg__table_claim(&t, &k9, &building, &st) == NULL && building, "claim 9 (being built)");
    const uint64_t expect[] = {1, 3, 5, 2, 0};
    for (size_t i = 0; i < JG_ARRAY_LEN(expect); ++i) {
        void *v = jg__table_evict(&t);
        CHECK(v == value_of(expect[i]), "eviction %zu: value %p, expected %p", i, v,
              value_of(expect[i]));
    }
    CHECK(jg__table_lru_stamp(&t) == UINT64_MAX, "stamp with every entry held or unbuilt");
    CHECK(jg__table_evict(&t) == NULL, "evicted a held or unbuilt entry");
    CHECK(jg__table_count(&t) == 2, "count %zu: the held entry and the one being built",
          jg__table_count(&t));
    CHECK(jg__table_release(held) && !jg__table_release(held), "one hold on 4, then none");
    CHECK(jg__table_evict(&t) == value_of(4), "4 once released");
    jg__table_abandon(&t, building);
    CHECK(jg__table_count(&t) == 0, "count %zu after all", jg__table_count(&t));
    jg__table_destroy(&t, NULL);
}

/* Two tables on one clock: their stamps order uses across both. */
static void test_shared_clock(void)
{
    uint64_t clock = 0;
    jg__table a, b;
    jg__table_init(&a, sizeof(key16), &clock);
    jg__table_init(&b, sizeof(key16), &clock);
    put(&a, 1);
    put(&b, 2);
    put(&a, 3);
    use(&a, 1); /* across both, oldest first: b2 a3 a1 */
    CHECK(jg__table_lru_stamp(&b) < jg__table_lru_stamp(&a), "b's 2 is older than a's 3");
    CHECK(jg__table_evict(&b) == value_of(2), "b's oldest");
    CHECK(jg__table_evict(&a) == value_of(3), "a's oldest: 3, not 1 (used after it)");
    CHECK(clock >= 4, "the shared clock advanced %llu times", (unsigned long long)clock);
    jg__table_destroy(&a, NULL);
    jg__table_destroy(&b, NULL);
}

/* Readers find, read and release values while a writer inserts and evicts
 * (freeing what it evicts): no reader ever sees a freed value (ASan's and
 * the magic's check), and the table stays within its bound plus the held. */
enum { EV_READERS = 4, EV_KEYS = 4000, EV_BOUND = 64 };

typedef struct ev_value {
    uint64_t magic, index;
} ev_value;

#define EV_MAGIC 0x6a67636163686521ull

typedef struct ev_shared {
    jg__table t;
    atomic_uint_fast64_t inserted; /* keys 0..inserted-1 were published */
    atomic_int done, bad;
} ev_shared;

static void *ev_reader(void *p)
{
    ev_shared *s = p;
    uint64_t x = (uint64_t)(uintptr_t)&x; /* a stack address: each reader its own sequence */
    while (!atomic_load(&s->done)) {
        uint64_t n = atomic_load(&s->inserted);
        if (!n)
            continue;
        uint64_t i = n - 1 - jg_splitmix64(&x) % (n < 2 * EV_BOUND ? n : 2 * EV_BOUND);
        key16 k = make_key(i);
        jg__table_entry *e;
        ev_value *v = jg__table_find(&s->t, &k, &e);
        if (!v)
            continue;
        if (v->magic != EV_MAGIC || v->index != i)
            atomic_fetch_add(&s->bad, 1);
        jg__table_release(e);
    }
    return NULL;
}

static void test_evict_concurrent(void)
{
    ev_shared s;
    memset(&s, 0, sizeof s);
    jg__table_init(&s.t, sizeof(key16), NULL);
    pthread_t th[EV_READERS];
    for (int i = 0; i < EV_READERS; ++i)
        pthread_create(&th[i], NULL, ev_reader, &s);
    size_t evicted = 0, most = 0;
    for (uint64_t i = 0; i < EV_KEYS; ++i) {
        key16 k = make_key(i);
        jg__table_entry *e;
        jg_status st;
        ev_value *v = malloc(sizeof *v);
        v->magic = EV_MAGIC;
        v->index = i;
        CHECK(jg__table_claim(&s.t, &k, &e, &st) == NULL && e, "claim %llu", (unsigned long long)i);
        jg__table_publish(&s.t, e, v);
        jg__table_release(e);
        atomic_store(&s.inserted, i + 1);
        while (jg__table_count(&s.t) > EV_BOUND) {
            ev_value *old = jg__table_evict(&s.t);
            if (!old)
                break;
            old->magic = 0; /* a reader still reading it would see this (or ASan the free) */
            free(old);
            ++evicted;
        }
        most = jg__table_count(&s.t) > most ? jg__table_count(&s.t) : most;
    }
    atomic_store(&s.done, 1);
    for (int i = 0; i < EV_READERS; ++i)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&s.bad) == 0, "%d reads saw an evicted value", atomic_load(&s.bad));
    CHECK(most <= EV_BOUND + EV_READERS, "the table held %zu entries, bound %d + %d readers", most,
          EV_BOUND, EV_READERS);
    CHECK(evicted >= EV_KEYS - EV_BOUND - EV_READERS, "only %zu evictions", evicted);
    jg__table_destroy(&s.t, free);
}

/* ---- single flight -------------------------------------------------------- */

enum { THREADS = 16 };

typedef struct flight {
    jg__table table;
    pthread_barrier_t start;
    atomic_int builders;
    int abandon_first; /* the first builder fails; the next one must build */
    void *results[THREADS];
} flight;

typedef struct flight_arg {
    flight *f;
    int index;
} flight_arg;

static int built_value; /* its address is the published value */

static void *flight_thread(void *p)
{
    flight_arg *arg = p;
    flight *f = arg->f;
    key16 k = make_key(42);
    jg_status st;
    jg__table_entry *e;
    pthread_barrier_wait(&f->start);
    void *v = jg__table_claim(&f->table, &k, &e, &st);
    if (!v && st == JG_OK) {
        int n = atomic_fetch_add(&f->builders, 1) + 1;
        sleep_ms(50); /* long enough that every other thread is waiting */
        if (f->abandon_first && n == 1) {
            jg__table_abandon(&f->table, e);
            v = NULL;
        } else {
            jg__table_publish(&f->table, e, &built_value);
            v = &built_value;
        }
    }
    f->results[arg->index] = v;
    return NULL;
}

/* Runs THREADS claimers of one key; returns how many built it. */
static int run_flight(int abandon_first, int *got_value)
{
    flight f;
    memset(&f, 0, sizeof f);
    jg__table_init(&f.table, sizeof(key16), NULL);
    pthread_barrier_init(&f.start, NULL, THREADS);
    atomic_init(&f.builders, 0);
    f.abandon_first = abandon_first;
    pthread_t th[THREADS];
    flight_arg args[THREADS];
    for (int i = 0; i < THREADS; ++i) {
        args[i].f = &f;
        args[i].index = i;
        pthread_create(&th[i], NULL, flight_thread, &args[i]);
    }
    for (int i = 0; i < THREADS; ++i)
        pthread_join(th[i], NULL);
    *got_value = 0;
    for (int i = 0; i < THREADS; ++i)
        *got_value += f.results[i] == &built_value;
    pthread_barrier_destroy(&f.start);
    jg__table_destroy(&f.table, NULL);
    return atomic_load(&f.builders);
}

static void test_single_flight(void)
{
    int got;
    int builders = run_flight(0, &got);
    CHECK(builders == 1, "%d builders for one key, expected 1", builders);
    CHECK(got == THREADS, "%d of %d threads got the published value", got, THREADS);

    /* After an abandon the waiters wake, one of them builds, the rest get its value. */
    builders = run_flight(1, &got);
    CHECK(builders == 2, "%d builders after one abandon, expected 2", builders);
    CHECK(got == THREADS - 1, "%d of %d threads got the value after an abandon", got,
          THREADS - 1);
}

int main(void)
{
    test_basic();
    test_growth();
    test_lru();
    test_shared_clock();
    test_evict_concurrent();
    test_single_flight();
    return jg_test_result("test_cache_mem");
}
