/*
 * chain_ends.c: which part of a dependent chain carries the single-copy
 * harness's per-instruction offset (docs/accuracy.md, "What makes the
 * single-copy estimate drift by host").
 *
 * Every variant is timed between fastcpu's 'lfence' reads as they were until
 * 0.8.4 (lfence; rdtsc; lfence; body; rdtscp; lfence; closing_reads.c
 * compares the close fastcpu has since) and the empty body's time is subtracted. The bodies are chains of dependent adds (1 core cycle a
 * link) and imuls (3), alone and mixed: the same instructions in a
 * different order tell a start effect from an end effect. The variants
 * marked "used" end as fastcpu's timers do since the end effect was found:
 * the result consumed by one multiply by 1 into another register (timing.h,
 * fc_use), measured against the empty body with that multiply.
 *
 *     cc -O2 -std=c11 -o chain_ends chain_ends.c && ./chain_ends ROUNDS RUNS CPU
 *
 * Prints a header of "name:truth" (truth in core cycles) per variant, then
 * one line per round: each variant's mean TSC ticks over RUNS runs. A round
 * interleaves every variant run by run, and a short pseudo-random wait
 * between runs spreads their starts over the phases of a TSC that moves in
 * steps (10 ns on the KVM guests this was written on), so that a mean lands
 * between them.
 */
#define _GNU_SOURCE
#include "pin.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define OPEN "lfence\n\trdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence\n\tmov %%rax, %%rsi\n\t"
#define CLOSE                                                                                  \
    "rdtscp\n\tlfence\n\tshl $32, %%rdx\n\tmov %%eax, %%eax\n\tor %%rdx, %%rax\n\t"            \
    "sub %%rsi, %%rax\n\t"
#define R4(x) x x x x
#define R16(x) R4(R4(x))
/* the chains continue from the value rdtsc left in rax, as fastcpu's do;
 * register-register forms, not `add $1` or `lea 1(reg)`, which Intel cores
 * since Golden Cove fold at rename (several a core cycle) */
#define ADD "add %%rax, %%rax\n\t"
#define LEA "lea (%%rax,%%rax), %%rax\n\t"
#define MUL "imul %%rax, %%rax\n\t"
#define USE "imul $1, %%rax, %%r8\n\t"

#define TIMED(fn, body)                                                                        \
    static uint64_t fn(void)                                                                   \
    {                                                                                          \
        uint64_t ticks;                                                                        \
        __asm__ volatile(OPEN body CLOSE : "=a"(ticks) : : "rdx", "rcx", "rsi", "r8", "memory", "cc"); \
        return ticks;                                                                          \
    }

TIMED(t_empty, "")
TIMED(t_add1, ADD)
TIMED(t_add4, R4(ADD))
TIMED(t_add16, R16(ADD))
TIMED(t_add32, R16(ADD) R16(ADD))
TIMED(t_lea16, R16(LEA))
TIMED(t_mul1, MUL)
TIMED(t_mul4, R4(MUL))
TIMED(t_mul16, R16(MUL))
TIMED(t_mul32, R16(MUL) R16(MUL))
TIMED(t_mul16_add1, R16(MUL) ADD)
TIMED(t_add1_mul16, ADD R16(MUL))
TIMED(t_mul16_add4, R16(MUL) R4(ADD))
TIMED(t_add4_mul16, R4(ADD) R16(MUL))
TIMED(t_add16_mul1, R16(ADD) MUL)
TIMED(t_mul1_add16, MUL R16(ADD))
TIMED(t_add16_lea1, R16(ADD) LEA)
TIMED(t_empty_use, USE)
TIMED(t_add16_use, R16(ADD) USE)
TIMED(t_add32_use, R16(ADD) R16(ADD) USE)
TIMED(t_mul16_use, R16(MUL) USE)
TIMED(t_mul32_use, R16(MUL) R16(MUL) USE)
TIMED(t_add16_mul1_use, R16(ADD) MUL USE)
TIMED(t_mul1_add16_use, MUL R16(ADD) USE)

struct variant {
    const char *name;
    uint64_t (*timed)(void);
    int truth; /* core cycles */
};

static const struct variant variants[] = {
    {"empty", t_empty, 0},
    {"add x1", t_add1, 1},
    {"add x4", t_add4, 4},
    {"add x16", t_add16, 16},
    {"add x32", t_add32, 32},
    {"lea x16", t_lea16, 16},
    {"imul x1", t_mul1, 3},
    {"imul x4", t_mul4, 12},
    {"imul x16", t_mul16, 48},
    {"imul x32", t_mul32, 96},
    {"imul x16, then add x1", t_mul16_add1, 49},
    {"add x1, then imul x16", t_add1_mul16, 49},
    {"imul x16, then add x4", t_mul16_add4, 52},
    {"add x4, then imul x16", t_add4_mul16, 52},
    {"add x16, then imul x1", t_add16_mul1, 19},
    {"imul x1, then add x16", t_mul1_add16, 19},
    {"add x16, then lea x1", t_add16_lea1, 17},
    {"empty, used", t_empty_use, 0},
    {"add x16, used", t_add16_use, 16},
    {"add x32, used", t_add32_use, 32},
    {"imul x16, used", t_mul16_use, 48},
    {"imul x32, used", t_mul32_use, 96},
    {"add x16, then imul x1, used", t_add16_mul1_use, 19},
    {"imul x1, then add x16, used", t_mul1_add16_use, 19},
};
#define N_VARIANTS (sizeof variants / sizeof *variants)

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ROUNDS RUNS CPU\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]), runs = atoi(argv[2]), cpu = atoi(argv[3]);
    if (rounds < 1 || runs < 1 || cpu < 0) {
        fprintf(stderr, "ROUNDS and RUNS must be >= 1, CPU >= 0\n");
        return 2;
    }
    if (pin_to(cpu) != 0)
        return 1;
    /* the header: each variant's name and truth; then a line per round */
    for (size_t v = 0; v < N_VARIANTS; v++)
        printf("%s%s:%d", v ? "\t" : "", variants[v].name, variants[v].truth);
    printf("\n");
    uint64_t state = 0x9e3779b97f4a7c15u;
    volatile uint64_t sink = 0;
    for (int r = 0; r < rounds; r++) {
        double sums[N_VARIANTS] = {0};
        for (int i = 0; i < runs; i++) {
            for (size_t v = 0; v < N_VARIANTS; v++) {
                /* xorshift: wait 0-63 iterations, a random phase of the step */
                state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                for (uint64_t w = state & 63; w; w--)
                    sink += w;
                sums[v] += (double)variants[v].timed();
            }
        }
        for (size_t v = 0; v < N_VARIANTS; v++)
            printf("%s%.4f", v ? "\t" : "", sums[v] / runs);
        printf("\n");
    }
    return 0;
}
