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
 * within themselves but not with each other saw the clock hop between them,
 * where both rulers moved by the same fraction and the body timed between
 * them moved with them. The body's ticks show where: they step by the ratio
 * of the two levels there, so the stretch is converted apart, each side at
 * its own level. Where the rulers moved apart, or the body held, other work
 * slowed a ruler point (a slowdown, not a hop); that stretch, and one whose
 * body says neither, is converted at the midpoint of the two levels.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "conversion.h"
#include "timing.h"

/* One ruler chain timed: `blocks` blocks of `per_block` dependent
 * instructions of `latency` core cycles, plus the timer's own `fixed`
 * core cycles (the fences and reads: fastcpu/_conversion.py measures them
 * once per process). Counting the fixed cost in core cycles keeps it right
 * at every level of a clock that moves. */
static double ruler_sample(enum fc_ruler ruler, uint32_t blocks, double per_block, double latency,
                           double fixed)
{
    uint64_t ticks = fc_ruler_ticks(ruler, blocks);
    double cycles = per_block * blocks * latency + fixed;
    return cycles / (double)(ticks ? ticks : 1);
}

void fc_ruler_point_take(const struct fc_ruler_args *r, uint64_t run, uint64_t origin_tsc,
                         bool warm_up, struct fc_ruler_point *out)
{
    if (warm_up) /* the first chain after other work runs slow now and then */
        fc_sink(fc_ruler_ticks(FC_RULER_ADD, 1));
    out->run = (double)run;
    out->tsc = (double)(fc_rdtsc() - origin_tsc);
    out->imul = ruler_sample(FC_RULER_IMUL, r->imul_blocks, FC_IMUL_RULER_BLOCK, 3.0, r->imul_fixed_cycles);
    out->add = ruler_sample(FC_RULER_ADD, r->add_blocks, FC_RULER_BLOCK, 1.0, r->add_fixed_cycles);
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

/* Runs on either side of a hop at least, for its place to be read off them. */
#define HOP_SIDE_MIN 8

/* The k-th smallest of v[0 .. n) (k < n), v reordered: Hoare's selection,
 * linear on average. A stretch holds up to a millisecond of runs (tens of
 * thousands for a short body), and sorting it at every level change cost
 * more than the runs' own conversion. */
static double kth_smallest(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break; /* v[k] equals the pivot */
    }
    return v[k];
}

/* What a stretch's runs say of a level change between its two points. */
enum body_verdict {
    BODY_SILENT, /* too few runs, or a body too short or too scattered to tell */
    BODY_STEP,   /* the body's ticks step there by the levels' ratio: a hop, placed */
    BODY_FLAT,   /* the body's ticks held, well within the levels' change: no hop */
};

/* What the runs [r0, r1) say of a change from level la to lb: read off the
 * body's ticks (each run's two sides' difference: the harness's own reads
 * cancel, and with them most of what a busy sibling thread slows; a
 * dependent chain's ticks follow the clock alone), each far from their
 * median (an interrupt) counted at the median. The split
 * that parts them into the two most different means is a step where it
 * stands out from their scatter (4 standard errors) with the levels' sign
 * and size within half (a body's ticks scale as 1 / level); the body held
 * where no split of the middle half comes within 4 standard errors of half
 * the levels' change. On a GenuineIntel family 6 model 167 guest, an imul
 * chain's body held (138-140 TSC ticks) through most changes its rulers
 * saw while a sibling was busy, and stepped 138 -> 134 TSC ticks where both
 * rulers rose 2.9%. *split: runs before a step; *err_runs: how far off that may be
 * (noise over step squared, four times, and a run); *mismatch: how far the
 * body's step and the levels' change differ (a fraction: what converting
 * each side at its level may leave). */
