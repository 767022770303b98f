/*
 * result_use.c: what the harness's use of each copy's result costs a body
 * timed back to back (bench_diff, bench(unroll>1)).
 *
 * fastcpu ends every timed body with one multiply by 1 of its result into
 * another register (timing.h, fc_use), so that every body ends alike. Timed
 * back to back, that multiply runs once per copy beside the body. This times
 * loops of a dependent chain (one link per iteration: add, 1 core cycle;
 * imul, 3) alone, with that multiply, and with a mov in its place, plus the
 * multiply alone, each over ITERS iterations, best of ROUNDS:
 *
 *     cc -O2 -std=c11 -o result_use result_use.c && ./result_use ROUNDS ITERS CPU
 *
 * Prints "name:ticks_per_iteration" per line: TSC ticks, no conversion (the
 * script converts with the add chain's own line: 1 core cycle an iteration).
 */
#define _GNU_SOURCE
#include "pin.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

/* One loop per variant, written whole in asm so that the compiler adds no
 * move to the chain: BODY (on %0, the chain, and %1, where its result is
 * used), then a count down and a branch, ITERS times. */
#define LOOP(name, BODY)                                                     \
    static __attribute__((noinline)) uint64_t name(long iters)              \
    {                                                                        \
        uint64_t a = 3, b = 0;                                               \
        uint64_t t0 = __rdtsc();                                             \
        __asm__ volatile("1:\n\t" BODY "\n\tdec %2\n\tjnz 1b"                \
                         : "+r"(a), "+r"(b), "+r"(iters)::"cc");             \
        uint64_t t1 = __rdtsc();                                             \
        __asm__ volatile("" ::"r"(a), "r"(b));                               \
        return t1 - t0;                                                      \
    }

LOOP(add_alone, "add %0, %0")
LOOP(add_used, "add %0, %0\n\timul $1, %0, %1")
LOOP(add_moved, "add %0, %0\n\tmov %0, %1")
LOOP(imul_alone, "imul %0, %0")
LOOP(imul_used, "imul %0, %0\n\timul $1, %0, %1")
LOOP(imul_moved, "imul %0, %0\n\tmov %0, %1")
LOOP(use_alone, "imul $1, %0, %1")

static const struct {
    const char *name;
    uint64_t (*loop)(long);
} VARIANTS[] = {
    {"add chain", add_alone},           {"add chain, result used by imul $1", add_used},
    {"add chain, result moved", add_moved}, {"imul chain", imul_alone},
    {"imul chain, result used by imul $1", imul_used}, {"imul chain, result moved", imul_moved},
    {"imul $1 alone", use_alone},
};

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ROUNDS ITERS CPU (CPU -1: not pinned)\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]), cpu = atoi(argv[3]);
    long iters = atol(argv[2]);
    if (rounds < 1 || iters < 1) {
        fprintf(stderr, "ROUNDS and ITERS must be positive\n");
        return 2;
    }
    if (cpu >= 0 && pin_to(cpu) != 0)
        return 1;
    size_t n = sizeof VARIANTS / sizeof VARIANTS[0];
    uint64_t best[sizeof VARIANTS / sizeof VARIANTS[0]];
    for (size_t v = 0; v < n; v++)
        best[v] = UINT64_MAX;
    /* rounds interleave the variants, so that a move of the core clock
     * falls on all of them alike */
    for (int r = 0; r < rounds; r++)
        for (size_t v = 0; v < n; v++) {
            uint64_t t = VARIANTS[v].loop(iters);
            if (t < best[v])
                best[v] = t;
        }
    for (size_t v = 0; v < n; v++)
        printf("%s:%.4f\n", VARIANTS[v].name, (double)best[v] / (double)iters);
    return 0;
}
