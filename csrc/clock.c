/*
 * clock.c: the raw readings behind fastcpu.clock(). The TSC runs at a
 * constant rate, not at the core clock, so a tick is not a cycle: these
 * readings let Python work out TSC Hz, the counter's step and core cycles per
 * tick (without a PMU, from a dependent chain of 1-core-cycle adds).
 */
#define _GNU_SOURCE
#include <math.h>
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
 * The counter's step. A guest's TSC may advance only when the host's 10 ns
 * timer does: 2596.13 MHz gives a step of about 26 ticks, 2445.43 MHz one of
 * 24.5, so the step need not be a whole number of ticks and the deltas of
 * consecutive reads come out as 24 or 25. The textbook answer, the smallest
 * non-zero delta, reads 1 or 24 there, and any integer grid drifts off the
 * values within a few dozen steps. So read the counter at pseudo-random
 * spacings and fit the step to the deltas of consecutive reads: each is
 * k whole steps (k small, so k is never in doubt once the step is roughly
 * known) rounded to the tick. Deltas only, never the values' offsets from
 * the first read: a preemption between two reads (milliseconds) would put
 * thousands of steps between the values and every error in the step times
 * thousands. A counter whose deltas are not multiples of one step (bare
 * metal, every value taken) gets the textbook answer.
 */
#define FC_STEP_SAMPLES 4096
#define FC_STEP_MIN 5.0    /* below it, +-1.5 ticks of rounding fit any delta */
#define FC_STEP_MAX 1024.0
#define FC_STEP_ROUNDING 1.5 /* ticks a delta may sit off k steps (rounding of both reads) */
#define FC_STEP_K_MAX 64   /* longer deltas (a preemption) say nothing of the step */

static uint64_t min_nonzero_delta(const uint64_t *v, size_t n)
{
    uint64_t step = UINT64_MAX;
    for (size_t i = 1; i < n; i++)
        if (v[i] > v[i - 1] && v[i] - v[i - 1] < step)
            step = v[i] - v[i - 1];
    return step == UINT64_MAX ? 0 : step;
}

/* The first guess: the mean of the deltas in the smallest cluster above the
 * rounding (deltas from the smallest one >= FC_STEP_MIN - 1 to 1.5 times it). */
static double step_guess(const uint64_t *v, size_t n)
{
    uint64_t lo = UINT64_MAX;
    for (size_t i = 1; i < n; i++) {
        uint64_t d = v[i] - v[i - 1];
        if (d >= FC_STEP_MIN - 1 && d < lo)
            lo = d;
    }
    if (lo == UINT64_MAX)
        return 0.0;
    double sum = 0.0;
    size_t count = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t d = v[i] - v[i - 1];
        if (d >= lo && 2 * d < 3 * lo) {
            sum += (double)d;
            count++;
        }
    }
    return sum / (double)count;
}

/* Least squares of delta = k * step over the deltas of 1 to k_max steps
 * (k the nearest whole number under the old step); the old step when none. */
static double refit_step(const uint64_t *v, size_t n, double step, double k_max)
{
    double skk = 0, skd = 0;
    for (size_t i = 1; i < n; i++) {
        double d = (double)(v[i] - v[i - 1]), k = nearbyint(d / step);
        if (k >= 1 && k <= k_max) {
            skk += k * k;
            skd += k * d;
        }
    }
    return skk > 0 ? skd / skk : step;
}

/* The share of deltas (of up to FC_STEP_K_MAX steps) that lie within
 * FC_STEP_ROUNDING ticks of a whole number of steps; 0 when too few. */
static double deltas_on_steps(const uint64_t *v, size_t n, double step)
{
    size_t seen = 0, hits = 0;
    for (size_t i = 1; i < n; i++) {
        double d = (double)(v[i] - v[i - 1]), k = nearbyint(d / step);
        if (k > FC_STEP_K_MAX)
            continue;
        seen++;
        hits += fabs(d - k * step) <= FC_STEP_ROUNDING;
    }
    return seen >= n / 2 ? (double)hits / (double)seen : 0.0;
}

double fc_tsc_step(uint32_t reads)
{
    size_t n = reads < FC_STEP_SAMPLES ? reads : FC_STEP_SAMPLES;
    if (n < 2)
        return 0.0;
    /* 32 KB: on the heap, not on a caller's (perhaps small) thread stack */
    uint64_t *v = malloc(n * sizeof *v);
    if (!v)
        return 0.0;
    uint32_t lcg = 12345u, acc = 0;
    for (size_t i = 0; i < n; i++) {
        lcg = lcg * 1103515245u + 12345u;
        for (uint32_t k = (lcg >> 16) & 255u; k > 0; k--)
            __asm__ volatile("add $1, %0" : "+r"(acc)); /* random spacing */
        v[i] = fc_rdtsc();
    }
    /* a few dozen deltas are needed to tell a step from chance */
    double step = n >= 64 ? step_guess(v, n) : 0.0;
    if (step >= FC_STEP_MIN && step < FC_STEP_MAX)
        /* k is certain while the step's error times k_max stays under half
         * a step: refit with ever longer deltas */
        for (double k_max = 4; k_max <= FC_STEP_K_MAX; k_max *= 4)
            step = refit_step(v, n, step, k_max);
    if (!(step >= FC_STEP_MIN && step < FC_STEP_MAX && deltas_on_steps(v, n, step) >= 0.95)) {
        /* back-to-back reads for the textbook answer */
        for (size_t i = 0; i < n; i++)
            v[i] = fc_rdtsc();
        step = (double)min_nonzero_delta(v, n);
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

void fc_add_chain_samples(uint32_t blocks, uint32_t count, uint64_t *ticks)
{
    /* the first chain after other work runs slow now and then: warm up */
    fc_sink(fc_add_chain_ticks(blocks < 10 ? blocks : 10));
    for (uint32_t i = 0; i < count; i++)
        ticks[i] = fc_add_chain_ticks(blocks);
}
