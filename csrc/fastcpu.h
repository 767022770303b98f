/*
 * fastcpu.h: the one header shared by the C files of fastcpu._core.
 *
 *   sequences.c  what is timed: the instruction sequences and the method table
 *   models.c     what is timed, too: C models of historical and proposed
 *                getcpu()/sched_getcpu() implementations, called out of line
 *   features.c   what this machine has: CPUID bits, vDSO, rseq, fault probes
 *   getcpu.c     fastcpu.getcpu(): the fastest method proven right here
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

/* Nothing declared here leaves the extension (setup.py also builds with
 * -fvisibility=hidden, which covers definitions only): under -fPIC a
 * default-visibility global is read through the GOT, an extra dependent load
 * wherever a sequence reads it. PyInit__core, the one export, is marked by
 * PyMODINIT_FUNC. */
#pragma GCC visibility push(hidden)

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

/* ---- instructions shared by sequences.c, models.c and getcpu.c ------------ */

#define FC_INLINE static inline __attribute__((always_inline))

/* The per-CPU GDT entry: GDT_ENTRY_CPUNODE (15) << 3 | RPL 3. Its limit is
 * cpu | node << 12 (Linux arch/x86/include/asm/segment.h). */
#define FC_CPUNODE_SELECTOR 0x7bu

/* A descriptor-table register as SIDT/SGDT store it in 64-bit mode. */
struct __attribute__((packed)) fc_dtr {
    uint16_t limit;
    uint64_t base;
};

/* Raw system call, so the timed code is the instruction itself, not libc's
 * wrapper and its errno handling. */
FC_INLINE long fc_syscall3(long nr, long a, long b, long c)
{
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c)
                     : "rcx", "r11", "memory");
    return ret;
}

/* ---- the method catalog (sequences.c) ------------------------------------ */

enum fc_encoding {
    FC_ENC_NONE,     /* reports no CPU (empty, kernel-entry costs) */
    FC_ENC_CPUNODE,  /* cpu | node << 12 (LSL limit, TSC_AUX)      */
    FC_ENC_SIDT,     /* seed's proposal: IDT limit - 0x1000         */
    FC_ENC_CPU,      /* the CPU number itself (sched_getcpu, rseq)  */
    FC_ENC_LIMIT,    /* a raw descriptor-table limit (SGDT)         */
    FC_ENC_SELECTOR, /* a segment selector (SLDT)                   */
};

/* The seed's SIDT encoding puts the node in the low CONFIG_NODES_SHIFT bits
 * of (limit - 0x1000) and the CPU above them; 6 is x86-64's default. */
#define FC_SIDT_NODES_SHIFT 6

/* Why a method may not run here; checked by features.c. */
enum fc_need {
    FC_NEED_NOTHING = 0,
    FC_NEED_RDTSCP,
    FC_NEED_RDPID,
    FC_NEED_RSEQ,
    FC_NEED_VDSO_GETCPU,
    FC_NEED_DESCRIPTOR_TABLE, /* SGDT: may fault under UMIP */
    FC_NEED_FSGSBASE,
    FC_NEED_SIDT,      /* SIDT and the models built on it: may fault under UMIP */
    FC_NEED_RSEQ_AREA, /* glibc's rseq area exists (__rseq_offset), registered or not */
    FC_NEED_LSL,       /* never faults; reports a CPU only where LSL sets ZF */
    FC_NEED_GS_RELOAD, /* reloading %gs would clear a GS base this process set */
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
    /* The out-of-line model the timers call (models.c), for showing its
     * code; NULL when the sequence is inlined into the timers. */
    const void *model;
    /* Reads cpu and node itself instead of decoding `read`'s raw value by
     * `encoding` (rseq: node_id is a second field); NULL for most. */
    uint32_t (*read_cpu)(bool *valid, unsigned *cpu, int *node);
};

#define FC_METHODS_MAX 256 /* size of the per-method availability cache */

extern const struct fc_method fc_methods[];
extern const size_t fc_method_count;
const struct fc_method *fc_method_find(const char *name);

/* Run `m` once and decode what it reports: *node is -1 when the method
 * gives no node. Returns the raw value; *valid as for `read`. Only for a
 * method that fc_method_cpu_reason() accepts. */
uint32_t fc_method_read_cpu(const struct fc_method *m, bool *valid, unsigned *cpu,
                            int *node);

