/*
 * harness.c: how fastcpu times. Each run is one timed execution of the
 * method and one of the empty sequence, interleaved and in alternating order
 * so that drift, interrupts and frequency changes hit both alike. The CPU is
 * read outside the timed region, before and after, to flag migrations.
 */
#include <string.h>

#include "fastcpu.h"
#include "timing.h"

const char *const fc_serialize_names[FC_SER_COUNT] = {"lfence", "cpuid", "rdtscp"};

/* User sequences: the same harness shape, the body an indirect call. */
#define FC_USER_TIMER(mode)                                                  \
    static uint64_t time_user_##mode(fc_user_fn fn, uint32_t copies)         \
    {                                                                        \
        uint64_t t0 = fc_start_##mode();                                     \
        for (uint32_t i_ = 0; i_ < copies; i_++)                             \
            fc_sink(fn());                                                   \
        uint64_t t1 = fc_end_##mode();                                       \
        return t1 - t0;                                                      \
    }

FC_USER_TIMER(lfence)
FC_USER_TIMER(cpuid)
FC_USER_TIMER(rdtscp)

static uint64_t time_user(fc_user_fn fn, enum fc_serialize s, uint32_t copies)
{
    switch (s) {
    case FC_SER_CPUID:
        return time_user_cpuid(fn, copies);
    case FC_SER_RDTSCP:
        return time_user_rdtscp(fn, copies);
    default:
        return time_user_lfence(fn, copies);
    }
}

static inline uint64_t time_method(const struct fc_pair *p)
{
    return p->user_method ? time_user(p->user_method, p->serialize, p->copies)
                          : p->method(p->copies);
}

static inline uint64_t time_empty(const struct fc_pair *p)
{
    return p->user_empty ? time_user(p->user_empty, p->serialize, p->copies)
                         : p->empty(p->copies);
}

void fc_warm_up(const struct fc_pair *p, uint32_t runs)
{
    for (uint32_t i = 0; i < runs; i++) {
        fc_sink(time_method(p));
        fc_sink(time_empty(p));
    }
}

size_t fc_measure(const struct fc_pair *p, struct fc_run_buffers *b,
                  size_t first, size_t count, uint64_t budget_ticks)
{
    uint64_t deadline = fc_rdtsc() + budget_ticks;
    size_t end = first + count, i = first;
    while (i < end) {
        int cpu_before, cpu_after;
        if (i & 1) {
            b->empty[i] = time_empty(p);
            cpu_before = fc_current_cpu();
            b->raw[i] = time_method(p);
            cpu_after = fc_current_cpu();
        } else {
            cpu_before = fc_current_cpu();
            b->raw[i] = time_method(p);
            cpu_after = fc_current_cpu();
            b->empty[i] = time_empty(p);
        }
        b->migrated[i] = cpu_before != cpu_after;
        i++;
        if (fc_rdtsc() > deadline)
            break;
    }
    return i - first;
}

uint64_t fc_min_u64(const uint64_t *v, size_t n)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

static inline void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* Hoare quickselect with a median-of-three pivot: afterwards v[k] holds the
 * k-th smallest value, smaller ones before it, larger ones after. O(n). */
static void select_kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < v[lo])
            swap_u64(&v[mid], &v[lo]);
        if (v[hi] < v[lo])
            swap_u64(&v[hi], &v[lo]);
        if (v[hi] < v[mid])
            swap_u64(&v[hi], &v[mid]);
        uint64_t pivot = v[mid];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                swap_u64(&v[i], &v[j]);
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
            return;
    }
}

double fc_median_u64(const uint64_t *v, size_t n, uint64_t *scratch)
{
    if (n == 0)
        return 0.0;
    memcpy(scratch, v, n * sizeof *v);
    size_t k = n / 2;
    select_kth(scratch, n, k);
    if (n & 1)
        return (double)scratch[k];
    /* even count: the other middle value is the largest of the lower part */
    uint64_t lower = scratch[0];
    for (size_t i = 1; i < k; i++)
        if (scratch[i] > lower)
            lower = scratch[i];
    return ((double)lower + (double)scratch[k]) / 2.0;
}
