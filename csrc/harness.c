/*
 * harness.c: how fastcpu times. Each run is one timed execution of the
 * method and one of the empty sequence, interleaved and in alternating order
 * so that drift, interrupts and frequency changes hit both alike. The CPU is
 * read outside the timed regions, before and after each pair, to flag
 * migrations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "machine.h"
#include "harness.h"
#include "pmu.h"
#include "timing.h"
#include "userabi.h"

const char *const fc_serialize_names[FC_SER_COUNT] = {"lfence", "cpuid", "rdtscp"};

/* User sequences: userabi.c's timers (a trampoline opens the timed region
 * and jumps to the function; the user's function and the empty baseline
 * from two call sites), which check and restore what the function must
 * preserve outside the timed region. */
static inline uint64_t time_user_method(fc_user_fn fn, const struct fc_pair *p, uint32_t copies)
{
    return fc_user_time(fn, p->serialize, p->pmu, copies, false);
}

static inline uint64_t time_user_empty(fc_user_fn fn, const struct fc_pair *p, uint32_t copies)
{
    return fc_user_time(fn, p->serialize, p->pmu, copies, true);
}

static inline uint64_t time_method(const struct fc_pair *p)
{
    return p->user_method ? time_user_method(p->user_method, p, p->method_copies)
                          : p->method(p->method_copies);
}

/* bench_diff's user side runs the same function at 2k and k copies: both
 * through the method's call site, whose target then never changes. */
static inline uint64_t time_empty(const struct fc_pair *p)
{
    if (!p->user_empty)
        return p->empty(p->empty_copies);
    return p->user_empty == p->user_method
               ? time_user_method(p->user_empty, p, p->empty_copies)
               : time_user_empty(p->user_empty, p, p->empty_copies);
}

/* Which runs look at the clock (those whose index has no bit of the mask
 * set): every 64th pair of single-copy runs (a pair takes 100 ns to a few
 * us, so a chunk or a stretch between ruler points overruns by well under
 * a millisecond; every 16th cost bench(m, 1000) half a microsecond of
 * counter reads, AuthenticAMD family 26 model 2 guest); every run where a run
 * may be long (copies, a user function), so that Ctrl-C waits for one run
 * at most. A mask, not a modulus: `i % stride` of a stride known only at
 * run time is a 64-bit division in every run. */
static uint32_t deadline_mask(const struct fc_pair *p)
{
    bool long_runs = p->method_copies > 1 || p->empty_copies > 1 || p->user_method;
    return long_runs ? 0 : 63;
}

/* fc_current_cpu() with its question (is rseq registered?) asked once per
 * stretch of runs, not in each read (pthread_once behind a call into
 * features.c, twice a run). */
static inline int current_cpu(bool rseq)
{
    if (rseq) {
        int32_t cpu;
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, cpu);
        if (cpu >= 0)
            return cpu;
    }
    return fc_current_cpu();
}

uint32_t fc_warm_up(const struct fc_pair *pair, uint32_t runs, uint64_t budget_ticks)
{
    const struct fc_pair local = *pair, *p = &local; /* in registers: see fc_record_runs */
    uint64_t deadline = fc_rdtsc() + budget_ticks;
    uint32_t mask = deadline_mask(p), i = 0;
    while (i < runs) {
        fc_sink(time_method(p));
        fc_sink(time_empty(p));
        i++;
        if (!(i & mask) && fc_rdtsc() > deadline)
            break;
    }
    return i;
}

size_t fc_record_runs(const struct fc_pair *pair, struct fc_run_buffers *b, size_t first,
                      size_t count, uint64_t budget_ticks)
{
    /* The pair copied, so that its timers and copies stay in registers: read
     * from *pair after each timed run (which the compiler must assume may
     * change it), the next timer's address was a load on the path between
     * two fenced runs, which waits on all of it (about 10 core cycles a pair
     * of runs, AuthenticAMD family 26 model 2 guest). Outside the timed
     * regions: what they measure is unchanged. */
    const struct fc_pair local = *pair, *p = &local;
    uint64_t deadline = fc_rdtsc() + budget_ticks;
    uint32_t mask = deadline_mask(p);
    bool rseq = fc_features()->rseq_registered;
    size_t end = first + count, i = first;
    while (i < end) {
        /* the CPU before the pair's first timed run and after its second:
         * a migration during either flags the pair */
        int cpu_before = current_cpu(rseq);
        if (i & 1) {
            b->empty[i] = time_empty(p);
            b->raw[i] = time_method(p);
        } else {
            b->raw[i] = time_method(p);
            b->empty[i] = time_empty(p);
        }
        b->migrated[i] = cpu_before != current_cpu(rseq);
        i++;
        if (!(i & mask) && fc_rdtsc() > deadline)
            break;
    }
    return i - first;
}

