/*
 * estimate.c: the estimate fastcpu recommends for one bench() measurement,
 * computed where the runs are, beside best and median (glue_bench.c calls
 * it in the GIL release of the last chunk's statistics). It is
 * fastcpu/results/estimate.py's recommend() on up to FC_ESTIMATE_RUNS_MAX
 * runs (its whole-array path, _recommend_small) step for step: the same
 * integers (medians and deviations are order statistics, exact in int64
 * below 2^61), the same floating-point operations in the same order (the
 * mean's sum as numpy sums a cast int64 array: pairwise within buffers of
 * 8192 values; the powers and square roots through the same libm), so the
 * same figures. One sum cannot be ordered as Python orders it: the sum of
 * squared deviations, which numpy hands to its BLAS (np.dot); it is summed
 * here as OpenBLAS's AVX2 kernel sums it (16 lanes of fused multiply-adds,
 * folded pairwise), which gives the BLAS's own bits on hosts that run that
 * kernel and agrees to the last bits elsewhere (tests/test_c_estimate.py).
 *
 * Every figure is in counts of the counter (TSC ticks, or core cycles on a
 * PMU counter), per copy of the sequence above the empty sequence.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate.h"
#include "harness.h"

/* estimate.py's constants, as its Python literals read. */
#define MEDIAN_SPREAD_STEPS 2.0
#define FENCE_STEPS 8.0
#define FENCE_SIGMAS 5.0
#define FENCE_RELATIVE 0.05
#define Z975 1.959964
#define MAD_SIGMA 1.4826

