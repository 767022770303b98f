/*
 * rulers.c: the host's rulers measured with no fastcpu code, to check what
 * `python -m fastcpu` says of the clock (benchmarks/rulers.py runs it).
 *
 *     cc -O2 -std=c11 -o rulers rulers.c && ./rulers RUNS CPU
 *
 * Prints "key value" lines:
 *   empty, add_rr, imul, add_imm   median TSC ticks (lfence; rdtsc; lfence
 *                                  ... rdtscp; lfence) of 16,384 dependent
 *                                  instructions each (16 x 1,024: a 10 ns
 *                                  step is then 0.2% of the shortest), and
 *                                  of none
 *   gcd                            the most common greatest common divisor of
 *                                  two consecutive deltas of 20,000 reads,
 *                                  each after 0-255 register-register adds
 *                                  (a read a tick off, as a guest's counter
 *                                  gives now and then, moves one pair's, not
 *                                  the mode)
 *   spacing                        the median delta of 20,000 back-to-back reads
 *   deltas                         those spaced deltas, space-separated
 * Pairwise gcds, not fastcpu's fit: a second ruler, of its own make (a
 * lattice that is not a whole number of ticks gives a gcd of 1; rulers.py
 * then holds the deltas to fastcpu's figure, and to figures a tick off).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define READS 20000

static inline uint64_t open_read(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t close_read(void)
{
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux));
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t plain_read(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, by_value);
    return v[n / 2];
}

#define BLOCKS 16
/* Median ticks of `runs` timings of BLOCKS x `body` (1,024 dependent
 * instructions; the loop's own counter runs beside the chain). */
#define TIMED_MEDIAN(name, body)                                             \
    static uint64_t name(uint64_t *v, size_t runs)                           \
    {                                                                        \
        uint64_t acc = 1;                                                    \
        for (size_t i = 0; i < runs; i++) {                                  \
            uint64_t t0 = open_read();                                       \
            for (int b = 0; b < BLOCKS; b++)                                 \
                __asm__ volatile(body : "+r"(acc));                          \
            v[i] = close_read() - t0;                                        \
        }                                                                    \
        __asm__ volatile("" ::"r"(acc));                                     \
        return median(v, runs);                                              \
    }

TIMED_MEDIAN(t_empty, "")
TIMED_MEDIAN(t_add_rr, ".rept 1024\n\tadd %0, %0\n\t.endr")
TIMED_MEDIAN(t_imul, ".rept 1024\n\timul %0, %0\n\t.endr")
TIMED_MEDIAN(t_add_imm, ".rept 1024\n\tadd $1, %0\n\t.endr")

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int main(int argc, char **argv)
{
    long runs = argc > 1 ? strtol(argv[1], NULL, 10) : 2001;
    if (runs < 1 || runs > 1000000) {
        fprintf(stderr, "usage: rulers [RUNS (1-1000000) [CPU]]\n");
        return 2;
    }
    if (argc > 2) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(atoi(argv[2]), &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            perror("sched_setaffinity");
    }
    uint64_t *v = malloc(((size_t)runs > READS ? (size_t)runs : READS) * sizeof *v);
    if (!v)
        return 1;
    t_add_rr(v, (size_t)runs); /* warm up */
    printf("empty %llu\n", (unsigned long long)t_empty(v, (size_t)runs));
    printf("add_rr %llu\n", (unsigned long long)t_add_rr(v, (size_t)runs));
    printf("imul %llu\n", (unsigned long long)t_imul(v, (size_t)runs));
    printf("add_imm %llu\n", (unsigned long long)t_add_imm(v, (size_t)runs));

    uint32_t lcg = 1u;
    uint64_t acc = 1, prev = plain_read();
    uint64_t *deltas = malloc(READS * sizeof *deltas);
    size_t seen = 0;
    if (!deltas)
        return 1;
    for (size_t i = 0; i < READS; i++) {
        lcg = lcg * 1103515245u + 12345u;
        for (uint32_t k = (lcg >> 16) & 255u; k > 0; k--)
            __asm__ volatile("add %0, %0" : "+r"(acc));
        uint64_t now = plain_read(), d = now - prev;
        prev = now;
        if (d == 0 || d > 100000) /* equal reads fit every step; a preemption none */
            continue;
        deltas[seen++] = d;
    }
    static size_t votes[1025];
    for (size_t i = 1; i < seen; i++) {
        uint64_t g = gcd(deltas[i], deltas[i - 1]);
        votes[g <= 1024 ? g : 0]++;
    }
    uint64_t g = 1;
    for (uint64_t c = 1; c <= 1024; c++)
        g = votes[c] > votes[g] ? c : g;
    __asm__ volatile("" ::"r"(acc));
    printf("gcd %llu\n", (unsigned long long)g);
    for (size_t i = 0; i < READS; i++)
        v[i] = plain_read();
    for (size_t i = READS - 1; i > 0; i--)
        v[i] -= v[i - 1];
    printf("spacing %llu\n", (unsigned long long)median(v + 1, READS - 1));
    printf("deltas");
    for (size_t i = 0; i < seen; i++)
        printf(" %llu", (unsigned long long)deltas[i]);
    printf("\n");
    free(deltas);
    free(v);
    return 0;
}
