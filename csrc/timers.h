/*
 * timers.h: what a timer is: how a timed region is opened and closed (the
 * serialization modes), and the function types the harness times.
 */
#ifndef FASTCPU_TIMERS_H
#define FASTCPU_TIMERS_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

enum fc_serialize {
    FC_SER_LFENCE = 0, /* start lfence;rdtsc;lfence   end rdtscp;lfence */
    FC_SER_CPUID = 1,  /* start cpuid;rdtsc           end rdtscp;cpuid  */
    FC_SER_RDTSCP = 2, /* start rdtscp;lfence         end rdtscp;lfence */
    FC_SER_COUNT
};

extern const char *const fc_serialize_names[FC_SER_COUNT];

/* With counter='pmu' (pmu.c): the same modes reading the core-cycle counter.
 * 'rdtscp' has no counterpart (it reads the TSC). */
enum fc_pmu_serialize {
    FC_PMU_SER_LFENCE = 0, /* start lfence;rdpmc;lfence   end lfence;rdpmc;lfence */
    FC_PMU_SER_CPUID = 1,  /* start cpuid;rdpmc           end lfence;rdpmc;cpuid  */
    FC_PMU_SER_COUNT
};

/* One timed execution of `copies` back-to-back copies of a sequence, in TSC
 * ticks, harness included. One such function per method and serialization. */
typedef uint64_t (*fc_timer_fn)(uint32_t copies);

/* A user sequence (issue: user sequences): `unsigned fn(void)`. */
typedef unsigned (*fc_user_fn)(void);

#pragma GCC visibility pop

#endif
