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

static void swap(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b;
    *b = t;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The k-th smallest (0-based) of x[0..n), reordering x so that x[0..k)
 * holds values no larger and x(k..n) none smaller (as numpy's partition).
 * Quickselect with a three-way partition (ties cost nothing), sorting what
 * is left after too many rounds (an adversarial order). */
static int64_t select_kth(int64_t *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the k-th lies in x[lo..hi) */
    int rounds = 0;
    while (hi - lo > 1) {
        if (++rounds > 64) {
            qsort(x + lo, hi - lo, sizeof *x, compare_i64);
            break;
        }
        size_t mid = lo + (hi - lo) / 2;
        int64_t a = x[lo], b = x[mid], c = x[hi - 1];
        int64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
        while (i < gt) {
            if (x[i] < pivot)
                swap(&x[lt++], &x[i++]);
            else if (x[i] > pivot)
                swap(&x[i], &x[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return x[k];
}

static int64_t max_of(const int64_t *x, size_t n)
{
    int64_t m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] > m)
            m = x[i];
    return m;
}

/* numpy's median ranks of x[0..n) (n >= 1), reordering x: the middle value
 * (returns 1) or the two middle values, lower first (returns 2). */
static int middle(int64_t *x, size_t n, int64_t mid[2])
{
    size_t k = n / 2;
    int64_t upper = select_kth(x, n, k);
    if (n % 2) {
        mid[0] = mid[1] = upper;
        return 1;
    }
    mid[0] = max_of(x, k); /* x[0..k) holds the k smallest */
    mid[1] = upper;
    return 2;
}

/* What estimate.py reads off the middle values: float(m) or (m0 + m1) / 2. */
static double mean_of_middle(const int64_t mid[2], int count)
{
    return count == 1 ? (double)mid[0] : ((double)mid[0] + (double)mid[1]) / 2;
}

/* estimate._small_center_and_sigma: (median, 1.4826 x MAD) of x[0..n)
 * (n >= 1, |values| below 2^61), reordering and overwriting x. */
static double center_and_sigma(int64_t *x, size_t n, double *sigma)
{
    int64_t mid[2];
    int count = middle(x, n, mid);
    double center = mean_of_middle(mid, count);
    int64_t twice = count == 1 ? 2 * mid[0] : mid[0] + mid[1];
    for (size_t i = 0; i < n; i++) {
        int64_t y = 2 * x[i] - twice; /* within +-2^63: exact */
        x[i] = y < 0 ? -y : y;
    }
    count = middle(x, n, mid);
    *sigma = MAD_SIGMA * mean_of_middle(mid, count) / 2;
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

/* Half-width of that interval of x[0..n) (reordering x). */
static double median_ci(int64_t *x, size_t n)
{
    size_t lo, hi;
    median_ranks(n, &lo, &hi);
    int64_t high = select_kth(x, n, hi);
    int64_t low = lo < hi ? select_kth(x, hi, lo) : high;
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
static double sum_squares(const int64_t *x, size_t n, double mean)
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

/* ---- the estimate ---------------------------------------------------- */

/* The median difference of the kept runs r, e (m of them, reordered). */
static void median_difference(int64_t *r, int64_t *e, size_t m, double step, uint32_t unroll,
                              struct fc_estimate *out)
{
    int64_t mid[2];
    int count = middle(r, m, mid);
    double raw_median = mean_of_middle(mid, count);
    count = middle(e, m, mid);
    double empty_median = mean_of_middle(mid, count);
    double ci_r = median_ci(r, m), ci_e = median_ci(e, m);
    double rounding = Z975 * step / sqrt(6.0); /* two uniform(+-step/2) roundings */
    double ci = sqrt(py_pow(ci_r, 2) + py_pow(ci_e, 2) + py_pow(rounding, 2));
    *out = (struct fc_estimate){(raw_median - empty_median) / unroll, ci / unroll,
                                FC_ESTIMATOR_MEDIAN, m};
}

/* The fenced mean of the paired differences d (m of them, in run order;
 * `w` scratch of m), with its t interval. */
static void paired_mean(const int64_t *d, int64_t *w, size_t m, double step, uint32_t unroll,
                        struct fc_estimate *out)
{
    double sigma;
    memcpy(w, d, m * sizeof *w);
    double center = center_and_sigma(w, m, &sigma);
    double half = FENCE_STEPS * step + 2.0; /* Python's max(): the first of the largest */
    if (FENCE_SIGMAS * sigma > half)
        half = FENCE_SIGMAS * sigma;
    if (FENCE_RELATIVE * fabs(center) > half)
        half = FENCE_RELATIVE * fabs(center);
    double low = center - half, high = center + half;
    size_t n = 0;
    for (size_t i = 0; i < m; i++) /* numpy compares int64 with a float as float64 */
        if ((double)d[i] >= low && (double)d[i] <= high)
            w[n++] = d[i];
    double mean = n ? numpy_sum(w, n) / (double)n : NAN;
    if (n < 2) {
        *out = (struct fc_estimate){mean / unroll, INFINITY / unroll, FC_ESTIMATOR_PAIRED_MEAN, n};
        return;
    }
    double sd = sqrt(sum_squares(w, n, mean) / (double)(n - 1));
    *out = (struct fc_estimate){mean / unroll, t95(n - 1) * sd / sqrt((double)n) / unroll,
                                FC_ESTIMATOR_PAIRED_MEAN, n};
}

int fc_recommend(const uint64_t *raw, const uint64_t *empty, const bool *migrated, size_t n,
                 double step, uint32_t unroll, struct fc_estimate *out)
{
    if (n == 0 || n > FC_ESTIMATE_RUNS_MAX)
        return 1;
    size_t moved = 0;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] >= FC_ESTIMATE_EXACT_BELOW || empty[i] >= FC_ESTIMATE_EXACT_BELOW)
            return 1;
        moved += migrated && migrated[i];
    }
    bool drop = moved && moved < n; /* every pair migrated: all of them */
    int64_t *r = malloc(3 * n * sizeof *r);
    if (!r)
        return 1;
    int64_t *e = r + n, *w = e + n;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!drop || !migrated[i]) {
            r[m] = (int64_t)raw[i];
            e[m] = (int64_t)empty[i];
            m++;
        }
    double sigma;
    memcpy(w, r, m * sizeof *w);
    center_and_sigma(w, m, &sigma);
    if (sigma >= MEDIAN_SPREAD_STEPS * step) {
        median_difference(r, e, m, step, unroll, out);
    } else {
        for (size_t i = 0; i < m; i++)
            r[i] -= e[i];
        paired_mean(r, w, m, step, unroll, out);
    }
    free(r);
    return 0;
}
