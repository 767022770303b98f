/*
 * pmu.h: the PMU core-cycle counter (pmu.c), read with rdpmc.
 */
#ifndef FASTCPU_PMU_H
#define FASTCPU_PMU_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

enum fc_pmu_scope {
    FC_PMU_ALL = 1,       /* user and kernel cycles */
    FC_PMU_USER_ONLY = 2, /* perf_event_paranoid allowed user mode only */
};

/* Open this thread's core-cycle counter for user-space rdpmc (once per
 * thread) and set fc_pmu_counter. Returns 0 and sets *scope on success, or
 * -1 with *why saying why not (a static or thread-local string). */
int fc_pmu_open(enum fc_pmu_scope *scope, const char **why);
/* Private test hook: open a software event in place of the cycle counter
 * (pmu.c says why). */
#define FC_ENV_PMU_SOFTWARE "FASTCPU_TEST_PMU_SOFTWARE"
/* Re-read the counter's rdpmc number (it moves if the kernel reschedules the
 * event) before a chunk of runs; 0, or -1 with *why. */
int fc_pmu_refresh(const char **why);
/* After the chunk: 0 when the event stayed on that counter and never left
 * it (so every delta read there is this thread's cycles), or -1 with *why;
 * the caller redoes the chunk. */
int fc_pmu_check(const char **why);
/* Mask of the counter's valid bits: deltas are taken modulo its width. */
uint64_t fc_pmu_mask(void);

#pragma GCC visibility pop

#endif
