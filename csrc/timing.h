/*
 * timing.h: the counter reads that open and close every timed region, and
 * the one macro that wraps a sequence in them. Every method, the empty
 * sequence included, is timed by code generated from FC_TIMER, so the
 * harness around the instructions has the same shape for all: the same
 * reads, the same copy loop (one copy: no loop at all). What may differ is
 * a method's SETUP, values it loads into registers before the opening read
 * so that those loads stay out of the timed region.
 */
#ifndef FASTCPU_TIMING_H
#define FASTCPU_TIMING_H

#include <stdint.h>

#include "compiler.h"

#define FC_TSC(lo, hi) (((uint64_t)(hi) << 32) | (lo))

/* Keep a value alive without emitting an instruction for it. */
#define fc_sink(v) __asm__ volatile("" ::"r"(v))

/* Use a timed sequence's result inside the timed region: one multiply by 1
 * into a register of its own, the last instruction of every timed body (the
 * empty sequence's multiplies a zeroed register). Without it the closing
 * read came about 2 core cycles later after an add than after an imul
 * (AuthenticAMD family 25 model 1, Zen 3 guest: benchmarks/chain_ends.py),
 * so each sequence carried the offset of its own last instruction's kind,
 * which no single correction fits; with it every body ends alike, and a
 * figure is the time until the result can be used. Early-clobber output:
 * never the input's register, which a chain of copies (unroll, bench_diff,
 * a user function continuing from its last return value) reads next. */
#define fc_use(v)                                                            \
    do {                                                                     \
        __typeof__(v) use_in_ = (v); /* no comma: BODY is a macro argument */ \
        __typeof__(v) use_out_;                                              \
        __asm__ volatile("imul $1, %1, %0" : "=&r"(use_out_) : "r"(use_in_) : "cc"); \
    } while (0)

/* call_NAME PARAMS: one getcpu() call as a caller of the vDSO makes it,
 * the shape shared by the vDSO, the system call and the models: cpu and
 * node in the caller's frame, their addresses passed, the return value
 * used (fc_use); cpu and node are read back only after the timed region
 * (by the method's reader), never inside it. CALL is an expression in cpu_
 * and node_. A function, not a block: a timer's BODY cannot hold a comma. */
#define FC_GETCPU_CALLER(name, PARAMS, CALL)                                 \
    static inline __attribute__((always_inline)) void call_##name PARAMS     \
    {                                                                        \
        unsigned cpu_, node_;                                                \
        fc_use(CALL);                                                        \
    }

/* Every read takes `counter`, the rdpmc counter number for the PMU modes and
 * ignored by the TSC ones: a timer loads it into a register before its
 * opening read (fc_counter_MODE), so that no load of it, a thread-local
 * access, falls inside the timed region. */
#define FC_NO_COUNTER 0u

/* 'lfence': the first lfence waits for earlier work, the second keeps later
 * work from starting before the counter is read (the 'cpuid' start lacks it:
 * a 1024-add chain reads ~40 core cycles short on this AMD guest). The two
 * halves are joined before the second lfence: joined after it, the shl/or
 * ran inside the timed region, on the empty sequence's critical path but in
 * the shadow of any longer-latency body, which then read ~2 core cycles short. */
static inline __attribute__((always_inline)) uint64_t fc_start_lfence(uint32_t counter)
{
    (void)counter;
    uint64_t t;
    __asm__ volatile("lfence\n\trdtsc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence"
                     : "=a"(t)::"rdx", "memory");
    return t;
}

/* rdtscp waits for earlier instructions to execute; lfence keeps later ones
 * out ('rdtscp' mode's close, and the rulers'). */
static inline __attribute__((always_inline)) uint64_t fc_end_rdtscp_lfence(uint32_t counter)
{
    (void)counter;
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    return FC_TSC(lo, hi);
}

