/*
 * estimate.h: the estimate fastcpu recommends for one bench() measurement
 * (estimate.c), computed in C beside best and median: exactly what
 * fastcpu/results/estimate.py's recommend() computes from the same runs
 * (that Python stays the reference, and what reads a result file).
 */
#ifndef FASTCPU_ESTIMATE_H
#define FASTCPU_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Runs up to which the estimate is computed here: recommend()'s whole-array
 * path (fastcpu/results/statistics.py BLOCK); beyond, Python reads them in
 * blocks without holding copies. */
#define FC_ESTIMATE_RUNS_MAX ((size_t)1 << 18)
/* Counts at or above this are left to Python (estimate.py _EXACT_BELOW):
 * below it every step stays exact in int64. */
#define FC_ESTIMATE_EXACT_BELOW (UINT64_C(1) << 61)

enum fc_estimator { FC_ESTIMATOR_MEDIAN, FC_ESTIMATOR_PAIRED_MEAN };

/* estimate.py's Estimate: counts per copy above the empty sequence (TSC
 * ticks, or core cycles on a PMU counter), the half-width of its 95%
 * interval (infinite below 2 runs), the estimator, the runs it rests on. */
struct fc_estimate {
    double ticks, ci95_ticks;
    enum fc_estimator estimator;
    size_t runs_used;
};

/* bench()'s two figures per copy of every run: min(raw) - min(empty) and
 * median(raw) - median(empty). */
struct fc_best_median {
    double best, median;
};

/* recommend(raw, empty, step, unroll, migrated) of `n` runs: the median
 * difference when the raw runs' robust sigma spans 2 clock steps (`step`
 * counts), else the fenced paired mean; pairs flagged in `migrated` (may be
 * NULL) left out unless all are. In the same pass *paired: paired_mean()
 * of the same runs (estimate.py's; *out itself where that is the one
 * recommended), so that a result holds both from birth. 0: *out and
 * *paired set; 1: not computed here (no
 * runs, more than FC_ESTIMATE_RUNS_MAX, a count at or above
 * FC_ESTIMATE_EXACT_BELOW, or no memory for the copies): Python computes
 * it. With `all` (may be NULL), 0 also sets fc_best_median()'s figures of
 * every run, read off the same passes (bench() asks for both: a pass per
 * figure would cost as much again). No Python here: callable with the GIL
 * released. */
int fc_recommend(const uint64_t *raw, const uint64_t *empty, const bool *migrated, size_t n,
                 double step, uint32_t unroll, struct fc_estimate *out, struct fc_estimate *paired,
                 struct fc_best_median *all);

#pragma GCC visibility pop

#endif
