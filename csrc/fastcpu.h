/*
 * fastcpu.h: the one header shared by the C files of fastcpu._core.
 *
 *   sequences.c  what is timed: the instruction sequences and the method table
 *   features.c   what this machine has: CPUID bits, vDSO, rseq, fault probes
 *   harness.c    how it is timed: serialization, interleaved runs, statistics
 *   clock.c      what a TSC tick is worth: step, frequency samples, add chains
 *   calibration.c  sequences of known cost: dependent add and imul chains
 *   module.c     how Python sees it (the only file that includes Python.h)
 *
 * Nothing here knows about Python.
 */
#ifndef FASTCPU_H
#define FASTCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- serialization ------------------------------------------------------- */

enum fc_serialize {
    FC_SER_LFENCE = 0, /* start lfence;rdtsc;lfence   end rdtscp;lfence */
    FC_SER_CPUID = 1,  /* start cpuid;rdtsc           end rdtscp;cpuid  */
    FC_SER_RDTSCP = 2, /* start rdtscp;lfence         end rdtscp;lfence */
    FC_SER_COUNT
};

extern const char *const fc_serialize_names[FC_SER_COUNT];

/* With clock='pmu' (pmu.c): the same modes reading the core-cycle counter.
 * 'rdtscp' has no counterpart (it reads the TSC). */
enum fc_pmu_serialize {
    FC_PMU_SER_LFENCE = 0, /* start lfence;rdpmc;lfence   end lfence;rdpmc;lfence */
    FC_PMU_SER_CPUID = 1,  /* start cpuid;rdpmc           end lfence;rdpmc;cpuid  */
    FC_PMU_SER_COUNT
};

/* One timed execution of `copies` back-to-back copies of a sequence, in TSC
 * ticks, harness included. One such function per method and serialization. */
typedef uint64_t (*fc_timer_fn)(uint32_t copies);

/* A user sequence (issue: user sequences): `unsigned fn(void)`. */
typedef unsigned (*fc_user_fn)(void);

/* ---- the method catalog (sequences.c) ------------------------------------ */

enum fc_encoding {
    FC_ENC_NONE,     /* reports no CPU (empty, kernel-entry costs) */
    FC_ENC_CPUNODE,  /* cpu | node << 12 (LSL limit, TSC_AUX)      */
    FC_ENC_SIDT,     /* seed's proposal: IDT limit - 0x1000         */
    FC_ENC_CPU,      /* the CPU number itself (sched_getcpu, rseq)  */
    FC_ENC_LIMIT,    /* a raw descriptor-table limit (SGDT)         */
};

/* Why a method may not run here; checked by features.c. */
enum fc_need {
    FC_NEED_NOTHING = 0,
    FC_NEED_RDTSCP,
    FC_NEED_RDPID,
    FC_NEED_RSEQ,
    FC_NEED_VDSO_GETCPU,
    FC_NEED_DESCRIPTOR_TABLE, /* SIDT/SGDT: may fault under UMIP */
    FC_NEED_FSGSBASE,
};

struct fc_method {
    const char *name;
    const char *description;
    enum fc_need need;
    enum fc_encoding encoding;
    bool probe_in_child;          /* may fault: run once in a fork first */
    /* One execution, its raw register value; *valid is false when the
     * instruction reported failure (LSL with ZF clear). */
    uint32_t (*read)(bool *valid);
    fc_timer_fn timers[FC_SER_COUNT];
    /* The same, reading the PMU's core-cycle counter (FC_TIMERS fills both;
     * NULL where a method was defined without them). */
    fc_timer_fn pmu_timers[FC_PMU_SER_COUNT];
};

extern const struct fc_method fc_methods[];
extern const size_t fc_method_count;
const struct fc_method *fc_method_find(const char *name);

/* ---- calibration sequences (calibration.c) ------------------------------ */

/* A method whose cost is known: `length` dependent `op` instructions of
 * `latency_cycles` core cycles each. Kept out of fc_methods[] so that the
 * catalog and its table list only ways to learn the CPU. */
struct fc_calibration {
    struct fc_method method;
    const char *op; /* "add" or "imul" */
    uint32_t length;
    uint32_t latency_cycles;
};