/* Intel's white paper (Paoloni 2010). cpuid is a VM exit under a hypervisor. */
static inline __attribute__((always_inline)) uint64_t fc_start_cpuid(uint32_t counter)
{
    (void)counter;
    uint32_t lo = 0, hi;
    __asm__ volatile("cpuid\n\trdtsc" : "+a"(lo), "=d"(hi)::"rbx", "rcx", "memory");
    return FC_TSC(lo, hi);
}

static inline __attribute__((always_inline)) uint64_t fc_end_cpuid(uint32_t counter)
{
    (void)counter;
    uint32_t lo, hi;
    __asm__ volatile("rdtscp\n\t"
                     "mov %%eax, %0\n\t"
                     "mov %%edx, %1\n\t"
                     "xor %%eax, %%eax\n\t"
                     "cpuid"
                     : "=r"(lo), "=r"(hi)::"rax", "rbx", "rcx", "rdx", "memory");
    return FC_TSC(lo, hi);
}

/* 'rdtscp': the same read at both ends (halves joined before the lfence,
 * as in fc_start_lfence). */
static inline __attribute__((always_inline)) uint64_t fc_start_rdtscp(uint32_t counter)
{
    (void)counter;
    uint64_t t;
    __asm__ volatile("rdtscp\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence"
                     : "=a"(t)::"rcx", "rdx", "memory");
    return t;
}
/* 'lfence' closes with an lfence before the rdtscp: rdtscp waits until earlier
 * instructions have executed, the lfence until they have completed. Without
 * it an imul chain hid 1.1-2.8 core cycles more than an add chain on a
 * GenuineIntel family 6 model 167 guest (the self-test's biases), with it
 * 0.4-1.25, which one correction serves (benchmarks/closing_reads.py); on the
 * AuthenticAMD family 25 model 1 (Zen 3) guest it changed nothing. The PMU
 * close has the same shape. */
static inline __attribute__((always_inline)) uint64_t fc_end_lfence_rdtscp_lfence(uint32_t counter)
{
    (void)counter;
    uint32_t lo, hi, aux;
    __asm__ volatile("lfence\n\trdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux)::"memory");
    return FC_TSC(lo, hi);
}
#define fc_end_lfence fc_end_lfence_rdtscp_lfence
#define fc_end_rdtscp fc_end_rdtscp_lfence

/* The TSC modes need no counter number. */
#define fc_counter_lfence() FC_NO_COUNTER
#define fc_counter_cpuid() FC_NO_COUNTER
#define fc_counter_rdtscp() FC_NO_COUNTER

/* The timers' linkage: static where the catalog lives (sequences.c); a file
 * whose timers the catalog names from elsewhere (models.c) defines it as
 * FC_HIDDEN before including this header. */
#ifndef FC_TIMER_LINKAGE
#define FC_TIMER_LINKAGE static
#endif

/*
 * counter='pmu': the same fencing around rdpmc of this thread's core-cycle
 * counter (pmu.c opens it and sets fc_pmu_counter, rdpmc's ECX). rdpmc does
 * not wait for earlier instructions the way rdtscp does, so the closing read
 * gets an lfence in front of it. There is no 'rdtscp' mode for this counter.
 * The counter number is read once per timed execution, before the opening
 * read, and handed to both reads in a register.
 */
FC_HIDDEN extern _Thread_local uint32_t fc_pmu_counter;
#define fc_counter_pmu_lfence() fc_pmu_counter
#define fc_counter_pmu_cpuid() fc_pmu_counter

static inline __attribute__((always_inline)) uint64_t fc_start_pmu_lfence(uint32_t counter)
{
    uint64_t t;
    __asm__ volatile("lfence\n\trdpmc\n\tshl $32, %%rdx\n\tor %%rdx, %%rax\n\tlfence"
                     : "=a"(t)
                     : "c"(counter)
                     : "rdx", "memory");
    return t;
}

static inline __attribute__((always_inline)) uint64_t fc_end_pmu_lfence(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdpmc\n\tlfence"
                     : "=a"(lo), "=d"(hi)
                     : "c"(counter)
                     : "memory");
    return FC_TSC(lo, hi);
}

