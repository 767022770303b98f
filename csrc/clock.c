/*
 * clock.c: the raw readings behind fastcpu.clock(). The TSC runs at a
 * constant rate, not at the core clock, so a tick is not a cycle: these
 * readings let Python work out TSC Hz, the counter's step and core cycles per
 * tick (without a PMU, from a dependent chain of 1-cycle adds).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fastcpu.h"
#include "timing.h"

uint64_t fc_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return FC_TSC(lo, hi);
}

/*
 * The counter's step. The textbook answer, the smallest non-zero difference
 * of consecutive reads, is fooled by a guest TSC that advances in 26-tick
 * steps whose phase wobbles by one tick (deltas of 26, and now and then 1 +
 * 25). So read the counter at pseudo-random spacings and look at the values
 * themselves: the step is the largest g for which nearly all of them fall in
 * two neighbouring residues mod g. A counter that takes every value passes
 * for no g >= 3, and then the textbook answer stands.
 */
#define FC_STEP_SAMPLES 4096
#define FC_STEP_MAX 1024

static uint64_t min_nonzero_delta(const uint64_t *v, size_t n)
{
    uint64_t step = UINT64_MAX;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[i - 1] && v[i] - v[i - 1] < step)
            step = v[i] - v[i - 1];
    return step == UINT64_MAX ? 0 : step;
}

static bool values_on_grid(const uint64_t *v, size_t n, uint32_t g)
{
    static _Thread_local uint32_t count[FC_STEP_MAX];
    memset(count, 0, g * sizeof count[0]);
    for (size_t i = 0; i < n; i++)
        count[v[i] % g]++;
    uint32_t best = 0;
    for (uint32_t r = 0; r < g; r++) {
        uint32_t pair = count[r] + count[(r + 1) % g];
        if (pair > best)
            best = pair;
    }
    return best >= n - n / 20; /* 95% */
}

uint64_t fc_tsc_step(uint32_t reads)
{
    size_t n = reads < FC_STEP_SAMPLES ? reads : FC_STEP_SAMPLES;
    if (n < 2)
        return 0;
    /* 32 KB: on the heap, not on a caller's (perhaps small) thread stack */
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    uint32_t lcg = 12345u, acc = 0;
    for (size_t i = 0; i < n; i++) {
        lcg = lcg * 1103515245u + 12345u;
        for (uint32_t k = (lcg >> 16) & 255u; k > 0; k--)
            __asm__ volatile("add $1, %0" : "+r"(acc)); /* random spacing */
        v[i] = fc_rdtsc();
    }
    uint64_t step = 0;
    for (uint32_t g = FC_STEP_MAX - 1; g >= 3 && !step; g--)
        if (values_on_grid(v, n, g))
            step = g;
    if (!step) {
        /* back-to-back reads for the textbook answer */
        for (size_t i = 0; i < n; i++)
            v[i] = fc_rdtsc();
        step = min_nonzero_delta(v, n);
    }
    free(v);
    return step;
}

static uint64_t monotonic_raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fc_tsc_ns_pair(uint64_t *ns, uint64_t *tsc)
{
    /* Bracket the TSC read by two clock reads and keep the tightest of a few
     * tries, so an interrupt between the reads cannot skew the pair. */
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = monotonic_raw_ns();
        uint64_t t = fc_start_lfence(FC_NO_COUNTER);
        uint64_t b = monotonic_raw_ns();
        if (b - a < best_gap) {
            best_gap = b - a;
            *ns = a + (b - a) / 2;
            *tsc = t;
        }
    }
}

/* 100 dependent adds per block: each waits for the one before, so a block
 * takes 100 core cycles on every x86 core of the last two decades. */
uint64_t fc_add_chain_ticks(uint32_t blocks)
{
    uint64_t acc = 0;
    uint64_t t0 = fc_start_lfence(FC_NO_COUNTER);
    for (uint32_t i = 0; i < blocks; i++)
        __asm__ volatile(".rept 100\n\tadd $1, %0\n\t.endr" : "+r"(acc));
    uint64_t t1 = fc_end_rdtscp_lfence(FC_NO_COUNTER);
    fc_sink(acc);
    return t1 - t0;
}
