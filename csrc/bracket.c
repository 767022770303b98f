/*
 * bracket.c: core cycles per TSC tick at the moment of one measurement, from
 * the add-chain samples timed just before and just after it and those of
 * the measurements shortly before (fastcpu/_bracket.py says why each step).
 * Plain arithmetic on a few dozen values at most; it lives in C because
 * bench() pays it on every call, and in Python it cost about 13 us of a
 * 150 us bench(m, 1000) on an AuthenticAMD family 25 model 1 (Zen 3) guest.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "fastcpu.h"

/* Insertion sort: n is a handful, and it keeps equal values in order. */
static void sort_doubles(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        double x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* The median of v[0 .. n), n >= 1; sorts v. */
static double median_sorting(double *v, size_t n)
{
    sort_doubles(v, n);
    size_t h = n / 2;
    return n % 2 ? v[h] : (v[h - 1] + v[h]) * 0.5;
}

/* The median of v[0 .. n), 1 <= n <= 2 * FC_BRACKET_SAMPLES_MAX, leaving v
 * as it is. */
static double median_of(const double *v, size_t n)
{
    double scratch[2 * FC_BRACKET_SAMPLES_MAX];
    memcpy(scratch, v, n * sizeof *v);
    return median_sorting(scratch, n);
}

/* The median absolute deviation of v[0 .. n) from `center`. */
static double mad_of(const double *v, size_t n, double center)
{
    double dev[2 * FC_BRACKET_SAMPLES_MAX];
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(v[i] - center);
    return median_sorting(dev, n);
}

/* The samples within `tol` (a fraction) of the fastest, in order, into out;
 * how many. A chain can only be slowed, never sped up: the fastest is the
 * least disturbed. */
static size_t undisturbed(const double *v, size_t n, double tol, double *out)
{
    double top = v[0];
    for (size_t i = 1; i < n; i++)
        top = v[i] > top ? v[i] : top;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] >= top * (1 - tol))
            out[kept++] = v[i];
    return kept;
}

double fc_bracket_resolution(double step_ticks, double cycles_per_tick, uint32_t blocks)
{
    return step_ticks / ((double)FC_RULER_BLOCK * blocks / cycles_per_tick);
}

double fc_bracket_tolerance(double step_ticks, double cycles_per_tick, uint32_t blocks)
{
    /* an interrupt only ever lengthens a chain; a chain read a few clock
     * steps long is the clock's granularity, not a disturbance */
    double tol = 3 * fc_bracket_resolution(step_ticks, cycles_per_tick, blocks);
    return tol > 0.01 ? tol : 0.01;
}

/* The 95% half-width the clock's step alone leaves in a figure from n
 * samples: each sample's tick count is off by up to half a step, evenly
 * (the chains start at random phases of the step), so by resolution /
 * sqrt(12) relative, and their mean by that over sqrt(n). Samples that all
 * read the same tick count show no scatter of their own, yet this much. */
static double step_ci95(double value, double resolution, size_t n)
{
    return 1.96 * value * resolution / sqrt(12.0 * (double)n);
}

void fc_bracket_figure(const double *before, size_t n_before, const double *after,
                       size_t n_after, const double *recent, size_t n_recent, double tol,
                       double resolution, double *value, double *ci95)
{
    double b[FC_BRACKET_SAMPLES_MAX], a[FC_BRACKET_SAMPLES_MAX];
    size_t nb = undisturbed(before, n_before, tol, b);
    size_t na = undisturbed(after, n_after, tol, a);
    double mb = median_of(b, nb), ma = median_of(a, na);
    double gap = fabs(ma - mb) / 2;
    bool one_side = false;
    if (n_recent > 0) {
        double top = recent[0];
        for (size_t i = 1; i < n_recent; i++)
            top = recent[i] > top ? recent[i] : top;
        double floor_ = top * (1 - tol);
        bool keep_b = mb >= floor_, keep_a = ma >= floor_;
        if (!keep_b && !keep_a) {
            /* both sides disturbed: the recent chains give the figure, and
             * how far this measurement's sides read from it widens it */
            double kept[FC_BRACKET_SAMPLES_MAX];
            size_t nk = undisturbed(recent, n_recent, tol, kept);
            double center = median_of(kept, nk);
            *value = center;
            *ci95 = gap + fabs(center - (mb + ma) / 2) / 2 + 2 * mad_of(kept, nk, center) +
                    step_ci95(center, resolution, nk);
            return;
        }
        if (keep_b != keep_a) { /* the other side was disturbed: no gap to speak of */
            if (keep_a) {
                memcpy(b, a, na * sizeof *a);
                nb = na;
                mb = ma;
            }
            ma = mb;
            gap = 0;
            one_side = true;
        }
    }
    double all[2 * FC_BRACKET_SAMPLES_MAX];
    memcpy(all, b, nb * sizeof *b);
    size_t n = nb;
    if (!one_side) {
        memcpy(all + nb, a, na * sizeof *a);
        n += na;
    }
    double center = median_of(all, n);
    *value = (mb + ma) / 2;
    *ci95 = gap + 2 * mad_of(all, n, center) + step_ci95(*value, resolution, n);
}

