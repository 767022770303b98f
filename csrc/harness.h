/*
 * harness.h: how a pair of timers is timed (harness.c): the pair, a
 * session of runs in chunks, warm-up, statistics.
 */
#ifndef FASTCPU_HARNESS_H
#define FASTCPU_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "conversion.h"
#include "timers.h"

#pragma GCC visibility push(hidden)

struct fc_run_buffers {
    uint64_t *raw;    /* ticks of each run of the method side */
    uint64_t *empty;  /* ticks of each run of the empty side */
    bool *migrated;   /* the CPU differed between before and after the pair */
};

/* What is timed against what: two timer functions, or two user functions
 * called through the same indirect call, each side with its own number of
 * copies per run. bench(): the method against the empty sequence, the same
 * copies on both sides. bench_diff(): the method at 2k copies (the "method"
 * side) against itself at k (the "empty" side), both through the copy loop. */
struct fc_pair {
    fc_timer_fn method, empty;          /* built-in: inlined sequences */
    fc_user_fn user_method, user_empty; /* user sequence: pointer calls */
    enum fc_serialize serialize;
    uint32_t method_copies, empty_copies;
    bool pmu; /* time with the PMU counter (pmu.c): the rows' pmu_timers */
};

/* Why nothing can be timed here (the TSC unreadable, or no RDTSCP, with
 * which every mode closes the timed region), or NULL when it can. */
const char *fc_timer_unavailable(void);

/* A user sequence's baseline: an empty function called the same way. */
unsigned fc_empty_user_fn(void);

/* Fill `p` (its serialize and pmu already set) to time one thing: the
 * catalog row `m` or, when `m` is NULL, the user function `user`.
 * fc_pair_against_empty(): `copies` copies against as many of the empty
 * sequence (the empty row, or fc_empty_user_fn for a user function), what
 * bench() times. fc_pair_diff(): 2k copies against k of itself, what
 * bench_diff() times. NULL, or why not (a row without PMU timers). */
const char *fc_pair_against_empty(struct fc_pair *p, const struct fc_method *m,
                                  fc_user_fn user, uint32_t copies);
const char *fc_pair_diff(struct fc_pair *p, const struct fc_method *m, fc_user_fn user,
                         uint32_t k);

/* A measurement of `runs` runs of a pair in chunks: the caller calls
 * fc_session_step() until it returns FC_STEP_DONE, and between calls may
 * look for signals (module.c re-takes the GIL there). Each step is a chunk
 * of about FC_CHUNK_TICKS: warm-up runs first (FC_WARM_UP_RUNS at most,
 * unrecorded), then recorded runs; with the PMU counter a chunk whose counter
 * moved is redone, FC_PMU_TRIES times in a row at most, and the deltas are
 * masked to the counter's width at the end. */
#define FC_WARM_UP_RUNS 64u
/* About 2^25 ticks (~13 ms at 2.6 GHz) per chunk, and at most one run past
 * that: Ctrl-C waits for a chunk and one run. */
#define FC_CHUNK_TICKS (1ull << 25)
#define FC_PMU_TRIES 3

struct fc_session {
    const struct fc_pair *pair;
    struct fc_run_buffers bufs;
    size_t runs, done;
    uint32_t warm, warmed;
    int moved;      /* PMU chunks in a row whose counter moved */
    char why[256];  /* what went wrong, for FC_STEP_UNSUPPORTED / FC_STEP_FAILED */
    /* On the TSC with `rulers`: a ruler point before the first recorded run,
     * one every rulers->spacing_ticks of runs and one after the last, into
     * points[0 .. n_points) (malloc'd, grown as needed; fc_session_free). */
    const struct fc_ruler_args *rulers;
    struct fc_ruler_point *points;
    size_t n_points, cap_points;
    uint64_t origin_tsc;
};

enum fc_step {
    FC_STEP_MORE,        /* a chunk done: call again */
    FC_STEP_DONE,        /* every run recorded */
    FC_STEP_UNSUPPORTED, /* the PMU counter cannot be read: why says why */
    FC_STEP_FAILED,      /* the counter kept moving, or a user function crashed */
    FC_STEP_NO_MEMORY,   /* the ruler points could not be grown */
    FC_STEP_BROKE,       /* a user function broke the calling convention or forked */
    FC_STEP_TIMED_OUT,   /* a user function outlived the timeout (fc_user_begin) */
    FC_STEP_INTERRUPTED, /* Ctrl-C, and a user function that did not come back */
};

