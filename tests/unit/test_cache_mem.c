/* The memory cache (jg__table): find, claim, publish, abandon, growth, and
 * single-flight: threads that miss one key at once build it exactly once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
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
    CHECK(jg__table_init(&t, sizeof(key16)) == 0, "init");
    key16 k1 = make_key(1), k2 = make_key(2);
    jg_status st = JG_ERR_INVALID;
    CHECK(jg__table_find(&t, &k1) == NULL, "find on an empty table");

    CHECK(jg__table_claim(&t, &k1, &st) == NULL && st == JG_OK, "claim of a new key: st %d", st);
    CHECK(jg__table_find(&t, &k1) == NULL, "find sees a key still being built");
    jg__table_publish(&t, &k1, value_of(1));
    CHECK(jg__table_find(&t, &k1) == value_of(1), "find after publish");
    CHECK(jg__table_claim(&t, &k1, &st) == value_of(1) && st == JG_OK, "claim of a built key");
    CHECK(jg__table_find(&t, &k2) == NULL, "find of another key");

    /* Abandon removes the claim: the next claimer builds again. */
    CHECK(jg__table_claim(&t, &k2, &st) == NULL, "claim k2");
    jg__table_abandon(&t, &k2);
    CHECK(jg__table_find(&t, &k2) == NULL, "find after abandon");
    CHECK(t.count == 1, "count after abandon: %zu", t.count);
    CHECK(jg__table_claim(&t, &k2, &st) == NULL, "claim after abandon must build again");
    jg__table_publish(&t, &k2, value_of(2));
    CHECK(jg__table_find(&t, &k2) == value_of(2), "find k2");
    CHECK(jg__table_find(&t, &k1) == value_of(1), "k1 survived k2's abandon");

    freed = 0;
    jg__table_destroy(&t, count_free);
    CHECK(freed == 2, "destroy freed %d values, expected 2", freed);
}

static void test_growth(void)
{
    enum { N = 10000 };
    jg__table t;
    jg__table_init(&t, sizeof(key16));
    jg_status st;
    for (uint64_t i = 0; i < N; ++i) {
        key16 k = make_key(i);
        if (jg__table_claim(&t, &k, &st) == NULL)
            jg__table_publish(&t, &k, value_of(i));
    }
    CHECK(t.count == N, "count %zu", t.count);
    CHECK(t.nbuckets > 64 && t.nbuckets >= N, "nbuckets %zu did not grow", t.nbuckets);
    int lost = 0;
    for (uint64_t i = 0; i < N; ++i) {
        key16 k = make_key(i);
        lost += jg__table_find(&t, &k) != value_of(i);
    }
    CHECK(lost == 0, "%d of %d keys lost or wrong after growth", lost, N);
    key16 absent = make_key(N + 5);
    CHECK(jg__table_find(&t, &absent) == NULL, "absent key found");
    freed = 0;
    jg__table_destroy(&t, count_free);
    CHECK(freed == N, "destroy freed %d of %d", freed, N);
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
    pthread_barrier_wait(&f->start);
    void *v = jg__table_claim(&f->table, &k, &st);
    if (!v && st == JG_OK) {
        int n = atomic_fetch_add(&f->builders, 1) + 1;
        sleep_ms(50); /* long enough that every other thread is waiting */
        if (f->abandon_first && n == 1) {
            jg__table_abandon(&f->table, &k);
            v = NULL;
        } else {
            jg__table_publish(&f->table, &k, &built_value);
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
    jg__table_init(&f.table, sizeof(key16));
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
    test_single_flight();
    return jg_test_result("test_cache_mem");
}