/* ---- what is timed against what ----------------------------------------- */

const char *fc_timer_unavailable(void)
{
    const struct fc_features *f = fc_features();
    if (!f->tsc_readable)
        return "this process may not read the TSC (prctl PR_SET_TSC / CR4.TSD)";
    if (!f->rdtscp)
        return "CPUID lacks RDTSCP, which every serialization mode uses to close the "
               "timed region";
    return NULL;
}

/* Kept out of line so the call is real. */
__attribute__((noinline)) unsigned fc_empty_user_fn(void)
{
    __asm__ volatile("");
    return 0;
}

/* The row's timer for the pair's mode and counter; NULL where the row was
 * defined without PMU timers. */
static fc_timer_fn timer_of(const struct fc_method *m, const struct fc_pair *p)
{
    if (p->pmu)
        return m->pmu_timers[p->serialize == FC_SER_CPUID ? FC_PMU_SER_CPUID
                                                          : FC_PMU_SER_LFENCE];
    return m->timers[p->serialize];
}

#define FC_NO_PMU_TIMERS "has no PMU timers (defined without FC_TIMERS)"

const char *fc_pair_against_empty(struct fc_pair *p, const struct fc_method *m,
                                  fc_user_fn user, uint32_t copies)
{
    if (m) {
        p->method = timer_of(m, p);
        p->empty = timer_of(fc_method_find("empty"), p);
        if (!p->method)
            return FC_NO_PMU_TIMERS;
    } else {
        p->user_method = user;
        p->user_empty = fc_empty_user_fn;
    }
    p->method_copies = p->empty_copies = copies;
    return NULL;
}

/* Both sides run the copy loop (k >= 2), so the harness cancels. */
const char *fc_pair_diff(struct fc_pair *p, const struct fc_method *m, fc_user_fn user,
                         uint32_t k)
{
    if (m) {
        p->method = p->empty = timer_of(m, p);
        if (!p->method)
            return FC_NO_PMU_TIMERS;
    } else {
        p->user_method = p->user_empty = user;
    }
    p->method_copies = 2 * k;
    p->empty_copies = k;
    return NULL;
}

/* ---- a measurement in chunks --------------------------------------------- */

void fc_session_init(struct fc_session *s, const struct fc_pair *p, struct fc_run_buffers b,
                     size_t runs, const struct fc_ruler_args *rulers)
{
    memset(s, 0, sizeof *s);
    s->pair = p;
    s->bufs = b;
    s->runs = runs;
    s->warm = runs < FC_WARM_UP_RUNS ? (uint32_t)runs : FC_WARM_UP_RUNS;
    s->rulers = p->pmu ? NULL : rulers;
}

void fc_session_free(struct fc_session *s)
{
    free(s->points);
    s->points = NULL;
    s->n_points = s->cap_points = 0;
}

/* A ruler point after s->done runs; false when the points cannot grow. */
static bool take_point(struct fc_session *s, bool warm_up)
{
    if (s->n_points == s->cap_points) {
        size_t cap = s->cap_points ? 2 * s->cap_points : 16;
        struct fc_ruler_point *grown = realloc(s->points, cap * sizeof *grown);
        if (!grown)
            return false;
        s->points = grown;
        s->cap_points = cap;
    }
    fc_ruler_point_take(s->rulers, s->done, s->origin_tsc, warm_up, &s->points[s->n_points++]);
    return true;
}

/* Record runs until the chunk's budget is spent: in stretches of
 * rulers->spacing_ticks with a ruler point after each, when there are
 * rulers. Returns how many runs were recorded. */