/* `rulers` NULL: none (the PMU counter counts core cycles itself). */
void fc_session_init(struct fc_session *s, const struct fc_pair *p, struct fc_run_buffers b,
                     size_t runs, const struct fc_ruler_args *rulers);
enum fc_step fc_session_step(struct fc_session *s);
/* Free the session's ruler points. */
void fc_session_free(struct fc_session *s);

/* bench()'s two figures, per copy: min(raw) - min(empty) and
 * median(raw) - median(empty). */
void fc_best_median(const struct fc_run_buffers *b, size_t runs, uint32_t copies,
                    double *best, double *median);

/* The building blocks of a session. Warm both sides up, unrecorded: `runs`
 * pairs, but stop early once `budget_ticks` have passed. Returns how many
 * were done. */
uint32_t fc_warm_up(const struct fc_pair *p, uint32_t runs, uint64_t budget_ticks);

/* Record runs [first, first + count) but stop early once `budget_ticks` have
 * passed, so the caller can look for signals. Returns how many were done. */
size_t fc_record_runs(const struct fc_pair *p, struct fc_run_buffers *b, size_t first,
                      size_t count, uint64_t budget_ticks);

/* Statistics with numpy's meaning (median of an even count: mean of the two
 * middle values). `v` is left untouched and nothing of size n is allocated. */
uint64_t fc_min_u64(const uint64_t *v, size_t n);
double fc_median_u64(const uint64_t *v, size_t n);

/* Order statistics by radix select (harness.c), `v` untouched: the values
 * are read as keys v[i] ^ flip, ordered as unsigned (flip 0) or, with
 * FC_KEY_SIGNED, as int64 (an int64_t array read through uint64_t). Keys
 * come back as keys (^ flip gives the value back). fc_key_range: the
 * smallest and largest key (n >= 1). fc_select_key: the key of rank k
 * (0-based, k < n) of keys within [lo, hi] (the radix passes cover hi - lo:
 * one where it is under 256). fc_middle_keys: numpy's median ranks (n >= 1),
 * keys within [lo, hi]: the middle key (returns 1, both entries) or the two
 * middle keys, lower first (returns 2). */
#define FC_KEY_SIGNED (UINT64_C(1) << 63)
void fc_key_range(const uint64_t *v, size_t n, uint64_t flip, uint64_t *lo, uint64_t *hi);
uint64_t fc_select_key(const uint64_t *v, size_t n, size_t k, uint64_t flip, uint64_t lo,
                       uint64_t hi);
int fc_middle_keys(const uint64_t *v, size_t n, uint64_t flip, uint64_t lo, uint64_t hi,
                   uint64_t mid[2]);

/* The keys of v[0..n) (within [lo, hi]) counted one by one in a window of
 * 256 consecutive keys around `centre` (a key; clipped to [lo, hi]), those
 * below and above it counted apart: one pass, from which fc_window_rank()
 * reads any rank that lies in the window (the radix select's first try;
 * estimate.c reads several ranks, and the deviations from a centre, off one
 * window). Each tally below 2^32: n below 2^34. */
struct fc_key_window {
    uint64_t base;       /* the key of count[0] */
    size_t below, above; /* keys below base, above base + 255 */
    size_t n;
    size_t count[256];
    size_t cum[257]; /* keys in the slots below c: a rank's slot by bisection */
};
void fc_count_window(const uint64_t *v, size_t n, uint64_t flip, uint64_t lo, uint64_t hi,
                     uint64_t centre, struct fc_key_window *w);
/* The window of four tallies taken in turn (slots 256 and 257: below and
 * above it) of n keys, count[0] the key `base`: fc_count_window's last
 * step, and estimate.c's, which tallies its windows in a pass of its own. */
void fc_window_of_tallies(const uint32_t tally[4][258], uint64_t base, size_t n,
                          struct fc_key_window *w);
/* The key of rank k (0-based), and with `lower` the key of rank k - 1 (the
 * same where tied; k >= 1 or the key itself), where both lie in the window:
 * true; false where either does not. */
bool fc_window_rank(const struct fc_key_window *w, size_t k, uint64_t *key, uint64_t *lower);

#pragma GCC visibility pop

#endif