/* cpuid overwrites ECX, so the counter number travels in another register. */
static inline __attribute__((always_inline)) uint64_t fc_start_pmu_cpuid(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ volatile("xor %%eax, %%eax\n\tcpuid\n\tmov %2, %%ecx\n\trdpmc"
                     : "=&a"(lo), "=&d"(hi)
                     : "r"(counter)
                     : "rbx", "rcx", "memory");
    return FC_TSC(lo, hi);
}

static inline __attribute__((always_inline)) uint64_t fc_end_pmu_cpuid(uint32_t counter)
{
    uint32_t lo, hi;
    __asm__ volatile("mov %2, %%ecx\n\t"
                     "lfence\n\t"
                     "rdpmc\n\t"
                     "mov %%eax, %0\n\t"
                     "mov %%edx, %1\n\t"
                     "xor %%eax, %%eax\n\t"
                     "cpuid"
                     : "=r"(lo), "=r"(hi)
                     : "r"(counter)
                     : "rax", "rbx", "rcx", "rdx", "memory");
    return FC_TSC(lo, hi);
}

/*
 * One timed execution: `copies` back-to-back copies of BODY between the
 * opening and closing reads, SETUP run before the opening read (values the
 * body needs, loaded into registers there: a load of a global or through
 * the GOT would otherwise sit inside the timed region, after the opening
 * read's memory clobber). The copy loop is the same for every method, so
 * its overhead (an add and a fused cmp/jne per copy) cancels against the
 * empty sequence for throughput-bound bodies. A latency-bound body hides
 * the loop's own dependent instructions, which the empty sequence pays
 * for: dependent add chains (chains.c) read about 2 core cycles
 * short. So a single copy, the default, is timed without any loop or
 * branch in the region.
 *
 * FC_TIMER_FN names the function and its parameters (which must include
 * `uint32_t copies`): harness.c times user functions with it too.
 */
#define FC_TIMER_FN(fname, mode, PARAMS, SETUP, BODY)                        \
    FC_TIMER_LINKAGE uint64_t fname PARAMS                                   \
    {                                                                        \
        const uint32_t counter_ = fc_counter_##mode();                       \
        SETUP;                                                               \
        uint64_t t0, t1;                                                     \
        if (copies == 1) {                                                   \
            t0 = fc_start_##mode(counter_);                                  \
            BODY;                                                            \
            t1 = fc_end_##mode(counter_);                                    \
        } else {                                                             \
            t0 = fc_start_##mode(counter_);                                  \
            for (uint32_t i_ = 0; i_ < copies; i_++) {                       \
                BODY;                                                        \
            }                                                                \
            t1 = fc_end_##mode(counter_);                                    \
        }                                                                    \
        return t1 - t0;                                                      \
    }

#define FC_TIMER(name, mode, SETUP, BODY)                                    \
    FC_TIMER_FN(name##_##mode, mode, (uint32_t copies), SETUP, BODY)

/* The timers of a method for every mode and counter. SETUP is one statement
 * (a declaration is fine) without a top-level comma. */
#define FC_DEFINE_TIMERS_SETUP(name, SETUP, BODY)                            \
    FC_TIMER(time_##name, lfence, SETUP, BODY)                               \
    FC_TIMER(time_##name, cpuid, SETUP, BODY)                                \
    FC_TIMER(time_##name, rdtscp, SETUP, BODY)                               \
    FC_TIMER(time_##name, pmu_lfence, SETUP, BODY)                           \
    FC_TIMER(time_##name, pmu_cpuid, SETUP, BODY)

#define FC_DEFINE_TIMERS(name, BODY) FC_DEFINE_TIMERS_SETUP(name, , BODY)

/* Initialises struct fc_method's .timers and .pmu_timers (designated: a
 * catalog row names its fields). */
#define FC_TIMERS(name)                                                      \
    .timers = {time_##name##_lfence, time_##name##_cpuid, time_##name##_rdtscp}, \
    .pmu_timers = {time_##name##_pmu_lfence, time_##name##_pmu_cpuid}

#endif