static size_t record_chunk(struct fc_session *s)
{
    const struct fc_pair *p = s->pair;
    if (!s->rulers)
        return fc_record_runs(p, &s->bufs, s->done, s->runs - s->done, FC_CHUNK_TICKS);
    uint64_t deadline = fc_rdtsc() + FC_CHUNK_TICKS;
    size_t recorded = 0;
    do {
        size_t n = fc_record_runs(p, &s->bufs, s->done, s->runs - s->done, s->rulers->spacing_ticks);
        s->done += n;
        recorded += n;
        if (!take_point(s, false))
            break;
    } while (s->done < s->runs && fc_rdtsc() < deadline);
    s->done -= recorded; /* the caller counts them */
    return recorded;
}

enum fc_step fc_session_step(struct fc_session *s)
{
    const struct fc_pair *p = s->pair;
    if (s->warmed < s->warm) {
        s->warmed += fc_warm_up(p, s->warm - s->warmed, FC_CHUNK_TICKS);
        if (s->warmed < s->warm) /* the chunk's budget spent: the caller looks for signals */
            return FC_STEP_MORE;
    }
    if (s->rulers && s->n_points == 0) {
        s->origin_tsc = fc_rdtsc();
        if (!take_point(s, true))
            return FC_STEP_NO_MEMORY;
    }
    if (s->done < s->runs) {
        const char *why;
        if (p->pmu && fc_pmu_refresh(&why) < 0) {
            snprintf(s->why, sizeof s->why, "counter='pmu': %s", why);
            return FC_STEP_UNSUPPORTED;
        }
        size_t points_before = s->n_points;
        size_t n = record_chunk(s);
        if (p->pmu && fc_pmu_check(&why) < 0) {
            /* some deltas of this chunk may come from another counter: redo it */
            if (++s->moved == FC_PMU_TRIES) {
                snprintf(s->why, sizeof s->why,
                         "counter='pmu': %s, in %d chunks of runs in a row; the counts "
                         "cannot be trusted",
                         why, FC_PMU_TRIES);
                return FC_STEP_FAILED;
            }
        } else {
            s->moved = 0;
            s->done += n;
        }
        if (s->rulers && s->n_points == points_before)
            return FC_STEP_NO_MEMORY;
        if (s->done < s->runs)
            return FC_STEP_MORE;
    }
    if (p->pmu) {
        /* the counter is narrower than 64 bits: deltas modulo its width */
        uint64_t mask = fc_pmu_mask();
        for (size_t i = 0; i < s->runs; i++) {
            s->bufs.raw[i] &= mask;
            s->bufs.empty[i] &= mask;
        }
    }
    return FC_STEP_DONE;
}

/* ---- statistics ---------------------------------------------------------- */

void fc_best_median(const struct fc_run_buffers *b, size_t runs, uint32_t copies,
                    double *best, double *median)
{
    *best = ((double)fc_min_u64(b->raw, runs) - (double)fc_min_u64(b->empty, runs)) / copies;
    *median = (fc_median_u64(b->raw, runs) - fc_median_u64(b->empty, runs)) / copies;
}

uint64_t fc_min_u64(const uint64_t *v, size_t n)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

/*
 * Order statistics by radix select, without copying or reordering v: the
 * values are read as keys v[i] ^ flip (flip 0: unsigned; FC_KEY_SIGNED: int64
 * in two's complement, ordered as signed). The keys share every bit above
 * the highest bit in which the smallest and largest differ; each pass counts
 * the next 8 bits of the keys still matching the prefix found so far and
 * picks the digit holding the k-th. O(n) per pass, ceil(bits / 8) passes (1
 * for keys that span under 256, as quantized runs do), no memory beyond 256
 * counters. One implementation for bench()'s median and the estimate
 * (estimate.c).
 */
void fc_key_range(const uint64_t *v, size_t n, uint64_t flip, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = UINT64_MAX, b = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = v[i] ^ flip;
        a = x < a ? x : a;
        b = x > b ? x : b;
    }
    *lo = a;
    *hi = b;
}