/* ---- the models (models.c) ----------------------------------------------- */

/* Each model's reader and timers, defined in models.c and listed in the
 * catalog in sequences.c. */
#define FC_HIDDEN __attribute__((visibility("hidden")))
#define FC_DECLARE_MODEL(name)                                               \
    FC_HIDDEN uint32_t read_##name(bool *valid);                             \
    FC_HIDDEN uint64_t time_##name##_lfence(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_cpuid(uint32_t copies);                 \
    FC_HIDDEN uint64_t time_##name##_rdtscp(uint32_t copies);                \
    FC_HIDDEN uint64_t time_##name##_pmu_lfence(uint32_t copies);            \
    FC_HIDDEN uint64_t time_##name##_pmu_cpuid(uint32_t copies);

FC_DECLARE_MODEL(vgetcpu26_tscp)
FC_DECLARE_MODEL(vgetcpu26_lsl)
FC_DECLARE_MODEL(vgetcpu26_hit)
FC_DECLARE_MODEL(vgetcpu26_miss)
FC_DECLARE_MODEL(glibc27_sched_getcpu)
FC_DECLARE_MODEL(getcpu_tscp)
FC_DECLARE_MODEL(getcpu_lsl)
FC_DECLARE_MODEL(getcpu_tscp_fp)
FC_DECLARE_MODEL(getcpu_sidt)
FC_DECLARE_MODEL(getcpu_sidt_rz_fp)
FC_DECLARE_MODEL(getcpu_sidt_norz_nofp)
FC_DECLARE_MODEL(getcpu_sidt_norz_fp)
FC_DECLARE_MODEL(getcpu_lsl_rz_fp)
FC_DECLARE_MODEL(getcpu_lsl_norz_nofp)
FC_DECLARE_MODEL(getcpu_lsl_norz_fp)
FC_DECLARE_MODEL(getcpu_cache_hit)
FC_DECLARE_MODEL(sched_getcpu_tscp)
FC_DECLARE_MODEL(sched_getcpu_lsl)
FC_DECLARE_MODEL(sched_getcpu_sidt)
FC_DECLARE_MODEL(sched_getcpu_rseq_inline)

/* The out-of-line model functions themselves (for `fastcpu show`). Their
 * cache argument is the kernel's struct getcpu_cache, of which the models
 * touch the first two words. */
struct fc_getcpu_cache;
FC_HIDDEN long model_vgetcpu26_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN long model_vgetcpu26_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_glibc27_sched_getcpu(void);
FC_HIDDEN long model_getcpu_tscp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_tscp_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_rz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_nofp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_sidt_norz_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_lsl_fp(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *unused);
FC_HIDDEN long model_getcpu_cache(unsigned *cpu, unsigned *node, struct fc_getcpu_cache *tcache);
FC_HIDDEN int model_sched_getcpu_tscp(void);
FC_HIDDEN int model_sched_getcpu_lsl(void);
FC_HIDDEN int model_sched_getcpu_sidt(void);

/* Set up what the models read: the pointer glibc 2.7 kept mangled. Called
 * once from fc_features(). */
void fc_models_init(void);

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

/* What fc_method_cpu_reason() says of every calibration chain. */
#define FC_CALIBRATION_CPU_REASON "a calibration chain reports no CPU"

extern const struct fc_calibration fc_calibrations[];
extern const size_t fc_calibration_count;
const struct fc_calibration *fc_calibration_find(const char *name);

/* ---- the calibration chains as user functions (userchains.c) ---------- */

/* One chain compiled as an out-of-line `unsigned fn(void)`, timed through the
 * user-function path; its cost above an empty function is length x latency
 * core cycles. */
struct fc_user_chain {
    const char *name; /* the inline chain of the same body: "add_chain_8" */
    const char *op;
    uint32_t length;
    uint32_t latency_cycles;
    fc_user_fn fn;
};

extern const struct fc_user_chain fc_user_chains[];
extern const size_t fc_user_chain_count;

/* ---- machine features (features.c) --------------------------------------- */

/* Set once by fc_features(); read by the rseq and vDSO sequences. */
typedef int (*fc_vdso_getcpu_fn)(unsigned *cpu, unsigned *node, void *cache);
extern long fc_rseq_offset;
extern fc_vdso_getcpu_fn fc_vdso_getcpu;

