/*
 * conversion.c: core cycles per TSC tick inside one measurement. A guest's
 * core clock need not hold still while it is measured: on a GenuineIntel
 * family 6 model 167 guest it hops between 100 MHz steps (1.381 to 1.573
 * core cycles per tick) every 20-200 ms, so a figure taken once per process,
 * or once before and once after a long measurement, converts with the wrong
 * level. So the runs are timed in stretches with a ruler point between each
 * two (fastcpu/_conversion.py sizes them): a dependent chain of
 * register-register adds and one of imuls, two rulers of different kinds,
 * each checking the other. Each stretch is converted with the points around
 * it, and the measurement's figure is the one that converts its runs as
 * those stretches would, one by one.
 *
 * A ruler is only ever slowed (an interrupt, the host's other work), never
 * sped up, and an interrupt slows one chain, not both alike; a clock that
 * moves slows or speeds both. So a point whose two rulers disagree was
 * disturbed and is left out, and two neighbouring points whose rulers agree
 * within themselves but not with each other saw the clock hop between them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastcpu.h"
#include "timing.h"

/* One ruler chain timed: `blocks` blocks of FC_RULER_BLOCK dependent
 * instructions of `latency` core cycles, plus the timer's own `fixed`
 * core cycles (the fences and reads: fastcpu/_conversion.py measures them
 * once per process). Counting the fixed cost in core cycles keeps it right
 * at every level of a clock that moves. */
static double ruler_sample(enum fc_ruler ruler, uint32_t blocks, double latency, double fixed)
{
    uint64_t ticks = fc_ruler_ticks(ruler, blocks);
    double cycles = (double)FC_RULER_BLOCK * blocks * latency + fixed;
    return cycles / (double)(ticks ? ticks : 1);
}

void fc_ruler_point_take(const struct fc_ruler_args *r, uint64_t run, uint64_t origin_tsc,
                         bool warm_up, struct fc_ruler_point *out)
{
    if (warm_up) /* the first chain after other work runs slow now and then */
        fc_sink(fc_ruler_ticks(FC_RULER_ADD, 1));
    out->run = (double)run;
    out->tsc = (double)(fc_rdtsc() - origin_tsc);
    out->imul = ruler_sample(FC_RULER_IMUL, r->imul_blocks, 3.0, r->imul_fixed_cycles);
    out->add = ruler_sample(FC_RULER_ADD, r->add_blocks, 1.0, r->add_fixed_cycles);
}

/* Whether two readings of core cycles per tick agree within `tol`. */
static bool agree(double a, double b, double tol)
{
    double hi = a > b ? a : b;
    return fabs(a - b) <= tol * hi;
}

/* Each point's level (the mean of its rulers), or NaN where they disagree
 * (disturbed) or where it stands alone between two neighbours that agree
 * with each other and not with it (an excursion: a clock that moves stays
 * at its new level for many points). How many were left out. */
static size_t point_levels(const struct fc_ruler_point *p, size_t n, double agree_tol, double tol,
                           double *level)
{
    size_t left_out = 0;
    for (size_t j = 0; j < n; j++)
        level[j] = agree(p[j].add, p[j].imul, agree_tol) ? (p[j].add + p[j].imul) / 2 : NAN;
    size_t prev = n; /* the last undisturbed point before j */
    for (size_t j = 0; j < n; j++) {
        if (isnan(level[j]))
            continue;
        size_t next = j + 1;
        while (next < n && isnan(level[next]))
            next++;
        if (prev < n && next < n && agree(level[prev], level[next], tol) &&
            !agree(level[j], level[prev], tol) && !agree(level[j], level[next], tol))
            level[j] = NAN;
        else
            prev = j;
    }
    for (size_t j = 0; j < n; j++)
        left_out += isnan(level[j]);
    return left_out;
}

/* The levels lowest first (an insertion sort of FC_LEVELS_MAX at most), as
 * a result keeps them: Python then takes them as they are. */
static void sort_levels(struct fc_conversion *c)
{
    for (uint32_t i = 1; i < c->levels; i++) {
        double v = c->level[i];
        uint32_t count = c->level_points[i], j = i;
        for (; j > 0 && c->level[j - 1] > v; j--) {
            c->level[j] = c->level[j - 1];
            c->level_points[j] = c->level_points[j - 1];
        }
        c->level[j] = v;
        c->level_points[j] = count;
    }
}