/* Runs are quantized and bunched, with a few far outliers (an interrupt):
 * one pass counting each key of a 256-key window around a middle run's key
 * (and those below and above it) finds most ranks where the radix passes
 * would need two or three. */
void fc_count_window(const uint64_t *v, size_t n, uint64_t flip, uint64_t lo, uint64_t hi,
                     uint64_t centre, struct fc_key_window *w)
{
    uint64_t guess = centre - lo, span = hi - lo;
    uint64_t start = guess < 128 ? 0 : guess - 128;
    if (span < 256)
        start = 0;
    else if (start > span - 255)
        start = span - 255;
    uint32_t tally[4][258] = {{0}}; /* [256]: below the window, [257]: above */
    size_t i = 0, n4 = n & ~(size_t)3;
#define WINDOW_SLOT(x) ((x) - start < 256 ? (x) - start : 256 + ((x) > start))
    for (; i < n4; i += 4) {
        uint64_t x0 = (v[i] ^ flip) - lo, x1 = (v[i + 1] ^ flip) - lo;
        uint64_t x2 = (v[i + 2] ^ flip) - lo, x3 = (v[i + 3] ^ flip) - lo;
        tally[0][WINDOW_SLOT(x0)]++;
        tally[1][WINDOW_SLOT(x1)]++;
        tally[2][WINDOW_SLOT(x2)]++;
        tally[3][WINDOW_SLOT(x3)]++;
    }
    for (; i < n; i++) {
        uint64_t x = (v[i] ^ flip) - lo;
        tally[0][WINDOW_SLOT(x)]++;
    }
#undef WINDOW_SLOT
    fc_window_of_tallies((const uint32_t(*)[258])tally, lo + start, n, w);
}

void fc_window_of_tallies(const uint32_t tally[4][258], uint64_t base, size_t n,
                          struct fc_key_window *w)
{
    size_t below = 0;
    for (int c = 0; c < 256; c++) {
        w->count[c] = (size_t)tally[0][c] + tally[1][c] + tally[2][c] + tally[3][c];
        w->cum[c] = below;
        below += w->count[c];
    }
    w->cum[256] = below;
    w->below = (size_t)tally[0][256] + tally[1][256] + tally[2][256] + tally[3][256];
    w->above = (size_t)tally[0][257] + tally[1][257] + tally[2][257] + tally[3][257];
    w->base = base;
    w->n = n;
}

/* The slot holding the window's k-th key (k below its count): the last c
 * with cum[c] <= k, which is never an empty slot. */