static const double t975[30] = {
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

/* x ** y as Python's float ** reads it: libm's pow() at run time (a
 * volatile exponent, so that the compiler neither folds it nor turns
 * x ** 2 into x * x, which pow() need not round alike). */
static double py_pow(double x, double y)
{
    volatile double e = y;
    return pow(x, e);
}

/* estimate.t95: the two-sided 95% quantile of Student's t. */
static double t95(size_t df)
{
    if (df < 1)
        return INFINITY;
    if (df <= 30)
        return t975[df - 1];
    double z = Z975, d = (double)df;
    return z + (py_pow(z, 3) + z) / (4 * d) +
           (5 * py_pow(z, 5) + 16 * py_pow(z, 3) + 3 * z) / (96 * (double)(df * df));
}

/* ---- order statistics ------------------------------------------------ */

/* Order statistics by harness.c's radix select (one implementation with
 * bench()'s median): the int64 runs read as signed keys, left in place. */
static int64_t value_of(uint64_t key)
{
    uint64_t u = key ^ FC_KEY_SIGNED; /* two's complement, without an implementation-defined cast */
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : (int64_t)(u - (uint64_t)INT64_MAX - 1) + INT64_MIN;
}

/* The smallest and largest of x[0..n) as keys (a span: the radix select's
 * bounds, worked out in a pass that reads x anyway). */
struct span {
    uint64_t lo, hi;
};

static uint64_t key_of(int64_t value)
{
    return (uint64_t)value ^ FC_KEY_SIGNED;
}

static struct span span_of(int64_t lo, int64_t hi)
{
    return (struct span){key_of(lo), key_of(hi)};
}

/* A sample's values, their span and one window of them (harness.c's
 * fc_count_window around the middle run's value): most ranks, and the
 * deviations from a centre, are read off the window; the rest by the radix
 * select over the whole sample. */
struct sample {
    const int64_t *x;
    size_t n;
    struct span s;
    struct fc_key_window w;
};

static void sample_of(struct sample *a, const int64_t *x, size_t n, struct span s)
{
    a->x = x;
    a->n = n;
    a->s = s;
    fc_count_window((const uint64_t *)x, n, FC_KEY_SIGNED, s.lo, s.hi, key_of(x[n / 2]), &a->w);
}

/* One sample's window tallied while another pass reads the values (the
 * first pass over the runs fills all three, of the raw runs, the empty ones
 * and their differences, rather than a pass each): 256 values from `base`
 * (the middle run's value less 128), those below and above counted apart;
 * four tallies taken in turn, as fc_count_window's, so that a stretch of
 * equal values does not wait on each increment's store. The ranks read off
 * it are the same wherever the window lies: one that falls outside is
 * found by the radix select (rank_of, middle). */
struct tally {
    int64_t base;
    uint32_t t[4][258]; /* [256]: below the window, [257]: above */
};

static inline void tally_add(struct tally *t, size_t lane, int64_t x)
{
    uint64_t off = (uint64_t)x - (uint64_t)t->base; /* below base: wraps past 255 */
    t->t[lane][off < 256 ? off : 256 + (x > t->base)]++;
}

/* The sample of x[0..n) within s, its window the one tallied. */
static void sample_tallied(struct sample *a, const int64_t *x, size_t n, struct span s,
                           const struct tally *t)
{
    a->x = x;
    a->n = n;
    a->s = s;
    fc_window_of_tallies((const uint32_t(*)[258])t->t, key_of(t->base), n, &a->w);
}

/* The value of rank k (0-based). */
static int64_t rank_of(const struct sample *a, size_t k)
{
    uint64_t key;
    if (!fc_window_rank(&a->w, k, &key, NULL))
        key = fc_select_key((const uint64_t *)a->x, a->n, k, FC_KEY_SIGNED, a->s.lo, a->s.hi);
    return value_of(key);
}

/* numpy's median ranks (n >= 1): the middle value (returns 1) or the two
 * middle values, lower first (returns 2). */
static int middle(const struct sample *a, int64_t mid[2])
{
    uint64_t keys[2];
    int count = a->n % 2 ? 1 : 2;
    if (!fc_window_rank(&a->w, a->n / 2, &keys[1], count == 2 ? &keys[0] : NULL))
        count = fc_middle_keys((const uint64_t *)a->x, a->n, FC_KEY_SIGNED, a->s.lo, a->s.hi, keys);
    else if (count == 1)
        keys[0] = keys[1];
    mid[0] = value_of(keys[0]);
    mid[1] = value_of(keys[1]);
    return count;
}

/* What estimate.py reads off the middle values: float(m) or (m0 + m1) / 2. */
static double mean_of_middle(const int64_t mid[2], int count)
{
    return count == 1 ? (double)mid[0] : ((double)mid[0] + (double)mid[1]) / 2;
}

/* The middle deviations |2 x - twice| (numpy's median ranks of them, lower
 * first) read off the window, walking out from `twice` / 2 in order of
 * deviation: true where every rank needed lies at a deviation no larger
 * than the smallest of a value outside the window (so none of those comes
 * before it). */
static bool window_deviations(const struct fc_key_window *w, int64_t twice, int64_t mid[2])
{
    const int64_t none = INT64_MAX;
    size_t want_lo = w->n % 2 ? w->n / 2 : w->n / 2 - 1, want_hi = w->n / 2, seen = 0;
    int64_t v0 = value_of(w->base); /* slot c holds the value v0 + c */
    int64_t bound = none;
    if (w->below) { /* values at most v0 - 1 */
        int64_t b = twice - 2 * (v0 - 1);
        if (b < 0)
            return false;
        bound = b;
    }
    if (w->above) { /* values at least v0 + 256 */
        int64_t b = 2 * (v0 + 256) - twice;
        if (b < 0)
            return false;
        bound = b < bound ? b : bound;
    }
    int64_t t = twice - 2 * v0;
    int right = t <= 0 ? 0 : t >= 512 ? 256 : (int)((t + 1) / 2); /* the first slot at or above */
    int left = right - 1;
    bool low_found = false;
    while (left >= 0 || right < 256) {
        int64_t dl = left >= 0 ? twice - 2 * (v0 + left) : none;
        int64_t dr = right < 256 ? 2 * (v0 + right) - twice : none;
        int64_t dev = dl < dr ? dl : dr;
        if (dev > bound)
            return false;
        size_t here = 0;
        if (dl == dev)
            here += w->count[left--];
        if (dr == dev)
            here += w->count[right++];
        if (!here)
            continue;
        seen += here;
        if (!low_found && seen > want_lo) {
            mid[0] = dev;
            low_found = true;
        }
        if (seen > want_hi) {
            mid[1] = dev;
            return true;
        }
    }
    return false;
}

/* estimate._small_center_and_sigma: (median, 1.4826 x MAD) of the sample
 * (n >= 1, |values| below 2^61); `scratch` (n values) where the deviations
 * are not read off its window. */
static double center_and_sigma(const struct sample *a, int64_t *scratch, double *sigma)
{
    int64_t mid[2], dev[2] = {0, 0};
    int count = middle(a, mid);
    double center = mean_of_middle(mid, count);
    int64_t twice = count == 1 ? 2 * mid[0] : mid[0] + mid[1];
    if (window_deviations(&a->w, twice, dev)) {
        count = a->n % 2 ? 1 : 2;
    } else {
        int64_t widest = 0;
        for (size_t i = 0; i < a->n; i++) {
            int64_t y = 2 * a->x[i] - twice; /* within +-2^63: exact */
            scratch[i] = y < 0 ? -y : y;
            widest = scratch[i] > widest ? scratch[i] : widest;
        }
        struct sample devs;
        sample_of(&devs, scratch, a->n, span_of(0, widest));
        count = middle(&devs, dev);
    }
    *sigma = MAD_SIGMA * mean_of_middle(dev, count) / 2;
    return center;
}

/* estimate._median_ranks: the order statistics bounding the
 * distribution-free 95% interval of the median of n values. */
static void median_ranks(size_t n, size_t *lo, size_t *hi)
{
    double half_rank = Z975 * sqrt((double)n) / 2;
    double low = floor((double)n / 2 - half_rank), high = ceil((double)n / 2 + half_rank);
    *lo = low > 0 ? (size_t)low : 0;
    *hi = high < (double)(n - 1) ? (size_t)high : n - 1;
}

/* Half-width of that interval of the sample. */
static double median_ci(const struct sample *a)
{
    size_t lo, hi;
    median_ranks(a->n, &lo, &hi);
    int64_t high = rank_of(a, hi);
    int64_t low = lo < hi ? rank_of(a, lo) : high;
    return ((double)high - (double)low) / 2;
}

/* ---- sums ------------------------------------------------------------ */

/* numpy's pairwise sum (loops_utils.h) of x[0..n) cast to float64. */
static double pairwise_sum(const int64_t *x, size_t n)
{
    if (n < 8) {
        double res = 0.;
        for (size_t i = 0; i < n; i++)
            res += (double)x[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        size_t i;
        for (int j = 0; j < 8; j++)
            r[j] = (double)x[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += (double)x[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += (double)x[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(x, n2) + pairwise_sum(x + n2, n - n2);
}

/* ``int64_array.sum(dtype=np.float64)``: numpy casts in buffers of 8192
 * values (its default bufsize) and adds each buffer's pairwise sum. */
static double numpy_sum(const int64_t *x, size_t n)
{
    double acc = 0.;
    for (size_t s = 0; s < n; s += 8192)
        acc = acc + pairwise_sum(x + s, n - s < 8192 ? n - s : 8192);
    return acc;
}

/* sum of ((double)x[i] - mean)^2, as np.dot(dev, dev) sums it on
 * OpenBLAS's Haswell/Zen kernel: four 4-lane accumulators of fused
 * multiply-adds over the first n & -16 values, each folded high half onto
 * low, then added pairwise and across; the rest added one by one. */
static inline __attribute__((always_inline)) double sum_squares_with(const int64_t *x, size_t n,
                                                                      double mean)
{
    double acc[16] = {0};
    size_t n1 = n & ~(size_t)15, i;
    for (i = 0; i < n1; i += 16)
        for (int j = 0; j < 16; j++) {
            double d = (double)x[i + j] - mean;
            acc[j] = fma(d, d, acc[j]);
        }
    double dot = 0.;
    if (n1) {
        double h[4][2];
        for (int a = 0; a < 4; a++)
            for (int l = 0; l < 2; l++)
                h[a][l] = acc[4 * a + l] + acc[4 * a + l + 2];
        double p[2];
        for (int l = 0; l < 2; l++)
            p[l] = (h[0][l] + h[1][l]) + (h[2][l] + h[3][l]);
        dot = p[0] + p[1];
    }
    for (; i < n; i++) {
        double d = (double)x[i] - mean;
        dot += d * d;
    }
    return dot;
}

/* The same sum with the fused multiply-add inlined where the CPU has one
 * (an FMA rounds once either way: the same bits as libm's fma()), rather
 * than a libm call per value. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("fma"))) static double sum_squares_fma(const int64_t *x, size_t n, double mean)
{
    return sum_squares_with(x, n, mean);
}
#endif

static double sum_squares(const int64_t *x, size_t n, double mean)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("fma"))
        return sum_squares_fma(x, n, mean);
#endif
    return sum_squares_with(x, n, mean);
}

/* ---- the estimate ---------------------------------------------------- */

/* The median difference of the kept runs r (a sample) and e. */
static void median_difference(const struct sample *r, const struct sample *e, double step,
                              uint32_t unroll, struct fc_estimate *out)
{
    int64_t mid[2];
    int count = middle(r, mid);
    double raw_median = mean_of_middle(mid, count);
    count = middle(e, mid);
    double empty_median = mean_of_middle(mid, count);
    double ci_r = median_ci(r), ci_e = median_ci(e);
    double rounding = Z975 * step / sqrt(6.0); /* two uniform(+-step/2) roundings */
    double ci = sqrt(py_pow(ci_r, 2) + py_pow(ci_e, 2) + py_pow(rounding, 2));
    *out = (struct fc_estimate){(raw_median - empty_median) / unroll, ci / unroll,
                                FC_ESTIMATOR_MEDIAN, r->n};
}

/* The fenced mean of the paired differences (the sample `a`, in run
 * order; `w` scratch of its size), with its t interval. */
static void paired_mean(const struct sample *a, int64_t *w, double step, uint32_t unroll,
                        struct fc_estimate *out)
{
    double sigma;
    const int64_t *d = a->x;
    size_t m = a->n;
    double center = center_and_sigma(a, w, &sigma);
    double half = FENCE_STEPS * step + 2.0; /* Python's max(): the first of the largest */
    if (FENCE_SIGMAS * sigma > half)
        half = FENCE_SIGMAS * sigma;
    if (FENCE_RELATIVE * fabs(center) > half)
        half = FENCE_RELATIVE * fabs(center);
    double low = center - half, high = center + half;
    size_t n = 0;
    for (size_t i = 0; i < m; i++) { /* numpy compares int64 with a float as float64 */
        w[n] = d[i];
        n += (double)d[i] >= low && (double)d[i] <= high;
    }
    double mean = n ? numpy_sum(w, n) / (double)n : NAN;
    if (n < 2) {
        *out = (struct fc_estimate){mean / unroll, INFINITY / unroll, FC_ESTIMATOR_PAIRED_MEAN, n};
        return;
    }
    double spread = sqrt(sum_squares(w, n, mean) / (double)(n - 1));
    *out = (struct fc_estimate){mean / unroll, t95(n - 1) * spread / sqrt((double)n) / unroll,
                                FC_ESTIMATOR_PAIRED_MEAN, n};
}

int fc_recommend(const uint64_t *raw, const uint64_t *empty, const bool *migrated, size_t n,
                 double step, uint32_t unroll, struct fc_estimate *out, struct fc_estimate *paired,
                 struct fc_best_median *all)
{
    if (n == 0 || n > FC_ESTIMATE_RUNS_MAX)
        return 1;
    int64_t *r = malloc(4 * n * sizeof *r);
    if (!r)
        return 1;
    int64_t *e = r + n, *d = e + n, *w = d + n;
    /* one pass: the copies as int64, their differences, the spans, the
     * samples' windows around the middle run's, the pairs that migrated */
    uint64_t r_lo = UINT64_MAX, r_hi = 0, e_lo = UINT64_MAX, e_hi = 0;
    int64_t d_lo = INT64_MAX, d_hi = INT64_MIN;
    size_t moved = 0;
    const uint64_t exact = FC_ESTIMATE_EXACT_BELOW - 1; /* the masks: checked below */
    struct tally *tr = calloc(3, sizeof *tr), *te = tr + 1, *td = tr + 2;
    if (!tr) {
        free(r);
        return 1;
    }
    tr->base = (int64_t)(raw[n / 2] & exact) - 128;
    te->base = (int64_t)(empty[n / 2] & exact) - 128;
    td->base = tr->base - te->base - 128;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = raw[i], b = empty[i];
        r_lo = a < r_lo ? a : r_lo;
        r_hi = a > r_hi ? a : r_hi;
        e_lo = b < e_lo ? b : e_lo;
        e_hi = b > e_hi ? b : e_hi;
        r[i] = (int64_t)(a & exact);
        e[i] = (int64_t)(b & exact);
        d[i] = r[i] - e[i]; /* both below 2^61: exact */
        d_lo = d[i] < d_lo ? d[i] : d_lo;
        d_hi = d[i] > d_hi ? d[i] : d_hi;
        tally_add(tr, i & 3, r[i]);
        tally_add(te, i & 3, e[i]);
        tally_add(td, i & 3, d[i]);
        moved += migrated && migrated[i];
    }
    if (r_hi >= FC_ESTIMATE_EXACT_BELOW || e_hi >= FC_ESTIMATE_EXACT_BELOW) {
        free(tr);
        free(r);
        return 1;
    }
    if (all) /* as fc_best_median() has it */
        all->best = ((double)r_lo - (double)e_lo) / unroll;
    size_t m = n;
    if (moved && moved < n) { /* every pair migrated: all of them kept */
        if (all) /* the medians of every run, before the samples leave migrated pairs out */
            all->median = (fc_median_u64(raw, n) - fc_median_u64(empty, n)) / unroll;
        m = 0;
        r_lo = e_lo = UINT64_MAX;
        r_hi = e_hi = 0;
        d_lo = INT64_MAX;
        d_hi = INT64_MIN;
        for (size_t i = 0; i < n; i++)
            if (!migrated[i]) {
                uint64_t a = raw[i], b = empty[i];
                r_lo = a < r_lo ? a : r_lo;
                r_hi = a > r_hi ? a : r_hi;
                e_lo = b < e_lo ? b : e_lo;
                e_hi = b > e_hi ? b : e_hi;
                r[m] = (int64_t)a;
                e[m] = (int64_t)b;
                d[m] = r[m] - e[m];
                d_lo = d[m] < d_lo ? d[m] : d_lo;
                d_hi = d[m] > d_hi ? d[m] : d_hi;
                m++;
            }
    }
    /* the samples: every run's windows as the first pass tallied them, or
     * counted again over the pairs kept */
    struct sample rs, es, ds;
    struct span r_span = span_of((int64_t)r_lo, (int64_t)r_hi);
    struct span e_span = span_of((int64_t)e_lo, (int64_t)e_hi), d_span = span_of(d_lo, d_hi);
    if (m == n) {
        sample_tallied(&rs, r, m, r_span, tr);
        sample_tallied(&es, e, m, e_span, te);
        sample_tallied(&ds, d, m, d_span, td);
    } else {
        sample_of(&rs, r, m, r_span);
        sample_of(&es, e, m, e_span);
        sample_of(&ds, d, m, d_span);
    }
    free(tr);
    double sigma;
    center_and_sigma(&rs, w, &sigma);
    bool spread = sigma >= MEDIAN_SPREAD_STEPS * step;
    if (spread || (all && m == n)) {
        if (spread)
            median_difference(&rs, &es, step, unroll, out); /* reads r and e in place */
        if (all && m == n) { /* every run is in the samples: their medians are bench()'s */
            int64_t mid[2];
            int count = middle(&rs, mid);
            double raw_median = mean_of_middle(mid, count);
            count = middle(&es, mid);
            all->median = (raw_median - mean_of_middle(mid, count)) / unroll;
        }
    }
    /* the paired mean: the estimate itself below the spread, else beside it */
    paired_mean(&ds, w, step, unroll, paired);
    if (!spread)
        *out = *paired;
    free(r);
    return 0;
}