static enum body_verdict read_body(const struct fc_run_ticks *t, size_t r0, size_t r1, double la,
                                   double lb, double *split, double *err_runs, double *mismatch)
{
    if (!t || !t->a || !t->b || r1 > t->runs || r1 < r0 + 2 * HOP_SIDE_MIN)
        return BODY_SILENT;
    const size_t n = r1 - r0;
    double *x = malloc(n * sizeof *x), *sum = malloc((n + 1) * sizeof *sum),
           *sq = malloc((n + 1) * sizeof *sq);
    enum body_verdict verdict = BODY_SILENT;
    if (!x || !sum || !sq)
        goto done;
    for (size_t i = 0; i < n; i++)
        x[i] = (double)t->a[r0 + i] - (double)t->b[r0 + i];
    memcpy(sum, x, n * sizeof *x); /* a scratch copy for the median */
    const double median = kth_smallest(sum, n, n / 2);
    if (!(median > 0))
        goto done; /* no body to read */
    /* an interrupt lies beyond a quarter of the body and six of its
     * scatters (the median absolute deviation, scaled to a standard
     * deviation) */
    for (size_t i = 0; i < n; i++)
        sum[i] = fabs(x[i] - median);
    const double scatter = 6 * 1.4826 * kth_smallest(sum, n, n / 2);
    const double far = median / 4 > scatter ? median / 4 : scatter;
    sum[0] = sq[0] = 0;
    for (size_t i = 0; i < n; i++) {
        double v = fabs(x[i] - median) > far ? median : x[i];
        sum[i + 1] = sum[i] + v;
        sq[i + 1] = sq[i] + v * v;
    }
    size_t s = 0;
    double best = -1;
    for (size_t k = HOP_SIDE_MIN; k <= n - HOP_SIDE_MIN; k++) {
        double d = sum[k] / k - (sum[n] - sum[k]) / (n - k);
        double stat = (double)k * (double)(n - k) * d * d;
        if (stat > best) {
            best = stat;
            s = k;
        }
    }
    const double left = sum[s] / s, right = (sum[n] - sum[s]) / (n - s), d = left - right;
    double var = (sq[s] - s * left * left + (sq[n] - sq[s]) - (n - s) * right * right) / (n - 2);
    var = var > 0 ? var : 0;
    const double se = sqrt(var * (1.0 / s + 1.0 / (n - s)));
    const double change = log(lb / la), ratio = log(left / right) / change;
    if (fabs(d) > 4 * se && ratio >= 0.5 && ratio <= 1.5) {
        *split = (double)s;
        *err_runs = 4 * var / (d * d) + 1;
        *mismatch = fabs(log(left / right) - change);
        verdict = BODY_STEP;
    } else {
        /* held: no split of the middle half (a hop nearer an end moves few
         * runs) steps by half the change, by 4 standard errors (of the
         * whole stretch's scatter: a step there only widens it) */
        const double sd = sqrt(fmax(0, (sq[n] - sum[n] * sum[n] / n) / (n - 1)));
        double worst = 0;
        for (size_t k = n / 4; k <= n - n / 4; k++) {
            double dk = fabs(sum[k] / k - (sum[n] - sum[k]) / (n - k)) +
                        4 * sd * sqrt(1.0 / k + 1.0 / (n - k));
            worst = dk > worst ? dk : worst;
        }
        if (worst < median * fabs(change) / 2)
            verdict = BODY_FLAT;
    }
done:
    free(x);
    free(sum);
    free(sq);
    return verdict;
}

/* Whether both rulers moved by the same fraction from point x to point y
 * (each within half of their mean move), as a clock that hops moves them.
 * A neighbour that slows the core's work moves them apart: on a
 * GenuineIntel family 6 model 167 guest the add ruler fell 2-3% and the imul
 * ruler 0.3-1% while the runs took 4-7% longer, with the clock where it
 * was. Such a stretch is no hop to place: its runs' step is not the
 * clock's. */
static bool rulers_moved_alike(const struct fc_ruler_point *x, const struct fc_ruler_point *y)
{
    double add = log(y->add / x->add), imul = log(y->imul / x->imul), mean = (add + imul) / 2;
    return fabs(add - mean) <= fabs(mean) / 2;
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
                double resolution, const struct fc_run_ticks *run_ticks, struct fc_conversion *out)
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

    /* each stretch between two undisturbed points: its segment's level, or
     * where a hop fell between them, each side of the hop its runs show at
     * its own level, what its place may be off by times their gap and how
     * far the body's step and the levels' change differ added;
     * where they show none, or where the two points' rulers moved apart or
     * the body held (a slowdown: other work, not the clock alone), the
     * midpoint of the two levels with half their gap; runs before the first
     * or after the last undisturbed point: that point's segment */
    double runs_total = 0, per_cycle = 0, half = 0;
    size_t prev = n;
    for (size_t j = 0; j < n; j++) {
        if (isnan(level[j]))
            continue;
        double runs = p[j].run - (prev == n ? 0.0 : p[prev].run);
        const size_t a = prev == n ? segment[j] : segment[prev], b = segment[j];
        double before = 0, err = 0, mismatch = 0;
        const enum body_verdict body = a == b || runs <= 0 ? BODY_SILENT
            : read_body(run_ticks, (size_t)p[prev].run, (size_t)p[j].run, seg[a].mean, seg[b].mean,
                        &before, &err, &mismatch);
        /* a hop moves both rulers alike and a body that follows the clock
         * with them; rulers that moved apart, or a body that held, say
         * other work slowed a ruler point: a slowdown */
        const bool alike = a == b || (rulers_moved_alike(&p[prev], &p[j]) && body != BODY_FLAT);
        if (a != b) {
            out->hops += alike;
            out->slowdowns += !alike;
            out->hop_runs += alike ? runs : 0;
        }
        if (runs > 0) {
            const double la = seg[a].mean, lb = seg[b].mean, mid = (la + lb) / 2;
            const double worse = seg[a].half > seg[b].half ? seg[a].half : seg[b].half;
            if (a == b) {
                per_cycle += runs / la;
                half += runs * seg[a].half;
            } else if (alike && body == BODY_STEP) {
                const double share = err / runs < 0.5 ? err / runs : 0.5;
                per_cycle += before / la + (runs - before) / lb;
                half += runs * (fabs(la - lb) / mid * share + mismatch + worse);
                out->hops_located++;
            } else {
                per_cycle += runs / mid;
                half += runs * (fabs(la - lb) / 2 / mid + worse);
            }
            runs_total += runs;
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
    double imul_ticks = 3.0 * FC_IMUL_RULER_BLOCK * imul_blocks / cycles_per_tick;
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