/*
 * The brackets this thread took lately. Per thread (C11 _Thread_local), not
 * per module instance: a bracket describes the core a thread ran on at a
 * moment, whichever interpreter asked. Entries are in the order taken.
 */
struct bracket_entry {
    uint64_t ns; /* CLOCK_MONOTONIC, when its chains ended */
    int cpu;
    uint32_t n;
    double samples[FC_BRACKET_CHAINS_MAX];
};

static _Thread_local struct {
    struct bracket_entry ring[FC_BRACKET_RECENT];
    uint32_t count, next; /* entries held; where the next one goes */
    bool have_last;       /* ring[last] is a closing bracket */
    uint32_t last;
} history;

uint64_t fc_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fc_bracket_remember(const double *samples, uint32_t n, uint64_t ns, int cpu, bool closing)
{
    if (n > FC_BRACKET_CHAINS_MAX)
        n = FC_BRACKET_CHAINS_MAX;
    struct bracket_entry *e = &history.ring[history.next];
    e->ns = ns;
    e->cpu = cpu;
    e->n = n;
    memcpy(e->samples, samples, n * sizeof *samples);
    if (closing) {
        history.last = history.next;
        history.have_last = true;
    } else if (history.have_last && history.last == history.next) {
        history.have_last = false; /* overwritten */
    }
    history.next = (history.next + 1) % FC_BRACKET_RECENT;
    if (history.count < FC_BRACKET_RECENT)
        history.count++;
}

size_t fc_bracket_recent(uint64_t now_ns, int cpu, double *out)
{
    size_t found = 0;
    for (uint32_t k = 0; k < history.count; k++) {
        const struct bracket_entry *e =
            &history.ring[(history.next + FC_BRACKET_RECENT - 1 - k) % FC_BRACKET_RECENT];
        if (e->ns + FC_BRACKET_RECENT_NS < now_ns)
            break; /* this one and every earlier one too old */
        if (e->cpu == cpu) {
            memcpy(out + found, e->samples, e->n * sizeof *out);
            found += e->n;
        }
    }
    return found;
}

uint32_t fc_bracket_reusable(uint64_t now_ns, int cpu, double *out)
{
    if (!history.have_last)
        return 0;
    const struct bracket_entry *e = &history.ring[history.last];
    if (e->cpu != cpu || e->ns + FC_BRACKET_REUSE_NS < now_ns)
        return 0;
    memcpy(out, e->samples, e->n * sizeof *out);
    return e->n;
}

void fc_bracket_forget(void)
{
    history.count = history.next = 0;
    history.have_last = false;
}

void fc_bracket_chains(uint32_t blocks, uint32_t chains, double fixed_ticks, double *samples)
{
    uint64_t ticks[FC_BRACKET_CHAINS_MAX];
    fc_add_chain_samples(blocks, chains, ticks);
    for (uint32_t i = 0; i < chains; i++) {
        double t = (double)ticks[i] - fixed_ticks;
        samples[i] = (double)FC_RULER_BLOCK * blocks / (t > 1.0 ? t : 1.0);
    }
}