void fc_convert(const struct fc_ruler_point *p, size_t n, double agree_tol, double tol,
                double resolution, struct fc_conversion *out)
{
    memset(out, 0, sizeof *out);
    out->cycles_per_tick = NAN;
    out->points = (uint32_t)n;
    out->level_min = out->level_max = NAN;
    if (n == 0)
        return;
    out->span_ticks = p[n - 1].tsc - p[0].tsc;
    double *level = malloc(n * sizeof *level);
    size_t *segment = malloc(n * sizeof *segment);
    if (!level || !segment) {
        free(level);
        free(segment);
        return; /* NaN: the caller says no conversion */
    }
    out->disturbed = (uint32_t)point_levels(p, n, agree_tol, tol, level);
    double sum_add = 0, sum_imul = 0;
    for (size_t j = 0; j < n; j++) {
        sum_add += p[j].add;
        sum_imul += p[j].imul;
    }
    size_t valid = n - out->disturbed;
    if (valid == 0) { /* no level to convert with: the caller says why */
        out->add_mean = sum_add / n;
        out->imul_mean = sum_imul / n;
        goto done;
    }
    sum_add = sum_imul = 0;
    /* segments: runs of undisturbed points at one level, each point joining
     * the current segment while it agrees with the segment's mean */
    double seg_sum[2] = {0}, seg_sq = 0; /* the current segment's sum, sum of squares */
    size_t seg_count = 0, segments = 0;
    struct {
        double mean, half; /* level, its relative 95% half-width */
    } *seg = malloc(n * sizeof *seg);
    if (!seg)
        goto done;
    out->level_min = INFINITY;
    out->level_max = -INFINITY;
    for (size_t j = 0; j <= n; j++) {
        bool end = j == n;
        if (!end && isnan(level[j]))
            continue;
        if (end || (seg_count && !agree(seg_sum[0] / seg_count, level[j], tol))) {
            double mean = seg_sum[0] / seg_count;
            double var = seg_count > 1 ? (seg_sq - seg_count * mean * mean) / (seg_count - 1) : 0;
            double sd_rel = var > 0 ? sqrt(var) / mean : 0;
            /* the scatter of the mean, or what the counter's step leaves in
             * it (each reading off by up to half a step, evenly), whichever
             * is wider */
            double step_rel = resolution / sqrt(12.0 * 2.0 * (double)seg_count);
            double scatter = sd_rel / sqrt((double)seg_count);
            seg[segments].mean = mean;
            seg[segments].half = 1.96 * (scatter > step_rel ? scatter : step_rel);
            segments++;
            seg_sum[0] = seg_sq = 0;
            seg_count = 0;
            if (end)
                break;
        }
        segment[j] = segments;
        seg_sum[0] += level[j];
        seg_sq += level[j] * level[j];
        seg_count++;
        sum_add += p[j].add;
        sum_imul += p[j].imul;
        out->level_min = level[j] < out->level_min ? level[j] : out->level_min;
        out->level_max = level[j] > out->level_max ? level[j] : out->level_max;
    }
    out->add_mean = sum_add / valid;
    out->imul_mean = sum_imul / valid;
    out->hops = (uint32_t)(segments - 1);

    /* each stretch between two undisturbed points: its segment's level, or
     * where a hop fell between them, the midpoint of the two levels with
     * half their gap; runs before the first or after the last undisturbed
     * point: that point's segment */
    double runs_total = 0, per_cycle = 0, half = 0;
    size_t prev = n;
    for (size_t j = 0; j < n; j++) {
        if (isnan(level[j]))
            continue;
        double runs = p[j].run - (prev == n ? 0.0 : p[prev].run);
        if (runs > 0) {
            const size_t a = prev == n ? segment[j] : segment[prev], b = segment[j];
            double mid = (seg[a].mean + seg[b].mean) / 2;
            double h = a == b ? seg[a].half
                              : fabs(seg[a].mean - seg[b].mean) / 2 / mid +
                                    (seg[a].half > seg[b].half ? seg[a].half : seg[b].half);
            if (a != b)
                out->hop_runs += runs;
            runs_total += runs;
            per_cycle += runs / mid;
            half += runs * h;
        }
        prev = j;
    }
    double tail = p[n - 1].run - p[prev].run;
    if (tail > 0) {
        runs_total += tail;
        per_cycle += tail / seg[segment[prev]].mean;
        half += tail * seg[segment[prev]].half;
    }
    if (runs_total <= 0) { /* no runs between the points: their first segment */
        runs_total = 1;
        per_cycle = 1 / seg[0].mean;
        half = seg[0].half;
    }
    out->cycles_per_tick = runs_total / per_cycle;
    /* and half the rulers' disagreement, which is reported, not averaged away */
    double rulers = fabs(out->add_mean - out->imul_mean) / (out->add_mean + out->imul_mean);
    out->ci95 = out->cycles_per_tick * (half / runs_total + rulers);

    /* the levels the clock was seen at: each segment joins the first level
     * it agrees with, or opens one (FC_LEVELS_MAX at most) */
    double level_sum[FC_LEVELS_MAX];
    for (size_t k = 0; k < segments; k++) {
        uint32_t count = 0;
        for (size_t j = 0; j < n; j++)
            count += !isnan(level[j]) && segment[j] == k;
        uint32_t l = 0;
        while (l < out->levels && !agree(level_sum[l] / out->level_points[l], seg[k].mean, tol))
            l++;
        if (l == out->levels) {
            if (l == FC_LEVELS_MAX)
                continue;
            out->levels++;
            level_sum[l] = 0;
        }
        level_sum[l] += seg[k].mean * count;
        out->level_points[l] += count;
    }
    for (uint32_t l = 0; l < out->levels; l++)
        out->level[l] = level_sum[l] / out->level_points[l];
    sort_levels(out);
    free(seg);
done:
    free(level);
    free(segment);
}

double fc_ruler_resolution(double step_ticks, double cycles_per_tick, uint32_t add_blocks,
                           uint32_t imul_blocks)
{
    /* the coarser of the two chains: one step of the counter over its ticks */
    double add_ticks = (double)FC_RULER_BLOCK * add_blocks / cycles_per_tick;
    double imul_ticks = 3.0 * FC_RULER_BLOCK * imul_blocks / cycles_per_tick;
    double shorter = add_ticks < imul_ticks ? add_ticks : imul_ticks;
    return step_ticks / shorter;
}

double fc_ruler_tolerance(double resolution)
{
    /* a chain read a few clock steps long is the counter's granularity, not
     * a disturbance; below 1% a guest's rulers scatter anyway */
    double tol = 3 * resolution;
    return tol > 0.01 ? tol : 0.01; /* NaN compares false: 1% */
}
