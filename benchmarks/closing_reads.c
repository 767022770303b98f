/*
 * closing_reads.c: does another closing read make the single-copy harness
 * hide the same amount of every body (docs/accuracy.md, "Would another
 * closing read help")?
 *
 * fastcpu's 'lfence' timers open with lfence; rdtsc; lfence and closed with
 * rdtscp; lfence until 0.8.4 (csrc/timing.h). rdtscp waits until earlier
 * instructions have executed; an lfence in front of it waits until they have
 * completed: fastcpu closes that way since 0.8.5, after this program.
 * This times the known-cost chains (add and imul, register-register, each
 * ending as fastcpu's timers end: its result used by one multiply by 1 into
 * another register) under three closing reads, each against the empty body
 * closed the same way:
 *
 *     rdtscp; lfence            (fastcpu's until 0.8.4)
 *     lfence; rdtsc; lfence
 *     lfence; rdtscp; lfence    (fastcpu's since 0.8.5)
 *
 * and long chains of both kinds as rulers (add 1024 - add 512 is 512 core
 * cycles, imul 342 - imul 171 is 513), so that each round converts at its
 * own core clock. Every variant of every closing read is interleaved run by
 * run, with a short pseudo-random wait between runs that spreads their
 * starts over the phases of a coarse TSC.
 *
 *     cc -O2 -std=c11 -o closing_reads closing_reads.c && ./closing_reads ROUNDS RUNS CPU
 *
 * Prints a header of "close|body:truth" (truth in core cycles; rulers are
 * named "ruler add 512" and so on) per variant, tab-separated, then one line
 * per round: each variant's mean TSC ticks over RUNS runs.
 */
#define _GNU_SOURCE
#include "pin.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* the opening read of fastcpu's 'lfence' timers, halves joined before the lfence */
#define OPEN "lfence\n\trdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence\n\tmov %%rax, %%rsi\n\t"
#define CLOSE_RDTSCP "rdtscp\n\tlfence\n\t"
#define CLOSE_LFENCE_RDTSC "lfence\n\trdtsc\n\tlfence\n\t"
#define CLOSE_LFENCE_RDTSCP "lfence\n\trdtscp\n\tlfence\n\t"
#define JOIN "shl $32, %%rdx\n\tmov %%eax, %%eax\n\tor %%rdx, %%rax\n\tsub %%rsi, %%rax\n\t"
/* register-register forms: Intel cores since Golden Cove fold `add $imm` at rename */
#define ADD "add %%rax, %%rax\n\t"
#define MUL "imul %%rax, %%rax\n\t"
/* the result used, as timing.h's fc_use does */
#define USE "imul $1, %%rax, %%r8\n\t"
#define REP(n, insn) ".rept " #n "\n\t" insn ".endr\n\t"

#define TIMED(fn, close, body)                                                                 \
    static uint64_t fn(void)                                                                   \
    {                                                                                          \
        uint64_t ticks;                                                                        \
        __asm__ volatile(OPEN body USE close JOIN : "=a"(ticks) : : "rdx", "rcx", "rsi", "r8", "memory", "cc"); \
        return ticks;                                                                          \
    }

/* X(name, truth core cycles, body) for each body; rulers have truth < 0 (their length x latency negated) */
#define BODIES(X)                                                                              \
    X(empty, 0, "")                                                                            \
    X(add4, 4, REP(4, ADD)) X(add8, 8, REP(8, ADD)) X(add16, 16, REP(16, ADD))                 \
    X(add32, 32, REP(32, ADD)) X(add64, 64, REP(64, ADD)) X(add128, 128, REP(128, ADD))        \
    X(imul4, 12, REP(4, MUL)) X(imul8, 24, REP(8, MUL)) X(imul16, 48, REP(16, MUL))            \
    X(imul32, 96, REP(32, MUL)) X(imul64, 192, REP(64, MUL))                                   \
    X(ruler_add512, -512, REP(512, ADD)) X(ruler_add1024, -1024, REP(1024, ADD))               \
    X(ruler_imul171, -513, REP(171, MUL)) X(ruler_imul342, -1026, REP(342, MUL))

#define DEFINE(close)                                                                          \
    BODIES(DEFINE_##close)
#define DEFINE_RDTSCP(name, truth, body) TIMED(rdtscp_##name, CLOSE_RDTSCP, body)
#define DEFINE_LFENCE_RDTSC(name, truth, body) TIMED(lfence_rdtsc_##name, CLOSE_LFENCE_RDTSC, body)
#define DEFINE_LFENCE_RDTSCP(name, truth, body) TIMED(lfence_rdtscp_##name, CLOSE_LFENCE_RDTSCP, body)
DEFINE(RDTSCP)
DEFINE(LFENCE_RDTSC)
DEFINE(LFENCE_RDTSCP)

struct variant {
    const char *close;
    const char *body;
    int truth;
    uint64_t (*fn)(void);
};

#define ROW_RDTSCP(name, truth, body) {"rdtscp; lfence", #name, truth, rdtscp_##name},
#define ROW_LFENCE_RDTSC(name, truth, body) {"lfence; rdtsc; lfence", #name, truth, lfence_rdtsc_##name},
#define ROW_LFENCE_RDTSCP(name, truth, body) {"lfence; rdtscp; lfence", #name, truth, lfence_rdtscp_##name},
static const struct variant variants[] = {BODIES(ROW_RDTSCP) BODIES(ROW_LFENCE_RDTSC) BODIES(ROW_LFENCE_RDTSCP)};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s ROUNDS RUNS CPU\n", argv[0]);
        return 2;
    }
    int rounds = atoi(argv[1]), runs = atoi(argv[2]);
    if (rounds < 1 || runs < 1) {
        fprintf(stderr, "ROUNDS and RUNS must be positive\n");
        return 2;
    }
    if (pin_to(atoi(argv[3])) != 0)
        return 1;
    for (size_t v = 0; v < N_VARIANTS; v++)
        printf("%s%s|%s:%d", v ? "\t" : "", variants[v].close, variants[v].body, variants[v].truth);
    printf("\n");
    static double sum[N_VARIANTS];
    unsigned seed = 1;
    for (int r = 0; r < rounds; r++) {
        for (size_t v = 0; v < N_VARIANTS; v++)
            sum[v] = 0;
        for (int i = 0; i < runs; i++)
            for (size_t v = 0; v < N_VARIANTS; v++) {
                seed = seed * 1103515245u + 12345u;
                for (volatile unsigned wait = (seed >> 16) & 31; wait; wait--) {
                }
                sum[v] += (double)variants[v].fn();
            }
        for (size_t v = 0; v < N_VARIANTS; v++)
            printf("%s%.4f", v ? "\t" : "", sum[v] / runs);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