/* A field of glibc's rseq area, %fs-relative: cpu_id (offset 4), node_id
 * (offset 20, Linux >= 6.3). Volatile: the kernel rewrites them whenever the
 * thread migrates. FC_RSEQ_LOAD_AT takes __rseq_offset from a register
 * (a timer loads it before its opening read); FC_RSEQ_LOAD reads it. */
#define FC_RSEQ_CPU_ID 4
#define FC_RSEQ_NODE_ID 20
#define FC_RSEQ_LOAD_AT(offset, field, out)                                  \
    __asm__ volatile("movl %%fs:%c2(%1), %0" : "=r"(out) : "r"(offset), "i"(field))
#define FC_RSEQ_LOAD(field, out) FC_RSEQ_LOAD_AT(fc_rseq_offset, field, out)

/* cpu_id and, with `with_node`, node_id (else *node = -1): cpu, node, cpu
 * again, so that a migration between the loads shows as a changed cpu_id
 * and the pair is read again. A negative cpu_id: rseq not registered. */
FC_INLINE int32_t fc_rseq_cpu_node(bool with_node, int32_t *node)
{
    int32_t before, after, n = -1;
    do {
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, before);
        if (with_node)
            FC_RSEQ_LOAD(FC_RSEQ_NODE_ID, n);
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, after);
    } while (before != after);
    *node = n;
    return before;
}

struct fc_features {
    bool rdtscp, rdpid, umip, fsgsbase_cpu, fsgsbase_enabled, hypervisor,
        invariant_tsc, tsc_readable;
    char hypervisor_vendor[13]; /* CPUID 0x40000000, e.g. "KVMKVMKVM"; "" on metal */
    bool rseq_registered;
    bool rseq_area;               /* glibc exports __rseq_offset (>= 2.35) */
    long rseq_offset;             /* from the thread pointer */
    unsigned rseq_size;           /* __rseq_size: 0 when not registered */
    unsigned rseq_feature_size;   /* AT_RSEQ_FEATURE_SIZE; 0 before Linux 6.3 */
    bool rseq_node_id;            /* node_id (offset 20) is covered by both */
    bool vdso_getcpu;
    /* Private test hooks (environment, read once): CPUID bits to pretend
     * absent, and methods whose probe child must fault (ud2). */
    bool test_hooks;
};

/* Filled once, on first use; safe to call from any thread after module init. */
const struct fc_features *fc_features(void);

/* Why `m` cannot run here, or NULL when it can. May fork once per method to
 * probe an instruction that could fault; the answer is cached. `m` is an
 * entry of fc_methods[] or a calibration chain's method (which needs
 * nothing); anything else is refused with a reason. A child forked while
 * another thread probes releases the lock and probes again on first use
 * (fc_atfork_init). */
const char *fc_method_unavailable(const struct fc_method *m);

/* Why `m`, though available, does not report the CPU here (an empty or
 * kernel-entry cost, SIDT emulated under UMIP, LSL failing...), or NULL
 * when it does. Decided once, from the availability verdict and one read
 * in-process after the probe; cached. */
const char *fc_method_cpu_reason(const struct fc_method *m);

/* 1 when `address` lies in an executable mapping of this process
 * (/proc/self/maps), 0 when not, -1 with errno when the maps cannot be read. */
int fc_address_executable(uintptr_t address);

/* Register (once) the pthread_atfork child handler that resets every lock
 * and unfinished first use of features.c and getcpu.c. Called at module
 * init. */
void fc_atfork_init(void);

/* The current CPU, by the cheapest correct way available (outside any timed
 * region: migration checks). */
int fc_current_cpu(void);

/* ---- fastcpu.getcpu() (getcpu.c) ----------------------------------------- */

enum fc_getcpu_way {
    FC_GETCPU_UNCHOSEN = 0,
    FC_GETCPU_RSEQ,    /* cpu_id (node_id where covered); per call: < 0 falls back */
    FC_GETCPU_RDPID,   /* TSC_AUX: cpu | node << 12 */
    FC_GETCPU_VDSO,    /* __vdso_getcpu */
    FC_GETCPU_SYSCALL, /* the kernel's own answer, when the call succeeds */
    FC_GETCPU_NONE,    /* nothing could be verified: fc_getcpu_why() says why */
};

/* What fc_getcpu_by() returns for FC_GETCPU_NONE, negated: outside the
 * errno range, so it is told apart from a failing vDSO or system call. */
