/*
 * clock.c: the raw readings behind fastcpu.clock(). The TSC runs at a
 * constant rate, not at the core clock, so a tick is not a cycle: these
 * readings let Python work out TSC Hz, the counter's granularity and core
 * cycles per tick (without a PMU, from dependent chains of register-register
 * adds and of imuls, each checking the other).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "timing.h"

uint64_t fc_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return FC_TSC(lo, hi);
}

/*
 * Raw counter readings for the granularity fit (fastcpu/_clock.py): `n`
 * unfenced reads, back to back or each after a pseudo-random stretch of 0 to
 * 255 dependent register-register adds. The fit needs reads separated by
 * varying amounts of work: on a counter that moves in 2-tick steps while
 * back-to-back reads land 20-24 ticks apart (an Intel Xeon family 6 model
 * 207 guest), the back-to-back spacing says nothing of the step. The fit
 * itself is plain arithmetic on these values and lives in Python, where
 * readings shaped like each host test it.
 */
void fc_tsc_reads(uint64_t *v, size_t n, bool spaced)
{
    uint32_t lcg = 12345u;
    uint64_t acc = 1;
    for (size_t i = 0; i < n; i++) {
        if (spaced) {
            lcg = lcg * 1103515245u + 12345u;
            for (uint32_t k = (lcg >> 16) & 255u; k > 0; k--)
                __asm__ volatile("add %0, %0" : "+r"(acc));
        }
        v[i] = fc_rdtsc();
    }
    fc_sink(acc);
}

static uint64_t monotonic_raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t fc_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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

/*
 * The rulers: FC_RULER_BLOCK dependent instructions per block
 * (FC_IMUL_RULER_BLOCK imuls), each waiting
 * for the one before, so a block takes that many times the instruction's
 * latency in core cycles. Register-register adds (1 core cycle) and 64-bit imuls (3) are
 * clocks on every x86-64 core; adds of an immediate are not: Intel cores
 * since Golden Cove fold chains of them at rename, several per cycle, so
 * that chain is timed only as a fact about the core (fastcpu/_clock.py).
 */
#define FC_RULER_TIMER(fn, insn, per_block)                                  \
    static uint64_t fn(uint32_t blocks)                                      \
    {                                                                        \
        uint64_t acc = 1;                                                    \
        uint64_t t0 = fc_start_lfence(FC_NO_COUNTER);                        \
        for (uint32_t i = 0; i < blocks; i++)                                \
            __asm__ volatile(".rept " per_block "\n\t" insn "\n\t.endr"     \
                             : "+r"(acc));                                   \
        uint64_t t1 = fc_end_rdtscp_lfence(FC_NO_COUNTER);                   \
        fc_sink(acc);                                                        \
        return t1 - t0;                                                      \
    }

FC_RULER_TIMER(add_ruler_ticks, "add %0, %0", FC_RULER_BLOCK_TEXT)
FC_RULER_TIMER(imul_ruler_ticks, "imul %0, %0", FC_IMUL_RULER_BLOCK_TEXT)
FC_RULER_TIMER(immediate_add_ticks, "add $1, %0", FC_RULER_BLOCK_TEXT)

uint64_t fc_ruler_ticks(enum fc_ruler ruler, uint32_t blocks)
{
    switch (ruler) {
    case FC_RULER_IMUL:
        return imul_ruler_ticks(blocks);
    case FC_RULER_IMMEDIATE_ADD:
        return immediate_add_ticks(blocks);
    case FC_RULER_ADD:
    default:
        return add_ruler_ticks(blocks);
    }
}
