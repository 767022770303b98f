/*
 * held_out.c: the known-cost chains timed without fastcpu, each measurement
 * converted with a ruler of its own taken just before and just after it: the
 * independent check of fastcpu's figures (issue 26's "done when", where the
 * core clock hops between 100 MHz steps every 20-200 ms).
 *
 * A measurement is RUNS single-copy runs of a chain and of the empty body,
 * interleaved in alternating order, each between fastcpu's 'lfence' reads
 * (lfence; rdtsc; lfence; body; lfence; rdtscp; lfence) with its result used by one
 * multiply by 1, as fastcpu's timers end (timing.h, fc_use). Its cost in
 * ticks is mean(chain) - mean(empty), the runs fenced to the middle 90% of
 * the paired differences. Around it, a held-out ruler: a dependent chain of
 * 204,800 register-register adds (1 core cycle each) and one of 69,632
 * imuls (3 each), the fastest of three of each, before and after; the
 * measurement is kept only where the four agree within 1% (the clock held
 * still across it) and converted with their mean.
 *
 *     cc -O2 -std=c11 -o held_out held_out.c && ./held_out ROUNDS RUNS CPU
 *
 * Prints one line per chain: name, truth, kept measurements, median error
 * in core cycles, and the 5th and 95th percentile of the error.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPEN "lfence\n\trdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence\n\tmov %%rax, %%rsi\n\t"
#define CLOSE                                                                                  \
    "imul $1, %%rax, %%r8\n\tlfence\n\trdtscp\n\tlfence\n\tshl $32, %%rdx\n\tmov %%eax, %%eax\n\t" \
    "or %%rdx, %%rax\n\tsub %%rsi, %%rax\n\t"
#define R4(x) x x x x
#define R16(x) R4(R4(x))
#define R64(x) R16(R4(x))
#define ADD "add %%rax, %%rax\n\t"
#define MUL "imul %%rax, %%rax\n\t"

#define TIMED(fn, body)                                                                        \
    static uint64_t fn(void)                                                                   \
    {                                                                                          \
        uint64_t ticks;                                                                        \
        __asm__ volatile(OPEN body CLOSE : "=a"(ticks) : : "rdx", "rcx", "rsi", "r8", "memory", "cc"); \
        return ticks;                                                                          \
    }

TIMED(t_empty, "")
TIMED(t_add4, R4(ADD))
TIMED(t_add16, R16(ADD))
TIMED(t_add64, R64(ADD))
TIMED(t_add128, R64(ADD) R64(ADD))
TIMED(t_mul4, R4(MUL))
TIMED(t_mul16, R16(MUL))
TIMED(t_mul64, R64(MUL))

struct chain {
    const char *name;
    uint64_t (*timed)(void);
    double truth; /* core cycles */
};

static const struct chain chains[] = {
    {"add_chain_4", t_add4, 4},     {"add_chain_16", t_add16, 16},   {"add_chain_64", t_add64, 64},
    {"add_chain_128", t_add128, 128}, {"imul_chain_4", t_mul4, 12}, {"imul_chain_16", t_mul16, 48},
    {"imul_chain_64", t_mul64, 192},
};
#define N_CHAINS (sizeof chains / sizeof chains[0])

/* A held-out ruler's chain: 50 x 4,096 register-register adds (204,800
 * core cycles) or 17 x 4,096 imuls (208,896), fenced. */
#define ADD_PASSES 50
#define MUL_PASSES 17
static uint64_t ruler(int imul)
{
    uint64_t t0, t1, acc = 1;
    unsigned lo, hi, aux;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi));
    t0 = (uint64_t)hi << 32 | lo;
    if (imul)
        for (int i = 0; i < MUL_PASSES; i++)
            __asm__ volatile(R64(R64("imul %0, %0\n\t")) : "+r"(acc));
    else
        for (int i = 0; i < ADD_PASSES; i++)
            __asm__ volatile(R64(R64("add %0, %0\n\t")) : "+r"(acc));
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux));
    t1 = (uint64_t)hi << 32 | lo;
    __asm__ volatile("" ::"r"(acc));
    return t1 - t0;
}

/* core cycles per tick by each ruler: the fastest of three */
static void rulers(double *add, double *imul)
{
    uint64_t a = UINT64_MAX, m = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t x = ruler(0), y = ruler(1);
        a = x < a ? x : a;
        m = y < m ? y : m;
    }
    *add = 4096.0 * ADD_PASSES / (double)a;
    *imul = 3.0 * 4096 * MUL_PASSES / (double)m;
}

static double lesser(double a, double b) { return a < b ? a : b; }
static double greater(double a, double b) { return a > b ? a : b; }

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* mean of the middle 90% of the paired differences, ticks */
static double fenced_mean(const uint64_t *raw, const uint64_t *empty, int runs, double *scratch)
{
    for (int i = 0; i < runs; i++)
        scratch[i] = (double)raw[i] - (double)empty[i];
    qsort(scratch, (size_t)runs, sizeof *scratch, cmp);
    int lo = runs / 20, hi = runs - runs / 20;
    double sum = 0;
    for (int i = lo; i < hi; i++)
        sum += scratch[i];
    return sum / (hi - lo);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int runs = argc > 2 ? atoi(argv[2]) : 1000;
    if (argc > 3) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(argv[3]), &set);
        sched_setaffinity(0, sizeof set, &set);
    }
    if (rounds < 1 || runs < 20)
        return 2;
    uint64_t *raw = malloc(sizeof *raw * runs), *empty = malloc(sizeof *empty * runs);
    double *scratch = malloc(sizeof *scratch * runs);
    double *errors = malloc(sizeof *errors * rounds * N_CHAINS);
    int kept[N_CHAINS] = {0};
    for (int r = 0; r < rounds; r++) {
        for (size_t c = 0; c < N_CHAINS; c++) {
            double a0, m0, a1, m1;
            rulers(&a0, &m0);
            for (int i = 0; i < 64; i++) /* warm up */
                chains[c].timed(), t_empty();
            for (int i = 0; i < runs; i++) {
                if (i & 1) {
                    empty[i] = t_empty();
                    raw[i] = chains[c].timed();
                } else {
                    raw[i] = chains[c].timed();
                    empty[i] = t_empty();
                }
            }
            rulers(&a1, &m1);
            double lo = lesser(lesser(a0, m0), lesser(a1, m1)), hi = greater(greater(a0, m0), greater(a1, m1));
            if (hi > lo * 1.01)
                continue; /* the clock moved across it, or a ruler was disturbed */
            double cpt = (a0 + m0 + a1 + m1) / 4;
            errors[c * rounds + kept[c]++] = fenced_mean(raw, empty, runs, scratch) * cpt - chains[c].truth;
        }
    }
    for (size_t c = 0; c < N_CHAINS; c++) {
        double *e = errors + c * rounds;
        int n = kept[c];
        if (!n) {
            printf("%s %.0f 0\n", chains[c].name, chains[c].truth);
            continue;
        }
        qsort(e, (size_t)n, sizeof *e, cmp);
        printf("%s %.0f %d %.3f %.3f %.3f\n", chains[c].name, chains[c].truth, n, e[n / 2],
               e[n / 20], e[n - 1 - n / 20]);
    }
    return 0;
}