#define FC_GETCPU_ENONE 4096

/* Chosen once by fc_getcpu_choose(); read without a lock afterwards. */
extern enum fc_getcpu_way fc_getcpu_way, fc_getcpu_node_way, fc_getcpu_fallback_way;

/* Choose (once, thread-safe; may take milliseconds: it pins a helper thread
 * to every CPU it may use) the fastest way that reads the pinned CPU on each
 * CPU (and the node the system call, else sysfs, gives), for the cpu alone
 * and for cpu and node. A way whose own call fails (the system call denied
 * by seccomp, say) is not chosen; where nothing is verified the way is
 * FC_GETCPU_NONE. A child forked while another thread chooses chooses
 * again (fc_getcpu_init registers the handler). */
void fc_getcpu_choose(void);
/* Called by fc_atfork_init's child handler. */
void fc_getcpu_after_fork_in_child(void);
const char *fc_getcpu_way_name(enum fc_getcpu_way way);

enum fc_getcpu_why { FC_WHY_CPU, FC_WHY_NODE, FC_WHY_FALLBACK };
/* Why that way is FC_GETCPU_NONE (valid once chosen). */
const char *fc_getcpu_why(enum fc_getcpu_why which);

/* One read by `way` (not UNCHOSEN); *node may be NULL. Returns the CPU, or a
 * negative errno when the vDSO or the system call failed, or
 * -FC_GETCPU_ENONE for FC_GETCPU_NONE (rseq falls back to
 * fc_getcpu_fallback_way on a thread without a registered area). */
int fc_getcpu_by(enum fc_getcpu_way way, unsigned *node);

static inline int fc_getcpu_fast(void)
{
    enum fc_getcpu_way way = __atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE);
    if (__builtin_expect(way == FC_GETCPU_RSEQ, 1)) {
        int32_t cpu;
        FC_RSEQ_LOAD(FC_RSEQ_CPU_ID, cpu);
        if (__builtin_expect(cpu >= 0, 1))
            return cpu;
        return fc_getcpu_by(fc_getcpu_fallback_way, NULL);
    }
    if (way == FC_GETCPU_RDPID) {
        uint64_t aux;
        __asm__ volatile("rdpid %0" : "=r"(aux));
        return (int)(aux & 0xfffu);
    }
    if (way == FC_GETCPU_UNCHOSEN)
        fc_getcpu_choose();
    return fc_getcpu_by(__atomic_load_n(&fc_getcpu_way, __ATOMIC_ACQUIRE), NULL);
}

/* Run `m` once in a new pthread pinned to `cpu`: what a fresh thread sees.
 * Returns 0, EINVAL for a cpu outside 0 .. _SC_NPROCESSORS_CONF - 1, or an
 * errno value from creating or pinning the thread. */
int fc_read_cpu_in_new_thread(const struct fc_method *m, int cpu, bool *valid,
                              unsigned *out_cpu, int *out_node, uint32_t *raw);

/* ---- the harness (harness.c) --------------------------------------------- */

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
    bool pmu; /* user sequences: time with the PMU counter (pmu.c) */
};

/* Warm both sides up, unrecorded: `runs` pairs, but stop early once
 * `budget_ticks` have passed. Returns how many were done. */
uint32_t fc_warm_up(const struct fc_pair *p, uint32_t runs, uint64_t budget_ticks);

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
/* The counter's step: the grid that unfenced reads at pseudo-random
 * spacings fall on, else the smallest non-zero difference between
 * consecutive reads (clock.c says how); 0 when it cannot tell. */
double fc_tsc_step(uint32_t reads);
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
/* Private test hook: open a software event in place of the cycle counter
 * (pmu.c says why). */
#define FC_ENV_PMU_SOFTWARE "FASTCPU_TEST_PMU_SOFTWARE"
/* Re-read the counter's rdpmc number (it moves if the kernel reschedules the
 * event) before a chunk of runs; 0, or -1 with *why. */
int fc_pmu_refresh(const char **why);
/* After the chunk: 0 when the event stayed on that counter and never left
 * it (so every delta read there is this thread's cycles), or -1 with *why;
 * the caller redoes the chunk. */
int fc_pmu_check(const char **why);
/* Mask of the counter's valid bits: deltas are taken modulo its width. */
uint64_t fc_pmu_mask(void);

#pragma GCC visibility pop

#endif
