/*
 * conversion.h: core cycles per tick inside one run of the harness
 * (conversion.c), from the ruler points between its stretches.
 */
#ifndef FASTCPU_CONVERSION_H
#define FASTCPU_CONVERSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* How a measurement times its ruler points: a register-register add chain
 * of `add_blocks` blocks and an imul chain of `imul_blocks` blocks, each
 * timer's own cost in core cycles (fences and reads), and a point every
 * `spacing_ticks` TSC ticks of runs (fastcpu/_conversion.py sizes them for
 * the host at hand). */
struct fc_ruler_args {
    uint32_t add_blocks, imul_blocks;
    double add_fixed_cycles, imul_fixed_cycles;
    uint64_t spacing_ticks;
};
/* One ruler point: the runs recorded before it, TSC ticks since the
 * measurement began, and each ruler's core cycles per tick. Doubles, so
 * that Python gets them as one (n, 4) array. */
struct fc_ruler_point {
    double run, tsc, add, imul;
};
/* Time a point (after a short warm-up chain when `warm_up`). */
void fc_ruler_point_take(const struct fc_ruler_args *r, uint64_t run, uint64_t origin_tsc,
                         bool warm_up, struct fc_ruler_point *out);

/* Levels of the core clock a measurement reports at most. */
#define FC_LEVELS_MAX 8
/* What a measurement's ruler points say: core cycles per tick that convert
 * its runs as each stretch between two points would be converted with the
 * points around it (NaN: no undisturbed point), its 95% half-width; the
 * points, those whose rulers disagreed (disturbed, left out), the hops
 * (neighbouring undisturbed points at different levels) and the runs of the
 * stretches they fell in; the rulers' means over the undisturbed points; the
 * levels seen (each a mean of the points that agree with it) and the
 * lowest and highest point. */
struct fc_conversion {
    double cycles_per_tick, ci95;
    uint32_t points, disturbed, hops;
    uint32_t hops_located; /* of the hops: those whose place the runs showed */
    uint32_t slowdowns;    /* level changes whose rulers moved apart or body held: not the clock */
    double hop_runs;
    double add_mean, imul_mean;
    uint32_t levels; /* level[] lowest first */
    double level[FC_LEVELS_MAX];
    uint32_t level_points[FC_LEVELS_MAX];
    double level_min, level_max;
    double span_ticks; /* from the first point to the last */
};
/* The runs a measurement recorded, where the conversion may read them: both
 * sides' ticks of each run (a run is core-clock work: its ticks scale as
 * 1 / the clock's level). */
struct fc_run_ticks {
    const uint64_t *a, *b;
    size_t runs;
};
/* Convert with points p[0 .. n) in the order taken: a point is disturbed
 * where its two rulers differ by more than the fraction `agree_tol` (an
 * interrupt slows a chain many times over; the rulers' own systematic
 * difference, their fixed costs' error, stays well inside it), two points
 * are at different levels where they differ by more than `tol`;
 * `resolution` is one counter step over the shorter ruler's ticks
 * (fc_ruler_resolution); `runs` (NULL: none) the runs themselves, where a
 * stretch a hop fell into is converted apart at the hop they show. */
void fc_convert(const struct fc_ruler_point *p, size_t n, double agree_tol, double tol,
                double resolution, const struct fc_run_ticks *runs, struct fc_conversion *out);
/* One step of a counter moving `step_ticks` TSC ticks at a time over the
 * TSC ticks of the shorter ruler chain, at `cycles_per_tick`. */
double fc_ruler_resolution(double step_ticks, double cycles_per_tick, uint32_t add_blocks,
                           uint32_t imul_blocks);
/* Within what fraction two points' levels agree: three counter steps of a
 * chain (`resolution`), at least 1% (a clock's step is 2.5% or more). */
double fc_ruler_tolerance(double resolution);
/* Within what fraction a point's two rulers agree: FC_RULERS_AGREE at least. */
#define FC_RULERS_AGREE 0.03

#pragma GCC visibility pop

#endif