extern const struct fc_calibration fc_calibrations[];
extern const size_t fc_calibration_count;
const struct fc_calibration *fc_calibration_find(const char *name);

/* ---- machine features (features.c) --------------------------------------- */

/* Set once by fc_features(); read by the rseq and vDSO sequences. */
extern long fc_rseq_offset;
extern int (*fc_vdso_getcpu)(unsigned *cpu, unsigned *node, void *cache);

struct fc_features {
    bool rdtscp, rdpid, umip, fsgsbase_cpu, fsgsbase_enabled, hypervisor,
        invariant_tsc, tsc_readable;
    char hypervisor_vendor[13]; /* CPUID 0x40000000, e.g. "KVMKVMKVM"; "" on metal */
    bool rseq_registered;
    long rseq_offset;             /* from the thread pointer */
    unsigned rseq_size;
    bool vdso_getcpu;
};

/* Filled once, on first use; safe to call from any thread after module init. */
const struct fc_features *fc_features(void);

/* Why `m` cannot run here, or NULL when it can. May fork once per method to
 * probe an instruction that could fault; the answer is cached. */
const char *fc_method_unavailable(const struct fc_method *m);

/* The current CPU, by the cheapest correct way available (outside any timed
 * region: migration checks). */
int fc_current_cpu(void);

/* ---- the harness (harness.c) --------------------------------------------- */

struct fc_run_buffers {
    uint64_t *raw;    /* ticks of each run of the method */
    uint64_t *empty;  /* ticks of each run of the empty sequence */
    bool *migrated;   /* the CPU differed at the end of the method's run */
};

/* What is timed against what: two timer functions, or two user functions
 * called through the same indirect call. */
struct fc_pair {
    fc_timer_fn method, empty;          /* built-in: inlined sequences */
    fc_user_fn user_method, user_empty; /* user sequence: pointer calls */
    enum fc_serialize serialize;
    uint32_t copies;
    bool pmu; /* user sequences: time with the PMU counter (pmu.c) */
};

/* Warm both sides up, unrecorded. */
void fc_warm_up(const struct fc_pair *p, uint32_t runs);

/* Record runs [first, first + count) but stop early once `budget_ticks` have
 * passed, so the caller can look for signals. Returns how many were done. */
size_t fc_measure(const struct fc_pair *p, struct fc_run_buffers *b,
                  size_t first, size_t count, uint64_t budget_ticks);

/* Statistics with numpy's meaning (median of an even count: mean of the two
 * middle values). `v` is left untouched and nothing of size n is allocated. */
uint64_t fc_min_u64(const uint64_t *v, size_t n);
double fc_median_u64(const uint64_t *v, size_t n);

/* ---- the clock (clock.c) ------------------------------------------------- */

uint64_t fc_rdtsc(void);
/* Smallest non-zero difference between consecutive rdtsc reads. */
uint64_t fc_tsc_step(uint32_t reads);
/* A (CLOCK_MONOTONIC_RAW ns, TSC) pair read as close together as possible. */
void fc_tsc_ns_pair(uint64_t *ns, uint64_t *tsc);
/* Ticks for `blocks` blocks of 100 dependent 1-cycle adds, fenced. */
uint64_t fc_add_chain_ticks(uint32_t blocks);

/* ---- the PMU core-cycle counter (pmu.c) ---------------------------------- */

enum fc_pmu_scope {
    FC_PMU_ALL = 1,       /* user and kernel cycles */
    FC_PMU_USER_ONLY = 2, /* perf_event_paranoid allowed user mode only */
};

/* Open this thread's core-cycle counter for user-space rdpmc (once per
 * thread) and set fc_pmu_counter. Returns 0 and sets *scope on success, or
 * -1 with *why saying why not (a static or thread-local string). */
int fc_pmu_open(enum fc_pmu_scope *scope, const char **why);
/* Re-read the counter's rdpmc number (it moves if the kernel reschedules the
 * event); 0, or -1 with *why. */
int fc_pmu_refresh(const char **why);
/* Mask of the counter's valid bits: deltas are taken modulo its width. */
uint64_t fc_pmu_mask(void);

#endif