static unsigned slot_of(const struct fc_key_window *w, size_t k)
{
    unsigned lo = 0, hi = 256; /* cum[lo] <= k < cum[hi] */
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (w->cum[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

bool fc_window_rank(const struct fc_key_window *w, size_t k, uint64_t *key, uint64_t *lower)
{
    if (k < w->below || k - w->below >= w->n - w->below - w->above)
        return false;
    k -= w->below;
    unsigned d = slot_of(w, k);
    if (lower) {
        if (k > w->cum[d]) /* tied: rank k - 1 in the same slot */
            *lower = w->base + d;
        else if (w->cum[d] > 0) /* the nearest used slot below */
            *lower = w->base + slot_of(w, w->cum[d] - 1);
        else if (w->below == 0) /* no rank below (k was 0): the key itself */
            *lower = w->base + d;
        else
            return false; /* below the window */
    }
    *key = w->base + d;
    return true;
}

/* The key of rank k (0-based) of v[0..n) (n > k), all keys within [lo, hi];
 * with `lower` (k >= 1), also the key of rank k - 1 there: the same key when
 * tied, else the largest below it (read off the last pass's counts, or one
 * more pass where it lies under another digit). */
static uint64_t select_key(const uint64_t *v, size_t n, size_t k, uint64_t flip, uint64_t lo,
                           uint64_t hi, uint64_t *lower)
{
    if (lo == hi) {
        if (lower)
            *lower = lo;
        return lo;
    }
    if (hi - lo >= 256) {
        struct fc_key_window w;
        uint64_t key;
        fc_count_window(v, n, flip, lo, hi, v[n / 2] ^ flip, &w);
        if (fc_window_rank(&w, k, &key, lower))
            return key;
    }
    /* keys counted from lo: as many digits as the span needs (a span across
     * zero, as signed differences make, is short too) */
    int bits = 64 - __builtin_clzll(hi - lo);
    int shift = (bits + 7) / 8 * 8;
    uint64_t mask = shift >= 64 ? 0 : ~((UINT64_C(1) << shift) - 1);
    uint64_t prefix = 0;
    unsigned d = 0, e = 0; /* the last pass's digit, and 1 + the nearest used digit below it */
    bool first = true;
    while (shift > 0) {
        shift -= 8;
        /* four tallies, summed after: runs of one value (quantized runs
         * hold a handful) would otherwise wait on each increment's store.
         * On the first pass every key matches the prefix (all zero above
         * the span). Each tally stays below 2^32 for n below 2^34. */
        uint32_t tally[4][256] = {{0}};
        size_t count[256], i = 0, n4 = n & ~(size_t)3;
        if (first) {
            for (; i < n4; i += 4) {
                tally[0][(((v[i] ^ flip) - lo) >> shift) & 0xff]++;
                tally[1][(((v[i + 1] ^ flip) - lo) >> shift) & 0xff]++;
                tally[2][(((v[i + 2] ^ flip) - lo) >> shift) & 0xff]++;
                tally[3][(((v[i + 3] ^ flip) - lo) >> shift) & 0xff]++;
            }
        } else {
            for (; i < n4; i += 4) {
                uint64_t x0 = (v[i] ^ flip) - lo, x1 = (v[i + 1] ^ flip) - lo;
                uint64_t x2 = (v[i + 2] ^ flip) - lo, x3 = (v[i + 3] ^ flip) - lo;
                tally[0][(x0 >> shift) & 0xff] += (x0 & mask) == prefix;
                tally[1][(x1 >> shift) & 0xff] += (x1 & mask) == prefix;
                tally[2][(x2 >> shift) & 0xff] += (x2 & mask) == prefix;
                tally[3][(x3 >> shift) & 0xff] += (x3 & mask) == prefix;
            }
        }
        for (; i < n; i++) {
            uint64_t x = (v[i] ^ flip) - lo;
            tally[0][(x >> shift) & 0xff] += (x & mask) == prefix;
        }
        first = false;
        for (int c = 0; c < 256; c++)
            count[c] = (size_t)tally[0][c] + tally[1][c] + tally[2][c] + tally[3][c];
        d = 0;
        while (k >= count[d])
            k -= count[d++];
        for (e = d; e > 0 && count[e - 1] == 0; e--)
            ;
        prefix |= (uint64_t)d << shift;
        mask |= UINT64_C(0xff) << shift;
    }
    if (lower) {
        if (k > 0) { /* ties before it in the last digit */
            *lower = prefix + lo;
        } else if (e > 0) { /* the nearest value below, among the last digits */
            *lower = prefix - (d - (e - 1)) + lo;
        } else { /* below every key of this prefix: one more pass */
            uint64_t best = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = (v[i] ^ flip) - lo;
                if (x < prefix && x > best)
                    best = x;
            }
            *lower = best + lo;
        }
    }
    return prefix + lo;
}

uint64_t fc_select_key(const uint64_t *v, size_t n, size_t k, uint64_t flip, uint64_t lo,
                       uint64_t hi)
{
    return select_key(v, n, k, flip, lo, hi, NULL);
}

int fc_middle_keys(const uint64_t *v, size_t n, uint64_t flip, uint64_t lo, uint64_t hi,
                   uint64_t mid[2])
{
    if (n % 2) {
        mid[0] = mid[1] = select_key(v, n, n / 2, flip, lo, hi, NULL);
        return 1;
    }
    mid[1] = select_key(v, n, n / 2, flip, lo, hi, &mid[0]);
    return 2;
}

double fc_median_u64(const uint64_t *v, size_t n)
{
    if (n == 0)
        return 0.0;
    uint64_t mid[2], lo, hi;
    fc_key_range(v, n, 0, &lo, &hi);
    fc_middle_keys(v, n, 0, lo, hi, mid);
    return n & 1 ? (double)mid[1] : ((double)mid[0] + (double)mid[1]) / 2.0;
}
