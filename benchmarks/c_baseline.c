/*
 * c_baseline.c: fastcpu's measurement loop as a plain C program, the
 * yardstick for the cost of going through Python (benchmarks/performance.py
 * compiles it with the system cc and compares bench(m, 1000) against it).
 *
 * One measurement is what fastcpu.bench(method, runs) does in C: allocate
 * the three arrays, 64 warm-up runs, `runs` interleaved runs of the method
 * and the empty sequence in alternating order with the CPU read before and
 * after each method run, then min and median of both arrays (median by
 * quickselect on a copy, as a plain program would: the Hoare selection
 * fastcpu itself used before its copy-free radix select). Same fences as
 * fastcpu's 'lfence' mode, same LSL sequence.
 *
 *   cc -O2 -o c_baseline c_baseline.c && ./c_baseline gdt 1000 300
 *
 * prints: method runs repeats median_ns min_ns (wall time per measurement).
 *
 * Built with -shared -fPIC it is also a library: performance.py calls
 * c_baseline_wall_ns() in its own process, alternating with bench(), so
 * that both are timed within a millisecond of each other on a core clock
 * that hops between levels every 20-200 ms (a separate program's rounds
 * land on other levels than the Python rounds between them).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARM_UP_RUNS 64

static inline __attribute__((always_inline)) uint64_t start_read(void)
{
    uint64_t t;
    __asm__ volatile("lfence\n\trdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence"
                     : "=a"(t)::"rdx", "memory");
    return t;
}

static inline __attribute__((always_inline)) uint64_t end_read(void)
{
    uint32_t lo, hi, aux;
    __asm__ volatile("lfence\n\trdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

__attribute__((noinline)) static uint64_t time_empty(void)
{
    uint64_t t0 = start_read();
    __asm__ volatile("" ::"r"(0));
    return end_read() - t0;
}

__attribute__((noinline)) static uint64_t time_gdt(void)
{
    uint32_t limit;
    uint64_t t0 = start_read();
    __asm__ volatile("lsl %1, %0" : "=r"(limit) : "r"(0x7bu) : "cc");
    __asm__ volatile("" ::"r"(limit));
    return end_read() - t0;
}

__attribute__((noinline)) static uint64_t time_rdpid(void)
{
    uint64_t aux;
    uint64_t t0 = start_read();
    __asm__ volatile("rdpid %0" : "=r"(aux));
    __asm__ volatile("" ::"r"(aux));
    return end_read() - t0;
}

static uint64_t min_u64(const uint64_t *v, size_t n)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static inline void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* Hoare quickselect with a median-of-three pivot (ties split evenly, so the
 * quantized, tie-heavy timings stay O(n)): afterwards v[k] is the k-th
 * smallest, smaller values before it. */
static uint64_t kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swap_u64(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swap_u64(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swap_u64(&v[hi], &v[mid]);
        uint64_t pivot = v[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swap_u64(&v[i], &v[j]);
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

static double median_u64(const uint64_t *v, size_t n, uint64_t *scratch)
{
    memcpy(scratch, v, n * sizeof *v);
    size_t k = n / 2;
    uint64_t upper = kth(scratch, n, k);
    if (n & 1)
        return (double)upper;
    uint64_t lower = scratch[0]; /* the lower part's largest */
    for (size_t i = 1; i < k; i++)
        lower = scratch[i] > lower ? scratch[i] : lower;
    return ((double)lower + (double)upper) / 2;
}

static double measure(uint64_t (*method)(void), size_t runs, double *best, double *median)
{
    uint64_t *raw = malloc(runs * sizeof *raw);
    uint64_t *empty = malloc(runs * sizeof *empty);
    uint64_t *scratch = malloc(runs * sizeof *scratch);
    _Bool *migrated = malloc(runs);
    if (!raw || !empty || !scratch || !migrated) {
        perror("malloc");
        exit(1);
    }
    for (int i = 0; i < WARM_UP_RUNS; i++) {
        __asm__ volatile("" ::"r"(method()));
        __asm__ volatile("" ::"r"(time_empty()));
    }
    for (size_t i = 0; i < runs; i++) {
        int before, after;
        if (i & 1) {
            empty[i] = time_empty();
            before = sched_getcpu();
            raw[i] = method();
            after = sched_getcpu();
        } else {
            before = sched_getcpu();
            raw[i] = method();
            after = sched_getcpu();
            empty[i] = time_empty();
        }
        migrated[i] = before != after;
    }
    *best = (double)min_u64(raw, runs) - (double)min_u64(empty, runs);
    *median = median_u64(raw, runs, scratch) - median_u64(empty, runs, scratch);
    double sink = (double)migrated[runs - 1];
    free(raw);
    free(empty);
    free(scratch);
    free(migrated);
    return sink;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t (*method_named(const char *name))(void)
{
    return strcmp(name, "empty") == 0 ? time_empty : strcmp(name, "rdpid") == 0 ? time_rdpid : time_gdt;
}

/* `repeats` measurements back to back, as main's loop makes them; the wall
 * ns of the last, whose caches the ones before it warmed. */
double c_baseline_wall_ns(const char *name, size_t runs, int repeats)
{
    uint64_t (*method)(void) = method_named(name);
    double best = 0, median = 0, wall = 0;
    for (int r = 0; r < repeats; r++) {
        uint64_t t0 = now_ns();
        measure(method, runs, &best, &median);
        wall = (double)(now_ns() - t0);
    }
    return wall;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "gdt";
    size_t runs = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000;
    int repeats = argc > 3 ? atoi(argv[3]) : 300;
    uint64_t (*method)(void) = method_named(name);
    double *wall = malloc((size_t)repeats * sizeof *wall);
    double best = 0, median = 0, sink = 0;
    for (int r = 0; r < repeats; r++) {
        uint64_t t0 = now_ns();
        sink += measure(method, runs, &best, &median);
        wall[r] = (double)(now_ns() - t0);
    }
    qsort(wall, (size_t)repeats, sizeof *wall, cmp_double);
    printf("%s %zu %d %.0f %.0f  (best %.1f median %.1f ticks; %g)\n", name, runs, repeats,
           wall[repeats / 2], wall[0], best, median, sink);
    free(wall);
    return 0;
}
